// Incast oracles (seed-000 §3.2, Fig 2.18/2.19): an aggregator on a 1 Gbps rack requests 1 MB/N
// from N workers, 100 queries back to back (20 ms think time), RTO_min = 10 ms. With a static
// 100-packet port buffer DCTCP has no timeouts until N is about 35 (its minimum window of 2
// packets per flow no longer fits), TCP (drop-tail) from about 10; with dynamic thresholds the
// knee moves out: DCTCP has none at 40, TCP still has some.
// Each TEST_CASE is one run in its own process.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "fabricsim/core/config.h"
#include "fabricsim/platforms/platform.h"
#include "fabricsim/platforms/scenario.h"

using namespace fabricsim;
using namespace fabricsim::platforms;
using json = nlohmann::json;

namespace {

struct incast_result {
    double timeout_fraction;  ///< queries with at least one RTO
    double qct_p50_ms;
    std::uint64_t completed;
};

incast_result incast(const std::string& cc, unsigned n, bool static_buffer) {
    // TCP runs on drop-tail, as in the thesis: with step marking on, its non-ECT frames would be
    // dropped above K (RED semantics) and the buffer would shrink to 20 packets.
    const std::string ecn = cc == "dctcp" ? "{mode: step, k: 20pkt}" : "{mode: off}";
    // Dynamic: alpha = 0.17 lets one port take ~600 KB of the 4 MiB, as the seed reports.
    const std::string sw =
        static_buffer
            ? "{queues: 1, port_cap: 100pkt, mmu: {queue_threshold: static}, ecn: " + ecn + "}"
            : "{queues: 1, buffer: 4MiB, port_cap: 0B, mmu: {queue_alpha: 0.17}, ecn: " + ecn + "}";
    const std::string yaml =
        "duration: 10s\n"
        "topology: {kind: incast, host_rate: 1Gbps, link_delay: 20us, incast: {hosts: 41}}\n"
        "switch: " +
        sw +
        "\n"
        "tcp: {cc: " +
        cc +
        ", min_rto: 10ms}\n"
        "traffic:\n"
        "  incast:\n"
        "    - {aggregator: h0, workers: " +
        std::to_string(n) +
        ", total_response: 1MB, queries: 100, think_time: 20ms}\n"
        "results: {sample_interval: 0s}\n";
    const auto sc = load_scenario(load_yaml_string(yaml), "incast");
    const auto r = run_scenario(sc, "");
    REQUIRE(r.summary["frames"]["conserved"].get<bool>());
    const json& g = r.summary["incast"][0];
    const auto done = g["queries_completed"].get<std::uint64_t>();
    INFO(g.dump());
    REQUIRE(done == 100);
    return {double(g["queries_with_timeouts"].get<std::uint64_t>()) / double(done),
            g["qct_us"]["p50"].get<double>() / 1000, done};
}

}  // namespace

TEST_CASE(
    "oracle incast: DCTCP, static 100-packet buffer, 10 workers: no timeouts, QCT at line rate",
    "[oracle]") {
    const auto r = incast("dctcp", 10, true);
    CHECK(r.timeout_fraction == 0);
    // 1 MB at 1 Gbps takes 8.4 ms of payload time (seed: minimum QCT about 8 ms).
    CHECK(r.qct_p50_ms >= 8.4);
    CHECK(r.qct_p50_ms <= 9.5);
}

TEST_CASE("oracle incast: DCTCP, static 100-packet buffer, 35 workers: almost no timeouts",
          "[oracle]") {
    const auto r = incast("dctcp", 35, true);
    INFO("queries with timeouts: " << r.timeout_fraction);
    CHECK(r.timeout_fraction <= 0.05);
}

TEST_CASE("oracle incast: DCTCP, static 100-packet buffer, 40 workers: timeouts (past the knee)",
          "[oracle]") {
    const auto r = incast("dctcp", 40, true);
    INFO("queries with timeouts: " << r.timeout_fraction);
    CHECK(r.timeout_fraction >= 0.5);
}

TEST_CASE("oracle incast: TCP, static 100-packet buffer, 2 workers: rare timeouts", "[oracle]") {
    const auto r = incast("newreno", 2, true);
    INFO("queries with timeouts: " << r.timeout_fraction);
    CHECK(r.timeout_fraction <= 0.1);
}

TEST_CASE(
    "oracle incast: TCP, static 100-packet buffer, 10 workers: still few timeouts (the knee is "
    "past 10)",
    "[oracle]") {
    const auto r = incast("newreno", 10, true);
    INFO("queries with timeouts: " << r.timeout_fraction);
    CHECK(r.timeout_fraction <= 0.1);
}

TEST_CASE("oracle incast: TCP, static 100-packet buffer, 16 workers: most queries time out",
          "[oracle]") {
    const auto r = incast("newreno", 16, true);
    INFO("queries with timeouts: " << r.timeout_fraction);
    CHECK(r.timeout_fraction >= 0.5);
}

TEST_CASE("oracle incast: DCTCP with dynamic thresholds has no timeouts at 40 workers (Fig 2.19)",
          "[oracle]") {
    const auto r = incast("dctcp", 40, false);
    INFO("queries with timeouts: " << r.timeout_fraction);
    CHECK(r.timeout_fraction <= 0.02);
}

TEST_CASE("oracle incast: TCP with dynamic thresholds still times out at 40 workers (Fig 2.19)",
          "[oracle]") {
    const auto r = incast("newreno", 40, false);
    INFO("queries with timeouts: " << r.timeout_fraction);
    CHECK(r.timeout_fraction > 0.02);
}
