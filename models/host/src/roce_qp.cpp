#include "fabricsim/host/algo/roce_qp.h"

#include <algorithm>

#include "fabricsim/core/frame.h"

namespace fabricsim::host {

void roce_requester::write(std::uint64_t bytes) {
    if (bytes == 0 || m_end == UNLIMITED) return;
    const std::uint64_t packets = (bytes + m_p.mtu - 1) / m_p.mtu;
    m_msgs.push_back({m_end, packets, bytes});
    m_end += packets;
}

void roce_requester::set_unlimited() {
    if (m_end == UNLIMITED) return;
    m_msgs.push_back({m_end, UNLIMITED - m_end, 0});
    m_end = UNLIMITED;
}

roce_requester::packet roce_requester::next_packet(ps_t now) {
    const std::uint64_t psn = m_nxt;
    while (psn >= m_msgs[m_cursor].first_psn + m_msgs[m_cursor].packets) ++m_cursor;
    const message& m = m_msgs[m_cursor];
    const std::uint64_t i = psn - m.first_psn;
    const bool unlimited = m.first_psn + m.packets == UNLIMITED;
    const bool last = !unlimited && i + 1 == m.packets;
    packet p{psn, m_p.mtu, roce::SEND_MIDDLE, psn < m_sent_max};
    if (last) p.payload = static_cast<std::uint32_t>(m.bytes - (m.packets - 1) * m_p.mtu);
    if (m.packets == 1 && !unlimited)
        p.opcode = roce::SEND_ONLY;
    else if (i == 0)
        p.opcode = roce::SEND_FIRST;
    else if (last)
        p.opcode = roce::SEND_LAST;
    if (m_una >= m_sent_max) m_timer_start = now;  // the timer was idle
    ++m_nxt;
    m_sent_max = std::max(m_sent_max, m_nxt);
    m_stats.packets++;
    if (p.retransmission) m_stats.retransmitted++;
    return p;
}

void roce_requester::acknowledge(std::uint64_t psn, ps_t now) {
    psn = std::min(psn, m_sent_max);
    if (psn <= m_una) return;
    m_una = psn;
    m_timer_start = now;
    while (!m_msgs.empty() && m_msgs.front().first_psn + m_msgs.front().packets <= m_una) {
        m_acked_msg_bytes += m_msgs.front().bytes;
        m_msgs.pop_front();
        if (m_cursor > 0) --m_cursor;
    }
    if (m_nxt < m_una) m_nxt = m_una;
}

void roce_requester::on_ack(std::uint64_t psn, ps_t now) {
    m_stats.acks++;
    acknowledge(psn, now);
}

void roce_requester::on_nak(std::uint64_t psn, ps_t now) {
    m_stats.naks++;
    acknowledge(psn, now);
    if (m_una < m_nxt) {
        m_nxt = m_una;
        m_cursor = 0;
    }
}

void roce_requester::on_timeout(ps_t now) {
    m_stats.timeouts++;
    m_nxt = m_una;
    m_cursor = 0;
    m_timer_start = now;
}

std::uint64_t roce_requester::acked_bytes() const {
    std::uint64_t b = m_acked_msg_bytes;
    if (!m_msgs.empty() && m_una > m_msgs.front().first_psn)
        b += (m_una - m_msgs.front().first_psn) * m_p.mtu;  // whole packets of a message
    return b;
}

roce_response roce_responder::on_packet(std::uint64_t psn, std::uint32_t payload, bool last) {
    roce_response r;
    if (psn == m_epsn) {
        r.accepted = true;
        ++m_epsn;
        m_bytes += payload;
        m_nak_sent = false;
        if (last) m_messages++;
        if (++m_since_ack >= m_p.ack_every || last) {
            m_since_ack = 0;
            r.ack = true;
            m_stats.acks++;
        }
    } else if (psn > m_epsn) {
        m_stats.out_of_sequence++;
        if (!m_nak_sent) {
            m_nak_sent = true;
            r.nak = true;
            m_stats.naks++;
        }
    } else {
        m_stats.duplicates++;
        r.ack = true;
        m_stats.acks++;
    }
    r.psn = m_epsn;
    return r;
}

}  // namespace fabricsim::host
