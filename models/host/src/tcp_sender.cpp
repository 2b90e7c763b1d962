#include "fabricsim/host/algo/tcp_sender.h"

#include <algorithm>
#include <stdexcept>

namespace fabricsim::host {

void tcp_sender_params::validate() const {
    if (rwnd == 0) throw std::invalid_argument("rwnd must be > 0");
    if (dupack_threshold < 1) throw std::invalid_argument("dupack_threshold must be >= 1");
}

tcp_sender::tcp_sender(const tcp_sender_params& p, const cc_params& cc, const rtt_params& rtt)
    : m_p(p), m_cc(cc), m_rtt(rtt) {
    m_p.validate();
}

bool tcp_sender::next_segment(ps_t now, tcp_segment& out) {
    const std::uint64_t end = m_unlimited ? ~std::uint64_t(0) : m_written;
    const std::uint32_t mss = m_cc.params().mss;
    if (m_retx_pending) {
        // Fast retransmit / partial ACK: the first hole goes out regardless of the window.
        m_retx_pending = false;
        if (m_snd_una < m_snd_max) {
            out.seq = m_snd_una;
            out.len = static_cast<std::uint32_t>(std::min<std::uint64_t>(mss, m_snd_max - m_snd_una));
            out.retransmission = true;
            out.cwr = false;
            m_stats.segments++;
            m_stats.bytes += out.len;
            m_stats.retransmitted_segments++;
            if (m_rto_at == 0) arm_rto(now);
            return true;
        }
    }
    if (m_snd_nxt >= end) return false;
    const auto len = static_cast<std::uint32_t>(std::min<std::uint64_t>(mss, end - m_snd_nxt));
    const std::uint64_t window = std::min(m_cc.cwnd(), m_p.rwnd);
    if (flight() + len > window) return false;
    out.seq = m_snd_nxt;
    out.len = len;
    out.retransmission = m_snd_nxt < m_snd_max;
    out.cwr = false;
    if (m_cc.should_set_cwr()) {
        out.cwr = true;
        m_cc.on_cwr_sent();
    }
    m_snd_nxt += len;
    m_snd_max = std::max(m_snd_max, m_snd_nxt);
    m_stats.segments++;
    m_stats.bytes += len;
    if (out.retransmission) m_stats.retransmitted_segments++;
    if (m_rto_at == 0) arm_rto(now);  // RFC 6298 5.1
    return true;
}

void tcp_sender::on_ack(ps_t now, std::uint64_t ack, bool ece, ps_t ts_echo) {
    m_stats.acks++;
    if (ece) m_stats.ece_acks++;
    ack = std::min(ack, m_snd_max);
    if (ack > m_snd_una) {
        const std::uint64_t flight_before = flight();
        // After a go-back-N the receiver may ACK past snd_nxt (it kept out-of-order data).
        if (m_snd_nxt < ack) m_snd_nxt = ack;
        ps_t sample = 0;
        if (ts_echo != 0 && now > ts_echo) {
            sample = now - ts_echo;
            m_rtt.on_sample(sample);
            m_last_sample = sample;
        }
        ack_event e;
        e.now = now;
        e.acked_bytes = ack - m_snd_una;
        e.ece = ece;
        e.snd_una_after = ack;
        e.snd_nxt = m_snd_nxt;
        e.flight_bytes_before = flight_before;
        e.rtt_sample = sample;
        m_snd_una = ack;
        m_dupacks = 0;
        m_timer_retx = false;
        const ack_outcome o = m_cc.on_ack(e);
        bool restart = true;
        if (o == ack_outcome::PARTIAL_ACK) {
            m_retx_pending = true;
            restart = !m_partial_seen;  // RFC 6582 impatient variant
            m_partial_seen = true;
        } else if (o == ack_outcome::RECOVERY_EXIT || !m_cc.in_recovery()) {
            m_partial_seen = false;
        }
        if (m_snd_una >= m_snd_max) m_rto_at = 0;       // RFC 6298 5.2
        else if (restart || m_rto_at == 0) arm_rto(now);  // 5.3
        return;
    }
    if (ack == m_snd_una && m_snd_una < m_snd_max) {
        m_stats.dupacks++;
        ++m_dupacks;
        m_cc.on_dupack();
        if (m_dupacks == m_p.dupack_threshold &&
            m_cc.on_dupack_threshold(now, m_snd_una, m_snd_nxt, flight())) {
            m_retx_pending = true;
            m_partial_seen = false;
            m_stats.fast_retransmits++;
        }
    }
}

void tcp_sender::on_rto_timer(ps_t now) {
    m_rto_at = 0;
    if (m_snd_una >= m_snd_max) return;
    m_stats.timeouts++;
    m_cc.on_rto(now, m_snd_nxt, flight(), m_timer_retx);
    m_rtt.backoff();
    m_snd_nxt = m_snd_una;  // go back N
    m_dupacks = 0;
    m_retx_pending = false;
    m_partial_seen = false;
    m_timer_retx = true;
    arm_rto(now);  // RFC 6298 5.6
}

}  // namespace fabricsim::host
