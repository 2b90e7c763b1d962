#include "fabricsim/switch/algo/cell_bandwidth.h"

#include <algorithm>

#include "fabricsim/switch/algo/egress_queues.h"

namespace fabricsim::sw {

namespace {

/// Ports of each partition: those that can hold a frame in it (as egress port of some ingress).
std::vector<std::vector<std::uint16_t>> partition_members(const mmu& buffer, unsigned ports) {
    std::vector<std::vector<std::uint16_t>> members(buffer.partitions());
    std::vector<std::uint8_t> seen(members.size());
    for (unsigned out = 0; out < ports; ++out) {
        std::fill(seen.begin(), seen.end(), 0);
        for (unsigned in = 0; in < ports; ++in) {
            const unsigned k = buffer.partition_of(in, out);
            if (!seen[k]) members[k].push_back(static_cast<std::uint16_t>(out));
            seen[k] = 1;
        }
    }
    return members;
}

}  // namespace

cell_reads::cell_reads(const mmu& buffer, unsigned ports, ps_t period, double cells_per_cycle,
                       turn_arbiter::turn_timer& timer)
    : m_buffer(buffer),
      m_cell_ps(cell_time_ps(period, cells_per_cycle)),
      m_turns(partition_members(buffer, ports), ports, timer) {}

ps_t cell_read_gate::open_at(unsigned q, std::uint32_t /*wire_bytes*/, ps_t t) const {
    return m_reads.open_at(m_queues.head_ticket(q), m_port, t);
}

void cell_read_gate::on_start(unsigned q, std::uint32_t /*wire_bytes*/, ps_t at) {
    m_reads.started(m_queues.head_ticket(q), m_port, at);  // still queued (egress_queues::start)
}

}  // namespace fabricsim::sw
