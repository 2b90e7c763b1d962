// Two independent platforms in one sc_main give each one's results alone: each has its own model
// scheduler (timers, firing order, activation count) and frame pool. Every TEST_CASE runs in its
// own process, so "alone" and "together" are separate elaborations; the expected figures are
// those of the runs alone, asserted exactly in all three. A platform's random streams derive
// from its blocks' hierarchical names, so both runs name it alike ("a", "b"; run_scenario: "top").
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "fabricsim/core/kernel.h"
#include "fabricsim/platforms/platform.h"

using namespace fabricsim;
using namespace fabricsim::platforms;
using nlohmann::json;

namespace {

// A congested leaf-spine (UDP, drops at the leaves) for 1 ms ...
scenario leaf_spine() {
    return load_scenario(load_yaml_string(R"(
duration: 1ms
seed: 3
topology:
  kind: leaf_spine
  host_rate: 10Gbps
  leaf_spine: {leaves: 2, spines: 2, hosts_per_leaf: 4, fabric_rate: 20Gbps}
switch: {port_cap: 40KB, buffer: 1MiB}
traffic:
  generate:
    - {pattern: permutation, process: poisson, load: 0.9}
    - {pattern: many_to_one, target: h0, process: on_off, load: 0.3, on_time: 20us, off_time: 30us}
results: {sample_interval: 0s}
)"),
                         "leaf_spine");
}

// ... and a DCTCP incast on one rack for 1.5 ms: TCP timers, ECN, a different seed and end.
scenario incast() {
    return load_scenario(load_yaml_string(R"(
duration: 1.5ms
seed: 11
topology: {kind: incast, host_rate: 10Gbps, link_delay: 1us, incast: {hosts: 9}}
switch: {queues: 1, port_cap: 60pkt, mmu: {queue_threshold: static}, ecn: {mode: step, k: 20pkt}}
tcp: {cc: dctcp, min_rto: 200us}
traffic:
  incast:
    - {aggregator: h0, workers: 8, total_response: 400KB, queries: 3, think_time: 100us}
results: {sample_interval: 0s}
)"),
                         "incast");
}

// What a run of each alone gives (kernel.systemc_wakeups and host_perf are left out: how often
// the SystemC kernel wakes a scheduler depends on what else is pending in the kernel).
struct expected {
    std::uint64_t sent, delivered, port_cap_drops, in_flight, tcp_acks, activations;
    double goodput_bps;
};
const expected LEAF_SPINE = {6574, 5733, 554, 287, 0, 27236, 67511808000.0};
const expected INCAST = {1445, 1418, 27, 0, 503, 5868, 6604800000.0};

void check(const json& s, const expected& e) {
    const json& fr = s["frames"];
    INFO(fr.dump());
    CHECK(fr["sent"] == e.sent);
    CHECK(fr["delivered"] == e.delivered);
    CHECK(fr["dropped"] == e.port_cap_drops);
    CHECK(fr["dropped_by_cause"]["port_cap"] == e.port_cap_drops);
    CHECK(fr["in_flight"] == e.in_flight);
    CHECK(fr["pool_outstanding"] == e.in_flight);  // the platform's own pool
    CHECK(fr["tcp_acks_sent"] == e.tcp_acks);
    CHECK(s["kernel"]["activations"] == e.activations);  // its own scheduler's firings
    CHECK(s["goodput_bps"].get<double>() == e.goodput_bps);
}

}  // namespace

namespace {
/// As run_scenario runs a platform (run ahead to the end), in one sc_start.
json run_alone(const scenario& sc, const char* name) {
    platform p(name, sc, "");
    p.model_scheduler().run_ahead_until(sc.duration);
    sc_core::sc_start(to_sc_time(sc.duration));
    p.check_invariants();
    return p.summary(0, 0);
}
}  // namespace

TEST_CASE("two platforms: the leaf-spine alone", "[platforms][integration][two]") {
    check(run_alone(leaf_spine(), "a"), LEAF_SPINE);
}

TEST_CASE("two platforms: the incast alone", "[platforms][integration][two]") {
    check(run_alone(incast(), "b"), INCAST);
}

TEST_CASE("two platforms in one sc_main give the results of each alone",
          "[platforms][integration][two]") {
    // run_scenario owns sc_start (one platform per call): build both, give each scheduler its
    // own run-ahead end, run to the earlier end, take that platform's summary, run on.
    const scenario a = leaf_spine(), b = incast();
    platform pa("a", a, ""), pb("b", b, "");
    pa.model_scheduler().run_ahead_until(a.duration);
    pb.model_scheduler().run_ahead_until(b.duration);
    sc_core::sc_start(to_sc_time(a.duration));
    pa.check_invariants();
    const json sa = pa.summary(0, 0);
    sc_core::sc_start(to_sc_time(b.duration - a.duration));
    pb.check_invariants();
    check(sa, LEAF_SPINE);
    check(pb.summary(0, 0), INCAST);
}
