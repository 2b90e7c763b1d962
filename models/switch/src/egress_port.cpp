#include "fabricsim/switch/egress_port.h"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fabricsim/core/frame_pool.h"
#include "fabricsim/core/kernel.h"

namespace fabricsim::sw {

namespace {
std::vector<queue_sched_params> sched_params(const switch_config& cfg) {
    std::vector<queue_sched_params> p = cfg.sched;
    p.resize(cfg.queues);
    return p;
}
}  // namespace

egress_port::egress_port(const sc_core::sc_module_name& name, unsigned index,
                         const switch_config& cfg, mmu& buffer, pool_backlog& pools,
                         std::uint64_t rate_bps, std::uint64_t seed)
    : sc_core::sc_module(name),
      m_mmu(buffer),
      m_index(static_cast<std::uint16_t>(index)),
      m_shaped(false),
      m_use_sched(true),
      m_ecn_queue_step(false),
      m_ecn_packets(false),
      m_drop_non_ect(false),
      m_has_phantom(false),
      m_count_pools(false),
      m_count_port_bytes(false),
      m_sched(cfg.discipline, sched_params(cfg)),
      m_pools(pools),
      m_cfg(cfg),
      m_port_avg(cfg.ecn.red.weight),
      m_queues(cfg.queues),
      m_rate_bps(rate_bps),
      m_rng(seed, std::string(this->name()) + ".aqm") {
    std::vector<std::uint32_t> quanta;
    std::vector<bool> strict;
    for (unsigned q = 0; q < m_queues; ++q) {
        m_cold[q].avg = red_average(cfg.ecn.red.weight);
        if (cfg.queue_shaper[q].rate_bps)
            m_shaper[q] =
                token_bucket(cfg.queue_shaper[q].rate_bps, cfg.queue_shaper[q].burst_bytes);
        quanta.push_back(m_sched.quantum(q));
        strict.push_back(m_sched.strict(q));
        if (m_sched.strict(q))
            m_strict_mask = static_cast<std::uint8_t>(m_strict_mask | 1u << q);
        else
            m_alone_bytes = static_cast<std::uint16_t>(
                std::min<std::uint32_t>(m_alone_bytes, m_sched.quantum(q)));
        const auto bit = static_cast<std::uint8_t>(1u << q);
        if (cfg.mmu.queue[q].lossless) m_lossless_mask |= bit;
        if (cfg.ecn.mode != ecn_mode::OFF && (cfg.ecn.queue_mask >> q & 1)) {
            if (cfg.ecn.mark_on_dequeue)
                m_mark_dequeue_mask |= bit;
            else
                m_mark_enqueue_mask |= bit;
        }
    }
    if (cfg.port_shaper.rate_bps)
        m_port_shaper = token_bucket(cfg.port_shaper.rate_bps, cfg.port_shaper.burst_bytes);
    m_shaped = !m_port_shaper.unlimited();
    for (unsigned q = 0; q < m_queues; ++q) m_shaped = m_shaped || !m_shaper[q].unlimited();
    const std::vector<double> scales = min_threshold_scales(quanta, strict);
    for (unsigned q = 0; q < m_queues; ++q) m_cold[q].min_scale = scales[q];
    if (cfg.ecn.mode != ecn_mode::OFF && cfg.ecn.per_queue == queue_threshold::MQ_ECN) {
        // The paper's T_idle: one MTU (1500 B) at the port rate.
        const ps_t t_idle =
            cfg.ecn.mq_t_idle ? cfg.ecn.mq_t_idle : serialization_ps(1500, rate_bps);
        m_mq = &m_mq_state.emplace(quanta, rate_bps, cfg.ecn.mq_beta, t_idle);
        m_sched.set_observer(m_mq);
    }
    // What the short marking path needs of threshold_scale(): K x scale, or its MQ-ECN input.
    const red_params& red = cfg.ecn.red;
    for (unsigned q = 0; q < m_queues; ++q) {
        if (m_mq)
            m_queue[q].ecn_param = m_strict_mask >> q & 1 ? std::numeric_limits<double>::infinity()
                                                          : m_mq->quantum_time_ps(q);
        else
            m_queue[q].ecn_param = red.min_th * threshold_scale(q);
    }
    m_use_sched = m_queues > 1 || m_mq;
    m_ecn_queue_step =
        cfg.ecn.scope == ecn_scope::QUEUE && red.min_th == red.max_th && red.weight == 1.0;
    m_ecn_packets = cfg.ecn.packets;
    m_drop_non_ect = cfg.ecn.drop_non_ect;
    m_count_pools = cfg.ecn.mode != ecn_mode::OFF && cfg.ecn.scope == ecn_scope::POOL;
    m_count_port_bytes = cfg.ecn.mode != ecn_mode::OFF && cfg.ecn.scope == ecn_scope::PORT;
    // The quick pass bound: the smallest step threshold of the marking queues (MQ-ECN: that
    // of the shortest quantum, the smallest at any T_round).
    double min_param = std::numeric_limits<double>::infinity();
    for (unsigned q = 0; q < m_queues; ++q)
        if ((m_mark_enqueue_mask | m_mark_dequeue_mask) >> q & 1)
            min_param = std::min(min_param, m_queue[q].ecn_param);
    if (m_mq) {
        m_mq->set_threshold(red.min_th, min_param);
        refresh_pass_bound();
    } else {
        m_pass_bound = min_param;
    }
    if (cfg.phantom.enabled)
        m_phantom.emplace(rate_bps, cfg.phantom.gamma, cfg.phantom.interval,
                          cfg.phantom.threshold_bytes);
    m_has_phantom = m_phantom.has_value();
}

egress_port::ecn_action egress_port::ecn_decision(unsigned q, const frame& f) {
    // Both callers decide with the frame counted in its queue but not in the ring, and only
    // when quick_pass() did not already pass it.
    const queue_state& s = m_queue[q];
    if (m_ecn_queue_step) {
        // What the general path computes for a step on the instantaneous queue: the average is
        // the occupancy (weight 1, no state to keep) and red_probability() is 0 or 1, no draw.
        // The threshold is K x threshold_scale(q), from the queue's line (and MQ-ECN's first).
        const double occupancy = m_ecn_packets ? double(s.fifo.size() + 1) : double(s.bytes);
        if (occupancy <= (m_mq ? m_mq->threshold_for(s.ecn_param) : s.ecn_param))
            return ecn_action::PASS;
        if (f.ecn != ecn_codepoint::NOT_ECT) return ecn_action::MARK;
        return m_drop_non_ect ? ecn_action::DROP : ecn_action::PASS;
    }
    const ecn_config& e = m_cfg.ecn;
    double occupancy = 0;
    red_average* avg = &m_port_avg;
    switch (e.scope) {
        case ecn_scope::QUEUE:
            occupancy = e.packets ? double(s.fifo.size() + 1) : double(s.bytes);
            avg = &m_cold[q].avg;
            break;
        case ecn_scope::PORT:
            occupancy = e.packets ? double(m_queued_frames) : double(m_port_bytes);
            break;
        case ecn_scope::POOL: {
            const unsigned pool = pool_of(q);
            occupancy = e.packets ? double(m_pools.frames[pool]) : double(m_pools.bytes[pool]);
            break;
        }
    }
    const double p = red_probability(e.red, avg->update(occupancy), threshold_scale(q));
    if (p <= 0 || (p < 1 && m_rng.uniform() >= p)) return ecn_action::PASS;
    if (f.ecn != ecn_codepoint::NOT_ECT) return ecn_action::MARK;
    return e.drop_non_ect ? ecn_action::DROP : ecn_action::PASS;
}

void egress_port::mark_ce(frame& f, unsigned q) {
    // Only ECT frames can carry CE; a frame marked upstream is not counted again.
    if (f.ecn == ecn_codepoint::NOT_ECT || f.ecn == ecn_codepoint::CE) return;
    f.ecn = ecn_codepoint::CE;
    m_cold[q].ce_marked++;
}

void egress_port::drop(frame& f, unsigned q, drop_cause why) {
    m_cold[q].drops.add(why);
    frame_pool::global().release(f);
}

void egress_port::start(unsigned q, ps_t at, ps_t now, bool alone) {
    queue_state& s = m_queue[q];
    const std::uint32_t wire = head_bytes(q);
    const entry e = s.fifo.pop_front();
    frame& f = *e.f;
    const std::uint32_t bytes = f.frame_bytes();
    const unsigned pool = pool_of(q);
    // Dequeue marking sees the queue the frame leaves behind, the frame included. pick() may
    // have taken round samples since the last refresh.
    if (m_mark_dequeue_mask >> q & 1) {
        if (m_mq) refresh_pass_bound();
        if (!quick_pass(s) && ecn_decision(q, f) == ecn_action::MARK) mark_ce(f, q);
    }
    if (m_has_phantom && m_phantom->on_frame(wire, at)) mark_ce(f, q);
    count_backlog(q, pool, bytes, false);
    m_mmu.release(e.ticket);
    if (m_shaped) {
        m_shaper[q].consume(wire, at);
        m_port_shaper.consume(wire, at);
    }
    s.tx_frames++;
    s.tx_bytes += bytes;
    if (s.fifo.empty()) m_backlogged &= static_cast<std::uint8_t>(~(1u << q));
    // Only MQ-ECN uses the time the last bit leaves.
    const ps_t tx_end = m_mq ? m_mq->tx_end(at, wire) : at;
    if (m_use_sched) {
        // accept() checked what serve_alone() would: the port was empty and the frame fits.
        if (!alone)
            m_sched.served(q, wire, s.fifo.empty(), at, tx_end);
        else if (!(m_strict_mask >> q & 1))
            m_sched.serve_alone_known(q, at, tx_end, m_mq);
    }
    if (m_mq) {
        refresh_pass_bound();
        if (m_queued_frames == 0) {
            m_mq->port_idle(tx_end);
            m_decay_from = tx_end + m_mq->t_idle();
        }
    }
    m_busy_until = tx.send_at(f, at, now);
}

void egress_port::accept(frame& f, unsigned in_port, unsigned pg, unsigned q, ps_t ready) {
    const ps_t now = now_ps();
    mmu_ticket ticket;
    drop_cause why{};
    if (!m_mmu.admit(in_port, pg, m_index, q, f.frame_bytes(), ticket, why)) return drop(f, q, why);
    queue_state& s = m_queue[q];
    const std::uint32_t bytes = f.frame_bytes();
    const unsigned pool = pool_of(q);
    // Occupancy including the arriving frame, as the marking test sees it (seed-001 §1.1).
    count_backlog(q, pool, bytes, true);
    if ((m_mark_enqueue_mask >> q & 1) && !quick_pass(s)) {
        const ecn_action a = ecn_decision(q, f);
        if (a == ecn_action::DROP) {
            count_backlog(q, pool, bytes, false);
            m_mmu.release(ticket);
            return drop(f, q, drop_cause::AQM_DROP);
        }
        if (a == ecn_action::MARK) mark_ce(f, q);
    }
    const bool port_was_empty = m_queued_frames == 1;
    const bool was_empty = s.fifo.empty();
    s.fifo.push_back({&f, ready, ticket, f.wire_bytes()});
    m_last_ready = ready;
    if (s.bytes > s.peak_bytes) s.peak_bytes = s.bytes;
    // Without decay, port_busy() would only mark the port busy again, and the port_idle() that
    // must come before the next arrival at an empty port resets that anyway.
    if (port_was_empty && m_mq && ready >= m_decay_from) m_mq->port_busy(ready);
    // The port is otherwise empty and the wire free when the frame is out of the pipeline:
    // start it then, annotated, with no event. Unshaped, it is the only frame the scheduler
    // could pick; serve_alone() then does the scheduler's bookkeeping without the round robin.
    const bool idle = port_was_empty && m_busy_until <= ready;
    const bool alone =
        idle && !m_shaped &&
        (!m_use_sched || f.wire_bytes() <= m_alone_bytes || (m_strict_mask >> q & 1));
    if (was_empty) {
        m_backlogged |= static_cast<std::uint8_t>(1u << q);
        if (m_use_sched && !alone) m_sched.backlogged(q, ready);
    }
    if (alone) return start(q, ready, now, true);
    if (idle && try_start(ready, now)) return;
    m_waited[q]++;
    arm_next(now);
}

bool egress_port::try_start(ps_t at, ps_t now) {
    if (m_shaped && !m_port_shaper.unlimited()) {
        // The port shaper gates every queue: check it against the smallest eligible head.
        bool any = false;
        for (unsigned bits = m_backlogged; bits && !any; bits &= bits - 1) {
            const unsigned q = static_cast<unsigned>(__builtin_ctz(bits));
            any = eligible(q, at) && m_port_shaper.ready_at(head_bytes(q), at) == at;
        }
        if (!any) return false;
    }
    // One queue and no MQ-ECN: a FIFO, the scheduler has nothing to decide.
    const int picked = m_use_sched ? m_sched.pick(*this, at) : eligible(0, at) ? 0 : -1;
    if (picked < 0) return false;
    const unsigned q = static_cast<unsigned>(picked);
    if (m_shaped && !m_port_shaper.unlimited() && m_port_shaper.ready_at(head_bytes(q), at) != at)
        return false;
    start(q, at, now, false);
    return true;
}

void egress_port::arm_next(ps_t now) {
    if (m_queued_frames == 0) return;
    // Earliest time anything may go: the wire frees, a head leaves the pipeline, a shaper fills.
    const ps_t wire_free = std::max(now, m_busy_until);
    if (m_wake.pending() && m_wake.expiry() <= wire_free) return;  // nothing can go earlier
    if (!m_shaped && m_last_ready <= wire_free) {  // every head is out of the pipeline by then
        m_wake.arm_at(wire_free);
        return;
    }
    ps_t next = ~ps_t(0);
    for (unsigned bits = m_backlogged; bits; bits &= bits - 1) {
        const entry& head = m_queue[static_cast<unsigned>(__builtin_ctz(bits))].fifo.front();
        ps_t t = std::max(wire_free, head.ready);
        if (m_shaped) {
            t = m_shaper[static_cast<unsigned>(__builtin_ctz(bits))].ready_at(head.wire, t);
            t = m_port_shaper.ready_at(head.wire, t);
        } else if (t == wire_free) {
            next = t;  // cannot be beaten
            break;
        }
        next = std::min(next, t);
    }
    m_wake.arm_at(next);
}

void egress_port::on_wake() {
    const ps_t now = now_ps();
    if (m_busy_until <= now) try_start(now, now);
    arm_next(now);
}

drop_counters egress_port::drops() const {
    drop_counters d;
    for (unsigned q = 0; q < m_queues; ++q) d += m_cold[q].drops;
    return d;
}

void egress_port::report_stats(nlohmann::json& out) const {
    nlohmann::json queues = nlohmann::json::array();
    for (unsigned q = 0; q < m_queues; ++q) {
        const queue_state& s = m_queue[q];
        const queue_stats st = stats_of(q);
        const auto& occ = m_mmu.queue_occupancy(m_index, q);
        nlohmann::json j = {{"queue", q},
                            {"tx_frames", st.tx_frames},
                            {"tx_bytes", st.tx_bytes},
                            {"waited", st.waited},
                            {"ce_marked", st.ce_marked},
                            {"queued_frames", s.fifo.size()},
                            {"queued_frame_bytes", s.bytes},
                            {"peak_frame_bytes", st.peak_bytes},
                            {"cells", occ.cells},
                            {"peak_cells", occ.peak_cells},
                            {"rounds", m_sched.rounds(q)},
                            {"drops", drops_to_json(m_cold[q].drops)}};
        if (m_cfg.ecn.mode != ecn_mode::OFF) j["ecn_threshold_scale"] = threshold_scale(q);
        queues.push_back(std::move(j));
    }
    out["queues"] = std::move(queues);
    if (m_mq)
        out["mq_ecn"] = {{"t_round_us", m_mq->t_round_ps() / 1e6}, {"samples", m_mq->samples()}};
    if (m_phantom)
        out["phantom_queue"] = {{"frames", m_phantom->frames()},
                                {"marked", m_phantom->marked()},
                                {"counter_bytes", m_phantom->counter_bytes(now_ps())}};
}

}  // namespace fabricsim::sw
