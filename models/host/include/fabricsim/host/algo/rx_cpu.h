#pragma once
/// Host receive path as far as the seed needs it (plain C++, no SystemC): the RX descriptor
/// ring of each queue, the NIC's interrupt moderation on it (nic::interrupt_coalescer), and a
/// NAPI-like poll on one core per queue with per-interrupt, per-poll, per-packet and per-byte
/// CPU cost. docs/models/nic.md, "RX interrupt coalescing and host CPU".
///
/// Timing model. Event driven, one object per host; times in ps, calls in non-decreasing time.
///  - The caller reports each DMA completion with on_completion(queue, now, packet). The frame
///    takes a slot of that queue's ring until the host has processed it; with every slot taken
///    it is dropped (counted as rx_ring_full, the NIC's "out of buffer") and nothing else
///    happens. Otherwise the queue's coalescer sees the completion.
///  - When the coalescer fires (at once, or at its timer), the interrupt costs irq_cost on the
///    queue's core and schedules a poll, which costs poll_cost on entry. The poll then reads the
///    ring: every frame that has arrived by then is processed in order, back to back, each
///    costing packet_cost + bytes x byte_cost, and is handed to the transport when its
///    processing ends (rx_sink::on_delivery). After them the poll looks again (frames that came
///    in meanwhile) until the ring is empty, which is NAPI complete: the interrupt is unmasked
///    (net_dim samples there) and rx_sink::on_poll_end(complete = true) is called. After
///    `budget` frames in one poll it instead polls again (poll_cost again, on_poll_end with
///    complete = false) if frames are waiting, or completes if none are.
///  - A ring slot is free again when its frame's processing ends (the driver re-posts the
///    descriptor then). Frames are never processed out of order within a queue.
///  - One RX queue per core (RSS with one IRQ and one NAPI instance per core, irqbalance's
///    usual 1:1 affinity); the caller picks the queue (e.g. a flow hash mod cores). A core only
///    serves its queue, so cores never contend, and with one NAPI run at a time per queue its
///    busy time is one contiguous chain per run.
///  - Delivery times are computed when the poll reads the frames, i.e. up to a poll's work
///    ahead of the kernel: the sink receives them in time order per queue, annotated in the
///    future like the NIC's RX delivery; across queues they are not ordered.
///  - Ordering at equal times: a call first runs every event (timer, poll step) due strictly
///    before its time; a completion at t is therefore seen by a timer or a poll step at t.
///    advance(now) runs every event due at or before now. The sink must not call back.
/// CPU load: busy time per core is exact (irq + poll + packet costs); utilisation() divides it
/// by elapsed time. Per-frame work is O(1) and allocation-free (fixed rings); next_event() and
/// each dispatch look at every queue, O(cores).
/// Application (app_byte_cost > 0): the receiving application copies each processed frame's
/// payload on the queue's core at app_byte_cost per byte, in arrival order, only while the core
/// has no softirq work (an interrupt pre-empts it, NAPI complete resumes it); rx_sink::
/// on_app_read reports each frame read. A saturated softirq thus starves the reader, whose
/// unread bytes close the flow's receive window (the transport's part).
/// Ignored: other work on the cores (the TX path, ACK transmission
/// costs beyond what poll_cost stands for), softirq time limits and ksoftirqd, interrupt
/// latency, RPS/RFS, cache effects, GRO's own savings (see host/algo/gro.h for merging).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fabricsim/core/param_error.h"
#include "fabricsim/core/units.h"
#include "fabricsim/nic/algo/interrupt_coalescer.h"

namespace fabricsim::host {

/// One received frame as the host's RX path sees it.
struct rx_packet {
    std::uint64_t cookie = 0;   ///< the caller's handle (frame index, pool slot)
    std::uint32_t bytes = 0;    ///< frame bytes: byte_cost and net_dim's byte counter
    std::uint32_t flow = 0;     ///< flow id (GRO)
    std::uint32_t seq = 0;      ///< TCP sequence number of the first payload byte (GRO)
    std::uint32_t payload = 0;  ///< TCP payload bytes; 0 = never merged (GRO)
    bool ce = false;            ///< ECN CE: GRO merges only segments of equal TOS, as Linux
};

/// Receives what the host RX path produces.
class rx_sink
{
public:
    virtual ~rx_sink() = default;
    /// `p` is handed to the transport at `at` (its processing on the core ends then).
    virtual void on_delivery(unsigned queue, const rx_packet& p, ps_t at) = 0;
    /// A poll of `queue` ends at `at`: complete = NAPI complete (interrupt re-enabled); false =
    /// the budget is used up and it polls again. GRO flushes here.
    virtual void on_poll_end(unsigned queue, ps_t at, bool complete) {
        (void)queue;
        (void)at;
        (void)complete;
    }
    /// The application has read `p`'s payload at `at` (app_byte_cost > 0 only).
    virtual void on_app_read(unsigned queue, const rx_packet& p, ps_t at) {
        (void)queue;
        (void)p;
        (void)at;
    }
};

/// Host RX CPU parameters (nic/algo/interrupt_coalescer.h: a node's NIC profile carries them).
using rx_cpu_params = nic::rx_cpu_params;

/// The receive path of one host. No allocation after construction.
class rx_cpu
{
public:
    static constexpr ps_t NEVER = ~ps_t(0);

    /// Throws std::invalid_argument ("rx_cpu_params.<field>: <reason>" or
    /// "coalesce_params.<field>: <reason>"). `sink` must outlive the object.
    rx_cpu(const rx_cpu_params& p, const nic::coalesce_params& c, rx_sink& sink);

    /// A DMA completion on `queue` (< cores()) at `now`. False: dropped, the ring was full.
    bool on_completion(unsigned queue, ps_t now, const rx_packet& p);
    /// Runs every event due at or before `now`.
    void advance(ps_t now);
    /// The earliest pending event (coalescing timer or poll step); NEVER if none.
    ps_t next_event() const;

    /// New moderation settings for every queue (interrupt_coalescer::set_params).
    void set_coalescing(const nic::coalesce_params& c) {
        for (auto& q : m_q) q.coal.set_params(c);
    }

    std::uint32_t cores() const { return m_p.cores; }
    const rx_cpu_params& params() const { return m_p; }
    const nic::interrupt_coalescer& coalescer(unsigned queue) const { return m_q[queue].coal; }
    /// NAPI scheduled or running on `queue` (its interrupt is masked).
    bool polling(unsigned queue) const { return m_q[queue].polling; }
    /// Ring slots in use as of the last call (frames not yet processed to the end).
    std::uint32_t ring_used(unsigned queue) const {
        return static_cast<std::uint32_t>(m_q[queue].tail - m_q[queue].head);
    }
    /// Core busy time in [0, now] (now >= the time of the last call).
    ps_t busy_ps(unsigned queue, ps_t now) const;
    /// busy_ps / now for one core, and averaged over all cores (softirq work only).
    double utilisation(unsigned queue, ps_t now) const;
    double utilisation(ps_t now) const;
    /// The application's reading time in [0, now] on `queue`'s core, and its share averaged
    /// over the cores.
    ps_t app_busy_ps(unsigned queue, ps_t now) const;
    double app_utilisation(ps_t now) const;
    /// Payload bytes processed and not yet read by the application on `queue`.
    std::uint64_t app_backlog(unsigned queue) const { return m_q[queue].app_bytes; }

    struct counters {
        std::uint64_t completions = 0;   ///< frames admitted to the ring
        std::uint64_t rx_ring_full = 0;  ///< frames dropped: no free descriptor
        std::uint64_t packets = 0;       ///< frames processed (handed to the transport)
        std::uint64_t bytes = 0;
        std::uint64_t interrupts = 0;
        std::uint64_t polls = 0;      ///< poll calls, re-polls included
        std::uint64_t repolls = 0;    ///< poll calls after a used-up budget
        std::uint32_t max_batch = 0;  ///< most frames in one NAPI run (interrupt to complete)
        std::uint32_t peak_ring = 0;  ///< most ring slots in use
        counters& operator+=(const counters& o);
        double mean_batch() const {
            return interrupts ? double(packets) / double(interrupts) : 0.0;
        }
    };
    const counters& stats(unsigned queue) const { return m_q[queue].stats; }
    counters totals() const;

private:
    struct slot {
        rx_packet pkt;
        ps_t arrival = 0;
        ps_t finish = NEVER;  ///< end of processing, NEVER until the poll reads it
    };
    struct queue_state {
        explicit queue_state(const nic::coalesce_params& c) : coal(c) {}
        nic::interrupt_coalescer coal;
        std::uint64_t head = 0;  ///< oldest slot in use
        std::uint64_t proc = 0;  ///< oldest frame not yet read by a poll
        std::uint64_t tail = 0;  ///< next free slot
        bool polling = false;
        ps_t next_check = NEVER;  ///< the poll's next look at the ring
        std::uint32_t budget_left = 0;
        std::uint32_t batch = 0;  ///< frames in this NAPI run
        ps_t busy = 0;            ///< committed busy time
        ps_t busy_end = 0;        ///< end of the committed chain
        counters stats;
        // The application's reader: frames processed, not yet read, oldest first.
        std::vector<rx_packet> app;  ///< a ring of app_size entries from app_head (grows)
        std::size_t app_head = 0;
        std::size_t app_size = 0;
        ps_t app_left = 0;   ///< work left on the oldest
        ps_t app_since = 0;  ///< the reader runs from here (the core is idle)
        ps_t app_busy = 0;   ///< reading time up to app_since
        std::uint64_t app_bytes = 0;
    };

    slot& at(unsigned queue, std::uint64_t i) {
        return m_slots[std::size_t(queue) * m_p.ring + i % m_p.ring];
    }
    ps_t event_of(const queue_state& q) const {
        if (q.polling) return q.next_check;
        return q.app_size ? std::min(q.coal.deadline(), q.app_since + q.app_left)
                          : q.coal.deadline();
    }
    void app_push(queue_state& q, const rx_packet& p);
    void app_done(unsigned queue, ps_t t);
    void run(ps_t until, bool inclusive);
    void interrupt(unsigned queue, ps_t t);
    void look(unsigned queue, ps_t t);
    void complete(unsigned queue, ps_t t);
    void commit(queue_state& q, ps_t from, ps_t to);

    rx_cpu_params m_p;
    rx_sink* m_sink;
    std::vector<queue_state> m_q;
    std::vector<slot> m_slots;  ///< every queue's ring, `ring` slots each
};

}  // namespace fabricsim::host
