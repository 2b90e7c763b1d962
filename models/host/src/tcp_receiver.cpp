#include "fabricsim/host/algo/tcp_receiver.h"

#include <algorithm>
#include <stdexcept>

namespace fabricsim::host {

void tcp_receiver_params::validate() const {
    if (ack_every < 1) throw std::invalid_argument("ack_every must be >= 1");
    if (ack_every > 1 && delayed_ack_timeout == 0)
        throw std::invalid_argument("delayed_ack_timeout must be > 0 when ack_every > 1");
}

tcp_receiver::tcp_receiver(const tcp_receiver_params& p) : m_p(p) {
    m_p.validate();
    m_ooo.reserve(8);
}

std::uint64_t tcp_receiver::out_of_order_bytes() const {
    std::uint64_t b = 0;
    for (const auto& r : m_ooo) b += r.second - r.first;
    return b;
}

bool tcp_receiver::ece_now() const {
    switch (m_p.ecn) {
        case ecn_feedback::NONE:
            return false;
        case ecn_feedback::RFC3168:
            return m_ece_latched;
        case ecn_feedback::DCTCP:
            return m_ce_state;
    }
    return false;
}

ack_decision tcp_receiver::make_ack() {
    ack_decision a{m_rcv_nxt, ece_now(), m_ts_recent, 0, {}};
    if (m_p.sack && !m_ooo.empty()) {
        // RFC 2018: the block with the most recent segment first, then the lowest others.
        unsigned n = 0;
        for (const auto& r : m_ooo)
            if (r.first <= m_recent_ooo && m_recent_ooo < r.second) {
                a.sack_edges[0] = r.first;
                a.sack_edges[1] = r.second;
                n = 1;
            }
        for (const auto& r : m_ooo) {
            if (n == 3) break;
            if (n > 0 && r.first == a.sack_edges[0]) continue;
            a.sack_edges[2 * n] = r.first;
            a.sack_edges[2 * n + 1] = r.second;
            ++n;
        }
        a.sack_blocks = static_cast<std::uint8_t>(n);
    }
    m_last_ack = m_rcv_nxt;
    m_pending = 0;
    m_delack_at = 0;
    m_stats.acks++;
    if (a.ece) m_stats.ece_acks++;
    return a;
}

unsigned tcp_receiver::on_segment(ps_t now, std::uint64_t seq, std::uint32_t len, bool ce, bool cwr,
                                  ps_t ts, ack_decision out[2], bool more) {
    unsigned n = 0;
    m_stats.segments++;
    if (ce) m_stats.ce_segments++;
    if (m_p.ecn == ecn_feedback::DCTCP && ce != m_ce_state) {
        // State change: ACK what came before under the old state, then switch.
        if (m_pending > 0) out[n++] = make_ack();
        m_ce_state = ce;
    } else if (m_p.ecn == ecn_feedback::RFC3168) {
        if (cwr) m_ece_latched = false;
        if (ce) m_ece_latched = true;
    }
    // RFC 7323 §4.3: remember the send time of the first segment after the last ACK sent.
    if (seq <= m_last_ack) m_ts_recent = ts;

    const std::uint64_t end = seq + len;
    if (end <= m_rcv_nxt) {
        m_stats.duplicates++;
        out[n++] = make_ack();
        return n;
    }
    if (seq > m_rcv_nxt) {
        m_stats.out_of_order++;
        m_recent_ooo = seq;
        insert_range(m_ooo, seq, end);
        out[n++] = make_ack();  // duplicate ACK
        return n;
    }
    // In order (possibly overlapping already-received bytes).
    m_rcv_nxt = end;
    const bool had_holes = !m_ooo.empty();
    while (!m_ooo.empty() && m_ooo.front().first <= m_rcv_nxt) {
        m_rcv_nxt = std::max(m_rcv_nxt, m_ooo.front().second);
        m_ooo.erase(m_ooo.begin());
    }
    ++m_pending;
    if (more) {
        // A filled hole is ACKed with the aggregate's last segment: its count forces that ACK
        // (no flag for the plain path to test).
        if (had_holes) m_pending = std::max(m_pending, m_p.ack_every);
    } else if (had_holes || m_pending >= m_p.ack_every) {
        out[n++] = make_ack();
    } else if (m_delack_at == 0) {
        m_delack_at = now + m_p.delayed_ack_timeout;
    }
    return n;
}

bool tcp_receiver::on_delayed_ack_timer(ps_t, ack_decision& out) {
    if (m_pending == 0) {
        m_delack_at = 0;
        return false;
    }
    m_stats.delayed_ack_timeouts++;
    out = make_ack();
    return true;
}

}  // namespace fabricsim::host
