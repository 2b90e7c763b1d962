// PAUSE / PFC reaction on a switch egress port and the MAC-control path (issue 13).
#include <catch2/catch.hpp>

#include <memory>

#include <nlohmann/json.hpp>

#include "fabricsim/phy/link.h"
#include "fabricsim/switch/switch_device.h"
#include "tb.h"

using namespace fabricsim;

namespace {

constexpr std::uint64_t G10 = 10'000'000'000ull;
constexpr std::uint32_t DST = 0x0a000002;
constexpr ps_t US = PS_PER_US;
constexpr ps_t Q10 = 51'200;                // one pause quantum at 10G
constexpr ps_t FRAME_1500 = 1'230'400;      // 1538 wire bytes at 10G
constexpr ps_t TO_SINK = 2'220'800;         // first bit to last bit at the sink: 1526 B + 1 us
constexpr ps_t CTL_LAST_BIT = 57'600 + US;  // 64 B + preamble, + 1 us: the receiver acts then

struct sink final : sc_core::sc_module, frame_receiver {
    eth_rx_port rx{"rx", *this, 0};
    struct arrival {
        ps_t at;
        std::uint32_t flow;
        frame_kind kind;
    };
    std::vector<arrival> got;
    explicit sink(const sc_core::sc_module_name& n) : sc_core::sc_module(n) {}
    void receive(unsigned, frame& f) override {
        got.push_back({now_ps(), f.flow_id, f.kind});
        frame_pool::global().release(f);
    }
};

/// Sources i -> port i (i < n_in); port n_in -> sink; `ctl` sends on the reverse direction of
/// port n_in's link (what the sink side's MAC would send back).
struct bench {
    std::vector<std::unique_ptr<test::tb_source>> src;
    std::vector<std::unique_ptr<phy::link>> links;
    sink out{"out"};
    test::tb_source ctl{"ctl"};
    std::unique_ptr<sw::switch_device> dut;
    unsigned n;

    bench(unsigned n_in, const sw::switch_config& cfg) : n(n_in) {
        std::vector<std::uint64_t> rates(n_in + 1, G10);
        dut = std::make_unique<sw::switch_device>("dut", cfg, rates, 1);
        dut->routes().add_route(DST, {static_cast<std::uint16_t>(n_in)});
        for (unsigned i = 0; i <= n_in; ++i) {
            phy::link_config lc;
            lc.rate_bps = G10;
            lc.propagation = US;
            links.push_back(std::make_unique<phy::link>(("l" + std::to_string(i)).c_str(), lc, 1));
        }
        for (unsigned i = 0; i < n_in; ++i) {
            src.push_back(std::make_unique<test::tb_source>(("src" + std::to_string(i)).c_str()));
            src[i]->tx.socket.bind(links[i]->ab.in);
            links[i]->ab.out.bind(dut->rx_socket(i));
        }
        dut->tx_socket(n_in).bind(links[n_in]->ab.in);
        links[n_in]->ab.out.bind(out.rx.socket);
        ctl.tx.socket.bind(links[n_in]->ba.in);
        links[n_in]->ba.out.bind(dut->rx_socket(n_in));
    }
    /// `count` back-to-back 1500 B frames from every source (flow i, DSCP dscp[i]).
    void load(unsigned count, std::vector<std::uint8_t> dscp = {}) {
        for (unsigned i = 0; i < n; ++i)
            for (unsigned k = 0; k < count; ++k) {
                frame& f = test::make_frame(1500, DST, i);
                f.dscp = i < dscp.size() ? dscp[i] : 0;
                src[i]->items.push_back({0, &f});
            }
    }
    /// First bit of data frame j on the egress wire (from its arrival at the sink).
    ps_t start_of(const sink::arrival& a) const { return a.at - TO_SINK; }
    /// The data frame on the wire at t (start <= t < wire free), index into out.got.
    std::size_t in_flight_at(ps_t t) const {
        for (std::size_t j = 0; j < out.got.size(); ++j) {
            const ps_t s = start_of(out.got[j]);
            if (s <= t && t < s + FRAME_1500) return j;
        }
        FAIL("no frame in flight");
        return 0;
    }
};

frame& pause_frame(std::uint16_t quanta) {
    frame& f = frame_pool::global().acquire();
    f.set_pause(quanta);
    return f;
}

sw::switch_config honouring(bool pause, bool pfc) {
    sw::switch_config cfg;
    cfg.flow_control.honour_pause = pause;
    cfg.flow_control.honour_pfc = pfc;
    return cfg;
}

}  // namespace

TEST_CASE(
    "PAUSE at 10G stops the port for q x 51.2 ns after the response delay and the frame "
    "in flight",
    "[pfc][switch][tb]") {
    bench b(2, honouring(true, false));  // two 10G inputs keep the 10G output backlogged
    b.load(10);
    const ps_t sent = 5 * US;
    b.ctl.items = {{sent, &pause_frame(100)}};
    sc_core::sc_start(to_sc_time(100 * US));
    REQUIRE(b.out.got.size() == 20);
    const ps_t stop = sent + CTL_LAST_BIT + 3'072'000;  // Annex 31B: 60 quanta at 10G
    const std::size_t j = b.in_flight_at(stop);
    const ps_t free = b.start_of(b.out.got[j]) + FRAME_1500;
    // The frame in flight finishes; the next starts exactly 100 quanta after its wire frees.
    CHECK(b.start_of(b.out.got[j + 1]) == free + 100 * Q10);
    // Before and after: back to back.
    CHECK(b.start_of(b.out.got[j]) == b.start_of(b.out.got[j - 1]) + FRAME_1500);
    CHECK(b.start_of(b.out.got[j + 2]) == b.start_of(b.out.got[j + 1]) + FRAME_1500);
    const auto* r = b.dut->port(2).pause();
    REQUIRE(r);
    CHECK(r->stats().pause_frames == 1);
    CHECK(b.dut->port(2).control_frames_received() == 1);
    CHECK(frame_pool::global().outstanding() == 0);
}

TEST_CASE("a configured response delay replaces the Annex 31B default", "[pfc][switch][tb]") {
    sw::switch_config cfg = honouring(true, false);
    cfg.flow_control.response_delay = 0;
    bench b(2, cfg);
    b.load(10);
    const ps_t sent = 5 * US;
    b.ctl.items = {{sent, &pause_frame(100)}};
    sc_core::sc_start(to_sc_time(100 * US));
    REQUIRE(b.out.got.size() == 20);
    const std::size_t j = b.in_flight_at(sent + CTL_LAST_BIT);
    CHECK(b.start_of(b.out.got[j + 1]) == b.start_of(b.out.got[j]) + FRAME_1500 + 100 * Q10);
}

TEST_CASE("XON releases the port at once", "[pfc][switch][tb]") {
    bench b(2, honouring(true, false));
    b.load(10);
    const ps_t xon = 20 * US;
    b.ctl.items = {{5 * US, &pause_frame(65535)}, {xon, &pause_frame(0)}};
    sc_core::sc_start(to_sc_time(100 * US));
    REQUIRE(b.out.got.size() == 20);
    const std::size_t j = b.in_flight_at(5 * US + CTL_LAST_BIT + 3'072'000);
    CHECK(b.start_of(b.out.got[j + 1]) == xon + CTL_LAST_BIT);  // no response delay for XON
}

TEST_CASE("a refresh restarts the timer", "[pfc][switch][tb]") {
    bench b(2, honouring(true, false));
    b.load(10);
    const ps_t refresh = 10 * US;  // applies while the first pause still runs
    b.ctl.items = {{5 * US, &pause_frame(100)}, {refresh, &pause_frame(100)}};
    sc_core::sc_start(to_sc_time(100 * US));
    REQUIRE(b.out.got.size() == 20);
    const std::size_t j = b.in_flight_at(5 * US + CTL_LAST_BIT + 3'072'000);
    const ps_t first_end = b.start_of(b.out.got[j]) + FRAME_1500 + 100 * Q10;
    const ps_t refresh_stop = refresh + CTL_LAST_BIT + 3'072'000;
    REQUIRE(refresh_stop < first_end);
    CHECK(b.start_of(b.out.got[j + 1]) == refresh_stop + 100 * Q10);
}

TEST_CASE("PFC pauses one priority while another keeps sending", "[pfc][switch][tb]") {
    sw::switch_config cfg = honouring(false, true);
    cfg.qos.dscp_to_tc[24] = 3;  // as loaded from a scenario (DSCP / 8)
    bench b(2, cfg);
    b.load(12, {0, 24});  // flow 0: DSCP 0 -> queue 0; flow 1: DSCP 24 -> TC 3 -> queue 3
    frame& pfc = frame_pool::global().acquire();
    std::array<std::uint16_t, 8> q{};
    q[3] = 400;  // 20.48 us
    pfc.set_pfc(0x08, q);
    const ps_t sent = 5 * US;
    b.ctl.items = {{sent, &pfc}};
    sc_core::sc_start(to_sc_time(200 * US));
    REQUIRE(b.out.got.size() == 24);
    const ps_t stop = sent + CTL_LAST_BIT + 3'072'000;
    const std::size_t j = b.in_flight_at(stop);
    const ps_t end = b.start_of(b.out.got[j]) + FRAME_1500 + 400 * Q10;
    // After the frame in flight, queue 0 goes back to back; queue 3 waits until the end.
    std::size_t k = j + 1;
    for (; k < b.out.got.size() && b.out.got[k].flow == 0; ++k)
        CHECK(b.start_of(b.out.got[k]) == b.start_of(b.out.got[k - 1]) + FRAME_1500);
    CHECK(k > j + 3);
    REQUIRE(k < b.out.got.size());
    const ps_t first_p3 = b.start_of(b.out.got[k]);
    // Queue 0 ran dry before the pause ended (12 frames), so queue 3 starts at its end.
    CHECK(first_p3 == end);
    CHECK(b.dut->port(2).pause()->stats().xoff[3] == 1);
    CHECK(b.dut->port(2).pause()->stats().xoff[0] == 0);
}

TEST_CASE(
    "a control frame goes ahead of queued data at the next frame boundary "
    "with its exact wire time",
    "[pfc][switch][tb]") {
    bench b(2, honouring(true, false));
    b.load(10);
    sc_core::sc_start(to_sc_time(6 * US));  // the output is backlogged
    {
        frame& c = pause_frame(7);
        c.flow_id = 999;
        b.dut->port(2).send_control(c);
    }
    sc_core::sc_start(to_sc_time(94 * US));
    REQUIRE(b.out.got.size() == 21);
    std::size_t c = 0;
    while (b.out.got[c].flow != 999) ++c;
    CHECK(b.out.got[c].kind == frame_kind::PAUSE);
    const ps_t boundary = b.start_of(b.out.got[c - 1]) + FRAME_1500;
    CHECK(b.start_of(b.out.got[c - 1]) <= 6 * US);
    CHECK(6 * US < boundary);
    CHECK(b.out.got[c].at == boundary + CTL_LAST_BIT);         // 64 B frame + preamble
    CHECK(b.start_of(b.out.got[c + 1]) == boundary + 67'200);  // + IFG: 84 B on the wire
    CHECK(b.dut->port(2).control_frames_sent() == 1);
}

TEST_CASE("a control frame is sent while the data is paused", "[pfc][switch][tb]") {
    bench b(2, honouring(true, false));
    b.load(4);
    b.ctl.items = {{1 * US, &pause_frame(65535)}};  // stops the port at ~5.13 us for 3.3 ms
    sc_core::sc_start(to_sc_time(20 * US));
    const std::size_t before = b.out.got.size();
    REQUIRE(before < 8);
    frame& c = pause_frame(1);
    c.flow_id = 999;
    b.dut->port(2).send_control(c);
    sc_core::sc_start(to_sc_time(10 * US));
    REQUIRE(b.out.got.size() == before + 1);
    CHECK(b.out.got.back().flow == 999);
    CHECK(b.out.got.back().at == 20 * US + CTL_LAST_BIT);
}

TEST_CASE("control frames are not forwarded and not counted as data", "[pfc][switch][tb]") {
    sw::switch_config cfg;  // honours nothing: the frames are taken and ignored
    bench b(1, cfg);
    frame& pfc = frame_pool::global().acquire();
    pfc.set_pfc(0xff, {});
    pfc.dst_ip = DST;  // even with a routable address
    b.src[0]->items = {{0, &pause_frame(5)}, {0, &pfc}, {0, &test::make_frame(1500, DST)}};
    sc_core::sc_start(to_sc_time(20 * US));
    REQUIRE(b.out.got.size() == 1);
    CHECK(b.out.got[0].kind == frame_kind::IPV4_UDP);
    CHECK(b.dut->port(0).control_frames_received() == 2);
    nlohmann::json j;
    b.dut->report_stats(j);
    CHECK(j["ports"][0]["rx_frames"] == 1);
    CHECK(j["ports"][0]["flow_control"]["control_frames_received"] == 2);
    CHECK_FALSE(j["ports"][1].contains("flow_control"));  // nothing to report: as before
    CHECK(b.dut->port(1).pause() == nullptr);
    drop_counters d;
    b.dut->add_drops(d);
    CHECK(d.total() == 0);
    CHECK(frame_pool::global().outstanding() == 0);
}
