#include "fabricsim/switch/algo/egress_pipeline.h"

#include "fabricsim/core/frame.h"

namespace fabricsim::sw {

egress_pipelines::egress_pipelines(const pipeline_config& cfg, unsigned ports, ps_t period,
                                   turn_timer& timer)
    : m_rate(period, cfg.egress_packets_per_cycle, cfg.egress_bytes_per_cycle),
      m_pipe_of(cfg.pipeline_of_ports(ports)),
      m_slot_of(ports),
      m_enrolled(ports),
      m_links(ports),
      m_lanes(cfg.count),
      m_timer(timer) {
    for (unsigned p = 0; p < ports; ++p) {
        lane& l = m_lanes[m_pipe_of[p]];
        m_slot_of[p] = static_cast<std::uint16_t>(l.ports.size());
        l.ports.push_back(static_cast<std::uint16_t>(p));
    }
}

ps_t egress_pipelines::open_at(unsigned port, ps_t t) {
    lane& l = m_lanes[m_pipe_of[port]];
    if (l.turn == port) return t;  // its turn: the pipeline is free (run_turns)
    if (l.waiting == 0 && l.turn == NO_PORT && l.free <= t) return t;
    if (!m_enrolled[port]) {
        m_enrolled[port] = 1;
        // The first port to wait asks for the turn; later ones are served in the same round.
        if (l.waiting++ == 0 && l.turn == NO_PORT) m_timer.turn_due(l.free);
    }
    return egress_gate::UNTIL_TOLD;
}

void egress_pipelines::started(unsigned port, std::uint32_t frame_bytes, ps_t at) {
    lane& l = m_lanes[m_pipe_of[port]];
    const ps_t service = m_rate.service_ps(frame_bytes);
    l.free = at + service;
    l.st.frames++;
    l.st.bytes += frame_bytes;
    l.st.busy += service;
    if (l.turn == port) l.st.turns++;
    l.rr = next_slot(l, m_slot_of[port]);
}

void egress_pipelines::run_turns(ps_t now) {
    ps_t next = NONE;
    for (lane& l : m_lanes) {
        // Offer the free pipeline to its waiting ports in turn until one starts a frame.
        while (l.waiting && l.free <= now) {
            std::uint32_t slot = l.rr;
            while (!m_enrolled[l.ports[slot]]) slot = next_slot(l, slot);
            const unsigned port = l.ports[slot];
            m_enrolled[port] = 0;
            l.waiting--;
            l.turn = port;
            l.rr = next_slot(l, slot);
            m_links[port]->pipeline_turn();  // may start (started(): l.free > now)
            l.turn = NO_PORT;
        }
        if (l.waiting && l.free < next) next = l.free;
    }
    if (next != NONE) m_timer.turn_due(next);
}

void egress_pipeline_gate::on_start(unsigned /*q*/, std::uint32_t wire_bytes, ps_t at) {
    m_pipes.started(m_port, wire_bytes - PREAMBLE_SFD - IFG_BYTES, at);
}

}  // namespace fabricsim::sw
