#pragma once
/// FERA reaction point (Jiang, MS thesis 2008; seed-003 §1.6, §4): the rate of one flow's rate
/// regulator at the source NIC, as plain C++ (no SystemC).
///
/// Timing model. Every input carries its exact time in ps and calls come in non-decreasing
/// time. Each call first runs the idle-reset timer if it is due at or before its time (at equal
/// times the timer first, the input last: a tag returning at the deadline still counts). The
/// timer is an exact deadline: 2T after the last returned tag, next_timer() says when. A flow
/// starts at r_0 = C/N_0 (C = the source link rate) and takes the rate of each returned tag
/// as it is (no smoothing, no AIMD: the switches already computed the path minimum). Tags:
/// the first frame the flow sends carries one, then the first frame at least τ after the last
/// tag; a forward tag starts at the link rate. Nothing on the wire is modelled here: the caller
/// sends the tag (piggybacked, or as a separate probe at next_tag_due() if no frame goes) and
/// passes the reflected rate when it returns. Rates are double bit/s.
/// Ignored: tags returning out of order or duplicated (the latest one wins); the thesis's
/// "no packets sent" half of the idle condition unless reset_only_when_idle.
#include <cstdint>
#include <optional>

#include "fabricsim/core/param_error.h"
#include "fabricsim/core/units.h"

namespace fabricsim::nic {

/// Parameters of one flow's reaction point. Rates in bit/s, times in ps.
struct fera_source_params {
    std::uint64_t link_rate_bps = 0;    ///< C of the source link: r_0 = C/N_0; tags start at C
    double initial_flows = 20;          ///< N_0, the same value as the switches'
    ps_t interval = 1 * PS_PER_MS;      ///< T of the switches: idle reset after 2T without a tag
    ps_t tag_interval = 1 * PS_PER_MS;  ///< τ (<= T)
    /// The thesis' whole idle condition: "no packets are sent and hence no tags have been
    /// received in the last 2T" (a frame sent also puts the reset 2T after it). False: 2T
    /// without a returned tag alone (a flow whose tags are lost restarts at C/N_0).
    bool reset_only_when_idle = false;

    /// §8.1: T = τ = 1 ms, N_0 20 (simple topology) or 200 (large).
    static fera_source_params thesis_default(std::uint64_t link_rate_bps,
                                             double initial_flows = 20);

    using error = param_error;
    /// The first field that is out of range, or nothing if the set is usable.
    std::optional<error> validate() const;
};

/// Reaction point of one flow. No allocation after construction.
class fera_source
{
public:
    static constexpr ps_t NEVER = ~ps_t(0);
    /// Throws std::invalid_argument ("fera_source_params.<field>: <reason>") if p is invalid.
    explicit fera_source(const fera_source_params& p, ps_t start = 0);

    /// The flow sends a frame at `now`; true: the frame carries a forward tag set to
    /// tag_init_bps().
    bool on_send(ps_t now);
    /// A separate probe sent at `now` (no data frame was due): counts as the tag of on_send.
    void on_probe_sent(ps_t now) { record_tag(now); }
    /// A returning tag with the path's advertised rate arrived at `now`.
    void on_tag_returned(std::uint64_t rate_bps, ps_t now);
    /// Runs the idle reset if it is due at or before `now`.
    void on_timer(ps_t now) { advance(now); }

    /// The idle reset deadline (NEVER before the first tag and after a reset).
    ps_t next_timer() const { return m_reset_at; }
    /// When the next tag is due (the start before the first one).
    ps_t next_tag_due() const { return m_tagged ? m_last_tag + m_p.tag_interval : m_start; }
    std::uint64_t tag_init_bps() const { return m_p.link_rate_bps; }
    double rate_bps() const { return m_rate; }             ///< the regulator's rate
    double initial_rate_bps() const { return m_initial; }  ///< C/N_0
    /// A tag has returned since the start or the last idle reset.
    bool discovered() const { return m_reset_at != NEVER; }
    const fera_source_params& params() const { return m_p; }

    struct counters {
        std::uint64_t tags_sent = 0;
        std::uint64_t tags_returned = 0;
        std::uint64_t rate_changes = 0;
        std::uint64_t idle_resets = 0;
    };
    const counters& stats() const { return m_stats; }

private:
    void advance(ps_t now);
    void record_tag(ps_t now);

    fera_source_params m_p;
    double m_initial;
    double m_rate;
    ps_t m_start;
    ps_t m_last_tag = 0;
    bool m_tagged = false;
    ps_t m_reset_at = NEVER;
    counters m_stats;
};

}  // namespace fabricsim::nic
