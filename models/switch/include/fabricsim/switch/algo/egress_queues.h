#pragma once
/// The data path of one egress port as plain C++ (no SystemC): up to 8 FIFO queues in the
/// shared-buffer MMU, a scheduler (SP / WRR / DWRR, strict queues above the group), gates on
/// each queue's eligibility (token-bucket shapers, pause) and marking policies at enqueue and
/// dequeue (ECN/RED family, phantom queue). `egress_port` turns its answers into a timer and
/// link calls; tests drive it with explicit times.
/// Timing model: untimed decisions at given times. A frame is handed over when it arrives, with
/// the time `ready` it leaves the pipeline (frames reach a port in `ready` order); admission and
/// enqueue marking are decided then. The caller says when the wire is busy until
/// (set_busy_until); a frame may start when the wire is free, its head is out of the pipeline
/// and every gate is open (next_start() tells when that is). At a start the frame's cells are
/// released, dequeue policies act and the gates see it (shapers take tokens); MQ-ECN samples
/// round boundaries from the scheduler.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "fabricsim/core/frame.h"
#include "fabricsim/core/frame_pool.h"
#include "fabricsim/core/ring.h"
#include "fabricsim/core/stats.h"
#include "fabricsim/switch/algo/aqm.h"
#include "fabricsim/switch/algo/bcn_congestion_point.h"
#include "fabricsim/switch/algo/credit_queue.h"
#include "fabricsim/switch/algo/egress_gate.h"
#include "fabricsim/switch/algo/egress_policy.h"
#include "fabricsim/switch/algo/fera_congestion_point.h"
#include "fabricsim/switch/algo/mmu.h"
#include "fabricsim/switch/algo/qcn_congestion_point.h"
#include "fabricsim/switch/algo/queue_scheduler.h"

namespace fabricsim::sw {

struct switch_config;

/// Frames and bytes queued in the switch per egress service pool (pool-scope ECN).
struct pool_backlog {
    std::array<std::uint64_t, SERVICE_POOLS> bytes{};
    std::array<std::uint64_t, SERVICE_POOLS> frames{};
};

class egress_queues final : private queue_view
{
public:
    /// The port `index` of a chip with `cfg`, `rate_bps` on its link; `rng_name` seeds the RED
    /// draws (the port's hierarchical name). Throws std::invalid_argument on a bad scheduler or
    /// marking configuration (validated before, so only for direct use).
    egress_queues(const switch_config& cfg, unsigned index, mmu& buffer, pool_backlog& pools,
                  std::uint64_t rate_bps, std::uint64_t seed, const std::string& rng_name);

    /// Adds a gate (not owned); a queue is eligible when all gates are open for its head.
    /// Before the first frame.
    void add_gate(egress_gate& g);
    /// Adds a gate shared with other ports that hands out turns (an egress pipeline): a frame
    /// that finds the port idle no longer starts ahead at its `ready` time, the port decides
    /// when that time comes (its wake-up), so starts reach the gate in time order.
    void add_turn_gate(egress_gate& g);
    /// Adds a policy (not owned) after the configured ones. Before the first frame.
    void add_policy(egress_policy& p);
    /// Where the policies' frames go (the switch's forwarding path); nullptr: nowhere.
    void set_emitter(frame_emitter* e);
    unsigned index() const { return m_index; }
    /// The FERA congestion point, nullptr when switch.fera.mode is none.
    fera_congestion_point* fera() { return m_fera; }
    const fera_congestion_point* fera() const { return m_fera; }

    /// Frame from ingress `in_port`, priority group `pg`, for queue q, out of the pipeline at
    /// `ready` (>= now). Takes ownership (drops are counted and the frame released). Returns the
    /// frame to start on the wire at `ready` (this one, the port being idle then), or nullptr
    /// (queued: wake at next_start(); or dropped). Inline: the switch's per-frame path.
    [[gnu::always_inline]] frame* accept(frame& f, unsigned in_port, unsigned pg, unsigned q,
                                         ps_t ready);
    /// Picks and starts the next frame at `at` if one may go (the wire is free at `at`).
    frame* try_start(ps_t at);
    /// Drops every frame queue q holds, counted as `why` (the PFC watchdog's drop action).
    /// Returns how many.
    std::uint32_t discard(unsigned q, drop_cause why);
    /// Earliest time >= wire_free at which a queued frame may start (head out of the pipeline,
    /// gates open); egress_gate::UNTIL_TOLD if none will by itself. Call with frames queued.
    ps_t next_start(ps_t wire_free) const;
    /// The wire carries the started frame until `t` (the link's answer).
    void set_busy_until(ps_t t) { m_busy_until = t; }
    ps_t busy_until() const { return m_busy_until; }

    /// Idle at `t`: nothing queued and the wire free (cut-through decisions use this).
    bool idle_at(ps_t t) const { return m_queued_frames == 0 && m_busy_until <= t; }
    std::uint64_t rate_bps() const { return m_rate_bps; }
    unsigned queues() const { return m_queues; }
    std::uint32_t queued_frames() const { return m_queued_frames; }
    std::uint64_t queued_bytes() const {
        std::uint64_t b = 0;
        for (unsigned q = 0; q < m_queues; ++q) b += m_queue[q].bytes;
        return b;
    }
    /// Frame bytes in q (the frame being decided counts from its decision on).
    std::uint64_t queue_bytes(unsigned q) const { return m_queue[q].bytes; }
    /// Frames in q, the one being decided included (what a marking policy counts).
    std::uint64_t deciding_frames(unsigned q) const { return m_queue[q].fifo.size() + 1; }
    /// Frame bytes queued in the port: kept only when a policy reads them (port-scope ECN).
    std::uint64_t port_bytes() const { return m_port_bytes; }
    std::uint64_t pool_bytes(unsigned pool) const { return m_pools.bytes[pool]; }
    std::uint64_t pool_frames(unsigned pool) const { return m_pools.frames[pool]; }
    /// The service pool of queue q (the MMU's).
    unsigned pool_of(unsigned q) const { return m_mmu.queue_pool(q); }

    struct queue_stats {
        std::uint64_t tx_frames = 0;
        std::uint64_t tx_bytes = 0;
        std::uint64_t waited = 0;     ///< frames that could not start when they left the pipeline
        std::uint64_t ce_marked = 0;  ///< ECT frames this port set CE on (any policy)
        std::uint64_t peak_bytes = 0;
    };
    queue_stats stats_of(unsigned q) const {
        const queue_state& s = m_queue[q];
        const queue_cold& c = m_cold[q];
        return {s.tx_frames, s.tx_bytes, m_waited[q], c.ce_marked, s.peak_bytes};
    }
    const drop_counters& drops_of(unsigned q) const { return m_cold[q].drops; }
    /// Frames this port dropped so far, every queue and cause.
    std::uint64_t dropped_frames() const { return m_dropped; }
    drop_counters drops() const;
    /// Frames of a lossless PG this port dropped for a cause other than headroom_exhausted, the
    /// PFC watchdog's drop action or a link going down: a sound lossless set-up has none
    /// (invariants.h). Counted at the drop; the first one is kept for the report.
    struct lossless_loss {
        std::uint64_t frames = 0;
        ps_t first_at = 0;
        drop_cause cause{};
        std::uint8_t pg = 0;
        std::uint8_t queue = 0;
    };
    const lossless_loss& lossless_losses() const { return m_lossless_loss; }
    /// MMU ticket of queue q's head frame (q holds frames).
    const mmu_ticket& head_ticket(unsigned q) const { return m_queue[q].fifo.front().ticket; }
    /// Appends the MMU tickets of the frames queued here (the invariant check sums them).
    void collect_tickets(std::vector<mmu_ticket>& out) const;
    using scheduler_type = basic_queue_scheduler<mq_ecn_estimator>;
    const scheduler_type& scheduler() const { return m_sched; }
    /// Current ECN threshold scale of queue q (MQ-ECN / minimum; 1 = the configured threshold).
    double threshold_scale(unsigned q) const { return m_scales ? m_scales->scale(q) : 1.0; }
    const mq_ecn_estimator* mq_ecn() const { return m_mq; }
    const phantom_queue* phantom() const { return m_phantom ? &m_phantom->queue() : nullptr; }
    /// Queues, MQ-ECN and phantom state at `now` as summary.json has them.
    void report_stats(nlohmann::json& out, ps_t now) const;

private:
    frame_pool& m_pool = frame_pool::current();  // the platform's (frame_pool::scope)
    struct entry {
        frame* f;
        ps_t ready;
        mmu_ticket ticket;
        std::uint32_t wire;  ///< wire bytes, kept here so scheduling never touches the frame
    };
    // Everything one frame reads or writes of its queue, in one cache line; the rest of the
    // per-queue state (cold or per-configuration) is in queue_cold. The frame count is the
    // ring's size (plus the frame being decided, as marking counts it).
    struct alignas(64) queue_state {
        ring<entry> fifo{1};      ///< 4 slots for the configured queues (the constructor)
        std::uint64_t bytes = 0;  ///< frame bytes queued (the arriving frame counts from its
                                  ///< decision on)
        std::uint64_t tx_frames = 0;
        std::uint64_t tx_bytes = 0;
        std::uint64_t peak_bytes = 0;
    };
    static_assert(sizeof(queue_state) == 64, "one cache line per queue");
    struct queue_cold {
        std::uint64_t ce_marked = 0;
        drop_counters drops{};
    };

    // queue_view: what the scheduler may serve at `now`. The scheduler's pick() is a template
    // instantiated on this final class, so these calls inline.
    template <class>
    friend class basic_queue_scheduler;
    bool eligible(unsigned q, ps_t now) const override {
        if (!(m_backlogged >> q & 1)) return false;
        const entry& head = m_queue[q].fifo.front();
        return head.ready <= now && (!m_gated || gates_open(q, head.wire, now));
    }
    std::uint32_t head_bytes(unsigned q) const override { return m_queue[q].fifo.front().wire; }
    bool gates_open(unsigned q, std::uint32_t wire, ps_t now) const;

    /// The policy with a pass bound passes an occupancy of q at or below it (see pass_bound).
    bool quick_pass(const queue_state& s) const {
        return (m_pass_frames ? double(s.fifo.size() + 1) : double(s.bytes)) <= m_pass_bound;
    }
    /// The unbounded policies' verdict on an arrival, given the bounded policy's `v`.
    enqueue_verdict enqueue_chain(unsigned q, frame& f, ps_t now, enqueue_verdict v);
    bool dequeue_chain(unsigned q, frame& f, std::uint32_t wire, ps_t at);
    /// Pops the head of queue q and does what its start at `at` means (picked, or `alone`: see
    /// queue_scheduler::serve_alone). Always inlined into its two callers, the per-frame paths
    /// of accept() and try_start().
    [[gnu::always_inline]] frame& start(unsigned q, ps_t at, bool alone);
    /// Counts and frees a frame dropped from queue q, admitted (or not) at `at` for PG `pg`.
    void drop(frame& f, unsigned q, drop_cause why, unsigned pg, ps_t at);
    /// Frame and byte counts of queue q, the port and its service pool, in or out.
    [[gnu::always_inline]] void count_backlog(unsigned q, std::uint32_t bytes, bool in) {
        // Always inlined, so that each per-frame call is specialised on `in`.
        const std::uint64_t n = in ? 1 : ~std::uint64_t(0);  // +1 or -1, modulo 2^64
        const std::uint64_t b = in ? bytes : std::uint64_t(0) - bytes;
        m_queue[q].bytes += b;
        m_queued_frames += in ? 1u : ~0u;
        if (m_count_port_bytes) m_port_bytes += b;
        if (m_count_pools) {
            const unsigned pool = pool_of(q);
            m_pools.bytes[pool] += b;
            m_pools.frames[pool] += n;
        }
    }
    void mark_ce(frame& f, unsigned q);
    /// m_pass_bound after T_round changed (MQ-ECN round samples).
    void refresh_pass_bound() { m_pass_bound = m_mq->min_threshold(); }
    void install_marking(const switch_config& cfg, std::uint64_t seed, const std::string& name);
    void report_qcn(nlohmann::json& out) const;
    void report_bcn(nlohmann::json& out) const;
    void report_fera(nlohmann::json& out, ps_t now) const;

    // Members in order of access: the port's per-frame scalars share one line, then each
    // queue's line, then the scheduler (the MQ-ECN estimator is held further on: its first line
    // is what a frame uses); gates, policies, cold statistics last.
    alignas(64) ps_t m_busy_until = 0;
    mmu& m_mmu;
    mq_ecn_estimator* m_mq = nullptr;  ///< m_mq_state's estimator when MQ-ECN is on
    /// The bounded policy (m_enqueue_policy / m_dequeue_policy) passes an occupancy at or
    /// below this without a call. With MQ-ECN, as of the last round sample: later idle decay
    /// only raises thresholds. Most decisions stay out of the policy and MQ-ECN's state.
    double m_pass_bound = 0;
    /// MQ-ECN: an arrival at the empty port from this time on decays T_round (the port went
    /// idle T_idle before); an earlier one would not, so port_busy() is skipped.
    ps_t m_decay_from = ~ps_t(0);
    /// Latest `ready` of the frames queued so far: no head leaves the pipeline later, so
    /// next_start() need not look at the heads once it has passed. A maximum, not the last:
    /// a store-and-forward fallback (or a write-bandwidth wait) queues a frame whose `ready` is
    /// later than that of frames queued after it.
    ps_t m_last_ready = 0;
    std::uint32_t m_queued_frames = 0;
    std::uint16_t m_index;
    std::uint64_t m_dropped = 0;
    /// Largest wire size a frame reaching an empty port may have to be served alone (the
    /// smallest WRR/DWRR quantum, at most 65535; see queue_scheduler::serves_alone).
    std::uint16_t m_alone_bytes = 0xffff;
    std::uint8_t m_backlogged = 0;         ///< bit q: queue q holds frames
    std::uint8_t m_strict_mask = 0;        ///< strict-priority queues
    std::uint8_t m_mark_enqueue_mask = 0;  ///< queues m_enqueue_policy decides at enqueue
    std::uint8_t m_mark_dequeue_mask = 0;  ///< queues m_dequeue_policy decides at dequeue
    bool m_gated : 1;                      ///< any gate installed (skips gate calls when not)
    bool m_use_sched : 1;                  ///< false for a lone queue without MQ-ECN: plain FIFO
    bool m_pass_frames : 1;                ///< the pass bound counts frames (else bytes)
    bool m_bound_follows_mq : 1;           ///< refresh m_pass_bound from MQ-ECN after round samples
    bool m_enqueue_chain : 1;              ///< policies without a bound see arrivals
    bool m_dequeue_chain : 1;              ///< policies without a bound see departures
    bool m_count_pools : 1;                ///< pool-scope marking: keep m_pools up to date
    bool m_count_port_bytes : 1;           ///< port-scope marking: keep m_port_bytes up to date
    bool m_starts_at_time : 1;             ///< a turn gate: no start ahead of time (add_turn_gate)
    std::array<queue_state, MAX_QUEUES> m_queue;
    /// Frames per queue that could not start when they left the pipeline: one line for the
    /// port (a per-frame count, apart from the cold per-queue statistics).
    alignas(64) std::array<std::uint64_t, MAX_QUEUES> m_waited{};
    scheduler_type m_sched;
    egress_policy* m_enqueue_policy = nullptr;  ///< the enqueue policy with a pass bound
    egress_policy* m_dequeue_policy = nullptr;  ///< the dequeue policy with a pass bound
    std::optional<mq_ecn_estimator> m_mq_state;
    pool_backlog& m_pools;
    std::uint64_t m_port_bytes = 0;  ///< frame bytes queued in the port (port-scope marking only)
    std::vector<egress_gate*> m_gates;
    std::vector<egress_policy*> m_enqueue_policies;   ///< policies without a bound, in order
    drop_cause m_drop_reason = drop_cause::AQM_DROP;  ///< of the chain's last DROP
    lossless_loss m_lossless_loss;
    std::vector<egress_policy*> m_dequeue_policies;
    std::vector<std::unique_ptr<egress_gate>> m_own_gates;
    std::vector<std::unique_ptr<egress_policy>> m_own_policies;
    std::vector<egress_policy*> m_policies;  ///< every policy, in order
    frame_emitter* m_emitter = nullptr;
    std::optional<threshold_scales> m_scales;  ///< what the ECN/RED policies scale by
    const phantom_marking* m_phantom = nullptr;
    const qcn_congestion_point* m_qcn = nullptr;
    const credit_gate* m_credit_gate = nullptr;  ///< the credit queue's bucket
    int m_credit_queue = -1;                     ///< the credit queue, -1: none
    const bcn_congestion_point* m_bcn = nullptr;
    fera_congestion_point* m_fera = nullptr;
    /// One per configured queue (a 1-queue port keeps 168 B, not 8 x 168): only drops and
    /// marks touch it.
    std::unique_ptr<queue_cold[]> m_cold;
    unsigned m_queues;
    std::uint64_t m_rate_bps;
    bool m_ecn_on;
};

// The per-frame paths, inline so that they join the switch's receive path.
inline frame& egress_queues::start(unsigned q, ps_t at, bool alone) {
    queue_state& s = m_queue[q];
    const std::uint32_t wire = head_bytes(q);
    // Gates see the frame still at the head (the MMU's read gate takes its partition there).
    if (m_gated)
        for (egress_gate* g : m_gates) g->on_start(q, wire, at);
    const entry e = s.fifo.pop_front();
    frame& f = *e.f;
    const std::uint32_t bytes = f.frame_bytes();
    // Dequeue policies see the queue the frame leaves behind, the frame included. pick() may
    // have taken round samples since the last refresh.
    if (m_mark_dequeue_mask >> q & 1) {
        if (m_bound_follows_mq) refresh_pass_bound();
        if (!quick_pass(s) && m_dequeue_policy->on_dequeue(*this, q, f, wire, at)) mark_ce(f, q);
    }
    if (m_dequeue_chain && dequeue_chain(q, f, wire, at)) mark_ce(f, q);
    count_backlog(q, bytes, false);
    m_mmu.release(e.ticket);
    s.tx_frames++;
    s.tx_bytes += bytes;
    if (s.fifo.empty()) m_backlogged &= static_cast<std::uint8_t>(~(1u << q));
    // Only MQ-ECN uses the time the last bit leaves.
    const ps_t tx_end = m_mq ? m_mq->tx_end(at, wire) : at;
    if (m_use_sched) {
        // accept() checked what serve_alone() would: the port was empty and the frame fits.
        if (!alone)
            m_sched.served(q, wire, s.fifo.empty(), at, tx_end);
        else if (!(m_strict_mask >> q & 1))
            m_sched.serve_alone_known(q, at, tx_end, m_mq);
    }
    if (m_mq) {
        if (m_bound_follows_mq) refresh_pass_bound();
        if (m_queued_frames == 0) {
            m_mq->port_idle(tx_end);
            m_decay_from = tx_end + m_mq->t_idle();
        }
    }
    return f;
}

inline frame* egress_queues::accept(frame& f, unsigned in_port, unsigned pg, unsigned q,
                                    ps_t ready) {
    mmu_ticket ticket;
    drop_cause why{};
    if (!m_mmu.admit(in_port, pg, m_index, q, f.frame_bytes(), ticket, why)) {
        drop(f, q, why, pg, ready);
        return nullptr;
    }
    queue_state& s = m_queue[q];
    const std::uint32_t bytes = f.frame_bytes();
    // Occupancy including the arriving frame, as the marking test sees it (seed-001 §1.1).
    count_backlog(q, bytes, true);
    enqueue_verdict v = enqueue_verdict::PASS;
    if ((m_mark_enqueue_mask >> q & 1) && !quick_pass(s))
        v = m_enqueue_policy->on_enqueue(*this, q, f, ready);
    if (m_enqueue_chain) v = enqueue_chain(q, f, ready, v);
    if (v != enqueue_verdict::PASS) {
        if (v == enqueue_verdict::DROP) {
            count_backlog(q, bytes, false);
            m_mmu.release(ticket);
            drop(f, q, m_drop_reason, pg, ready);
            m_drop_reason = drop_cause::AQM_DROP;
            return nullptr;
        }
        mark_ce(f, q);
    }
    const bool port_was_empty = m_queued_frames == 1;
    const bool was_empty = s.fifo.empty();
    s.fifo.push_back({&f, ready, ticket, f.wire_bytes()});
    if (ready > m_last_ready) m_last_ready = ready;
    if (s.bytes > s.peak_bytes) s.peak_bytes = s.bytes;
    // Without decay, port_busy() would only mark the port busy again, and the port_idle() that
    // must come before the next arrival at an empty port resets that anyway.
    if (port_was_empty && m_mq && ready >= m_decay_from) m_mq->port_busy(ready);
    // The port is otherwise empty and the wire free when the frame is out of the pipeline:
    // start it then, with no wake-up. Ungated, it is the only frame the scheduler could pick;
    // serve_alone() then does the scheduler's bookkeeping without the round robin.
    const bool idle = port_was_empty && m_busy_until <= ready;
    const bool alone =
        idle && !m_gated &&
        (!m_use_sched || f.wire_bytes() <= m_alone_bytes || (m_strict_mask >> q & 1));
    if (was_empty) {
        m_backlogged |= static_cast<std::uint8_t>(1u << q);
        if (m_use_sched && !alone) m_sched.backlogged(q, ready);
    }
    if (alone) return &start(q, ready, true);
    if (idle) {
        if (m_starts_at_time) return nullptr;  // the owner's wake-up at `ready` decides
        if (frame* started = try_start(ready)) return started;
    }
    m_waited[q]++;
    return nullptr;
}

inline ps_t egress_queues::next_start(ps_t wire_free) const {
    if (!m_gated && m_last_ready <= wire_free) return wire_free;  // every head is out by then
    ps_t next = egress_gate::UNTIL_TOLD;
    for (unsigned bits = m_backlogged; bits; bits &= bits - 1) {
        const unsigned q = static_cast<unsigned>(__builtin_ctz(bits));
        const entry& head = m_queue[q].fifo.front();
        ps_t t = std::max(wire_free, head.ready);
        if (m_gated) {
            for (const egress_gate* g : m_gates)
                if (t != egress_gate::UNTIL_TOLD) t = g->open_at(q, head.wire, t);
        } else if (t == wire_free) {
            return t;  // cannot be beaten
        }
        next = std::min(next, t);
    }
    return next;
}

}  // namespace fabricsim::sw
