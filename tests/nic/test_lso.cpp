// LSO/TSO: one send becomes MSS segments with correct headers.
#include <catch2/catch.hpp>

#include "fabricsim/core/frame.h"
#include "fabricsim/nic/algo/lso.h"

using namespace fabricsim;
using namespace fabricsim::nic;

namespace {
frame big_send(std::uint32_t payload) {
    frame f;
    f.src_ip = 0x0a000001;
    f.dst_ip = 0x0a000002;
    f.src_port = 1000;
    f.dst_port = 5001;
    f.dscp = 8;
    f.ecn = ecn_codepoint::ECT0;
    f.flow_id = 42;
    f.seq_no = (std::uint64_t(1) << 32) + 4000;  // past a 32-bit wrap
    f.tcp_seq = static_cast<std::uint32_t>(f.seq_no);
    f.tcp_ack = 777;
    f.ack_no = 777;
    f.tcp_window = 0xFFFF;
    f.ip_id = 0xFFFE;
    f.tcp_flags = tcp_flag::ACK | tcp_flag::PSH | tcp_flag::FIN | tcp_flag::CWR;
    f.created = 1234;
    f.set_ipv4(frame_kind::IPV4_TCP, payload);
    return f;
}
}  // namespace

TEST_CASE("lso: a 64 KB send becomes 45 MSS segments with the last one short", "[nic][lso]") {
    const frame big = big_send(65536);
    const std::uint32_t mss = 1460;
    REQUIRE(lso_segments(big, mss) == 45);  // 44 x 1460 = 64240, + 1296
    frame seg;
    frame other;
    seg.pool_next = &other;  // the pool's link survives
    std::uint64_t bytes = 0;
    for (std::uint32_t k = 0; k < 45; ++k) {
        lso_make_segment(big, mss, k, seg);
        INFO("segment " << k);
        CHECK(seg.pool_next == &other);
        CHECK(seg.kind == frame_kind::IPV4_TCP);
        CHECK(seg.seq_no == big.seq_no + bytes);
        CHECK(seg.tcp_seq == static_cast<std::uint32_t>(big.seq_no + bytes));
        CHECK(seg.ip_id == static_cast<std::uint16_t>(0xFFFE + k));  // wraps after 0xFFFF
        CHECK(seg.tcp_ack == 777);
        CHECK(seg.flow_id == 42);
        CHECK(seg.dscp == 8);
        CHECK(seg.ecn == ecn_codepoint::ECT0);
        CHECK(seg.created == 1234);
        const std::uint32_t want = k < 44 ? 1460 : 1296;
        CHECK(seg.payload_bytes == want);
        CHECK(seg.length == 14 + 20 + 20 + want);
        const bool last = k == 44;
        CHECK(bool(seg.tcp_flags & tcp_flag::FIN) == last);
        CHECK(bool(seg.tcp_flags & tcp_flag::PSH) == last);
        CHECK(bool(seg.tcp_flags & tcp_flag::CWR) == (k == 0));
        CHECK(bool(seg.tcp_flags & tcp_flag::ACK));
        bytes += seg.payload_bytes;
    }
    CHECK(bytes == 65536);
    lso_make_segment(big, mss, 0, seg);
    CHECK(seg.ip_id == 0xFFFE);
    lso_make_segment(big, mss, 2, seg);
    CHECK(seg.ip_id == 0);
}

TEST_CASE("lso: sends of one MSS or less, and a pure ACK, are one segment", "[nic][lso]") {
    frame seg;
    const frame one = big_send(1460);
    CHECK(lso_segments(one, 1460) == 1);
    lso_make_segment(one, 1460, 0, seg);
    CHECK(seg.payload_bytes == 1460);
    CHECK(seg.tcp_flags == one.tcp_flags);  // first and last: every flag stays
    const frame ack = big_send(0);
    CHECK(lso_segments(ack, 1460) == 1);
    lso_make_segment(ack, 1460, 0, seg);
    CHECK(seg.payload_bytes == 0);
    CHECK(seg.length == 60);  // padded to the minimum
    CHECK(lso_segments(big_send(2921), 1460) == 3);
}

TEST_CASE("lso: parameters name the bad field", "[nic][lso]") {
    CHECK_FALSE(lso_params{}.validate());
    const auto e = lso_params{0}.validate();
    REQUIRE(e);
    CHECK(e->field == "max_bytes");
    CHECK(lso_params{300000}.validate()->reason.find("256 KiB") != std::string::npos);
}
