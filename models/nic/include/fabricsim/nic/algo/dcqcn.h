#pragma once
/// DCQCN (Zhu et al., SIGCOMM 2015) for RoCEv2 as plain C++ (no SystemC): the reaction point
/// (dcqcn_rp, one per rate limiter / QP at the sender) and the notification point's CNP pacing
/// (cnp_pacer, one per flow at the receiver). Follows facts-l2 §4.2-4.5; docs/models/roce.md.
///
/// Timing model. Every input carries its exact time in ps and calls come in non-decreasing
/// time. Each call first runs every timer due at or before its time, in time order (at equal
/// times: alpha update, then increase timer, then rate-decrease check; the input comes last, so
/// a CNP at the same ps as a timer belongs to the next period), then handles the input. Timers
/// are exact deadlines, not polled; next_timer() says when the next one is due. Nothing is
/// modelled on the wire here: the caller passes a CNP at its arrival and the bytes of each
/// frame when it is sent. Rates are double bit/s, not rounded to whole bit/s (halving and
/// alpha cuts make fractions); the caller's rate limiter rounds when it turns a rate into time.
///
/// Variants (dcqcn_params):
///  - alpha: paper (alpha <- (1-g)alpha + g at each CNP, the K timer restarts at each CNP and
///    decays alpha by (1-g) when it fires) or Mellanox (alpha_periodic: a free-running K timer
///    from the first CNP does (1-g)alpha + g if a CNP arrived in the period, (1-g)alpha if not).
///  - cut: at every CNP (decrease_period 0, paper) or, Mellanox, at most once per
///    decrease_period on a grid from the first CNP, if a CNP arrived since the last check (the
///    HPCC model of rate_reduce_monitor_period; the first cut is one period after the first CNP).
///    RC <- max(RC(1 - alpha/2), RC * min_decrease_factor, min_rate); RT per dcqcn_clamp.
///  - increase stages: dcqcn_stage_rule. T and BC count timer and byte-counter events since the
///    last cut, this event included. With the byte counter off BC stays 0.
///  - the increase timer and the byte counter restart at each cut; they stop while RC = RT = line
///    rate (nothing can grow; the next cut restarts them).
/// Ignored: NS3RDMA's halved timer / byte counter in HAI and its TR/8 rule, randomised reloads,
/// the firmware's 10-bit alpha rounding and rpg_gd = 10 (cut by alpha instead of alpha/2),
/// per-hop rate limiters.
#include <cstdint>
#include <optional>
#include <string>

#include "fabricsim/core/param_error.h"
#include "fabricsim/core/units.h"

namespace fabricsim::nic {

/// Which cuts set the target rate RT to the current rate RC first.
enum class dcqcn_clamp : std::uint8_t {
    ALWAYS,               ///< every cut (paper, HTDCQCN)
    NEVER,                ///< RT kept: RC recovers towards the old target
    AFTER_TIME_INCREASE,  ///< only if a timer event happened since the last cut (Mellanox, HPCC)
};

/// FR / AI / HAI boundaries of an increase event (F = fast_recovery_steps).
enum class dcqcn_stage_rule : std::uint8_t {
    PAPER,     ///< HTDCQCN: FR if max(T,BC) <= F; HAI if min(T,BC) > F, i = min - F; else AI
    NS3RDMA,   ///< QCN-style: FR if max(T,BC) < F; HAI if min(T,BC) >= F, i = min - F + 1
    MELLANOX,  ///< HPCC mlx: s = events since the cut before this one; FR s < F, AI s = F,
               ///< HAI s > F with i = s - F
};

/// Parameters of one reaction point. Rates in bit/s, times in ps, sizes in bytes.
struct dcqcn_params {
    std::uint64_t line_rate_bps = 0;        ///< RC and RT never exceed it; the rate before any CNP
    double g = 1.0 / 256;                   ///< alpha gain, (0, 1]
    ps_t alpha_period = 55 * PS_PER_US;     ///< K
    bool alpha_periodic = false;            ///< Mellanox alpha timer (see the header note)
    double initial_alpha = 1.0;             ///< alpha at the first CNP, [0, 1]
    ps_t increase_period = 55 * PS_PER_US;  ///< T (rate-increase timer)
    std::uint64_t byte_counter = 10'000'000;   ///< B; 0 = no byte counter
    std::uint32_t fast_recovery_steps = 5;     ///< F
    std::uint64_t ai_rate_bps = 40'000'000;    ///< R_AI
    std::uint64_t hai_rate_bps = 200'000'000;  ///< R_HAI
    std::uint64_t min_rate_bps = 100'000'000;  ///< floor of every cut
    double min_decrease_factor = 0.5;          ///< a cut keeps at least this share of RC, [0, 1]
    dcqcn_clamp clamp = dcqcn_clamp::ALWAYS;
    std::uint64_t first_cnp_rate_bps = 0;  ///< RC = RT = this at the first CNP; 0 = keep RC
    ps_t decrease_period = 0;              ///< 0: cut on every CNP; > 0: Mellanox monitor
    dcqcn_stage_rule stage_rule = dcqcn_stage_rule::PAPER;
    bool hai_multiplied = true;  ///< HAI adds i x R_HAI (paper); false: R_HAI (Mellanox)

    /// Paper set (facts-l2 §4.3 "paper value", as HTDCQCN). R_HAI is unverified for the paper:
    /// NS3RDMA's 200 Mb/s; min rate NS3RDMA's 100 Mb/s; initial alpha 1 (HTDCQCN).
    static dcqcn_params paper(std::uint64_t line_rate_bps);
    /// ConnectX firmware defaults (facts-l2 §4.4, MLXCFG/DOCA): G 1019 (g = 5/1024), alpha every
    /// 1 us, cut check every 4 us, T 300 us, B 32767 B, F 1, R_AI 5 Mb/s, R_HAI 50 Mb/s (not
    /// multiplied), min 1 Mb/s, min_dec_fac 50 %, clamp after time increase, initial alpha
    /// 1023/1024, rate on first CNP 0 = keep.
    static dcqcn_params mellanox(std::uint64_t line_rate_bps);
    /// HPCC run.py `dcqcn` (Mellanox-like, timer only): g 1/256, K 1 us, check 4 us, T 300 us,
    /// no byte counter, F 1, R_AI 5 Mb/s and R_HAI 50 Mb/s x line/25G, min 1 Gb/s, alpha 1.
    static dcqcn_params scaled(std::uint64_t line_rate_bps);

    using error = param_error;
    /// The first field that is out of range, or nothing if the set is usable.
    std::optional<error> validate() const;
};

/// Reaction point: the DCQCN rate of one rate limiter. No allocation after construction.
class dcqcn_rp
{
public:
    static constexpr ps_t NEVER = ~ps_t(0);
    /// Throws std::invalid_argument ("dcqcn_params.<field>: <reason>") if p does not validate.
    explicit dcqcn_rp(const dcqcn_params& p);

    /// A CNP for this rate limiter arrived at `now`.
    void on_cnp(ps_t now);
    /// The rate limiter sent `bytes` (one frame, as counted by the implementation) at `now`.
    /// At most one byte-counter event per call: the count restarts at 0 (excess dropped).
    void on_bytes_sent(std::uint64_t bytes, ps_t now);
    /// Runs every timer due at or before `now`.
    void on_timer(ps_t now);
    /// Earliest pending timer of any kind (NEVER before the first CNP).
    ps_t next_timer() const;
    /// Earliest pending timer that can change rate_bps() (increase timer, a pending cut). The
    /// caller may sleep until then: alpha updates in between are caught up, in order, by the
    /// next call, with the same result.
    ps_t next_rate_change() const;

    double rate_bps() const { return m_rc; }    ///< RC
    double target_bps() const { return m_rt; }  ///< RT
    /// As of the last call (timers after it are not applied).
    double alpha() const { return m_alpha; }
    std::uint32_t timer_events() const { return m_t; }  ///< T since the last cut
    std::uint32_t byte_events() const { return m_bc; }  ///< BC since the last cut
    bool active() const { return m_active; }            ///< a CNP has arrived
    bool cut_pending() const { return m_cut_pending; }  ///< Mellanox: waits for the check
    const dcqcn_params& params() const { return m_p; }

    struct counters {
        std::uint64_t cnps = 0;
        std::uint64_t cuts = 0;
        std::uint64_t fast_recovery = 0;  ///< increase events per stage
        std::uint64_t additive = 0;
        std::uint64_t hyper = 0;
    };
    const counters& stats() const { return m_stats; }

private:
    void advance(ps_t now);
    void alpha_tick(ps_t t, ps_t now);
    void increase_tick(ps_t t);
    void check_tick(ps_t t);
    void cut(ps_t t);
    void increase();
    bool at_line_rate() const { return m_rc >= m_line && m_rt >= m_line; }

    dcqcn_params m_p;
    double m_line;
    double m_rc;
    double m_rt;
    double m_alpha;
    std::uint32_t m_t = 0;
    std::uint32_t m_bc = 0;
    std::uint64_t m_bytes = 0;  ///< toward the next byte-counter event
    bool m_active = false;
    bool m_cut_pending = false;
    bool m_cnp_in_alpha_period = false;
    ps_t m_anchor = 0;  ///< first CNP: origin of the decrease-check grid
    ps_t m_next_alpha = NEVER;
    ps_t m_next_increase = NEVER;
    ps_t m_next_check = NEVER;  ///< only while a cut is pending
    counters m_stats;
};

/// Notification point: CNPs for one flow's CE-marked packets, at most one per `interval`
/// (N, 50 us in NS3RDMA and HTDCQCN; Mellanox min_time_between_cnps is 2 or 4 us [CONFLICT]).
/// Timing model: the window starts at the last CNP sent. A mark inside it is remembered and
/// one CNP goes when the window ends (HTDCQCN): next_due() says when, the caller calls
/// on_due() then. With remember_marks = false such marks are dropped. NS3RDMA's free-running
/// 50-us check is not modelled.
class cnp_pacer
{
public:
    static constexpr ps_t NEVER = ~ps_t(0);
    explicit cnp_pacer(ps_t interval = 50 * PS_PER_US, bool remember_marks = true)
        : m_interval(interval), m_remember(remember_marks) {}

    /// A CE-marked packet of the flow arrived at `now`; true: send a CNP now.
    bool on_marked_packet(ps_t now);
    /// When the remembered mark's CNP is due (NEVER if none).
    ps_t next_due() const { return m_pending ? m_last + m_interval : NEVER; }
    /// True: send the remembered mark's CNP now (`now` >= next_due()).
    bool on_due(ps_t now);

    struct counters {
        std::uint64_t marked = 0;     ///< CE-marked packets seen
        std::uint64_t cnps = 0;       ///< CNPs sent, deferred ones included
        std::uint64_t deferred = 0;   ///< CNPs sent at a window's end
        std::uint64_t coalesced = 0;  ///< marks that caused no CNP of their own
    };
    const counters& stats() const { return m_stats; }

private:
    bool send(ps_t now);

    ps_t m_interval;
    bool m_remember;
    bool m_sent_any = false;
    bool m_pending = false;
    ps_t m_last = 0;
    counters m_stats;
};

}  // namespace fabricsim::nic
