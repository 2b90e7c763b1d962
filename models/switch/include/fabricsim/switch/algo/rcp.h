#pragma once
/// RCP rate law of one router output port (Alizadeh thesis §5.5.3, seed-000 §1.10-§1.11), with
/// the averaging-principle variants AP-RCP, AP2-RCP and PD-RCP, as plain C++ (no SystemC). It
/// is the second rate law of the FERA forward-tag path: the port lowers each forward tag to
/// min(tag, R), the destination reflects it, the source sends at the reflected rate.
///
/// Timing model. Updates every T, closed by the caller (lazily, at the first arrival at or after
/// next_interval(), like fera_cp): on_interval(now, q) measures y = 8·bytes/elapsed over the
/// interval's actual length and applies
///   R ← R_cur·(1 + (T/d0)·Fb),            Fb = [α(C − y) − β·8q/d0] / C          (5.37, 5.38)
///   PD: R ← R_cur·(1 + (T/d0)·(½Fb + ¼(Fb − Fb_prev)))                        (Fb_prev = Fb first)
/// with the nominal T in the gain, q in bits over d0 a rate, then R clamped to [min rate, C].
/// R_cur is the rate in force just before the update (after any averaging of the interval);
/// R_T ← R_cur. AP averages R ← (1 − a)·R + a·R_T exactly T/2 after each update, AP2 at T/3 and
/// 2T/3 (a = averaging_factor, ½ by default). No events: the averaging points are evaluated
/// lazily — every read at `now` (mark, rate_at, the next close) first applies the points at or
/// before `now` that are due since the last update, each once. Points of an interval that ended
/// without a close (no arrivals for more than T) are applied at the next read, before the close.
/// d0 is fixed (the thesis' AP demo disables the RTT estimate). Rates are double bit/s, times ps.
/// Ignored: the RTT estimator, per-flow state (there is none), the tag transport (the caller).
#include <cstdint>
#include <optional>

#include "fabricsim/core/param_error.h"
#include "fabricsim/core/units.h"

namespace fabricsim::sw {

/// Which form of the update (seed-000 §1.10-§1.11).
enum class rcp_variant : std::uint8_t {
    NONE,  ///< plain RCP (5.37)
    AP,    ///< one averaging T/2 after each update
    AP2,   ///< two averagings, at T/3 and 2T/3
    PD,    ///< the PD form of Thm 5.4: ½Fb + ¼ΔFb, no averaging
};

/// Parameters of one output port. Rates in bit/s, times in ps.
struct rcp_params {
    std::uint64_t capacity_bps = 0;  ///< C
    double alpha = 0.1;              ///< gain of the spare capacity C − y
    double beta = 1.0;               ///< gain of the queue drain q/d0
    ps_t interval = 50 * PS_PER_MS;  ///< T
    ps_t d0 = 20 * PS_PER_MS;        ///< the (fixed) average RTT d0
    rcp_variant variant = rcp_variant::NONE;
    double averaging_factor = 0.5;       ///< a in R ← (1 − a)·R + a·R_T, in (0, 1]
    std::uint64_t initial_rate_bps = 0;  ///< R at the start; 0 = C
    /// Floor of R (R must stay > 0: the law is multiplicative); 0 = C/1000.
    std::uint64_t min_rate_bps = 0;

    using error = param_error;
    /// The first field out of range, or nothing.
    std::optional<error> validate() const;
    double min_rate() const;
    double initial_rate() const;
};

/// RCP rate of one port. No allocation after construction.
class rcp_rate
{
public:
    /// Throws std::invalid_argument ("rcp_params.<field>: <reason>") if p does not validate.
    explicit rcp_rate(const rcp_params& p, ps_t start = 0);

    /// A frame of `bytes` arrived for the port in the current interval.
    void on_arrival(std::uint64_t bytes) { m_arrived_bytes += bytes; }
    /// Closes the interval at `now` (>= the previous close) with the port's queue `queue_bytes`:
    /// the due averaging points first, then the update. Returns the new rate. A close at the
    /// previous close's time changes nothing.
    double on_interval(ps_t now, std::uint64_t queue_bytes);
    /// The rate in force at `now` (>= the last close), with the averaging points due applied.
    double advertised_bps(ps_t now);
    /// The same without applying them (for samplers and reports).
    double rate_at(ps_t now) const;
    /// The tag rule at `now`: min(tag, R), whole bit/s.
    std::uint64_t mark(std::uint64_t tag_bps, ps_t now);

    ps_t next_interval() const { return m_last_close + m_p.interval; }
    ps_t last_update() const { return m_last_close; }
    double rate_before_update_bps() const { return m_rate_t; }  ///< R_T
    double fb() const { return m_fb; }                          ///< Fb of the last close
    double y_bps() const { return m_y; }                        ///< y of the last close
    std::uint64_t q_bytes() const { return m_q; }               ///< q of the last close
    double capacity_bps() const { return m_capacity; }
    const rcp_params& params() const { return m_p; }

    struct counters {
        std::uint64_t intervals = 0;
        std::uint64_t idle_intervals = 0;  ///< y = 0
        std::uint64_t averagings = 0;
        std::uint64_t clamped_max = 0;
        std::uint64_t clamped_min = 0;
        std::uint64_t tags_seen = 0;
        std::uint64_t tags_lowered = 0;
    };
    const counters& stats() const { return m_stats; }

private:
    /// Averaging points (fractions of T) of the variant; count = 0, 1 or 2.
    unsigned averaging_points() const;
    /// The number of averaging points due at `now` since the last update.
    unsigned due_points(ps_t now) const;
    double average(double r) const;
    void settle(ps_t now);

    rcp_params m_p;
    double m_capacity;
    double m_min;
    double m_rate;
    double m_rate_t;
    double m_fb = 0.0;
    double m_y = 0.0;
    std::uint64_t m_q = 0;
    bool m_first = true;
    unsigned m_applied = 0;  ///< averaging points applied since the last update
    std::uint64_t m_arrived_bytes = 0;
    ps_t m_last_close;
    counters m_stats;
};

}  // namespace fabricsim::sw
