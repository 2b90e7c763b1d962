#include "fabricsim/host/roce_transport.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "fabricsim/core/kernel.h"
#include "fabricsim/host/host.h"

namespace fabricsim::host {

namespace {
bool is_last(std::uint8_t opcode) {
    return opcode == roce::SEND_LAST || opcode == roce::SEND_ONLY;
}
}  // namespace

void roce_transport::add_source(std::uint32_t flow, const flow_path& to) {
    flow_record& rec = m_flows[flow];
    rec.tx_slot = static_cast<std::uint32_t>(m_tx.size());
    if (!rec.roce) rec.roce = std::make_unique<roce_flow_state>();
    m_tx.push_back({flow, roce_requester(rec.spec.roce), to.peer_ip, to.next_hop});
}

void roce_transport::add_sink(std::uint32_t flow, const flow_path& from) {
    flow_record& rec = m_flows[flow];
    rec.rx_slot = static_cast<std::uint32_t>(m_rx.size());
    if (!rec.roce) rec.roce = std::make_unique<roce_flow_state>();
    m_rx.push_back({flow, roce_responder(rec.spec.roce), from.peer_ip, from.next_hop,
                    nic::cnp_pacer(m_host.nic().config().dcqcn.cnp_gap())});
}

void roce_transport::start() {
    if (m_host.nic().dcqcn()) m_rp.resize(m_host.nic().limiters()->size());
    for (std::uint32_t i = 0; i < m_tx.size(); ++i)
        schedule(m_flows[m_tx[i].flow].spec.start, START, i);
}

std::size_t roce_transport::depth() {
    if (m_depth) return m_depth;
    // Frames at line rate that cover the NIC's post-to-MAC latency, plus two.
    std::uint32_t mtu = ~0u;
    for (const qp_tx& x : m_tx) mtu = std::min(mtu, m_flows[x.flow].spec.roce.mtu);
    const double wire = double(mtu + roce::udp_payload(roce::SEND_MIDDLE, 0) + ETH_HEADER +
                               IPV4_HEADER + UDP_HEADER + FCS_BYTES + PREAMBLE_SFD + IFG_BYTES);
    const double frame_ps = wire * 8 * double(PS_PER_S) / double(m_host.nic().rate_bps());
    const double lat = double(m_host.nic().config().idle_tx_latency(
        mtu + roce::udp_payload(roce::SEND_MIDDLE, 0) + ETH_HEADER + IPV4_HEADER + UDP_HEADER));
    m_depth = static_cast<std::size_t>(std::ceil(lat / frame_ps)) + 2;
    m_depth = std::min(m_depth, m_host.nic().tx_queue_capacity());
    return m_depth;
}

void roce_transport::on_timer(std::uint8_t timer_kind, std::uint32_t slot, ps_t at, ps_t now) {
    switch (timer_kind) {
        case START:
            on_start(slot, at);
            break;
        case PACE: {
            qp_tx& x = m_tx[slot];
            if (x.pace_queued != at) return;
            x.pace_queued = 0;
            make_ready(slot, now);
            pump(now);
            break;
        }
        case RTO:
            on_rto(slot, at, now);
            break;
        case RP_TIMER:
            on_rp_timer(slot, at, now);
            break;
        default:
            on_cnp_due(slot, at, now);
            break;
    }
}

void roce_transport::on_start(std::uint32_t slot, ps_t at) {
    qp_tx& x = m_tx[slot];
    flow_record& rec = m_flows[x.flow];
    rec.started = at;
    if (rec.spec.size_bytes == 0)
        x.req.set_unlimited();
    else
        x.req.write(rec.spec.size_bytes);
    make_ready(slot, at);
    pump(at);
}

void roce_transport::make_ready(std::uint32_t slot, ps_t now) {
    qp_tx& x = m_tx[slot];
    if (x.ready || x.pace_queued || !x.req.has_packet()) return;
    if (x.limiter >= 0) {
        const ps_t t = m_host.nic().limiters()->at(unsigned(x.limiter)).earliest_start(now);
        if (t > now) {
            x.pace_queued = t;
            schedule(t, PACE, slot);
            return;
        }
    }
    x.ready = true;
    m_ready.push_back(slot);
}

void roce_transport::pump(ps_t now) {
    nic::nic_device& nic = m_host.nic();
    while (!m_ready.empty()) {
        if (nic.tx_queued() >= depth()) {
            if (!m_waiting) {
                m_waiting = true;
                m_host.wait_for_tx(*this, depth() - 1);
            }
            return;
        }
        const std::uint32_t slot = m_ready.pop_front();
        qp_tx& x = m_tx[slot];
        x.ready = false;
        // A limiter shared with other flows may have been used since this QP became ready.
        if (x.limiter >= 0 && nic.limiters()->at(unsigned(x.limiter)).earliest_start(now) > now) {
            make_ready(slot, now);
            continue;
        }
        if (!x.req.has_packet()) continue;
        send_packet(slot, now);
        make_ready(slot, now);
    }
}

void roce_transport::on_tx_ready(ps_t now) {
    m_waiting = false;
    pump(now);
}

void roce_transport::send_packet(std::uint32_t slot, ps_t now) {
    qp_tx& x = m_tx[slot];
    flow_record& rec = m_flows[x.flow];
    const roce_requester::packet p = x.req.next_packet(now);
    frame& f =
        m_host.new_frame(rec.spec, x.dst_ip, x.next_hop, client_port(x.flow), roce::UDP_PORT);
    f.ecn = m_host.nic().dcqcn() ? ecn_codepoint::ECT0 : ecn_codepoint::NOT_ECT;
    f.bth_opcode = p.opcode;
    f.seq_no = p.psn;
    f.ip_id = static_cast<std::uint16_t>(rec.sent_frames);
    f.set_ipv4(frame_kind::IPV4_UDP, roce::udp_payload(p.opcode, p.payload));
    f.created = now;
    rec.sent_frames++;
    rec.sent_bytes += f.frame_bytes();
    const std::uint32_t frame_bytes = f.frame_bytes();
    const std::uint32_t wire = f.wire_bytes();
    m_host.post(f, now);
    if (x.limiter >= 0) {
        const auto l = unsigned(x.limiter);
        m_host.nic().limiters()->at(l).sent(wire, now);
        nic::dcqcn_rp& rp = *m_rp[l].rp;
        const double before = rp.rate_bps();
        rp.on_bytes_sent(frame_bytes, now);
        if (rp.rate_bps() != before) rp_update(l, now, roce_trace_row::event::BYTES, x.flow);
    }
    sync_rto(slot);
}

void roce_transport::sync_rto(std::uint32_t slot) {
    qp_tx& x = m_tx[slot];
    const ps_t due = x.req.timeout_deadline();
    if (due != 0 && (x.rto_queued == 0 || due < x.rto_queued)) {
        x.rto_queued = due;
        schedule(due, RTO, slot);
    }
}

void roce_transport::on_rto(std::uint32_t slot, ps_t at, ps_t now) {
    qp_tx& x = m_tx[slot];
    if (x.rto_queued != at) return;
    x.rto_queued = 0;
    const ps_t due = x.req.timeout_deadline();
    if (due == 0) return;
    if (due > now) {
        sync_rto(slot);
        return;
    }
    x.req.on_timeout(now);
    sync_rto(slot);
    make_ready(slot, now);
    pump(now);
}

void roce_transport::on_frame(frame& f, ps_t at) {
    if (f.bth_opcode == roce::ACKNOWLEDGE)
        on_response(f, at);
    else if (f.bth_opcode == roce::CNP) {
        m_flows[f.flow_id].ack_delivered++;
        on_cnp(m_flows[f.flow_id].tx_slot, at);
    } else
        on_data(f, at);
}

void roce_transport::on_data(frame& f, ps_t now) {
    flow_record& rec = m_flows[f.flow_id];
    qp_rx& r = m_rx[rec.rx_slot];
    const std::uint32_t data = f.payload_bytes - roce::udp_payload(f.bth_opcode, 0);
    const bool ce = f.ecn == ecn_codepoint::CE;
    const roce_response resp = r.rsp.on_packet(f.seq_no, data, is_last(f.bth_opcode));
    if (resp.accepted) {
        m_flows.on_delivered(f.flow_id, f.frame_bytes(), data, now - f.created, now);
        rec.rx_bytes = r.rsp.delivered_bytes();
        if (rec.completed == 0 && rec.spec.size_bytes != 0 && rec.rx_bytes >= rec.spec.size_bytes)
            rec.completed = now;
    }
    if (ce) rec.ce_frames++;
    if (resp.ack || resp.nak) post_response(r, resp.nak, resp.psn, now);
    if (ce && m_host.nic().dcqcn()) {
        if (r.np.on_marked_packet(now)) {
            post_cnp(r, now);
        } else if (const ps_t due = r.np.next_due();
                   due != nic::cnp_pacer::NEVER && r.cnp_queued != due) {
            r.cnp_queued = due;
            schedule(due, CNP_DUE, rec.rx_slot);
        }
    }
}

void roce_transport::on_cnp_due(std::uint32_t slot, ps_t at, ps_t now) {
    qp_rx& r = m_rx[slot];
    if (r.cnp_queued != at) return;
    r.cnp_queued = 0;
    if (r.np.on_due(now)) post_cnp(r, now);
}

void roce_transport::post_response(qp_rx& r, bool nak, std::uint64_t psn, ps_t now) {
    flow_record& rec = m_flows[r.flow];
    frame& f = m_host.new_frame(rec.spec, r.src_ip, r.next_hop, SERVER_PORT, roce::UDP_PORT);
    // With DCQCN every packet of the QP is ECN-capable, ACKs too: RED in the lossless class
    // marks them (the NP ignores marks on ACKs) instead of dropping them.
    f.ecn = m_host.nic().dcqcn() ? ecn_codepoint::ECT0 : ecn_codepoint::NOT_ECT;
    f.bth_opcode = roce::ACKNOWLEDGE;
    f.aeth_syndrome = nak ? roce::AETH_NAK_SEQ : roce::AETH_ACK;
    f.ack_no = psn;
    f.ip_id = static_cast<std::uint16_t>(rec.ack_sent);
    f.set_ipv4(frame_kind::IPV4_UDP, roce::udp_payload(roce::ACKNOWLEDGE, 0));
    f.created = now;
    rec.ack_sent++;
    m_host.post(f, now);
}

void roce_transport::post_cnp(qp_rx& r, ps_t now) {
    flow_record& rec = m_flows[r.flow];
    frame& f = m_host.new_frame(rec.spec, r.src_ip, r.next_hop, SERVER_PORT, roce::UDP_PORT);
    f.dscp = m_host.nic().config().dcqcn.cnp_dscp;
    if (f.vlan_tagged) f.pcp = 6;  // Mellanox cnp_802p_prio
    f.bth_opcode = roce::CNP;
    f.set_ipv4(frame_kind::IPV4_UDP, roce::udp_payload(roce::CNP, 0));
    f.created = now;
    rec.roce->result.cnps_sent++;
    rec.ack_sent++;  // a response frame: joins the frame balance with the ACKs
    if (rec.spec.trace) rec.roce->trace.push_back({now, roce_trace_row::event::CNP_SENT, 0, 0, 0});
    m_host.post(f, now);
}

void roce_transport::on_response(frame& f, ps_t now) {
    flow_record& rec = m_flows[f.flow_id];
    rec.ack_delivered++;
    qp_tx& x = m_tx[rec.tx_slot];
    if (f.aeth_syndrome == roce::AETH_NAK_SEQ)
        x.req.on_nak(f.ack_no, now);
    else
        x.req.on_ack(f.ack_no, now);
    sync_rto(rec.tx_slot);
    make_ready(rec.tx_slot, now);
    pump(now);
}

void roce_transport::on_cnp(std::uint32_t slot, ps_t now) {
    qp_tx& x = m_tx[slot];
    flow_record& rec = m_flows[x.flow];
    rec.roce->result.cnps_received++;
    nic::rate_limiter_bank* bank = m_host.nic().limiters();
    if (!bank || !m_host.nic().dcqcn()) return;  // no reaction point: counted, ignored
    if (x.limiter < 0) {
        x.limiter = bank->bind(x.flow);
        rp_slot& s = m_rp[unsigned(x.limiter)];
        if (!s.rp) {
            s.rp = std::make_unique<nic::dcqcn_rp>(*m_host.nic().dcqcn());
            s.owner = x.flow;
        }
    }
    const auto l = unsigned(x.limiter);
    m_rp[l].rp->on_cnp(now);
    rp_update(l, now, roce_trace_row::event::CNP, x.flow);
}

void roce_transport::on_rp_timer(std::uint32_t l, ps_t at, ps_t now) {
    rp_slot& s = m_rp[l];
    if (s.timer_queued != at) return;
    s.timer_queued = 0;
    s.rp->on_timer(now);
    rp_update(l, now, roce_trace_row::event::TIMER, s.owner);
}

void roce_transport::rp_update(unsigned l, ps_t now, roce_trace_row::event why,
                               std::uint32_t flow) {
    rp_slot& s = m_rp[l];
    const nic::dcqcn_rp& rp = *s.rp;
    m_host.nic().limiters()->at(l).set_rate(
        static_cast<std::uint64_t>(std::llround(rp.rate_bps())));
    flow_record& rec = m_flows[flow];
    const bool changed = rp.rate_bps() != s.traced_rc || rp.target_bps() != s.traced_rt;
    if (rec.spec.trace && (changed || why != roce_trace_row::event::TIMER)) {
        rec.roce->trace.push_back({now, why, rp.rate_bps(), rp.target_bps(), rp.alpha()});
        s.traced_rc = rp.rate_bps();
        s.traced_rt = rp.target_bps();
    }
    const ps_t next = rp.next_rate_change();
    if (next != nic::dcqcn_rp::NEVER && (s.timer_queued == 0 || next < s.timer_queued)) {
        s.timer_queued = next;
        schedule(next, RP_TIMER, l);
    }
}

std::uint64_t roce_transport::timeouts(std::uint32_t flow) const {
    return m_tx[m_flows[flow].tx_slot].req.stats().timeouts;
}

void roce_transport::export_flow_results() const {
    const nic::rate_limiter_bank* bank = m_host.nic().limiters();
    for (const qp_tx& x : m_tx) {
        roce_flow_result& r = m_flows[x.flow].roce->result;
        const auto& st = x.req.stats();
        r.packets = st.packets;
        r.retransmitted = st.retransmitted;
        r.acked_bytes = x.req.acked_bytes();
        r.naks_received = st.naks;
        r.timeouts = st.timeouts;
        r.limiter = x.limiter;
        if (x.limiter >= 0) {
            r.shared_limiter = bank->users(unsigned(x.limiter)) > 1;
            r.rate_bps = m_rp[unsigned(x.limiter)].rp->rate_bps();
        }
    }
    for (const qp_rx& q : m_rx) {
        roce_flow_result& r = m_flows[q.flow].roce->result;
        r.out_of_sequence = q.rsp.stats().out_of_sequence;
        r.duplicates = q.rsp.stats().duplicates;
        r.marked = q.np.stats().marked;
    }
}

void roce_transport::add_drops(drop_counters& d) const {
    for (const qp_rx& q : m_rx) {
        d.add(drop_cause::OUT_OF_SEQUENCE, q.rsp.stats().out_of_sequence);
        d.add(drop_cause::DUPLICATE, q.rsp.stats().duplicates);
    }
}

void roce_transport::report_stats(nlohmann::json& out) const {
    if (m_tx.empty() && m_rx.empty()) return;
    out["roce_requesters"] = m_tx.size();
    out["roce_responders"] = m_rx.size();
    if (const nic::rate_limiter_bank* bank = m_host.nic().limiters()) {
        const auto& s = bank->stats();
        out["rate_limiters"] = {{"size", bank->size()},
                                {"in_use", bank->in_use()},
                                {"peak_in_use", s.peak_in_use},
                                {"bindings", s.bindings},
                                {"shared_bindings", s.shared_bindings}};
    }
}

}  // namespace fabricsim::host
