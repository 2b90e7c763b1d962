// Model-level tests of the switch data path, end to end: whole scenarios (one SystemC platform
// per TEST_CASE; ctest runs each in its own process) checked against the published behaviour of
// the MMU dynamic thresholds, DWRR, MQ-ECN, step and pool-scope marking, the HULL phantom queue,
// the port shaper's keys, classification and lossless headroom. One port's queueing,
// scheduling, gates and marking policies have exact unit tests in
// tests/switch/test_egress_queues.cpp.
// Sources are open-loop (UDP-like, CBR): they do not react to marks or drops, so every
// saturated queue stays backlogged and the steady states are deterministic.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "fabricsim/core/config.h"
#include "fabricsim/platforms/platform.h"
#include "fabricsim/platforms/scenario.h"
#include "scenario_run.h"

using namespace fabricsim;
using namespace fabricsim::platforms;
using json = nlohmann::json;

namespace {

// A 1500 B IP packet: 1518 B frame (Ethernet header + FCS), 1538 B on the wire (+ preamble/IFG),
// ceil(1518 / 208) = 8 cells of the default 208 B cell.
constexpr double FRAME_BYTES = 1518;
constexpr double WIRE_BYTES = 1538;
constexpr double CELLS_PER_FRAME = 8;
constexpr double LINE_RATE = 10e9;
constexpr double FRAME_TIME_US = WIRE_BYTES * 8 / LINE_RATE * 1e6;  // 1.2304 us at 10G

json run(const std::string& yaml, const std::string& name) {
    return run_conserved(yaml, name);
}

/// Egress port p of the single switch of an incast topology (port p faces host hp).
const json& port(const json& s, unsigned p) {
    return s["switches"]["tor"]["ports"][p];
}
const json& queue(const json& s, unsigned p, unsigned q) {
    return port(s, p)["queues"][q];
}
std::uint64_t u64(const json& j) {
    return j.get<std::uint64_t>();
}
double num(const json& j) {
    return j.get<double>();
}

/// Sum of every drop cause but `cause` (they must all be 0 where a test names the only cause).
std::uint64_t drops_except(const json& drops, const std::string& cause) {
    std::uint64_t n = 0;
    for (auto it = drops.begin(); it != drops.end(); ++it)
        if (it.key() != cause) n += it.value().get<std::uint64_t>();
    return n;
}

/// Delivered frames of flow i that were not CE-marked.
std::uint64_t unmarked(const json& s, unsigned flow) {
    const json& f = s["flows"][flow];
    return u64(f["delivered_frames"]) - u64(f["ce_frames"]);
}

/// S saturated queues on one 10G port (two 10G senders per queue, queue k from DSCP 8k), one
/// 1 MiB buffer, static cap off: each queue must settle at the Choudhury-Hahne steady state
/// alpha B / (1 + S alpha), B = the lossy pool's shared cells (facts-mmu §1.4).
void check_dynamic_threshold(unsigned s_queues, double alpha) {
    const unsigned rx = 2 * s_queues;
    std::string flows;
    for (unsigned i = 0; i < rx; ++i)
        flows += "    - {src: h" + std::to_string(i) + ", dst: h" + std::to_string(rx) +
                 ", rate: 10Gbps, dscp: " + std::to_string(8 * (i / 2)) + "}\n";
    const json s =
        run("duration: 2ms\n"
            "topology: {kind: incast, host_rate: 10Gbps, incast: {hosts: " +
                std::to_string(rx + 1) +
                "}}\n"
                "switch: {buffer: 1MiB, port_cap: 0B, mmu: {queue_alpha: " +
                std::to_string(alpha) + "}}\ntraffic:\n  flows:\n" + flows,
            "dt");
    const double b = num(s["switches"]["tor"]["pools"]["lossy"]["size_cells"]);
    REQUIRE(b == 5041);  // 1 MiB / 208 B, no reserves
    const double expected = alpha * b / (1 + s_queues * alpha);
    const json& p = port(s, rx);
    double used = 0;
    for (unsigned q = 0; q < s_queues; ++q) {
        const json& qj = p["queues"][q];
        INFO("queue " << q << " expected " << expected << " cells: " << qj.dump());
        // The fit test admits while shared + 8 <= T, so a queue stops within one frame of the
        // fixed point (the last admitted frame can also overshoot by up to one frame).
        CHECK(std::abs(num(qj["peak_cells"]) - expected) <= CELLS_PER_FRAME);
        CHECK(std::abs(num(qj["cells"]) - expected) <= CELLS_PER_FRAME);  // still there at the end
        used += num(qj["cells"]);
    }
    for (unsigned q = s_queues; q < 8; ++q) CHECK(u64(p["queues"][q]["peak_cells"]) == 0);
    // B / (1 + S alpha) of the pool stays free by design.
    CHECK(std::abs((b - used) - b / (1 + s_queues * alpha)) <= s_queues * CELLS_PER_FRAME);
    // Every loss is the egress queue's dynamic limit.
    const json& causes = s["frames"]["dropped_by_cause"];
    CHECK(u64(causes["egress_queue_limit"]) > 1000);
    CHECK(drops_except(causes, "egress_queue_limit") == 0);
    CHECK(u64(p["drops"]["egress_queue_limit"]) == u64(s["frames"]["dropped"]));
}

}  // namespace

// ---------------------------------------------------------------- MMU dynamic thresholds

TEST_CASE("dynamic threshold: one saturated queue holds alpha B over (1 + alpha)",
          "[switch_qos][mmu]") {
    check_dynamic_threshold(1, 2.0);  // 2/3 of B = 3360.7 cells
}

TEST_CASE("dynamic threshold: two saturated queues hold alpha B over (1 + 2 alpha) each",
          "[switch_qos][mmu]") {
    check_dynamic_threshold(2, 1.0);  // B/3 = 1680.3 cells
}

TEST_CASE("dynamic threshold: four saturated queues hold alpha B over (1 + 4 alpha) each",
          "[switch_qos][mmu]") {
    check_dynamic_threshold(4, 2.0);  // 2B/9 = 1120.2 cells
}

// ---------------------------------------------------------------- schedulers

TEST_CASE("dwrr shares a port 1:2:3 in bytes by quanta", "[switch_qos][scheduler]") {
    // Three queues, each fed at 10G (always backlogged); DSCP 0/8/16 -> tc 0/1/2 -> queue 0/1/2.
    // Seed-001 O10: long-run share of a backlogged queue = Q_i / sum Q.
    const json s = run(R"(
duration: 2ms
topology: {kind: incast, host_rate: 10Gbps, incast: {hosts: 4}}
switch:
  buffer: 1MiB
  port_cap: 0B
  queues: 3
  mmu: {queue_alpha: 1}
  qos: {tc_to_queue: ['0', '1', '2', '2', '2', '2', '2', '2']}
  scheduler: {kind: dwrr, quanta: ['1538B', '3076B', '4614B']}
traffic:
  flows:
    - {src: h0, dst: h3, rate: 10Gbps, dscp: 0}
    - {src: h1, dst: h3, rate: 10Gbps, dscp: 8}
    - {src: h2, dst: h3, rate: 10Gbps, dscp: 16}
)",
                       "dwrr");
    const json& p = port(s, 3);
    const double total = num(p["tx_bytes"]);
    REQUIRE(total > 2.4e6);  // ~2 ms at 10G
    INFO(p["queues"].dump());
    for (unsigned q = 0; q < 3; ++q)
        CHECK(num(p["queues"][q]["tx_bytes"]) / total == Approx((q + 1) / 6.0).epsilon(0.01));
}

// ---------------------------------------------------------------- MQ-ECN and per-queue thresholds

TEST_CASE("mq-ecn threshold scale converges to 1 over N with N busy equal queues",
          "[switch_qos][ecn]") {
    // Three receivers, each its own port (MQ-ECN state is per port): h8 has N = 1 busy queue
    // (two 10G senders), h9 N = 2, h10 N = 4 (one 10G sender per queue). Equal 1538 B quanta.
    // Seed-001 O11: T_round = N x 1538 B x 8 / C and K_i = K_std / N. The CBR queues stay
    // backlogged and every frame is 1538 B on the wire, so every round sample is exactly N frame
    // times and the EWMA has long converged (1600 samples, beta 0.75): 1% tolerance.
    const json s = run(R"(
duration: 2ms
topology: {kind: incast, host_rate: 10Gbps, incast: {hosts: 11}}
switch:
  port_cap: 0B
  ecn: {mode: step, k: 32KB, queue_threshold: mq_ecn}
traffic:
  flows:
    - {src: h0, dst: h8, rate: 10Gbps, dscp: 0, ecn: true}
    - {src: h1, dst: h8, rate: 10Gbps, dscp: 0, ecn: true}
    - {src: h2, dst: h9, rate: 10Gbps, dscp: 0, ecn: true}
    - {src: h3, dst: h9, rate: 10Gbps, dscp: 8, ecn: true}
    - {src: h4, dst: h10, rate: 10Gbps, dscp: 0, ecn: true}
    - {src: h5, dst: h10, rate: 10Gbps, dscp: 8, ecn: true}
    - {src: h6, dst: h10, rate: 10Gbps, dscp: 16, ecn: true}
    - {src: h7, dst: h10, rate: 10Gbps, dscp: 24, ecn: true}
)",
                       "mq_ecn");
    struct case_t {
        unsigned port, n, first_flow;
    };
    for (const case_t c : {case_t{8, 1, 0}, case_t{9, 2, 2}, case_t{10, 4, 4}}) {
        const json& p = port(s, c.port);
        INFO("N = " << c.n << ": " << p["mq_ecn"].dump());
        REQUIRE(p.contains("mq_ecn"));
        CHECK(num(p["mq_ecn"]["t_round_us"]) == Approx(c.n * FRAME_TIME_US).epsilon(0.01));
        for (unsigned q = 0; q < c.n; ++q)
            CHECK(num(p["queues"][q]["ecn_threshold_scale"]) == Approx(1.0 / c.n).epsilon(0.01));
        // The scaled threshold is the one marking uses: a queue fed at 10G and served at 10G/N
        // grows by (1 - 1/N) frame per arrival, so m = floor(K/N / 1518 B) queued frames take
        // m N / (N - 1) arrivals, all unmarked, before every later frame is marked (N = 1: two
        // senders, m = 21 takes 2m arrivals). +-3 frames: T_round starts at 0 (scale 1) and needs
        // a few rounds to reach N frame times. The standard threshold would leave 42 (N 1, 2)
        // and 28 (N 4) frames unmarked.
        const double m = std::floor(32000.0 / c.n / FRAME_BYTES);
        if (c.n == 1) {
            CHECK(std::abs(double(unmarked(s, 0) + unmarked(s, 1)) - 2 * m) <= 3);
        } else {
            for (unsigned f = c.first_flow; f < c.first_flow + c.n; ++f) {
                INFO("flow " << f << ": " << s["flows"][f].dump());
                CHECK(std::abs(double(unmarked(s, f)) - m * c.n / (c.n - 1)) <= 3);
            }
        }
    }
}

TEST_CASE("minimum per-queue threshold scale is W_i over the sum of non-strict W",
          "[switch_qos][ecn]") {
    // Seed-001 Eq. 2: K_i = W_i / sum W x K over the DWRR group; the strict queue 3 keeps K.
    // The scale is static (no traffic needed beyond a few frames): exact.
    const json s = run(R"(
duration: 100us
topology: {kind: incast, host_rate: 10Gbps, incast: {hosts: 2}}
switch:
  queues: 4
  scheduler: {kind: dwrr, quanta: ['1538B', '3076B', '4614B', '1538B'], strict_queues: ['3']}
  ecn: {mode: step, k: 32KB, queue_threshold: minimum}
traffic:
  flows:
    - {src: h0, dst: h1, rate: 1Gbps, frames: 5, ecn: true}
)",
                       "min_threshold");
    const json& p = port(s, 1);
    INFO(p["queues"].dump());
    const double expected[] = {1538.0 / 9228, 3076.0 / 9228, 4614.0 / 9228, 1.0};
    for (unsigned q = 0; q < 4; ++q)
        CHECK(num(p["queues"][q]["ecn_threshold_scale"]) == Approx(expected[q]).epsilon(1e-12));
    CHECK(!p.contains("mq_ecn"));
}

// Guards the nested keys `ecn.mq_ecn.{beta,t_idle}` (they were once read as literal dotted
// keys and silently ignored).
TEST_CASE("mq-ecn beta from the scenario sets the T_round EWMA", "[switch_qos][ecn]") {
    // Three frames at line rate into an idle port: each is its own round, sampled at its own
    // serialisation time (1.2304 us), from T_round = 0 and with no idle decay (each frame arrives
    // as the last one leaves): T_round = T (1 - beta^3) = 1.0766 us for beta 0.5 (0.7113 us for
    // the default 0.75).
    const json s = run(R"(
duration: 100us
topology: {kind: incast, host_rate: 10Gbps, incast: {hosts: 2}}
switch:
  ecn: {mode: step, k: 32KB, queue_threshold: mq_ecn, mq_ecn: {beta: 0.5}}
traffic:
  flows:
    - {src: h0, dst: h1, rate: 10Gbps, frames: 3}
)",
                       "mq_ecn_beta");
    const json& mq = port(s, 1)["mq_ecn"];
    INFO(mq.dump());
    CHECK(u64(mq["samples"]) == 3);
    CHECK(num(mq["t_round_us"]) == Approx(FRAME_TIME_US * (1 - 0.125)).epsilon(1e-3));
}

// ---------------------------------------------------------------- step marking (DCTCP K)

TEST_CASE("step marking marks ECT frames only above K and drops non-ECT ones as aqm_drop",
          "[switch_qos][ecn]") {
    // K = 32 KB on the instantaneous queue incl. the arriving frame: 21 frames (31878 B) pass,
    // the 22nd (33396 B) is above K. Ports: h6 overloaded by two 10G ECT flows, h7 loaded to 90%
    // by two 4.5G ECT flows, h8 overloaded by two 10G non-ECT flows (non_ect: drop).
    const json s = run(R"(
duration: 2ms
topology: {kind: incast, host_rate: 10Gbps, incast: {hosts: 9}}
switch:
  buffer: 2MiB
  port_cap: 0B
  ecn: {mode: step, k: 32KB, non_ect: drop}
traffic:
  flows:
    - {src: h0, dst: h6, rate: 10Gbps, ecn: true}
    - {src: h1, dst: h6, rate: 10Gbps, ecn: true}
    - {src: h2, dst: h7, rate: 4.5Gbps, ecn: true}
    - {src: h3, dst: h7, rate: 4.5Gbps, ecn: true}
    - {src: h4, dst: h8, rate: 10Gbps}
    - {src: h5, dst: h8, rate: 10Gbps}
)",
                       "step");
    INFO(s["flows"].dump());
    const double k_frames = std::floor(32000 / FRAME_BYTES);  // 21
    {
        // Overloaded ECT: the queue grows by one frame per two arrivals, so the first 2 x 21
        // arrivals are unmarked and, the queue staying above K, every later one is marked.
        const json& q = queue(s, 6, 0);
        INFO(q.dump());
        CHECK(std::abs(double(unmarked(s, 0) + unmarked(s, 1)) - 2 * k_frames) <= 2);
        CHECK(num(q["peak_frame_bytes"]) > 10 * 32000);  // ECT frames are never dropped by the AQM
        CHECK(u64(q["drops"]["aqm_drop"]) == 0);
    }
    {
        // Below the port rate the queue never reaches K: no mark at all.
        const json& q = queue(s, 7, 0);
        INFO(q.dump());
        CHECK(u64(s["flows"][2]["delivered_frames"]) > 700);
        CHECK(u64(q["ce_marked"]) == 0);
        CHECK(u64(s["flows"][2]["ce_frames"]) + u64(s["flows"][3]["ce_frames"]) == 0);
        CHECK(num(q["peak_frame_bytes"]) <= 32000);
    }
    {
        // Non-ECT above K: dropped, so the queue is pinned at 21 frames and the port still runs
        // at line rate.
        const json& q = queue(s, 8, 0);
        INFO(q.dump());
        CHECK(num(q["peak_frame_bytes"]) == k_frames * FRAME_BYTES);
        CHECK(u64(q["ce_marked"]) == 0);
        CHECK(drops_except(q["drops"], "aqm_drop") == 0);
        const double sent = num(s["flows"][4]["sent_frames"]) + num(s["flows"][5]["sent_frames"]);
        const double delivered =
            num(s["flows"][4]["delivered_frames"]) + num(s["flows"][5]["delivered_frames"]);
        // Not delivered = AQM drops + at most 21 queued + a few on the links.
        CHECK(num(q["drops"]["aqm_drop"]) <= sent - delivered);
        CHECK(num(q["drops"]["aqm_drop"]) >= sent - delivered - k_frames - 8);
        CHECK(num(port(s, 8)["tx_frames"]) >= std::floor(2000.0 / FRAME_TIME_US) - 5);
    }
}

// ---------------------------------------------------------------- marking scope

namespace {
/// Queue 0 of h4's port overloaded by two 10G ECT flows (flows 0, 1), a light 1G ECT flow in
/// queue 1 of the same port (flow 2) and one in queue 1 of h5's port (flow 3), K = 32 KB.
json run_scope(const std::string& scope) {
    return run(R"(
duration: 2ms
topology: {kind: incast, host_rate: 10Gbps, incast: {hosts: 6}}
switch:
  port_cap: 0B
  queues: 2
  ecn: {mode: step, k: 32KB, scope: )" +
                   scope + R"(}
traffic:
  flows:
    - {src: h0, dst: h4, rate: 10Gbps, dscp: 0, ecn: true}
    - {src: h1, dst: h4, rate: 10Gbps, dscp: 0, ecn: true}
    - {src: h2, dst: h4, rate: 1Gbps, dscp: 32, ecn: true}
    - {src: h3, dst: h5, rate: 1Gbps, dscp: 32, ecn: true}
)",
               "scope_" + scope);
}

/// The congested queue-0 flows are marked from ~40 arrivals on in every scope.
void check_heavy_marked(const json& s) {
    for (unsigned f = 0; f < 2; ++f) {
        INFO(s["flows"][f].dump());
        CHECK(unmarked(s, f) <= 25);
        CHECK(u64(s["flows"][f]["ce_frames"]) > 600);
    }
}
}  // namespace

TEST_CASE("per-pool marking scope marks a light flow on another port", "[switch_qos][ecn]") {
    // Pool scope compares the whole lossy pool's queued bytes with K: both light flows are
    // marked, even the one on the uncongested port (the paper's reason to expect it worse).
    const json s = run_scope("pool");
    check_heavy_marked(s);
    INFO(s["flows"].dump());
    for (unsigned f = 2; f < 4; ++f) {
        CHECK(u64(s["flows"][f]["delivered_frames"]) >= 160);
        CHECK(unmarked(s, f) <= 3);
    }
}

// ---------------------------------------------------------------- HULL phantom queue

TEST_CASE("phantom queue marks at 99% load but not at 90%", "[switch_qos][phantom]") {
    // Seed-000 §1.5: a counter drained at gamma C = 9.5 Gbps in 950 B steps every 800 ns, marks
    // if above 1000 B when a frame passes (then adds its 1538 wire bytes). At 9 Gbps (wire) it
    // drains faster than it fills and never reaches 1000 B. At 9.9 Gbps it grows by 1538 x
    // (1 - 9.5/9.9) = 62 B per frame, so after at most ~32 frames (1950 B / 62 B, the 950 B
    // drain step either way) every frame is marked. The egress queue itself never builds.
    const json s = run(R"(
duration: 2ms
topology: {kind: incast, host_rate: 10Gbps, incast: {hosts: 4}}
switch:
  phantom_queue: {enabled: true, gamma: 0.95, threshold: 1000B}
traffic:
  flows:
    - {src: h0, dst: h2, rate: 9Gbps, ecn: true}
    - {src: h1, dst: h3, rate: 9.9Gbps, ecn: true}
)",
                       "phantom");
    INFO(s["flows"].dump());
    {
        const json& p = port(s, 2);
        INFO(p["phantom_queue"].dump());
        CHECK(u64(p["phantom_queue"]["frames"]) == u64(p["tx_frames"]));
        CHECK(u64(p["phantom_queue"]["marked"]) == 0);
        CHECK(u64(s["flows"][0]["ce_frames"]) == 0);
        CHECK(u64(s["flows"][0]["delivered_frames"]) > 1400);
        CHECK(num(p["phantom_queue"]["counter_bytes"]) < WIRE_BYTES);
    }
    {
        const json& p = port(s, 3);
        INFO(p["phantom_queue"].dump());
        CHECK(num(queue(s, 3, 0)["peak_frame_bytes"]) <=
              FRAME_BYTES);  // marks come from the phantom queue
        CHECK(unmarked(s, 1) >= 1);
        CHECK(unmarked(s, 1) <= 32);
        CHECK(u64(s["flows"][1]["delivered_frames"]) > 1550);
        // The counter keeps (9.9 - 9.5) Gbps x 2 ms / 8 = 100 kB (both rates in wire bytes; frame
        // bytes would give 68 kB). 3% covers the start-up and the 950 B steps.
        CHECK(num(p["phantom_queue"]["counter_bytes"]) == Approx(0.4e9 * 2e-3 / 8).epsilon(0.03));
    }
}

// ---------------------------------------------------------------- shapers

// Guards the nested keys `shaper.{rate,burst}` (once read as literal dotted keys and ignored).
TEST_CASE("port shaper limits egress to its rate", "[switch_qos][shaper]") {
    // A 10G flow through a port shaped to 5 Gbps of wire rate: 4 ms x 5 Gbps / 12304 bit =
    // 1625.5 frames, plus the 3000 B initial burst, minus ~3 us of start-up: within 1%.
    const json s = run(R"(
duration: 4ms
topology: {kind: incast, host_rate: 10Gbps, incast: {hosts: 2}}
switch: {buffer: 1MiB, port_cap: 0B, shaper: {rate: 5Gbps, burst: 3000B}}
traffic:
  flows:
    - {src: h0, dst: h1, rate: 10Gbps}
)",
                       "port_shaper");
    INFO(port(s, 1).dump());
    const double delivered_bps = num(s["flows"][0]["delivered_frames"]) * WIRE_BYTES * 8 / 4e-3;
    CHECK(delivered_bps == Approx(5e9).epsilon(0.01));
}

// ---------------------------------------------------------------- classification

TEST_CASE("default classification maps DSCP 46 to queue 5 and ignores PCP", "[switch_qos][qos]") {
    // Distinct frame counts tell the flows apart in the queue counters: 10 frames DSCP 46, 20
    // frames DSCP 46 with PCP 3 (tagged, but trust is dscp), 40 frames DSCP 8 with PCP 6.
    const json s = run(R"(
duration: 300us
topology: {kind: incast, host_rate: 10Gbps, incast: {hosts: 4}}
traffic:
  flows:
    - {src: h0, dst: h3, rate: 2Gbps, dscp: 46, frames: 10}
    - {src: h1, dst: h3, rate: 2Gbps, dscp: 46, pcp: 3, frames: 20}
    - {src: h2, dst: h3, rate: 2Gbps, dscp: 8, pcp: 6, frames: 40}
)",
                       "classify_default");
    const json& p = port(s, 3);
    INFO(p["queues"].dump());
    const std::uint64_t expected[8] = {0, 40, 0, 0, 0, 30, 0, 0};  // 46/8 = 5, 8/8 = 1
    for (unsigned q = 0; q < 8; ++q) CHECK(u64(p["queues"][q]["tx_frames"]) == expected[q]);
    // Ingress priority group = traffic class (tc_to_pg identity).
    CHECK(u64(port(s, 0)["ingress_pgs"][0]["pg"]) == 5);
    CHECK(u64(port(s, 1)["ingress_pgs"][0]["pg"]) == 5);
    CHECK(u64(port(s, 2)["ingress_pgs"][0]["pg"]) == 1);
}

TEST_CASE("dscp_to_tc override and pcp trust pick the queue", "[switch_qos][qos]") {
    // dscp_to_tc '46:7' sends untagged DSCP 46 to queue 7; with trust pcp a tagged frame
    // classifies by its PCP (3 -> queue 3, 6 -> queue 6) whatever its DSCP.
    const json s = run(R"(
duration: 300us
topology: {kind: incast, host_rate: 10Gbps, incast: {hosts: 4}}
switch:
  qos: {trust: pcp, dscp_to_tc: ['46:7']}
traffic:
  flows:
    - {src: h0, dst: h3, rate: 2Gbps, dscp: 46, frames: 10}
    - {src: h1, dst: h3, rate: 2Gbps, dscp: 46, pcp: 3, frames: 20}
    - {src: h2, dst: h3, rate: 2Gbps, dscp: 8, pcp: 6, frames: 40}
)",
                       "classify_override");
    const json& p = port(s, 3);
    INFO(p["queues"].dump());
    const std::uint64_t expected[8] = {0, 0, 0, 20, 0, 0, 40, 10};
    for (unsigned q = 0; q < 8; ++q) CHECK(u64(p["queues"][q]["tx_frames"]) == expected[q]);
    CHECK(u64(port(s, 0)["ingress_pgs"][0]["pg"]) == 7);
    CHECK(u64(port(s, 1)["ingress_pgs"][0]["pg"]) == 3);
    CHECK(u64(port(s, 2)["ingress_pgs"][0]["pg"]) == 6);
}

// ---------------------------------------------------------------- lossless headroom

namespace {
/// PG 3 lossless (DSCP 24 -> tc 3 -> PG 3 and queue 3, queue 3 in the lossless pool), 200 KB
/// lossless pool (962 cells), 50 KB headroom per PG (241 cells). h0 sends 10G of PG-3 traffic
/// and h1 10G of lossy DSCP 0 to h2: DWRR gives each 5G, so PG 3 of ingress port 0 is
/// overloaded 2:1 and, with no PFC yet, nothing stops the sender.
json run_headroom(const std::string& headroom_pool) {
    return run(R"(
duration: 2ms
topology: {kind: incast, host_rate: 10Gbps, incast: {hosts: 3}}
switch:
  port_cap: 0B
  mmu: {lossless_pgs: ['3'], lossless_queues: ['3'], lossless_pool: 200KB, pg_headroom: 50KB, headroom_pool: )" +
                   headroom_pool + R"(}
traffic:
  flows:
    - {src: h0, dst: h2, rate: 10Gbps, dscp: 24}
    - {src: h1, dst: h2, rate: 10Gbps, dscp: 0}
)",
               "headroom");
}

/// PG 3 of ingress port 0 first takes its dynamic share of the lossless pool, alpha P / (1 +
/// alpha) with pg_alpha 8, then overflows into headroom, which (released first) stays in use.
const json& check_pg3(const json& s) {
    const json& pgs = port(s, 0)["ingress_pgs"];
    REQUIRE(pgs.size() == 1);
    const json& pg = pgs[0];
    INFO(pg.dump());
    CHECK(u64(pg["pg"]) == 3);
    const double pool = num(s["switches"]["tor"]["pools"]["lossless"]["size_cells"]);
    CHECK(pool == 962);
    CHECK(std::abs(num(pg["peak_cells"]) - 8 * pool / 9) <= CELLS_PER_FRAME);
    CHECK(u64(pg["headroom_cells"]) == u64(pg["headroom_peak_cells"]));
    // The lossy flow is untouched: queue 0 loses nothing.
    for (const auto& d : queue(s, 2, 0)["drops"]) CHECK(u64(d) == 0);
    return pg;
}
}  // namespace

TEST_CASE("lossless pg headroom fills to pg_headroom then drops headroom_exhausted",
          "[switch_qos][mmu]") {
    // Headroom pool 200 KB (962 cells) > the PG's 241: the PG limit binds; the fit test stops
    // within one frame (8 cells) below it.
    const json s = run_headroom("200KB");
    const json& pg = check_pg3(s);
    CHECK(num(pg["headroom_peak_cells"]) <= 241);
    CHECK(num(pg["headroom_peak_cells"]) > 241 - CELLS_PER_FRAME);
    const json& drops = queue(s, 2, 3)["drops"];
    INFO(drops.dump());
    CHECK(u64(drops["headroom_exhausted"]) > 500);  // ~half of the 1626 frames sent
    CHECK(drops_except(s["frames"]["dropped_by_cause"], "headroom_exhausted") == 0);
}

TEST_CASE("lossless pg headroom capped by a smaller headroom pool drops headroom_exhausted",
          "[switch_qos][mmu]") {
    // Headroom pool 30 KB (145 cells) < the PG's 241: the pool binds first.
    const json s = run_headroom("30KB");
    const json& pg = check_pg3(s);
    CHECK(u64(s["switches"]["tor"]["pools"]["headroom"]["size_cells"]) == 145);
    CHECK(num(pg["headroom_peak_cells"]) <= 145);
    CHECK(num(pg["headroom_peak_cells"]) > 145 - CELLS_PER_FRAME);
    const json& drops = queue(s, 2, 3)["drops"];
    INFO(drops.dump());
    CHECK(u64(drops["headroom_exhausted"]) > 500);
    CHECK(drops_except(s["frames"]["dropped_by_cause"], "headroom_exhausted") == 0);
}
