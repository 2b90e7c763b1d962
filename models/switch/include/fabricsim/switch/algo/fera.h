#pragma once
/// FERA congestion point (Jiang, MS thesis 2008; seed-003 §1.3-§1.8): the advertised rate of one
/// switch output port, as plain C++ (no SystemC), and the rate-tag rule of the switches on a path.
///
/// Timing model. Measurement intervals of fixed length T start at the construction time t_0;
/// interval i is (t_{i-1}, t_i]. The caller reports every frame that arrives for the port
/// (on_arrival, bytes only: arrivals of an interval are summed, their times do not matter) and
/// closes each interval at next_interval() with the port's queue in bytes at that instant
/// (on_interval). A_i = 8·bytes / (t_i − t_{i−1}) uses the interval's actual length, so a close
/// that comes late or early is measured exactly; the next deadline is then now + T. The new
/// advertised rate takes effect at the close and holds for the whole next interval (marking
/// uses r_{i+1} in interval i+1). Rates are double bit/s; queues and thresholds are bytes (the
/// thesis counts 1500-B packets: "FERA can handle random packet sizes simply by measuring queue
/// lengths in bytes"). PAUSE generation (Q_on/Q_off hysteresis) is not here: it is
/// queue_pause_trigger; on_interval is only told whether the port had its inputs paused.
///
/// Per close (§1.8; the thesis does not fix the order, this one is chosen, see fera_cp):
///   A = 8·bytes/elapsed, Ceff = γ·C_i if q > Q_eq else C_i, ρ = A / (f(q)·Ceff)
///   raw = r_i/ρ, capped at the maximum rate (A = 0 gives ρ = 0: raw = the maximum rate)
///   r = λ·raw + (1−λ)·r_{i−1}                      (EMA, eq. 14, history r_{i−1} as printed)
///   r *= C_i/C_{i−1} if C_i < C_{i−1}             (eq. 20; never scaled up)
///   δ *= η if q < Q_eq, δ /= η if q > Q_sc; r = min(r, r_i + δ)   (limited increase, §7.2)
///   r = min(r, r_i) if paused and hold_while_paused (an extension; the thesis measures as is)
///   r = clamp(r, min rate, max rate)
/// Ignored: loop delay (§2 D), per-flow state (there is none), tag transport (the caller).
#include <cstdint>
#include <optional>

#include "fabricsim/core/param_error.h"
#include "fabricsim/core/units.h"

namespace fabricsim::sw {

/// Queue control function f(q) (§1.5, §1.7.6).
enum class fera_queue_control : std::uint8_t {
    LINEAR,      ///< f = 1 − k(q − Q_eq)/Q_eq (eq. 1)
    HYPERBOLIC,  ///< eq. 2 with a, b, c
    MULTISTAGE,  ///< piecewise linear, slope k·s on (s·Q_eq, (s+1)·Q_eq], see fera_params
};

/// Parameters of one output port. Rates in bit/s, times in ps, queue lengths in bytes.
struct fera_params {
    std::uint64_t capacity_bps = 0;        ///< C at construction (set_capacity changes it later)
    ps_t interval = 1 * PS_PER_MS;         ///< T
    double initial_flows = 20;             ///< N_0: r_0 = C/N_0
    std::uint64_t q_eq_bytes = 16 * 1500;  ///< Q_eq
    std::uint64_t q_sc_bytes = 80 * 1500;  ///< Q_sc (only limited increase uses it)
    fera_queue_control control = fera_queue_control::HYPERBOLIC;
    double k = 0.002;  ///< linear slope; the first-stage slope of MULTISTAGE
    double a = 1.1;    ///< hyperbolic, q > Q_eq
    double b = 1.002;  ///< hyperbolic, q <= Q_eq
    /// Floor of f for every form. The thesis gives c for the hyperbolic branch above Q_eq only;
    /// the linear forms use it too, so that f > 0 (linear f reaches 0 at Q_eq(1 + 1/k)).
    double c = 0.1;
    /// MULTISTAGE: number of stages n (Table 7.2 "n = 2/3"); stage s <= n has slope k·s on
    /// (s·Q_eq, (s+1)·Q_eq], the last one extends to infinity, [0, Q_eq] has slope k.
    std::uint32_t stages = 1;
    /// MULTISTAGE: f continuous across stage boundaries (slope changes); false: the jump form
    /// f = 1 − k_s(q − Q_eq)/Q_eq of the stage q falls in. The thesis says neither (erratum 8).
    bool multistage_continuous = true;
    double lambda = 1.0;  ///< EMA weight λ in (0, 1]; 1 = no EMA (the thesis gives no value)
    /// EMA history term: false r_{i−1} as printed (eq. 14, erratum 9), true r_i.
    bool ema_uses_current_rate = false;
    double gamma = 1.0;                  ///< target utilisation γ above Q_eq (§7.4: 0.99)
    std::uint64_t delta0_bps = 0;        ///< limited increase δ_0; 0 = off (no value given)
    double eta = 2.0;                    ///< δ growth factor η > 1 (no value given)
    std::uint64_t delta_min_bps = 1000;  ///< δ is kept in [delta_min, C] (no floor given)
    std::uint64_t min_rate_bps = 0;      ///< floor of the advertised rate; 0 = none
    std::uint64_t max_rate_bps = 0;      ///< cap of the advertised rate; 0 = the current capacity
    bool hold_while_paused = false;      ///< no increase in an interval with paused inputs
    /// Refuse (validate() fails) instead of warning when stability() reports α·k/Q_eq >= 1.
    bool strict_stability = false;

    /// §8.1 default configuration: hyperbolic f (a 1.1, b 1.002, c 0.1), Q_eq 16 and Q_sc 80
    /// packets of `packet_bytes`, T 1 ms, γ 0.99 (§7.4), no EMA, no limited increase; N_0 20
    /// (simple topology) or 200 (large).
    static fera_params thesis_default(std::uint64_t capacity_bps, double initial_flows = 20,
                                      std::uint32_t packet_bytes = 1500);
    /// §5/§6.1 analysis set: linear f with slope k, γ 1, otherwise as thesis_default.
    static fera_params analysis(std::uint64_t capacity_bps, double k = 0.002,
                                double initial_flows = 20, std::uint32_t packet_bytes = 1500);

    using error = param_error;
    /// The first field out of range, or nothing. With strict_stability, also stability().
    std::optional<error> validate() const;
    /// Prop. 1 (seed §2 A): α·k/Q_eq < 1 with α·Q_eq in bytes (α = C·T/8 bytes per interval),
    /// k the steepest slope of f near and above Q_eq (linear k; multistage k·n; hyperbolic the
    /// tangent slopes (a−1)/a and (b−1)/b). It is a sufficient condition for monotone
    /// convergence, not a necessary one, so by default a warning: the field and the value.
    std::optional<error> stability() const;
    /// The largest α·k_eff/Q_eq of stability().
    double stability_factor() const;
};

/// Congestion point of one output port. No allocation after construction.
///
/// Choices where the thesis is silent (each flagged in the parameter or the header note):
/// order of the §1.8 steps as listed above; f of the queue at the close; γ applies for q > Q_eq
/// strictly; δ is updated before it caps the same close (§1.8's order); A = 0 gives the maximum
/// rate; the maximum rate defaults to C (a tag is never raised, and no flow can use more).
class fera_cp
{
public:
    /// Throws std::invalid_argument ("fera_params.<field>: <reason>") if p does not validate.
    explicit fera_cp(const fera_params& p, ps_t start = 0);

    /// A frame of `bytes` arrived for the port (dropped ones included: the offered load).
    void on_arrival(std::uint64_t bytes) { m_arrived_bytes += bytes; }
    /// Closes the interval at `now` (>= the previous close) with the port's queue `queue_bytes`;
    /// `paused`: the port held its inputs paused at some time in the interval (the seed runs
    /// the algorithm unchanged then, §1.9: ρ ≈ 1.4, an exponential decrease). Returns the new
    /// advertised rate. A close at the previous close's time changes nothing.
    double on_interval(ps_t now, std::uint64_t queue_bytes, bool paused = false);
    /// C_i from now on (a LAG member lost, §7.3); used at the next close.
    void set_capacity(std::uint64_t capacity_bps) {
        m_capacity = static_cast<double>(capacity_bps);
    }

    /// The rate tag rule: a forward tag leaves the port with min(tag, advertised), whole bit/s.
    std::uint64_t mark(std::uint64_t tag_bps);

    ps_t next_interval() const { return m_last_close + m_p.interval; }
    double advertised_bps() const { return m_rate; }            ///< r_{i+1}, in force now
    double previous_bps() const { return m_prev_rate; }         ///< r_i
    double rho() const { return m_rho; }                        ///< ρ of the last close
    double arrival_rate_bps() const { return m_arrival_rate; }  ///< A of the last close
    double f_last() const { return m_f; }                       ///< f(q) of the last close
    double delta_bps() const { return m_delta; }                ///< δ (limited increase)
    double capacity_bps() const { return m_capacity; }
    /// f(q) for a queue of `queue_bytes` (with the floor c).
    double queue_control(double queue_bytes) const;
    const fera_params& params() const { return m_p; }

    struct counters {
        std::uint64_t intervals = 0;
        std::uint64_t paused_intervals = 0;
        std::uint64_t idle_intervals = 0;     ///< A = 0
        std::uint64_t capacity_scalings = 0;  ///< C_i < C_{i−1}
        std::uint64_t increases_limited = 0;  ///< δ capped the rate
        std::uint64_t held_while_paused = 0;  ///< hold_while_paused capped the rate
        std::uint64_t clamped_max = 0;
        std::uint64_t clamped_min = 0;
        std::uint64_t tags_seen = 0;
        std::uint64_t tags_lowered = 0;
    };
    const counters& stats() const { return m_stats; }

private:
    fera_params m_p;
    double m_capacity;
    double m_prev_capacity;
    double m_rate;
    double m_prev_rate;
    double m_delta;
    double m_rho = 1.0;
    double m_arrival_rate = 0.0;
    double m_f = 1.0;
    std::uint64_t m_arrived_bytes = 0;
    ps_t m_last_close;
    counters m_stats;
};

/// The tag rule of every FERA switch on a path (§1.2, §1.4): tag = min(tag, advertised), whole
/// bit/s, rounded down so that a tag never exceeds an advertised rate. The source initialises
/// the tag to its link rate. Where the tag lives: a frame field (the wiring adds it to Frame,
/// ARCHITECTURE §3 "FERA rate tags"): a forward tag (rate, set by the source, lowered by each
/// switch at forwarding time on the output port it leaves by) and a returning tag (the
/// destination copies the rate into a frame of another protocol type towards the source; the
/// switches leave it alone).
inline std::uint64_t fera_tag_min(std::uint64_t tag_bps, double advertised_bps) {
    if (!(advertised_bps < static_cast<double>(tag_bps))) return tag_bps;
    return advertised_bps <= 0 ? 0 : static_cast<std::uint64_t>(advertised_bps);
}

}  // namespace fabricsim::sw
