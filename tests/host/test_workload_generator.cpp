// The open-loop workload generator (Poisson arrivals, patterns, sizes) and the fixed flow
// patterns, without the scenario loader: offered load, size moments of the shipped CDFs,
// derangements, and the order of the RNG draws that keeps runs reproducible.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "fabricsim/core/frame.h"
#include "fabricsim/host/algo/workload_generator.h"

using namespace fabricsim;
using namespace fabricsim::host;

namespace {

std::string shipped_csv(const std::string& name) {
    std::ifstream in(std::string(FABRICSIM_WORKLOADS_DIR) + "/" + name + ".csv");
    REQUIRE(in.good());
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

/// Mean and second moment of the piecewise-linear CDF in `text` (uniform within each segment),
/// parsed here independently of flow_size_distribution.
std::pair<double, double> analytic_moments(const std::string& text) {
    std::istringstream in(text);
    std::string line;
    std::vector<std::pair<double, double>> pts;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#' || line.find("cdf") != std::string::npos) continue;
        const auto comma = line.find(',');
        pts.push_back({std::stod(line.substr(0, comma)), std::stod(line.substr(comma + 1))});
    }
    double m1 = 0, m2 = 0;
    for (std::size_t i = 1; i < pts.size(); ++i) {
        const double a = pts[i - 1].first, b = pts[i].first, w = pts[i].second - pts[i - 1].second;
        m1 += w * (a + b) / 2;
        m2 += w * (a * a + a * b + b * b) / 3;
    }
    return {m1, m2};
}

/// TCP with a 1460 B MSS: 1538 wire bytes per 1460 payload bytes.
constexpr double WIRE_PER_BYTE = 1538.0 / 1460.0;

std::vector<workload_host> hosts(std::size_t n, std::uint64_t rate_bps) {
    std::vector<workload_host> h;
    for (std::uint32_t i = 0; i < n; ++i) h.push_back({i, "h" + std::to_string(i), rate_bps});
    return h;
}

workload_params params(traffic_pattern pattern, double load, ps_t stop) {
    workload_params p;
    p.pattern = pattern;
    p.load = load;
    p.stop = stop;
    p.wire_per_byte = WIRE_PER_BYTE;
    return p;
}

/// Offered wire bits per sending host over [start, stop), as a fraction of its link rate.
std::map<std::uint32_t, double> offered_load(const std::vector<generated_flow>& flows,
                                             const std::vector<workload_host>& hs,
                                             const workload_params& p) {
    std::map<std::uint32_t, double> bits;
    for (const auto& f : flows) bits[f.src] += double(f.size_bytes) * p.wire_per_byte * 8;
    const double seconds = double(p.stop - p.start) / double(PS_PER_S);
    std::map<std::uint32_t, double> load;
    for (const auto& h : hs)
        if (bits.count(h.id)) load[h.id] = bits[h.id] / (double(h.rate_bps) * seconds);
    return load;
}

}  // namespace

TEST_CASE("workload: offered load is the target over a long run (websearch, all-to-all)",
          "[workload]") {
    // 16 hosts, half at 10G and half at 25G; about 12,500 flows per 10G host.
    auto hs = hosts(16, 10'000'000'000ull);
    for (std::size_t i = 8; i < 16; ++i) hs[i].rate_bps = 25'000'000'000ull;
    const auto dist = flow_size_distribution::from_csv_text(shipped_csv("websearch"), "websearch");
    const auto p = params(traffic_pattern::ALL_TO_ALL, 0.6, 30 * PS_PER_S);
    const workload_generator gen(hs, dist, p, 7, "traffic.workload[0]");
    const auto flows = gen.generate();
    REQUIRE(flows.size() > 200000);
    const auto load = offered_load(flows, hs, p);
    double bits = 0, capacity = 0;
    for (const auto& h : hs) {
        bits += load.at(h.id) * double(h.rate_bps);
        capacity += double(h.rate_bps);
        CHECK(load.at(h.id) == Approx(0.6).epsilon(0.10));  // per host: ~2.3% standard deviation
    }
    CHECK(bits / capacity == Approx(0.6).epsilon(0.02));  // all hosts: ~0.5% standard deviation
    // The mean gap follows from the mean size: lambda = load * C / (mean * 8 * 1538/1460).
    CHECK(gen.mean_gap_ps(10'000'000'000ull) ==
          Approx(1711250.0 * 8 * WIRE_PER_BYTE / 6e9 * 1e12).epsilon(1e-12));
}

TEST_CASE("workload: fixed sizes give the target load at every host (Poisson count only)",
          "[workload]") {
    const auto hs = hosts(8, 10'000'000'000ull);
    const auto p = params(traffic_pattern::PERMUTATION, 0.3, 2 * PS_PER_S);
    const workload_generator gen(hs, flow_size_distribution::fixed(20000), p, 3, "w");
    const auto flows = gen.generate();
    // 0.3 * 10G * 2 s / (20000 * 8 * 1538/1460) = 35,600 flows per host: 0.5% deviation.
    const auto load = offered_load(flows, hs, p);
    REQUIRE(load.size() == 8);
    for (const auto& [h, l] : load) CHECK(l == Approx(0.3).epsilon(0.02));
    CHECK(std::all_of(flows.begin(), flows.end(),
                      [](const generated_flow& f) { return f.size_bytes == 20000; }));
}

TEST_CASE("workload: flows start in time order between start and stop", "[workload]") {
    const auto hs = hosts(4, 10'000'000'000ull);
    auto p = params(traffic_pattern::ALL_TO_ALL, 0.9, 12 * PS_PER_MS);
    p.start = 10 * PS_PER_MS;
    const workload_generator gen(hs, flow_size_distribution::fixed(1000), p, 1, "w");
    const auto flows = gen.generate();
    REQUIRE(flows.size() > 1000);
    CHECK(flows.front().start > p.start);
    CHECK(flows.back().start < p.stop);
    CHECK(std::is_sorted(
        flows.begin(), flows.end(),
        [](const generated_flow& a, const generated_flow& b) { return a.start < b.start; }));
    CHECK(std::none_of(flows.begin(), flows.end(),
                       [](const generated_flow& f) { return f.src == f.dst; }));
}

TEST_CASE("workload: inter_site and intra_site destinations (seed-002 §3A/§3B mixes)",
          "[workload]") {
    // Three sites of 4, 4 and 2 hosts; ids are not host indices on purpose.
    std::vector<workload_host> hs;
    for (std::uint32_t i = 0; i < 10; ++i)
        hs.push_back({100 + i, "h" + std::to_string(i), 10'000'000'000ull,
                      i < 4   ? 0u
                      : i < 8 ? 1u
                              : 2u});
    auto site = [](std::uint32_t id) { return id < 104 ? 0u : id < 108 ? 1u : 2u; };
    const auto p = params(traffic_pattern::INTER_SITE, 0.5, 200 * PS_PER_MS);
    const auto inter =
        workload_generator(hs, flow_size_distribution::fixed(10000), p, 7, "w").generate();
    REQUIRE(inter.size() > 10000);
    std::map<std::uint32_t, std::uint64_t> to;
    for (const auto& f : inter) {
        CHECK(site(f.src) != site(f.dst));
        if (f.src == 100) ++to[f.dst];
    }
    // Host 100 (site 0) sends uniformly to the 6 hosts of sites 1 and 2.
    REQUIRE(to.size() == 6);
    std::uint64_t total = 0;
    for (const auto& [d, n] : to) total += n;
    for (const auto& [d, n] : to) CHECK(double(n) == Approx(total / 6.0).epsilon(0.15));

    auto q = p;
    q.pattern = traffic_pattern::INTRA_SITE;
    const auto intra =
        workload_generator(hs, flow_size_distribution::fixed(10000), q, 7, "w").generate();
    std::map<std::uint32_t, std::set<std::uint32_t>> dsts;
    for (const auto& f : intra) {
        CHECK(site(f.src) == site(f.dst));
        CHECK(f.src != f.dst);
        dsts[f.src].insert(f.dst);
    }
    CHECK(dsts[100] == std::set<std::uint32_t>{101, 102, 103});
    CHECK(dsts[108] == std::set<std::uint32_t>{109});
    // The same seed gives the same flows; the offered load is the pattern-independent target.
    CHECK(intra.size() == inter.size());

    hs.pop_back();  // h9 gone: h8 is alone in site 2
    CHECK_THROWS_WITH(workload_generator(hs, flow_size_distribution::fixed(1), q, 7, "w"),
                      "host h8 has no other host in its site to send to");
    for (auto& h : hs) h.site = 0;
    CHECK_THROWS_WITH(workload_generator(hs, flow_size_distribution::fixed(1), p, 7, "w"),
                      "host h0 has no host in another site to send to");
}

TEST_CASE("workload: shipped CDFs have their analytic mean and second moment", "[workload]") {
    for (const char* name : {"websearch", "datamining", "fb_hadoop"}) {
        SECTION(name) {
            const std::string text = shipped_csv(name);
            const auto [m1, m2] = analytic_moments(text);
            const auto dist = flow_size_distribution::from_csv_text(text, name);
            CHECK(dist.mean() == Approx(m1).epsilon(1e-12));
            // 2M draws: the second moment's standard deviation is at most 0.9% (datamining).
            rng r(11, name);
            double s1 = 0, s2 = 0;
            const int n = 2'000'000;
            for (int i = 0; i < n; ++i) {
                const double v = double(dist.sample(r));
                s1 += v;
                s2 += v * v;
            }
            CHECK(s1 / n == Approx(m1).epsilon(0.02));
            CHECK(s2 / n == Approx(m2).epsilon(0.04));
        }
    }
    // The published means (trapezoid rule on the shipped points).
    CHECK(analytic_moments(shipped_csv("websearch")).first == Approx(1711250));
    CHECK(analytic_moments(shipped_csv("fb_hadoop")).first == Approx(120420.75));
    CHECK(analytic_moments(shipped_csv("datamining")).first == Approx(7470236));
}

TEST_CASE("workload: generated sizes follow the distribution", "[workload]") {
    const auto hs = hosts(16, 10'000'000'000ull);
    const std::string text = shipped_csv("websearch");
    const auto [m1, m2] = analytic_moments(text);
    const auto p = params(traffic_pattern::ALL_TO_ALL, 0.6, 30 * PS_PER_S);
    const workload_generator gen(hs, flow_size_distribution::from_csv_text(text, "websearch"), p, 5,
                                 "w");
    const auto flows = gen.generate();
    double s1 = 0, s2 = 0;
    for (const auto& f : flows) {
        s1 += double(f.size_bytes);
        s2 += double(f.size_bytes) * double(f.size_bytes);
    }
    const double n = double(flows.size());
    CHECK(s1 / n == Approx(m1).epsilon(0.02));  // ~0.5% standard deviation
    CHECK(s2 / n == Approx(m2).epsilon(0.05));  // ~1% standard deviation
}

TEST_CASE("workload: the permutation is a derangement, fixed for the whole run", "[workload]") {
    for (std::uint32_t n = 2; n <= 40; ++n) {
        std::vector<std::uint32_t> items;
        for (std::uint32_t i = 0; i < n; ++i) items.push_back(100 + 3 * i);
        const auto d = derangement(items, rng(1, "perm" + std::to_string(n)));
        REQUIRE(d.size() == n);
        CHECK(std::multiset<std::uint32_t>(d.begin(), d.end()) ==
              std::multiset<std::uint32_t>(items.begin(), items.end()));
        std::map<std::uint32_t, std::uint32_t> next;
        for (std::uint32_t i = 0; i < n; ++i) {
            CHECK(d[i] != items[i]);
            next[items[i]] = d[i];
        }
        // Sattolo: one cycle through every item.
        std::uint32_t at = items[0], steps = 0;
        do {
            at = next[at];
            ++steps;
        } while (at != items[0] && steps <= n);
        CHECK(steps == n);
    }
    const auto hs = hosts(12, 10'000'000'000ull);
    const workload_generator gen(hs, flow_size_distribution::fixed(5000),
                                 params(traffic_pattern::PERMUTATION, 0.5, 5 * PS_PER_MS), 9, "w");
    std::map<std::uint32_t, std::set<std::uint32_t>> dst_of;
    for (const auto& f : gen.generate()) dst_of[f.src].insert(f.dst);
    REQUIRE(dst_of.size() == 12);
    std::set<std::uint32_t> receivers;
    for (const auto& [s, d] : dst_of) {
        REQUIRE(d.size() == 1);  // every flow of a host goes to the same peer
        CHECK(*d.begin() != s);
        receivers.insert(*d.begin());
    }
    CHECK(receivers.size() == 12);  // each host receives from exactly one
}

TEST_CASE("workload: all-to-all spreads over the other hosts, many-to-one skips the target",
          "[workload]") {
    const auto hs = hosts(5, 10'000'000'000ull);
    const workload_generator a2a(hs, flow_size_distribution::fixed(1000),
                                 params(traffic_pattern::ALL_TO_ALL, 0.5, 20 * PS_PER_MS), 2, "w");
    std::map<std::pair<std::uint32_t, std::uint32_t>, int> pairs;
    for (const auto& f : a2a.generate()) pairs[{f.src, f.dst}]++;
    CHECK(pairs.size() == 20);  // every ordered pair of distinct hosts, about equally
    for (const auto& [sd, n] : pairs) CHECK(n == Approx(pairs.begin()->second).epsilon(0.1));
    auto p = params(traffic_pattern::MANY_TO_ONE, 0.5, 10 * PS_PER_MS);
    p.target = 3;
    const workload_generator m2o(hs, flow_size_distribution::fixed(1000), p, 2, "w");
    std::set<std::uint32_t> senders;
    for (const auto& f : m2o.generate()) {
        CHECK(f.dst == 3);
        senders.insert(f.src);
    }
    CHECK(senders == std::set<std::uint32_t>{0, 1, 2, 4});
}

TEST_CASE("workload: each host's RNG draws the gap, the destination, then the size", "[workload]") {
    const auto hs = hosts(4, 10'000'000'000ull);
    const auto dist = flow_size_distribution::from_csv_text(shipped_csv("websearch"), "websearch");
    const auto p = params(traffic_pattern::ALL_TO_ALL, 0.5, 50 * PS_PER_MS);
    const workload_generator gen(hs, dist, p, 42, "traffic.workload[1]");
    const auto flows = gen.generate();
    // Host h2's first two flows, drawn here by hand from its named RNG.
    rng r(42, "traffic.workload[1].h2");
    double t = 0;
    std::vector<generated_flow> expect;
    for (int i = 0; i < 2; ++i) {
        t += r.exponential(gen.mean_gap_ps(10'000'000'000ull));
        const auto k = r.below(3);
        const std::uint32_t dst = static_cast<std::uint32_t>(k < 2 ? k : k + 1);
        expect.push_back({2, dst, dist.sample(r), static_cast<ps_t>(t)});
    }
    std::vector<generated_flow> got;
    for (const auto& f : flows)
        if (f.src == 2 && got.size() < 2) got.push_back(f);
    REQUIRE(got.size() == 2);
    for (int i = 0; i < 2; ++i) {
        CHECK(got[i].dst == expect[i].dst);
        CHECK(got[i].size_bytes == expect[i].size_bytes);
        CHECK(got[i].start == expect[i].start);
    }
}

TEST_CASE("workload: limits and bad parameters are refused with the reason", "[workload]") {
    auto p = params(traffic_pattern::ALL_TO_ALL, 0.5, 10 * PS_PER_MS);
    p.max_flows = 10;
    const workload_generator gen(hosts(4, 10'000'000'000ull), flow_size_distribution::fixed(1000),
                                 p, 1, "w");
    CHECK_THROWS_AS(gen.generate(), too_many_flows);
    const auto fixed = flow_size_distribution::fixed(1000);
    CHECK_THROWS_WITH(workload_generator(hosts(1, 1000000000), fixed, p, 1, "w"),
                      Catch::Contains("two hosts"));
    auto bad = p;
    bad.stop = bad.start;
    CHECK_THROWS_WITH(workload_generator(hosts(2, 1000000000), fixed, bad, 1, "w"),
                      Catch::Contains("stop"));
    bad = p;
    bad.pattern = traffic_pattern::MANY_TO_ONE;
    bad.target = 9;
    CHECK_THROWS_WITH(workload_generator(hosts(2, 1000000000), fixed, bad, 1, "w"),
                      Catch::Contains("target"));
}

TEST_CASE("flow pairs: permutation, all-to-all and many-to-one over the hosts", "[workload]") {
    const std::vector<std::uint32_t> h{4, 5, 6, 7};
    using pairs = std::vector<std::pair<std::uint32_t, std::uint32_t>>;
    CHECK(flow_pairs(traffic_pattern::MANY_TO_ONE, h, 6, rng(1, "x")) ==
          pairs{{4, 6}, {5, 6}, {7, 6}});
    CHECK(flow_pairs(traffic_pattern::ALL_TO_ALL, h, 0, rng(1, "x")).size() == 12);
    const auto perm = flow_pairs(traffic_pattern::PERMUTATION, h, 0, rng(1, "x"));
    const auto d = derangement(h, rng(1, "x"));
    REQUIRE(perm.size() == 4);
    for (std::size_t i = 0; i < 4; ++i) CHECK(perm[i] == std::make_pair(h[i], d[i]));
}
