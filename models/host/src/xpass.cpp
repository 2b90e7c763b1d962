#include "fabricsim/host/algo/xpass.h"

#include <algorithm>
#include <cmath>

namespace fabricsim::host {

namespace {
double secs(ps_t t) {
    return double(t) / double(PS_PER_S);
}
}  // namespace

xpass_credit_control::xpass_credit_control(const xpass_params& p, double max_rate)
    : m_p(p), m_max(max_rate) {}

void xpass_credit_control::start(ps_t now) {
    m_w = m_p.w_init;
    m_rate = m_p.alpha * m_max;
    m_can_increase_w = false;
    m_last_update = now;
    m_total = m_dropped = 0;
}

void xpass_credit_control::on_data(std::uint64_t seq, ps_t sent, ps_t now) {
    // An echo below the expected one is a retransmission's stale credit (ns2 aborts here).
    if (seq < m_expected) return;
    const std::uint64_t gap = seq - m_expected;
    m_total += gap + 1;
    m_dropped += gap;
    m_stats.echoed += gap + 1;
    m_stats.lost += gap;
    m_expected = seq + 1;
    const ps_t sample = now - sent;
    m_rtt = m_rtt == 0
                ? sample
                : static_cast<ps_t>(std::llround(0.8 * double(m_rtt) + 0.2 * double(sample)));
}

bool xpass_credit_control::before_credit(ps_t now) {
    if (m_rtt == 0 || m_total == 0 || now - m_last_update < m_rtt) return false;
    const double avg = m_p.avg_credit_bytes();
    const double loss = double(m_dropped) / double(m_total);
    const double target = (1.0 - m_rate / m_max) * m_p.target_loss_scaling;
    const double min_rate = avg / secs(m_rtt);
    if (loss > target) {
        const double old = m_rate;
        if (loss >= 1.0)
            m_rate = min_rate;
        else
            m_rate = avg * double(m_total - m_dropped) / secs(now - m_last_update) * (1.0 + target);
        m_rate = std::min(m_rate, old);
        m_w = std::max(m_w / 2, m_p.w_min);
        m_can_increase_w = false;
        ++m_stats.decreases;
    } else {
        if (m_can_increase_w)
            m_w = std::min(m_w + m_p.w_step, m_p.w_max);
        else
            m_can_increase_w = true;
        if (m_rate < m_max) m_rate = m_w * m_max + (1.0 - m_w) * m_rate;
    }
    m_rate = std::clamp(m_rate, std::min(min_rate, m_max), m_max);
    m_last_loss = loss;
    m_total = m_dropped = 0;
    m_last_update = now;
    ++m_stats.updates;
    return true;
}

ps_t xpass_credit_control::gap(double u) const {
    const double j = m_p.jitter * (2.0 * u - 1.0);
    return static_cast<ps_t>(
        std::llround(m_p.avg_credit_bytes() / m_rate * (1.0 + j) * double(PS_PER_S)));
}

void aeolus_sender::reset(std::uint64_t unscheduled) {
    m_state.assign(unscheduled, NOT_SENT);
    m_queue.assign(unscheduled, 0);
    m_head = m_count = 0;
    m_live = 0;
    m_sent = m_acked = m_lost = 0;
}

void aeolus_sender::sent_unscheduled(std::uint64_t pkt) {
    if (pkt >= m_state.size() || m_state[pkt] != NOT_SENT) return;
    m_state[pkt] = UNACKED;
    ++m_sent;
}

bool aeolus_sender::on_ack(std::uint64_t pkt) {
    if (pkt >= m_state.size() || m_state[pkt] == ACKED) return false;
    if (m_state[pkt] == QUEUED) --m_live;
    m_state[pkt] = ACKED;
    ++m_acked;
    return true;
}

void aeolus_sender::push(std::size_t pkt) {
    m_state[pkt] = QUEUED;
    m_queue[(m_head + m_count) % m_queue.size()] = static_cast<std::uint32_t>(pkt);
    ++m_count;
    ++m_live;
}

std::uint64_t aeolus_sender::on_probe_ack() {
    std::uint64_t n = 0;
    for (std::size_t p = 0; p < m_state.size(); ++p) {
        if (m_state[p] != UNACKED) continue;
        push(p);
        ++n;
    }
    m_lost += n;
    return n;
}

bool aeolus_sender::request(std::uint64_t pkt) {
    if (pkt >= m_state.size() || m_state[pkt] == ACKED || m_state[pkt] == QUEUED) return false;
    push(pkt);
    return true;
}

bool aeolus_sender::take_resend(std::uint64_t& pkt) {
    while (m_count != 0) {
        const std::uint32_t p = m_queue[m_head];
        m_head = (m_head + 1) % m_queue.size();
        --m_count;
        if (m_state[p] != QUEUED) continue;  // ACKed since it was queued
        m_state[p] = RESENT;
        --m_live;
        pkt = p;
        return true;
    }
    return false;
}

void selective_receiver::reset(std::uint64_t packets) {
    m_bits.assign((packets + 63) / 64, 0);
    m_packets = packets;
    m_expected = m_received = 0;
}

bool selective_receiver::on_packet(std::uint64_t pkt) {
    if (pkt >= m_packets || has(pkt)) return false;
    m_bits[pkt >> 6] |= std::uint64_t(1) << (pkt & 63);
    ++m_received;
    while (m_expected < m_packets && has(m_expected)) ++m_expected;
    return true;
}

}  // namespace fabricsim::host
