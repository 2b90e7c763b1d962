// Flow-size distributions of the open-loop workloads: exact interpolation, means, and the
// shipped CDF format.
#include <catch2/catch.hpp>

#include <cmath>

#include "fabricsim/host/algo/flow_size_distribution.h"

using namespace fabricsim;
using namespace fabricsim::host;

TEST_CASE("flow sizes: linear interpolation of the CDF and the trapezoid mean", "[workload]") {
    const auto d = flow_size_distribution::from_cdf({{0, 0}, {1000, 0.5}, {3000, 1.0}}, "t");
    CHECK(d.mean() == Approx(0.5 * 500 + 0.5 * 2000));
    // The empirical mean of many draws converges to the trapezoid mean.
    rng r(1, "sizes");
    double sum = 0;
    const int n = 200000;
    for (int i = 0; i < n; ++i) sum += double(d.sample(r));
    CHECK(sum / n == Approx(d.mean()).epsilon(0.01));
}

TEST_CASE("flow sizes: steps give exact point masses (HULL mix 80% 1 KB / 20% 10 MB)",
          "[workload]") {
    const auto d = flow_size_distribution::from_cdf({{1000, 0}, {1000, 0.8}, {1e7, 0.8}, {1e7, 1}},
                                                    "hull_mix");
    CHECK(d.mean() == Approx(0.8 * 1000 + 0.2 * 1e7));
    rng r(7, "mix");
    int small = 0, large = 0;
    for (int i = 0; i < 100000; ++i) {
        const auto v = d.sample(r);
        if (v == 1000)
            ++small;
        else if (v == 10000000)
            ++large;
    }
    CHECK(small + large == 100000);
    CHECK(small / 100000.0 == Approx(0.8).margin(0.01));
}

TEST_CASE("flow sizes: the web-search CSV text parses to the published mean", "[workload]") {
    const char* csv =
        "# "
        "comment\nsize_bytes,cdf\n0,0\n10000,0.15\n20000,0.20\n30000,0.30\n50000,0.40\n80000,0.53\n"
        "200000,0.60\n1000000,0.70\n2000000,0.80\n5000000,0.90\n10000000,0.97\n30000000,1.00\n";
    const auto d = flow_size_distribution::from_csv_text(csv, "websearch");
    CHECK(d.mean() == Approx(1711250));  // facts-mmu-credit-workload §4.1 (trapezoid)
}

TEST_CASE("flow sizes: Pareto draws have the requested mean", "[workload]") {
    const auto d = flow_size_distribution::pareto(2.5, 100000);
    rng r(3, "pareto");
    double sum = 0;
    const int n = 400000;
    for (int i = 0; i < n; ++i) sum += double(d.sample(r));
    CHECK(sum / n == Approx(100000).epsilon(0.02));
}

TEST_CASE("flow sizes: malformed CDFs are rejected with the reason", "[workload]") {
    CHECK_THROWS_WITH(flow_size_distribution::from_cdf({{0, 0}, {10, 0.5}}, "x"),
                      Catch::Contains("last probability"));
    CHECK_THROWS_WITH(flow_size_distribution::from_cdf({{0, 0}, {10, 0.6}, {5, 1}}, "x"),
                      Catch::Contains("decreases"));
    CHECK_THROWS_WITH(flow_size_distribution::from_csv_text("0,0\nabc\n", "f.csv"),
                      Catch::Contains("f.csv line 2"));
    CHECK_THROWS(flow_size_distribution::pareto(1.0, 100));
}
