#include <algorithm>
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "fabricsim/host/host.h"
#include "fabricsim/host/traffic_source.h"
#include "fabricsim/phy/link.h"
#include "simple_pcie.h"
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

TEST_CASE("Bernoulli source: slots at twice the rate, each used with probability 1/2", "[host]") {
    host::flow_spec s;
    s.rate_bps = 5'000'000'000ull;  // slots every 1.2304 us (10G spacing), mean gap 2.4608 us
    s.process = host::arrival_process::BERNOULLI;
    host::traffic_source b(s, 7, "b");
    const int n = 100000;
    ps_t last = b.next();
    std::uint64_t max_gap_slots = 0;
    for (int i = 0; i < n; ++i) {
        b.advance();
        const ps_t gap = b.next() - last;
        last = b.next();
        REQUIRE(gap % 1'230'400u == 0);  // a whole number of slots
        max_gap_slots = std::max<std::uint64_t>(max_gap_slots, gap / 1'230'400u);
    }
    CHECK(double(last) / n == Approx(2 * 1'230'400.0).epsilon(0.01));
    // Geometric gaps: P(gap > k slots) = 2^-k; 10^5 draws reach ~17 slots, never 1 only.
    CHECK(max_gap_slots >= 10);
    CHECK(max_gap_slots <= 30);
}

TEST_CASE("Backlogged source: the NIC's wire sets its rate, a few frames queued", "[nic][tb]") {
    nic::nic_config nc;  // 500 ns each way
    nic::nic_device a("a_nic", nc, 10'000'000'000ull), b("b_nic", nc, 10'000'000'000ull);
    host::flow_table flows;
    host::flow_spec s;
    s.src = 0;
    s.dst = 1;
    s.process = host::arrival_process::BACKLOGGED;
    s.start = 1000;
    s.stop = 50 * PS_PER_US;
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
    sc_core::sc_start(to_sc_time(100 * PS_PER_US));
    const auto& r = flows[id];
    // Frames start back to back from 1 ns + 500 ns: frame i at 501 ns + i x 1.2304 us. The
    // source posts while its time is before the 50 us stop and keeps ceil(500 / 1230.4) + 2 =
    // 3 frames queued, so the last post (at the start of frame k - 3, before 50 us) is frame
    // k: 501 ns + (k - 3) x 1.2304 us < 50 us gives k - 3 <= 40, 44 frames.
    CHECK(r.sent_frames == 44);
    CHECK(r.delivered_frames == 44);
    CHECK(a.get_stats().tx_queue_peak == 3);
    // Back to back: no gap on the wire, every frame after the first waited in the queue.
    CHECK(r.last_rx == 1000 + 43 * 1'230'400u + 3'220'800u);
    CHECK(a.get_stats().drops.total() == 0);
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

namespace {

/// Two NICs with hosts over a 10G link with 1 us of cable, for the DMA tests.
struct dma_pair {
    explicit dma_pair(const nic::nic_config& nc)
        : a("a_nic", nc, 10'000'000'000ull), b("b_nic", nc, 10'000'000'000ull) {}
    void wire(std::uint32_t id) {
        ha.add_source(id, {ipv4_for_host(1), mac_for_node(1)});
        hb.add_sink(id, {ipv4_for_host(0), mac_for_node(0)});
        a.tx.socket.bind(l.ab.in);
        l.ab.out.bind(b.rx.socket);
        b.tx.socket.bind(l.ba.in);
        l.ba.out.bind(a.rx.socket);
    }
    nic::nic_device a, b;
    host::flow_table flows;
    host::host ha{"ha", {0, ipv4_for_host(0), mac_for_node(0)}, a, flows, 1, 0};
    host::host hb{"hb", {1, ipv4_for_host(1), mac_for_node(1)}, b, flows, 1, 0};
    phy::link l{"l",
                [] {
                    phy::link_config lc;
                    lc.propagation = PS_PER_US;
                    return lc;
                }(),
                1};
};

/// The DMA model on test::simple_pcie(): TLP times by hand.
nic::nic_config dma_config() {
    nic::nic_config nc;
    nc.dma.enabled = true;
    nc.dma.pcie = test::simple_pcie();
    return nc;  // doorbell 150 ns, TX and RX pipeline 50 ns, 16 B descriptors and completions
}

}  // namespace

TEST_CASE("NIC DMA: doorbell, descriptor fetch, payload read and RX write-back, exact",
          "[nic][tb][dma]") {
    dma_pair p(dma_config());
    host::flow_spec s;
    s.src = 0;
    s.dst = 1;
    s.rate_bps = 10'000'000'000ull;
    s.max_frames = 3;
    const auto id = p.flows.add(s);
    p.wire(id);
    sc_core::sc_start(to_sc_time(20 * PS_PER_US));
    const auto& r = p.flows[id];
    CHECK(r.delivered_frames == 3);
    // TX: doorbell at 150 ns; descriptor fetch: MRd 6 ns, 100 ns, CplD 36 B 9 ns -> 265 ns.
    // Payload 1514 B from 265: six MRd (5 x 256 + 234) 6 ns apart, completions from 371 ns back
    // to back: 11 of 148 B (37 ns) and one of 126 B (31.5 ns) -> 809.5 ns; + 50 ns -> 859.5 ns.
    // Wire 1.2208 us + 1 us cable: last bit at 3080.3 ns. RX: 12 MWr (11 x 152 B, one 130 B)
    // 450.5 ns, the 40 B completion 10 ns, 50 ns to memory, 50 ns pipeline -> 3640.8 ns.
    CHECK(r.latency_min == 3'640'800u);
    CHECK(r.latency_max == 3'640'800u);  // line-rate frames find the link idle
    const auto* pcie = p.a.pcie();
    REQUIRE(pcie);
    CHECK(pcie->stats().read_requests == 3 * (1 + 6));
    CHECK(p.b.pcie()->stats().write_tlps == 3 * (12 + 1));
    CHECK(p.a.dma()->stats().fetches == 3);
    CHECK(p.a.dma()->stats().ready_delay_max == 859'500u);
    CHECK(p.a.frames_held() == 0);
}

TEST_CASE("NIC DMA: TCP's first window is one LSO send that leaves at line rate",
          "[nic][tb][dma][lso]") {
    nic::nic_config nc = dma_config();
    nc.lso_enabled = true;
    dma_pair p(nc);
    host::flow_spec s;
    s.src = 0;
    s.dst = 1;
    s.transport = host::transport_kind::TCP;
    s.size_bytes = 14600;  // the initial window: 10 segments of 1460 B
    const auto id = p.flows.add(s);
    p.wire(id);
    // Segment 0 (54 + 1460 B) is at the MAC at 859.5 ns as above; the others' reads went out in
    // the same pass and end sooner than the wire frees: back to back at 1.2304 us.
    const ps_t tenth = 859'500 + 9 * 1'230'400 + 1'220'800 + PS_PER_US;
    sc_core::sc_start(to_sc_time(tenth));  // runs what is due before `tenth`
    CHECK(p.b.get_stats().rx_frames == 9);
    sc_core::sc_start(to_sc_time(1));
    CHECK(p.b.get_stats().rx_frames == 10);
    const auto& d = p.a.dma()->stats();
    CHECK(d.lso_posts == 1);
    CHECK(d.lso_segments == 10);
    CHECK(d.fetches == 1);
    CHECK(p.a.pcie()->stats().bytes_read == 16 + 54 + 14600);  // the header crosses once
    sc_core::sc_start(to_sc_time(100 * PS_PER_US));
    CHECK(p.flows[id].delivered_frames == 10);
    CHECK(p.flows[id].sent_frames == 10);
}

namespace {

/// The NAPI receive path on both hosts: an interrupt at 10 frames (or 50 us), irq and poll 4 us,
/// 300 ns per frame.
nic::nic_config napi_config(bool gro) {
    nic::nic_config nc;  // ideal PCIe: 500 ns each way
    nc.rx.napi = true;
    nc.rx.gro = gro;
    nc.rx.coalesce.rx_frames = 10;
    nc.rx.coalesce.rx_usecs = 50 * PS_PER_US;
    return nc;
}

std::uint32_t tcp_window_flow(host::flow_table& flows) {
    host::flow_spec s;
    s.src = 0;
    s.dst = 1;
    s.transport = host::transport_kind::TCP;
    s.size_bytes = 14600;  // the initial window: 10 segments back to back
    return flows.add(s);
}

}  // namespace

TEST_CASE("NAPI: one interrupt, one poll and one GRO delivery ACK the first window, exact",
          "[nic][host][napi]") {
    dma_pair p(napi_config(true));
    const auto id = tcp_window_flow(p.flows);
    p.wire(id);
    // Segment k is in host memory at 3.2208 us + k x 1.2304 us (500 ns TX, 1.2208 us wire, 1 us
    // cable, 500 ns RX). The 10th fires the interrupt at 14.2944 us; irq 4 us and poll entry
    // 4 us: the poll reads at 22.2944 us, 300 ns per frame, finds the ring empty at 25.2944 us
    // (NAPI complete), and GRO hands the 10 segments over as one: one ACK, posted then.
    const ps_t ack_posted = 3'220'800 + 9 * 1'230'400 + 8 * PS_PER_US + 10 * 300'000;
    sc_core::sc_start(to_sc_time(ack_posted));
    CHECK(p.b.get_stats().tx_frames == 0);
    CHECK(p.hb.frames_held() == 10);
    sc_core::sc_start(to_sc_time(1));
    CHECK(p.b.get_stats().tx_frames == 1);
    CHECK(p.hb.frames_held() == 0);
    CHECK(p.flows[id].ack_sent == 1);
    sc_core::sc_start(to_sc_time(200 * PS_PER_US));
    CHECK(p.flows[id].rx_bytes == 14600);
    CHECK(p.flows[id].ack_sent == 1);
    nlohmann::json j;
    p.hb.report_stats(j);
    CHECK(j["rx_path"]["interrupts"] == 1);
    CHECK(j["rx_path"]["interrupts_by_frames"] == 1);
    CHECK(j["rx_path"]["frames_per_interrupt"] == 10.0);
    CHECK(j["rx_path"]["ring_peak"] == 10);
    CHECK(j["rx_path"]["gro"]["deliveries"] == 1);
    // Busy 4 + 4 + 3 us of the 25.2944 us to the poll's end and beyond.
    CHECK(j["rx_path"]["cores"][0]["interrupts"] == 1);
}

TEST_CASE("NAPI without GRO: the poll's frames reach TCP one by one, an ACK every two",
          "[nic][host][napi]") {
    dma_pair p(napi_config(false));
    const auto id = tcp_window_flow(p.flows);
    p.wire(id);
    // Deliveries at 22.5944 + k x 0.3 us; delayed ACKs (every second segment) leave with the
    // 2nd, 4th, ... delivery: the first at 22.8944 us.
    const ps_t first_ack = 3'220'800 + 9 * 1'230'400 + 8 * PS_PER_US + 2 * 300'000;
    sc_core::sc_start(to_sc_time(first_ack));
    CHECK(p.b.get_stats().tx_frames == 0);
    sc_core::sc_start(to_sc_time(1));
    CHECK(p.b.get_stats().tx_frames == 1);
    sc_core::sc_start(to_sc_time(200 * PS_PER_US));
    CHECK(p.flows[id].rx_bytes == 14600);
    CHECK(p.flows[id].ack_sent == 5);
}
