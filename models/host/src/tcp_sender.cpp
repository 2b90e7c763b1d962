#include "fabricsim/host/algo/tcp_sender.h"

#include <algorithm>
#include <stdexcept>

namespace fabricsim::host {

void tcp_sender_params::validate() const {
    if (rwnd == 0) throw std::invalid_argument("rwnd must be > 0");
    if (dupack_threshold < 1) throw std::invalid_argument("dupack_threshold must be >= 1");
}

tcp_sender::tcp_sender(const tcp_sender_params& p, const cc_params& cc, const rtt_params& rtt)
    : m_p(p), m_cc(cc), m_rtt(rtt), m_rwnd(p.rwnd) {
    m_p.validate();
    m_sacked.reserve(8);
    m_rtx.reserve(8);
}

std::uint64_t tcp_sender::sacked_bytes() const {
    std::uint64_t n = 0;
    for (const auto& r : m_sacked) n += r.second - r.first;
    return n;
}

std::uint64_t tcp_sender::sacked_in(std::uint64_t b, std::uint64_t e) const {
    std::uint64_t n = 0;
    for (const auto& r : m_sacked) {
        const std::uint64_t lo = std::max(b, r.first), hi = std::min(e, r.second);
        if (hi > lo) n += hi - lo;
    }
    return n;
}

void tcp_sender::add_sack(std::uint64_t b, std::uint64_t e) {
    b = std::max(b, m_snd_una);
    e = std::min(e, m_snd_max);
    if (e <= b) return;
    insert_range(m_sacked, b, e);
}

std::uint64_t tcp_sender::lost_edge() const {
    // A hole is lost once more than (DupThresh-1)*MSS bytes above it are SACKed (RFC 6675).
    const std::uint64_t threshold = std::uint64_t(m_p.dupack_threshold - 1) * m_cc.params().mss;
    std::uint64_t above = 0;
    for (auto it = m_sacked.rbegin(); it != m_sacked.rend(); ++it) {
        above += it->second - it->first;
        if (above > threshold) return it->first;
    }
    return m_snd_una;
}

std::uint64_t tcp_sender::pipe() const {
    return sack_recovery() ? pipe_below(lost_edge()) : flight();
}

std::uint64_t tcp_sender::pipe_below(std::uint64_t lost) const {
    const std::uint64_t edge = std::max(lost, m_snd_una);
    const std::uint64_t top = std::max(m_snd_nxt, edge);
    std::uint64_t p = (top - edge) - sacked_in(edge, top);  // neither lost nor SACKed
    for (const auto& x : m_rtx)
        p += (x.end - x.begin) - sacked_in(x.begin, x.end);  // retransmitted
    return p;
}

void tcp_sender::add_retransmission(std::uint64_t b, std::uint64_t e) {
    auto it =
        std::lower_bound(m_rtx.begin(), m_rtx.end(), b,
                         [](const retransmission& x, std::uint64_t v) { return x.begin < v; });
    m_rtx.insert(it, retransmission{b, e, m_snd_nxt});
}

void tcp_sender::update_retransmissions(std::uint64_t ack) {
    const std::uint64_t high_sacked = m_sacked.empty() ? 0 : m_sacked.back().second;
    auto keep = m_rtx.begin();
    for (auto& x : m_rtx) {
        x.begin = std::max(x.begin, ack);
        if (x.end <= x.begin || sacked_in(x.begin, x.end) == x.end - x.begin) continue;  // arrived
        if (high_sacked > x.mark &&
            sacked_in(x.begin, x.begin + 1) == 0) {  // data sent later arrived
            m_stats.lost_retransmits++;
            continue;
        }
        *keep++ = x;
    }
    m_rtx.erase(keep, m_rtx.end());
}

std::uint32_t tcp_sender::recovery_threshold() {
    const std::uint32_t mss = m_cc.params().mss;
    const bool nothing_new = (!m_unlimited && m_snd_nxt >= m_written) || flight() + mss > m_rwnd;
    if (m_p.early_retransmit && nothing_new) {
        const std::uint64_t oseg = (flight() + mss - 1) / mss;
        if (oseg >= 2 && oseg < 4 && oseg - 1 < m_p.dupack_threshold)
            return static_cast<std::uint32_t>(oseg - 1);
    }
    return m_p.dupack_threshold;
}

void tcp_sender::emit(ps_t now, tcp_segment& out, std::uint64_t seq, std::uint32_t len, bool retx) {
    out.seq = seq;
    out.len = len;
    out.retransmission = retx;
    out.cwr = false;
    if (!retx && m_cc.should_set_cwr()) {  // CWR goes on the next new data segment
        out.cwr = true;
        m_cc.on_cwr_sent();
    }
    m_stats.segments++;
    m_stats.bytes += len;
    if (retx) m_stats.retransmitted_segments++;
    m_last_send = now;
    if (m_rto_at == 0) arm_rto(now);  // RFC 6298 5.1
}

bool tcp_sender::next_sack_segment(ps_t now, tcp_segment& out) {
    const std::uint32_t mss = m_cc.params().mss;
    const std::uint64_t cwnd = m_cc.ssthresh();  // RFC 6675: cwnd = ssthresh during recovery
    const std::uint64_t lost = lost_edge();
    const std::uint64_t in_pipe = pipe_below(lost);
    // NextSeg rule 1: the first byte neither SACKed nor retransmitted, if it is below the lost
    // point. Both lists are sorted and disjoint, so one merged walk finds it.
    std::uint64_t seq = m_snd_una;
    auto sk = m_sacked.begin();
    auto rx = m_rtx.begin();
    for (bool moved = true; moved;) {
        moved = false;
        for (; sk != m_sacked.end() && sk->first <= seq; ++sk)
            if (seq < sk->second) seq = sk->second, moved = true;
        for (; rx != m_rtx.end() && rx->begin <= seq; ++rx)
            if (seq < rx->end) seq = rx->end, moved = true;
    }
    std::uint64_t stop = std::min<std::uint64_t>(seq + mss, m_snd_max);
    if (sk != m_sacked.end()) stop = std::min(stop, sk->first);
    if (rx != m_rtx.end()) stop = std::min(stop, rx->begin);
    const auto hole = static_cast<std::uint32_t>(stop > seq ? stop - seq : 0);
    if (hole > 0 && seq < lost) {
        if (in_pipe + hole > cwnd) return false;
        add_retransmission(seq, stop);
        emit(now, out, seq, hole, true);
        return true;
    }
    // Rule 2: new data.
    const std::uint64_t end = m_unlimited ? ~std::uint64_t(0) : m_written;
    if (m_snd_nxt < end) {
        const auto len = static_cast<std::uint32_t>(std::min<std::uint64_t>(mss, end - m_snd_nxt));
        if (in_pipe + len > cwnd || flight() + len > m_rwnd) return false;
        emit(now, out, m_snd_nxt, len, m_snd_nxt < m_snd_max);
        m_snd_nxt += len;
        m_snd_max = std::max(m_snd_max, m_snd_nxt);
        return true;
    }
    // Rule 3: nothing new to send, so a hole not (yet) deemed lost goes again, once.
    if (hole == 0 || in_pipe + hole > cwnd) return false;
    add_retransmission(seq, stop);
    emit(now, out, seq, hole, true);
    return true;
}

bool tcp_sender::next_segment(ps_t now, tcp_segment& out) {
    const std::uint64_t end = m_unlimited ? ~std::uint64_t(0) : m_written;
    const std::uint32_t mss = m_cc.params().mss;
    if (m_retx_pending) {
        // Fast retransmit (and NewReno partial ACKs): the first hole goes out regardless of the
        // window (RFC 5681 §3.2, RFC 6675 step 4.3).
        m_retx_pending = false;
        if (m_snd_una < m_snd_max) {
            std::uint64_t stop = std::min<std::uint64_t>(m_snd_una + mss, m_snd_max);
            for (const auto& r : m_sacked)
                if (r.first > m_snd_una) {
                    stop = std::min(stop, r.first);
                    break;
                }
            if (sack_recovery()) add_retransmission(m_snd_una, stop);
            emit(now, out, m_snd_una, static_cast<std::uint32_t>(stop - m_snd_una), true);
            return true;
        }
    }
    if (sack_recovery()) return next_sack_segment(now, out);
    if (m_snd_nxt >= end) return false;
    if (m_p.idle_restart && flight() == 0 && m_stats.segments > 0 &&
        now - m_last_send > m_rtt.rto()) {
        m_cc.restart_after_idle();
        m_stats.idle_restarts++;
        m_last_send = now;
    }
    const auto len = static_cast<std::uint32_t>(std::min<std::uint64_t>(mss, end - m_snd_nxt));
    const std::uint64_t window = std::min(m_cc.cwnd(), m_rwnd);
    if (flight() + len > window) return false;
    emit(now, out, m_snd_nxt, len, m_snd_nxt < m_snd_max);
    m_snd_nxt += len;
    m_snd_max = std::max(m_snd_max, m_snd_nxt);
    return true;
}

void tcp_sender::on_ack(ps_t now, std::uint64_t ack, bool ece, ps_t ts_echo, unsigned blocks,
                        const std::uint64_t* edges, bool window_update) {
    m_stats.acks++;
    if (ece) m_stats.ece_acks++;
    ack = std::min(ack, m_snd_max);
    if (m_p.sack) {
        while (!m_sacked.empty() && m_sacked.front().second <= ack)
            m_sacked.erase(m_sacked.begin());
        if (!m_sacked.empty() && m_sacked.front().first < ack) m_sacked.front().first = ack;
        for (unsigned i = 0; i < blocks; ++i)
            add_sack(std::max(edges[2 * i], ack), edges[2 * i + 1]);
        if (!m_rtx.empty()) update_retransmissions(ack);
    }
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
        if (o == ack_outcome::PARTIAL_ACK && !m_p.sack) {
            m_retx_pending = true;
            restart = !m_partial_seen;  // RFC 6582 impatient variant
            m_partial_seen = true;
        } else if (o == ack_outcome::RECOVERY_EXIT || !m_cc.in_recovery()) {
            m_partial_seen = false;
            m_rtx.clear();
        }
        if (m_snd_una >= m_snd_max)
            m_rto_at = 0;  // RFC 6298 5.2
        else if (restart || m_rto_at == 0)
            arm_rto(now);  // 5.3
        return;
    }
    if (ack == m_snd_una && m_snd_una < m_snd_max && !window_update) {
        m_stats.dupacks++;
        ++m_dupacks;
        if (m_p.sack) {
            // RFC 6675 §5: recovery on DupThresh duplicates or once snd_una is deemed lost; no
            // window inflation (pipe accounts for what has left the network).
            if (m_cc.in_recovery()) return;
            const std::uint32_t threshold = recovery_threshold();
            if ((m_dupacks >= threshold || lost_edge() > m_snd_una) &&
                m_cc.on_dupack_threshold(now, m_snd_una, m_snd_nxt, flight())) {
                m_rtx.clear();
                m_retx_pending = true;
                m_stats.fast_retransmits++;
                if (m_dupacks < m_p.dupack_threshold && lost_edge() == m_snd_una)
                    m_stats.early_retransmits++;
            }
            return;
        }
        m_cc.on_dupack();
        const std::uint32_t threshold = recovery_threshold();
        if (m_dupacks == threshold &&
            m_cc.on_dupack_threshold(now, m_snd_una, m_snd_nxt, flight())) {
            m_retx_pending = true;
            m_partial_seen = false;
            m_stats.fast_retransmits++;
            if (threshold < m_p.dupack_threshold) m_stats.early_retransmits++;
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
    m_sacked.clear();       // the receiver may renege on SACKed data (RFC 2018 §8)
    m_rtx.clear();
    m_dupacks = 0;
    m_retx_pending = false;
    m_partial_seen = false;
    m_timer_retx = true;
    arm_rto(now);  // RFC 6298 5.6
}

}  // namespace fabricsim::host
