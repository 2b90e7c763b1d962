#include "fabricsim/nic/algo/qcn_limiters.h"

#include <algorithm>
#include <stdexcept>

namespace fabricsim::nic {

namespace {

rate_limiter_bank_config bank_config(bank_policy limiters_full) {
    if (limiters_full != bank_policy::SHARE && limiters_full != bank_policy::NONE)
        throw std::invalid_argument("qcn_limiters: limiters_full must be SHARE or NONE");
    rate_limiter_bank_config c;  // next-send-time, unbounded table, no timeout, reset on bind
    c.limiters_full = limiters_full;
    return c;
}

unsigned checked(unsigned limiters) {
    if (limiters == 0) throw std::invalid_argument("qcn_limiters: limiters must be >= 1");
    return limiters;
}

}  // namespace

qcn_limiters::qcn_limiters(const qcn_rp_params& p, unsigned limiters, bank_policy limiters_full)
    : m_line(p.line_rate_bps),
      m_bank(checked(limiters), bank_config(limiters_full)),
      m_rp(limiters, qcn_rp(p)),
      m_held(limiters, 0),
      m_flows(limiters) {
    m_active.reserve(limiters);
    m_scratch.reserve(limiters);
}

int qcn_limiters::on_cnm(ps_t now, std::uint32_t flow, unsigned qfb) {
    const bool had = m_bank.limiter_of(flow) != NONE;
    const std::uint32_t in_use = m_bank.in_use();
    const std::uint64_t shared = m_bank.stats().shared_bindings;
    const int l = m_bank.bind(flow, now);
    if (l == NONE) {
        ++m_stats.ignored_cnms;
        return NONE;
    }
    const auto u = unsigned(l);
    if (!had) {
        m_flows[u].push_back(flow);
        if (m_bank.stats().shared_bindings != shared) {
            ++m_stats.shared_bindings;
        } else {
            ++m_stats.bindings;
            if (m_bank.in_use() != in_use)
                m_active.insert(std::lower_bound(m_active.begin(), m_active.end(), u), u);
            m_stats.peak_in_use = std::max<std::uint32_t>(m_stats.peak_in_use, m_bank.in_use());
        }
    }
    ++m_stats.cnms;
    m_rp[u].on_cnm(now, qfb);
    update(u);
    return l;
}

void qcn_limiters::sent(unsigned l, ps_t now, std::uint32_t wire_bytes, std::uint32_t frame_bytes,
                        bool from_fifo) {
    ++m_stats.limited_frames;
    m_stats.limited_bytes += frame_bytes;
    if (from_fifo) {
        --m_held[l];
        ++m_stats.held_frames;
    }
    // The byte counter first: the gap after this frame is at the rate once it is counted.
    m_rp[l].on_sent(now, frame_bytes);
    m_bank.at(l).set_rate(rate_bps(l));
    m_bank.at(l).sent(wire_bytes, now);
    if (m_rp[l].released() && m_held[l] == 0) free_limiter(l);
}

void qcn_limiters::on_timer(ps_t now) {
    m_scratch = m_active;  // update() may free limiters
    for (const unsigned l : m_scratch) {
        if (m_rp[l].next_timer() > now) continue;
        m_rp[l].on_timer(now);
        update(l);
    }
}

ps_t qcn_limiters::next_timer() const {
    ps_t t = NEVER;
    for (const unsigned l : m_active) t = std::min(t, m_rp[l].next_timer());
    return t;
}

std::uint64_t qcn_limiters::rate_bps(unsigned l) const {
    const double r = m_rp[l].rate_bps();
    return r >= double(m_line) ? m_line : static_cast<std::uint64_t>(r);
}

void qcn_limiters::update(unsigned l) {
    m_bank.at(l).set_rate(rate_bps(l));
    if (m_rp[l].released() && m_held[l] == 0) free_limiter(l);
}

void qcn_limiters::free_limiter(unsigned l) {
    for (const std::uint32_t flow : m_flows[l]) m_bank.release(flow);
    m_stats.unbindings += m_flows[l].size();
    m_flows[l].clear();
    m_active.erase(std::find(m_active.begin(), m_active.end(), l));
    ++m_stats.limiter_releases;
}

qcn_rp::counters qcn_limiters::rp_totals() const {
    qcn_rp::counters s;
    for (const qcn_rp& r : m_rp) {
        const qcn_rp::counters& c = r.stats();
        s.cnms += c.cnms;
        s.decreases += c.decreases;
        s.fast_recovery += c.fast_recovery;
        s.active_increase += c.active_increase;
        s.hyper_increase += c.hyper_increase;
        s.byte_events += c.byte_events;
        s.timer_events += c.timer_events;
        s.target_reductions += c.target_reductions;
        s.releases += c.releases;
    }
    return s;
}

}  // namespace fabricsim::nic
