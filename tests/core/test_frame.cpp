#include <catch2/catch.hpp>

#include <array>

#include "fabricsim/core/frame.h"
#include "fabricsim/core/frame_pool.h"

using namespace fabricsim;

namespace {
std::uint16_t be16(const std::uint8_t* p) {
    return std::uint16_t(p[0] << 8 | p[1]);
}
std::uint16_t ones_sum(const std::uint8_t* p, std::size_t n) {
    std::uint32_t acc = 0;
    for (std::size_t i = 0; i + 1 < n; i += 2) acc += be16(p + i);
    while (acc >> 16) acc = (acc & 0xFFFF) + (acc >> 16);
    return std::uint16_t(acc);
}
}  // namespace

TEST_CASE("frame sizes follow Ethernet rules", "[frame]") {
    frame f;
    f.set_ipv4(frame_kind::IPV4_UDP, 1472);  // 1500 B IP packet
    CHECK(f.length == 1514);
    CHECK(f.frame_bytes() == 1518);
    CHECK(f.wire_bytes() == 1538);
    f.set_ipv4(frame_kind::IPV4_UDP, 0);
    CHECK(f.length == 60);  // padded
    CHECK(f.frame_bytes() == 64);
    CHECK(f.wire_bytes() == 84);
    f.vlan_tagged = true;
    f.set_ipv4(frame_kind::IPV4_TCP, 1460);
    CHECK(f.length == 1518);
    f.set_pause(0xFFFF);
    CHECK(f.kind == frame_kind::PAUSE);
    CHECK(f.frame_bytes() == 64);
}

TEST_CASE("to_bytes writes real IPv4/UDP headers with valid checksums", "[frame]") {
    frame f;
    f.src_mac = mac_for_node(1);
    f.dst_mac = mac_for_node(2);
    f.src_ip = ipv4_for_host(0);
    f.dst_ip = ipv4_for_host(1);
    f.dscp = 46;
    f.ecn = ecn_codepoint::ECT0;
    f.src_port = 1234;
    f.dst_port = 5001;
    f.set_ipv4(frame_kind::IPV4_UDP, 100);
    std::array<std::uint8_t, 2048> b{};
    REQUIRE(f.to_bytes(b.data(), b.size()) == f.length);
    CHECK(be16(&b[12]) == 0x0800);
    const std::uint8_t* ip = &b[14];
    CHECK(ip[0] == 0x45);
    CHECK(ip[1] == (46 << 2 | 2));
    CHECK(be16(ip + 2) == 128);
    CHECK(ip[9] == 17);
    CHECK(ones_sum(ip, 20) == 0xFFFF);  // header checksum verifies
    const std::uint8_t* udp = ip + 20;
    CHECK(be16(udp) == 1234);
    CHECK(be16(udp + 4) == 108);
}

TEST_CASE("to_bytes writes VLAN, PAUSE and PFC frames", "[frame]") {
    std::array<std::uint8_t, 2048> b{};
    frame f;
    f.vlan_tagged = true;
    f.pcp = 5;
    f.vid = 100;
    f.set_ipv4(frame_kind::IPV4_TCP, 10);
    f.to_bytes(b.data(), b.size());
    CHECK(be16(&b[12]) == 0x8100);
    CHECK(be16(&b[14]) == (5 << 13 | 100));
    CHECK(be16(&b[16]) == 0x0800);

    frame p;
    p.set_pfc(0x09, {1, 0, 0, 7, 0, 0, 0, 0});
    p.to_bytes(b.data(), b.size());
    CHECK(b[0] == 0x01);
    CHECK(be16(&b[12]) == 0x8808);
    CHECK(be16(&b[14]) == 0x0101);
    CHECK(be16(&b[16]) == 0x09);
    CHECK(be16(&b[18]) == 1);
    CHECK(be16(&b[24]) == 7);
}

TEST_CASE("frame pool reuses frames without growing", "[frame]") {
    frame_pool pool(4);
    frame* first = &pool.acquire();
    first->ttl = 3;
    pool.release(*first);
    CHECK(pool.outstanding() == 0);
    for (int i = 0; i < 1000; ++i) {
        frame& a = pool.acquire();
        frame& b = pool.acquire();
        CHECK(a.ttl == 64);  // reset on release
        pool.release(a);
        pool.release(b);
    }
    CHECK(pool.capacity() == 4);
}
