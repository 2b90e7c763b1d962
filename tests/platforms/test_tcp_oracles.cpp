// Oracle tests: the DCTCP analytic results of seed-000 (§2.1 sawtooth, §2.2 fluid-model
// throughput, §2.3 convergence, §3.2 testbed queue) reproduced by whole-platform runs of the
// TCP hosts through the switch model. Each TEST_CASE runs in its own process (one elaboration).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
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
using json = nlohmann::json;

namespace {

constexpr double FRAME = 1518;  // bytes of a 1500 B packet in the buffer (frame incl. FCS)
constexpr double WIRE = 1538;   // on the wire (+ preamble, IFG)

struct run_output {
    json summary;
    std::string dir;
};

run_output run(const std::string& yaml, const std::string& name) {
    const std::string dir = (std::filesystem::temp_directory_path() /
                             ("fabricsim_" + name + "_" + std::to_string(::getpid())))
                                .string();
    std::filesystem::remove_all(dir);
    const auto sc = load_scenario(load_yaml_string(yaml), name);
    auto r = run_scenario(sc, dir);
    const json& fr = r.summary["frames"];
    INFO(fr.dump());
    REQUIRE(fr["conserved"].get<bool>());
    return {r.summary, dir};
}

/// Columns `x` and `y` of a CSV file.
std::vector<std::pair<double, double>> csv_columns(const std::string& path, const std::string& x,
                                                   const std::string& y) {
    std::ifstream in(path);
    REQUIRE(in.good());
    std::string line;
    std::getline(in, line);
    std::vector<std::string> head;
    {
        std::stringstream ss(line);
        std::string c;
        while (std::getline(ss, c, ',')) head.push_back(c);
    }
    const auto ix = std::find(head.begin(), head.end(), x) - head.begin();
    const auto iy = std::find(head.begin(), head.end(), y) - head.begin();
    REQUIRE(ix < static_cast<long>(head.size()));
    REQUIRE(iy < static_cast<long>(head.size()));
    std::vector<std::pair<double, double>> out;
    while (std::getline(in, line)) {
        std::stringstream ss(line);
        std::string c;
        double vx = 0, vy = 0;
        for (long i = 0; std::getline(ss, c, ','); ++i) {
            if (i == ix) vx = std::stod(c);
            if (i == iy) vy = std::stod(c);
        }
        out.push_back({vx, vy});
    }
    return out;
}

struct queue_stats {
    double max = 0, min = 1e18, mean = 0;
};

/// Queue of one port in packets (1518 B frames) over samples with time >= from_us.
queue_stats queue_of(const run_output& r, const std::string& column, double from_us) {
    queue_stats q;
    double sum = 0;
    std::size_t n = 0;
    for (const auto& [t, b] : csv_columns(r.dir + "/timeseries.csv", "time_us", column)) {
        if (t < from_us) continue;
        const double p = b / FRAME;
        q.max = std::max(q.max, p);
        q.min = std::min(q.min, p);
        sum += p;
        ++n;
    }
    q.mean = n ? sum / double(n) : 0;
    return q;
}

/// Seed-000 eq. 2.6: alpha^2 (1 - alpha/4) = (2W+1)/(W+1)^2, solved by bisection.
double sawtooth_alpha(double w) {
    double lo = 0, hi = 1;
    const double rhs = (2 * w + 1) / ((w + 1) * (w + 1));
    for (int i = 0; i < 100; ++i) {
        const double a = (lo + hi) / 2;
        (a * a * (1 - a / 4) < rhs ? lo : hi) = a;
    }
    return (lo + hi) / 2;
}

/// N long-lived DCTCP flows into one 10G port (incast rack), K = 40, g = 1/16, RTT ~100 us.
void check_sawtooth(unsigned n) {
    const unsigned k = 40;
    const auto r =
        run("duration: 40ms\n"
            "topology: {kind: incast, host_rate: 10Gbps, link_delay: 24us, incast: {hosts: " +
                std::to_string(n + 1) +
                "}}\n"
                "switch: {queues: 1, ecn: {mode: step, k: " +
                std::to_string(k) +
                "pkt}}\n"
                "tcp: {cc: dctcp, ack_every: 1, dctcp: {g: 0.0625}}\n"
                "traffic: {generate: [{pattern: many_to_one, transport: tcp}]}\n"
                "results: {sample_interval: 1us}\n",
            "sawtooth" + std::to_string(n));
    // C x RTT in packets from the measured base RTT (propagation + serialisation + NIC/pipeline).
    const double rtt_us = r.summary["flows"][0]["tcp"]["min_rtt_us"].get<double>();
    const double c_rtt = 10e9 * rtt_us * 1e-6 / (WIRE * 8);
    const double w_star = (c_rtt + k) / n;
    const double alpha = sawtooth_alpha(w_star);
    const double amplitude = n * (w_star + 1) * alpha / 2;  // eq. 2.8 (exact form)
    const auto q = queue_of(r, "tor.p" + std::to_string(n) + "_frame_bytes", 10000);
    double alpha_mean = 0;
    for (unsigned i = 0; i < n; ++i)
        alpha_mean += r.summary["flows"][i]["tcp"]["alpha"].get<double>() / n;
    INFO("N=" << n << " C*RTT=" << c_rtt << " W*=" << w_star << " Qmax=" << q.max
              << " (K+N=" << k + n << ") Qmin=" << q.min << " amplitude=" << q.max - q.min
              << " (model " << amplitude << ") alpha=" << alpha_mean << " (model " << alpha
              << ", sqrt(2/W*)=" << std::sqrt(2 / w_star) << ")");
    // Tolerances: Q_max within 2 packets (windows and marks are whole packets, the queue is
    // sampled every 1 us); amplitude and alpha within 25% (the model assumes perfectly
    // synchronised flows; the thesis calls it "fairly accurate" for N < 10, Fig 2.12).
    CHECK(std::abs(q.max - (k + n)) <= 2.0);
    CHECK(std::abs((q.max - q.min) - amplitude) <= 0.25 * amplitude);
    CHECK(std::abs(alpha_mean - alpha) <= 0.25 * alpha);
    CHECK(r.summary["tcp"]["timeouts"].get<std::uint64_t>() == 0);
    CHECK(r.summary["frames"]["dropped"].get<std::uint64_t>() == 0);
    // The queue never empties: full throughput (payload 1460 of 1538 wire bytes).
    CHECK(q.min > 0);
    CHECK(r.summary["goodput_bps"].get<double>() > 0.97 * 10e9 * 1460 / WIRE);
}

/// Steady-state throughput of N=2 long flows at K = 1% of a 400-packet BDP (seed-000 §2.2,
/// Fig 3.9), as a fraction of the payload line rate, from the bytes acked between 150 and 400 ms
/// (at a 480 us RTT, congestion avoidance needs ~100 ms to reach the 200-packet windows).
double utilisation(const std::string& cc) {
    const auto r =
        run("duration: 400ms\n"
            "topology: {kind: incast, host_rate: 10Gbps, link_delay: 120us, incast: {hosts: 3}}\n"
            "switch: {queues: 1, ecn: {mode: step, k: 4pkt}}\n"
            "tcp: {cc: " +
                cc +
                ", ack_every: 1, dctcp: {g: 0.05}}\n"
                "traffic: {generate: [{pattern: many_to_one, transport: tcp, trace: true}]}\n"
                "results: {sample_interval: 0s}\n",
            "util_" + cc);
    const double t0 = 150e3, t1 = 400e3;
    double bytes = 0;
    for (int f = 0; f < 2; ++f) {
        const auto acked = csv_columns(r.dir + "/traces/flow" + std::to_string(f) + ".csv",
                                       "time_us", "acked_bytes");
        auto at = [&](double t) {
            double v = 0;
            for (const auto& [x, y] : acked)
                if (x <= t) v = y;
            return v;
        };
        bytes += at(t1) - at(t0);
    }
    return bytes * 8 / ((t1 - t0) * 1e-6) / (10e9 * 1460 / WIRE);
}

}  // namespace

TEST_CASE("oracle: DCTCP sawtooth with 2 flows (seed-000 §2.1)", "[oracle]") {
    check_sawtooth(2);
}

TEST_CASE("oracle: DCTCP sawtooth with 10 flows (seed-000 §2.1)", "[oracle]") {
    check_sawtooth(10);
}

TEST_CASE("oracle: DCTCP keeps >= 94% throughput at K = 1% of BDP (seed-000 §2.2, Fig 3.8/3.9)",
          "[oracle]") {
    const double u = utilisation("dctcp");
    INFO("DCTCP utilisation " << u);
    CHECK(u >= 0.94);
}

TEST_CASE("oracle: ECN* falls toward 75% throughput at K = 1% of BDP (seed-000 §2.2)", "[oracle]") {
    // TCP halving on marks needs a queue of a full BDP to stay busy; with K = 1% of it the
    // link idles after every cut (the thesis quotes 75% as the limit for a vanishing buffer).
    const double u = utilisation("ecn");
    INFO("ECN* utilisation " << u);
    CHECK(u < 0.85);
    CHECK(u > 0.70);
}

namespace {

/// Two long-lived flows into one 1G port of a 4 MiB shared buffer whose dynamic threshold
/// (alpha 0.17) lets one queue grow to ~600 KB, as the Triumph testbed of seed-000 §3.2
/// (Fig 1.2/2.14a: K = 20, "TCP queue 10x larger, capped by the dynamic buffer, ~600 KB").
/// TCP runs on the same switch with drop-tail (ECN off, as the testbed's TCP baseline).
run_output queue_run(const std::string& cc) {
    const std::string ecn = cc == "dctcp" ? "{mode: step, k: 20pkt}" : "{mode: off}";
    return run(
        "duration: 1500ms\n"
        "topology: {kind: incast, host_rate: 1Gbps, link_delay: 24us, incast: {hosts: 3}}\n"
        "switch: {queues: 1, buffer: 4MiB, port_cap: 0B, mmu: {queue_alpha: 0.17}, ecn: " +
            ecn +
            "}\n"
            "tcp: {cc: " +
            cc +
            "}\n"
            "traffic: {generate: [{pattern: many_to_one, transport: tcp}]}\n"
            "results: {sample_interval: 100us}\n",
        "queue_" + cc);
}

}  // namespace

TEST_CASE(
    "oracle: with the same buffer TCP fills it while DCTCP holds the queue near K (seed-000 §3.2)",
    "[oracle]") {
    const auto r = queue_run("dctcp");
    const auto q = queue_of(r, "tor.p2_frame_bytes", 100e3);
    INFO("DCTCP queue mean " << q.mean << " max " << q.max << " pkts");
    // "stable around 20 packets ... equal to K + N" (testbed, 1 Gbps, K = 20, N = 2).
    CHECK(q.mean >= 15);
    CHECK(q.mean <= 22 + 2);
    CHECK(q.max <= 22 + 2);
    CHECK(r.summary["frames"]["dropped"].get<std::uint64_t>() == 0);
    CHECK(r.summary["goodput_bps"].get<double>() > 0.9 * 1e9 * 1460 / WIRE);
}

TEST_CASE("oracle: TCP NewReno fills the dynamic-threshold buffer (seed-000 §3.2, Fig 1.2)",
          "[oracle]") {
    const auto r = queue_run("newreno");
    const auto q = queue_of(r, "tor.p2_frame_bytes", 100e3);
    const double limit_pkts =
        0.17 * 4 * 1048576.0 / 1.17 / (8 * 208);  // alpha B/(1+alpha) in 8-cell frames
    INFO("TCP queue mean " << q.mean << " max " << q.max << " pkts, DT limit " << limit_pkts);
    // DCTCP's queue is ~K + N = 22 packets (previous test); TCP's is over 10x larger on average
    // and reaches the dynamic-threshold limit, where it is tail-dropped.
    CHECK(q.mean > 10 * 22);
    CHECK(q.max >= 0.95 * limit_pkts);
    CHECK(r.summary["frames"]["dropped_by_cause"]["egress_queue_limit"].get<std::uint64_t>() > 0);
    CHECK(r.summary["goodput_bps"].get<double>() > 0.9 * 1e9 * 1460 / WIRE);
}

TEST_CASE(
    "oracle: a joining DCTCP flow converges to its fair share on the seed's time scale (seed-000 "
    "§2.3, Fig 3.11)",
    "[oracle]") {
    // Fig 3.11: 10 Gbps, d = 200 us, K = 35 (W_max ~ 200 packets), g = 1/sqrt(W_max); flow 2 starts
    // with cwnd 1 and alpha 1 while flow 1 is in steady state; the thesis measures 55 ms until
    // both windows are within 10% of the fair share. Accepted: 0.5x to 2x of that.
    const double join_us = 150e3;
    const auto r = run(
        "duration: 500ms\n"
        "topology: {kind: incast, host_rate: 10Gbps, link_delay: 50us, incast: {hosts: 3}}\n"
        "switch: {queues: 1, ecn: {mode: step, k: 35pkt}}\n"
        "tcp: {cc: dctcp, ack_every: 1, initial_window: 1, dctcp: {g: 0.0707, initial_alpha: 1}}\n"
        "traffic:\n"
        "  flows:\n"
        "    - {src: h0, dst: h2, transport: tcp, trace: true}\n"
        "    - {src: h1, dst: h2, transport: tcp, trace: true, start: 150ms}\n"
        "results: {sample_interval: 0s}\n",
        "convergence");
    const auto w1 = csv_columns(r.dir + "/traces/flow0.csv", "time_us", "cwnd_bytes");
    const auto w2 = csv_columns(r.dir + "/traces/flow1.csv", "time_us", "cwnd_bytes");
    // Fair share: mean window of both flows over the last 100 ms.
    double sum = 0;
    std::size_t n = 0;
    for (const auto* w : {&w1, &w2})
        for (const auto& [t, c] : *w)
            if (t >= 400e3) sum += c, ++n;
    REQUIRE(n > 0);
    const double fair = sum / double(n);
    // Window of a flow at time t (last ACK before t).
    auto at = [](const std::vector<std::pair<double, double>>& w, double t) {
        double v = 0;
        for (const auto& [x, y] : w) {
            if (x > t) break;
            v = y;
        }
        return v;
    };
    double converged_us = -1;
    for (double t = join_us; t < 500e3; t += 100) {
        const double a = at(w1, t), b = at(w2, t);
        if (std::abs(a - fair) <= 0.1 * fair && std::abs(b - fair) <= 0.1 * fair) {
            converged_us = t - join_us;
            break;
        }
    }
    INFO("fair window " << fair / 1460 << " pkts; converged after " << converged_us / 1000
                        << " ms");
    REQUIRE(converged_us > 0);
    CHECK(converged_us >= 27.5e3);
    CHECK(converged_us <= 110e3);
}
