#include "fabricsim/nic/algo/dcqcn.h"

#include <algorithm>
#include <stdexcept>

namespace fabricsim::nic {

dcqcn_params dcqcn_params::paper(std::uint64_t line_rate_bps) {
    dcqcn_params p;  // the member defaults are the paper set
    p.line_rate_bps = line_rate_bps;
    p.min_rate_bps = std::min<std::uint64_t>(p.min_rate_bps, line_rate_bps);
    return p;
}

dcqcn_params dcqcn_params::mellanox(std::uint64_t line_rate_bps) {
    dcqcn_params p;
    p.line_rate_bps = line_rate_bps;
    p.g = (1024.0 - 1019.0) / 1024.0;  // dce_tcp_g 1019: alpha <- (G/1024) alpha [+ 1 - G/1024]
    p.alpha_period = 1 * PS_PER_US;    // dce_tcp_rtt
    p.alpha_periodic = true;
    p.initial_alpha = 1023.0 / 1024.0;    // initial_alpha_value, 10-bit fraction
    p.increase_period = 300 * PS_PER_US;  // rpg_time_reset
    p.byte_counter = 32767;               // rpg_byte_reset
    p.fast_recovery_steps = 1;            // rpg_threshold
    p.ai_rate_bps = 5'000'000;
    p.hai_rate_bps = 50'000'000;
    p.min_rate_bps = std::min<std::uint64_t>(1'000'000, line_rate_bps);
    p.min_decrease_factor = 0.5;  // rpg_min_dec_fac 50 %
    p.clamp = dcqcn_clamp::AFTER_TIME_INCREASE;
    p.first_cnp_rate_bps = 0;
    p.decrease_period = 4 * PS_PER_US;  // rate_reduce_monitor_period
    p.stage_rule = dcqcn_stage_rule::MELLANOX;
    p.hai_multiplied = false;
    return p;
}

dcqcn_params dcqcn_params::scaled(std::uint64_t line_rate_bps) {
    dcqcn_params p = mellanox(line_rate_bps);
    p.g = 1.0 / 256;
    p.initial_alpha = 1.0;
    p.byte_counter = 0;
    p.ai_rate_bps = line_rate_bps / 5000;  // 5 Mb/s x line / 25 Gb/s
    p.hai_rate_bps = line_rate_bps / 500;  // 50 Mb/s x line / 25 Gb/s
    p.min_rate_bps = std::min<std::uint64_t>(1'000'000'000, line_rate_bps);
    return p;
}

std::optional<dcqcn_params::error> dcqcn_params::validate() const {
    auto bad = [](const char* field, const char* reason) {
        return std::optional<error>(error{field, reason});
    };
    if (line_rate_bps == 0) return bad("line_rate_bps", "must be > 0");
    if (!(g > 0.0 && g <= 1.0)) return bad("g", "must be in (0, 1]");
    if (alpha_period == 0) return bad("alpha_period", "must be > 0");
    if (!(initial_alpha >= 0.0 && initial_alpha <= 1.0))
        return bad("initial_alpha", "must be in [0, 1]");
    if (increase_period == 0) return bad("increase_period", "must be > 0");
    // F = 0 means "no fast recovery" under the paper rule (QCN-AIMD); the other rules count
    // stages from 1 (rpg_threshold) and would skip AI or never leave HAI.
    if (fast_recovery_steps == 0 && stage_rule != dcqcn_stage_rule::PAPER)
        return bad("fast_recovery_steps", "must be >= 1 with the ns3rdma and mellanox rules");
    if (min_rate_bps == 0) return bad("min_rate_bps", "must be > 0");
    if (min_rate_bps > line_rate_bps) return bad("min_rate_bps", "must not exceed the line rate");
    if (!(min_decrease_factor >= 0.0 && min_decrease_factor <= 1.0))
        return bad("min_decrease_factor", "must be in [0, 1]");
    if (first_cnp_rate_bps != 0 &&
        (first_cnp_rate_bps < min_rate_bps || first_cnp_rate_bps > line_rate_bps))
        return bad("first_cnp_rate_bps", "must be 0 (keep) or between min rate and line rate");
    return std::nullopt;
}

dcqcn_rp::dcqcn_rp(const dcqcn_params& p)
    : m_p(p),
      m_line(static_cast<double>(p.line_rate_bps)),
      m_rc(m_line),
      m_rt(m_line),
      m_alpha(p.initial_alpha) {
    if (auto e = p.validate())
        throw std::invalid_argument("dcqcn_params." + e->field + ": " + e->reason);
}

ps_t dcqcn_rp::next_timer() const {
    return std::min({m_next_alpha, m_next_increase, m_next_check});
}

ps_t dcqcn_rp::next_rate_change() const {
    return std::min(m_next_increase, m_next_check);
}

void dcqcn_rp::advance(ps_t now) {
    for (;;) {
        const ps_t t = next_timer();
        if (t == NEVER || t > now) return;
        if (m_next_alpha == t)
            alpha_tick(t, now);
        else if (m_next_increase == t)
            increase_tick(t);
        else
            check_tick(t);
    }
}

void dcqcn_rp::on_timer(ps_t now) {
    advance(now);
}

void dcqcn_rp::alpha_tick(ps_t t, ps_t now) {
    const double decayed = (1.0 - m_p.g) * m_alpha;
    if (m_cnp_in_alpha_period) {
        m_alpha = decayed + m_p.g;
        m_cnp_in_alpha_period = false;
    } else if (decayed == m_alpha) {
        // Fixed point (0 or the smallest subnormal): the periods due up to `now` change
        // nothing (only on_cnp adds to alpha), so skip them instead of looping through a long
        // idle time.
        m_next_alpha = t + ((now - t) / m_p.alpha_period + 1) * m_p.alpha_period;
        return;
    } else {
        m_alpha = decayed;
    }
    m_next_alpha = t + m_p.alpha_period;
}

void dcqcn_rp::increase_tick(ps_t t) {
    ++m_t;
    m_next_increase = t + m_p.increase_period;
    increase();
}

void dcqcn_rp::check_tick(ps_t t) {
    // m_next_check is set only while a cut is pending.
    m_cut_pending = false;
    m_next_check = NEVER;
    cut(t);
}

void dcqcn_rp::cut(ps_t t) {
    if (m_p.clamp == dcqcn_clamp::ALWAYS || (m_p.clamp == dcqcn_clamp::AFTER_TIME_INCREASE && m_t))
        m_rt = m_rc;
    const double floor =
        std::max(m_rc * m_p.min_decrease_factor, static_cast<double>(m_p.min_rate_bps));
    m_rc = std::max(m_rc * (1.0 - m_alpha / 2), floor);
    m_t = 0;
    m_bc = 0;
    m_bytes = 0;
    m_next_increase = t + m_p.increase_period;
    ++m_stats.cuts;
}

void dcqcn_rp::increase() {
    const std::uint32_t f = m_p.fast_recovery_steps;
    const std::uint32_t lo = std::min(m_t, m_bc);
    const std::uint32_t hi = std::max(m_t, m_bc);
    bool fast = false;
    bool hyper = false;
    std::uint32_t i = 0;
    switch (m_p.stage_rule) {
        case dcqcn_stage_rule::PAPER:
            fast = hi <= f;
            hyper = !fast && lo > f;
            i = lo - f;
            break;
        case dcqcn_stage_rule::NS3RDMA:
            fast = hi < f;
            hyper = !fast && lo >= f;
            i = lo - f + 1;
            break;
        case dcqcn_stage_rule::MELLANOX: {
            const std::uint32_t s = m_t + m_bc - 1;  // events before this one
            fast = s < f;
            hyper = s > f;
            i = s - f;
            break;
        }
    }
    if (fast) {
        ++m_stats.fast_recovery;
    } else if (hyper) {
        m_rt +=
            static_cast<double>(m_p.hai_multiplied ? i : 1) * static_cast<double>(m_p.hai_rate_bps);
        ++m_stats.hyper;
    } else {
        m_rt += static_cast<double>(m_p.ai_rate_bps);
        ++m_stats.additive;
    }
    m_rt = std::min(m_rt, m_line);
    m_rc = (m_rt + m_rc) / 2;
    // Halving towards RT in floating point can stall one ulp short of it.
    if (m_rt - m_rc < 1.0) m_rc = m_rt;
    if (at_line_rate()) m_next_increase = NEVER;
}

void dcqcn_rp::on_cnp(ps_t now) {
    advance(now);
    ++m_stats.cnps;
    const bool first = !m_active;
    if (first) {
        m_active = true;
        m_anchor = now;
        m_alpha = m_p.initial_alpha;
        if (m_p.first_cnp_rate_bps) m_rc = m_rt = static_cast<double>(m_p.first_cnp_rate_bps);
        if (m_p.alpha_periodic) m_next_alpha = now + m_p.alpha_period;
    }
    if (m_p.decrease_period == 0) {
        cut(now);
    } else if (!m_cut_pending) {
        m_cut_pending = true;
        // The next point of the grid anchor + k * period after now (a check at now already ran).
        m_next_check =
            m_anchor + ((now - m_anchor) / m_p.decrease_period + 1) * m_p.decrease_period;
    }
    if (m_p.alpha_periodic) {
        // The first CNP only sets the initial alpha (HPCC clears CNP_arrived after it).
        if (!first) m_cnp_in_alpha_period = true;
    } else {
        m_alpha = (1.0 - m_p.g) * m_alpha + m_p.g;
        m_next_alpha = now + m_p.alpha_period;
    }
}

void dcqcn_rp::on_bytes_sent(std::uint64_t bytes, ps_t now) {
    advance(now);
    // Before the first CNP, and at line rate, byte events change nothing (a cut resets BC).
    if (!m_active || m_p.byte_counter == 0 || at_line_rate()) return;
    m_bytes += bytes;
    if (m_bytes < m_p.byte_counter) return;
    m_bytes = 0;
    ++m_bc;
    increase();
}

bool cnp_pacer::send(ps_t now) {
    m_sent_any = true;
    m_pending = false;
    m_last = now;
    ++m_stats.cnps;
    return true;
}

bool cnp_pacer::on_marked_packet(ps_t now) {
    ++m_stats.marked;
    if (!m_sent_any || now - m_last >= m_interval) {
        // A remembered mark whose on_due() was not called yet is covered by this CNP.
        if (m_pending) ++m_stats.coalesced;
        return send(now);
    }
    if (m_pending || !m_remember)
        ++m_stats.coalesced;
    else
        m_pending = true;
    return false;
}

bool cnp_pacer::on_due(ps_t now) {
    if (!m_pending || now < m_last + m_interval) return false;
    ++m_stats.deferred;
    return send(now);
}

}  // namespace fabricsim::nic
