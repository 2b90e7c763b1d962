#pragma once
/// One egress port of the switch: up to 8 queues, a scheduler (SP / WRR / DWRR, strict queues
/// above the group), port and queue token-bucket shapers, ECN/RED marking (per queue, port or
/// service pool; standard, minimum or MQ-ECN per-queue thresholds) and an optional HULL
/// phantom queue in series with the transmitter.
/// Timing model: the switch hands a frame over when it arrives, with the time `ready` it leaves
/// the pipeline (>= now). MMU admission and enqueue marking are decided then (the pipeline
/// latency is fixed, so frames reach a port in `ready` order). A frame that finds the port
/// empty, the wire free at `ready` and its shapers full starts at `ready` with no kernel event
/// (annotated on the link call). Otherwise one timer firing per queued frame, at the time the
/// wire frees, lets the scheduler pick among queues whose head is out of the pipeline and whose
/// shapers allow it; if none may send yet, the timer waits for the earliest one that will.
/// At the start of transmission the frame's cells are released, dequeue marking and the
/// phantom queue act, and MQ-ECN sees the round boundaries.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>

#include <systemc>

#include "fabricsim/core/eth_protocol.h"
#include "fabricsim/core/ring.h"
#include "fabricsim/core/rng.h"
#include "fabricsim/core/scheduler.h"
#include "fabricsim/core/stats.h"
#include "fabricsim/switch/algo/aqm.h"
#include "fabricsim/switch/algo/mmu.h"
#include "fabricsim/switch/algo/queue_scheduler.h"
#include "fabricsim/switch/algo/token_bucket.h"
#include "fabricsim/switch/switch_config.h"

namespace fabricsim::sw {

/// Frames and bytes queued in the switch per egress service pool (pool-scope ECN).
struct pool_backlog {
    std::array<std::uint64_t, SERVICE_POOLS> bytes{};
    std::array<std::uint64_t, SERVICE_POOLS> frames{};
};

class egress_port final : public sc_core::sc_module, private queue_view
{
public:
    egress_port(const sc_core::sc_module_name& name, unsigned index, const switch_config& cfg,
                mmu& buffer, pool_backlog& pools, std::uint64_t rate_bps, std::uint64_t seed);

    eth_tx_port tx{"tx"};

    /// Frame from ingress `in_port`, priority group `pg`, for queue `q`, out of the pipeline at
    /// `ready` (>= now). Takes ownership (drops are counted and the frame released).
    void accept(frame& f, unsigned in_port, unsigned pg, unsigned q, ps_t ready);
    /// Idle at `t`: nothing queued and the wire free (cut-through decisions use this).
    bool idle_at(ps_t t) const { return m_queued_frames == 0 && m_busy_until <= t; }
    std::uint64_t rate_bps() const { return m_rate_bps; }
    unsigned queues() const { return m_queues; }
    std::uint64_t queued_frames() const { return m_queued_frames; }
    std::uint64_t queued_bytes() const {
        std::uint64_t b = 0;
        for (unsigned q = 0; q < m_queues; ++q) b += m_queue[q].bytes;
        return b;
    }
    std::uint64_t queue_bytes(unsigned q) const { return m_queue[q].bytes; }

    struct queue_stats {
        std::uint64_t tx_frames = 0;
        std::uint64_t tx_bytes = 0;
        std::uint64_t waited = 0;  ///< frames that could not start when they left the pipeline
        std::uint64_t ce_marked =
            0;  ///< ECT frames this port set CE on (ECN/RED and phantom queue)
        std::uint64_t peak_bytes = 0;
    };
    queue_stats stats_of(unsigned q) const {
        const queue_state& s = m_queue[q];
        const queue_cold& c = m_cold[q];
        return {s.tx_frames, s.tx_bytes, m_waited[q], c.ce_marked, s.peak_bytes};
    }
    const drop_counters& drops_of(unsigned q) const { return m_cold[q].drops; }
    drop_counters drops() const;
    using scheduler_type = basic_queue_scheduler<mq_ecn_estimator>;
    const scheduler_type& scheduler() const { return m_sched; }
    /// Current ECN threshold scale of queue q (MQ-ECN / minimum; 1 = the configured threshold).
    double threshold_scale(unsigned q) const {
        switch (m_cfg.ecn.per_queue) {
            case queue_threshold::MINIMUM:
                return m_cold[q].min_scale;
            case queue_threshold::MQ_ECN:
                return (m_strict_mask >> q & 1) || !m_mq ? 1.0 : m_mq->scale(q);
            case queue_threshold::STANDARD:
                break;
        }
        return 1.0;
    }
    const mq_ecn_estimator* mq_ecn() const { return m_mq; }
    const phantom_queue* phantom() const { return m_phantom ? &*m_phantom : nullptr; }
    void report_stats(nlohmann::json& out) const;

private:
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
        ring<entry> fifo{4};
        std::uint64_t bytes =
            0;  ///< frame bytes queued (the arriving frame counts from its decision on)
        std::uint64_t tx_frames = 0;
        std::uint64_t tx_bytes = 0;
        std::uint64_t peak_bytes = 0;
        /// Step marking: with MQ-ECN the quantum's time at line rate (ps; +inf for a strict
        /// queue, which keeps the standard threshold), for mq_ecn_estimator::threshold_for();
        /// else the queue's threshold (K, or K x its minimum-threshold share).
        double ecn_param = 0;
    };
    static_assert(sizeof(queue_state) == 64, "one cache line per queue");
    struct queue_cold {
        std::uint64_t ce_marked = 0;
        double min_scale = 1.0;
        red_average avg;
        drop_counters drops{};
    };

    // queue_view: what the scheduler may serve at `now`. The scheduler's pick() is a template
    // instantiated on this final class, so these calls inline.
    template <class>
    friend class basic_queue_scheduler;
    bool eligible(unsigned q, ps_t now) const override {
        if (!(m_backlogged >> q & 1)) return false;
        const entry& head = m_queue[q].fifo.front();
        return head.ready <= now && (!m_shaped || m_shaper[q].unlimited() ||
                                     m_shaper[q].ready_at(head.wire, now) == now);
    }
    std::uint32_t head_bytes(unsigned q) const override { return m_queue[q].fifo.front().wire; }

    enum class ecn_action { PASS, MARK, DROP };
    ecn_action ecn_decision(unsigned q, const frame& f);
    /// Step marking's common case, inline: at or below m_pass_bound, ecn_decision() passes.
    bool quick_pass(const queue_state& s) const {
        return m_ecn_queue_step &&
               (m_ecn_packets ? double(s.fifo.size() + 1) : double(s.bytes)) <= m_pass_bound;
    }
    void on_wake();
    /// Picks and starts the next frame at `at` if one may go; returns whether one started.
    bool try_start(ps_t at, ps_t now);
    /// Starts the head of queue q at `at` (picked, or `alone`: see queue_scheduler::serve_alone).
    /// Always inlined into its two callers, the per-frame paths of accept() and on_wake().
    [[gnu::always_inline]] inline void start(unsigned q, ps_t at, ps_t now, bool alone);
    void arm_next(ps_t now);
    void drop(frame& f, unsigned q, drop_cause why);
    /// Frame and byte counts of queue q, the port and its service pool, in or out.
    unsigned pool_of(unsigned q) const {
        return m_lossless_mask >> q & 1 ? LOSSLESS_POOL : LOSSY_POOL;
    }
    void count_backlog(unsigned q, unsigned pool, std::uint32_t bytes, bool in) {
        // Defined here so the per-frame calls inline with `in` known.
        const std::uint64_t n = in ? 1 : ~std::uint64_t(0);  // +1 or -1, modulo 2^64
        const std::uint64_t b = in ? bytes : std::uint64_t(0) - bytes;
        m_queue[q].bytes += b;
        m_queued_frames += in ? 1u : ~0u;
        if (m_count_port_bytes) m_port_bytes += b;
        if (m_count_pools) {
            m_pools.bytes[pool] += b;
            m_pools.frames[pool] += n;
        }
    }
    void mark_ce(frame& f, unsigned q);
    /// m_pass_bound after T_round changed (MQ-ECN round samples).
    void refresh_pass_bound() { m_pass_bound = m_mq->min_threshold(); }

    // Members in order of access: the port's per-frame scalars share one line, then each
    // queue's line, then the scheduler (the MQ-ECN estimator is held further on: its first line
    // is what a frame uses); configuration copies, shapers, cold statistics and the RNG (2.5 kB)
    // last.
    alignas(64) ps_t m_busy_until = 0;
    mmu& m_mmu;
    mq_ecn_estimator* m_mq = nullptr;  ///< m_mq_state's estimator when MQ-ECN is on
    /// At most the step threshold of every marking queue now (with MQ-ECN, as of the last round
    /// sample: later idle decay only raises thresholds). An occupancy at or below it passes
    /// without the queue's threshold, so most decisions stay out of MQ-ECN's state.
    double m_pass_bound = 0;
    /// MQ-ECN: an arrival at the empty port from this time on decays T_round (the port went
    /// idle T_idle before); an earlier one would not, so port_busy() is skipped.
    ps_t m_decay_from = ~ps_t(0);
    /// `ready` of the last frame queued: frames reach the port in `ready` order, so no head
    /// leaves the pipeline later (arm_next() need not look at the heads once it has passed).
    ps_t m_last_ready = 0;
    std::uint32_t m_queued_frames = 0;
    std::uint16_t m_index;
    /// Largest wire size a frame reaching an empty port may have to be served alone (the smallest
    /// WRR/DWRR quantum, at most 65535; see queue_scheduler::serves_alone).
    std::uint16_t m_alone_bytes = 0xffff;
    std::uint8_t m_backlogged = 0;   ///< bit q: queue q holds frames
    std::uint8_t m_strict_mask = 0;  ///< strict-priority queues (they keep the standard threshold)
    // Per-queue flags from m_cfg, so the per-frame path does not reach into the switch config.
    std::uint8_t m_lossless_mask = 0;      ///< queues of the lossless service pool
    std::uint8_t m_mark_enqueue_mask = 0;  ///< ECN/RED decided at enqueue
    std::uint8_t m_mark_dequeue_mask = 0;  ///< ECN/RED decided at dequeue
    bool m_shaped : 1;          ///< any shaper configured (skips token arithmetic when not)
    bool m_use_sched : 1;       ///< false for a lone queue without MQ-ECN: plain FIFO
    bool m_ecn_queue_step : 1;  ///< per-queue step marking (DCTCP): ecn_decision's short path
    bool m_ecn_packets : 1;     ///< ECN thresholds count frames (else bytes)
    bool m_drop_non_ect : 1;    ///< a non-ECT frame above the threshold is dropped
    bool m_has_phantom : 1;
    bool m_count_pools : 1;       ///< pool-scope marking: keep m_pools up to date
    bool m_count_port_bytes : 1;  ///< port-scope marking: keep m_port_bytes up to date
    std::array<queue_state, MAX_QUEUES> m_queue;
    /// Frames per queue that could not start when they left the pipeline: one line for the port
    /// (a per-frame count, apart from the cold per-queue statistics).
    alignas(64) std::array<std::uint64_t, MAX_QUEUES> m_waited{};
    scheduler_type m_sched;
    model_timer m_wake = model_timer::bind<egress_port, &egress_port::on_wake>(this);
    std::optional<mq_ecn_estimator> m_mq_state;
    pool_backlog& m_pools;
    std::uint64_t m_port_bytes = 0;  ///< frame bytes queued in the port (port-scope marking only)
    const switch_config& m_cfg;
    std::optional<phantom_queue> m_phantom;
    std::array<token_bucket, MAX_QUEUES> m_shaper;
    token_bucket m_port_shaper;
    red_average m_port_avg;
    std::array<queue_cold, MAX_QUEUES> m_cold;
    unsigned m_queues;
    std::uint64_t m_rate_bps;
    rng m_rng;
};

}  // namespace fabricsim::sw
