#include <catch2/catch.hpp>

#include <cstdint>
#include <utility>
#include <vector>

#include "fabricsim/core/log_histogram.h"

using namespace fabricsim;

using octave = std::pair<double, std::uint64_t>;

TEST_CASE("log_histogram: quantiles are the upper edge of the bin holding them",
          "[core][histogram]") {
    log_histogram h(3, 1, 8);     // bins [1,2) [2,4) [4,8)
    CHECK(h.quantile(0.5) == 0);  // no samples
    for (double v : {1.5, 2.5, 3.0, 5.0}) h.add(v);
    CHECK(h.count() == 4);
    CHECK(h.quantile(0.25) == Approx(2));
    CHECK(h.quantile(0.26) == Approx(4));
    CHECK(h.quantile(0.75) == Approx(4));
    CHECK(h.quantile(1.0) == Approx(8));
}

TEST_CASE("log_histogram: zeros are exact, under- and overflow bins", "[core][histogram]") {
    log_histogram h(3, 1, 8);
    h.add(0);
    h.add(0);
    h.add(0.25);  // underflow: reads as lo
    h.add(100);   // overflow: reads as hi
    CHECK(h.quantile(0.5) == 0);
    CHECK(h.quantile(0.51) == Approx(1));
    CHECK(h.quantile(1.0) == Approx(8));
    // Octaves of unit 1: zeros, then (0.5, 1] holding the underflow, then above hi.
    CHECK(h.octaves(1) == std::vector<octave>{{0, 2}, {1, 1}, {16, 1}});
}

TEST_CASE("log_histogram: octaves merge fine bins by powers of two of the unit",
          "[core][histogram]") {
    log_histogram h = log_histogram::ps_10ns_to_1s();
    for (double us : {0.7, 0.9, 1.2, 1.5, 3.0, 3.5, 100.0}) h.add(us * 1e6);
    CHECK(h.octaves(1e6) == std::vector<octave>{{1e6, 2}, {2e6, 2}, {4e6, 2}, {128e6, 1}});
    CHECK(h.quantile(0.5) == Approx(1.5e6).epsilon(0.02));
}
