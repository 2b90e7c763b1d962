#include "fabricsim/switch/algo/ingress_pipeline.h"

#include <cmath>
#include <stdexcept>

namespace fabricsim::sw {

std::string pipeline_config::check_ports(unsigned ports) const {
    if (port_map.empty()) return {};
    if (port_map.size() != ports)
        return "port_map has " + std::to_string(port_map.size()) + " entries; the switch has " +
               std::to_string(ports) + " ports";
    return {};
}

std::vector<std::uint16_t> pipeline_config::pipeline_of_ports(unsigned ports) const {
    if (count == 0) throw std::invalid_argument("pipeline.count: must be at least 1");
    if (const std::string why = check_ports(ports); !why.empty())
        throw std::invalid_argument("pipeline." + why);
    std::vector<std::uint16_t> pipe_of(ports);
    for (unsigned p = 0; p < ports; ++p) {
        const unsigned pipe = port_map.empty() ? p * count / ports : port_map[p];
        if (pipe >= count)
            throw std::invalid_argument("pipeline.port_map[" + std::to_string(p) + "]: pipeline " +
                                        std::to_string(pipe) + " of a chip with " +
                                        std::to_string(count));
        pipe_of[p] = static_cast<std::uint16_t>(pipe);
    }
    return pipe_of;
}

pipeline_rate::pipeline_rate(ps_t period, double packets_per_cycle, std::uint32_t bytes_per_cycle)
    : m_period(period),
      m_packet_ps(packets_per_cycle > 0
                      ? static_cast<ps_t>(std::llround(double(period) / packets_per_cycle))
                      : 0),
      m_bytes_per_cycle(bytes_per_cycle) {}

ingress_pipelines::ingress_pipelines(const pipeline_config& cfg, unsigned ports, ps_t period)
    : m_cfg(cfg),
      m_rate(period, cfg.packets_per_cycle, cfg.bytes_per_cycle),
      m_pipe_of(cfg.pipeline_of_ports(ports)),
      m_slot_of(ports),
      m_ports(ports),
      m_lanes(cfg.count) {
    for (unsigned p = 0; p < ports; ++p) {
        lane& l = m_lanes[m_pipe_of[p]];
        m_slot_of[p] = static_cast<std::uint16_t>(l.ports.size());
        l.ports.push_back(static_cast<std::uint16_t>(p));
    }
}

frame* ingress_pipelines::pop(ps_t now, unsigned& port) {
    if (m_next > now) return nullptr;
    lane* due = nullptr;
    for (lane& l : m_lanes)
        if (l.next <= now && (!due || l.next < due->next)) due = &l;
    lane& l = *due;
    std::uint32_t slot = l.rr;
    while (m_ports[l.ports[slot]].held.empty()) slot = next_slot(l, slot);
    port = l.ports[slot];
    l.rr = next_slot(l, slot);
    port_queue& q = m_ports[port];
    const waiting w = q.held.pop_front();
    q.bytes -= w.bytes;
    l.waiting_bytes -= w.bytes;
    const ps_t service = service_ps(w.bytes);
    l.free = now + service;
    l.st.busy += service;
    l.next = --l.waiting_frames ? l.free : NONE;
    m_held--;
    update_next();
    return w.f;
}

void ingress_pipelines::update_next() {
    m_next = NONE;
    for (const lane& l : m_lanes)
        if (l.next < m_next) m_next = l.next;
}

}  // namespace fabricsim::sw
