#pragma once
/// Ingress pipelines of a switch chip (ARCHITECTURE §4, facts-mmu §5): plain C++, no SystemC.
/// Each pipeline serves a fixed set of ports and processes one frame after another; a frame
/// occupies it for max(1 / packets_per_cycle, bytes / bytes_per_cycle) core cycles (bytes: the
/// frame without preamble and IPG). A frame that finds its pipeline busy waits in its port's
/// input buffer; one that does not fit there is dropped (pipeline_overflow). When the pipeline
/// frees, its arbiter takes the head of the next port with a waiting frame, round robin over
/// the pipeline's ports (as a chip's port arbiter), so overloaded ports share it equally.
/// Timing model: a frame arriving at t to a free pipeline with nothing waiting starts at t;
/// otherwise it starts when the arbiter takes it. It leaves the pipeline (into the MMU and its
/// egress port) at ceil_clock(start + depth), as the flat model's pipeline_latency. Frames that
/// start at once cost nothing more than a comparison; waiting frames are held here and taken
/// by the owner's one timer, one firing per frame.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "fabricsim/core/frame.h"
#include "fabricsim/core/ring.h"
#include "fabricsim/core/units.h"

namespace fabricsim::sw {

/// The `switch.pipeline.*` keys (switch_config.h).
struct pipeline_config {
    unsigned count = 1;  ///< ingress pipelines of the chip
    /// Pipeline of port p (element p); empty: contiguous blocks, p * count / ports.
    std::vector<std::uint16_t> port_map;
    std::uint32_t depth_cycles = 0;                ///< 0: switch.pipeline_latency gives the latency
    double packets_per_cycle = 0;                  ///< per pipeline; 0: no packet-rate limit
    std::uint32_t bytes_per_cycle = 0;             ///< per pipeline; 0: no byte-rate limit
    std::uint64_t input_buffer_bytes = 16u << 10;  ///< per port, frames waiting to start
    /// Egress pipelines (egress_pipeline.h): the same count and port map; 0: no limit.
    double egress_packets_per_cycle = 0;
    std::uint32_t egress_bytes_per_cycle = 0;
    /// A rate limit is set: frames can wait (the only case that costs anything).
    bool limited() const { return packets_per_cycle > 0 || bytes_per_cycle > 0; }
    bool egress_limited() const {
        return egress_packets_per_cycle > 0 || egress_bytes_per_cycle > 0;
    }
    /// Empty if the map fits a chip of `ports` ports, else the reason.
    std::string check_ports(unsigned ports) const;
    /// Pipeline of each of `ports` ports; throws std::invalid_argument ("port_map...") if the
    /// map does not fit.
    std::vector<std::uint16_t> pipeline_of_ports(unsigned ports) const;
};

/// How long a frame occupies a pipeline: max(1 / packets_per_cycle, bytes / bytes_per_cycle)
/// core cycles, the packet limit rounded to the ps, the byte limit rounded up.
class pipeline_rate
{
public:
    pipeline_rate(ps_t period, double packets_per_cycle, std::uint32_t bytes_per_cycle);
    ps_t service_ps(std::uint32_t bytes) const {
        ps_t by_bytes = 0;
        if (m_bytes_per_cycle)
            by_bytes = (ps_t(bytes) * m_period + m_bytes_per_cycle - 1) / m_bytes_per_cycle;
        return by_bytes > m_packet_ps ? by_bytes : m_packet_ps;
    }

private:
    ps_t m_period;
    ps_t m_packet_ps;  ///< round(period / packets_per_cycle); 0: no packet limit
    std::uint32_t m_bytes_per_cycle;
};

/// Time (ps) one cell takes an MMU port of `cells_per_cycle` at a clock `period`, rounded to
/// the ps (cell_bandwidth.h).
ps_t cell_time_ps(ps_t period, double cells_per_cycle);

class ingress_pipelines
{
public:
    static constexpr ps_t NONE = std::numeric_limits<ps_t>::max();
    /// A frame that writes no cells (control frames, frames with no route).
    static constexpr std::uint16_t NO_PARTITION = 0xffff;

    struct stats {
        std::uint64_t frames = 0;  ///< frames that entered the pipeline
        std::uint64_t bytes = 0;
        std::uint64_t waited = 0;             ///< frames that found it busy
        std::uint64_t overflow = 0;           ///< frames dropped: the input buffer was full
        std::uint64_t peak_buffer_bytes = 0;  ///< bytes waiting at its ports together
        ps_t busy = 0;  ///< service time of every frame started (busy_time(): up to now)
    };

    /// Writes of one buffer partition (cell_bandwidth.h).
    struct write_stats {
        std::uint64_t frames = 0;
        std::uint64_t cells = 0;
        ps_t busy = 0;
    };

    /// `period`: the core clock period (ps). With `write_cells_per_cycle` > 0, frames also wait
    /// for the write port of their partition (one of `partitions`): offer_write(), pop_write().
    /// Throws std::invalid_argument on a bad port map.
    ingress_pipelines(const pipeline_config& cfg, unsigned ports, ps_t period,
                      unsigned partitions = 1, double write_cells_per_cycle = 0);

    enum class verdict : std::uint8_t { START, WAIT, OVERFLOW };
    /// Frame `f` (from port `port`) arrives at `now`. START: it enters the pipeline now. WAIT:
    /// held until the arbiter takes it (next_start()/pop()). OVERFLOW: not taken (the caller
    /// drops it).
    verdict offer(frame& f, unsigned port, ps_t now) {
        lane& l = m_lanes[m_pipe_of[port]];
        const std::uint32_t bytes = f.frame_bytes();
        if (l.waiting_frames == 0 && l.free <= now) {
            start(l, port, bytes, now);
            return verdict::START;
        }
        if (!hold(l, port, {&f, bytes})) return verdict::OVERFLOW;
        if (l.waiting_frames++ == 0) {
            l.next = l.free > now ? l.free : now;
            if (l.next < m_next) m_next = l.next;
        }
        return verdict::WAIT;
    }
    /// Cell writes are limited: use offer_write()/pop_write()/wrote().
    bool writes_limited() const { return !m_writes.empty(); }
    /// offer() for a frame of `cells` to partition `part` (NO_PARTITION: it writes nothing).
    /// START only when nothing is held anywhere and both the pipeline and the partition's write
    /// port are free: a frame that could pass others waiting for the write port goes through
    /// the arbiter.
    verdict offer_write(frame& f, unsigned port, ps_t now, unsigned part, std::uint32_t cells);
    /// pop() with cell writes: a pipeline is due when it is free and the write port its next
    /// frame needs is free too (it stalls until then); pipelines due together for one write
    /// port take it round robin. `part`/`cells` name the frame's write (wrote()).
    frame* pop_write(ps_t now, unsigned& port, unsigned& part, std::uint32_t& cells);
    /// The MMU admitted a frame started at `now` of `cells` to `part`: its write port is busy
    /// for their write time (a dropped frame writes nothing: no call).
    void wrote(unsigned part, std::uint32_t cells, ps_t now);
    unsigned write_partitions() const { return static_cast<unsigned>(m_writes.size()); }
    const write_stats& partition_writes(unsigned k) const { return m_writes[k].st; }
    /// Write time partition k spent up to `now`.
    ps_t write_busy_time(unsigned k, ps_t now) const {
        const write_port& w = m_writes[k];
        return w.free > now ? w.st.busy - (w.free - now) : w.st.busy;
    }

    /// When the arbiter next takes a held frame, NONE when none is held.
    ps_t next_start() const { return m_next; }
    /// The held frame the arbiter takes at `now` (>= next_start(): the pipeline due first, ties
    /// by pipeline; in it the next port round robin), started now; nullptr when none is due.
    frame* pop(ps_t now, unsigned& port);

    /// How long (ps) a frame of `bytes` occupies its pipeline.
    ps_t service_ps(std::uint32_t bytes) const { return m_rate.service_ps(bytes); }
    /// Service time pipeline p spent up to `now` (frames still waiting excluded).
    ps_t busy_time(unsigned p, ps_t now) const {
        const lane& l = m_lanes[p];
        return l.free > now ? l.st.busy - (l.free - now) : l.st.busy;
    }
    unsigned count() const { return static_cast<unsigned>(m_lanes.size()); }
    unsigned pipeline_of(unsigned port) const { return m_pipe_of[port]; }
    const stats& lane_stats(unsigned p) const { return m_lanes[p].st; }
    std::uint64_t held_frames() const { return m_held; }
    std::uint64_t held_bytes(unsigned p) const { return m_lanes[p].waiting_bytes; }

private:
    struct waiting {
        frame* f;
        std::uint32_t bytes;
        std::uint16_t part = NO_PARTITION;  ///< cell writes only
        std::uint16_t cells = 0;
    };
    struct port_queue {  ///< a port's input buffer
        ring<waiting> held{2};
        std::uint64_t bytes = 0;
    };
    struct lane {
        ps_t free = 0;     ///< the pipeline can take its next frame from then
        ps_t next = NONE;  ///< the arbiter takes a held frame then (NONE: none held)
        std::vector<std::uint16_t> ports;  ///< ports it serves, ascending
        std::uint32_t rr = 0;              ///< index in ports the arbiter asks first
        std::uint32_t waiting_frames = 0;
        std::uint64_t waiting_bytes = 0;
        std::uint32_t pick = 0;  ///< cell writes: slot whose head the arbiter takes next
        stats st;
    };
    struct write_port {  ///< a partition's cell writes
        ps_t free = 0;
        std::uint32_t last_lane = ~0u;  ///< the pipeline that wrote last (ties go round robin)
        write_stats st;
    };
    static std::uint32_t next_slot(const lane& l, std::uint32_t slot) {
        return slot + 1 == l.ports.size() ? 0 : slot + 1;
    }
    void update_next();
    /// A frame of `bytes` from `port` enters lane l's pipeline at `now`.
    void start(lane& l, unsigned port, std::uint32_t bytes, ps_t now) {
        const ps_t service = service_ps(bytes);
        l.free = now + service;
        l.st.frames++;
        l.st.bytes += bytes;
        l.st.busy += service;
        l.rr = next_slot(l, m_slot_of[port]);
    }
    /// Holds `w` in its port's input buffer (lane l's counts; not waiting_frames), or counts
    /// the overflow and returns false when it does not fit.
    bool hold(lane& l, unsigned port, const waiting& w) {
        port_queue& q = m_ports[port];
        if (q.bytes + w.bytes > m_cfg.input_buffer_bytes) {
            l.st.overflow++;
            return false;
        }
        q.held.push_back(w);
        q.bytes += w.bytes;
        l.st.frames++;
        l.st.bytes += w.bytes;
        l.st.waited++;
        l.waiting_bytes += w.bytes;
        if (l.waiting_bytes > l.st.peak_buffer_bytes) l.st.peak_buffer_bytes = l.waiting_bytes;
        m_held++;
        return true;
    }
    /// Takes the head of `port`'s input buffer into lane l's pipeline at `now` (waiting_frames
    /// and the arbiter's state are the caller's).
    waiting take(lane& l, unsigned port, ps_t now) {
        port_queue& q = m_ports[port];
        const waiting w = q.held.pop_front();
        q.bytes -= w.bytes;
        l.waiting_bytes -= w.bytes;
        const ps_t service = service_ps(w.bytes);
        l.free = now + service;
        l.st.busy += service;
        m_held--;
        return w;
    }
    /// Cell writes: a lane's next frame and the time it is due (max(free, its write port's)).
    void plan_lane(lane& l);
    void plan_lanes();
    /// The lane's next frame's partition (NO_PARTITION with nothing held).
    unsigned picked_partition(const lane& l) const;

    pipeline_config m_cfg;
    pipeline_rate m_rate;
    std::vector<std::uint16_t> m_pipe_of;
    std::vector<std::uint16_t> m_slot_of;  ///< a port's index in its lane's ports
    std::vector<port_queue> m_ports;
    std::vector<lane> m_lanes;
    std::vector<write_port> m_writes;  ///< empty: cell writes unlimited
    ps_t m_cell_ps = 0;
    ps_t m_next = NONE;
    std::uint64_t m_held = 0;
};

}  // namespace fabricsim::sw
