#pragma once
/// QCN fluid model of Alizadeh's thesis (seed-000 §2.5, §5.3-5.4, App. D-F) as plain functions:
/// the fixed point, the linearisation constants and the stability margins of QCN (Thm 5.1),
/// QCN-AIMD (Thm 5.2) and the comparison condition of Thm 5.3. For oracle tests and sweeps.
///
/// Timing model: continuous time in seconds (double); N sources through one bottleneck of
/// capacity C with round-trip delay tau. Units as the spec's [D] note: rates in 1500-B
/// packets/s (to_packets_per_s converts), queues in packets, p_s per packet. With these the
/// thesis' baseline gives tau* = 249.07 us (its 249 us). Thm 5.2 with the same constants gives
/// tau_hat = 216.3 us, not the thesis' 189 us: that number is not reproducible from its stated
/// formulas and baseline (some extra assumption is unstated), so tests check 216.3 us.
/// omega_hat is read with the brackets of App. E (the extracted text is garbled):
/// sqrt((a3^2 - a_hat^2)/2 + sqrt((a3^2 - a_hat^2)^2/4 + gamma^2 a3^2)).
namespace fabricsim::nic {

/// Rate in bit/s as packets of `packet_bytes` per second.
inline double to_packets_per_s(double rate_bps, double packet_bytes = 1500) {
    return rate_bps / (8.0 * packet_bytes);
}

struct qcn_fluid_params {
    double c = 0;     ///< bottleneck capacity C, packets/s
    double n = 0;     ///< number of sources N
    double r_ai = 0;  ///< R_AI, packets/s
    double g_d = 1.0 / 128;
    double w = 2;
    double p_s = 0.01;  ///< CP sampling probability per packet
    double q_eq = 22;   ///< packets

    /// Thesis baseline (§5.4.2): 10 Gb/s, N 10, R_AI 5 Mb/s, Gd 1/128, w 2, p_s 1 %, Qeq 22.
    static qcn_fluid_params thesis_baseline();
};

/// eta(p) = p / ((1 - p)^-100 - 1): increase events per packet without feedback (x p).
double qcn_eta(double p_s);
/// zeta(p) = (1 - p)^500 eta(p): the same, after 500 packets (5 FR cycles) without feedback.
double qcn_zeta(double p_s);

struct qcn_fluid_result {
    double eta = 0;
    double zeta = 0;
    double rc_star = 0;  ///< R_C* = C/N
    double rt_star = 0;  ///< R_T* = C/N + zeta R_AI / p_s
    double q_star = 0;   ///< Q* = Qeq + eta zeta N R_AI / (2 p_s^2 Gd C)
    double a1 = 0, a2 = 0, a3 = 0, a4 = 0, b = 0;
    double beta = 0;   ///< b + a1
    double alpha = 0;  ///< b (a1 - a2)
    double gamma = 0;  ///< N a4 / a3 = C p_s / w
    double omega_star = 0;
    double tau_star = 0;  ///< Thm 5.1 sufficient delay margin, s
    double a_hat = 0;     ///< eta R_AI
    double omega_hat = 0;
    double tau_hat = 0;     ///< Thm 5.2 (QCN-AIMD) delay margin, s
    double q_hat = 0;       ///< AIMD fixed point Qeq + eta N R_AI / (p_s Gd C)
    double thm53_lhs = 0;   ///< (R_AI/C) max(eta^2/(p_s Gd), (2 eta + 4 p_s)/Gd, eta w / p_s)
    double thm53_load = 0;  ///< N R_AI / C
    /// Thm 5.3: tau* > tau_hat if thm53_lhs < 0.1 and thm53_load < 0.2.
    bool thm53_holds() const { return thm53_lhs < 0.1 && thm53_load < 0.2; }
};

/// The fixed point, linearisation and margins for `p` (all of C, N, p_s > 0).
qcn_fluid_result qcn_fluid_analysis(const qcn_fluid_params& p);

}  // namespace fabricsim::nic
