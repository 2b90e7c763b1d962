#include "fabricsim/switch/algo/turn_arbiter.h"

#include <stdexcept>
#include <string>

namespace fabricsim::sw {

turn_arbiter::turn_arbiter(const std::vector<std::vector<std::uint16_t>>& members, unsigned ports,
                           turn_timer& timer)
    : m_ports(ports),
      m_slot_of(members.size() * ports, 0xffff),
      m_enrolled(members.size() * ports),
      m_links(ports),
      m_lanes(members.size()),
      m_timer(timer) {
    for (std::size_t l = 0; l < members.size(); ++l)
        for (const std::uint16_t p : members[l]) {
            if (p >= ports)
                throw std::invalid_argument("turn_arbiter: lane " + std::to_string(l) +
                                            " serves port " + std::to_string(p) + " of " +
                                            std::to_string(ports));
            m_slot_of[pair(static_cast<unsigned>(l), p)] =
                static_cast<std::uint16_t>(m_lanes[l].ports.size());
            m_lanes[l].ports.push_back(p);
        }
}

ps_t turn_arbiter::open_at(unsigned l, unsigned port, ps_t t) {
    lane& ln = m_lanes[l];
    if (ln.turn == port) return t;  // its turn: the lane is free (run_turns)
    if (ln.waiting == 0 && ln.turn == NO_PORT && ln.free <= t) return t;
    std::uint8_t& enrolled = m_enrolled[pair(l, port)];
    if (!enrolled) {
        enrolled = 1;
        // The first port to wait asks for the turn; later ones are served in the same round.
        if (ln.waiting++ == 0 && ln.turn == NO_PORT) m_timer.turn_due(ln.free);
    }
    return UNTIL_TOLD;
}

void turn_arbiter::started(unsigned l, unsigned port, std::uint32_t units, ps_t service, ps_t at) {
    lane& ln = m_lanes[l];
    ln.free = at + service;
    ln.st.frames++;
    ln.st.units += units;
    ln.st.busy += service;
    if (ln.turn == port) ln.st.turns++;
    ln.rr = next_slot(ln, m_slot_of[pair(l, port)]);
}

void turn_arbiter::run_turns(ps_t now) {
    ps_t next = NONE;
    for (unsigned i = 0; i < m_lanes.size(); ++i) {
        lane& ln = m_lanes[i];
        // Offer the free lane to its waiting ports in turn until one starts a frame.
        while (ln.waiting && ln.free <= now) {
            std::uint32_t slot = ln.rr;
            while (!m_enrolled[pair(i, ln.ports[slot])]) slot = next_slot(ln, slot);
            const unsigned port = ln.ports[slot];
            m_enrolled[pair(i, port)] = 0;
            ln.waiting--;
            ln.turn = port;
            ln.rr = next_slot(ln, slot);
            m_links[port]->pipeline_turn();  // may start (started(): ln.free > now)
            ln.turn = NO_PORT;
        }
        if (ln.waiting && ln.free < next) next = ln.free;
    }
    if (next != NONE) m_timer.turn_due(next);
}

}  // namespace fabricsim::sw
