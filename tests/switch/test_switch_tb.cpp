#include <catch2/catch.hpp>

#include <memory>

#include "fabricsim/phy/link.h"
#include "fabricsim/switch/switch_device.h"
#include "tb.h"

using namespace fabricsim;

namespace {

constexpr std::uint64_t G10 = 10'000'000'000ull;
constexpr std::uint32_t DST = 0x0a000002;

/// sources[i] -> switch port i (i < n_in); switch port n_in -> sink.
struct bench {
    std::vector<std::unique_ptr<test::tb_source>> src;
    std::vector<std::unique_ptr<phy::link>> links;
    test::tb_sink sink{"sink"};
    std::unique_ptr<sw::switch_device> dut;

    bench(unsigned n_in, const sw::switch_config& cfg, std::uint64_t out_rate = G10) {
        std::vector<std::uint64_t> rates(n_in, G10);
        rates.push_back(out_rate);
        dut = std::make_unique<sw::switch_device>("dut", cfg, rates, 1);
        dut->routes().add_route(DST, {static_cast<std::uint16_t>(n_in)});
        for (unsigned i = 0; i <= n_in; ++i) {
            phy::link_config lc;
            lc.rate_bps = rates[i];
            lc.propagation = PS_PER_US;
            links.push_back(std::make_unique<phy::link>(("l" + std::to_string(i)).c_str(), lc, 1));
        }
        for (unsigned i = 0; i < n_in; ++i) {
            src.push_back(std::make_unique<test::tb_source>(("src" + std::to_string(i)).c_str()));
            src[i]->tx.socket.bind(links[i]->ab.in);
            links[i]->ab.out.bind(dut->rx_socket(i));
        }
        dut->tx_socket(n_in).bind(links[n_in]->ab.in);
        links[n_in]->ab.out.bind(sink.rx.socket);
    }
};

}  // namespace

TEST_CASE("store-and-forward: exact latency through an idle switch, one event per hop",
          "[switch][tb]") {
    sw::switch_config cfg;  // 1 GHz, 300 ns pipeline
    bench b(1, cfg);
    b.src[0]->items = {{0, &test::make_frame(1500, DST, 0)}, {0, &test::make_frame(1500, DST, 1)}};
    const auto before = counters().activations;
    sc_core::sc_start(to_sc_time(20 * PS_PER_US));
    REQUIRE(b.sink.got.size() == 2);
    // Last bit at the switch 2.2208 us, pipeline exit ceil(2.5208 us) = 2.521 us.
    CHECK(b.sink.got[0].at == 2'521'000u + 1'220'800u + 1'000'000u);
    CHECK(b.sink.got[1].at == 3'752'000u + 1'220'800u + 1'000'000u);
    CHECK(b.sink.got[0].ttl == 63);
    CHECK(counters().activations - before == 4);  // two links x two frames, no egress events
    CHECK(b.dut->port(1).stats_of(0).waited == 0);
}

TEST_CASE("contention queues the second frame and costs one extra event", "[switch][tb]") {
    sw::switch_config cfg;
    bench b(2, cfg);
    b.src[0]->items = {{0, &test::make_frame(1500, DST, 0)}};
    b.src[1]->items = {{0, &test::make_frame(1500, DST, 1)}};
    const auto before = counters().activations;
    sc_core::sc_start(to_sc_time(20 * PS_PER_US));
    REQUIRE(b.sink.got.size() == 2);
    CHECK(b.sink.got[0].at == 2'521'000u + 2'220'800u);
    CHECK(b.sink.got[1].at == 2'521'000u + 1'230'400u + 2'220'800u);  // waits for the wire
    CHECK(b.dut->port(2).stats_of(0).waited == 1);
    CHECK(counters().activations - before == 2 + 1 + 2);
    CHECK(b.dut->buffer().port_occupancy(2).peak_cells ==
          8u);  // ceil(1518 / 208): the first frame never waited
}

TEST_CASE("port cap and shared buffer tail-drop with named causes", "[switch][tb]") {
    sw::switch_config cfg;
    cfg.mmu.port_cap = size_spec{2, true};  // two frames
    bench b(4, cfg);
    for (unsigned i = 0; i < 4; ++i) b.src[i]->items = {{0, &test::make_frame(1500, DST, i)}};
    sc_core::sc_start(to_sc_time(20 * PS_PER_US));
    // All arrive together: one goes straight out, two fit the cap (1 released + 2 queued), one
    // drops.
    CHECK(b.sink.got.size() == 3);
    CHECK(b.dut->port(4).drops()[drop_cause::PORT_CAP] == 1);
    CHECK(frame_pool::global().outstanding() == 0);
}

TEST_CASE("no route and FCS errors are dropped at ingress", "[switch][tb]") {
    sw::switch_config cfg;
    bench b(1, cfg);
    frame& bad = test::make_frame(1500, DST);
    bad.fcs_error = true;
    b.src[0]->items = {
        {0, &test::make_frame(1500, 0x0a0000ff)}, {0, &bad}, {0, &test::make_frame(100, DST)}};
    sc_core::sc_start(to_sc_time(20 * PS_PER_US));
    CHECK(b.sink.got.size() == 1);
    drop_counters d;
    b.dut->add_drops(d);
    CHECK(d[drop_cause::NO_ROUTE] == 1);
    CHECK(d[drop_cause::FCS_ERROR] == 1);
    CHECK(d.total() == 2);
}

TEST_CASE("cut-through forwards from the header into an idle same-speed port", "[switch][tb]") {
    sw::switch_config cfg;
    cfg.mode = sw::forwarding_mode::CUT_THROUGH;
    bench b(1, cfg);  // the switch tells its input links to deliver after 64 B
    b.src[0]->items = {{0, &test::make_frame(1500, DST)}};
    sc_core::sc_start(to_sc_time(20 * PS_PER_US));
    REQUIRE(b.sink.got.size() == 1);
    // Header (8+64 B) at 1.0576 us, exit ceil(1.3576 us) = 1.358 us.
    CHECK(b.sink.got[0].at == 1'358'000u + 1'220'800u + 1'000'000u);
}

TEST_CASE("cut-through falls back to store-and-forward into a faster port", "[switch][tb]") {
    sw::switch_config cfg;
    cfg.mode = sw::forwarding_mode::CUT_THROUGH;
    bench b(1, cfg, 25'000'000'000ull);
    b.src[0]->items = {{0, &test::make_frame(1500, DST)}};
    sc_core::sc_start(to_sc_time(20 * PS_PER_US));
    REQUIRE(b.sink.got.size() == 1);
    // Waits for the last bit (2.2208 us -> edge 2.221 us), then 1526 B at 25G + 1 us.
    CHECK(b.sink.got[0].at == 2'221'000u + 488'320u + 1'000'000u);
}

TEST_CASE("a frame an egress policy emits is forwarded to its source like a received one",
          "[switch][tb][policy]") {
    // A congestion point on port 1 answers every arrival with a 64 B notification to the source
    // (port 0): emitted at the data frame's decision time (its pipeline exit, 2.521 us), it leaves
    // the pipeline at ceil(2.821 us); its last bit is 90 B (82 B frame + preamble) x 0.8 ns
    // later, plus 1 us of cable.
    struct reflector final : sw::egress_policy {
        reflector() : sw::egress_policy(0xff, 0) {}
        sw::enqueue_verdict on_enqueue(const sw::egress_queues& port, unsigned, frame&,
                                       ps_t now) override {
            frame& cnm = test::make_frame(64, 0x0a000001, 99);
            emitter()->emit(cnm, port.index(), now);
            return sw::enqueue_verdict::PASS;
        }
    } cp;
    sw::switch_config cfg;
    bench b(1, cfg);
    test::tb_sink back{"back"};
    b.dut->routes().add_route(0x0a000001, {0});
    b.dut->tx_socket(0).bind(b.links[0]->ba.in);
    b.links[0]->ba.out.bind(back.rx.socket);
    b.dut->port(1).data_path().add_policy(cp);
    b.src[0]->items = {{0, &test::make_frame(1500, DST, 0)}};
    sc_core::sc_start(to_sc_time(20 * PS_PER_US));
    REQUIRE(b.sink.got.size() == 1);
    REQUIRE(back.got.size() == 1);
    CHECK(back.got[0].flow == 99);
    CHECK(back.got[0].at == 2'821'000u + 72'000u + 1'000'000u);
    CHECK(b.dut->generated_frames() == 1);
    CHECK(b.dut->frames_held() == 0);
}
