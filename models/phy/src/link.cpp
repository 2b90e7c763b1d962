#include "fabricsim/phy/link.h"

#include <nlohmann/json.hpp>

#include "fabricsim/core/frame_pool.h"
#include "fabricsim/core/kernel.h"

namespace fabricsim::phy {

link_direction::link_direction(const sc_core::sc_module_name& name, const link_config& cfg,
                               std::uint64_t seed, unsigned direction)
    : sc_core::sc_module(name), m_timing(cfg, seed, std::string(this->name()), direction) {
    in.bind(*this);
    out.bind(*this);
}

tlm::tlm_sync_enum link_direction::nb_transport_fw(frame& f, tlm::tlm_phase& phase,
                                                   sc_core::sc_time& delay) {
    sc_assert(phase == tlm::BEGIN_REQ);
    const ps_t now = now_ps();
    const ps_t wire_free = transmit_at(f, now + to_ps(delay));
    phase = tlm::END_REQ;
    delay = to_sc_time(wire_free - now);
    return tlm::TLM_UPDATED;
}

ps_t link_direction::transmit_at(frame& f, ps_t start) {
    if (m_pcap) m_pcap->write(f, start);
    const tx_result r = m_timing.transmit(f, start);
    m_stats.frames++;
    m_stats.bytes += f.frame_bytes();
    m_stats.busy_ps += r.wire_free - start;
    if (r.lost) {
        m_stats.drops.add(drop_cause::LINK_DOWN);
        m_pool.release(f);
    } else {
        if (f.fcs_error) m_stats.corrupted++;
        f.rx_last_bit = r.last_bit;
        if (m_in_flight.empty()) m_head_arrives.arm_at(r.deliver);
        m_in_flight.push_back({r.deliver, &f});
    }
    return r.wire_free;
}

void link_direction::end_of_elaboration() {
    if (out.size() == 0) return;
    m_rx = dynamic_cast<eth_rx_port*>(out.operator->());
    if (m_rx) m_timing.deliver_after(m_rx->act_after_bytes());
}

void link_direction::deliver() {
    const ps_t now = now_ps();
    while (!m_in_flight.empty() && m_in_flight.front().at <= now) {
        frame* f = m_in_flight.pop_front().f;
        f->hops++;
        if (m_rx) {
            m_rx->receive(*f);
            continue;
        }
        tlm::tlm_phase phase = tlm::BEGIN_REQ;
        sc_core::sc_time zero = sc_core::SC_ZERO_TIME;
        out->nb_transport_fw(*f, phase, zero);
    }
    if (!m_in_flight.empty()) m_head_arrives.arm_at(m_in_flight.front().at);
}

void link_direction::report_stats(nlohmann::json& out_json) const {
    const ps_t now = now_ps();
    out_json = {{"frames", m_stats.frames},
                {"bytes", m_stats.bytes},
                {"utilization", now ? double(m_stats.busy_ps) / double(now) : 0.0},
                {"corrupted", m_stats.corrupted},
                {"in_flight", m_in_flight.size()},
                {"drops", drops_to_json(m_stats.drops)}};
    if (m_timing.has_rate_steps()) out_json["rate_bps"] = m_timing.stepped_rate_at(now);
}

link::link(const sc_core::sc_module_name& name, const link_config& cfg, std::uint64_t seed)
    : sc_core::sc_module(name), ab("ab", cfg, seed, 0), ba("ba", cfg, seed, 1) {}

}  // namespace fabricsim::phy
