// BCN reaction point (plain C++): additive increase, multiplicative decrease, regulator
// install/release, and the seed-003 §2 E convergence count.
#include <catch2/catch.hpp>
#include <cmath>
#include <stdexcept>

#include "fabricsim/nic/algo/bcn_rp.h"

using namespace fabricsim;
using namespace fabricsim::nic;

namespace {
constexpr std::uint64_t G10 = 10'000'000'000ull;
}

TEST_CASE("bcn rp: G_i·Fb·R_u up, (1 - G_d|Fb|) down, only after a negative message",
          "[nic][bcn]") {
    bcn_rp rp(bcn_rp_params::thesis_default(G10));
    CHECK(rp.rate_bps() == 1e10);
    CHECK(rp.on_feedback(5, 1) == 1e10);  // no regulator yet: ignored
    CHECK_FALSE(rp.active());
    // Fb = -3: 10G·(1 - 3·2.6e-4) = 9.9922G; the regulator is installed with CP 1's tag.
    CHECK(rp.on_feedback(-3, 1) == Approx(9.9922e9).epsilon(1e-15));
    CHECK(rp.active());
    CHECK(rp.tag_cpid() == 1);
    // Fb = +2 from CP 1: + 0.53·2·1 Mb/s = 1.06 Mb/s.
    CHECK(rp.on_feedback(2, 1) == Approx(9.99326e9).epsilon(1e-15));
    CHECK(rp.on_feedback(2, 9) == Approx(9.99326e9).epsilon(1e-15));  // not this tag's CP
    // A negative message from CP 7 takes the tag over.
    rp.on_feedback(-1, 7);
    CHECK(rp.tag_cpid() == 7);
    // A huge |Fb| keeps half the rate (1 - 2.6e-4·5000 < 0.5).
    const double r = rp.rate_bps();
    CHECK(rp.on_feedback(-5000, 7) == r * 0.5);
    // Never below the minimum rate (100 Mb/s).
    for (int i = 0; i < 20; ++i) rp.on_feedback(-5000, 7);
    CHECK(rp.rate_bps() == 1e8);
    CHECK(rp.on_stop(7) == 1e8);
    // Back at the line rate the regulator is removed.
    CHECK(rp.on_feedback(1e6, 7) == 1e10);
    CHECK_FALSE(rp.active());
    CHECK(rp.stats().increases == 2);
    CHECK(rp.stats().decreases == 23);
    CHECK(rp.stats().ignored == 2);
    CHECK(rp.stats().installs == 1);
    CHECK(rp.stats().releases == 1);
    CHECK(rp.stats().stops == 1);
}

TEST_CASE("bcn rp oracle §2 E: 1.1 Gb/s to 90 % of the 2.5 Gb/s fair share in 4416 messages",
          "[nic][bcn][oracle]") {
    // §2 E: G_d = 2.6e-4, |e| = 3, E[e†] = 1/2, r* = G_i·R_u/G_d = 2.5G (G_i·R_u = 650 kb/s),
    // eq. (13): n >= [log(0.1 r*) - log(r* - r(0))] / log(1 - 3·0.5·G_d) = 4416.5.
    bcn_rp_params p = bcn_rp_params::thesis_default(G10);
    p.g_i = 0.65;
    p.r_u_bps = 1e6;
    p.initial_rate_bps = 1'100'000'000;
    bcn_rp rp(p);
    const double r_star = p.g_i * p.r_u_bps / p.g_d;
    CHECK(r_star == Approx(2.5e9).epsilon(1e-12));
    // E[e†] = 1/2 as alternating messages of |Fb| = 3, a decrease first (it installs the
    // regulator; an increase first gives 4415).
    int n = 0;
    while (rp.rate_bps() < 0.9 * r_star) rp.on_feedback(n++ % 2 == 0 ? -3 : 3, 1);
    CHECK(n == 4416);
    const double bound =
        (std::log(0.1 * r_star) - std::log(r_star - 1.1e9)) / std::log(1 - 3 * 0.5 * p.g_d);
    CHECK(bound == Approx(4416.5).margin(0.05));
    // At T' = 120 us per message (erratum 1): 0.530 s.
    CHECK(n * 120e-6 == Approx(0.53).margin(0.001));
    // The rate then settles between r*(1 - 3G_d) and r*.
    for (int i = 0; i < 40'000; ++i) rp.on_feedback(i % 2 == 0 ? -3 : 3, 1);
    CHECK(rp.rate_bps() == Approx(r_star).epsilon(1e-3));
}

TEST_CASE("bcn rp validation names the field", "[nic][bcn]") {
    auto field_of = [](bcn_rp_params p) {
        auto e = p.validate();
        return e ? e->field : std::string();
    };
    const bcn_rp_params ok = bcn_rp_params::thesis_default(G10);
    CHECK(field_of(ok).empty());
    bcn_rp_params p = ok;
    p.line_rate_bps = 0;
    CHECK(field_of(p) == "line_rate_bps");
    p = ok;
    p.g_d = 1;
    CHECK(field_of(p) == "g_d");
    p = ok;
    p.g_i = 0;
    CHECK(field_of(p) == "g_i");
    p = ok;
    p.r_u_bps = 0;
    CHECK(field_of(p) == "r_u_bps");
    p = ok;
    p.min_rate_bps = 2 * G10;
    CHECK(field_of(p) == "min_rate_bps");
    p = ok;
    p.min_decrease_factor = 1;
    CHECK(field_of(p) == "min_decrease_factor");
    p = ok;
    p.initial_rate_bps = 1;
    CHECK(field_of(p) == "initial_rate_bps");
    CHECK_THROWS_WITH(bcn_rp(p), Catch::StartsWith("bcn_rp_params.initial_rate_bps: "));
}
