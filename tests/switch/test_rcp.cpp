// RCP rate law (plain C++): one update by hand, the AP/AP2 averaging points, the PD derivative
// term, the clamps, the tag rule and validation (seed-000 §1.10-§1.11).
#include <catch2/catch.hpp>
#include <stdexcept>

#include "fabricsim/switch/algo/rcp.h"

using namespace fabricsim;
using namespace fabricsim::sw;

namespace {
constexpr std::uint64_t G1 = 1'000'000'000ull;
constexpr ps_t MS = PS_PER_MS;
constexpr ps_t T = 50 * MS;

/// C 1 Gb/s, T 50 ms, d0 20 ms (gain T/d0 = 2.5), alpha 0.1, beta 1, R_0 = 100 Mb/s.
rcp_params base(rcp_variant v = rcp_variant::NONE) {
    rcp_params p;
    p.capacity_bps = G1;
    p.variant = v;
    p.initial_rate_bps = 100'000'000;
    return p;
}

/// y = 0.8 Gb/s over T (5 MB) and q = 250 kB (8q/d0 = 100 Mb/s):
/// Fb = (0.1·(1e9 − 0.8e9) − 1e8)/1e9 = −0.08.
void first_interval(rcp_rate& r) {
    r.on_arrival(5'000'000);
    r.on_interval(T, 250'000);
}
}  // namespace

TEST_CASE("rcp: one update by hand", "[rcp]") {
    rcp_rate r(base());
    CHECK(r.advertised_bps(0) == 100e6);
    CHECK(r.next_interval() == T);
    first_interval(r);
    CHECK(r.y_bps() == Approx(0.8e9).epsilon(1e-12));
    CHECK(r.fb() == Approx(-0.08).epsilon(1e-12));
    CHECK(r.q_bytes() == 250'000);
    // R = 100M·(1 + 2.5·(−0.08)) = 80 Mb/s; R_T = 100 Mb/s.
    CHECK(r.advertised_bps(T) == Approx(80e6).epsilon(1e-12));
    CHECK(r.rate_before_update_bps() == 100e6);
    // No averaging in plain RCP.
    CHECK(r.advertised_bps(T + T / 2) == Approx(80e6).epsilon(1e-12));
    CHECK(r.stats().averagings == 0);
    // Second interval: y = 0, q = 0: Fb = 0.1, R = 80M·1.25 = 100M. A close at the same time
    // changes nothing.
    r.on_interval(2 * T, 0);
    CHECK(r.fb() == Approx(0.1).epsilon(1e-12));
    CHECK(r.advertised_bps(2 * T) == Approx(100e6).epsilon(1e-12));
    CHECK(r.on_interval(2 * T, 1'000'000) == Approx(100e6).epsilon(1e-12));
    CHECK(r.stats().intervals == 2);
    CHECK(r.stats().idle_intervals == 1);
    // y over the actual length of a late close: 5 MB over 100 ms = 0.4 Gb/s.
    r.on_arrival(5'000'000);
    r.on_interval(4 * T, 0);
    CHECK(r.y_bps() == Approx(0.4e9).epsilon(1e-12));
}

TEST_CASE("rcp: AP averages exactly T/2 after the update", "[rcp]") {
    rcp_rate r(base(rcp_variant::AP));
    // Before the first update there is nothing to average.
    CHECK(r.advertised_bps(T - 1) == 100e6);
    first_interval(r);
    CHECK(r.rate_at(T + T / 2 - 1) == Approx(80e6).epsilon(1e-12));
    CHECK(r.advertised_bps(T + T / 2 - 1) == Approx(80e6).epsilon(1e-12));
    CHECK(r.rate_at(T + T / 2) == Approx(90e6).epsilon(1e-12));  // const: nothing applied
    CHECK(r.stats().averagings == 0);
    CHECK(r.advertised_bps(T + T / 2) == Approx(90e6).epsilon(1e-12));
    // Once only.
    CHECK(r.advertised_bps(2 * T - 1) == Approx(90e6).epsilon(1e-12));
    CHECK(r.stats().averagings == 1);
    // The update starts from the averaged rate: y = 0, q = 0: R = 90M·1.25, R_T = 90M.
    r.on_interval(2 * T, 0);
    CHECK(r.rate_before_update_bps() == Approx(90e6).epsilon(1e-12));
    CHECK(r.advertised_bps(2 * T) == Approx(112.5e6).epsilon(1e-12));
    CHECK(r.advertised_bps(2 * T + T / 2) == Approx(101.25e6).epsilon(1e-12));

    SECTION("a late close applies the interval's averaging first") {
        rcp_rate l(base(rcp_variant::AP));
        first_interval(l);  // 80M, R_T 100M; never read at T/2
        l.on_interval(2 * T + 7, 0);
        CHECK(l.rate_before_update_bps() == Approx(90e6).epsilon(1e-12));
        CHECK(l.advertised_bps(2 * T + 7) == Approx(112.5e6).epsilon(1e-12));
    }
    SECTION("averaging factor 1/4") {
        rcp_params p = base(rcp_variant::AP);
        p.averaging_factor = 0.25;
        rcp_rate a(p);
        first_interval(a);
        CHECK(a.advertised_bps(T + T / 2) == Approx(85e6).epsilon(1e-12));
    }
}

TEST_CASE("rcp: AP2 averages at T/3 and 2T/3", "[rcp]") {
    rcp_rate r(base(rcp_variant::AP2));
    first_interval(r);
    const ps_t third = T / 3;  // 16666666666 ps
    CHECK(r.advertised_bps(T + third - 1) == Approx(80e6).epsilon(1e-12));
    CHECK(r.advertised_bps(T + third) == Approx(90e6).epsilon(1e-12));
    CHECK(r.advertised_bps(T + 2 * T / 3 - 1) == Approx(90e6).epsilon(1e-12));
    CHECK(r.advertised_bps(T + 2 * T / 3) == Approx(95e6).epsilon(1e-12));
    CHECK(r.stats().averagings == 2);
    SECTION("both at one late read") {
        rcp_rate l(base(rcp_variant::AP2));
        first_interval(l);
        CHECK(l.rate_at(2 * T - 1) == Approx(95e6).epsilon(1e-12));
        CHECK(l.advertised_bps(2 * T - 1) == Approx(95e6).epsilon(1e-12));
        CHECK(l.stats().averagings == 2);
    }
}

TEST_CASE("rcp: PD uses half Fb plus a quarter of its change", "[rcp]") {
    rcp_rate r(base(rcp_variant::PD));
    first_interval(r);
    // First update: no previous Fb (the derivative term is 0): R = 100M·(1 + 2.5·(−0.04)).
    CHECK(r.advertised_bps(T) == Approx(90e6).epsilon(1e-12));
    CHECK(r.advertised_bps(T + T / 2) == Approx(90e6).epsilon(1e-12));  // no averaging
    // y = C, q = 0: Fb = 0, w = 0 + 0.25·(0 − (−0.08)) = 0.02: R = 90M·1.05 = 94.5M.
    r.on_arrival(6'250'000);
    r.on_interval(2 * T, 0);
    CHECK(r.fb() == Approx(0.0).margin(1e-12));
    CHECK(r.advertised_bps(2 * T) == Approx(94.5e6).epsilon(1e-12));
}

TEST_CASE("rcp: clamps to [min rate, C]", "[rcp]") {
    rcp_params p = base();
    p.initial_rate_bps = 0;  // C
    rcp_rate r(p);
    CHECK(r.advertised_bps(0) == 1e9);
    r.on_interval(T, 0);  // Fb = 0.1: 1.25 C → C
    CHECK(r.advertised_bps(T) == 1e9);
    CHECK(r.stats().clamped_max == 1);
    // q = 10 MB: 8q/d0 = 4 Gb/s, Fb = −3.9, R < 0 → the floor C/1000.
    r.on_interval(2 * T, 10'000'000);
    CHECK(r.advertised_bps(2 * T) == 1e6);
    CHECK(r.stats().clamped_min == 1);
    p.min_rate_bps = 5'000'000;
    rcp_rate m(p);
    m.on_interval(T, 10'000'000);
    CHECK(m.advertised_bps(T) == 5e6);
}

TEST_CASE("rcp: the tag rule", "[rcp]") {
    rcp_rate r(base(rcp_variant::AP));
    CHECK(r.mark(1'000'000'000, 0) == 100'000'000);
    CHECK(r.mark(50'000'000, 0) == 50'000'000);
    first_interval(r);
    CHECK(r.mark(1'000'000'000, T + T / 2) == 90'000'000);  // averaged at the read
    CHECK(r.stats().tags_seen == 3);
    CHECK(r.stats().tags_lowered == 2);
}

TEST_CASE("rcp: validation names the field", "[rcp]") {
    auto field = [](rcp_params p) { return p.validate() ? p.validate()->field : std::string(); };
    rcp_params p = base();
    CHECK(field(p).empty());
    p.alpha = -0.1;
    CHECK(field(p) == "alpha");
    p = base();
    p.beta = -1;
    CHECK(field(p) == "beta");
    p = base();
    p.d0 = 0;
    CHECK(field(p) == "d0");
    p = base();
    p.interval = 0;
    CHECK(field(p) == "interval");
    p = base();
    p.averaging_factor = 0;
    CHECK(field(p) == "averaging_factor");
    p.averaging_factor = 1.5;
    CHECK(field(p) == "averaging_factor");
    p = base();
    p.initial_rate_bps = 2 * G1;
    CHECK(field(p) == "initial_rate_bps");
    p = base();
    p.min_rate_bps = 200'000'000;  // above the initial 100 Mb/s
    CHECK(field(p) == "initial_rate_bps");
    p.min_rate_bps = 2 * G1;
    CHECK(field(p) == "min_rate_bps");
    p = base();
    p.capacity_bps = 0;
    CHECK(field(p) == "capacity_bps");
    p = base();
    p.alpha = -1;
    CHECK_THROWS_WITH(rcp_rate(p), "rcp_params.alpha: must be >= 0");
}
