#include "fabricsim/switch/algo/fera.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace fabricsim::sw {

fera_params fera_params::thesis_default(std::uint64_t capacity_bps, double initial_flows,
                                        std::uint32_t packet_bytes) {
    fera_params p;
    p.capacity_bps = capacity_bps;
    p.interval = 1 * PS_PER_MS;
    p.initial_flows = initial_flows;
    p.q_eq_bytes = 16ull * packet_bytes;
    p.q_sc_bytes = 80ull * packet_bytes;
    p.control = fera_queue_control::HYPERBOLIC;
    p.a = 1.1;
    p.b = 1.002;
    p.c = 0.1;
    p.gamma = 0.99;
    return p;
}

fera_params fera_params::analysis(std::uint64_t capacity_bps, double k, double initial_flows,
                                  std::uint32_t packet_bytes) {
    fera_params p = thesis_default(capacity_bps, initial_flows, packet_bytes);
    p.control = fera_queue_control::LINEAR;
    p.k = k;
    p.gamma = 1.0;
    return p;
}

double fera_params::stability_factor() const {
    // α·Q_eq-ratio in bytes: C·T/8 bytes per interval over Q_eq bytes (P_m cancels).
    const double alpha_bytes =
        static_cast<double>(capacity_bps) / 8.0 * static_cast<double>(interval) / 1e12;
    double slope = k;
    switch (control) {
        case fera_queue_control::LINEAR:
            break;
        case fera_queue_control::MULTISTAGE:
            slope = k * stages;
            break;
        case fera_queue_control::HYPERBOLIC:
            slope = std::max((a - 1) / a, (b - 1) / b);
            break;
    }
    return alpha_bytes * slope / static_cast<double>(q_eq_bytes);
}

std::optional<fera_params::error> fera_params::stability() const {
    const double x = stability_factor();
    if (x < 1.0) return std::nullopt;
    const char* field = "k";
    if (control == fera_queue_control::HYPERBOLIC) field = (a - 1) / a >= (b - 1) / b ? "a" : "b";
    char reason[160];
    std::snprintf(reason, sizeof reason,
                  "alpha*k/q_eq = %.4g >= 1 (alpha = capacity*interval/8 bytes): the queue may "
                  "overshoot Q_eq (seed-003 §2 A)",
                  x);
    return error{field, reason};
}

std::optional<fera_params::error> fera_params::validate() const {
    auto bad = [](const char* field, const char* reason) {
        return std::optional<error>(error{field, reason});
    };
    if (capacity_bps == 0) return bad("capacity_bps", "must be > 0");
    if (interval == 0) return bad("interval", "must be > 0");
    if (!(initial_flows >= 1.0 && std::isfinite(initial_flows)))
        return bad("initial_flows", "must be >= 1 (r_0 = C/N_0 <= C)");
    if (q_eq_bytes == 0) return bad("q_eq_bytes", "must be > 0");
    if (q_sc_bytes < q_eq_bytes) return bad("q_sc_bytes", "must be >= q_eq_bytes");
    if (control != fera_queue_control::HYPERBOLIC && !(k > 0.0 && std::isfinite(k)))
        return bad("k", "must be > 0");
    if (control == fera_queue_control::HYPERBOLIC) {
        if (!(a > 1.0 && std::isfinite(a))) return bad("a", "must be > 1");
        if (!(b >= 1.0 && std::isfinite(b))) return bad("b", "must be >= 1");
    }
    if (!(c > 0.0 && c <= 1.0)) return bad("c", "must be in (0, 1]");
    if (control == fera_queue_control::MULTISTAGE && stages == 0)
        return bad("stages", "must be >= 1");
    if (!(lambda > 0.0 && lambda <= 1.0)) return bad("lambda", "must be in (0, 1]");
    if (!(gamma > 0.0 && gamma <= 1.0)) return bad("gamma", "must be in (0, 1]");
    if (delta0_bps != 0) {
        if (!(eta > 1.0 && std::isfinite(eta))) return bad("eta", "must be > 1");
        if (delta_min_bps == 0) return bad("delta_min_bps", "must be > 0");
        if (delta_min_bps > delta0_bps) return bad("delta_min_bps", "must be <= delta0_bps");
    }
    if (min_rate_bps > capacity_bps) return bad("min_rate_bps", "must not exceed capacity_bps");
    if (max_rate_bps != 0 && max_rate_bps < min_rate_bps)
        return bad("max_rate_bps", "must be 0 (capacity) or >= min_rate_bps");
    if (strict_stability) {
        if (auto e = stability()) return e;
    }
    return std::nullopt;
}

fera_cp::fera_cp(const fera_params& p, ps_t start)
    : m_p(p),
      m_capacity(static_cast<double>(p.capacity_bps)),
      m_prev_capacity(m_capacity),
      m_delta(static_cast<double>(p.delta0_bps)),
      m_last_close(start) {
    if (auto e = p.validate())
        throw std::invalid_argument("fera_params." + e->field + ": " + e->reason);
    m_rate = std::max(m_capacity / p.initial_flows, static_cast<double>(p.min_rate_bps));
    if (p.max_rate_bps) m_rate = std::min(m_rate, static_cast<double>(p.max_rate_bps));
    m_prev_rate = m_rate;
}

double fera_cp::queue_control(double q) const {
    const double qeq = static_cast<double>(m_p.q_eq_bytes);
    double f = 1.0;
    switch (m_p.control) {
        case fera_queue_control::LINEAR:
            f = 1.0 - m_p.k * (q - qeq) / qeq;
            break;
        case fera_queue_control::HYPERBOLIC:
            f = q <= qeq ? m_p.b * qeq / ((m_p.b - 1.0) * q + qeq)
                         : m_p.a * qeq / ((m_p.a - 1.0) * q + qeq);
            break;
        case fera_queue_control::MULTISTAGE:
            if (q <= qeq) {
                f = 1.0 - m_p.k * (q - qeq) / qeq;
            } else if (m_p.multistage_continuous) {
                // Sum the stages q crosses: slope k·s on (s·Q_eq, (s+1)·Q_eq], the last open.
                double above = q - qeq;
                for (std::uint32_t s = 1; above > 0.0; ++s) {
                    const double part = s < m_p.stages ? std::min(above, qeq) : above;
                    f -= m_p.k * s * part / qeq;
                    above -= part;
                }
            } else {
                const double s = std::min(std::ceil(q / qeq) - 1.0, double(m_p.stages));
                f = 1.0 - m_p.k * s * (q - qeq) / qeq;
            }
            break;
    }
    return std::max(f, m_p.c);
}

double fera_cp::on_interval(ps_t now, std::uint64_t queue_bytes, bool paused) {
    if (now <= m_last_close) return m_rate;
    const double elapsed = static_cast<double>(now - m_last_close);
    const double arrival = 8.0 * static_cast<double>(m_arrived_bytes) * 1e12 / elapsed;
    m_arrived_bytes = 0;
    m_last_close = now;
    ++m_stats.intervals;
    if (paused) ++m_stats.paused_intervals;

    const double q = static_cast<double>(queue_bytes);
    const double qeq = static_cast<double>(m_p.q_eq_bytes);
    const double cap = m_capacity;
    const double max_rate = m_p.max_rate_bps ? static_cast<double>(m_p.max_rate_bps) : cap;
    const double effective_cap = q > qeq ? m_p.gamma * cap : cap;
    const double f = queue_control(q);
    const double rho = arrival / (f * effective_cap);

    double raw = max_rate;
    if (rho > 0.0)
        raw = std::min(m_rate / rho, max_rate);
    else
        ++m_stats.idle_intervals;
    const double history = m_p.ema_uses_current_rate ? m_rate : m_prev_rate;
    double r = m_p.lambda * raw + (1.0 - m_p.lambda) * history;
    if (cap < m_prev_capacity) {
        r *= cap / m_prev_capacity;
        ++m_stats.capacity_scalings;
    }
    if (m_p.delta0_bps) {
        if (q < qeq)
            m_delta *= m_p.eta;
        else if (q > static_cast<double>(m_p.q_sc_bytes))
            m_delta /= m_p.eta;
        // Bounded so that δ can neither overflow nor underflow into a value η cannot move.
        m_delta = std::clamp(m_delta, static_cast<double>(m_p.delta_min_bps), cap);
        if (r > m_rate + m_delta) {
            r = m_rate + m_delta;
            ++m_stats.increases_limited;
        }
    }
    if (paused && m_p.hold_while_paused && r > m_rate) {
        r = m_rate;
        ++m_stats.held_while_paused;
    }
    if (r > max_rate) {
        r = max_rate;
        ++m_stats.clamped_max;
    }
    if (r < static_cast<double>(m_p.min_rate_bps)) {
        r = static_cast<double>(m_p.min_rate_bps);
        ++m_stats.clamped_min;
    }
    m_prev_rate = m_rate;
    m_rate = r;
    m_prev_capacity = cap;
    m_rho = rho;
    m_arrival_rate = arrival;
    m_f = f;
    return r;
}

std::uint64_t fera_cp::mark(std::uint64_t tag_bps) {
    ++m_stats.tags_seen;
    const std::uint64_t out = fera_tag_min(tag_bps, m_rate);
    if (out < tag_bps) ++m_stats.tags_lowered;
    return out;
}

}  // namespace fabricsim::sw
