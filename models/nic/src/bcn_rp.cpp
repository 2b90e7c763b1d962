#include "fabricsim/nic/algo/bcn_rp.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace fabricsim::nic {

bcn_rp_params bcn_rp_params::thesis_default(std::uint64_t line_rate_bps) {
    bcn_rp_params p;
    p.line_rate_bps = line_rate_bps;
    p.min_rate_bps = std::min(p.min_rate_bps, line_rate_bps);
    return p;
}

std::optional<bcn_rp_params::error> bcn_rp_params::validate() const {
    auto bad = [](const char* field, const char* reason) {
        return std::optional<error>(error{field, reason});
    };
    if (line_rate_bps == 0) return bad("line_rate_bps", "must be > 0");
    if (!(g_i > 0.0 && std::isfinite(g_i))) return bad("g_i", "must be > 0");
    if (!(g_d > 0.0 && g_d < 1.0)) return bad("g_d", "must be in (0, 1)");
    if (!(r_u_bps > 0.0 && std::isfinite(r_u_bps))) return bad("r_u_bps", "must be > 0");
    if (min_rate_bps == 0) return bad("min_rate_bps", "must be > 0");
    if (min_rate_bps > line_rate_bps) return bad("min_rate_bps", "must not exceed the line rate");
    if (initial_rate_bps != 0 &&
        (initial_rate_bps < min_rate_bps || initial_rate_bps > line_rate_bps))
        return bad("initial_rate_bps", "must be 0 (line rate) or between min rate and line rate");
    if (!(min_decrease_factor > 0.0 && min_decrease_factor < 1.0))
        return bad("min_decrease_factor", "must be in (0, 1)");
    return std::nullopt;
}

bcn_rp::bcn_rp(const bcn_rp_params& p) : m_p(p), m_line(static_cast<double>(p.line_rate_bps)) {
    if (auto e = p.validate())
        throw std::invalid_argument("bcn_rp_params." + e->field + ": " + e->reason);
    m_rate = p.initial_rate_bps ? static_cast<double>(p.initial_rate_bps) : m_line;
}

void bcn_rp::install(std::uint32_t cpid) {
    if (!m_active) ++m_stats.installs;
    m_active = true;
    m_cpid = cpid;
}

double bcn_rp::on_feedback(double fb, std::uint32_t cpid) {
    if (fb < 0) {
        install(cpid);
        const double factor = std::max(1.0 - m_p.g_d * -fb, m_p.min_decrease_factor);
        m_rate = std::max(m_rate * factor, static_cast<double>(m_p.min_rate_bps));
        ++m_stats.decreases;
    } else if (fb > 0 && m_active && cpid == m_cpid) {
        m_rate = std::min(m_rate + m_p.g_i * fb * m_p.r_u_bps, m_line);
        ++m_stats.increases;
        if (m_rate >= m_line) {
            m_active = false;
            ++m_stats.releases;
        }
    } else {
        ++m_stats.ignored;
    }
    return m_rate;
}

double bcn_rp::on_stop(std::uint32_t cpid) {
    install(cpid);
    m_rate = static_cast<double>(m_p.min_rate_bps);
    ++m_stats.stops;
    return m_rate;
}

}  // namespace fabricsim::nic
