#pragma once
/// A shared resource of a switch chip that egress ports take one frame at a time, in turns:
/// plain C++, no SystemC. The egress pipelines (egress_pipeline.h) and the MMU's cell reads
/// (cell_bandwidth.h) are such resources. Each lane is one resource (a pipeline, a buffer
/// partition's read port) serving a fixed set of ports; a port may belong to several lanes.
/// A port that finds a lane busy, or other ports waiting for it, enrols with it and is told
/// when its turn comes: when the lane frees, its arbiter offers it to the enrolled ports round
/// robin until one starts a frame (a port that cannot start then, e.g. paused, still sending, or
/// waiting for another lane, passes its turn on and asks again when it can).
/// Timing model: a lane is free again `service` after a start. Turns are taken by the owner's
/// one timer, one firing per turn; a port that finds its lane free with nobody waiting starts at
/// once.
#include <cstdint>
#include <limits>
#include <vector>

#include "fabricsim/core/units.h"

namespace fabricsim::sw {

class turn_arbiter
{
public:
    static constexpr ps_t NONE = std::numeric_limits<ps_t>::max();
    /// open_at() while the port must wait to be told (egress_gate::UNTIL_TOLD).
    static constexpr ps_t UNTIL_TOLD = ~ps_t(0);

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
        std::uint64_t frames = 0;  ///< frames started through the lane
        std::uint64_t units = 0;   ///< what they took of it (bytes, cells), summed
        std::uint64_t turns = 0;   ///< frames started on a turn (their port had waited)
        ps_t busy = 0;             ///< service time of every frame started
    };

    /// `members[l]`: the ports lane l serves, ascending, each < `ports`.
    turn_arbiter(const std::vector<std::vector<std::uint16_t>>& members, unsigned ports,
                 turn_timer& timer);

    void attach(unsigned port, port_link& link) { m_links[port] = &link; }
    /// Earliest time >= t that `port` may start a frame through lane `l`: t, or UNTIL_TOLD when
    /// it must wait its turn (it is then told through pipeline_turn()).
    ps_t open_at(unsigned l, unsigned port, ps_t t);
    /// `port` started a frame through lane `l` at `at`, taking `units` of it for `service`.
    void started(unsigned l, unsigned port, std::uint32_t units, ps_t service, ps_t at);
    /// Offers each lane that is free at `now` to its waiting ports (the owner's timer).
    void run_turns(ps_t now);

    unsigned count() const { return static_cast<unsigned>(m_lanes.size()); }
    const stats& lane_stats(unsigned l) const { return m_lanes[l].st; }
    /// Service time lane l spent up to `now`.
    ps_t busy_time(unsigned l, ps_t now) const {
        const lane& ln = m_lanes[l];
        return ln.free > now ? ln.st.busy - (ln.free - now) : ln.st.busy;
    }
    /// Ports waiting for lane l's turn now.
    unsigned waiting_ports(unsigned l) const { return m_lanes[l].waiting; }

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
    /// (lane, port) as an index of the per-pair tables.
    std::size_t pair(unsigned l, unsigned port) const { return std::size_t(l) * m_ports + port; }

    unsigned m_ports;
    std::vector<std::uint16_t> m_slot_of;  ///< per (lane, port): the port's index in lane.ports
    std::vector<std::uint8_t> m_enrolled;  ///< per (lane, port): waiting for a turn
    std::vector<port_link*> m_links;
    std::vector<lane> m_lanes;
    turn_timer& m_timer;
};

}  // namespace fabricsim::sw
