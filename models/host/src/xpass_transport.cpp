#include "fabricsim/host/xpass_transport.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "fabricsim/host/host.h"

namespace fabricsim::host {

namespace {
/// Wire bytes of a frame of `length` L2 bytes (FCS, preamble and IFG added).
constexpr std::uint32_t wire_of(std::uint32_t length) {
    return length + FCS_BYTES + PREAMBLE_SFD + IFG_BYTES;
}
}  // namespace

void xpass_transport::add_source(std::uint32_t flow, const flow_path& to) {
    flow_record& rec = m_flows[flow];
    if (!rec.xpass) rec.xpass = std::make_unique<xpass_flow_state>();
    if (rec.spec.xpass.flashpass) {
        const xpass_params& p = rec.spec.xpass;
        const ps_t t_wait = p.fp.t_wait.value_or(0);
        // Data must reach each hop after its emulation packet's credit came back: T_wait at
        // least the path's round trip (seed-002 §1.4). The thesis' own example sets it to the
        // max RTT exactly, which switch and host latencies exceed: a warning, not a refusal.
        if (t_wait < to.idle_rtt && !m_warned_t_wait) {
            m_warned_t_wait = true;
            char rtt[32];
            std::snprintf(rtt, sizeof rtt, "%.3f us", double(to.idle_rtt) / double(PS_PER_US));
            std::cerr << "fabricsim-sim: warning: flashpass.t_wait: " << format_time(t_wait)
                      << " is below the idle round trip of flow " << flow << " (" << rtt
                      << "): its credits come back after T + t_wait and send their data at once "
                         "(late_credits)\n";
        }
        rec.tx_slot = static_cast<std::uint32_t>(m_fp.size());
        const double max_rate = p.max_rate_ratio * double(m_host.nic().rate_bps()) / 8.0;
        fp_tx& x = m_fp.emplace_back(
            flow, to.peer_ip, to.next_hop,
            flashpass_rate_control(p.fp.min_target_loss(), p.fp.max_target_loss(), max_rate),
            rng(m_host.seed(), std::string(m_host.name()) + ".flashpass" + std::to_string(flow)));
        x.t_wait = t_wait;
        x.idle_rtt = std::max<ps_t>(to.idle_rtt, 1);
        x.packets = (rec.spec.size_bytes + MAX_DATA - 1) / MAX_DATA;
        // The release FIFO holds at most t_wait of credits at the maximum rate (set-up only).
        std::uint64_t cap = t_wait / std::max<ps_t>(x.ctl.gap_at_max(), 1) + 16;
        if (x.packets != 0) cap = std::min<std::uint64_t>(cap, x.packets + 1);
        x.ring.resize(static_cast<std::size_t>(cap));
        if (p.aeolus && x.packets != 0) {
            // FlashPass*: the first-RTT budget, one BDP of the idle path (as Aeolus's).
            const auto budget = static_cast<std::uint64_t>(
                double(m_host.nic().rate_bps()) * double(to.idle_rtt) / 8.0 / double(PS_PER_S));
            x.early = true;
            x.first_rtt.reset(
                std::clamp<std::uint64_t>((budget + MAX_DATA - 1) / MAX_DATA, 1, x.packets));
        }
        return;
    }
    rec.tx_slot = static_cast<std::uint32_t>(m_tx.size());
    xp_tx& x = m_tx.emplace_back(flow, to.peer_ip, to.next_hop);
    x.packets = (rec.spec.size_bytes + MAX_DATA - 1) / MAX_DATA;
    const xpass_params& p = rec.spec.xpass;
    if (p.aeolus && x.packets != 0) {
        // The first-RTT budget: one BDP of the idle path at this NIC's line rate by default.
        const std::uint64_t budget =
            p.aeolus_first_rtt
                ? *p.aeolus_first_rtt
                : static_cast<std::uint64_t>(double(m_host.nic().rate_bps()) * double(to.idle_rtt) /
                                             8.0 / double(PS_PER_S));
        x.aeolus = true;
        x.first_rtt.reset(
            std::clamp<std::uint64_t>((budget + MAX_DATA - 1) / MAX_DATA, 1, x.packets));
    }
}

void xpass_transport::add_sink(std::uint32_t flow, const flow_path& from) {
    flow_record& rec = m_flows[flow];
    rec.rx_slot = static_cast<std::uint32_t>(m_rx.size());
    if (!rec.xpass) rec.xpass = std::make_unique<xpass_flow_state>();
    const xpass_params& p = rec.spec.xpass;
    // The credit share of this host's link, in credit wire bytes/s.
    const double max_rate = p.max_rate_ratio * double(m_host.nic().rate_bps()) / 8.0;
    xp_rx& r = m_rx.emplace_back(
        flow, from.peer_ip, from.next_hop, xpass_credit_control(p, max_rate),
        rng(m_host.seed(), std::string(m_host.name()) + ".xpass" + std::to_string(flow)));
    r.flashpass = p.flashpass;
    if (p.flashpass && p.fp.credits_per_frame() > 1)
        r.batch = flashpass_credit_batch(p.fp.credits_per_frame(), p.fp.t_wait.value_or(0));
    if (p.aeolus && rec.spec.size_bytes != 0) {
        r.aeolus = true;
        r.window.reset((rec.spec.size_bytes + MAX_DATA - 1) / MAX_DATA);
    }
}

void xpass_transport::start() {
    if (const auto& cq = m_host.credit_queue(); cq && (!m_rx.empty() || !m_fp.empty())) {
        // Receivers send credits, FlashPass senders emulation packets: this link end's queue.
        nic::rate_limiter_config lc;
        lc.mode = nic::limiter_mode::TOKEN_BUCKET;
        lc.depth_bytes = cq->burst_bytes;
        m_cq = std::make_unique<link_credit_queue>();
        m_cq->bucket = nic::rate_limiter(lc);
        m_cq->bucket.set_rate(
            static_cast<std::uint64_t>(std::llround(cq->ratio * double(m_host.nic().rate_bps()))),
            0);
        m_cq->bucket.sent(static_cast<std::uint32_t>(cq->burst_bytes), 0);  // starts empty
        m_cq->fifo.resize(cq->buffer_bytes / 84 + 1);
        m_cq->buffer = cq->buffer_bytes;
        m_cq->selective_drop = cq->selective_drop;
        m_cq->jitter = cq->jitter;
        if (cq->jitter != 0)
            m_cq->draws.emplace(m_host.seed(), std::string(m_host.name()) + ".credit_queue");
    }
    m_blocked.reserve(2 * m_tx.size());
    for (std::uint32_t i = 0; i < m_tx.size(); ++i)
        schedule(m_flows[m_tx[i].flow].spec.start, START, i);
    for (std::uint32_t i = 0; i < m_fp.size(); ++i)
        schedule(m_flows[m_fp[i].flow].spec.start, FP_START, i);
}

void xpass_transport::on_timer(std::uint8_t kind, std::uint32_t slot, ps_t at, ps_t /*now*/) {
    switch (kind) {
        case START:
            on_start(slot, at);
            break;
        case CREDIT:
            on_credit_due(slot, at);
            break;
        case REQUEST_RETRY:
            on_request_retry(slot, at);
            break;
        case NACK_RETRY:
            on_nack_retry(slot, at);
            break;
        case DEMAND_CHECK:
            on_demand_check(slot, at);
            break;
        case FP_START:
            on_fp_start(slot, at);
            break;
        case EMULATE:
            on_emulate(slot, at);
            break;
        case RELEASE:
            on_release(slot, at);
            break;
        case FLUSH:
            on_flush(slot, at);
            break;
        default:
            on_credit_tx(at);
            break;
    }
}

frame& xpass_transport::control_frame(const flow_spec& spec, std::uint32_t dst_ip,
                                      const mac_addr& next_hop, bool from_sender, std::uint8_t type,
                                      std::uint32_t wire_bytes) {
    frame& f = from_sender
                   ? m_host.new_frame(spec, dst_ip, next_hop, client_port(spec.id), SERVER_PORT)
                   : m_host.new_frame(spec, dst_ip, next_hop, SERVER_PORT, client_port(spec.id));
    f.set_ipv4(frame_kind::CREDIT, 0);
    f.length = std::max<std::uint32_t>(f.length, wire_bytes - wire_of(0));
    f.payload_bytes = f.length - f.header_bytes();
    f.credit_type = type;
    // Aeolus: control in the data queue is ECT, never selectively dropped.
    if (spec.xpass.aeolus && type != credit_type::CREDIT) f.ecn = ecn_codepoint::ECT0;
    m_flows[spec.id].control_sent++;
    return f;
}

void xpass_transport::post_control(frame& f, std::uint64_t seq, ps_t now) {
    f.seq_no = seq;
    f.created = now;
    if (m_cq && f.dscp == m_flows[f.flow_id].spec.xpass.credit_dscp)
        return post_credit_class(f, now);
    m_host.post(f, now);
}

void xpass_transport::post_credit_class(frame& f, ps_t now) {
    link_credit_queue& q = *m_cq;
    const std::uint32_t bytes = f.wire_bytes();
    const std::uint32_t cost = q.cost(bytes);
    if (q.count == 0 && q.bucket.earliest_start(now, cost) <= now) {
        q.bucket.sent(cost, now);
        q.sent++;
        m_host.post(f, now);
        return;
    }
    // Tail drop on the FIFO's wire bytes; non-ECT above selective_drop frames (FlashPass).
    const bool selective =
        q.selective_drop != 0 && f.ecn == ecn_codepoint::NOT_ECT && q.count + 1 > q.selective_drop;
    if (selective || q.count == q.fifo.size() || q.bytes + bytes > q.buffer) {
        q.dropped++;
        m_host.discard(f);
        return;
    }
    q.fifo[(q.head + q.count) % q.fifo.size()] = {&f, cost};
    q.count++;
    q.bytes += bytes;
    if (q.count == 1) {
        q.queued = q.bucket.earliest_start(now, cost);
        schedule_rare(q.queued, CREDIT_TX, 0);
    }
}

void xpass_transport::schedule_rare(ps_t at, std::uint8_t kind, std::uint32_t slot) {
    schedule(at, kind, slot);
}

void xpass_transport::on_credit_tx(ps_t at) {
    link_credit_queue& q = *m_cq;
    if (q.queued != at) return;
    q.queued = 0;
    while (q.count != 0 && q.bucket.earliest_start(at, q.fifo[q.head].cost) <= at) {
        const link_credit_queue::entry e = q.fifo[q.head];
        q.bucket.sent(e.cost, at);
        q.head = (q.head + 1) % q.fifo.size();
        q.count--;
        q.bytes -= e.f->wire_bytes();
        q.sent++;
        e.f->created = at;  // its send time (FlashPass's T, ExpressPass's credit time): now
        m_host.post(*e.f, at);
    }
    if (q.count != 0) {
        q.queued = q.bucket.earliest_start(at, q.fifo[q.head].cost);
        schedule_rare(q.queued, CREDIT_TX, 0);
    }
}

// ---------------------------------------------------------------- sender

void xpass_transport::on_start(std::uint32_t slot, ps_t at) {
    xp_tx& x = m_tx[slot];
    m_flows[x.flow].started = at;
    send_request(x, slot, at);
    if (x.aeolus) pump_unscheduled(slot, at);
}

// The first-RTT burst keeps at most about 20 us of line-rate frames (at least 8) in the NIC's
// one TX queue and refills it at half: frames sent on credits, the host's other flows' included,
// then wait behind that much unscheduled data at most, not behind a whole BDP (megabytes on a
// WAN path, which made them late or dropped at the NIC and crushed them downstream).
std::size_t xpass_transport::burst_depth() const {
    constexpr double WINDOW_S = 20e-6;
    const double frames = double(m_host.nic().rate_bps()) * WINDOW_S / (8.0 * 1538.0);
    return std::max<std::size_t>(8, static_cast<std::size_t>(frames));
}

void xpass_transport::pump_unscheduled(std::uint32_t slot, ps_t now) {
    xp_tx& x = m_tx[slot];
    if (x.probe_sent || x.blocked) return;
    while (x.next_pkt < x.first_rtt.unscheduled()) {
        if (m_host.nic().tx_queued() >= burst_depth() || !m_host.tx_room_for_data()) {
            x.blocked = true;
            m_blocked.push_back(slot);
            m_host.wait_for_tx(*this, burst_depth() / 2);
            return;
        }
        x.first_rtt.sent_unscheduled(x.next_pkt);
        post_data(x, x.next_pkt++, nullptr, now);
    }
    // Right behind the burst: its ACK tells which unscheduled packets are missing.
    const flow_spec& spec = m_flows[x.flow].spec;
    post_control(control_frame(spec, x.dst_ip, x.next_hop, true, PROBE, 84), x.next_pkt, now);
    x.probe_sent = true;
    x.counters.probes++;
    maybe_stop(x, now);
}

void xpass_transport::pump_fp_unscheduled(std::uint32_t slot, ps_t now) {
    fp_tx& x = m_fp[slot];
    if (x.probe_sent || x.blocked) return;
    while (x.next_pkt < x.first_rtt.unscheduled()) {
        if (m_host.nic().tx_queued() >= burst_depth() || !m_host.tx_room_for_data()) {
            x.blocked = true;
            m_fp_blocked.push_back(slot);
            m_host.wait_for_tx(*this, burst_depth() / 2);
            return;
        }
        x.first_rtt.sent_unscheduled(x.next_pkt);
        post_fp_data(x, fp_release{now, x.next_pkt++, 0, 0}, now, true);
    }
    const flow_spec& spec = m_flows[x.flow].spec;
    post_control(control_frame(spec, x.dst_ip, x.next_hop, true, PROBE, 84), x.next_pkt, now);
    x.probe_sent = true;
    x.counters.probes++;
}

void xpass_transport::resume_emulation(std::uint32_t slot, ps_t now) {
    fp_tx& x = m_fp[slot];
    if (x.emu_queued != 0 && x.paused_at == 0) return;  // emulating
    x.paused_at = 0;
    x.emu_queued = now;
    on_emulate(slot, now);
}

void xpass_transport::on_tx_ready(ps_t now) {
    if (!m_fp_blocked.empty()) {
        const std::size_t k = m_fp_blocked.size();
        for (std::size_t i = 0; i < k; ++i) m_fp[m_fp_blocked[i]].blocked = false;
        for (std::size_t i = 0; i < k; ++i) pump_fp_unscheduled(m_fp_blocked[i], now);
        m_fp_blocked.erase(m_fp_blocked.begin(),
                           m_fp_blocked.begin() + static_cast<std::ptrdiff_t>(k));
    }
    // Pumping may block again (appending): serve the ones waiting now.
    const std::size_t n = m_blocked.size();
    for (std::size_t i = 0; i < n; ++i) m_tx[m_blocked[i]].blocked = false;
    for (std::size_t i = 0; i < n; ++i) pump_unscheduled(m_blocked[i], now);
    m_blocked.erase(m_blocked.begin(), m_blocked.begin() + static_cast<std::ptrdiff_t>(n));
}

void xpass_transport::maybe_stop(xp_tx& x, ps_t now) {
    if (x.state == tx_state::STOPPED || !x.probe_sent || x.next_pkt < x.packets ||
        x.first_rtt.queued() != 0)
        return;
    send_stop(x, now);
    x.state = tx_state::STOPPED;
}

void xpass_transport::on_probe_ack(xp_tx& x, ps_t /*now*/) {
    // Every ACK of the burst came before this answer (one path, FIFO): what is not ACKed was
    // dropped. The missing packets go on the next credits.
    if (x.first_rtt.on_probe_ack() != 0 && x.state == tx_state::STOPPED)
        x.state = tx_state::RECEIVING;
}

void xpass_transport::send_request(xp_tx& x, std::uint32_t slot, ps_t now) {
    const flow_spec& spec = m_flows[x.flow].spec;
    // Aeolus: the request carries the packet count (the receiver takes them in any order).
    post_control(control_frame(spec, x.dst_ip, x.next_hop, true, credit_type::REQUEST, 84),
                 x.aeolus ? x.packets : 0, now);
    x.counters.requests++;
    x.state = tx_state::REQUESTING;
    x.retry_queued = now + spec.xpass.retransmit_timeout;
    schedule(x.retry_queued, REQUEST_RETRY, slot);
}

void xpass_transport::on_request_retry(std::uint32_t slot, ps_t at) {
    xp_tx& x = m_tx[slot];
    if (x.retry_queued != at) return;
    x.retry_queued = 0;
    if (x.state == tx_state::REQUESTING) send_request(x, slot, at);
}

void xpass_transport::on_credit(xp_tx& x, const frame& f, ps_t now) {
    x.counters.credits_received++;
    const xpass_params& p = m_flows[x.flow].spec.xpass;
    if (x.state == tx_state::REQUESTING) x.state = tx_state::RECEIVING;
    if (x.aeolus && x.state == tx_state::RECEIVING) {
        // Missing first-RTT packets first, then new data.
        std::uint64_t pkt = 0;
        if (x.first_rtt.take_resend(pkt)) {
            x.counters.retransmitted++;
            post_data(x, pkt, &f, now);
            return maybe_stop(x, now);
        }
        if (x.next_pkt < x.packets) {
            post_data(x, x.next_pkt++, &f, now);
            if (!x.probe_sent && x.next_pkt >= x.first_rtt.unscheduled())
                pump_unscheduled(m_flows[x.flow].tx_slot, now);
            return maybe_stop(x, now);
        }
    }
    if (!x.aeolus && x.state == tx_state::RECEIVING && (x.packets == 0 || x.next_pkt < x.packets)) {
        send_data(x, f, now);
        if (x.packets != 0 && x.next_pkt == x.packets) {
            send_stop(x, now);
            x.state = tx_state::STOPPED;
        }
        return;
    }
    x.counters.credits_wasted++;
    // Credits still coming long after the STOP: it was lost, send it again.
    if (x.state == tx_state::STOPPED && now - x.stop_sent >= p.stop_timeout) send_stop(x, now);
}

void xpass_transport::send_stop(xp_tx& x, ps_t now) {
    // The STOP carries the flow's packet count: a receiver missing some NACKs them.
    post_control(
        control_frame(m_flows[x.flow].spec, x.dst_ip, x.next_hop, true, credit_type::STOP, 84),
        x.packets, now);
    x.counters.stops++;
    x.stop_sent = now;
}

void xpass_transport::send_data(xp_tx& x, const frame& credit, ps_t now) {
    post_data(x, x.next_pkt++, &credit, now);
}

void xpass_transport::post_data(xp_tx& x, std::uint64_t pkt, const frame* credit, ps_t now) {
    flow_record& rec = m_flows[x.flow];
    std::uint32_t data = MAX_DATA;
    if (x.packets != 0 && pkt + 1 == x.packets)
        data = static_cast<std::uint32_t>(rec.spec.size_bytes - pkt * MAX_DATA);
    frame& f = m_host.new_frame(rec.spec, x.dst_ip, x.next_hop, client_port(x.flow), SERVER_PORT);
    f.set_ipv4(frame_kind::IPV4_UDP, data + XPASS_FIELDS);
    f.payload_bytes = data + XPASS_FIELDS;
    f.seq_no = pkt;
    if (credit) {
        f.ack_no = credit->seq_no;    // the credit's sequence number, echoed
        f.ts_echo = credit->created;  // and its send time
        if (x.aeolus) f.ecn = ecn_codepoint::ECT0;
    } else {
        x.counters.unscheduled_sent++;  // non-ECT: selectively dropped above K
    }
    f.ip_id = static_cast<std::uint16_t>(pkt);
    f.created = now;
    rec.sent_frames++;
    rec.sent_bytes += f.frame_bytes();
    x.counters.packets++;
    m_host.post(f, now);
}

void xpass_transport::on_nack(xp_tx& x, std::uint64_t pkt, ps_t /*now*/) {
    if (x.aeolus && pkt < x.first_rtt.unscheduled()) {
        // A first-RTT packet: resent on a credit (once, unless the NACK comes again).
        if (pkt < x.next_pkt && x.first_rtt.request(pkt) && x.state == tx_state::STOPPED)
            x.state = tx_state::RECEIVING;
        return;
    }
    if (pkt >= x.next_pkt) return;  // already past it (a NACK overtaken by the resend)
    x.counters.retransmitted += x.next_pkt - pkt;
    x.next_pkt = pkt;
    // The receiver keeps crediting until it has everything: resume on its credits.
    if (x.state == tx_state::STOPPED) x.state = tx_state::RECEIVING;
}

// ---------------------------------------------------------------- receiver

void xpass_transport::on_request(xp_rx& r, std::uint32_t slot, ps_t now) {
    if (r.credit_queued != 0 || complete(r)) return;  // crediting already, or done
    if (!r.started) {
        r.ctl.start(now);
        r.started = true;
    }
    r.credit_queued = now;
    on_credit_due(slot, now);
}

void xpass_transport::on_credit_due(std::uint32_t slot, ps_t at) {
    xp_rx& r = m_rx[slot];
    if (r.credit_queued != at) return;
    flow_record& rec = m_flows[r.flow];
    if (rec.spec.xpass.demand_known && rec.spec.size_bytes != 0) {
        if (r.credit_limit == 0) r.credit_limit = (rec.spec.size_bytes + MAX_DATA - 1) / MAX_DATA;
        if (r.counters.credits_sent >= r.credit_limit && r.nack_queued == 0) {
            // One credit per packet sent. Credits lost on the way leave the flow short: check
            // two RTTs later and credit what has not arrived.
            r.credit_queued = 0;
            r.check_queued =
                at + (r.ctl.rtt() ? 2 * r.ctl.rtt() : rec.spec.xpass.retransmit_timeout);
            schedule(r.check_queued, DEMAND_CHECK, slot);
            return;
        }
    }
    if (r.ctl.before_credit(at)) {
        r.counters.rate_updates++;
        if (rec.spec.trace)
            rec.xpass->trace.push_back(
                {at, r.ctl.rate() * 8.0, r.ctl.w(), r.ctl.last_loss(), r.ctl.rtt()});
    }
    send_credit(r, at);
    r.credit_queued = at + r.ctl.gap(r.draws.uniform());
    schedule(r.credit_queued, CREDIT, slot);
}

void xpass_transport::send_credit(xp_rx& r, ps_t now) {
    const flow_spec& spec = m_flows[r.flow].spec;
    const xpass_params& p = spec.xpass;
    std::uint32_t wire = p.credit_min_bytes;
    if (p.credit_max_bytes > p.credit_min_bytes)
        wire +=
            static_cast<std::uint32_t>(r.draws.below(p.credit_max_bytes - p.credit_min_bytes + 1));
    frame& f = control_frame(spec, r.src_ip, r.next_hop, false, credit_type::CREDIT, wire);
    f.dscp = p.credit_dscp;
    r.counters.credits_sent++;
    post_control(f, r.ctl.take_seq(), now);
}

void xpass_transport::on_aeolus_data(xp_rx& r, frame& f, ps_t now) {
    flow_record& rec = m_flows[r.flow];
    if (f.ecn == ecn_codepoint::NOT_ECT) {
        // Unscheduled: no credit to echo; ACKed at once.
        r.counters.unscheduled_delivered++;
        post_control(control_frame(rec.spec, r.src_ip, r.next_hop, false, DATA_ACK, 84), f.seq_no,
                     now);
    } else if (!r.flashpass) {
        r.ctl.on_data(f.ack_no, f.ts_echo, now);
    }
    const std::uint64_t before = r.window.expected();
    if (!r.window.on_packet(f.seq_no)) {
        r.counters.duplicates++;
        return;
    }
    m_flows.on_delivered(f.flow_id, f.frame_bytes(), f.payload_bytes - XPASS_FIELDS,
                         now - f.created, now);
    if (f.ecn == ecn_codepoint::CE) rec.ce_frames++;
    r.expected = r.window.expected();
    if (r.expected != before) {
        rec.rx_bytes = std::min(r.expected * MAX_DATA, rec.spec.size_bytes);
        r.nack_queued = 0;  // progress: a pending NACK retry is void
    }
    if (rec.completed == 0 && rec.rx_bytes >= rec.spec.size_bytes) rec.completed = now;
    if (complete(r)) r.credit_queued = 0;
}

void xpass_transport::on_data(xp_rx& r, frame& f, ps_t now) {
    if (r.aeolus) return on_aeolus_data(r, f, now);
    flow_record& rec = m_flows[r.flow];
    if (!r.flashpass) r.ctl.on_data(f.ack_no, f.ts_echo, now);
    if (f.seq_no != r.expected) {
        // Go-back-N: a later packet is discarded (and the missing one NACKed); an earlier one
        // is a duplicate of what arrived already.
        if (f.seq_no > r.expected) {
            r.counters.out_of_order++;
            if (r.nack_queued == 0) send_nack(r, rec.rx_slot, now);
        } else {
            r.counters.duplicates++;
        }
        return;
    }
    r.expected++;
    const std::uint32_t data = f.payload_bytes - XPASS_FIELDS;
    m_flows.on_delivered(f.flow_id, f.frame_bytes(), data, now - f.created, now);
    if (f.ecn == ecn_codepoint::CE) rec.ce_frames++;
    rec.rx_bytes += data;
    if (rec.completed == 0 && rec.spec.size_bytes != 0 && rec.rx_bytes >= rec.spec.size_bytes)
        rec.completed = now;
    r.nack_queued = 0;                     // progress: a pending NACK retry is void
    if (complete(r)) r.credit_queued = 0;  // a STOP came before the missing data: stop now
}

void xpass_transport::send_nack(xp_rx& r, std::uint32_t slot, ps_t now) {
    const flow_spec& spec = m_flows[r.flow].spec;
    post_control(control_frame(spec, r.src_ip, r.next_hop, false, credit_type::NACK, 84),
                 r.expected, now);
    r.counters.nacks_sent++;
    r.nack_queued = now + spec.xpass.retransmit_timeout;
    schedule(r.nack_queued, NACK_RETRY, slot);
}

void xpass_transport::on_nack_retry(std::uint32_t slot, ps_t at) {
    xp_rx& r = m_rx[slot];
    if (r.nack_queued != at) return;
    r.nack_queued = 0;
    if (!complete(r)) send_nack(r, slot, at);
}

void xpass_transport::on_demand_check(std::uint32_t slot, ps_t at) {
    xp_rx& r = m_rx[slot];
    if (r.check_queued != at) return;
    r.check_queued = 0;
    if (complete(r) || r.credit_queued != 0) return;
    const flow_record& rec = m_flows[r.flow];
    const std::uint64_t packets = (rec.spec.size_bytes + MAX_DATA - 1) / MAX_DATA;
    if (r.expected >= packets) return;
    r.credit_limit = r.counters.credits_sent + (packets - r.expected);
    r.credit_queued = at;
    on_credit_due(slot, at);
}

void xpass_transport::on_stop(xp_rx& r, std::uint32_t slot, std::uint64_t total, ps_t now) {
    r.total = total;
    if (complete(r)) {
        r.credit_queued = 0;  // the credit timer's entry goes stale
        return;
    }
    // Tail loss: ask for the missing packet and keep crediting until it is in.
    if (r.nack_queued == 0) send_nack(r, slot, now);
    if (r.credit_queued == 0) on_request(r, slot, now);
}

void xpass_transport::on_frame(frame& f, ps_t at) {
    flow_record& rec = m_flows[f.flow_id];
    if (f.kind != frame_kind::CREDIT) return on_data(m_rx[rec.rx_slot], f, at);
    rec.control_delivered++;
    switch (f.credit_type) {
        case credit_type::CREDIT:
            if (rec.spec.xpass.flashpass) return on_fp_credit(rec.tx_slot, f, at);
            return on_credit(m_tx[rec.tx_slot], f, at);
        case credit_type::NACK:
            if (rec.spec.xpass.flashpass) return on_fp_nack(rec.tx_slot, f.seq_no, at);
            return on_nack(m_tx[rec.tx_slot], f.seq_no, at);
        case EMULATION:
            return on_emulation(m_rx[rec.rx_slot], rec.rx_slot, f, at);
        case credit_type::REQUEST: {
            xp_rx& r = m_rx[rec.rx_slot];
            if (r.aeolus) r.total = f.seq_no;
            return on_request(r, rec.rx_slot, at);
        }
        case credit_type::STOP:
            return on_stop(m_rx[rec.rx_slot], rec.rx_slot, f.seq_no, at);
        case PROBE: {
            // Answered at once with the count of packets in.
            xp_rx& r = m_rx[rec.rx_slot];
            post_control(control_frame(rec.spec, r.src_ip, r.next_hop, false, PROBE_ACK, 84),
                         r.window.received(), at);
            return;
        }
        case PROBE_ACK:
            if (rec.spec.xpass.flashpass) {
                // Every ACK of the burst came before this answer: the rest were dropped and
                // need credits.
                if (m_fp[rec.tx_slot].first_rtt.on_probe_ack() != 0)
                    resume_emulation(rec.tx_slot, at);
                return;
            }
            return on_probe_ack(m_tx[rec.tx_slot], at);
        case DATA_ACK:
            if (rec.spec.xpass.flashpass) {
                m_fp[rec.tx_slot].first_rtt.on_ack(f.seq_no);
                return;
            }
            m_tx[rec.tx_slot].first_rtt.on_ack(f.seq_no);
            return;
        default:
            return;
    }
}

void xpass_transport::export_flow_results() const {
    for (const fp_tx& x : m_fp) {
        // Sender fields only: the receiver's (credits_sent, nacks, ...) come from its host.
        xpass_flow_result& r = m_flows[x.flow].xpass->result;
        const xpass_flow_result& c = x.counters;
        r.credits_received = c.credits_received;
        r.credits_wasted = c.credits_wasted;
        r.packets = c.packets;
        r.retransmitted = c.retransmitted;
        r.emulation_sent = c.emulation_sent;
        r.over_provisioned_sent = c.over_provisioned_sent;
        r.over_provisioned_credits = c.over_provisioned_credits;
        r.over_provisioned_wasted = c.over_provisioned_wasted;
        r.late_credits = c.late_credits;
        r.pauses = c.pauses;
        r.first_data = c.first_data;
        r.unscheduled_sent = c.unscheduled_sent;
        r.unscheduled_missing = x.first_rtt.lost();
        r.early_acked = x.first_rtt.acked();
        r.probes = c.probes;
        r.last_data = c.last_data;
        r.rate_updates = x.ctl.updates();
        r.emulation_rate_bps = x.ctl.rate() * 8.0;
    }
    for (const xp_tx& x : m_tx) {
        xpass_flow_result& r = m_flows[x.flow].xpass->result;
        r.credits_received = x.counters.credits_received;
        r.credits_wasted = x.counters.credits_wasted;
        r.packets = x.counters.packets;
        r.retransmitted = x.counters.retransmitted;
        r.requests = x.counters.requests;
        r.stops = x.counters.stops;
        r.unscheduled_sent = x.counters.unscheduled_sent;
        r.unscheduled_missing = x.first_rtt.lost();
        r.probes = x.counters.probes;
    }
    for (const xp_rx& q : m_rx) {
        xpass_flow_result& r = m_flows[q.flow].xpass->result;
        r.credits_sent = q.counters.credits_sent;
        if (q.flashpass) {
            r.credit_frames = q.counters.credit_frames;
            r.unscheduled_delivered = q.counters.unscheduled_delivered;
            r.nacks_sent = q.counters.nacks_sent;
            r.out_of_order = q.counters.out_of_order;
            r.duplicates = q.counters.duplicates;
            continue;
        }
        r.credits_lost = q.ctl.stats().lost;
        r.nacks_sent = q.counters.nacks_sent;
        r.out_of_order = q.counters.out_of_order;
        r.duplicates = q.counters.duplicates;
        r.rate_updates = q.counters.rate_updates;
        r.credit_rate_bps = q.ctl.rate() * 8.0;
        r.unscheduled_delivered = q.counters.unscheduled_delivered;
    }
}

void xpass_transport::add_drops(drop_counters& d) const {
    if (m_cq) d.add(drop_cause::CREDIT_DROPPED, m_cq->dropped);
    for (const xp_rx& q : m_rx) {
        d.add(drop_cause::OUT_OF_SEQUENCE, q.counters.out_of_order);
        d.add(drop_cause::DUPLICATE, q.counters.duplicates);
    }
}

void xpass_transport::report_stats(nlohmann::json& out) const {
    if (m_tx.empty() && m_rx.empty() && m_fp.empty()) return;
    if (!m_fp.empty()) out["flashpass_senders"] = m_fp.size();
    if (m_cq)
        out["credit_queue"] = {{"credits_sent", m_cq->sent},
                               {"credits_dropped", m_cq->dropped},
                               {"rate_bps", m_cq->bucket.rate_bps()}};
    out["xpass_senders"] = m_tx.size();
    out["xpass_receivers"] = m_rx.size();
}

// ---------------------------------------------------------------- FlashPass

void xpass_transport::on_fp_start(std::uint32_t slot, ps_t at) {
    fp_tx& x = m_fp[slot];
    m_flows[x.flow].started = at;
    // The first update period: the idle round trip, until credits measure it.
    x.ctl.start(at, x.idle_rtt);
    if (x.early) {
        m_fp_blocked.reserve(m_fp.size());
        pump_fp_unscheduled(slot, at);
    }
    x.emu_queued = at;
    on_emulate(slot, at);
}

bool xpass_transport::covered(const fp_tx& x) const {
    if (x.packets == 0) return false;  // long-lived: never
    const double max_target = m_flows[x.flow].spec.xpass.fp.max_target_loss();
    return double(x.e_out()) * (1.0 - max_target) >= double(x.remaining());
}

void xpass_transport::on_emulate(std::uint32_t slot, ps_t at) {
    fp_tx& x = m_fp[slot];
    if (x.emu_queued != at) return;
    x.emu_queued = 0;
    if (x.packets != 0 && x.all_credited()) return;  // every packet has its credit
    const flow_spec& spec = m_flows[x.flow].spec;
    const bool cover = covered(x);
    if (x.paused_at != 0) {
        // The end of a pause: credits since its start re-decide; none: the emulation packets
        // in flight were lost.
        if (x.last_credit <= x.paused_at) x.echoed = x.emu_seq;
        x.paused_at = 0;
        if (covered(x)) {
            x.paused_at = at;
            x.emu_queued = at + 2 * x.ctl.rtt();
            schedule(x.emu_queued, EMULATE, slot);
            return;
        }
    } else if (cover && !spec.xpass.fp.over_provisioning()) {
        // Eq 4.2: what is in flight covers the rest; wait for the credits (or 2 RTTs).
        x.paused_at = at;
        x.counters.pauses++;
        x.emu_queued = at + 2 * x.ctl.rtt();
        schedule(x.emu_queued, EMULATE, slot);
        return;
    }
    frame& f = control_frame(spec, x.dst_ip, x.next_hop, true, EMULATION, 84);
    f.dscp = spec.xpass.credit_dscp;
    // Ordinary emulation packets are ECT, over-provisioned ones non-ECT (selectively dropped).
    const bool over = covered(x);
    f.ecn = over ? ecn_codepoint::NOT_ECT : ecn_codepoint::ECT0;
    if (over) x.counters.over_provisioned_sent++;
    if (over != (x.over_from.size() % 2 == 1)) x.over_from.push_back(x.emu_seq);
    x.counters.emulation_sent++;
    post_control(f, x.emu_seq++, at);
    const double j = spec.xpass.jitter;
    const double scale = 1.0 + j * (2.0 * x.draws.uniform() - 1.0);
    x.emu_queued = at + std::max<ps_t>(1, static_cast<ps_t>(double(x.ctl.gap()) * scale));
    schedule(x.emu_queued, EMULATE, slot);
}

void xpass_transport::fp_trace(const fp_tx& x, ps_t at) {
    flow_record& rec = m_flows[x.flow];
    if (rec.spec.trace)
        rec.xpass->trace.push_back(
            {at, x.ctl.rate() * 8.0, double(x.e_out()), x.ctl.last_loss(), x.ctl.rtt()});
}

void xpass_transport::on_fp_credit(std::uint32_t slot, const frame& f, ps_t now) {
    fp_tx& x = m_fp[slot];
    x.last_credit = now;
    // A credit echoes its emulation packets' numbers and send times T: one, or with delayed
    // credit sending consecutive ones (the first's number and T, the others' T in sack_edges,
    // and how long the receiver held the newest, taken off the RTT sample).
    const std::uint32_t more = f.sack_blocks;
    if (more == 0) {
        fp_grant(x, slot, f.seq_no, f.ts_echo, now - f.ts_echo, now);
    } else {
        const ps_t newest = f.sack_edges[more - 1];
        const ps_t rtt = now - f.sack_edges[flashpass_credit_batch::MAX - 1] - newest;
        fp_grant(x, slot, f.seq_no, f.ts_echo, rtt, now);
        for (std::uint32_t i = 0; i < more; ++i)
            fp_grant(x, slot, f.seq_no + 1 + i, f.sack_edges[i], rtt, now);
    }
    // A pause whose emulation packets turned out short resumes now.
    if (x.paused_at != 0 && !covered(x)) {
        x.paused_at = 0;
        x.emu_queued = now;
        on_emulate(slot, now);
    }
}

void xpass_transport::fp_grant(fp_tx& x, std::uint32_t slot, std::uint64_t seq, ps_t sent, ps_t rtt,
                               ps_t now) {
    x.counters.credits_received++;
    const bool over = !x.over_from.empty() && x.over_provisioned(seq);
    if (over) x.counters.over_provisioned_credits++;
    x.echoed = std::max(x.echoed, seq + 1);
    if (x.ctl.on_credit(now, rtt, seq)) fp_trace(x, now);
    std::uint64_t pkt = 0;
    if (x.early && x.first_rtt.take_resend(pkt)) {
        x.counters.retransmitted++;  // a first-RTT packet found missing: on this credit
    } else if (x.packets != 0 && x.next_pkt >= x.packets) {
        x.counters.credits_wasted++;
        if (over) x.counters.over_provisioned_wasted++;
        return;
    } else {
        pkt = x.next_pkt++;
    }
    const fp_release e{std::max(sent + x.t_wait, now), pkt, seq, sent};
    if (sent + x.t_wait < now) x.counters.late_credits++;
    if (x.count == x.ring.size()) {
        // Full (more than t_wait of credits at the maximum rate): double, in FIFO order.
        std::vector<fp_release> grown(2 * x.ring.size());
        for (std::size_t i = 0; i < x.count; ++i) grown[i] = x.ring[(x.head + i) % x.ring.size()];
        x.ring.swap(grown);
        x.head = 0;
    }
    x.ring[(x.head + x.count) % x.ring.size()] = e;
    x.count++;
    if (x.count == 1) {
        x.release_queued = e.at;
        if (e.at <= now)
            on_release(slot, now);
        else
            schedule(e.at, RELEASE, slot);
    }
}

void xpass_transport::on_release(std::uint32_t slot, ps_t at) {
    fp_tx& x = m_fp[slot];
    if (x.release_queued != at) return;
    x.release_queued = 0;
    while (x.count != 0 && x.ring[x.head].at <= at) {
        const fp_release e = x.ring[x.head];
        x.head = (x.head + 1) % x.ring.size();
        x.count--;
        post_fp_data(x, e, at);
    }
    if (x.count != 0) {
        x.release_queued = x.ring[x.head].at;
        schedule(x.release_queued, RELEASE, slot);
    }
}

void xpass_transport::post_fp_data(fp_tx& x, const fp_release& e, ps_t now, bool unscheduled) {
    flow_record& rec = m_flows[x.flow];
    std::uint32_t data = MAX_DATA;
    if (x.packets != 0 && e.pkt + 1 == x.packets)
        data = static_cast<std::uint32_t>(rec.spec.size_bytes - e.pkt * MAX_DATA);
    frame& f = m_host.new_frame(rec.spec, x.dst_ip, x.next_hop, client_port(x.flow), SERVER_PORT);
    f.set_ipv4(frame_kind::IPV4_UDP, data + XPASS_FIELDS);
    f.payload_bytes = data + XPASS_FIELDS;
    f.seq_no = e.pkt;
    f.ack_no = e.emu_seq;
    f.ts_echo = e.emu_sent;
    f.ecn = unscheduled ? ecn_codepoint::NOT_ECT : ecn_codepoint::ECT0;
    if (unscheduled) x.counters.unscheduled_sent++;
    f.ip_id = static_cast<std::uint16_t>(e.pkt);
    f.created = now;
    rec.sent_frames++;
    rec.sent_bytes += f.frame_bytes();
    if (x.counters.packets == 0) x.counters.first_data = now;
    x.counters.last_data = now;
    x.counters.packets++;
    m_host.post(f, now);
}

void xpass_transport::on_fp_nack(std::uint32_t slot, std::uint64_t pkt, ps_t now) {
    fp_tx& x = m_fp[slot];
    if (pkt >= x.next_pkt) return;
    // Go-back-N: the packets from `pkt` need credits again; the emulation resumes.
    if (x.early && pkt < x.first_rtt.unscheduled()) {
        // A first-RTT packet: resent on a credit (once, unless NACKed again).
        if (x.first_rtt.request(pkt)) resume_emulation(slot, now);
        return;
    }
    x.counters.retransmitted += x.next_pkt - pkt;
    x.next_pkt = pkt;
    resume_emulation(slot, now);
}

void xpass_transport::on_emulation(xp_rx& r, std::uint32_t slot, const frame& e, ps_t now) {
    const flow_spec& spec = m_flows[r.flow].spec;
    r.counters.credits_sent++;
    if (spec.xpass.fp.credits_per_frame() > 1) {
        // Delayed credit sending: held while the data has time to wait.
        if (!r.batch.joins(e.seq_no)) flush_credits(r, now);
        if (r.batch.add(e.seq_no, e.created, now)) return flush_credits(r, now);
        if (r.batch.count() == 1) {
            r.flush_queued = r.batch.deadline();
            schedule_rare(r.flush_queued, FLUSH, slot);
        }
        return;
    }
    // Answered at once: a credit echoing the emulation packet's number and send time.
    // In the credit class: on a link, credits of one direction's flows and emulation packets
    // of the other's share the credit queue's share (data takes the rest).
    frame& f = control_frame(spec, r.src_ip, r.next_hop, false, credit_type::CREDIT, 84);
    f.dscp = spec.xpass.credit_dscp;
    f.ecn = ecn_codepoint::ECT0;  // ordinary: never selectively dropped
    f.ts_echo = e.created;
    post_control(f, e.seq_no, now);
}

void xpass_transport::flush_credits(xp_rx& r, ps_t now) {
    const flow_spec& spec = m_flows[r.flow].spec;
    const std::uint32_t n = r.batch.count();
    frame& f = control_frame(spec, r.src_ip, r.next_hop, false, credit_type::CREDIT,
                             flashpass_credit_batch::wire_bytes(n));
    f.dscp = spec.xpass.credit_dscp;
    f.ecn = ecn_codepoint::ECT0;
    f.ts_echo = r.batch.sent(0);
    f.sack_blocks = static_cast<std::uint8_t>(n - 1);
    for (std::uint32_t i = 1; i < n; ++i) f.sack_edges[i - 1] = r.batch.sent(i);
    if (n > 1) f.sack_edges[flashpass_credit_batch::MAX - 1] = r.batch.held(now);
    r.counters.credit_frames++;
    post_control(f, r.batch.first(), now);
    r.batch.clear();
    r.flush_queued = 0;  // a pending FLUSH entry goes stale
}

void xpass_transport::on_flush(std::uint32_t slot, ps_t at) {
    xp_rx& r = m_rx[slot];
    if (r.flush_queued != at || r.batch.count() == 0) return;
    flush_credits(r, at);
}

}  // namespace fabricsim::host
