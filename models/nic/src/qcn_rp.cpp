#include "fabricsim/nic/algo/qcn_rp.h"

#include <algorithm>
#include <stdexcept>

namespace fabricsim::nic {

qcn_rp_params qcn_rp_params::standard(std::uint64_t line_rate_bps) {
    qcn_rp_params p;  // the member defaults are the MIB's
    p.line_rate_bps = line_rate_bps;
    p.min_rate_bps = std::min(p.min_rate_bps, line_rate_bps);
    return p;
}

qcn_rp_params qcn_rp_params::thesis(std::uint64_t line_rate_bps) {
    qcn_rp_params p = standard(line_rate_bps);
    p.byte_counter_only = true;
    p.byte_reset = 100 * 1500;
    p.threshold = 6;
    p.hai_rate_bps = 0;
    p.target_reduction = false;
    p.keep_target_in_first_cycle = false;
    return p;
}

qcn_rp_params qcn_rp_params::thesis_aimd(std::uint64_t line_rate_bps) {
    qcn_rp_params p = thesis(line_rate_bps);
    p.aimd = true;
    return p;
}

std::optional<qcn_rp_params::error> qcn_rp_params::validate() const {
    auto bad = [](const char* field, const char* reason) {
        return std::optional<error>(error{field, reason});
    };
    if (line_rate_bps == 0) return bad("line_rate_bps", "must be > 0");
    if (!(gd > 0.0 && gd <= 1.0)) return bad("gd", "must be in (0, 1]");
    if (time_reset == 0 && !byte_counter_only)
        return bad("time_reset", "must be > 0 (or byte_counter_only)");
    if (byte_reset == 0) return bad("byte_reset", "must be > 0");
    if (threshold == 0) return bad("threshold", "must be >= 1");
    if (min_rate_bps == 0) return bad("min_rate_bps", "must be > 0");
    if (min_rate_bps > line_rate_bps) return bad("min_rate_bps", "must not exceed the line rate");
    if (!(min_decrease_factor >= 0.0 && min_decrease_factor <= 1.0))
        return bad("min_decrease_factor", "must be in [0, 1]");
    if (!(averaging_factor > 0.0 && averaging_factor <= 1.0))
        return bad("averaging_factor", "must be in (0, 1]");
    return std::nullopt;
}

qcn_rp::qcn_rp(const qcn_rp_params& p)
    : m_p(p), m_line(static_cast<double>(p.line_rate_bps)), m_rc(m_line), m_rt(m_line) {
    if (auto e = p.validate())
        throw std::invalid_argument("qcn_rp_params." + e->field + ": " + e->reason);
}

void qcn_rp::advance(ps_t now) {
    // increase_event() moves the deadline forward or releases (NEVER).
    while (m_next_timer <= now) increase_event(false, m_next_timer);
}

void qcn_rp::release() {
    m_stage = qcn_stage::RELEASED;
    m_rc = m_rt = m_line;
    m_byte_stage = m_time_stage = 0;
    m_next_timer = NEVER;
    ++m_stats.releases;
}

void qcn_rp::on_cnm(ps_t now, unsigned qfb) {
    advance(now);
    ++m_stats.cnms;
    qfb = std::min(qfb, 63u);
    const bool fresh = m_stage == qcn_stage::RELEASED;
    const bool first_cycle = m_byte_stage == 0;
    if (!(m_p.keep_target_in_first_cycle && first_cycle)) m_rt = m_rc;
    if (fresh || !first_cycle || m_p.reload_byte_counter_in_first_cycle)
        m_bytes_left = m_p.byte_reset;
    if (qfb > 0) {
        const double floor =
            std::max(m_rc * m_p.min_decrease_factor, static_cast<double>(m_p.min_rate_bps));
        m_rc = std::max(m_rc * (1.0 - m_p.gd * qfb), floor);
        ++m_stats.decreases;
    }
    if (m_p.aimd) m_rt = m_rc;
    m_byte_stage = m_time_stage = 0;
    m_next_timer = m_p.byte_counter_only ? NEVER : now + m_p.time_reset;
    m_stage = m_p.aimd ? qcn_stage::ACTIVE_INCREASE : qcn_stage::FAST_RECOVERY;
}

void qcn_rp::on_sent(ps_t now, std::uint64_t bytes) {
    advance(now);
    if (released()) return;
    if (bytes < m_bytes_left) {
        m_bytes_left -= bytes;
        return;
    }
    increase_event(true, now);
}

qcn_stage qcn_rp::select(bool byte_event) const {
    const std::uint32_t thr = m_p.threshold;
    const unsigned at = (m_byte_stage >= thr) + (m_time_stage >= thr);
    const qcn_stage both = at == 0   ? qcn_stage::FAST_RECOVERY
                           : at == 1 ? qcn_stage::ACTIVE_INCREASE
                                     : qcn_stage::HYPER_INCREASE;
    if (m_p.stage_rule == qcn_stage_rule::BOTH_COUNTERS) return both;
    switch (m_stage) {
        case qcn_stage::FAST_RECOVERY:
            if ((byte_event ? m_byte_stage : m_time_stage) < thr) return qcn_stage::FAST_RECOVERY;
            return at == 2 ? qcn_stage::HYPER_INCREASE : qcn_stage::ACTIVE_INCREASE;
        case qcn_stage::ACTIVE_INCREASE:
            if (byte_event) return qcn_stage::ACTIVE_INCREASE;
            return at == 2 ? qcn_stage::HYPER_INCREASE : qcn_stage::ACTIVE_INCREASE;
        case qcn_stage::HYPER_INCREASE:
        case qcn_stage::RELEASED:
            break;
    }
    return qcn_stage::HYPER_INCREASE;
}

void qcn_rp::increase_event(bool byte_event, ps_t t) {
    const bool halve = m_p.halve_in_hai && m_stage == qcn_stage::HYPER_INCREASE;
    if (byte_event) {
        ++m_byte_stage;
        ++m_stats.byte_events;
        m_bytes_left = halve ? m_p.byte_reset / 2 : m_p.byte_reset;
    } else {
        ++m_time_stage;
        ++m_stats.timer_events;
        m_next_timer = t + (halve ? m_p.time_reset / 2 : m_p.time_reset);
    }
    if (m_p.aimd) {
        m_rc = std::min(m_rc + static_cast<double>(m_p.ai_rate_bps), m_line);
        m_rt = m_rc;
        ++m_stats.active_increase;
        if (at_line_rate()) release();
        return;
    }
    const qcn_stage next = select(byte_event);
    double increase = 0;
    if (next == qcn_stage::ACTIVE_INCREASE) {
        increase = static_cast<double>(m_p.ai_rate_bps);
        ++m_stats.active_increase;
    } else if (next == qcn_stage::HYPER_INCREASE) {
        const std::uint32_t i = std::min(m_byte_stage, m_time_stage) - m_p.threshold + 1;
        increase = static_cast<double>(i) * static_cast<double>(m_p.hai_rate_bps);
        ++m_stats.hyper_increase;
    } else {
        ++m_stats.fast_recovery;
    }
    if (m_p.target_reduction && (m_byte_stage == 1 || m_time_stage == 1) && m_rt > 10 * m_rc) {
        m_rt /= 8;
        ++m_stats.target_reductions;
    } else {
        m_rt += increase;
    }
    m_rt = std::min(m_rt, m_line);
    // With a = 1/2 both products are exact: the same as (CR + TR)/2.
    const double a = m_p.averaging_factor;
    m_rc = (1.0 - a) * m_rc + a * m_rt;
    if (m_rc < m_rt && m_rt - m_rc < 1.0) m_rc = m_rt;
    m_rc = std::min(m_rc, m_line);
    m_stage = next;
    if (at_line_rate()) release();
}

}  // namespace fabricsim::nic
