#include "fabricsim/host/algo/flashpass.h"

#include <algorithm>
#include <cmath>

namespace fabricsim::host {

flashpass_rate_control::flashpass_rate_control(double min_target, double max_target,
                                               double max_rate, std::uint32_t emulation_bytes)
    : m_min_target(min_target),
      m_max_target(max_target),
      m_max(max_rate),
      m_bytes(emulation_bytes) {}

void flashpass_rate_control::start(ps_t now, ps_t rtt) {
    m_rate = m_max;
    m_rtt = std::max<ps_t>(rtt, 1);
    m_period_start = now;
    m_base = 0;
    m_in = 0;
}

bool flashpass_rate_control::on_credit(ps_t now, ps_t rtt, std::uint64_t seq) {
    if (seq < m_base) return false;  // a period already judged (reordered): not counted
    m_in++;
    m_rtt = (7 * m_rtt + std::max<ps_t>(rtt, 1)) / 8;
    if (now - m_period_start < m_rtt) return false;
    const std::uint64_t out = seq + 1 - m_base;
    const double loss = std::clamp(1.0 - double(m_in) / double(out), 0.0, 1.0);
    m_last_loss = loss;
    if (loss > m_max_target)
        m_rate = m_rate * (1.0 - loss) * (1.0 + m_min_target);
    else if (loss < m_min_target)
        m_rate = m_rate * (1.0 + m_max_target);
    // At least one emulation packet per RTT, at most the emulation share of the link.
    const double floor = double(m_bytes) * double(PS_PER_S) / double(m_rtt);
    m_rate = std::clamp(m_rate, std::min(floor, m_max), m_max);
    m_period_start = now;
    m_base = seq + 1;
    m_in = 0;
    m_updates++;
    return true;
}

ps_t flashpass_rate_control::gap() const {
    return static_cast<ps_t>(std::llround(double(m_bytes) * double(PS_PER_S) / m_rate));
}

ps_t flashpass_rate_control::gap_at_max() const {
    return static_cast<ps_t>(std::llround(double(m_bytes) * double(PS_PER_S) / m_max));
}

bool flashpass_credit_batch::add(std::uint64_t seq, ps_t sent, ps_t now) {
    if (m_count == 0) m_first = seq;
    m_sent[m_count++] = sent;
    m_newest = now;
    return m_count >= m_limit || now >= deadline();
}

}  // namespace fabricsim::host
