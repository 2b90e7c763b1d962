#include "fabricsim/switch/algo/ingress_pipeline.h"

#include <algorithm>
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

ps_t cell_time_ps(ps_t period, double cells_per_cycle) {
    return static_cast<ps_t>(std::llround(double(period) / cells_per_cycle));
}

ingress_pipelines::ingress_pipelines(const pipeline_config& cfg, unsigned ports, ps_t period,
                                     unsigned partitions, double write_cells_per_cycle)
    : m_cfg(cfg),
      m_rate(period, cfg.packets_per_cycle, cfg.bytes_per_cycle),
      m_pipe_of(cfg.pipeline_of_ports(ports)),
      m_slot_of(ports),
      m_ports(ports),
      m_lanes(cfg.count),
      m_writes(write_cells_per_cycle > 0 ? partitions : 0),
      m_cell_ps(write_cells_per_cycle > 0 ? cell_time_ps(period, write_cells_per_cycle) : 0) {
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
    const waiting w = take(l, port, now);
    l.next = --l.waiting_frames ? l.free : NONE;
    update_next();
    return w.f;
}

void ingress_pipelines::update_next() {
    m_next = NONE;
    for (const lane& l : m_lanes)
        if (l.next < m_next) m_next = l.next;
}

// ---------------------------------------------------------------- cell writes

ingress_pipelines::verdict ingress_pipelines::offer_write(frame& f, unsigned port, ps_t now,
                                                          unsigned part, std::uint32_t cells) {
    lane& l = m_lanes[m_pipe_of[port]];
    const std::uint32_t bytes = f.frame_bytes();
    if (m_held == 0 && l.free <= now && (part == NO_PARTITION || m_writes[part].free <= now)) {
        start(l, port, bytes, now);
        if (part != NO_PARTITION) m_writes[part].last_lane = m_pipe_of[port];
        return verdict::START;
    }
    if (!hold(l, port,
              {&f, bytes, static_cast<std::uint16_t>(part), static_cast<std::uint16_t>(cells)}))
        return verdict::OVERFLOW;
    l.waiting_frames++;
    plan_lane(l);
    update_next();
    return verdict::WAIT;
}

unsigned ingress_pipelines::picked_partition(const lane& l) const {
    if (l.waiting_frames == 0) return NO_PARTITION;
    return m_ports[l.ports[l.pick]].held.front().part;
}

void ingress_pipelines::plan_lane(lane& l) {
    if (l.waiting_frames == 0) {
        l.next = NONE;
        return;
    }
    std::uint32_t slot = l.rr;
    while (m_ports[l.ports[slot]].held.empty()) slot = next_slot(l, slot);
    l.pick = slot;
    const unsigned part = picked_partition(l);
    l.next = part == NO_PARTITION ? l.free : std::max(l.free, m_writes[part].free);
}

void ingress_pipelines::plan_lanes() {
    for (lane& l : m_lanes) plan_lane(l);
    update_next();
}

frame* ingress_pipelines::pop_write(ps_t now, unsigned& port, unsigned& part,
                                    std::uint32_t& cells) {
    if (m_next > now) return nullptr;
    // The lane due first; among lanes due together for one write port, the one after the port's
    // last writer (round robin), so no pipeline starves another of it.
    const unsigned n = count();
    lane* due = nullptr;
    unsigned due_rank = 0;
    for (unsigned i = 0; i < n; ++i) {
        lane& l = m_lanes[i];
        if (l.next > now) continue;
        const unsigned k = picked_partition(l);
        const unsigned last = k == NO_PARTITION ? ~0u : m_writes[k].last_lane;
        const unsigned rank = last == ~0u ? i : (i + n - last - 1) % n;
        if (!due || l.next < due->next || (l.next == due->next && rank < due_rank)) {
            due = &l;
            due_rank = rank;
        }
    }
    lane& l = *due;
    port = l.ports[l.pick];
    l.rr = next_slot(l, l.pick);
    const waiting w = take(l, port, now);
    l.waiting_frames--;
    part = w.part;
    cells = w.cells;
    if (part != NO_PARTITION) m_writes[part].last_lane = m_pipe_of[port];
    plan_lane(l);
    update_next();
    return w.f;
}

void ingress_pipelines::wrote(unsigned part, std::uint32_t cells, ps_t now) {
    write_port& w = m_writes[part];
    const ps_t t = ps_t(cells) * m_cell_ps;
    w.free = now + t;
    w.st.frames++;
    w.st.cells += cells;
    w.st.busy += t;
    plan_lanes();
}

}  // namespace fabricsim::sw
