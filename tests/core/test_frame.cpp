#include <catch2/catch.hpp>

#include <algorithm>
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

TEST_CASE("a CNM follows the 802.1Qau PDU layout byte for byte", "[frame][cnm]") {
    // A sampled TCP segment h1 -> h2 on priority 3 (tagged), 1460 B payload.
    frame s;
    s.src_mac = mac_for_node(1);
    s.dst_mac = mac_for_node(2);
    s.src_ip = ipv4_for_host(0);
    s.dst_ip = ipv4_for_host(1);
    s.src_port = 40000;
    s.dst_port = 5001;
    s.dscp = 24;
    s.vlan_tagged = true;
    s.pcp = 3;
    s.vid = 7;
    s.tcp_seq = 0x01020304;
    s.tcp_flags = tcp_flag::ACK;
    s.flow_id = 42;
    s.set_ipv4(frame_kind::IPV4_TCP, 1460);
    std::array<std::uint8_t, 2048> sampled{};
    s.to_bytes(sampled.data(), sampled.size());

    const mac_addr cp = mac_for_node(9);
    frame c;
    c.set_cnm(s, cp, 0x0011223344556677ULL, 45, -300, 12, 6, 28);
    CHECK(c.kind == frame_kind::CNM);
    CHECK(c.flow_id == 42);               // the reaction point's flow
    CHECK(c.dst_ip == s.src_ip);          // routed back to the source
    CHECK(c.length == 14 + 4 + 24 + 28);  // tagged, no trailer
    std::array<std::uint8_t, 2048> b{};
    REQUIRE(c.to_bytes(b.data(), b.size()) == c.length);
    const std::array<std::uint8_t, 6> src = mac_for_node(1);
    CHECK(std::equal(src.begin(), src.end(), &b[0]));  // DA = the sampled SA
    CHECK(std::equal(cp.begin(), cp.end(), &b[6]));    // SA = the CP
    CHECK(be16(&b[12]) == 0x8100);
    CHECK(be16(&b[14]) == (6 << 13 | 7));  // cnmTransmitPriority, same VID
    CHECK(be16(&b[16]) == 0x22E7);
    const std::uint8_t* pdu = &b[18];
    const std::array<std::uint8_t, 24> fields{
        0x00,   45,                                        // version 0, reserved, qFb 45
        0x00,   0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,  // CPID
        0xFE,   0xD4,                                      // QOffset -300
        0x00,   0x0C,                                      // QDelta 12
        3 << 5, 0x00,                                      // encapsulated priority 3
        0x02,   0xFA, 0x00, 0x00, 0x00, 0x02,              // encapsulated DA
        0x05,   0xDC};                                     // encapsulated MSDU length 1500
    CHECK(std::equal(fields.begin(), fields.end(), pdu));
    // The encapsulated MSDU: the sampled frame's first 28 octets after its EtherType (the
    // IPv4 header and the TCP ports, sequence number and ACK).
    CHECK(std::equal(pdu + 24, pdu + 24 + 28, &sampled[18]));

    // Without MSDU octets: 14 + 24 = 38 B, padded to 60; the qFb keeps to 6 bits.
    frame u;
    s.vlan_tagged = false;
    s.set_ipv4(frame_kind::IPV4_TCP, 1460);
    u.set_cnm(s, cp, 1, 0xFF, 0, 0, 6, 0);
    CHECK(u.length == 60);
    u.to_bytes(b.data(), b.size());
    CHECK(be16(&b[12]) == 0x22E7);
    CHECK(be16(&b[14]) == 0x3F);
    CHECK(be16(&b[28]) == 3 << 13);  // untagged: the priority is DSCP 24 / 8
    CHECK(be16(&b[36]) == 1500);
    CHECK(b[38] == 0);  // padding
}

TEST_CASE("a BCN message has its own EtherType and layout byte for byte", "[frame][bcn]") {
    // A sampled UDP datagram h1 -> h2, untagged, carrying the RRT of CP 0x0A0B0C0D.
    frame s;
    s.src_mac = mac_for_node(1);
    s.dst_mac = mac_for_node(2);
    s.src_ip = ipv4_for_host(0);
    s.dst_ip = ipv4_for_host(1);
    s.src_port = 40000;
    s.dst_port = 5001;
    s.dscp = 8;
    s.flow_id = 7;
    s.set_ipv4(frame_kind::IPV4_UDP, 1000);
    CHECK(s.length == 14 + 20 + 8 + 1000);
    s.set_rrt(0x0A0B0C0D);
    CHECK(s.length == 14 + 6 + 20 + 8 + 1000);  // the RRT is on the wire
    std::array<std::uint8_t, 2048> sampled{};
    REQUIRE(s.to_bytes(sampled.data(), sampled.size()) == s.length);
    CHECK(be16(&sampled[12]) == 0x88B5);  // RRT: local experimental EtherType 2
    CHECK(be16(&sampled[14]) == 0x0A0B);
    CHECK(be16(&sampled[16]) == 0x0C0D);
    CHECK(be16(&sampled[18]) == 0x0800);
    CHECK(sampled[20] == 0x45);
    s.set_rrt(0);  // untagged again: the plain frame
    CHECK(s.length == 14 + 20 + 8 + 1000);
    std::array<std::uint8_t, 2048> plain{};
    s.to_bytes(plain.data(), plain.size());
    CHECK(be16(&plain[12]) == 0x0800);
    CHECK(std::equal(&plain[14], &plain[14] + 28, &sampled[20]));
    s.set_rrt(0x0A0B0C0D);

    const mac_addr cp = mac_for_node(9);
    frame m;
    // Q_off 2.5, Q_delta -1.25 and Fb -1/256 (the smallest step the wire carries).
    m.set_bcn(s, cp, 0x12345678u, 2.5, -1.25, -1.0 / 256, false, 6, 28);
    CHECK(m.kind == frame_kind::BCN);
    CHECK(m.flow_id == 7);
    CHECK(m.dst_ip == s.src_ip);  // routed back like a CNM
    CHECK(m.src_ip == s.dst_ip);
    CHECK(m.rrt_cpid == 0);  // a message carries no tag of its own
    CHECK(m.length == 14 + 26 + 28);
    CHECK(m.bcn_feedback() == -1.0 / 256);
    std::array<std::uint8_t, 2048> b{};
    REQUIRE(m.to_bytes(b.data(), b.size()) == m.length);
    const std::array<std::uint8_t, 6> src = mac_for_node(1);
    CHECK(std::equal(src.begin(), src.end(), &b[0]));  // DA = the sampled SA
    CHECK(std::equal(cp.begin(), cp.end(), &b[6]));    // SA = the CP
    CHECK(be16(&b[12]) == 0x88B6);                     // local experimental EtherType 2
    const std::array<std::uint8_t, 26> fields{
        0x00, 0x00,                          // version 0, no STOP
        0x12, 0x34, 0x56, 0x78,              // CPID
        0x00, 0x00, 0x02, 0x80,              // Q_off 2.5 x 256 = 640
        0xFF, 0xFF, 0xFE, 0xC0,              // Q_delta -1.25 x 256 = -320
        0xFF, 0xFF, 0xFF, 0xFF,              // Fb -1/256 x 256 = -1
        0x02, 0xFA, 0x00, 0x00, 0x00, 0x02,  // sampled DA
        0x04, 0x04};                         // sampled MSDU length: 1048 - 14 - 6 (RRT) = 1028
    CHECK(std::equal(fields.begin(), fields.end(), &b[14]));
    // The sampled MSDU: its first 28 octets after the EtherType that follows the RRT (the
    // IPv4 header and the UDP header).
    CHECK(std::equal(&b[40], &b[40] + 28, &sampled[20]));

    // STOP: BCN(0,0), flag set, all three fields 0; no MSDU octets, padded to 60.
    frame st;
    st.set_bcn(s, cp, 0x12345678u, 40, 3, -46, true, 6, 0);
    CHECK(st.length == 60);
    CHECK(st.bcn_stop);
    st.to_bytes(b.data(), b.size());
    CHECK(be16(&b[14]) == 0x0001);
    for (int i = 20; i < 32; ++i) CHECK(b[std::size_t(i)] == 0);
}

TEST_CASE("FERA tags: a forward trailer after the datagram and a returning tag PDU",
          "[frame][fera]") {
    CHECK(sizeof(frame) == 256);  // the tag lives in the tail padding
    frame f;
    f.src_mac = mac_for_node(1);
    f.dst_mac = mac_for_node(2);
    f.src_ip = ipv4_for_host(0);
    f.dst_ip = ipv4_for_host(1);
    f.src_port = 1234;
    f.dst_port = 5001;
    f.flow_id = 77;
    f.set_ipv4(frame_kind::IPV4_UDP, 1472);
    REQUIRE(f.length == 1514);
    f.add_fera_tag(10'000'000'000ull);
    f.fera_rate_bps = 3'333'333'333ull;  // a switch lowered it
    CHECK(f.length == 1514 + frame::FERA_TAG_BYTES);
    CHECK(f.frame_bytes() == 1530);
    std::array<std::uint8_t, 2048> b{};
    REQUIRE(f.to_bytes(b.data(), b.size()) == 1526);
    CHECK(be16(&b[14 + 2]) == 1500);  // the IPv4 datagram is unchanged
    const std::uint8_t* t = &b[1514];
    CHECK(be16(t) == ethertype::FERA);
    CHECK(t[2] == 1);
    std::uint64_t rate = 0;
    for (int i = 0; i < 8; ++i) rate = rate << 8 | t[4 + i];
    CHECK(rate == 3'333'333'333ull);

    frame r;
    r.set_fera_return(f, f.dst_mac);
    CHECK(r.kind == frame_kind::FERA_TAG);
    CHECK_FALSE(r.is_data());
    CHECK(r.dst_mac == f.src_mac);
    CHECK(r.src_mac == f.dst_mac);
    CHECK(r.dst_ip == f.src_ip);  // routed back to the source
    CHECK(r.src_port == f.dst_port);
    CHECK(r.flow_id == 77);
    CHECK(r.length == 60);
    REQUIRE(r.to_bytes(b.data(), b.size()) == 60);
    CHECK(be16(&b[12]) == ethertype::FERA);
    CHECK(b[14] == 2);
    rate = 0;
    for (int i = 0; i < 8; ++i) rate = rate << 8 | b[16 + i];
    CHECK(rate == 3'333'333'333ull);
    CHECK((std::uint32_t(b[24]) << 24 | std::uint32_t(b[25]) << 16 | std::uint32_t(b[26]) << 8 |
           b[27]) == 77u);
    f.reset();
    CHECK_FALSE(f.fera_forward);
    CHECK(f.fera_rate_bps == 0);
}
