#include "fabricsim/host/udp_transport.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "fabricsim/host/host.h"

namespace fabricsim::host {

void udp_transport::add_source(std::uint32_t flow, const flow_path& to) {
    flow_record& rec = m_flows[flow];
    rec.tx_slot = static_cast<std::uint32_t>(m_sources.size());
    m_sources.push_back(
        {traffic_source(rec.spec, m_host.seed(),
                        std::string(m_host.name()) + ".flow" + std::to_string(flow)),
         to.peer_ip, to.next_hop});
    if (rec.spec.process == arrival_process::BACKLOGGED) ++m_backlogged;
}

std::size_t udp_transport::depth() {
    if (m_depth) return m_depth;
    std::uint32_t bytes = ~0u;
    for (const source_slot& s : m_sources)
        if (s.src.spec().process == arrival_process::BACKLOGGED)
            bytes = std::min(bytes, s.src.spec().packet_bytes);
    const nic::nic_device& nic = m_host.nic();
    const double wire =
        double(std::max<std::uint32_t>(ETH_HEADER + bytes + FCS_BYTES, MIN_FRAME_WITH_FCS)) +
        PREAMBLE_SFD + IFG_BYTES;
    const double frame_ps = wire * 8 * double(PS_PER_S) / double(nic.rate_bps());
    const double lat = double(nic.config().idle_tx_latency(ETH_HEADER + bytes));
    m_depth = std::min<std::size_t>(static_cast<std::size_t>(std::ceil(lat / frame_ps)) + 2,
                                    nic.tx_queue_capacity());
    return m_depth;
}

void udp_transport::pump(ps_t now) {
    while (!m_ready.empty()) {
        if (m_host.nic().tx_queued() >= depth()) {
            m_host.wait_for_tx(*this, depth() - 1);
            return;
        }
        const std::uint32_t slot = m_ready.pop_front();
        source_slot& s = m_sources[slot];
        if (now >= s.src.spec().stop) continue;
        send(s, now);
        s.src.sent_at(now);
        if (s.src.next() != ~ps_t(0)) m_ready.push_back(slot);
    }
}

void udp_transport::start() {
    for (std::uint32_t i = 0; i < m_sources.size(); ++i) {
        const ps_t t = m_sources[i].src.next();
        if (t == ~ps_t(0)) continue;
        schedule(t, m_sources[i].src.spec().process == arrival_process::BACKLOGGED ? START : SEND,
                 i);
    }
}

void udp_transport::on_timer(std::uint8_t kind, std::uint32_t slot, ps_t at, ps_t now) {
    if (kind == SEND) {
        source_slot& s = m_sources[slot];
        send(s, at);
        s.src.advance();
        const ps_t nxt = s.src.next();
        if (nxt != ~ps_t(0)) schedule(nxt, SEND, slot);
        return;
    }
    // A backlogged source starts: it joins the round robin.
    m_ready.push_back(slot);
    pump(now);
}

void udp_transport::send(source_slot& s, ps_t at) {
    const flow_spec& spec = s.src.spec();
    frame& f = m_host.new_frame(spec, s.dst_ip, s.dst_mac, client_port(spec.id), SERVER_PORT);
    f.ecn = spec.ect ? ecn_codepoint::ECT0 : ecn_codepoint::NOT_ECT;
    f.ip_id = static_cast<std::uint16_t>(s.src.emitted());
    f.set_ipv4(frame_kind::IPV4_UDP, spec.packet_bytes - IPV4_HEADER - UDP_HEADER);
    f.seq_no = s.src.emitted();
    f.created = at;
    flow_record& rec = m_flows[spec.id];
    rec.sent_frames++;
    rec.sent_bytes += f.frame_bytes();
    m_host.post(f, at);
}

void udp_transport::on_frame(frame& f, ps_t at) {
    m_flows.on_delivered(f.flow_id, f.frame_bytes(), f.payload_bytes, at - f.created, at);
    if (f.ecn == ecn_codepoint::CE) m_flows[f.flow_id].ce_frames++;
}

}  // namespace fabricsim::host
