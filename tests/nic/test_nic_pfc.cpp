// PAUSE / PFC reaction of the NIC TX and its MAC-control path (issue 13).
#include <catch2/catch.hpp>

#include <vector>

#include <nlohmann/json.hpp>

#include "fabricsim/nic/nic_device.h"
#include "fabricsim/phy/link.h"
#include "tb.h"

using namespace fabricsim;

namespace {

constexpr std::uint64_t G10 = 10'000'000'000ull;
constexpr ps_t US = PS_PER_US;
constexpr ps_t Q10 = 51'200;
constexpr ps_t FRAME_1500 = 1'230'400;
constexpr ps_t TO_SINK = 2'220'800;
constexpr ps_t CTL_LAST_BIT = 57'600 + US;

/// Posts `count` 1500 B frames (DSCP `dscp`) at time 0.
struct poster : sc_core::sc_module {
    nic::nic_device* nic = nullptr;
    unsigned count = 0;
    std::uint8_t dscp = 0;
    std::vector<std::uint8_t> dscps;  ///< per frame, when given
    ps_t at = 0;                      ///< post time
    explicit poster(const sc_core::sc_module_name& n) : sc_core::sc_module(n) {
        SC_HAS_PROCESS(poster);
        SC_METHOD(run);
    }
    void run() {
        for (unsigned k = 0; k < count; ++k) {
            frame& f = test::make_frame(1500, 0x0a000002, k);
            f.dscp = k < dscps.size() ? dscps[k] : dscp;
            nic->post(f, at);
        }
    }
};

/// NIC -> link -> sink; `ctl` sends back on the same link into the NIC's receiver.
struct bench {
    nic::nic_device dut;
    phy::link link;
    test::tb_sink out{"out"};
    test::tb_source ctl{"ctl"};
    poster host{"host"};

    static phy::link_config lc() {
        phy::link_config c;
        c.rate_bps = G10;
        c.propagation = US;
        return c;
    }
    explicit bench(const nic::nic_config& cfg, unsigned count, std::uint8_t dscp = 0,
                   std::vector<std::uint8_t> dscps = {}, ps_t post_at = 0)
        : dut("dut", cfg, G10), link("l", lc(), 1) {
        host.dscps = std::move(dscps);
        host.at = post_at;
        dut.tx.socket.bind(link.ab.in);
        link.ab.out.bind(out.rx.socket);
        ctl.tx.socket.bind(link.ba.in);
        link.ba.out.bind(dut.rx.socket);
        host.nic = &dut;
        host.count = count;
        host.dscp = dscp;
    }
    ps_t start_of(std::size_t j) const { return out.got[j].at - TO_SINK; }
    std::size_t in_flight_at(ps_t t) const {
        for (std::size_t j = 0; j < out.got.size(); ++j)
            if (start_of(j) <= t && t < start_of(j) + FRAME_1500) return j;
        FAIL("no frame in flight");
        return 0;
    }
};

frame& pause_frame(std::uint16_t quanta) {
    frame& f = frame_pool::global().acquire();
    f.set_pause(quanta);
    return f;
}

nic::nic_config honouring(bool pause, bool pfc) {
    nic::nic_config c;
    c.flow_control.honour_pause = pause;
    c.flow_control.honour_pfc = pfc;
    return c;
}

}  // namespace

TEST_CASE(
    "NIC TX: PAUSE stops the MAC for q x 51.2 ns after the response delay and the frame "
    "in flight",
    "[pfc][nic][tb]") {
    bench b(honouring(true, false), 12);
    const ps_t sent = 5 * US;
    b.ctl.items = {{sent, &pause_frame(100)}};
    sc_core::sc_start(to_sc_time(100 * US));
    REQUIRE(b.out.got.size() == 12);
    CHECK(b.start_of(0) == 500'000u);  // tx_latency
    const std::size_t j = b.in_flight_at(sent + CTL_LAST_BIT + 3'072'000);
    CHECK(b.start_of(j + 1) == b.start_of(j) + FRAME_1500 + 100 * Q10);
    CHECK(b.start_of(j) == b.start_of(j - 1) + FRAME_1500);
    CHECK(b.start_of(j + 2) == b.start_of(j + 1) + FRAME_1500);
    CHECK(b.dut.get_stats().rx_control_frames == 1);
    CHECK(b.dut.get_stats().rx_frames == 0);  // not data, not handed to the host
    CHECK(frame_pool::global().outstanding() == 0);
}

TEST_CASE("NIC TX: XON releases at once", "[pfc][nic][tb]") {
    bench b(honouring(true, false), 12);
    b.ctl.items = {{5 * US, &pause_frame(65535)}, {20 * US, &pause_frame(0)}};
    sc_core::sc_start(to_sc_time(100 * US));
    REQUIRE(b.out.got.size() == 12);
    const std::size_t j = b.in_flight_at(5 * US + CTL_LAST_BIT + 3'072'000);
    CHECK(b.start_of(j + 1) == 20 * US + CTL_LAST_BIT);
}

TEST_CASE("NIC TX: PFC pauses only the frames of its priorities", "[pfc][nic][tb]") {
    frame& pfc = frame_pool::global().acquire();
    std::array<std::uint16_t, 8> q{};
    q[3] = 100;
    pfc.set_pfc(0x08, q);
    SECTION("another priority keeps sending") {
        bench b(honouring(false, true), 12, 0);
        b.ctl.items = {{5 * US, &pfc}};
        sc_core::sc_start(to_sc_time(100 * US));
        REQUIRE(b.out.got.size() == 12);
        for (std::size_t k = 1; k < 12; ++k) CHECK(b.start_of(k) == b.start_of(0) + k * FRAME_1500);
        CHECK(b.dut.pause()->stats().xoff[3] == 1);
    }
}

TEST_CASE("NIC TX: PFC pauses its priority (DSCP / 8)", "[pfc][nic][tb]") {
    frame& pfc = frame_pool::global().acquire();
    std::array<std::uint16_t, 8> q{};
    q[3] = 100;
    pfc.set_pfc(0x08, q);
    bench b(honouring(false, true), 12, 24);
    b.ctl.items = {{5 * US, &pfc}};
    sc_core::sc_start(to_sc_time(100 * US));
    REQUIRE(b.out.got.size() == 12);
    const std::size_t j = b.in_flight_at(5 * US + CTL_LAST_BIT + 3'072'000);
    CHECK(b.start_of(j + 1) == b.start_of(j) + FRAME_1500 + 100 * Q10);
}

TEST_CASE("NIC: a control frame goes ahead of queued data with its exact wire time",
          "[pfc][nic][tb]") {
    bench b(nic::nic_config{}, 12);
    sc_core::sc_start(to_sc_time(6 * US));
    frame& c = pause_frame(3);
    c.flow_id = 999;
    b.dut.send_control(c);
    sc_core::sc_start(to_sc_time(94 * US));
    REQUIRE(b.out.got.size() == 13);
    std::size_t k = 0;
    while (b.out.got[k].flow != 999) ++k;
    const ps_t boundary = b.start_of(k - 1) + FRAME_1500;
    CHECK(b.out.got[k].at == boundary + CTL_LAST_BIT);
    CHECK(b.start_of(k + 1) == boundary + 67'200);
    nlohmann::json j;
    b.dut.report_stats(j);
    CHECK(j["flow_control"]["control_frames_sent"] == 1);
    CHECK(j["tx_frames"] == 12);
}

TEST_CASE("NIC TX: per-priority queues let other priorities pass a paused one", "[pfc][nic][tb]") {
    // Priority 3 is paused before anything is posted; at 5 us the host posts three priority-3
    // frames, then three priority-0 frames. The priority-0 frames go at once, back to back; the
    // priority-3 frames wait for the XON at 50 us and then go in their order.
    frame& xoff = frame_pool::global().acquire();
    std::array<std::uint16_t, 8> q{};
    q[3] = 0xffff;
    xoff.set_pfc(0x08, q);
    frame& xon = frame_pool::global().acquire();
    xon.set_pfc(0x08, {});
    nic::nic_config cfg = honouring(false, true);
    cfg.flow_control.response_delay = 0;
    bench b(cfg, 6, 0, {24, 24, 24, 0, 0, 0}, 5 * US);
    b.ctl.items = {{0, &xoff}, {50 * US, &xon}};
    sc_core::sc_start(to_sc_time(100 * US));
    REQUIRE(b.out.got.size() == 6);
    const ps_t ready = 5 * US + 500'000;  // post + tx_latency
    for (unsigned k = 0; k < 3; ++k) {
        CHECK(b.out.got[k].flow == 3 + k);
        CHECK(b.start_of(k) == ready + k * FRAME_1500);
    }
    for (unsigned k = 3; k < 6; ++k) {
        CHECK(b.out.got[k].flow == k - 3);
        CHECK(b.start_of(k) == 50 * US + CTL_LAST_BIT + (k - 3) * FRAME_1500);
    }
    nlohmann::json j;
    b.dut.report_stats(j);
    CHECK(j["flow_control"]["paused_time_us"][3] == Approx(50.0));
    CHECK(j["tx_queue_peak"] == 6);
}
