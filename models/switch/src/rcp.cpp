#include "fabricsim/switch/algo/rcp.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "fabricsim/switch/algo/fera.h"

namespace fabricsim::sw {

std::optional<rcp_params::error> rcp_params::validate() const {
    auto bad = [](const char* field, const char* reason) {
        return std::optional<error>(error{field, reason});
    };
    if (capacity_bps == 0) return bad("capacity_bps", "must be > 0");
    if (!(alpha >= 0.0 && std::isfinite(alpha))) return bad("alpha", "must be >= 0");
    if (!(beta >= 0.0 && std::isfinite(beta))) return bad("beta", "must be >= 0");
    if (interval == 0) return bad("interval", "must be > 0");
    if (d0 == 0) return bad("d0", "must be > 0");
    if (!(averaging_factor > 0.0 && averaging_factor <= 1.0))
        return bad("averaging_factor", "must be in (0, 1]");
    if (min_rate_bps > capacity_bps) return bad("min_rate_bps", "must be <= the port rate");
    if (initial_rate_bps > capacity_bps)
        return bad("initial_rate_bps", "must be <= the port rate (0 = the port rate)");
    if (initial_rate_bps && static_cast<double>(initial_rate_bps) < min_rate())
        return bad("initial_rate_bps", "must be >= min_rate");
    return std::nullopt;
}

double rcp_params::min_rate() const {
    return min_rate_bps ? static_cast<double>(min_rate_bps)
                        : static_cast<double>(capacity_bps) / 1000.0;
}

double rcp_params::initial_rate() const {
    return static_cast<double>(initial_rate_bps ? initial_rate_bps : capacity_bps);
}

namespace {
const rcp_params& checked(const rcp_params& p) {
    if (const auto e = p.validate())
        throw std::invalid_argument("rcp_params." + e->field + ": " + e->reason);
    return p;
}
}  // namespace

rcp_rate::rcp_rate(const rcp_params& p, ps_t start)
    : m_p(checked(p)),
      m_capacity(static_cast<double>(p.capacity_bps)),
      m_min(p.min_rate()),
      m_rate(p.initial_rate()),
      m_rate_t(m_rate),
      m_last_close(start) {}

unsigned rcp_rate::averaging_points() const {
    switch (m_p.variant) {
        case rcp_variant::AP:
            return 1;
        case rcp_variant::AP2:
            return 2;
        default:
            return 0;
    }
}

unsigned rcp_rate::due_points(ps_t now) const {
    const unsigned n = averaging_points();
    if (m_first || now <= m_last_close) return 0;  // no update yet: nothing to average
    // Point k (1..n) is at last_update + k·T/(n+1), exact in ps (rounded down).
    const ps_t elapsed = now - m_last_close;
    unsigned due = 0;
    for (unsigned k = 1; k <= n; ++k)
        if (elapsed >= m_p.interval * k / (n + 1)) due = k;
    return due;
}

double rcp_rate::average(double r) const {
    return (1.0 - m_p.averaging_factor) * r + m_p.averaging_factor * m_rate_t;
}

double rcp_rate::rate_at(ps_t now) const {
    double r = m_rate;
    for (unsigned k = m_applied, due = due_points(now); k < due; ++k) r = average(r);
    return r;
}

void rcp_rate::settle(ps_t now) {
    for (const unsigned due = due_points(now); m_applied < due; ++m_applied) {
        m_rate = average(m_rate);
        ++m_stats.averagings;
    }
}

double rcp_rate::advertised_bps(ps_t now) {
    settle(now);
    return m_rate;
}

std::uint64_t rcp_rate::mark(std::uint64_t tag_bps, ps_t now) {
    settle(now);
    ++m_stats.tags_seen;
    const std::uint64_t t = fera_tag_min(tag_bps, m_rate);
    if (t < tag_bps) ++m_stats.tags_lowered;
    return t;
}

double rcp_rate::on_interval(ps_t now, std::uint64_t queue_bytes) {
    if (now <= m_last_close) return m_rate;
    settle(now);
    const double elapsed_s = static_cast<double>(now - m_last_close) / 1e12;
    const double d0_s = static_cast<double>(m_p.d0) / 1e12;
    const double gain = static_cast<double>(m_p.interval) / static_cast<double>(m_p.d0);
    m_y = 8.0 * static_cast<double>(m_arrived_bytes) / elapsed_s;
    m_q = queue_bytes;
    const double fb = (m_p.alpha * (m_capacity - m_y) -
                       m_p.beta * 8.0 * static_cast<double>(queue_bytes) / d0_s) /
                      m_capacity;
    const double fb_prev = m_first ? fb : m_fb;
    const double w = m_p.variant == rcp_variant::PD ? 0.5 * fb + 0.25 * (fb - fb_prev) : fb;
    double r = m_rate * (1.0 + gain * w);
    if (r > m_capacity) {
        r = m_capacity;
        ++m_stats.clamped_max;
    } else if (!(r >= m_min)) {
        r = m_min;
        ++m_stats.clamped_min;
    }
    if (m_arrived_bytes == 0) ++m_stats.idle_intervals;
    ++m_stats.intervals;
    m_rate_t = m_rate;
    m_rate = r;
    m_fb = fb;
    m_first = false;
    m_applied = 0;
    m_arrived_bytes = 0;
    m_last_close = now;
    return m_rate;
}

}  // namespace fabricsim::sw
