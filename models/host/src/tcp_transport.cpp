#include "fabricsim/host/tcp_transport.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "fabricsim/core/kernel.h"
#include "fabricsim/core/rng.h"
#include "fabricsim/host/host.h"

namespace fabricsim::host {

namespace {
constexpr unsigned WSCALE = 7;  ///< window scale of the advertised window (Linux, 6 MiB buffers)
}  // namespace

tcp_transport::tcp_transport(host& h, flow_table& flows)
    : transport(h, flows, transport_kind::TCP, true), m_lso_max(h.nic().lso_max_bytes()) {}

void tcp_transport::add_source(std::uint32_t flow, const flow_path& to) {
    flow_record& rec = m_flows[flow];
    const flow_spec& spec = rec.spec;
    rec.tx_slot = static_cast<std::uint32_t>(m_tx.size());
    const bool gemini = spec.tcp.cc.kind == cc_kind::GEMINI;
    if (gemini) {
        cc_params cc = spec.tcp.cc;
        if (cc.gemini.capacity_bps == 0) cc.gemini.capacity_bps = m_host.nic().rate_bps();
        cc.gemini.noise_seed = splitmix64(m_host.seed() ^ splitmix64(flow));  // a stream per flow
        m_tx.push_back(
            {flow, tcp_sender(spec.tcp.sender, cc, spec.tcp.rtt), to.peer_ip, to.next_hop});
    } else {
        m_tx.push_back({flow, tcp_sender(spec.tcp.sender, spec.tcp.cc, spec.tcp.rtt), to.peer_ip,
                        to.next_hop});
    }
    m_tx.back().ect = m_tx.back().snd.cc().ecn_capable();
    if (gemini && spec.tcp.cc.gemini.pacing) {
        m_tx.back().paced = true;
        m_host.nic().limiter_bank();  // made now, at elaboration
    }
    // The handshake (not simulated) gives the sender its first RTT sample (RFC 6298 2.2; Linux
    // seeds SRTT from the SYN-ACK).
    if (to.idle_rtt > 0) m_tx.back().snd.seed_rtt(to.idle_rtt);
}

void tcp_transport::add_sink(std::uint32_t flow, const flow_path& from) {
    flow_record& rec = m_flows[flow];
    rec.rx_slot = static_cast<std::uint32_t>(m_rx.size());
    m_rx.push_back({flow, tcp_receiver(rec.spec.tcp.receiver), from.peer_ip, from.next_hop});
    m_rx.back().ect_acks =
        rec.spec.tcp.cc.kind == cc_kind::DCTCP || rec.spec.tcp.cc.kind == cc_kind::GEMINI;
    m_rx.back().app_window = m_host.app_reads_slowly();
    m_rx.back().rcvbuf = rec.spec.tcp.sender.rwnd;
    m_rx.back().adv_edge = rec.spec.tcp.sender.rwnd;  // the window of the handshake
}

void tcp_transport::start() {
    for (std::uint32_t i = 0; i < m_tx.size(); ++i)
        if (!m_flows[m_tx[i].flow].spec.app_driven)
            schedule(m_flows[m_tx[i].flow].spec.start, START, i);
}

void tcp_transport::on_timer(std::uint8_t timer_kind, std::uint32_t slot, ps_t at, ps_t now) {
    switch (timer_kind) {
        case START:
            on_start(slot, at);
            break;
        case APP_WRITE: {
            const pending_write w = m_writes[slot];
            m_free_writes.push_back(slot);
            write_now(w.tx_slot, w.bytes, at);
            break;
        }
        case RTO:
            on_rto(slot, at, now);
            break;
        case PACE:
            if (m_tx[slot].pace_queued != at) break;  // superseded
            m_tx[slot].pace_queued = 0;
            pump(slot, now);
            break;
        default:
            on_delack(slot, at, now);
            break;
    }
}

void tcp_transport::on_start(std::uint32_t slot, ps_t at) {
    tcp_tx& x = m_tx[slot];
    flow_record& rec = m_flows[x.flow];
    rec.started = at;
    if (rec.spec.size_bytes == 0)
        x.snd.set_unlimited();
    else
        x.snd.write(rec.spec.size_bytes);
    if (x.paced) bind_limiter(x, at);
    pump(slot, at);
}

void tcp_transport::on_rto(std::uint32_t slot, ps_t at, ps_t now) {
    tcp_tx& x = m_tx[slot];
    if (x.rto_queued != at) return;  // superseded by an earlier entry
    x.rto_queued = 0;
    const ps_t due = x.snd.rto_deadline();
    if (due == 0) return;
    if (due > now) {  // restarted since this entry was queued
        sync_rto(slot);
        return;
    }
    x.snd.on_rto_timer(now);
    pump(slot, now);
}

void tcp_transport::on_delack(std::uint32_t slot, ps_t at, ps_t now) {
    tcp_rx& r = m_rx[slot];
    if (r.delack_queued != at) return;
    r.delack_queued = 0;
    const ps_t due = r.rcv.delayed_ack_deadline();
    if (due == 0) return;
    if (due > now) {
        r.delack_queued = due;
        schedule(due, DELACK, slot);
        return;
    }
    ack_decision a;
    if (r.rcv.on_delayed_ack_timer(now, a)) send_ack(r, a, now);
}

void tcp_transport::app_write(std::uint32_t flow, std::uint64_t bytes, ps_t at) {
    flow_record& rec = m_flows[flow];
    rec.app_written += bytes;
    rec.msg_end = rec.app_written;
    const ps_t now = now_ps();
    if (at <= now && sc_core::sc_is_running()) {
        write_now(rec.tx_slot, bytes, now);
        return;
    }
    std::uint32_t slot;
    if (!m_free_writes.empty()) {
        slot = m_free_writes.back();
        m_free_writes.pop_back();
        m_writes[slot] = {rec.tx_slot, bytes};
    } else {
        slot = static_cast<std::uint32_t>(m_writes.size());
        m_writes.push_back({rec.tx_slot, bytes});
    }
    schedule(at, APP_WRITE, slot);
}

void tcp_transport::write_now(std::uint32_t tx_slot, std::uint64_t bytes, ps_t now) {
    tcp_tx& x = m_tx[tx_slot];
    flow_record& rec = m_flows[x.flow];
    if (rec.started == 0) rec.started = now;
    x.snd.write(bytes);
    if (x.paced && x.limiter < 0) bind_limiter(x, now);  // app-driven flows start here
    pump(tx_slot, now);
}

frame& tcp_transport::new_tcp_frame(std::uint32_t flow, std::uint32_t dst_ip,
                                    const mac_addr& dst_mac, std::uint16_t sport,
                                    std::uint16_t dport) {
    frame& f = m_host.new_frame(m_flows[flow].spec, dst_ip, dst_mac, sport, dport);
    f.tcp_window = 0xFFFF;
    return f;
}

bool tcp_transport::pace_allows(tcp_tx& x, std::uint32_t slot, ps_t now) {
    if (x.limiter < 0) return true;
    const ps_t t = m_host.nic().limiter_bank().at(unsigned(x.limiter)).earliest_start(now);
    if (t <= now) return true;
    if (x.pace_queued == 0 || t < x.pace_queued) {
        x.pace_queued = t;
        schedule(t, PACE, slot);
    }
    return false;
}

void tcp_transport::bind_limiter(tcp_tx& x, ps_t now) {
    x.limiter = m_host.nic().limiter_bank().bind(x.flow, now);
    set_pacing_rate(x, now);
}

void tcp_transport::set_pacing_rate(tcp_tx& x, ps_t now) {
    const ps_t srtt = x.snd.rtt().srtt();
    const auto& cc = x.snd.cc();
    const gemini_params& g = cc.params().gemini;
    std::uint64_t bps = 0;  // unlimited until there is an RTT
    if (srtt > 0) {
        const double ratio = cc.in_slow_start() ? g.pacing_ss_ratio : g.pacing_ca_ratio;
        bps = static_cast<std::uint64_t>(ratio * static_cast<double>(cc.cwnd()) * 8.0 * 1e12 /
                                         static_cast<double>(srtt));
        bps = std::max<std::uint64_t>(bps, 1);
    }
    m_host.nic().limiter_bank().at(unsigned(x.limiter)).set_rate(bps, now);
}

void tcp_transport::pump(std::uint32_t slot, ps_t now) {
    if (m_lso_max && !m_tx[slot].paced) return pump_lso(slot, now);
    tcp_tx& x = m_tx[slot];
    flow_record& rec = m_flows[x.flow];
    tcp_segment seg;
    while (!x.blocked) {
        if (!m_host.tx_room_for_data()) {
            x.blocked = true;
            m_blocked.push_back(slot);
            m_host.wait_for_tx(*this);
            break;
        }
        if (x.paced && !pace_allows(x, slot, now)) break;
        if (!x.snd.next_segment(now, seg)) break;
        frame& f = new_tcp_frame(x.flow, x.dst_ip, x.next_hop, client_port(x.flow), SERVER_PORT);
        f.ecn = x.ect ? ecn_codepoint::ECT0 : ecn_codepoint::NOT_ECT;
        f.tcp_flags = tcp_flag::ACK | (seg.cwr ? tcp_flag::CWR : 0);
        f.seq_no = seg.seq;
        f.tcp_seq = static_cast<std::uint32_t>(seg.seq);
        f.ip_id = static_cast<std::uint16_t>(rec.sent_frames);
        f.set_ipv4(frame_kind::IPV4_TCP, seg.len);
        f.created = now;
        rec.sent_frames++;
        rec.sent_bytes += f.frame_bytes();
        if (x.limiter >= 0)
            m_host.nic().limiter_bank().at(unsigned(x.limiter)).sent(f.wire_bytes(), now);
        m_host.post(f, now);
    }
    sync_rto(slot);
}

void tcp_transport::pump_lso(std::uint32_t slot, ps_t now) {
    tcp_tx& x = m_tx[slot];
    flow_record& rec = m_flows[x.flow];
    const std::uint32_t mss = x.snd.mss();
    frame* big = nullptr;
    std::uint64_t end = 0;  // first byte after the send being built
    std::uint32_t segments = 0;
    std::uint32_t last = 0;  // its last segment's length
    auto flush = [&] {
        big->set_ipv4(frame_kind::IPV4_TCP, static_cast<std::uint32_t>(end - big->seq_no));
        m_host.post_lso(*big, now, mss, segments);
        big = nullptr;
    };
    tcp_segment seg;
    while (!x.blocked) {
        // The segments of the send being built count as queued (they are, once it goes).
        if (!m_host.tx_room_for_data(big ? segments : 0)) {
            if (big) flush();
            x.blocked = true;
            m_blocked.push_back(slot);
            m_host.wait_for_tx(*this);
            break;
        }
        if (!x.snd.next_segment(now, seg)) break;
        if (big &&
            (seg.cwr || seg.seq != end || last != mss || end - big->seq_no + seg.len > m_lso_max))
            flush();
        if (!big) {
            big = &new_tcp_frame(x.flow, x.dst_ip, x.next_hop, client_port(x.flow), SERVER_PORT);
            big->ecn = x.ect ? ecn_codepoint::ECT0 : ecn_codepoint::NOT_ECT;
            big->tcp_flags = tcp_flag::ACK | (seg.cwr ? tcp_flag::CWR : 0);
            big->seq_no = seg.seq;
            big->tcp_seq = static_cast<std::uint32_t>(seg.seq);
            big->ip_id = static_cast<std::uint16_t>(rec.sent_frames);
            big->set_ipv4(frame_kind::IPV4_TCP, 0);
            big->created = now;
            end = seg.seq;
            segments = 0;
        }
        end += seg.len;
        last = seg.len;
        segments++;
        rec.sent_frames++;
        rec.sent_bytes += std::max(big->header_bytes() + seg.len, 60u) + FCS_BYTES;
    }
    if (big) flush();
    sync_rto(slot);
}

void tcp_transport::sync_rto(std::uint32_t slot) {
    tcp_tx& x = m_tx[slot];
    const ps_t due = x.snd.rto_deadline();
    // An entry already queued at or before `due` re-queues itself when it surfaces.
    if (due != 0 && (x.rto_queued == 0 || due < x.rto_queued)) {
        x.rto_queued = due;
        schedule(due, RTO, slot);
    }
}

void tcp_transport::on_tx_ready(ps_t now) {
    std::vector<std::uint32_t> ready;
    ready.swap(m_blocked);
    for (const std::uint32_t s : ready) m_tx[s].blocked = false;
    for (const std::uint32_t s : ready) pump(s, now);
    // The swap below leaves the slots just pumped in m_blocked (no clear()), so they are pumped
    // again, first, at the next notification. Kept from before the transport split: clearing
    // `ready` changes tx_blocked counts and may change which flow sends first.
    if (m_blocked.empty() && m_blocked.capacity() < ready.capacity()) m_blocked.swap(ready);
}

void tcp_transport::send_ack(tcp_rx& r, const ack_decision& a, ps_t now) {
    flow_record& rec = m_flows[r.flow];
    frame& f = new_tcp_frame(r.flow, r.src_ip, r.next_hop, SERVER_PORT, client_port(r.flow));
    f.ecn = r.ect_acks ? ecn_codepoint::ECT0 : ecn_codepoint::NOT_ECT;
    f.tcp_flags = tcp_flag::ACK | (a.ece ? tcp_flag::ECE : 0);
    f.ack_no = a.ack;
    f.tcp_ack = static_cast<std::uint32_t>(a.ack);
    f.ts_echo = a.ts_echo;
    f.sack_blocks = a.sack_blocks;
    f.sack_edges = a.sack_edges;
    f.ip_id = static_cast<std::uint16_t>(rec.ack_sent);
    if (r.app_window) {  // else 0xFFFF: the sender keeps rwnd
        const std::uint64_t unread = a.ack - std::min(a.ack, r.app_read);
        const std::uint64_t wnd = r.rcvbuf > unread ? r.rcvbuf - unread : 0;
        f.tcp_window = static_cast<std::uint16_t>(std::min<std::uint64_t>(wnd >> WSCALE, 0xFFFE));
        r.adv_edge = a.ack + (std::uint64_t(f.tcp_window) << WSCALE);
    }
    f.set_ipv4(frame_kind::IPV4_TCP, 0);
    f.created = now;
    rec.ack_sent++;
    m_host.post(f, now);
}

void tcp_transport::on_frame(frame& f, ps_t at) {
    if (f.payload_bytes > 0)
        on_data(f, at);
    else
        on_ack(f, at);
}

void tcp_transport::on_data(frame& f, ps_t now) {
    flow_record& rec = m_flows[f.flow_id];
    m_flows.on_delivered(f.flow_id, f.frame_bytes(), f.payload_bytes, now - f.created, now);
    const bool ce = f.ecn == ecn_codepoint::CE;
    if (ce) rec.ce_frames++;
    tcp_rx& r = m_rx[rec.rx_slot];
    ack_decision acks[2];
    const unsigned n =
        r.rcv.on_segment(now, f.seq_no, f.payload_bytes, ce, (f.tcp_flags & tcp_flag::CWR) != 0,
                         f.created, acks, f.rx_more);
    rec.rx_bytes = r.rcv.rcv_nxt();
    if (rec.completed == 0 && rec.spec.size_bytes != 0 && rec.rx_bytes >= rec.spec.size_bytes)
        rec.completed = now;
    for (unsigned i = 0; i < n; ++i) send_ack(r, acks[i], now);
    if (rec.msg_end != 0 && rec.rx_bytes >= rec.msg_end) {
        rec.msg_end = 0;
        if (rec.listener) rec.listener->on_message(f.flow_id, now);
    }
    const ps_t due = r.rcv.delayed_ack_deadline();
    if (due != 0 && (r.delack_queued == 0 || due < r.delack_queued)) {
        r.delack_queued = due;
        schedule(due, DELACK, rec.rx_slot);
    }
}

void tcp_transport::on_ack(frame& f, ps_t now) {
    flow_record& rec = m_flows[f.flow_id];
    rec.ack_delivered++;
    tcp_tx& x = m_tx[rec.tx_slot];
    const bool ece = (f.tcp_flags & tcp_flag::ECE) != 0;
    // 0xFFFF: a receiver without the application model, whose window is always rwnd.
    const bool window_update =
        f.tcp_window != 0xFFFF && x.snd.set_peer_window(std::uint64_t(f.tcp_window) << WSCALE);
    x.snd.on_ack(now, f.ack_no, ece, f.ts_echo, f.sack_blocks, f.sack_edges.data(), window_update);
    if (rec.spec.trace) {
        const auto& cc = x.snd.cc();
        rec.trace.push_back({now, cc.cwnd(), cc.ssthresh(), x.snd.flight(), x.snd.snd_una(),
                             cc.alpha(), cc.last_f(), x.snd.rtt().srtt(),
                             f.ts_echo && now > f.ts_echo ? now - f.ts_echo : 0, ece,
                             cc.gemini_rtt_min(), cc.gemini_rtt_base()});
    }
    if (x.limiter >= 0) {
        if (rec.spec.size_bytes != 0 && x.snd.snd_una() >= rec.spec.size_bytes) {
            m_host.nic().limiter_bank().release(x.flow);  // done: the limiter is free again
            x.limiter = -1;
        } else {
            set_pacing_rate(x, now);
        }
    }
    pump(rec.tx_slot, now);
}

const tcp_sender::stats& tcp_transport::sender_stats(std::uint32_t flow) const {
    return m_tx[m_flows[flow].tx_slot].snd.get_stats();
}

std::uint64_t tcp_transport::timeouts(std::uint32_t flow) const {
    return sender_stats(flow).timeouts;
}

void tcp_transport::export_flow_results() const {
    for (const tcp_tx& x : m_tx) {
        tcp_flow_result& r = m_flows[x.flow].tcp;
        const auto& st = x.snd.get_stats();
        const auto& cc = x.snd.cc();
        r.bytes_acked = x.snd.snd_una();
        r.segments = st.segments;
        r.retransmitted_segments = st.retransmitted_segments;
        r.fast_retransmits = st.fast_retransmits;
        r.timeouts = st.timeouts;
        r.ecn_reductions = cc.ecn_reductions();
        r.ece_acks = st.ece_acks;
        r.acks = st.acks;
        r.cwnd = cc.cwnd();
        r.alpha = cc.kind() == cc_kind::DCTCP ? cc.alpha() : 0.0;
        r.srtt = x.snd.rtt().srtt();
        r.min_rtt = cc.min_rtt();
        r.hystart_train_exits = cc.hystart_train_exits();
        r.hystart_delay_exits = cc.hystart_delay_exits();
        if (cc.kind() == cc_kind::GEMINI) {
            r.alpha = cc.alpha();
            r.wan_reductions = cc.gemini_wan_reductions();
            r.gemini_f = cc.gemini_f();
            r.gemini_h = cc.gemini_h();
            r.rtt_base = cc.gemini_rtt_base();
            r.pacing_bps =
                x.limiter >= 0 ? m_host.nic().limiters()->at(unsigned(x.limiter)).rate_bps() : 0;
        }
    }
}

void tcp_transport::report_stats(nlohmann::json& out) const {
    out["tcp_senders"] = m_tx.size();
    out["tcp_receivers"] = m_rx.size();
    if (m_host.app_reads_slowly()) out["tcp_window_updates"] = m_window_updates;
}

void tcp_transport::on_app_read(std::uint32_t flow, std::uint64_t bytes, ps_t now) {
    flow_record& rec = m_flows[flow];
    tcp_rx& r = m_rx[rec.rx_slot];
    r.app_read += bytes;
    const std::uint64_t rcv_nxt = r.rcv.rcv_nxt();
    const std::uint64_t open = r.adv_edge > rcv_nxt ? r.adv_edge - rcv_nxt : 0;
    const std::uint64_t unread = rcv_nxt - std::min(rcv_nxt, r.app_read);
    const std::uint64_t wnd = r.rcvbuf > unread ? r.rcvbuf - unread : 0;
    // tcp_cleanup_rbuf: a window fallen to half the buffer that reading at least doubles.
    if (2 * open <= r.rcvbuf && wnd >= 2 * open && wnd - open >= rec.spec.tcp.cc.mss) {
        m_window_updates++;
        send_ack(r, r.rcv.ack_now(), now);
    }
}

}  // namespace fabricsim::host
