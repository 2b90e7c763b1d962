#include "fabricsim/switch/algo/aqm.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace fabricsim::sw {

// Comparisons are written as !(ok) so that NaN is rejected too.
void validate(const red_params& p) {
    if (!(p.min_th >= 0)) throw std::invalid_argument("red_params: min_th must be >= 0");
    if (!(p.max_th >= p.min_th))
        throw std::invalid_argument("red_params: max_th must be >= min_th");
    if (!(p.max_p > 0 && p.max_p <= 1))
        throw std::invalid_argument("red_params: max_p must be in (0,1]");
    if (!(p.weight > 0 && p.weight <= 1))
        throw std::invalid_argument("red_params: weight must be in (0,1]");
}

red_average::red_average(double weight) : m_weight(weight) {
    if (!(weight > 0 && weight <= 1))
        throw std::invalid_argument("red_average: weight must be in (0,1]");
}

mq_ecn_estimator::mq_ecn_estimator(const std::vector<std::uint32_t>& quantum_bytes,
                                   std::uint64_t rate_bps, double beta, ps_t t_idle)
    : m_beta(beta),
      m_ps_per_byte(serializer(rate_bps).ps_per_byte()),
      m_t_idle(t_idle),
      m_serialize(rate_bps),
      m_n(static_cast<unsigned>(quantum_bytes.size())) {
    if (quantum_bytes.empty() || quantum_bytes.size() > MAX_QUEUES)
        throw std::invalid_argument("mq_ecn_estimator: needs 1 to 8 queues");
    if (rate_bps == 0) throw std::invalid_argument("mq_ecn_estimator: rate must be > 0");
    if (!(beta > 0 && beta < 1))
        throw std::invalid_argument("mq_ecn_estimator: beta must be in (0,1)");
    if (t_idle == 0) throw std::invalid_argument("mq_ecn_estimator: t_idle must be > 0");
    // Time to send one quantum at line rate, in ps: scale = min(that / T_round, 1), one division
    // per marking decision.
    for (unsigned q = 0; q < m_n; ++q)
        m_quantum_time_ps[q] = static_cast<double>(quantum_bytes[q]) * 8.0 *
                               static_cast<double>(PS_PER_S) / static_cast<double>(rate_bps);
    for (std::size_t k = 0; k < m_beta_pow.size(); ++k)
        m_beta_pow[k] = std::pow(m_beta, static_cast<double>(k));
}

void mq_ecn_estimator::decay(ps_t now) {
    const ps_t since = m_idle_since;
    m_idle_since = NOT_IDLE;
    if (now <= since) return;
    const ps_t slots = (now - since) / m_t_idle;
    // Underflow to 0 for very long idle periods is fine: 0 means the standard threshold.
    if (slots > 0)
        m_t_round_ps *= slots < m_beta_pow.size() ? m_beta_pow[slots]
                                                  : std::pow(m_beta, static_cast<double>(slots));
}

phantom_queue::phantom_queue(std::uint64_t rate_bps, double gamma, ps_t interval,
                             std::uint64_t threshold_bytes)
    : m_interval(interval),
      // Multiply first: 0.95·1e9·800000 is exact, so the HULL baseline gives exactly 95 B.
      m_drain_per_tick(gamma * static_cast<double>(rate_bps) * static_cast<double>(interval) /
                       (8.0 * static_cast<double>(PS_PER_S))),
      m_threshold(static_cast<double>(threshold_bytes)) {
    if (rate_bps == 0) throw std::invalid_argument("phantom_queue: rate must be > 0");
    if (!(gamma > 0 && gamma <= 1))
        throw std::invalid_argument("phantom_queue: gamma must be in (0,1]");
    if (interval == 0) throw std::invalid_argument("phantom_queue: interval must be > 0");
}

double phantom_queue::drained(ps_t now) const {
    const std::uint64_t tick = now / m_interval;
    if (tick <= m_tick) return m_counter;
    // Draining n ticks with a floor at 0 equals one subtraction of n steps floored once.
    return std::max(0.0, m_counter - static_cast<double>(tick - m_tick) * m_drain_per_tick);
}

bool phantom_queue::on_frame(std::uint32_t bytes, ps_t now) {
    // The frame is marked if the counter it meets is above the threshold, then adds to it:
    // with HULL's 1 KB threshold and 1500 B frames, checking after the add would mark every
    // frame even on an idle link.
    const double met = drained(now);
    m_counter = met + static_cast<double>(bytes);
    m_tick = std::max(m_tick, now / m_interval);
    ++m_frames;
    const bool mark = met > m_threshold;
    if (mark) ++m_marked;
    return mark;
}

double phantom_queue::counter_bytes(ps_t now) const {
    return drained(now);
}

std::vector<double> min_threshold_scales(const std::vector<std::uint32_t>& quantum_bytes,
                                         const std::vector<bool>& strict) {
    if (quantum_bytes.size() != strict.size())
        throw std::invalid_argument("min_threshold_scales: quantum and strict sizes differ");
    double sum = 0;
    bool any_weighted = false;
    for (std::size_t q = 0; q < quantum_bytes.size(); ++q) {
        if (strict[q]) continue;
        sum += quantum_bytes[q];
        any_weighted = true;
    }
    if (any_weighted && sum == 0)
        throw std::invalid_argument("min_threshold_scales: non-strict quanta sum to 0");
    std::vector<double> out(quantum_bytes.size(), 1.0);
    for (std::size_t q = 0; q < quantum_bytes.size(); ++q)
        if (!strict[q]) out[q] = quantum_bytes[q] / sum;
    return out;
}

}  // namespace fabricsim::sw
