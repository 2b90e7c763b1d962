#include "fabricsim/switch/algo/egress_queues.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <nlohmann/json.hpp>

#include "fabricsim/core/frame_pool.h"
#include "fabricsim/switch/switch_config.h"

namespace fabricsim::sw {

namespace {
std::vector<queue_sched_params> sched_params(const switch_config& cfg) {
    std::vector<queue_sched_params> p = cfg.sched;
    p.resize(cfg.queues);
    if (cfg.credit_queue.enabled()) p[unsigned(cfg.credit_queue.queue)].strict = true;
    return p;
}
}  // namespace

egress_queues::egress_queues(const switch_config& cfg, unsigned index, mmu& buffer,
                             pool_backlog& pools, std::uint64_t rate_bps, std::uint64_t seed,
                             const std::string& rng_name)
    : m_mmu(buffer),
      m_index(static_cast<std::uint16_t>(index)),
      m_gated(false),
      m_use_sched(true),
      m_pass_frames(false),
      m_bound_follows_mq(false),
      m_enqueue_chain(false),
      m_dequeue_chain(false),
      m_count_pools(false),
      m_count_port_bytes(false),
      m_starts_at_time(false),
      m_sched(cfg.discipline, sched_params(cfg)),
      m_pools(pools),
      m_cold(std::make_unique<queue_cold[]>(cfg.queues)),
      m_queues(cfg.queues),
      m_rate_bps(rate_bps),
      m_ecn_on(false) {
    // The other queues keep a one-slot ring that no frame ever uses.
    for (unsigned q = 0; q < m_queues; ++q) m_queue[q].fifo = ring<entry>(4);
    for (unsigned q = 0; q < m_queues; ++q) m_ecn_on = m_ecn_on || cfg.ecn.mode[q] != ecn_mode::OFF;
    std::vector<token_bucket> shapers(m_queues);
    bool queue_shaped = false;
    for (unsigned q = 0; q < m_queues; ++q) {
        if (cfg.queue_shaper[q].rate_bps) {
            shapers[q] =
                token_bucket(cfg.queue_shaper[q].rate_bps, cfg.queue_shaper[q].burst_bytes);
            queue_shaped = true;
        }
        if (m_sched.strict(q))
            m_strict_mask = static_cast<std::uint8_t>(m_strict_mask | 1u << q);
        else
            m_alone_bytes = static_cast<std::uint16_t>(
                std::min<std::uint32_t>(m_alone_bytes, m_sched.quantum(q)));
    }
    // The credit queue: its bucket (empty at the start, as ns2-xpass's) and its tail drop.
    if (cfg.credit_queue.enabled()) {
        const auto cq = static_cast<unsigned>(cfg.credit_queue.queue);
        auto g = std::make_unique<credit_gate>(
            cq,
            static_cast<std::uint64_t>(
                std::llround(cfg.credit_queue.ratio * static_cast<double>(rate_bps))),
            cfg.credit_queue.burst_bytes, cfg.credit_queue.jitter, seed, rng_name + ".credit");
        m_credit_gate = g.get();
        add_gate(*m_own_gates.emplace_back(std::move(g)));
        m_credit_queue = static_cast<int>(cq);
        add_policy(*m_own_policies.emplace_back(std::make_unique<credit_admission>(
            cq, cfg.credit_queue.buffer_bytes, cfg.credit_queue.selective_drop)));
    }
    // Queue shapers, then the port shaper (one bucket every queue's head must fit).
    if (queue_shaped) {
        add_gate(*m_own_gates.emplace_back(std::make_unique<shaper_gate>(shapers)));
    }
    if (cfg.port_shaper.rate_bps)
        add_gate(*m_own_gates.emplace_back(std::make_unique<shaper_gate>(
            token_bucket(cfg.port_shaper.rate_bps, cfg.port_shaper.burst_bytes))));
    install_marking(cfg, seed, rng_name);
    m_use_sched = m_queues > 1 || m_mq;
}

void egress_queues::install_marking(const switch_config& cfg, std::uint64_t seed,
                                    const std::string& name) {
    std::vector<std::uint32_t> quanta;
    std::vector<bool> strict;
    for (unsigned q = 0; q < m_queues; ++q) {
        quanta.push_back(m_sched.quantum(q));
        strict.push_back(m_sched.strict(q));
    }
    const ecn_config& e = cfg.ecn;
    if (m_ecn_on && e.per_queue == queue_threshold::MQ_ECN) {
        // The paper's T_idle: one MTU (1500 B) at the port rate.
        const ps_t t_idle = e.mq_t_idle ? e.mq_t_idle : serialization_ps(1500, m_rate_bps);
        m_mq = &m_mq_state.emplace(quanta, m_rate_bps, e.mq_beta, t_idle);
        m_sched.set_observer(m_mq);
    }
    if (m_ecn_on) {
        const threshold_scales& scales = m_scales.emplace(e.per_queue, quanta, strict, m_mq);
        const ecn_action_params action{e.drop_non_ect, e.mark_on_dequeue};
        // Queues whose test is a step on their own instantaneous occupancy go to step_marking
        // (called only above the port's pass bound), the others to red_marking.
        std::uint8_t step_queues = 0, red_queues = 0;
        int first_step = -1, first_red = -1;
        std::array<double, MAX_QUEUES> k{};
        const std::uint8_t marking = e.marking(m_queues);
        for (unsigned q = 0; q < m_queues; ++q) {
            if (!(marking >> q & 1)) continue;
            const bool step = e.is_step(q);
            (step ? step_queues : red_queues) |= static_cast<std::uint8_t>(1u << q);
            int& first = step ? first_step : first_red;
            if (first < 0) first = int(q);
            k[q] = e.red[q].min_th;
        }
        if (step_queues)
            add_policy(*m_own_policies.emplace_back(std::make_unique<step_marking>(
                step_queues, k, e.packets[unsigned(first_step)], action, scales, m_mq)));
        if (red_queues)
            add_policy(*m_own_policies.emplace_back(std::make_unique<red_marking>(
                red_queues, e.red, e.scope, e.packets[unsigned(first_red)], action, scales, seed,
                name + ".aqm")));
        m_count_pools = e.scope == ecn_scope::POOL;
        m_count_port_bytes = e.scope == ecn_scope::PORT;
    }
    if (cfg.qcn.enabled()) {
        // A CP on each queue a CNPV priority maps to.
        qcn_port_params pp;
        for (unsigned prio = 0; prio < 8; ++prio)
            if (cfg.qcn.priorities >> prio & 1) {
                const unsigned q = cfg.qos.tc_to_queue[cfg.qos.pcp_to_tc[prio]];
                if (q < m_queues) pp.queues = static_cast<std::uint8_t>(pp.queues | 1u << q);
            }
        pp.cnm_priority = cfg.qcn.cnm_priority;
        pp.msdu_octets = cfg.qcn.msdu_octets;
        pp.port = m_index;
        if (pp.queues) {
            auto p = std::make_unique<qcn_congestion_point>(cfg.qcn.params(), pp, seed, name);
            m_qcn = p.get();
            add_policy(*m_own_policies.emplace_back(std::move(p)));
        }
    }
    if (cfg.bcn.enabled()) {
        // A CP on each queue a BCN priority maps to (validate: none of them a QCN queue).
        bcn_port_params pp;
        for (unsigned prio = 0; prio < 8; ++prio)
            if (cfg.bcn.priorities >> prio & 1) {
                const unsigned q = cfg.qos.tc_to_queue[cfg.qos.pcp_to_tc[prio]];
                if (q < m_queues) pp.queues = static_cast<std::uint8_t>(pp.queues | 1u << q);
            }
        pp.message_priority = cfg.bcn.message_priority;
        pp.msdu_octets = cfg.bcn.msdu_octets;
        pp.port = m_index;
        if (pp.queues) {
            auto p = std::make_unique<bcn_congestion_point>(cfg.bcn.params(), pp, seed, name);
            m_bcn = p.get();
            add_policy(*m_own_policies.emplace_back(std::move(p)));
        }
    }
    if (cfg.fera.enabled()) {
        // One advertised rate for the port: every queue feeds it (FERA has no classes).
        const auto all = static_cast<std::uint8_t>((1u << m_queues) - 1);
        auto p = cfg.fera.rcp()
                     ? std::make_unique<fera_congestion_point>(cfg.rcp.params(m_rate_bps), all)
                     : std::make_unique<fera_congestion_point>(cfg.fera.params(m_rate_bps), all);
        m_fera = p.get();
        add_policy(*m_own_policies.emplace_back(std::move(p)));
    }
    if (cfg.phantom.enabled) {
        auto p = std::make_unique<phantom_marking>(
            static_cast<std::uint8_t>((1u << m_queues) - 1), m_rate_bps, cfg.phantom.gamma,
            cfg.phantom.interval, cfg.phantom.threshold_bytes);
        m_phantom = p.get();
        add_policy(*m_own_policies.emplace_back(std::move(p)));
    }
}

void egress_queues::add_gate(egress_gate& g) {
    m_gates.push_back(&g);
    m_gated = true;
}

void egress_queues::add_turn_gate(egress_gate& g) {
    add_gate(g);
    m_starts_at_time = true;
}

void egress_queues::set_emitter(frame_emitter* e) {
    m_emitter = e;
    for (egress_policy* p : m_policies) p->set_emitter(e);
}

void egress_queues::add_policy(egress_policy& p) {
    m_policies.push_back(&p);
    p.set_emitter(m_emitter);
    // The first policy with a bound takes the bounded slot of its sides (the port keeps one
    // bound); the others are called for every frame of their queues, in order.
    const pass_bound b = p.bound();
    const bool bounded = b.value > -std::numeric_limits<double>::infinity() && !m_enqueue_policy &&
                         !m_dequeue_policy;
    if (bounded) {
        m_pass_bound = b.value;
        m_pass_frames = b.frames;
        m_bound_follows_mq = b.follows_mq_ecn && m_mq;
        if (p.enqueue_mask()) {
            m_enqueue_policy = &p;
            m_mark_enqueue_mask = p.enqueue_mask();
        }
        if (p.dequeue_mask()) {
            m_dequeue_policy = &p;
            m_mark_dequeue_mask = p.dequeue_mask();
        }
        if (m_bound_follows_mq) refresh_pass_bound();
        return;
    }
    if (p.enqueue_mask()) {
        m_enqueue_policies.push_back(&p);
        m_enqueue_chain = true;
    }
    if (p.dequeue_mask()) {
        m_dequeue_policies.push_back(&p);
        m_dequeue_chain = true;
    }
}

bool egress_queues::gates_open(unsigned q, std::uint32_t wire, ps_t now) const {
    for (const egress_gate* g : m_gates)
        if (g->open_at(q, wire, now) != now) return false;
    return true;
}

enqueue_verdict egress_queues::enqueue_chain(unsigned q, frame& f, ps_t now, enqueue_verdict v) {
    if (v == enqueue_verdict::DROP) return v;
    for (egress_policy* p : m_enqueue_policies) {
        if (!(p->enqueue_mask() >> q & 1)) continue;
        const enqueue_verdict pv = p->on_enqueue(*this, q, f, now);
        if (pv == enqueue_verdict::DROP) {
            m_drop_reason = p->drop_reason();
            return pv;
        }
        if (pv == enqueue_verdict::MARK) v = pv;
    }
    return v;
}

bool egress_queues::dequeue_chain(unsigned q, frame& f, std::uint32_t wire, ps_t at) {
    bool mark = false;
    for (egress_policy* p : m_dequeue_policies)
        if (p->dequeue_mask() >> q & 1) mark = p->on_dequeue(*this, q, f, wire, at) || mark;
    return mark;
}

void egress_queues::mark_ce(frame& f, unsigned q) {
    // Only ECT frames can carry CE; a frame marked upstream is not counted again.
    if (f.ecn == ecn_codepoint::NOT_ECT || f.ecn == ecn_codepoint::CE) return;
    f.ecn = ecn_codepoint::CE;
    m_cold[q].ce_marked++;
}

void egress_queues::drop(frame& f, unsigned q, drop_cause why, unsigned pg, ps_t at) {
    m_cold[q].drops.add(why);
    m_dropped++;
    m_pool.release(f);
    if (!m_mmu.pg_lossless(pg) || why == drop_cause::HEADROOM_EXHAUSTED ||
        why == drop_cause::PFC_WATCHDOG || why == drop_cause::LINK_DOWN)
        return;
    if (m_lossless_loss.frames++ == 0) {
        m_lossless_loss.first_at = at;
        m_lossless_loss.cause = why;
        m_lossless_loss.pg = static_cast<std::uint8_t>(pg);
        m_lossless_loss.queue = static_cast<std::uint8_t>(q);
    }
}

void egress_queues::collect_tickets(std::vector<mmu_ticket>& out) const {
    for (unsigned q = 0; q < m_queues; ++q)
        for (std::uint32_t i = 0; i < m_queue[q].fifo.size(); ++i)
            out.push_back(m_queue[q].fifo[i].ticket);
}

frame* egress_queues::try_start(ps_t at) {
    // Every gate is part of eligibility, the port shaper's too: the scheduler picks among the
    // heads that may go now, so a pick is always startable (a port gate checked only on the
    // picked head could refuse it while another head passes, and wake the port at the same
    // time for ever).
    // One queue and no MQ-ECN: a FIFO, the scheduler has nothing to decide.
    const int picked = m_use_sched ? m_sched.pick(*this, at) : eligible(0, at) ? 0 : -1;
    if (picked < 0) return nullptr;
    return &start(static_cast<unsigned>(picked), at, false);
}

std::uint32_t egress_queues::discard(unsigned q, drop_cause why) {
    queue_state& s = m_queue[q];
    std::uint32_t n = 0;
    while (!s.fifo.empty()) {
        const entry e = s.fifo.pop_front();
        count_backlog(q, e.f->frame_bytes(), false);
        m_mmu.release(e.ticket);
        drop(*e.f, q, why, e.ticket.pg, e.ready);
        ++n;
    }
    if (n) {
        m_backlogged &= static_cast<std::uint8_t>(~(1u << q));
        if (m_use_sched) m_sched.flushed(q);
    }
    return n;
}

drop_counters egress_queues::drops() const {
    drop_counters d;
    for (unsigned q = 0; q < m_queues; ++q) d += m_cold[q].drops;
    return d;
}

void egress_queues::report_stats(nlohmann::json& out, ps_t now) const {
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
        if (m_ecn_on) j["ecn_threshold_scale"] = threshold_scale(q);
        queues.push_back(std::move(j));
    }
    out["queues"] = std::move(queues);
    if (m_mq)
        out["mq_ecn"] = {{"t_round_us", m_mq->t_round_ps() / 1e6}, {"samples", m_mq->samples()}};
    if (m_qcn) report_qcn(out);
    if (m_bcn) report_bcn(out);
    if (m_fera) report_fera(out, now);
    if (m_credit_queue >= 0) {
        const auto cq = static_cast<unsigned>(m_credit_queue);
        const token_bucket& b = m_credit_gate->bucket();
        out["credit_queue"] = {{"queue", cq},
                               {"rate_bps", b.rate_bps()},
                               {"credits_sent", m_queue[cq].tx_frames},
                               {"credits_dropped", m_cold[cq].drops[drop_cause::CREDIT_DROPPED]},
                               {"tokens_bytes", b.tokens_bytes(now)}};
    }
    if (m_phantom)
        out["phantom_queue"] = {{"frames", m_phantom->queue().frames()},
                                {"marked", m_phantom->queue().marked()},
                                {"counter_bytes", m_phantom->queue().counter_bytes(now)}};
}

void egress_queues::report_fera(nlohmann::json& out, ps_t now) const {
    if (const rcp_rate* r = m_fera->rcp()) {
        const rcp_rate::counters& c = r->stats();
        out["fera"] = {{"law", "rcp"},
                       {"advertised_rate_bps", r->rate_at(now)},
                       {"previous_rate_bps", r->rate_before_update_bps()},
                       {"fb", r->fb()},
                       {"arrival_rate_bps", r->y_bps()},
                       {"q_bytes", r->q_bytes()},
                       {"intervals", c.intervals},
                       {"idle_intervals", c.idle_intervals},
                       {"averagings", c.averagings},
                       {"clamped_max", c.clamped_max},
                       {"clamped_min", c.clamped_min},
                       {"tags_stamped", c.tags_seen},
                       {"tags_lowered", c.tags_lowered}};
        return;
    }
    const fera_cp& cp = m_fera->cp();
    const fera_cp::counters& c = cp.stats();
    out["fera"] = {{"advertised_rate_bps", cp.advertised_bps()},
                   {"previous_rate_bps", cp.previous_bps()},
                   {"rho", cp.rho()},
                   {"arrival_rate_bps", cp.arrival_rate_bps()},
                   {"f", cp.f_last()},
                   {"q_bytes", m_fera->last_queue_bytes()},
                   {"delta_bps", cp.delta_bps()},
                   {"intervals", c.intervals},
                   {"paused_intervals", c.paused_intervals},
                   {"idle_intervals", c.idle_intervals},
                   {"increases_limited", c.increases_limited},
                   {"capacity_bps", cp.capacity_bps()},
                   {"capacity_scalings", c.capacity_scalings},
                   {"clamped_max", c.clamped_max},
                   {"clamped_min", c.clamped_min},
                   {"tags_stamped", c.tags_seen},
                   {"tags_lowered", c.tags_lowered},
                   {"paused_now", m_fera->paused_now()}};
}

void egress_queues::report_qcn(nlohmann::json& out) const {
    nlohmann::json cps = nlohmann::json::array();
    for (unsigned q = 0; q < m_queues; ++q) {
        const qcn_cp* cp = m_qcn->cp(q);
        if (!cp) continue;
        const qcn_cp::counters& c = cp->stats();
        // qFb histogram without its empty tail: index = qFb (0 = no congestion).
        std::size_t last = c.qfb.size();
        while (last > 0 && c.qfb[last - 1] == 0) --last;
        cps.push_back({{"queue", q},
                       {"cpid", m_qcn->cpid(q)},
                       {"frames", c.frames},
                       {"samples", c.samples},
                       {"cnms", c.cnms},
                       {"uncongested_samples", c.uncongested},
                       {"below_quantum_samples", c.below_quantum},
                       {"q_eq_bytes", cp->params().q_eq_bytes},
                       {"w", cp->params().w},
                       {"sample_probability", cp->params().sample_probability},
                       {"qfb_histogram",
                        std::vector<std::uint64_t>(c.qfb.begin(), c.qfb.begin() + long(last))}});
    }
    out["qcn"] = std::move(cps);
}

void egress_queues::report_bcn(nlohmann::json& out) const {
    nlohmann::json cps = nlohmann::json::array();
    for (unsigned q = 0; q < m_queues; ++q) {
        const bcn_cp* cp = m_bcn->cp(q);
        if (!cp) continue;
        const bcn_cp::counters& c = cp->stats();
        // Fb histogram: bins of one unit from FB_MIN, the end bins open, empty ends trimmed.
        const auto& h = m_bcn->fb_histogram(q);
        std::size_t first = 0, last = h.size();
        while (first < last && h[first] == 0) ++first;
        while (last > first && h[last - 1] == 0) --last;
        if (first == last) first = last = 0;
        const std::uint64_t messages = c.negative + c.positive;
        cps.push_back({{"queue", q},
                       {"cpid", m_bcn->cpid(q)},
                       {"frames", c.frames},
                       {"samples", c.samples},
                       {"negative_messages", c.negative},
                       {"positive_messages", c.positive},
                       {"stop_messages", c.stop},
                       {"positive_untagged_samples", c.positive_untagged},
                       {"zero_samples", c.zero},
                       {"fb_abs_mean", messages ? m_bcn->fb_abs_sum(q) / double(messages) : 0.0},
                       {"fb_negative_abs_mean",
                        c.negative ? m_bcn->fb_negative_abs_sum(q) / double(c.negative) : 0.0},
                       {"fb_histogram_first", int(first) + bcn_congestion_point::FB_MIN},
                       {"fb_histogram", std::vector<std::uint64_t>(h.begin() + long(first),
                                                                   h.begin() + long(last))}});
    }
    out["bcn"] = std::move(cps);
}

}  // namespace fabricsim::sw
