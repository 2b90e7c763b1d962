#pragma once
/// The MMU's cell bandwidth (ARCHITECTURE §4, facts-mmu §1.3): plain C++, no SystemC. Each
/// buffer partition (the whole buffer when not partitioned) has a write port of
/// `switch.mmu.write_cells_per_cycle` and a read port of `switch.mmu.read_cells_per_cycle`,
/// shared by the ports whose frames it holds. A frame of c cells takes its partition's port for
/// c × round(period / cells_per_cycle).
/// Writes (ingress_pipelines): a frame leaves its ingress pipeline into the MMU only when its
/// partition's write port is free; the pipeline stalls until then, so a partition that cannot
/// take the writes backs frames up into the input buffers (pipeline_overflow). The write is
/// charged when the MMU admits the frame (a dropped frame writes nothing).
/// Reads (cell_reads, a turn_arbiter with one lane per partition): a port may start a frame
/// when the read port of the head frame's partition is free, else it waits its turn (round
/// robin over the partition's ports, as the egress pipelines).
/// Timing model: each port is a server, free again c × cell time after a frame's write or read
/// starts; reads are decided when frames start (egress_queues::add_turn_gate).
#include <cstdint>
#include <vector>

#include "fabricsim/core/units.h"
#include "fabricsim/switch/algo/egress_gate.h"
#include "fabricsim/switch/algo/ingress_pipeline.h"
#include "fabricsim/switch/algo/mmu.h"
#include "fabricsim/switch/algo/turn_arbiter.h"

namespace fabricsim::sw {

class egress_queues;

/// The read ports of the MMU's partitions, taken in turns by the egress ports.
class cell_reads
{
public:
    using stats = turn_arbiter::stats;  ///< units: cells

    /// Partition k's lane serves every port that can hold a frame in k (buffer.partition_of).
    cell_reads(const mmu& buffer, unsigned ports, ps_t period, double cells_per_cycle,
               turn_arbiter::turn_timer& timer);

    void attach(unsigned port, turn_arbiter::port_link& link) { m_turns.attach(port, link); }
    /// Earliest time >= t that `port` may start a frame of ticket `t` (UNTIL_TOLD: its turn).
    ps_t open_at(const mmu_ticket& tk, unsigned port, ps_t t) {
        return m_turns.open_at(m_buffer.partition_of(tk.in_port, tk.out_port), port, t);
    }
    void started(const mmu_ticket& tk, unsigned port, ps_t at) {
        m_turns.started(m_buffer.partition_of(tk.in_port, tk.out_port), port, tk.cells,
                        ps_t(tk.cells) * m_cell_ps, at);
    }
    void run_turns(ps_t now) { m_turns.run_turns(now); }

    unsigned count() const { return m_turns.count(); }
    const stats& partition_stats(unsigned k) const { return m_turns.lane_stats(k); }
    ps_t busy_time(unsigned k, ps_t now) const { return m_turns.busy_time(k, now); }
    unsigned waiting_ports(unsigned k) const { return m_turns.waiting_ports(k); }

private:
    const mmu& m_buffer;
    ps_t m_cell_ps;
    turn_arbiter m_turns;
};

/// The read port of a head frame's partition as one of a port's gates (add_turn_gate).
class cell_read_gate final : public egress_gate
{
public:
    cell_read_gate(cell_reads& reads, const egress_queues& queues, unsigned port)
        : m_reads(reads), m_queues(queues), m_port(port) {}
    ps_t open_at(unsigned q, std::uint32_t wire_bytes, ps_t t) const override;
    void on_start(unsigned q, std::uint32_t wire_bytes, ps_t at) override;

private:
    cell_reads& m_reads;
    const egress_queues& m_queues;
    unsigned m_port;
};

}  // namespace fabricsim::sw
