#pragma once
/// One egress port of the switch: a FIFO in front of the MAC transmitter.
/// Timing model: a frame that leaves the pipeline at t_e goes on the wire at t_e if the wire
/// is free and nothing is queued (no kernel event: the start is annotated as a delay on the
/// link call); otherwise it waits in the FIFO and one timer firing per queued frame starts it when
/// the wire frees. Buffer space is released when the frame's first bit leaves.
#include <cstdint>

#include <systemc>

#include "fabricsim/core/eth_protocol.h"
#include "fabricsim/core/ring.h"
#include "fabricsim/core/scheduler.h"
#include "fabricsim/core/stats.h"
#include "fabricsim/switch/algo/shared_buffer.h"

namespace fabricsim::sw {

class egress_port : public sc_core::sc_module {
public:
    egress_port(const sc_core::sc_module_name& name, unsigned index, shared_buffer& buffer,
                std::uint64_t rate_bps);

    eth_tx_port tx{"tx"};

    /// Frame leaves the pipeline at absolute time `ready` (>= now). Takes ownership.
    void enqueue(frame& f, ps_t ready);
    /// Idle at `t`: nothing queued and the wire free (cut-through decisions use this).
    bool idle_at(ps_t t) const { return m_queue.empty() && m_busy_until <= t; }
    std::uint64_t rate_bps() const { return m_rate_bps; }
    std::size_t queued_frames() const { return m_queue.size(); }

    struct stats {
        std::uint64_t tx_frames = 0;
        std::uint64_t tx_bytes = 0;
        std::uint64_t enqueued = 0;  ///< frames that had to wait in the queue
        drop_counters drops;
    };
    stats& get_stats() { return m_stats; }
    const stats& get_stats() const { return m_stats; }

private:
    void on_wire_free();
    void start(frame& f, ps_t at, ps_t now);

    struct entry {
        frame* f;
        ps_t ready;
    };
    unsigned m_index;
    shared_buffer& m_buffer;
    std::uint64_t m_rate_bps;
    ring<entry> m_queue;
    ps_t m_busy_until = 0;
    model_timer m_wire_free = model_timer::bind<egress_port, &egress_port::on_wire_free>(this);
    stats m_stats;
};

}  // namespace fabricsim::sw
