#pragma once
/// The FERA congestion point of one egress port as an egress_policy (seed-003 §1.2-§1.8): a
/// fera_cp (algo/fera.h) fed by every data frame entering the port's queues, and the tag rule
/// on the frames that carry a forward tag (tag = min(tag, advertised rate)).
/// Timing model: untimed, no events of its own. The port calls it at each data frame's enqueue
/// decision. Intervals run from the port's first data frame (t_0). The interval closes lazily: the
/// first data frame at or after the deadline closes it with the interval's actual length and the
/// port's queue before that frame (fera_cp measures A over the real elapsed time); the frame then
/// counts in the next interval and is marked with the new rate. An interval without arrivals closes
/// with the next arrival (A over the whole gap). Frames the MMU refused are not counted (the policy
/// sees admitted frames only). PAUSE is the switch's queue_pause generation (queue_pause_trigger):
/// the interval is "paused" when that port's trigger was congested at an arrival or at the close.
/// A scheduled change of the link's rate (phy.faults rate step: a LAG member lost, §7.3) reaches
/// fera_cp as C_i at the first close at or after it (RCP keeps its configured C).
/// The same policy carries the RCP law (algo/rcp.h, switch.fera.mode rcp) instead of fera_cp: the
/// same lazy closes, wire-byte arrivals, queue before the closing frame and tag rule; RCP's
/// averaging points are applied at the marking time (rcp_rate is lazy too). PAUSE is not an
/// input of RCP.
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "fabricsim/core/frame.h"
#include "fabricsim/switch/algo/egress_policy.h"
#include "fabricsim/switch/algo/fera.h"
#include "fabricsim/switch/algo/rcp.h"

namespace fabricsim::sw {

class queue_pause_trigger;

class fera_congestion_point final : public egress_policy
{
public:
    /// `queues`: the port's queues (bit q); their summed bytes are the FERA queue.
    fera_congestion_point(const fera_params& p, std::uint8_t queues);
    /// The RCP law instead of FERA's.
    fera_congestion_point(const rcp_params& p, std::uint8_t queues);
    enqueue_verdict on_enqueue(const egress_queues& port, unsigned q, frame& f, ps_t now) override;
    /// The port's line rate changes to `.second` bit/s at `.first` (time order); set before
    /// the first frame.
    void set_capacity_steps(std::vector<std::pair<ps_t, std::uint64_t>> steps) {
        m_capacity_steps = std::move(steps);
    }
    /// The port's PAUSE trigger (nullptr: none); set before the first frame.
    void set_pause_trigger(const queue_pause_trigger* t) { m_trigger = t; }
    /// The FERA law (only when rcp() is nullptr).
    const fera_cp& cp() const { return *m_cp; }
    /// The RCP law, nullptr for FERA.
    const rcp_rate* rcp() const { return m_rcp ? &*m_rcp : nullptr; }
    /// The advertised rate at `now` (RCP: with its averaging points due at `now`).
    double advertised_bps(ps_t now) const {
        return m_rcp ? m_rcp->rate_at(now) : m_cp->advertised_bps();
    }
    /// Data frames whose forward tag passed this port / was lowered by it.
    std::uint64_t tags_stamped() const {
        return m_rcp ? m_rcp->stats().tags_seen : m_cp->stats().tags_seen;
    }
    bool paused_now() const;
    /// The queue q_i (bytes) the last close measured.
    std::uint64_t last_queue_bytes() const { return m_last_queue; }

private:
    void on_rcp(const egress_queues& port, frame& f, ps_t now);

    std::optional<fera_cp> m_cp;
    std::optional<rcp_rate> m_rcp;
    const queue_pause_trigger* m_trigger = nullptr;
    std::vector<std::pair<ps_t, std::uint64_t>> m_capacity_steps;
    std::size_t m_next_step = 0;
    std::uint64_t m_last_queue = 0;
    bool m_paused = false;   ///< the trigger was congested in the current interval
    bool m_started = false;  ///< a data frame came: the intervals run from the first one
};

}  // namespace fabricsim::sw
