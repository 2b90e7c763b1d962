#include "fabricsim/nic/algo/qcn_fluid.h"

#include <algorithm>
#include <cmath>

namespace fabricsim::nic {

qcn_fluid_params qcn_fluid_params::thesis_baseline() {
    qcn_fluid_params p;
    p.c = to_packets_per_s(10e9);
    p.n = 10;
    p.r_ai = to_packets_per_s(5e6);
    return p;
}

double qcn_eta(double p_s) {
    // (1 - p)^-100 - 1 through expm1/log1p: exact enough for small p.
    return p_s / std::expm1(-100.0 * std::log1p(-p_s));
}

double qcn_zeta(double p_s) {
    return std::exp(500.0 * std::log1p(-p_s)) * qcn_eta(p_s);
}

qcn_fluid_result qcn_fluid_analysis(const qcn_fluid_params& p) {
    qcn_fluid_result r;
    r.eta = qcn_eta(p.p_s);
    r.zeta = qcn_zeta(p.p_s);
    r.rc_star = p.c / p.n;
    r.rt_star = r.rc_star + r.zeta * p.r_ai / p.p_s;
    r.q_star = p.q_eq + r.eta * r.zeta * p.n * p.r_ai / (2 * p.p_s * p.p_s * p.g_d * p.c);
    r.a1 = r.eta / 2 * r.rc_star + r.eta * r.zeta / (2 * p.p_s) * p.r_ai;
    r.a2 = r.eta / 2 * r.rc_star;
    r.a3 = p.g_d * p.w * r.rc_star;
    r.a4 = p.p_s * p.g_d * r.rc_star * r.rc_star;
    r.b = p.p_s * r.rc_star;
    r.beta = r.b + r.a1;
    r.alpha = r.b * (r.a1 - r.a2);
    r.gamma = p.n * r.a4 / r.a3;

    const double a3sq = r.a3 * r.a3;
    const double gsq = r.gamma * r.gamma;
    r.omega_star = std::sqrt(a3sq / 2 + std::sqrt(a3sq * a3sq / 4 + gsq * a3sq));
    const double ws = r.omega_star;
    r.tau_star = (std::atan(ws / r.b) - std::atan(ws / r.beta) + std::atan(ws / r.gamma)) / ws;

    r.a_hat = r.eta * p.r_ai;
    const double d = a3sq - r.a_hat * r.a_hat;
    r.omega_hat = std::sqrt(d / 2 + std::sqrt(d * d / 4 + gsq * a3sq));
    const double wh = r.omega_hat;
    r.tau_hat = (std::atan(wh / r.gamma) + std::atan(r.a_hat / wh)) / wh;
    r.q_hat = p.q_eq + r.eta * p.n * p.r_ai / (p.p_s * p.g_d * p.c);

    r.thm53_lhs = p.r_ai / p.c *
                  std::max({r.eta * r.eta / (p.p_s * p.g_d), (2 * r.eta + 4 * p.p_s) / p.g_d,
                            r.eta * p.w / p.p_s});
    r.thm53_load = p.n * p.r_ai / p.c;
    return r;
}

}  // namespace fabricsim::nic
