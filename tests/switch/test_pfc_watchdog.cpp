// PFC watchdog (SONiC semantics, facts-l2 §2.6): detection, restoration, forward and drop.
#include <catch2/catch.hpp>

#include <memory>

#include <nlohmann/json.hpp>

#include "fabricsim/switch/algo/mmu.h"
#include "fabricsim/switch/algo/pfc_watchdog.h"
#include "switch_pair_bench.h"

using namespace fabricsim;
using sw::pfc_watchdog;

namespace {

constexpr ps_t US = PS_PER_US;
constexpr ps_t MS = PS_PER_MS;
constexpr ps_t FRAME_1500 = 1'230'400;  // 1538 wire bytes at 10G
constexpr ps_t LAST_BIT = 1'220'800;    // first to last bit of a 1518 B frame (+ preamble)
constexpr ps_t CTL = 57'600 + US;       // a control frame's first bit to its last at the peer

sw::pfc_watchdog_config watching_3(sw::pfc_watchdog_action a) {
    sw::pfc_watchdog_config c;
    c.enabled = true;
    c.detection = 1 * MS;
    c.restoration = 4 * MS;
    c.action = a;
    c.priorities = 0x08;
    return c;
}

}  // namespace

TEST_CASE(
    "pfc_watchdog: a pause that lasts detection_time storms and restoration follows the last XOFF",
    "[pfc][switch][watchdog]") {
    pfc_watchdog w(watching_3(sw::pfc_watchdog_action::FORWARD));
    CHECK(w.next_check() == pfc_watchdog::NEVER);
    w.pause_state(3, 10);
    w.pause_state(2, 10);  // not watched
    CHECK(w.next_check() == 10 + MS);
    // A break in the pause cancels, a new pause counts from its own start.
    w.pause_state(3, pfc_watchdog::NEVER);
    CHECK(w.next_check() == pfc_watchdog::NEVER);
    w.pause_state(3, 500);
    CHECK(w.check(MS) == 0);
    CHECK(w.check(500 + MS) == 0x08);
    CHECK(w.stormed() == 0x08);
    CHECK(w.ignoring() == 0x08);
    CHECK(w.dropping() == 0);
    CHECK(w.next_check() == 500 + 5 * MS);
    // While stormed, pause states are ignored and every XOFF moves the restoration.
    w.pause_state(3, pfc_watchdog::NEVER);
    w.xoff_received(3, 2 * MS);
    CHECK(w.next_check() == 6 * MS);
    CHECK(w.check(6 * MS - 1) == 0);
    CHECK(w.check(6 * MS) == 0x08);
    CHECK(w.stormed() == 0);
    CHECK(w.stats().storms[3] == 1);
    CHECK(w.stats().restorations[3] == 1);
    CHECK(w.stormed_time(3, 7 * MS) == 6 * MS - (500 + MS));
    // A pause still running at the restoration counts from the restoration.
    w.pause_state(3, 100);
    CHECK(w.next_check() == 7 * MS);
    // drop and alert
    pfc_watchdog d(watching_3(sw::pfc_watchdog_action::DROP));
    d.pause_state(3, 0);
    d.check(MS);
    CHECK(d.dropping() == 0x08);
    pfc_watchdog a(watching_3(sw::pfc_watchdog_action::ALERT));
    a.pause_state(3, 0);
    a.check(MS);
    CHECK(a.stormed() == 0x08);
    CHECK(a.ignoring() == 0);
    CHECK(a.dropping() == 0);
}

TEST_CASE("mmu: the watchdog drops a lossless PG's arrivals at its ingress",
          "[pfc][mmu][watchdog]") {
    sw::mmu_config c;
    c.total_cells = 1000;
    c.ports = 2;
    c.queues = 8;
    c.pool_cells[sw::LOSSLESS_POOL] = 200;
    c.pg[3].lossless = true;
    c.pg[3].headroom_cells = 10;
    c.headroom_pool_cells = 10;
    sw::mmu m(c);
    sw::mmu_ticket t;
    drop_cause why{};
    m.set_watchdog_drop(0, 0x08);
    CHECK_FALSE(m.admit(0, 3, 1, 3, 64, t, why));
    CHECK(why == drop_cause::PFC_WATCHDOG);
    CHECK(m.admit(1, 3, 0, 3, 64, t, why));  // another ingress port
    m.set_watchdog_drop(0, 0);
    CHECK(m.admit(0, 3, 1, 3, 64, t, why));
}

namespace {

/// The two-port bench: priority-3 frames (DSCP 24) from the source, and the output's far end
/// storming PFC XOFF on priority 3 from 0 to 4 ms (re-sent every 1 ms).
struct storm_bench : test::switch_pair_bench {
    explicit storm_bench(sw::pfc_watchdog_action action) : switch_pair_bench(config(action)) {
        for (unsigned k = 0; k < 5; ++k) {
            frame& x = frame_pool::global().acquire();
            std::array<std::uint16_t, 8> q{};
            q[3] = 0xffff;
            x.set_pfc(0x08, q);
            far.items.push_back({k * MS, &x});
        }
    }
    static sw::switch_config config(sw::pfc_watchdog_action action) {
        sw::switch_config cfg;
        cfg.qos.dscp_to_tc[24] = 3;
        cfg.flow_control.honour_pfc = true;
        cfg.flow_control.response_delay = 0;
        cfg.pfc_watchdog = watching_3(action);
        return cfg;
    }
    void send(ps_t at, unsigned frames) {
        for (unsigned k = 0; k < frames; ++k) {
            frame& f = test::make_frame(1500, DST);
            f.dscp = 24;
            src.items.push_back({at, &f});
        }
    }
};

}  // namespace

TEST_CASE("PFC watchdog forward: a stormed priority is served again after detection_time",
          "[pfc][switch][watchdog][tb]") {
    storm_bench b(sw::pfc_watchdog_action::FORWARD);
    b.send(5 * US, 20);
    sc_core::sc_start(to_sc_time(12 * MS));
    // Paused from the first XOFF's last bit (1.0576 us) on, refreshed every 1 ms: stormed at
    // 1.0576 us + 1 ms; the held queue then drains back to back.
    const ps_t stormed = CTL + MS;
    REQUIRE(b.out.got.size() == 20);
    CHECK(b.out.got[0].at == stormed + LAST_BIT + US);
    CHECK(b.out.got[19].at == stormed + 19 * FRAME_1500 + LAST_BIT + US);
    const nlohmann::json fc = b.port_stats(1)["flow_control"];
    CHECK(fc["watchdog"]["storms"][3] == 1);
    // Restored 4 ms after the last XOFF (sent at 4 ms).
    CHECK(fc["watchdog"]["restorations"][3] == 1);
    CHECK(fc["watchdog"]["stormed_time_us"][3] ==
          Approx(double(4 * MS + CTL + 4 * MS - stormed) / 1e6));
    CHECK(fc["watchdog"]["stormed_now"].empty());
    CHECK(fc["xoff_received"][3] == 5);
}

TEST_CASE("PFC watchdog drop: the stormed queue is emptied and its arrivals dropped until restored",
          "[pfc][switch][watchdog][tb]") {
    storm_bench b(sw::pfc_watchdog_action::DROP);
    b.send(5 * US, 20);  // held, then discarded at detection
    b.send(2 * MS, 10);  // dropped on arrival while stormed
    b.send(9 * MS, 5);   // restored at 8.0010576 ms: delivered
    sc_core::sc_start(to_sc_time(12 * MS));
    REQUIRE(b.out.got.size() == 5);
    CHECK(b.out.got[0].at > 9 * MS);
    const nlohmann::json p1 = b.port_stats(1);
    CHECK(p1["drops"]["pfc_watchdog"] == 30);
    CHECK(p1["flow_control"]["watchdog"]["storms"][3] == 1);
    CHECK(p1["flow_control"]["watchdog"]["restorations"][3] == 1);
    CHECK(frame_pool::global().outstanding() == 0);
}
