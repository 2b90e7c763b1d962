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
#include <limits>
#include <vector>

#include "fabricsim/core/units.h"
#include "fabricsim/switch/algo/egress_gate.h"
#include "fabricsim/switch/algo/ingress_pipeline.h"

namespace fabricsim::sw {

class egress_pipelines
{
public:
    static constexpr ps_t NONE = std::numeric_limits<ps_t>::max();

    /// A port told that its turn has come (it tries to start a frame now).
    class port_link
    {
    public:
        virtual ~port_link() = default;
        virtual void pipeline_turn() = 0;
    };
    /// The owner's timer: call run_turns() at `at` (or now, if `at` has passed).
    class turn_timer
    {
    public:
        virtual ~turn_timer() = default;
        virtual void turn_due(ps_t at) = 0;
    };

    struct stats {
        std::uint64_t frames = 0;  ///< frames started through the pipeline
        std::uint64_t bytes = 0;
        std::uint64_t turns = 0;  ///< frames started on a turn (their port had waited)
        ps_t busy = 0;            ///< service time of every frame started
    };

    /// Throws std::invalid_argument on a port map that does not fit `ports`.
    egress_pipelines(const pipeline_config& cfg, unsigned ports, ps_t period, turn_timer& timer);

    void attach(unsigned port, port_link& link) { m_links[port] = &link; }
    /// Earliest time >= t that `port` may start a frame: t, or egress_gate::UNTIL_TOLD when it
    /// must wait its turn (it is then told through pipeline_turn()).
    ps_t open_at(unsigned port, ps_t t);
    /// `port` started a frame of `frame_bytes` at `at`.
    void started(unsigned port, std::uint32_t frame_bytes, ps_t at);
    /// Offers each pipeline that is free at `now` to its waiting ports (the owner's timer).
    void run_turns(ps_t now);

    unsigned count() const { return static_cast<unsigned>(m_lanes.size()); }
    unsigned pipeline_of(unsigned port) const { return m_pipe_of[port]; }
    const stats& lane_stats(unsigned p) const { return m_lanes[p].st; }
    /// Service time pipeline p spent up to `now`.
    ps_t busy_time(unsigned p, ps_t now) const {
        const lane& l = m_lanes[p];
        return l.free > now ? l.st.busy - (l.free - now) : l.st.busy;
    }
    /// Ports waiting for pipeline p's turn now.
    unsigned waiting_ports(unsigned p) const { return m_lanes[p].waiting; }

private:
    static constexpr std::uint32_t NO_PORT = ~std::uint32_t(0);
    struct lane {
        ps_t free = 0;                     ///< takes its next frame from then
        std::vector<std::uint16_t> ports;  ///< ports it serves, ascending
        std::uint32_t rr = 0;              ///< index in ports offered the next turn first
        std::uint32_t waiting = 0;         ///< ports enrolled for a turn
        std::uint32_t turn = NO_PORT;      ///< the port whose turn it is, during run_turns()
        stats st;
    };
    static std::uint32_t next_slot(const lane& l, std::uint32_t slot) {
        return slot + 1 == l.ports.size() ? 0 : slot + 1;
    }

    pipeline_rate m_rate;
    std::vector<std::uint16_t> m_pipe_of;
    std::vector<std::uint16_t> m_slot_of;  ///< a port's index in its lane's ports
    std::vector<std::uint8_t> m_enrolled;  ///< per port: waiting for a turn
    std::vector<port_link*> m_links;
    std::vector<lane> m_lanes;
    turn_timer& m_timer;
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
