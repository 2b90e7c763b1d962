#include "fabricsim/nic/algo/bcn_limiters.h"

#include <algorithm>
#include <stdexcept>

namespace fabricsim::nic {

namespace {

rate_limiter_bank_config bank_config(bank_policy limiters_full) {
    if (limiters_full != bank_policy::SHARE && limiters_full != bank_policy::NONE)
        throw std::invalid_argument("bcn_limiters: limiters_full must be SHARE or NONE");
    rate_limiter_bank_config c;  // next-send-time, unbounded table, no timeout, reset on bind
    c.limiters_full = limiters_full;
    return c;
}

unsigned checked(unsigned limiters, ps_t stop_silence) {
    if (limiters == 0) throw std::invalid_argument("bcn_limiters: limiters must be >= 1");
    if (stop_silence == 0) throw std::invalid_argument("bcn_limiters: stop_silence must be > 0");
    return limiters;
}

void add(bcn_rp::counters& s, const bcn_rp::counters& c) {
    s.increases += c.increases;
    s.decreases += c.decreases;
    s.stops += c.stops;
    s.ignored += c.ignored;
    s.installs += c.installs;
    s.releases += c.releases;
}

}  // namespace

bcn_limiters::bcn_limiters(const bcn_rp_params& p, unsigned limiters, bank_policy limiters_full,
                           ps_t stop_silence, std::uint64_t seed)
    : m_p(p),
      m_line(p.line_rate_bps),
      m_stop_silence(stop_silence),
      m_rng(seed, "bcn_limiters"),
      m_bank(checked(limiters, stop_silence), bank_config(limiters_full)),
      m_rp(limiters, bcn_rp(p)),
      m_resume(limiters, 0),
      m_held(limiters, 0),
      m_flows(limiters) {
    m_active.reserve(limiters);
}

int bcn_limiters::bind(ps_t now, std::uint32_t flow, bool positive) {
    const int have = m_bank.limiter_of(flow);
    if (have != NONE) return have;
    if (positive) return NONE;  // only a negative message (or STOP, or a frame) installs
    const std::uint32_t in_use = m_bank.in_use();
    const std::uint64_t shared = m_bank.stats().shared_bindings;
    const int l = m_bank.bind(flow, now);
    if (l == NONE) return NONE;
    const auto u = unsigned(l);
    m_flows[u].push_back(flow);
    if (m_bank.stats().shared_bindings != shared) {
        ++m_stats.shared_bindings;
    } else {
        ++m_stats.bindings;
        if (m_bank.in_use() != in_use) {
            add(m_retired, m_rp[u].stats());
            m_rp[u] = bcn_rp(m_p);  // a fresh regulator (at the initial rate, not installed)
            m_resume[u] = 0;
            m_active.insert(std::lower_bound(m_active.begin(), m_active.end(), u), u);
            m_bank.at(u).set_rate(rate_bps(u));
        }
        m_stats.peak_in_use = std::max<std::uint32_t>(m_stats.peak_in_use, m_bank.in_use());
    }
    return l;
}

int bcn_limiters::on_message(ps_t now, std::uint32_t flow, std::uint32_t cpid, double fb) {
    const int l = bind(now, flow, fb > 0);
    if (l == NONE) {
        ++m_stats.ignored_messages;
        return NONE;
    }
    ++m_stats.messages;
    m_rp[unsigned(l)].on_feedback(fb, cpid);
    update(unsigned(l));
    return l;
}

int bcn_limiters::on_stop(ps_t now, std::uint32_t flow, std::uint32_t cpid) {
    const int l = bind(now, flow, false);
    if (l == NONE) {
        ++m_stats.ignored_messages;
        return NONE;
    }
    const auto u = unsigned(l);
    ++m_stats.messages;
    m_rp[u].on_stop(cpid);
    const double silence = (0.5 + m_rng.uniform()) * static_cast<double>(m_stop_silence);
    m_resume[u] = std::max(m_resume[u], now + static_cast<ps_t>(silence));
    update(u);
    return l;
}

int bcn_limiters::limiter_for_frame(ps_t now, std::uint32_t flow) {
    const int l = m_bank.limiter_of(flow);
    if (l != NONE || m_p.initial_rate_bps == 0) return l;
    return bind(now, flow, false);
}

void bcn_limiters::sent(unsigned l, ps_t now, std::uint32_t wire_bytes, std::uint32_t frame_bytes,
                        bool from_fifo) {
    ++m_stats.limited_frames;
    m_stats.limited_bytes += frame_bytes;
    if (m_rp[l].active()) ++m_stats.tagged_frames;
    if (from_fifo) {
        --m_held[l];
        ++m_stats.held_frames;
    }
    m_bank.at(l).sent(wire_bytes, now);
    if (m_held[l] == 0) update(l);
}

std::uint64_t bcn_limiters::rate_bps(unsigned l) const {
    const double r = m_rp[l].rate_bps();
    return r >= double(m_line) ? m_line : static_cast<std::uint64_t>(r);
}

void bcn_limiters::update(unsigned l) {
    m_bank.at(l).set_rate(rate_bps(l));
    if (!m_rp[l].active() && rate_bps(l) >= m_line && m_held[l] == 0 && m_p.initial_rate_bps == 0 &&
        !m_flows[l].empty())
        free_limiter(l);
}

void bcn_limiters::free_limiter(unsigned l) {
    for (const std::uint32_t flow : m_flows[l]) m_bank.release(flow);
    m_stats.unbindings += m_flows[l].size();
    m_flows[l].clear();
    m_active.erase(std::find(m_active.begin(), m_active.end(), l));
    ++m_stats.limiter_releases;
}

bcn_rp::counters bcn_limiters::rp_totals() const {
    bcn_rp::counters s = m_retired;
    for (const bcn_rp& r : m_rp) add(s, r.stats());
    return s;
}

}  // namespace fabricsim::nic
