// The NIC's TX DMA engine: doorbell, descriptor fetch, payload reads over PCIe, LSO segments and
// the TX buffer, exact to the picosecond.
#include <catch2/catch.hpp>

#include <deque>
#include <vector>

#include "fabricsim/nic/algo/tx_dma.h"
#include "simple_pcie.h"

using namespace fabricsim;
using namespace fabricsim::nic;

namespace {

constexpr ps_t NS = PS_PER_NS;

struct recorder : tx_dma_sink {
    std::deque<frame> segments;  // stable addresses
    std::vector<std::pair<const frame*, ps_t>> ready;
    std::vector<const frame*> released;
    unsigned freed = 0;
    frame& dma_new_frame() override { return segments.emplace_back(); }
    void dma_release(frame& f) override { released.push_back(&f); }
    void dma_ready(frame& f, ps_t at) override { ready.emplace_back(&f, at); }
    void dma_ring_freed() override { ++freed; }
};

frame data(std::uint32_t payload) {
    frame f;
    f.set_ipv4(frame_kind::IPV4_UDP, payload);
    return f;
}

}  // namespace

TEST_CASE("tx_dma: doorbell, descriptor fetch and payload read of one frame", "[nic][dma]") {
    pcie_link link(test::simple_pcie());
    tx_dma dma({}, link);  // 16 B descriptors, 150 ns doorbell, 50 ns pipeline
    recorder sink;
    frame f = data(958);  // L2 1000 B: 14 + 20 + 8 + 958
    REQUIRE(f.length == 1000);
    REQUIRE(dma.post(0, f, 0, 0));
    CHECK(dma.descriptors() == 1);
    CHECK(dma.run(0, sink) == 150 * NS);  // not seen before the doorbell lands
    // Fetch at 150: MRd 6 ns -> 156, host 100 ns -> 256, CplD 36 B = 9 ns -> 265.
    CHECK(dma.run(150 * NS, sink) == 265 * NS);
    CHECK(sink.ready.empty());
    // Payload at 265: MRd 256/256/256/232 end 271/277/283/289; completions start 100 ns after
    // the first arrives: 8 CplD, 7 of 148 B (37 ns) and one of 20 + 104 B (31 ns), back to back
    // from 371: 371 + 7 x 37 + 31 = 661; + 50 ns pipeline.
    CHECK(dma.run(265 * NS, sink) == tx_dma::NEVER);
    REQUIRE(sink.ready.size() == 1);
    CHECK(sink.ready[0].first == &f);
    CHECK(sink.ready[0].second == 711 * NS);
    CHECK(dma.descriptors() == 0);
    CHECK(sink.freed == 1);
    CHECK(dma.buffered() == 1004);
    dma.mac_took(1004);
    CHECK(dma.buffered() == 0);
    const auto& s = dma.stats();
    CHECK(s.fetches == 1);
    CHECK(s.frames == 1);
    CHECK(s.payload_bytes_read == 1000);
    CHECK(s.ready_delay_max == 711 * NS);
    CHECK(link.stats().read_requests == 5);
}

TEST_CASE("tx_dma: an LSO send reads its header once and makes the segments", "[nic][dma][lso]") {
    pcie_link link(test::simple_pcie());
    tx_dma_config c;
    c.doorbell_latency = 0;
    c.tx_pipeline = 0;
    tx_dma dma(c, link);
    recorder sink;
    frame big;
    big.seq_no = 5000;
    big.tcp_flags = tcp_flag::ACK | tcp_flag::PSH;
    big.set_ipv4(frame_kind::IPV4_TCP, 2500);  // 54 B of headers
    REQUIRE(dma.post(0, big, 1000, 0));
    CHECK(dma.run(0, sink) == 9 * NS + 100 * NS + 6 * NS);  // one descriptor fetch
    CHECK(dma.run(115 * NS, sink) == tx_dma::NEVER);
    REQUIRE(sink.ready.size() == 3);
    REQUIRE(sink.released.size() == 1);
    CHECK(sink.released[0] == &big);
    CHECK(dma.stats().lso_posts == 1);
    CHECK(dma.stats().lso_segments == 3);
    CHECK(dma.stats().payload_bytes_read == 54 + 2500);  // the header crosses PCIe once
    const std::uint32_t payload[] = {1000, 1000, 500};
    for (unsigned k = 0; k < 3; ++k) {
        const frame& s = *sink.ready[k].first;
        CHECK(s.payload_bytes == payload[k]);
        CHECK(s.seq_no == 5000 + 1000 * k);
        CHECK(bool(s.tcp_flags & tcp_flag::PSH) == (k == 2));
    }
    // Reads: 1054 B (5 MRd: 256 x 4 + 30), then 1000 B (4 MRd) and 500 (2 MRd), every MRd
    // behind the one before upstream (6 ns each from 115 ns); completions back to back
    // downstream from the first request's 100 ns round trip: 121 + 100 = 221 ns.
    // Segment 0: 8 x 148 B + 50 B (30 B data) = 1184 + 50 B -> 221 + 296 + 12.5 = 529.5 ns.
    CHECK(sink.ready[0].second == 529'500);
    CHECK(sink.ready[1].second > sink.ready[0].second);
    CHECK(sink.ready[2].second > sink.ready[1].second);
    CHECK(dma.buffered() == 3 * (54 + 1000 + 4) - 500);
}

TEST_CASE("tx_dma: the TX buffer holds reads back until the MAC takes frames", "[nic][dma]") {
    pcie_link link(test::simple_pcie());
    tx_dma_config c;
    c.doorbell_latency = 0;
    c.tx_buffer = 2048;
    tx_dma dma(c, link);
    recorder sink;
    std::vector<frame> f(3, data(958));  // 1004 B each in the buffer
    for (auto& x : f) REQUIRE(dma.post(0, x, 0, 0));
    const ps_t fetched = dma.run(0, sink);
    CHECK(fetched == 6 * NS + 100 * NS + (20 + 48) * 250);  // three descriptors in one read
    CHECK(dma.run(fetched, sink) == tx_dma::NEVER);
    CHECK(sink.ready.size() == 2);  // 2008 B; a third would make 3012 > 2048
    CHECK(dma.stats().buffer_stalls == 1);
    CHECK(dma.descriptors() == 1);
    dma.mac_took(1004);
    CHECK(dma.run(fetched + 1000 * NS, sink) == tx_dma::NEVER);
    CHECK(sink.ready.size() == 3);
    CHECK(sink.ready[2].first == &f[2]);
    CHECK(dma.stats().buffer_peak == 2008);
}

TEST_CASE("tx_dma: a full ring refuses, fetches come in bursts, rings take turns", "[nic][dma]") {
    pcie_link link(test::simple_pcie());
    tx_dma_config c;
    c.rings = 2;
    c.ring_size = 3;
    c.fetch_burst = 2;
    c.doorbell_latency = 0;
    tx_dma dma(c, link);
    recorder sink;
    std::vector<frame> f(7, data(100));
    for (unsigned i = 0; i < 3; ++i) REQUIRE(dma.post(0, f[i], 0, 0));
    CHECK_FALSE(dma.post(0, f[3], 0, 0));  // ring 0 full
    CHECK(dma.free_slots(0) == 0);
    for (unsigned i = 4; i < 6; ++i) REQUIRE(dma.post(1, f[i], 0, 0));
    CHECK(dma.free_slots(1) == 1);
    // Two fetches of two descriptors each (one per ring), then ring 0's third descriptor.
    ps_t t = dma.run(0, sink);
    CHECK(dma.stats().fetches == 2);
    CHECK(dma.stats().fetched == 4);
    while (t != tx_dma::NEVER) t = dma.run(t, sink);
    CHECK(dma.stats().fetches == 3);
    REQUIRE(sink.ready.size() == 5);
    for (unsigned i = 1; i < 5; ++i) CHECK(sink.ready[i].second >= sink.ready[i - 1].second);
    // Ring 0's fetch ends first (ring 1's completion queues behind it): its two frames go before
    // ring 1 has anything fetched; then ring 1's two, then ring 0's third.
    const frame* order[] = {&f[0], &f[1], &f[4], &f[5], &f[2]};
    for (unsigned i = 0; i < 5; ++i) CHECK(sink.ready[i].first == order[i]);
}

TEST_CASE("tx_dma: rings with fetched descriptors take turns frame by frame", "[nic][dma]") {
    pcie_link link(test::simple_pcie());
    tx_dma_config c;
    c.rings = 2;
    c.doorbell_latency = 0;
    tx_dma dma(c, link);
    recorder sink;
    std::vector<frame> f(4, data(100));
    REQUIRE(dma.post(0, f[0], 0, 0));
    REQUIRE(dma.post(0, f[1], 0, 0));
    REQUIRE(dma.post(1, f[2], 0, 0));
    REQUIRE(dma.post(1, f[3], 0, 0));
    const ps_t t = dma.run(0, sink);
    // Both fetches are done by the later one's end: then the rings alternate.
    CHECK(dma.run(t + 1000 * NS, sink) == tx_dma::NEVER);
    REQUIRE(sink.ready.size() == 4);
    const frame* order[] = {&f[0], &f[2], &f[1], &f[3]};
    for (unsigned i = 0; i < 4; ++i) CHECK(sink.ready[i].first == order[i]);
}

TEST_CASE("tx_dma: parameters name the bad field", "[nic][dma]") {
    CHECK_FALSE(tx_dma_config{}.validate());
    tx_dma_config c;
    c.rings = 9;
    CHECK(c.validate()->field == "rings");
    c = {};
    c.fetch_burst = 0;
    CHECK(c.validate()->field == "fetch_burst");
    c = {};
    c.tx_buffer = 100;
    CHECK(c.validate()->field == "tx_buffer");
}
