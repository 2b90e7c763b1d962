#include "fabricsim/host/host.h"

#include <algorithm>
#include <functional>

#include <nlohmann/json.hpp>

#include "fabricsim/core/frame_pool.h"
#include "fabricsim/core/kernel.h"

namespace fabricsim::host {

host::host(const sc_core::sc_module_name& name, const host_identity& id, nic::nic_device& nic,
           flow_table& flows, std::uint64_t seed, ps_t lookahead)
    : sc_core::sc_module(name), m_id(id), m_nic(nic), m_flows(flows), m_seed(seed), m_lookahead(lookahead) {
    nic.attach_host(*this);
}

void host::add_source(std::uint32_t flow_id, std::uint32_t dst_ip, const mac_addr& gateway_mac) {
    const flow_spec& spec = m_flows[flow_id].spec;
    m_sources.push_back({traffic_source(spec, m_seed, std::string(name()) + ".flow" + std::to_string(flow_id)),
                         dst_ip, gateway_mac});
}

void host::end_of_elaboration() {
    m_heap.reserve(m_sources.size());
    for (std::uint32_t i = 0; i < m_sources.size(); ++i) {
        const ps_t t = m_sources[i].src.next();
        if (t == ~ps_t(0)) continue;
        m_heap.push_back({t, i});
        std::push_heap(m_heap.begin(), m_heap.end(), std::greater<timer>());
    }
    if (!m_heap.empty()) m_wake.arm_at(m_heap.front().at);
}

void host::on_timer() {
    const ps_t now = now_ps();
    const ps_t horizon = now + m_lookahead;
    frame_pool& pool = frame_pool::global();
    while (!m_heap.empty() && m_heap.front().at <= horizon) {
        std::pop_heap(m_heap.begin(), m_heap.end(), std::greater<timer>());
        timer t = m_heap.back();
        m_heap.pop_back();
        source_slot& s = m_sources[t.slot];
        const flow_spec& spec = s.src.spec();
        frame& f = pool.acquire();
        f.src_mac = m_id.mac;
        f.dst_mac = s.dst_mac;
        f.src_ip = m_id.ip;
        f.dst_ip = s.dst_ip;
        f.dscp = spec.dscp;
        f.pcp = spec.pcp;
        f.vlan_tagged = spec.pcp != 0;
        f.ecn = spec.ect ? ecn_codepoint::ECT0 : ecn_codepoint::NOT_ECT;
        f.src_port = static_cast<std::uint16_t>(10000 + spec.id % 50000);
        f.dst_port = 5001;
        f.ip_id = static_cast<std::uint16_t>(s.src.emitted());
        f.set_ipv4(frame_kind::IPV4_UDP, spec.packet_bytes - IPV4_HEADER - UDP_HEADER);
        f.flow_id = spec.id;
        f.seq_no = s.src.emitted();
        f.created = t.at;
        flow_record& rec = m_flows[spec.id];
        rec.sent_frames++;
        rec.sent_bytes += f.frame_bytes();
        m_stats.sent_frames++;
        m_nic.post(f, t.at);
        s.src.advance();
        const ps_t nxt = s.src.next();
        if (nxt != ~ps_t(0)) {
            m_heap.push_back({nxt, t.slot});
            std::push_heap(m_heap.begin(), m_heap.end(), std::greater<timer>());
        }
    }
    if (!m_heap.empty()) m_wake.arm_at(m_heap.front().at);
}

void host::nic_rx(frame& f, ps_t at) {
    m_stats.received_frames++;
    m_stats.received_bytes += f.frame_bytes();
    if (f.is_data() && f.flow_id < m_flows.size()) {
        m_flows.on_delivered(f.flow_id, f.frame_bytes(), f.payload_bytes, at - f.created, at);
        if (f.ecn == ecn_codepoint::CE) m_flows[f.flow_id].ce_frames++;
    }
    frame_pool::global().release(f);
}

void host::report_stats(nlohmann::json& out) const {
    out = {{"sent_frames", m_stats.sent_frames},
           {"received_frames", m_stats.received_frames},
           {"received_bytes", m_stats.received_bytes}};
}

}  // namespace fabricsim::host
