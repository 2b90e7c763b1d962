#pragma once
/// ECN/RED-family marking algorithms of the egress port (plain C++, no SystemC).
/// Models: chip-style RED/WRED probability and EWMA, DCTCP step marking (min_th == max_th, strict
/// >, instantaneous queue incl. the arriving frame: weight 1), per-queue minimum thresholds
/// (seed-001 §1.4, Eq. 2), the MQ-ECN threshold scale (seed-001 §1.8, Eq. 5/6, O11) and the HULL
/// phantom queue (seed-000 §1.5). Deterministic: probabilities are returned, the caller draws.
/// Ignored: Floyd RED count-based spreading, idle-time EWMA decay and "gentle" mode; drop vs mark
/// (the caller checks ECT); dequeue marking; the qdisc's 10-slot T_round reset.
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <vector>

#include "fabricsim/core/units.h"

namespace fabricsim::sw {

/// RED / WRED as in switch chips (linear probability, no count-based spreading). Thresholds are
/// in the caller's unit; DCTCP is the step min_th == max_th with weight 1.
struct red_params {
    double min_th = 0;    ///< in the caller's unit (bytes or packets)
    double max_th = 0;    ///< == min_th gives a step (DCTCP): mark iff avg > max_th
    double max_p = 1.0;   ///< probability at max_th (ignored for a step)
    double weight = 1.0;  ///< EWMA weight; 1 = instantaneous queue
};

/// Throws std::invalid_argument unless min_th >= 0, max_th >= min_th, max_p in (0,1] and
/// weight in (0,1] (max_p is checked for a step too, so a config is valid in both modes).
void validate(const red_params& p);

/// Marking probability for average `avg` with thresholds scaled by `scale` (MQ-ECN / per-queue
/// minimum thresholds scale both min_th and max_th): 0 if avg <= min; for min < avg <= max
/// linear from 0 to max_p; 1 above max. A step (min == max) gives 0 or 1 (avg > th -> 1).
/// Inline: the egress port decides per frame.
inline double red_probability(const red_params& p, double avg, double scale = 1.0) {
    const double lo = p.min_th * scale;
    const double hi = p.max_th * scale;
    if (avg <= lo) return 0.0;
    if (avg > hi) return 1.0;                 // also the whole step case (lo == hi)
    return p.max_p * (avg - lo) / (hi - lo);  // lo < avg <= hi, so hi > lo
}

/// EWMA of an occupancy for RED: avg <- (1 - w)·avg + w·occupancy, starting at 0. Updated on
/// every enqueue by the caller; no decay while the queue is idle (chips do not do it).
class red_average
{
public:
    /// Throws std::invalid_argument unless weight is in (0,1].
    explicit red_average(double weight = 1.0);
    /// Folds in the current occupancy and returns the new average (weight 1 returns `occupancy`).
    double update(double occupancy) {
        // Weight 1 copies exactly instead of relying on 0·avg + occupancy rounding.
        m_avg = m_weight == 1.0 ? occupancy : (1.0 - m_weight) * m_avg + m_weight * occupancy;
        return m_avg;
    }
    double value() const { return m_avg; }
    double weight() const { return m_weight; }

private:
    double m_weight;
    double m_avg = 0;
};

/// MQ-ECN per-port state (NSDI'16 §3.3, Eq. 5/6): the round-time estimate T_round and the
/// per-queue threshold scale min(quantum_q·8/(T_round·C), 1); fed by the DWRR/WRR scheduler
/// (basic_queue_scheduler<mq_ecn_estimator>, which keeps each queue's queue_slot). Decisions:
/// - T_round starts at 0, meaning scale 1 (standard threshold), as the authors' code.
/// - Per-queue T_start sampling (software-prototype variant); the scheduler decides when a queue
///   "finishes a round" and what `at` is (ns-2 adds the last frame's tx time). Empty queues are
///   not sampled: the scheduler simply does not report them. A sample with at < T_start is 0.
/// - Idle decay T_round *= β^floor(idle/T_idle) is applied lazily in port_busy(), only for a
///   port_idle() that came first (ns-2 behaviour); port_busy() alone never decays.
/// - Strict-priority queues are the caller's business (it uses scale 1 for them); a quantum of
///   0 is accepted for such unused entries.
/// Fixed state for up to MAX_QUEUES queues and no heap: the egress port holds it in place.
class mq_ecn_estimator final
{
public:
    static constexpr unsigned MAX_QUEUES = 8;
    /// A queue's sampling state, kept by the caller (the scheduler keeps it with the queue's
    /// deficit and links).
    struct queue_slot {
        ps_t t_start = 0;  ///< start of the queue's current round
    };

    /// `quantum_bytes[q]` per queue, link rate C, EWMA β, T_idle. Throws std::invalid_argument
    /// unless there are 1 to MAX_QUEUES queues, rate > 0, β in (0,1) and t_idle > 0.
    mq_ecn_estimator(const std::vector<std::uint32_t>& quantum_bytes, std::uint64_t rate_bps,
                     double beta, ps_t t_idle);
    /// Queue q joined the round robin at `now`: T_start = max(now, T_start). T_start may lie
    /// ahead (the caller's `at` can include the last frame's tx time).
    void queue_activated(unsigned /*q*/, ps_t now, queue_slot& s) {
        s.t_start = std::max(now, s.t_start);
    }
    /// Queue q finished a round at `at`: sample = at - T_start (0 if negative); T_round EWMA;
    /// T_start = at.
    void queue_finished_round(unsigned /*q*/, ps_t at, queue_slot& s) {
        // Signed conversion: the same value (a sample is far below 2^63 ps), fewer instructions.
        const double sample =
            at > s.t_start ? static_cast<double>(static_cast<std::int64_t>(at - s.t_start)) : 0.0;
        m_t_round_ps = m_beta * m_t_round_ps + (1.0 - m_beta) * sample;
        s.t_start = at;
        ++m_samples;
    }
    /// The port's last frame left (port empty) at `now`.
    void port_idle(ps_t now) { m_idle_since = now; }
    /// A frame arrives at an empty port at `now`: lazy idle decay T_round *= β^floor((now -
    /// idle_since)/T_idle).
    void port_busy(ps_t now) {
        if (m_idle_since == NOT_IDLE) return;
        decay(now);
    }
    /// Threshold scale for queue q: 1 if T_round == 0, else min(quantum_q·8/(T_round·C), 1)
    /// (T_round in seconds).
    double scale(unsigned q) const { return scale_for(m_quantum_time_ps[q]); }
    /// scale() for a queue whose quantum takes `quantum_time_ps` at line rate (quantum_time_ps(q));
    /// +infinity gives 1 (a strict queue). Lets the caller keep that constant with its own
    /// per-queue state, so a marking decision reads one line of this object.
    double scale_for(double quantum_time_ps) const {
        if (m_t_round_ps == 0) return 1.0;
        return std::min(quantum_time_ps / m_t_round_ps, 1.0);
    }
    /// The standard threshold K (in the caller's unit: bytes or frames) and the shortest
    /// quantum_time_ps() among the queues that mark, for threshold_for() and min_threshold().
    void set_threshold(double k, double min_quantum_time_ps) {
        m_k = k;
        m_min_quantum_time_ps = min_quantum_time_ps;
    }
    /// K x scale_for(quantum_time_ps): the MQ-ECN threshold of such a queue now.
    double threshold_for(double quantum_time_ps) const { return m_k * scale_for(quantum_time_ps); }
    /// The smallest threshold_for() over the queues of set_threshold() (scale_for() falls as
    /// the quantum shortens), so an occupancy at or below it passes in all of them.
    double min_threshold() const { return threshold_for(m_min_quantum_time_ps); }
    /// Time to send queue q's quantum at line rate, in ps (quantum x 8 / C).
    double quantum_time_ps(unsigned q) const { return m_quantum_time_ps[q]; }
    /// When the last bit of a frame of `wire_bytes` whose first bit leaves at `start` is sent,
    /// at the port rate (the `at` of a round sample taken when a queue empties, as in ns-2).
    ps_t tx_end(ps_t start, std::uint32_t wire_bytes) const {
        return start + (m_ps_per_byte ? wire_bytes * m_ps_per_byte : m_serialize(wire_bytes));
    }
    double t_round_ps() const { return m_t_round_ps; }
    std::uint64_t samples() const { return m_samples; }
    unsigned queues() const { return m_n; }
    ps_t t_idle() const { return m_t_idle; }
    bool idle() const { return m_idle_since != NOT_IDLE; }

private:
    static constexpr ps_t NOT_IDLE = ~ps_t(0);
    void decay(ps_t now);

    // Laid out by access: one line that every marking decision, round sample and idle/busy
    // change uses; the rest after it.
    alignas(64) double m_t_round_ps = 0;
    double m_beta;
    std::uint64_t m_samples = 0;
    ps_t m_ps_per_byte;            ///< 0 if the rate does not divide 8e12 (then m_serialize)
    ps_t m_idle_since = NOT_IDLE;  ///< when the port went idle, NOT_IDLE while busy
    ps_t m_t_idle;
    double m_min_quantum_time_ps = std::numeric_limits<double>::infinity();
    double m_k = 0;
    serializer m_serialize;
    std::array<double, MAX_QUEUES> m_quantum_time_ps{};  ///< quantum x 8 / C, in ps
    unsigned m_n;
    /// std::pow(β, k) for the usual short idle periods (the same values, without ~120
    /// instructions of pow per idle-to-busy transition).
    std::array<double, 64> m_beta_pow{};
};

/// HULL phantom queue (§4.1.1, §4.4.1): a counter in series with the egress port, drained at
/// γ·C in discrete steps of a hardware timer; it stores no frames and only marks. Decisions:
/// drain per tick = γ·C·interval/8 bytes (1 Gbps, γ 0.95, 800 ns -> 95 B); the counter floors at
/// 0; a frame is marked if the counter it meets is above the threshold (strict >), and then
/// adds its bytes (adding first would mark every 1500 B frame at HULL's 1 KB threshold).
class phantom_queue
{
public:
    /// Drains gamma·rate_bps, in steps every `interval` (ticks at whole multiples of interval from
    /// t = 0, as a hardware timer), marks above threshold_bytes. Throws std::invalid_argument
    /// unless rate > 0, γ in (0,1] and interval > 0.
    phantom_queue(std::uint64_t rate_bps, double gamma, ps_t interval,
                  std::uint64_t threshold_bytes);
    /// A frame of `bytes` passes at `now` (non-decreasing times): applies the drain steps of
    /// every tick boundary in (last, now] (floor 0); returns true (mark) if that counter is above
    /// the threshold; then adds the frame.
    bool on_frame(std::uint32_t bytes, ps_t now);
    /// Counter at `now` after pending drain steps (const: does not change state).
    double counter_bytes(ps_t now) const;
    std::uint64_t marked() const { return m_marked; }
    std::uint64_t frames() const { return m_frames; }
    double drain_per_tick_bytes() const { return m_drain_per_tick; }

private:
    /// Counter after draining the ticks in (m_tick·interval, now].
    double drained(ps_t now) const;

    ps_t m_interval;
    double m_drain_per_tick;
    double m_threshold;
    double m_counter = 0;
    std::uint64_t m_tick = 0;  ///< index of the last tick applied (tick 0 at t = 0: counter is 0)
    std::uint64_t m_marked = 0;
    std::uint64_t m_frames = 0;
};

/// Per-queue "minimum" thresholds (MQ-ECN paper Eq. 2): scale_q = W_q / sum of W over the
/// non-strict queues (W = quantum); strict queues get 1 (they keep the standard threshold).
/// Throws std::invalid_argument if the sizes differ or the non-strict quanta sum to 0.
std::vector<double> min_threshold_scales(const std::vector<std::uint32_t>& quantum_bytes,
                                         const std::vector<bool>& strict);

}  // namespace fabricsim::sw
