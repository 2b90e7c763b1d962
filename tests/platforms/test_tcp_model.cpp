// Model-level checks of the TCP variants through the switch model: the reduction factor each
// algorithm applies, seen in its per-ACK trace. One run per TEST_CASE (own process).
#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "fabricsim/core/config.h"
#include "fabricsim/platforms/platform.h"
#include "fabricsim/platforms/scenario.h"

using namespace fabricsim;
using namespace fabricsim::platforms;

namespace {

struct cut {
    double before, after;  ///< cwnd in bytes around a multiplicative decrease
};

/// Runs one long flow h0 -> h2 (plus a second one h1 -> h2) with `tcp` settings and returns the
/// multiplicative decreases of flow 0 (cwnd dropping by more than 10% in one ACK, not to 1 MSS).
std::vector<cut> cuts(const std::string& tcp, const std::string& ecn, nlohmann::json& summary) {
    const std::string dir = "/tmp/fabricsim_tcp_model_" + std::to_string(::getpid());
    std::filesystem::remove_all(dir);  // a results folder holds one run
    const auto sc = load_scenario(
        load_yaml_string(
            "duration: 300ms\n"
            "topology: {kind: incast, host_rate: 10Gbps, link_delay: 20us, incast: {hosts: 3}}\n"
            "switch: {queues: 1, ecn: " +
            ecn +
            "}\n"
            "tcp: " +
            tcp +
            "\n"
            "traffic: {generate: [{pattern: many_to_one, transport: tcp, trace: true}]}\n"
            "results: {sample_interval: 0s}\n"),
        "tcp_model");
    summary = run_scenario(sc, dir).summary;
    REQUIRE(summary["frames"]["conserved"].get<bool>());
    std::ifstream in(dir + "/traces/flow0.csv");
    std::string line;
    std::getline(in, line);
    std::vector<cut> out;
    double prev = 0;
    while (std::getline(in, line)) {
        std::stringstream ss(line);
        std::string t, cwnd;
        std::getline(ss, t, ',');
        std::getline(ss, cwnd, ',');
        const double w = std::stod(cwnd);
        if (prev > 0 && w < 0.9 * prev && w > 1460) out.push_back({prev, w});
        prev = w;
    }
    return out;
}

}  // namespace

TEST_CASE("tcp model: CUBIC with ECN cuts its window by the configured beta", "[tcp]") {
    nlohmann::json s;
    const auto c = cuts("{cc: cubic, cubic: {ecn: true, beta: 0.6}}", "{mode: step, k: 40pkt}", s);
    REQUIRE(c.size() >= 5);
    for (const auto& x : c) {
        INFO("cwnd " << x.before << " -> " << x.after);
        CHECK(x.after == Approx(0.6 * x.before).margin(1460));
    }
    CHECK(s["frames"]["dropped"].get<std::uint64_t>() == 0);  // marks, no losses
    CHECK(s["goodput_bps"].get<double>() > 0.95 * 10e9 * 1460 / 1538);
}

TEST_CASE("tcp model: ECN* halves its window once per window of marks", "[tcp]") {
    nlohmann::json s;
    const auto c = cuts("{cc: ecn}", "{mode: step, k: 40pkt}", s);
    REQUIRE(c.size() >= 5);
    for (const auto& x : c) {
        INFO("cwnd " << x.before << " -> " << x.after);
        CHECK(x.after == Approx(0.5 * x.before).margin(1460));
    }
    CHECK(s["frames"]["dropped"].get<std::uint64_t>() == 0);
}

TEST_CASE("tcp model: DCTCP cuts by alpha/2, far less than half, on the same marks", "[tcp]") {
    nlohmann::json s;
    const auto c = cuts("{cc: dctcp}", "{mode: step, k: 40pkt}", s);
    // DCTCP's steady cuts are cwnd * alpha/2 with alpha ~ 0.2: the 10%-drop filter sees few or
    // none once alpha has settled; the flows' final alpha tells the same.
    for (std::size_t i = 0; i < 2; ++i) {
        const double a = s["flows"][i]["tcp"]["alpha"].get<double>();
        CHECK(a > 0.05);
        CHECK(a < 0.4);
    }
    std::size_t late = 0;
    for (const auto& x : c)
        if (x.after < 0.7 * x.before) ++late;
    CHECK(late <= 2);  // only the start-up cuts with alpha near 1
}
