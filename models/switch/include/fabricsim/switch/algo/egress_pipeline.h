#pragma once
/// Egress pipelines of a switch chip (ARCHITECTURE §4, facts-mmu §5): plain C++, no SystemC.
/// A frame passes its egress port's pipeline when the port starts it. The pipelines have the
/// ingress pipelines' count and port map; each takes one frame per
/// max(1 / egress_packets_per_cycle, bytes / egress_bytes_per_cycle) core cycles from all its
/// ports. A port that finds its pipeline busy, or other ports waiting for it, waits its turn:
/// when the pipeline frees, its arbiter offers it to the waiting ports round robin until one
/// starts a frame (a port that cannot start then, e.g. paused or still sending, passes its turn
/// on and asks again when it can). Waiting frames stay in their queues in the MMU, so an egress
/// pipeline drops nothing itself; the queues fill and the MMU's thresholds drop.
/// Timing model: the pipeline is free again service time after a start. Ports decide starts at
/// the time they happen (egress_queues::add_turn_gate: never ahead, which would hold the pipeline
/// against earlier starts of other ports). Turns are taken by the owner's one timer, one firing
/// per turn; a port whose pipeline is free with nobody waiting starts at once.
#include <cstdint>
#include <vector>

#include "fabricsim/core/units.h"
#include "fabricsim/switch/algo/egress_gate.h"
#include "fabricsim/switch/algo/ingress_pipeline.h"
#include "fabricsim/switch/algo/turn_arbiter.h"

namespace fabricsim::sw {

static_assert(turn_arbiter::UNTIL_TOLD == egress_gate::UNTIL_TOLD);

class egress_pipelines
{
public:
    static constexpr ps_t NONE = turn_arbiter::NONE;
    using port_link = turn_arbiter::port_link;
    using turn_timer = turn_arbiter::turn_timer;
    using stats = turn_arbiter::stats;  ///< units: frame bytes

    /// Throws std::invalid_argument on a port map that does not fit `ports`.
    egress_pipelines(const pipeline_config& cfg, unsigned ports, ps_t period, turn_timer& timer);

    void attach(unsigned port, port_link& link) { m_turns.attach(port, link); }
    /// Earliest time >= t that `port` may start a frame: t, or egress_gate::UNTIL_TOLD when it
    /// must wait its turn (it is then told through pipeline_turn()).
    ps_t open_at(unsigned port, ps_t t) { return m_turns.open_at(m_pipe_of[port], port, t); }
    /// `port` started a frame of `frame_bytes` at `at`.
    void started(unsigned port, std::uint32_t frame_bytes, ps_t at) {
        m_turns.started(m_pipe_of[port], port, frame_bytes, m_rate.service_ps(frame_bytes), at);
    }
    /// Offers each pipeline that is free at `now` to its waiting ports (the owner's timer).
    void run_turns(ps_t now) { m_turns.run_turns(now); }

    unsigned count() const { return m_turns.count(); }
    unsigned pipeline_of(unsigned port) const { return m_pipe_of[port]; }
    const stats& lane_stats(unsigned p) const { return m_turns.lane_stats(p); }
    /// Service time pipeline p spent up to `now`.
    ps_t busy_time(unsigned p, ps_t now) const { return m_turns.busy_time(p, now); }
    /// Ports waiting for pipeline p's turn now.
    unsigned waiting_ports(unsigned p) const { return m_turns.waiting_ports(p); }

private:
    pipeline_rate m_rate;
    std::vector<std::uint16_t> m_pipe_of;
    turn_arbiter m_turns;
};

/// The egress pipeline as one of a port's gates (installed with egress_queues::add_turn_gate).
class egress_pipeline_gate final : public egress_gate
{
public:
    egress_pipeline_gate(egress_pipelines& pipes, unsigned port) : m_pipes(pipes), m_port(port) {}
    ps_t open_at(unsigned /*q*/, std::uint32_t /*wire_bytes*/, ps_t t) const override {
        return m_pipes.open_at(m_port, t);
    }
    void on_start(unsigned q, std::uint32_t wire_bytes, ps_t at) override;

private:
    egress_pipelines& m_pipes;
    unsigned m_port;
};

}  // namespace fabricsim::sw
