// QCN fluid model (seed-000 §2.5): the spec's [D] numbers for the thesis baseline.
#include <catch2/catch.hpp>

#include "fabricsim/nic/algo/qcn_fluid.h"

using namespace fabricsim::nic;

TEST_CASE("qcn fluid: baseline constants, fixed point and margins", "[nic][qcn]") {
    const qcn_fluid_params p = qcn_fluid_params::thesis_baseline();
    CHECK(p.c == Approx(2'500'000.0 / 3).epsilon(1e-12));
    CHECK(p.r_ai == Approx(416.6667).epsilon(1e-6));
    const qcn_fluid_result r = qcn_fluid_analysis(p);
    const double rel = 1e-4;
    CHECK(r.eta == Approx(0.0057737).epsilon(rel));
    CHECK(r.zeta == Approx(3.7936e-5).epsilon(rel));
    CHECK(r.a1 == Approx(240.57).epsilon(rel));
    CHECK(r.a2 == Approx(240.57).epsilon(rel));
    CHECK(r.a3 == Approx(1302.08).epsilon(rel));
    CHECK(r.a4 == Approx(542534.7).epsilon(rel));
    CHECK(r.b == Approx(833.33).epsilon(rel));
    CHECK(r.gamma == Approx(4166.67).epsilon(rel));
    CHECK(r.beta == Approx(1073.91).epsilon(rel));
    CHECK(r.alpha == Approx(3.8026).epsilon(rel));
    CHECK(r.a_hat == Approx(2.4057).epsilon(rel));
    CHECK(r.tau_star * 1e6 == Approx(249.07).epsilon(rel));
    CHECK(r.tau_hat * 1e6 == Approx(216.3).epsilon(1e-3));  // the thesis' 189 us: see header
    CHECK(r.rc_star == Approx(250'000.0 / 3).epsilon(1e-12));
    CHECK(r.rt_star - r.rc_star == Approx(1.58).epsilon(1e-2));
    CHECK(r.q_star - p.q_eq == Approx(7e-4).epsilon(1e-2));
    CHECK(r.q_hat - p.q_eq == Approx(0.37).epsilon(1e-2));
    CHECK(r.thm53_lhs == Approx(0.0033).epsilon(1e-2));
    CHECK(r.thm53_load == Approx(0.005).epsilon(1e-9));
    CHECK(r.thm53_holds());
    CHECK(r.tau_star > r.tau_hat);
}

TEST_CASE("qcn fluid: Thm 5.3's load condition is N < 400 at the baseline", "[nic][qcn]") {
    qcn_fluid_params p = qcn_fluid_params::thesis_baseline();
    p.n = 399;
    CHECK(qcn_fluid_analysis(p).thm53_holds());
    p.n = 400;
    CHECK_FALSE(qcn_fluid_analysis(p).thm53_holds());
}
