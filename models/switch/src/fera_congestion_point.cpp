#include "fabricsim/switch/algo/fera_congestion_point.h"

#include "fabricsim/switch/algo/egress_queues.h"
#include "fabricsim/switch/algo/queue_pause_trigger.h"

namespace fabricsim::sw {

fera_congestion_point::fera_congestion_point(const fera_params& p, std::uint8_t queues)
    : egress_policy(queues, 0), m_cp(p) {}

fera_congestion_point::fera_congestion_point(const rcp_params& p, std::uint8_t queues)
    : egress_policy(queues, 0), m_rcp(p) {}

bool fera_congestion_point::paused_now() const {
    return m_trigger && m_trigger->congested();
}

enqueue_verdict fera_congestion_point::on_enqueue(const egress_queues& port, unsigned /*q*/,
                                                  frame& f, ps_t now) {
    if (!f.is_data()) return enqueue_verdict::PASS;
    if (m_rcp) {
        on_rcp(port, f, now);
        return enqueue_verdict::PASS;
    }
    if (!m_started) {
        // t_0 is the port's first data frame (the thesis' sources start at t_0 = 0): the first
        // interval then measures the sources' initial rate C/N_0 over whole frame gaps.
        const fera_params p = m_cp->params();  // a copy: emplace destroys the old one first
        m_cp.emplace(p, now);
        m_started = true;
    }
    const bool paused = paused_now();
    if (now >= m_cp->next_interval()) {
        // The queue as the interval ends: without the frame being decided.
        m_last_queue = port.queued_bytes() - f.frame_bytes();
        while (m_next_step < m_capacity_steps.size() && m_capacity_steps[m_next_step].first <= now)
            m_cp->set_capacity(m_capacity_steps[m_next_step++].second);
        m_cp->on_interval(now, m_last_queue, m_paused || paused);
        m_paused = false;
    }
    m_paused = m_paused || paused;
    // Wire bytes (preamble and IFG included): A is then the link load the port's C serves,
    // and the sources' regulators space frames by the same bytes.
    m_cp->on_arrival(f.wire_bytes());
    if (f.fera_forward) f.fera_rate_bps = m_cp->mark(f.fera_rate_bps);
    return enqueue_verdict::PASS;
}

void fera_congestion_point::on_rcp(const egress_queues& port, frame& f, ps_t now) {
    if (!m_started) {
        const rcp_params p = m_rcp->params();  // t_0: the port's first data frame, as FERA
        m_rcp.emplace(p, now);
        m_started = true;
    }
    if (now >= m_rcp->next_interval()) {
        m_last_queue = port.queued_bytes() - f.frame_bytes();
        m_rcp->on_interval(now, m_last_queue);
    }
    m_rcp->on_arrival(f.wire_bytes());
    if (f.fera_forward) f.fera_rate_bps = m_rcp->mark(f.fera_rate_bps, now);
}

}  // namespace fabricsim::sw
