#pragma once
/// IEEE 802.1Qau QCN reaction point (RP, the NIC's rate limiter) as plain C++ (no SystemC), per
/// facts-l2 §3.2/§3.6 (MIB defaults, NS3RDMA's rpr_* reconstruction of the 802.1Qau
/// pseudo-code) and seed-000 §1.9-1.10 (the thesis' RP, QCN-AIMD, the averaging principle).
///
/// Timing model. Every input carries its exact time in ps and calls come in non-decreasing
/// time. Each call first runs the timer events due at or before its time (a timer at the same
/// ps as the input comes first), then handles the input. The timer is an exact deadline;
/// next_timer() says when it is due. The caller passes a CNM at its arrival and the bytes of
/// each frame as it is sent; nothing on the wire is modelled. Rates are double bit/s (halving
/// makes fractions); the caller's rate limiter rounds when it turns a rate into time.
///
/// State: CR (rate_bps), TR (target_bps), byte counter, timer, ByteStage, TimeStage. The RP is
/// RELEASED at construction (CR = TR = line rate, no counters running), becomes active at a CNM
/// and is released again when an increase brings CR back to the line rate (facts-l2 §3.6
/// [EXT]: the rate limiter is given back; counters stop).
///
/// On a CNM with qFb (0..63, larger values are taken as 63):
///  1. TR <- CR, except while ByteStage = 0 (keep_target_in_first_cycle, NS3RDMA: back-to-back
///     CNMs keep the older target; note that an idle flow recovering on the timer alone keeps
///     ByteStage 0 too).
///  2. CR <- max(CR (1 - Gd qFb), CR min_decrease_factor, min_rate).
///  3. ByteStage = TimeStage = 0; the timer restarts (rpgTimeReset) and the byte counter is
///     reloaded (rpgByteReset), except in the first cycle when reload_byte_counter_in_first_cycle
///     is false (NS3RDMA reloads only when ByteStage != 0; facts-l2 always).
/// Increase events (byte counter expiry: the sent bytes reach the reload, excess dropped, one
/// event per call; timer expiry): the firing stage counts 1, the counter restarts (half the
/// length if the RP was in HAI before the event and halve_in_hai, NS3RDMA), then with
/// thr = rpgThreshold, by stage_rule:
///  - BOTH_COUNTERS (QCN paper, facts-l2 §3.6): FR if both stages < thr, AI if exactly one is
///    >= thr, HAI if both are.
///  - PER_COUNTER (NS3RDMA literal): from FR, the firing stage < thr stays FR, else selects AI/HAI
///    as above; from AI a byte event is always AI, a timer event selects; HAI stays HAI.
/// FR: TR unchanged. AI: TR += R_AI. HAI: TR += R_HAI (min(ByteStage, TimeStage) - thr + 1).
/// Target-rate reduction (target_reduction, NS3RDMA AdjustRates): if ByteStage = 1 or
/// TimeStage = 1 and TR > 10 CR, TR <- TR/8 instead of the increase. Then TR is capped at the
/// line rate (NS3RDMA caps only CR; capping TR keeps a released RP consistent),
/// CR <- (1 - a) CR + a TR (a = averaging_factor, 1/2 standard), CR <- TR once within 1 bit/s
/// (halving stalls one ulp short), capped at the line rate.
/// Threshold: with the MIB's 5, events 1..4 are FR and the 5th is the first AI (NS3RDMA). The
/// thesis' "5 FR cycles, then AI" is threshold 6 (thesis()).
///
/// Variants: byte_counter_only (the thesis' analysis: no timer, so never HAI); aimd (QCN-AIMD,
/// seed-000 §1.9: no FR, every increase event does CR <- CR + R_AI, TR follows CR).
/// Averaging principle (seed-000 §1.10): the RP is AP with feedback period T = the time between
/// CNMs and averaging points = the increase events after a CNM (the counters restart at each
/// CNM), averaging threshold - 1 times in FR. AP (one averaging at T/2): byte_reset = the bytes
/// sent in T/2, threshold 2; AP2 (T/3 and 2T/3): byte_reset = bytes in T/3, threshold 3; a
/// factor other than 1/2: averaging_factor. Set ai_rate_bps = 0 and target_reduction = false
/// for pure AP; later events (if no CNM comes) keep averaging towards the same TR, whereas AP
/// holds its input until the next feedback.
/// Ignored: the randomised counter reloads (U(0.85, 1.15), disabled in NS3RDMA "for fluid
/// model"), rppp_max_rps / flow-to-RP mapping (the caller's), CN-TAG insertion.
#include <cstdint>
#include <optional>

#include "fabricsim/core/param_error.h"
#include "fabricsim/core/units.h"

namespace fabricsim::nic {

enum class qcn_stage : std::uint8_t {
    RELEASED,  ///< no rate limit (CR = line rate), counters stopped
    FAST_RECOVERY,
    ACTIVE_INCREASE,
    HYPER_INCREASE,
};

/// How an increase event picks FR / AI / HAI (the two readings of facts-l2 §3.6).
enum class qcn_stage_rule : std::uint8_t {
    BOTH_COUNTERS,  ///< QCN paper: none / exactly one / both stages >= threshold
    PER_COUNTER,    ///< NS3RDMA rpr_*_byte / rpr_*_time dispatch on the current stage
};

/// Parameters of one reaction point. Rates in bit/s, times in ps, sizes in bytes.
struct qcn_rp_params {
    std::uint64_t line_rate_bps = 0;          ///< rpgMaxRate: CR and TR never exceed it
    double gd = 1.0 / 128;                    ///< rpgGd (MIB log2 form 7)
    ps_t time_reset = 15 * PS_PER_MS;         ///< rpgTimeReset
    std::uint64_t byte_reset = 150'000;       ///< rpgByteReset
    std::uint32_t threshold = 5;              ///< rpgThreshold
    std::uint64_t ai_rate_bps = 5'000'000;    ///< rpgAiRate
    std::uint64_t hai_rate_bps = 50'000'000;  ///< rpgHaiRate
    double min_decrease_factor = 0.5;         ///< rpgMinDecFac 50 %: a cut keeps this share
    std::uint64_t min_rate_bps = 5'000'000;   ///< rpgMinRate
    double averaging_factor = 0.5;            ///< a in CR <- (1 - a) CR + a TR, (0, 1]
    qcn_stage_rule stage_rule = qcn_stage_rule::BOTH_COUNTERS;
    bool byte_counter_only = false;          ///< no timer (thesis analysis)
    bool aimd = false;                       ///< QCN-AIMD: no FR, CR += R_AI per increase event
    bool halve_in_hai = true;                ///< reloads of byte counter and timer halve in HAI
    bool target_reduction = true;            ///< the TR/8 rule
    bool keep_target_in_first_cycle = true;  ///< CNM leaves TR while ByteStage = 0
    bool reload_byte_counter_in_first_cycle = true;  ///< false: NS3RDMA

    /// 802.1Qau MIB defaults (facts-l2 §3.2) at `line_rate_bps`.
    static qcn_rp_params standard(std::uint64_t line_rate_bps);
    /// The thesis' RP (seed-000 §1.9, Fig 5.2): byte counter only, 150 KB (100 x 1500 B), 5 FR
    /// cycles (threshold 6), R_AI 5 Mb/s, Gd 1/128, no HAI, TR <- CR at every CNM, no TR/8.
    static qcn_rp_params thesis(std::uint64_t line_rate_bps);
    /// QCN-AIMD of the thesis' comparison (§5.4.1): thesis() with aimd.
    static qcn_rp_params thesis_aimd(std::uint64_t line_rate_bps);

    using error = param_error;
    /// The first field that is out of range, or nothing if the set is usable.
    std::optional<error> validate() const;
};

/// Reaction point: the QCN rate of one rate limiter. No allocation after construction.
class qcn_rp
{
public:
    static constexpr ps_t NEVER = ~ps_t(0);
    /// Throws std::invalid_argument ("qcn_rp_params.<field>: <reason>") if p does not validate.
    explicit qcn_rp(const qcn_rp_params& p);

    /// A CNM with quantised feedback `qfb` (0..63) for this rate limiter arrived at `now`.
    void on_cnm(ps_t now, unsigned qfb);
    /// The rate limiter sent a frame of `bytes` at `now` (byte counter).
    void on_sent(ps_t now, std::uint64_t bytes);
    /// Runs every timer event due at or before `now`.
    void on_timer(ps_t now) { advance(now); }
    /// When the timer is due (NEVER while released or with byte_counter_only).
    ps_t next_timer() const { return m_next_timer; }

    double rate_bps() const { return m_rc; }    ///< CR
    double target_bps() const { return m_rt; }  ///< TR
    qcn_stage stage() const { return m_stage; }
    std::uint32_t byte_stage() const { return m_byte_stage; }
    std::uint32_t time_stage() const { return m_time_stage; }
    /// Bytes still to send before the next byte-counter event.
    std::uint64_t bytes_to_event() const { return m_bytes_left; }
    /// Release criterion: CR is back at the line rate and the limiter is given back.
    bool released() const { return m_stage == qcn_stage::RELEASED; }
    bool at_line_rate() const { return m_rc >= m_line; }
    const qcn_rp_params& params() const { return m_p; }

    struct counters {
        std::uint64_t cnms = 0;
        std::uint64_t decreases = 0;  ///< CNMs with qFb > 0
        std::uint64_t fast_recovery = 0;
        std::uint64_t active_increase = 0;  ///< AIMD increases included
        std::uint64_t hyper_increase = 0;
        std::uint64_t byte_events = 0;
        std::uint64_t timer_events = 0;
        std::uint64_t target_reductions = 0;  ///< TR/8
        std::uint64_t releases = 0;
    };
    const counters& stats() const { return m_stats; }

private:
    void advance(ps_t now);
    void increase_event(bool byte_event, ps_t t);
    qcn_stage select(bool byte_event) const;
    void release();

    qcn_rp_params m_p;
    double m_line;
    double m_rc;
    double m_rt;
    qcn_stage m_stage = qcn_stage::RELEASED;
    std::uint32_t m_byte_stage = 0;
    std::uint32_t m_time_stage = 0;
    std::uint64_t m_bytes_left = 0;
    ps_t m_next_timer = NEVER;
    counters m_stats;
};

}  // namespace fabricsim::nic
