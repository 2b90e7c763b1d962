#include "fabricsim/host/host.h"

#include <algorithm>
#include <functional>

#include <nlohmann/json.hpp>

#include "fabricsim/core/frame_pool.h"
#include "fabricsim/core/kernel.h"

namespace fabricsim::host {

namespace {
// Every flow's receiver listens on one port; the sender's port tells the flows apart.
constexpr std::uint16_t SERVER_PORT = 5001;
std::uint16_t client_port(std::uint32_t flow) {
    return static_cast<std::uint16_t>(10000 + flow % 50000);
}
}  // namespace

host::host(const sc_core::sc_module_name& name, const host_identity& id, nic::nic_device& nic,
           flow_table& flows, std::uint64_t seed, ps_t lookahead)
    : sc_core::sc_module(name),
      m_id(id),
      m_nic(nic),
      m_flows(flows),
      m_seed(seed),
      m_lookahead(lookahead),
      m_data_reserve(std::min<std::size_t>(32, nic.tx_queue_capacity() / 4)) {
    nic.attach_host(*this);
}

void host::add_source(std::uint32_t flow_id, std::uint32_t dst_ip, const mac_addr& gateway_mac) {
    flow_record& rec = m_flows[flow_id];
    const flow_spec& spec = rec.spec;
    if (spec.transport == transport_kind::TCP) {
        rec.tx_slot = static_cast<std::uint32_t>(m_tx.size());
        m_tx.push_back(
            {flow_id, tcp_sender(spec.tcp.sender, spec.tcp.cc, spec.tcp.rtt), dst_ip, gateway_mac});
        m_tx.back().ect = m_tx.back().snd.cc().ecn_capable();
        return;
    }
    rec.tx_slot = static_cast<std::uint32_t>(m_sources.size());
    m_sources.push_back(
        {traffic_source(spec, m_seed, std::string(name()) + ".flow" + std::to_string(flow_id)),
         dst_ip, gateway_mac});
}

void host::add_tcp_receiver(std::uint32_t flow_id, std::uint32_t src_ip,
                            const mac_addr& gateway_mac) {
    flow_record& rec = m_flows[flow_id];
    rec.rx_slot = static_cast<std::uint32_t>(m_rx.size());
    m_rx.push_back({flow_id, tcp_receiver(rec.spec.tcp.receiver), src_ip, gateway_mac});
    m_rx.back().ect_acks = rec.spec.tcp.cc.kind == cc_kind::DCTCP;
}

void host::end_of_elaboration() {
    if (!m_tx.empty() || !m_rx.empty()) m_lookahead = 0;  // NIC posts must stay in time order
    m_heap.reserve(m_sources.size() + 2 * m_tx.size() + m_rx.size());
    for (std::uint32_t i = 0; i < m_sources.size(); ++i) {
        const ps_t t = m_sources[i].src.next();
        if (t != ~ps_t(0)) push_timer(t, timer_kind::UDP_SEND, i);
    }
    for (std::uint32_t i = 0; i < m_tx.size(); ++i)
        if (!m_flows[m_tx[i].flow].spec.app_driven)
            push_timer(m_flows[m_tx[i].flow].spec.start, timer_kind::TCP_START, i);
    rearm();
}

void host::push_timer(ps_t at, timer_kind kind, std::uint32_t slot) {
    m_heap.push_back({at, slot, kind});
    std::push_heap(m_heap.begin(), m_heap.end(), std::greater<timer>());
}

void host::rearm() {
    ps_t next = ~ps_t(0);
    if (!m_heap.empty()) next = m_heap.front().at;
    if (!m_rx_fifo.empty()) next = std::min(next, m_rx_fifo.front().at);
    if (next != ~ps_t(0)) m_wake.arm_at(std::max(next, now_ps()));
}

void host::on_timer() {
    const ps_t now = now_ps();
    const ps_t horizon = now + m_lookahead;
    for (;;) {
        const bool rx_due = !m_rx_fifo.empty() && m_rx_fifo.front().at <= now;
        const bool heap_due = !m_heap.empty() && m_heap.front().at <= horizon;
        if (!rx_due && !heap_due) break;
        // Received frames first among equal times, then timers in (time, kind, slot) order.
        if (rx_due && (!heap_due || m_rx_fifo.front().at <= m_heap.front().at)) {
            rx_entry e = m_rx_fifo.pop_front();
            process_rx(*e.f, e.at);
            continue;
        }
        std::pop_heap(m_heap.begin(), m_heap.end(), std::greater<timer>());
        const timer t = m_heap.back();
        m_heap.pop_back();
        fire(t, now);
    }
    rearm();
}

void host::fire(const timer& t, ps_t now) {
    switch (t.kind) {
        case timer_kind::UDP_SEND:
            send_udp(t.slot, t.at);
            break;
        case timer_kind::TCP_START: {
            tcp_tx& x = m_tx[t.slot];
            flow_record& rec = m_flows[x.flow];
            rec.started = t.at;
            if (rec.spec.size_bytes == 0)
                x.snd.set_unlimited();
            else
                x.snd.write(rec.spec.size_bytes);
            pump(t.slot, t.at);
            break;
        }
        case timer_kind::APP_WRITE: {
            const pending_write w = m_writes[t.slot];
            m_free_writes.push_back(t.slot);
            write_now(w.tx_slot, w.bytes, t.at);
            break;
        }
        case timer_kind::TCP_RTO: {
            tcp_tx& x = m_tx[t.slot];
            if (x.rto_queued != t.at) break;  // superseded by an earlier entry
            x.rto_queued = 0;
            const ps_t due = x.snd.rto_deadline();
            if (due == 0) break;
            if (due > now) {  // restarted since this entry was queued
                sync_rto(t.slot);
                break;
            }
            x.snd.on_rto_timer(now);
            pump(t.slot, now);
            break;
        }
        case timer_kind::TCP_DELACK: {
            tcp_rx& r = m_rx[t.slot];
            if (r.delack_queued != t.at) break;
            r.delack_queued = 0;
            const ps_t due = r.rcv.delayed_ack_deadline();
            if (due == 0) break;
            if (due > now) {
                r.delack_queued = due;
                push_timer(due, timer_kind::TCP_DELACK, t.slot);
                break;
            }
            ack_decision a;
            if (r.rcv.on_delayed_ack_timer(now, a)) send_ack(r, a, now);
            break;
        }
    }
}

void host::app_write(std::uint32_t flow, std::uint64_t bytes, ps_t at) {
    flow_record& rec = m_flows[flow];
    rec.app_written += bytes;
    rec.msg_end = rec.app_written;
    const ps_t now = now_ps();
    if (at <= now && sc_core::sc_is_running()) {
        write_now(rec.tx_slot, bytes, now);
    } else {
        std::uint32_t slot;
        if (!m_free_writes.empty()) {
            slot = m_free_writes.back();
            m_free_writes.pop_back();
            m_writes[slot] = {rec.tx_slot, bytes};
        } else {
            slot = static_cast<std::uint32_t>(m_writes.size());
            m_writes.push_back({rec.tx_slot, bytes});
        }
        push_timer(at, timer_kind::APP_WRITE, slot);
    }
    rearm();
}

void host::write_now(std::uint32_t tx_slot, std::uint64_t bytes, ps_t now) {
    tcp_tx& x = m_tx[tx_slot];
    flow_record& rec = m_flows[x.flow];
    if (rec.started == 0) rec.started = now;
    x.snd.write(bytes);
    pump(tx_slot, now);
}

void host::send_udp(std::uint32_t slot, ps_t at) {
    source_slot& s = m_sources[slot];
    const flow_spec& spec = s.src.spec();
    frame& f = new_frame(spec, s.dst_ip, s.dst_mac, client_port(spec.id), SERVER_PORT);
    f.ecn = spec.ect ? ecn_codepoint::ECT0 : ecn_codepoint::NOT_ECT;
    f.ip_id = static_cast<std::uint16_t>(s.src.emitted());
    f.set_ipv4(frame_kind::IPV4_UDP, spec.packet_bytes - IPV4_HEADER - UDP_HEADER);
    f.seq_no = s.src.emitted();
    f.created = at;
    flow_record& rec = m_flows[spec.id];
    rec.sent_frames++;
    rec.sent_bytes += f.frame_bytes();
    m_stats.sent_frames++;
    m_nic.post(f, at);
    s.src.advance();
    const ps_t nxt = s.src.next();
    if (nxt != ~ps_t(0)) push_timer(nxt, timer_kind::UDP_SEND, slot);
}

frame& host::new_frame(const flow_spec& spec, std::uint32_t dst_ip, const mac_addr& dst_mac,
                       std::uint16_t sport, std::uint16_t dport) {
    frame& f = frame_pool::global().acquire();
    f.src_mac = m_id.mac;
    f.dst_mac = dst_mac;
    f.src_ip = m_id.ip;
    f.dst_ip = dst_ip;
    f.dscp = spec.dscp;
    f.pcp = spec.pcp;
    f.vlan_tagged = spec.pcp != 0;
    f.src_port = sport;
    f.dst_port = dport;
    f.flow_id = spec.id;
    return f;
}

frame& host::new_tcp_frame(std::uint32_t flow, std::uint32_t dst_ip, const mac_addr& dst_mac,
                           std::uint16_t sport, std::uint16_t dport) {
    frame& f = new_frame(m_flows[flow].spec, dst_ip, dst_mac, sport, dport);
    f.tcp_window = 0xFFFF;
    return f;
}

void host::pump(std::uint32_t slot, ps_t now) {
    tcp_tx& x = m_tx[slot];
    flow_record& rec = m_flows[x.flow];
    tcp_segment seg;
    while (!x.blocked) {
        if (m_nic.tx_queue_free() <= m_data_reserve) {
            x.blocked = true;
            m_blocked.push_back(slot);
            m_nic.request_tx_ready();
            m_stats.tx_blocked++;
            break;
        }
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
        m_stats.sent_frames++;
        m_nic.post(f, now);
    }
    sync_rto(slot);
}

void host::sync_rto(std::uint32_t slot) {
    tcp_tx& x = m_tx[slot];
    const ps_t due = x.snd.rto_deadline();
    // An entry already queued at or before `due` re-queues itself when it surfaces.
    if (due != 0 && (x.rto_queued == 0 || due < x.rto_queued)) {
        x.rto_queued = due;
        push_timer(due, timer_kind::TCP_RTO, slot);
    }
}

void host::nic_tx_ready() {
    const ps_t now = now_ps();
    std::vector<std::uint32_t> ready;
    ready.swap(m_blocked);
    for (const std::uint32_t s : ready) m_tx[s].blocked = false;
    for (const std::uint32_t s : ready) pump(s, now);
    if (m_blocked.empty() && m_blocked.capacity() < ready.capacity()) m_blocked.swap(ready);
    rearm();
}

void host::send_ack(tcp_rx& r, const ack_decision& a, ps_t now) {
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
    f.set_ipv4(frame_kind::IPV4_TCP, 0);
    f.created = now;
    rec.ack_sent++;
    m_stats.sent_frames++;
    m_nic.post(f, now);
}

void host::nic_rx(frame& f, ps_t at) {
    m_stats.received_frames++;
    m_stats.received_bytes += f.frame_bytes();
    if (f.kind == frame_kind::IPV4_TCP && f.flow_id < m_flows.size() &&
        m_flows[f.flow_id].spec.transport == transport_kind::TCP) {
        // The protocol acts when the frame is in host memory.
        const bool was_empty = m_rx_fifo.empty();
        m_rx_fifo.push_back({&f, at});
        if (was_empty) m_wake.arm_at(at);
        return;
    }
    if (f.is_data() && f.flow_id < m_flows.size()) {
        m_flows.on_delivered(f.flow_id, f.frame_bytes(), f.payload_bytes, at - f.created, at);
        if (f.ecn == ecn_codepoint::CE) m_flows[f.flow_id].ce_frames++;
    }
    frame_pool::global().release(f);
}

void host::process_rx(frame& f, ps_t now) {
    if (f.payload_bytes > 0)
        on_tcp_data(f, now);
    else
        on_tcp_ack(f, now);
    frame_pool::global().release(f);
}

void host::on_tcp_data(frame& f, ps_t now) {
    flow_record& rec = m_flows[f.flow_id];
    m_flows.on_delivered(f.flow_id, f.frame_bytes(), f.payload_bytes, now - f.created, now);
    const bool ce = f.ecn == ecn_codepoint::CE;
    if (ce) rec.ce_frames++;
    tcp_rx& r = m_rx[rec.rx_slot];
    ack_decision acks[2];
    const unsigned n = r.rcv.on_segment(now, f.seq_no, f.payload_bytes, ce,
                                        (f.tcp_flags & tcp_flag::CWR) != 0, f.created, acks);
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
        push_timer(due, timer_kind::TCP_DELACK, rec.rx_slot);
    }
}

void host::on_tcp_ack(frame& f, ps_t now) {
    flow_record& rec = m_flows[f.flow_id];
    rec.ack_delivered++;
    tcp_tx& x = m_tx[rec.tx_slot];
    const bool ece = (f.tcp_flags & tcp_flag::ECE) != 0;
    x.snd.on_ack(now, f.ack_no, ece, f.ts_echo, f.sack_blocks, f.sack_edges.data());
    if (rec.spec.trace) {
        const auto& cc = x.snd.cc();
        rec.trace.push_back({now, cc.cwnd(), cc.ssthresh(), x.snd.flight(), x.snd.snd_una(),
                             cc.alpha(), cc.last_f(), x.snd.rtt().srtt(),
                             f.ts_echo && now > f.ts_echo ? now - f.ts_echo : 0, ece});
    }
    pump(rec.tx_slot, now);
}

void host::export_flow_results() const {
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
    }
}

void host::report_stats(nlohmann::json& out) const {
    out = {{"sent_frames", m_stats.sent_frames},
           {"received_frames", m_stats.received_frames},
           {"received_bytes", m_stats.received_bytes},
           {"tcp_senders", m_tx.size()},
           {"tcp_receivers", m_rx.size()},
           {"tx_blocked", m_stats.tx_blocked}};
}

}  // namespace fabricsim::host
