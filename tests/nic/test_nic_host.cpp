#include <catch2/catch.hpp>

#include "fabricsim/host/host.h"
#include "fabricsim/host/traffic_source.h"
#include "fabricsim/phy/link.h"
#include "tb.h"

using namespace fabricsim;

TEST_CASE("CBR source spacing is exact at the wire rate", "[host]") {
    host::flow_spec s;
    s.rate_bps = 10'000'000'000ull;
    s.packet_bytes = 1500;
    s.start = 100;
    host::traffic_source src(s, 1, "f");
    CHECK(src.next() == 100u);
    src.advance();
    CHECK(src.next() == 100u + 1'230'400u);
    s.rate_bps = 3'000'000'000ull;  // 4101.33 ps per frame: the fraction is carried
    host::traffic_source slow(s, 1, "f");
    for (int i = 0; i < 3; ++i) slow.advance();
    CHECK(slow.next() == 100u + 12'304'000u);
    s.rate_bps = 10'000'000'000ull;
    s.pcp = 3;  // the 802.1Q tag adds 4 B on the wire
    host::traffic_source tagged(s, 1, "f");
    tagged.advance();
    CHECK(tagged.next() == 100u + 1'233'600u);
}

TEST_CASE("Poisson and on/off sources hit their mean rates and a frame limit stops a flow",
          "[host]") {
    host::flow_spec s;
    s.rate_bps = 1'000'000'000ull;
    s.process = host::arrival_process::POISSON;
    host::traffic_source p(s, 3, "p");
    const int n = 100000;
    for (int i = 0; i < n; ++i) p.advance();
    CHECK(double(p.next()) / n == Approx(12'304'000.0).epsilon(0.01));
    s.process = host::arrival_process::ON_OFF;
    s.on_mean = 100 * PS_PER_US;
    s.off_mean = 300 * PS_PER_US;
    host::traffic_source o(s, 3, "o");
    for (int i = 0; i < n; ++i) o.advance();
    // Duty cycle 1/4: four times the CBR spacing on average.
    CHECK(double(o.next()) / n == Approx(4 * 12'304'000.0).epsilon(0.06));
    s.process = host::arrival_process::CBR;
    s.max_frames = 2;
    host::traffic_source lim(s, 3, "l");
    lim.advance();
    lim.advance();
    CHECK(lim.next() == ~ps_t(0));
}

TEST_CASE("NIC: TX latency, line-rate spacing, RX FCS check and host delivery", "[nic][tb]") {
    nic::nic_config nc;  // 500 ns each way
    nic::nic_device a("a_nic", nc, 10'000'000'000ull), b("b_nic", nc, 10'000'000'000ull);
    host::flow_table flows;
    host::flow_spec s;
    s.src = 0;
    s.dst = 1;
    s.rate_bps = 10'000'000'000ull;
    s.max_frames = 3;
    const auto id = flows.add(s);
    host::host ha("ha", {0, ipv4_for_host(0), mac_for_node(0)}, a, flows, 1, 0);
    host::host hb("hb", {1, ipv4_for_host(1), mac_for_node(1)}, b, flows, 1, 0);
    ha.add_source(id, {ipv4_for_host(1), mac_for_node(1)});
    hb.add_sink(id, {ipv4_for_host(0), mac_for_node(0)});
    phy::link_config lc;
    lc.propagation = PS_PER_US;
    phy::link l("l", lc, 1);
    a.tx.socket.bind(l.ab.in);
    l.ab.out.bind(b.rx.socket);
    b.tx.socket.bind(l.ba.in);
    l.ba.out.bind(a.rx.socket);
    sc_core::sc_start(to_sc_time(20 * PS_PER_US));
    const auto& r = flows[id];
    CHECK(r.sent_frames == 3);
    CHECK(r.delivered_frames == 3);
    // 500 ns TX + 1.2208 us last bit + 1 us cable + 500 ns RX, for every frame (line rate, no
    // queue).
    CHECK(r.latency_min == 3'220'800u);
    CHECK(r.latency_max == 3'220'800u);
    CHECK(r.last_rx == 2 * 1'230'400u + 3'220'800u);
    CHECK(a.get_stats().tx_frames == 3);
}
