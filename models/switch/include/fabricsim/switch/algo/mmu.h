#pragma once
/// Cell-based shared-buffer MMU of a switch chip (Broadcom XGS style; facts-mmu §1.1–1.5,
/// seed-000 §1.12): plain C++, no SystemC.
///
/// Accounting unit: cells. A frame takes ceil((bytes + cell_overhead) / cell_bytes) cells and
/// is charged twice, as two views of the same cells: ingress per (port, priority group) and
/// egress per (port, queue). Each PG and queue has a reserved minimum; cells above it are
/// "shared" and count against its service pool (0..3; by default lossless PGs and queues use
/// pool 1, the others pool 0). Pools 1..3 have configured sizes; pool 0 has what the reserves,
/// those pools and the headroom pool leave. The shared part of a PG or queue is limited by a
/// static threshold or a dynamic one, T = alpha x free shared cells of its pool
/// (Choudhury–Hahne). Lossless PGs overflow into a per-PG headroom, backed by one headroom pool
/// (PFC, later, pauses the sender while headroom is in use).
///
/// Admission order (the first failing check names the drop cause):
///  1. global: every cell of the buffer in use -> shared_buffer_full.
///  2. ingress, lossy PG: reserve, else pool shared cells (ingress_pool_full), else the PG's
///     shared threshold (ingress_pg_limit).
///     ingress, lossless PG: as lossy while no headroom is in use and the checks pass; else
///     the frame goes to headroom: PG headroom limit, then the headroom pool (either full:
///     headroom_exhausted). Once a PG uses headroom, arrivals go to headroom until it drains
///     (ns3-datacenter "sonic" model).
///  3. egress, lossy queue: reserve, else pool shared cells (egress_pool_full), else the
///     queue's shared threshold (egress_queue_limit). Lossless queues skip the egress
///     thresholds (vendor set-ups give them a static limit as large as the pool: they are held
///     back by PFC at ingress, never dropped at egress).
///  4. egress port cap (static, bytes or frames; optional; lossy queues only: a lossless queue
///     is held back by PFC) -> port_cap.
/// Threshold test: "fit" (default, as the ns-2/ns-3 models) admits if shared + s <= T;
/// "cross" (CH1, "last packet accept") admits while shared < T, so the crossing frame enters.
/// Release (when the frame's first bit leaves): ingress headroom first, then the PG; egress
/// queue. Dynamic thresholds use the free cells at the moment of the decision.
/// PFC generation (with a pg_flow_listener, facts-l2 §2.3, SAI semantics): a lossless PG goes
/// XOFF when an admitted frame leaves its shared cells at or above the threshold or goes to
/// headroom; it goes XON, checked when its own cells leave (as HPCC's and ns-3's switch MMUs),
/// once its headroom is empty and its total (reserve + shared) is at or below
/// max(xon, min + threshold - xon_offset).
/// Partitions (Tomahawk XPEs, facts-mmu §1.3; `partitions` > 1): the buffer is split into
/// equal slices, each an MMU of its own with the configured reserves, thresholds and headroom
/// (its pools and headroom pool are the chip's divided by the count). A frame is charged to
/// the slice its (ingress pipeline, egress pipeline) pair maps to, so its DT threshold uses
/// that slice's free cells; a lossless PG is in XOFF while any slice holds it there. The
/// chip-wide counts (used_cells(), queue/PG/pool occupancy) are the slices' sums.
/// Timing model: none; decisions are untimed, made when the switch hands a frame to its port.
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fabricsim/core/stats.h"
#include "fabricsim/core/units.h"

namespace fabricsim::sw {

constexpr unsigned MAX_QUEUES = 8;
constexpr unsigned PRIORITY_GROUPS = 8;
constexpr unsigned LOSSY_POOL = 0;     ///< pool 0: what the other pools leave
constexpr unsigned LOSSLESS_POOL = 1;  ///< the default pool of lossless PGs and queues
constexpr unsigned SERVICE_POOLS = 4;  ///< as the 4 ingress and 4 egress pools of XGS chips
/// pg_params/queue_params::pool: the default rule, pool 1 if lossless, else pool 0.
constexpr std::uint8_t POOL_BY_LOSSLESS = 0xff;

/// Static (cells) or dynamic (alpha x free shared cells of the pool) limit on shared cells.
struct threshold_spec {
    bool dynamic = true;
    double alpha = 8.0;
    std::uint64_t static_cells = 0;
};

/// Parameters of one chip's MMU (switch_config::mmu_for fills total_cells and ports).
struct mmu_config {
    std::uint32_t cell_bytes = 208;
    std::uint32_t cell_overhead_bytes = 0;  ///< per-frame header stored with the frame
    std::uint64_t total_cells = 0;
    unsigned ports = 0;
    unsigned queues = 8;  ///< egress queues per port (1..8)
    /// Shared cells of service pools 1..3 (pool 1: `mmu.lossless_pool`); [0] is unused, pool 0
    /// gets what is left (lossy_pool_cells()).
    std::array<std::uint64_t, SERVICE_POOLS> pool_cells{};
    std::uint64_t headroom_pool_cells = 0;  ///< cells all PG headrooms draw from
    bool accept_crossing = false;           ///< "cross" threshold test instead of "fit"
    struct pg_params {
        std::uint64_t min_cells = 0;
        threshold_spec shared{true, 8.0, 0};
        std::uint64_t headroom_cells = 0;
        std::uint64_t xon_cells = 0;         ///< XON_TH: absolute XON floor (PFC generation)
        std::uint64_t xon_offset_cells = 0;  ///< XON_OFFSET_TH: hysteresis below the limit
        bool lossless = false;
        std::uint8_t pool = POOL_BY_LOSSLESS;
        unsigned service_pool() const { return pool_of(pool, lossless); }
    };
    std::array<pg_params, PRIORITY_GROUPS> pg{};
    struct queue_params {
        std::uint64_t min_cells = 0;
        threshold_spec shared{true, 8.0, 0};
        bool lossless = false;
        std::uint8_t pool = POOL_BY_LOSSLESS;
        unsigned service_pool() const { return pool_of(pool, lossless); }
    };
    std::array<queue_params, MAX_QUEUES> queue{};
    size_spec port_cap{0, false};  ///< 0 = no static per-port limit (bytes or frames)
    /// Buffer partitions (1: one shared buffer). With more, partition_map[i * pipes + e] is the
    /// partition of a frame from ingress pipeline i to egress pipeline e, and port_pipe[p] the
    /// pipeline of port p (switch_config::mmu_for fills both from switch.pipeline).
    unsigned partitions = 1;
    unsigned pipes = 1;
    std::vector<std::uint8_t> partition_map;
    std::vector<std::uint16_t> port_pipe;
    /// Cell write / read bandwidth of each partition (cell_bandwidth.h; the switch models them,
    /// not the mmu); 0: unlimited.
    double write_cells_per_cycle = 0;
    double read_cells_per_cycle = 0;

    /// One partition's MMU: this one with a partitions-th of the buffer, pools and headroom
    /// pool; reserves, thresholds and PG headroom as configured (they are per slice on a chip).
    mmu_config partition_config() const;
    /// Cells of pool 0's shared part: total minus every reserve, pools 1..3 and the headroom
    /// pool (0 if they do not fit; validate() reports that).
    std::uint64_t lossy_pool_cells() const;
    std::uint64_t reserved_cells() const;
    /// Empty if consistent, else the reason (the config loader turns it into a key error).
    std::string validate() const;

private:
    static unsigned pool_of(std::uint8_t pool, bool lossless) {
        return pool != POOL_BY_LOSSLESS ? pool : lossless ? LOSSLESS_POOL : LOSSY_POOL;
    }
};

/// Told when a lossless PG crosses its XOFF point or falls back to its XON point (the switch
/// sends PFC/PAUSE); called from inside admit()/release().
class pg_flow_listener
{
public:
    virtual ~pg_flow_listener() = default;
    virtual void pg_xoff(unsigned port, unsigned pg) = 0;
    virtual void pg_xon(unsigned port, unsigned pg) = 0;
};

/// Where a frame's cells were charged; kept with the frame until it is released.
struct mmu_ticket {
    std::uint16_t cells = 0;
    std::uint16_t in_port = 0;
    std::uint16_t out_port = 0;
    std::uint8_t pg = 0;
    std::uint8_t queue = 0;
};

/// The MMU of one switch: admission, release and occupancy (see the top of this file).
class mmu
{
public:
    /// Throws std::invalid_argument with cfg.validate()'s reason.
    explicit mmu(const mmu_config& cfg);
    // Partitions report to this object (m_part_flow): it must stay where it was built.
    mmu(const mmu&) = delete;
    mmu& operator=(const mmu&) = delete;

    /// ceil((bytes + overhead) / cell), by a multiply: m = ceil(2^32 / cell) is exact for the
    /// numerators a frame can give (< 2^20 / cell error bound; checked by a unit test).
    std::uint32_t cells_for(std::uint32_t bytes) const {
        const std::uint64_t n =
            std::uint64_t(bytes) + m_hot.cell_overhead_bytes + m_hot.cell_bytes - 1;
        return static_cast<std::uint32_t>((n * m_hot.cell_reciprocal) >> 32);
    }
    /// Admits a frame of `bytes` (frame bytes incl. FCS) or returns false with the cause.
    /// Inline, with the plain path: both join the switch's per-frame receive path (forced:
    /// GCC's budget otherwise moves them out when an unrelated caller of the path appears).
    [[gnu::always_inline]] bool admit(unsigned in_port, unsigned pg, unsigned out_port,
                                      unsigned queue, std::uint32_t bytes, mmu_ticket& ticket,
                                      drop_cause& why) {
        const std::uint32_t s = cells_for(bytes);
        if (m_hot.plain) return admit_plain(in_port, pg, out_port, queue, s, ticket, why);
        return admit_general(in_port, pg, out_port, queue, s, ticket, why);
    }
    void release(const mmu_ticket& t) {
        if (!m_hot.plain) return release_general(t);
        release_plain(t);
    }

    /// Current limit on the shared cells of an egress queue / ingress PG (dynamic: from the
    /// pool's free cells now).
    std::uint64_t queue_limit_cells(unsigned queue) const;
    std::uint64_t pg_limit_cells(unsigned pg) const;
    /// Service pool of an egress queue / ingress PG.
    unsigned queue_pool(unsigned queue) const { return m_queue[queue].pool; }
    unsigned pg_pool(unsigned pg) const { return m_pg[pg].pool; }

    struct occupancy {
        std::uint64_t cells = 0;
        std::uint64_t peak_cells = 0;
    };
    std::uint32_t cell_bytes() const { return m_hot.cell_bytes; }
    std::uint64_t total_cells() const { return m_hot.total_cells; }
    std::uint64_t used_cells() const { return m_used.cells; }
    std::uint64_t peak_cells() const { return m_used.peak_cells; }
    occupancy queue_occupancy(unsigned port, unsigned q) const { return m_ports[port].queue[q]; }
    occupancy port_occupancy(unsigned port) const { return m_ports[port].egress; }
    std::uint64_t port_frames(unsigned port) const { return m_ports[port].frames; }
    occupancy pg_occupancy(unsigned port, unsigned pg) const { return m_ports[port].pg[pg]; }
    occupancy pg_headroom(unsigned port, unsigned pg) const { return m_ports[port].headroom[pg]; }
    /// Shared cells in use per service pool, as seen by ingress and by egress accounting.
    occupancy ingress_pool(unsigned pool) const {
        return m_hot.plain && pool == LOSSY_POOL ? m_used : m_ingress_pool[pool];
    }
    occupancy egress_pool(unsigned pool) const {
        return m_hot.plain && pool == LOSSY_POOL ? m_used : m_egress_pool[pool];
    }
    const occupancy& headroom_pool() const { return m_headroom; }
    std::uint64_t headroom_pool_cells() const { return m_hot.headroom_pool_cells; }
    std::uint64_t pool_cells(unsigned pool) const { return m_hot.pool_cells[pool]; }

    /// Lossless PGs report XOFF/XON to `l` (nullptr: no PFC generation, no check).
    void set_flow_listener(pg_flow_listener* l);
    /// PGs of `port` in XOFF (bit g).
    std::uint8_t xoff_pgs(unsigned port) const { return m_ports[port].xoff_pgs; }
    /// Headroom of lossless PG `pg` at ingress `port` (default: the PG's headroom_cells).
    void set_pg_headroom(unsigned port, unsigned pg, std::uint64_t cells);
    std::uint32_t pg_headroom_limit(unsigned port, unsigned pg) const {
        return m_ports[port].headroom_limit[pg];
    }
    /// Lossless PGs of `port` whose arrivals are dropped as pfc_watchdog (bit g).
    void set_watchdog_drop(unsigned port, std::uint8_t pgs) {
        m_ports[port].watchdog_drop = pgs;
        for (auto& part : m_parts) part->set_watchdog_drop(port, pgs);
    }
    /// The XON point of `pg` now (cells of the PG's total, reserve included).
    std::uint64_t pg_xon_cells(unsigned pg) const;
    bool pg_lossless(unsigned pg) const { return m_pg[pg].lossless; }
    bool queue_lossless(unsigned queue) const { return m_queue[queue].lossless; }

    /// Buffer partitions: 1, or the slices of a partitioned buffer.
    unsigned partitions() const { return m_parts.empty() ? 1 : unsigned(m_parts.size()); }
    /// Partition that a frame from `in_port` to `out_port` is charged to.
    unsigned partition_of(unsigned in_port, unsigned out_port) const {
        return m_parts.empty() ? 0 : m_part_map[m_pipe_of[in_port] * m_pipes + m_pipe_of[out_port]];
    }
    /// Partition k's own MMU (k < partitions(); itself when not partitioned).
    const mmu& partition(unsigned k) const { return m_parts.empty() ? *this : *m_parts[k]; }

    /// Recomputes every counter (buffer, ports, queues, PGs with their headroom, pools) from the
    /// tickets of the frames held: empty if each equals its sum, else the first that does not
    /// (invariants.h). A counter that went below zero wraps and fails the same way.
    std::string audit(const std::vector<mmu_ticket>& held) const;

private:
    /// What both admission paths and the limit queries read of one PG or queue: the only copy
    /// of its thresholds in the MMU. A threshold is static_cells + alpha x free cells of the
    /// pool: a static one has alpha 0, a dynamic one static_cells 0 (no branch on the kind).
    struct alignas(32) share_limits {
        double alpha = 0;
        std::uint32_t static_cells = 0;  ///< at most 2^32 - 1, above any buffer (validate())
        std::uint32_t min_cells = 0;
        std::uint32_t headroom_cells = 0;  ///< PGs only
        std::uint8_t pool = LOSSY_POOL;
        bool lossless = false;
        std::uint32_t xon_cells = 0;  ///< PGs only (PFC generation)
        std::uint32_t xon_offset_cells = 0;
    };
    static_assert(sizeof(share_limits) == 32, "a PG's or queue's entry is 32 bytes");
    enum class share_verdict : std::uint8_t { FITS, POOL_FULL, OVER_LIMIT };

    static std::uint64_t over(std::uint64_t cells, std::uint64_t min) {
        return cells > min ? cells - min : 0;
    }
    static void add(occupancy& o, std::uint64_t n) {
        o.cells += n;
        if (o.cells > o.peak_cells) o.peak_cells = o.cells;
    }
    /// Per-port counts in 32 bits (validate() keeps the buffer below 2^32 cells), so a port's
    /// egress view and six of its queues share one cache line.
    struct count {
        std::uint32_t cells = 0;
        std::uint32_t peak_cells = 0;
        operator occupancy() const { return {cells, peak_cells}; }
    };
    static void add(count& o, std::uint64_t n) {
        o.cells += static_cast<std::uint32_t>(n);
        if (o.cells > o.peak_cells) o.peak_cells = o.cells;
    }

    // The checks, shared by admit() and admit_plain(); inline, each a few instructions.
    /// 1. Global: `used` + s cells would not fit in the buffer.
    bool buffer_full(std::uint64_t used, std::uint64_t s, drop_cause& why) const {
        if (used + s <= m_hot.total_cells) return false;
        why = drop_cause::SHARED_BUFFER_FULL;
        return true;
    }
    /// `l`'s threshold now, its pool of `pool_size` shared cells having `pool_used` in use.
    static std::uint64_t limit(const share_limits& l, std::uint64_t pool_size,
                               std::uint64_t pool_used) {
        const std::uint64_t free = pool_size > pool_used ? pool_size - pool_used : 0;
        // >= 0: truncation is floor.
        return l.static_cells + static_cast<std::uint64_t>(l.alpha * double(free));
    }
    bool exceeds(std::uint64_t shared_before, std::uint64_t shared_after,
                 std::uint64_t limit) const {
        return m_hot.accept_crossing ? shared_before >= limit && shared_after > shared_before
                                     : shared_after > limit;
    }
    /// A pool of `pool_size` shared cells, `pool_used` in use, has no room for `more`.
    static bool pool_full(std::uint64_t pool_used, std::uint64_t more, std::uint64_t pool_size) {
        return pool_used + more > pool_size;
    }
    /// `l`'s shared cells going from `before` to `after` would pass its threshold.
    bool over_limit(const share_limits& l, std::uint64_t before, std::uint64_t after,
                    std::uint64_t pool_used, std::uint64_t pool_size) const {
        return exceeds(before, after, limit(l, pool_size, pool_used));
    }
    /// May `l`'s shared cells grow from `before` to `after`? Room in its pool first, then its
    /// threshold.
    share_verdict check_share(const share_limits& l, std::uint64_t before, std::uint64_t after,
                              std::uint64_t pool_used, std::uint64_t pool_size) const {
        if (pool_full(pool_used, after - before, pool_size)) return share_verdict::POOL_FULL;
        if (over_limit(l, before, after, pool_used, pool_size)) return share_verdict::OVER_LIMIT;
        return share_verdict::FITS;
    }
    /// The drop a failed check_share() names on each side.
    static drop_cause ingress_cause(share_verdict v) {
        return v == share_verdict::POOL_FULL ? drop_cause::INGRESS_POOL_FULL
                                             : drop_cause::INGRESS_PG_LIMIT;
    }
    static drop_cause egress_cause(share_verdict v) {
        return v == share_verdict::POOL_FULL ? drop_cause::EGRESS_POOL_FULL
                                             : drop_cause::EGRESS_QUEUE_LIMIT;
    }

    /// admit() with no reserves, nothing lossless and only pool 0: the same checks in the same
    /// order, with shared = occupancy and both pool views = m_used. So the pool is checked once:
    /// the egress pool check can only fail where the ingress one already did.
    [[gnu::always_inline]] bool admit_plain(unsigned in_port, unsigned pg, unsigned out_port,
                                            unsigned queue, std::uint32_t s, mmu_ticket& ticket,
                                            drop_cause& why) {
        const std::uint64_t used = m_used.cells;
        const std::uint64_t pool = m_hot.pool_cells[LOSSY_POOL];
        if (buffer_full(used, s, why)) return false;
        if (pool_full(used, s, pool)) {
            why = drop_cause::INGRESS_POOL_FULL;
            return false;
        }
        count& pgo = m_ports[in_port].pg[pg];
        if (over_limit(m_pg[pg], pgo.cells, pgo.cells + s, used, pool)) {
            why = drop_cause::INGRESS_PG_LIMIT;
            return false;
        }
        port_accounts& out = m_ports[out_port];
        count& qo = out.queue[queue];
        if (over_limit(m_queue[queue], qo.cells, qo.cells + s, used, pool)) {
            why = drop_cause::EGRESS_QUEUE_LIMIT;
            return false;
        }
        if (over_port_cap(out, s)) {
            why = drop_cause::PORT_CAP;
            return false;
        }
        add(pgo, s);
        charge(out, qo, s, in_port, pg, out_port, queue, ticket);
        return true;
    }
    /// release() of a plain MMU.
    void release_plain(const mmu_ticket& t) {
        m_used.cells -= t.cells;
        m_ports[t.in_port].pg[t.pg].cells -= t.cells;
        port_accounts& out = m_ports[t.out_port];
        out.queue[t.queue].cells -= t.cells;
        out.egress.cells -= t.cells;
        out.frames--;
    }

    /// Reserves, lossless PGs/queues with headroom, pools 1..3 (mmu.cpp).
    bool admit_general(unsigned in_port, unsigned pg, unsigned out_port, unsigned queue,
                       std::uint64_t s, mmu_ticket& ticket, drop_cause& why);
    void release_general(const mmu_ticket& t);
    /// Partitioned: the frame's slice decides; this MMU keeps the chip-wide sums. Out of line
    /// and not through admit()/release(), so those stay non-recursive (and inlined).
    [[gnu::noinline]] bool admit_partitioned(unsigned in_port, unsigned pg, unsigned out_port,
                                             unsigned queue, std::uint64_t s, mmu_ticket& ticket,
                                             drop_cause& why);
    [[gnu::noinline]] void release_partitioned(const mmu_ticket& t);
    /// The chip-wide PG, headroom and pool counts that a frame of (in_port, pg, queue) moved,
    /// summed again over the slices.
    void sum_partitions(unsigned in_port, unsigned pg, unsigned queue);
    std::string audit_partitions(const std::vector<mmu_ticket>& held) const;

    // What every admission and release reads, in one line: sizes, cell arithmetic, port cap.
    struct hot_config {
        std::uint64_t cell_reciprocal = 0;
        std::uint64_t port_cap = 0;  ///< 0 = none
        /// Shared cells per service pool (pool 0: what the reserves and other pools leave).
        std::array<std::uint32_t, SERVICE_POOLS> pool_cells{};
        std::uint32_t total_cells = 0;
        std::uint32_t headroom_pool_cells = 0;
        std::uint32_t cell_bytes = 0;
        std::uint32_t cell_overhead_bytes = 0;
        /// No reserved minimum, nothing lossless and every PG and queue in pool 0: every cell
        /// is a shared cell of pool 0, so both pool views equal m_used and admit()/release()
        /// skip the reserve, headroom and pool bookkeeping (the common data-center set-up;
        /// about half the work).
        bool plain = false;
        bool accept_crossing = false;
        bool port_cap_packets = false;
    };
    static_assert(sizeof(hot_config) <= 64, "one cache line");
    alignas(64) hot_config m_hot;
    // A frame reads one PG and one queue entry (32 B each).
    alignas(64) std::array<share_limits, PRIORITY_GROUPS> m_pg{};
    std::array<share_limits, MAX_QUEUES> m_queue{};
    occupancy m_used;
    occupancy m_headroom;
    std::array<occupancy, SERVICE_POOLS> m_ingress_pool{};
    std::array<occupancy, SERVICE_POOLS> m_egress_pool{};
    // One block per port: its egress view with queues 0-5 in the first line, so a frame's egress
    // accounting touches one line for most queues.
    struct alignas(64) port_accounts {
        count egress;  ///< egress view of the whole port
        std::uint32_t frames = 0;
        std::uint32_t unused = 0;  // queue[0] starts at byte 16
        std::array<count, MAX_QUEUES> queue{};
        std::array<count, PRIORITY_GROUPS> pg{};  ///< cells outside headroom
        std::array<count, PRIORITY_GROUPS> headroom{};
        std::array<std::uint32_t, PRIORITY_GROUPS> headroom_limit{};  ///< lossless PGs' headroom
        std::uint8_t xoff_pgs = 0;       ///< PFC generation: PGs in XOFF
        std::uint8_t watchdog_drop = 0;  ///< PFC watchdog: lossless PGs whose arrivals drop
    };
    std::vector<port_accounts> m_ports;
    pg_flow_listener* m_listener = nullptr;

    /// A partitioned buffer's slices, empty if not partitioned.
    std::vector<std::unique_ptr<mmu>> m_parts;
    std::vector<std::uint8_t> m_part_map;  ///< [ingress pipe * m_pipes + egress pipe]
    std::vector<std::uint16_t> m_pipe_of;  ///< pipeline of each port
    unsigned m_pipes = 1;
    /// The slices' XOFF/XON, merged: a PG is in XOFF while any slice holds it there.
    struct partition_flow final : pg_flow_listener {
        mmu* chip = nullptr;
        void pg_xoff(unsigned port, unsigned pg) override;
        void pg_xon(unsigned port, unsigned pg) override;
    } m_part_flow;

    /// 4. The optional static per-port cap (bytes or frames) would be exceeded by s more cells.
    bool over_port_cap(const port_accounts& out, std::uint64_t s) const {
        if (!m_hot.port_cap) return false;
        return m_hot.port_cap_packets ? std::uint64_t(out.frames) + 1 > m_hot.port_cap
                                      : (out.egress.cells + s) * m_hot.cell_bytes > m_hot.port_cap;
    }
    /// Charges s cells to the buffer, queue `qo` and port `out` (the egress view; the ingress
    /// view is the caller's) and fills the ticket.
    void charge(port_accounts& out, count& qo, std::uint64_t s, unsigned in_port, unsigned pg,
                unsigned out_port, unsigned queue, mmu_ticket& ticket) {
        add(m_used, s);
        add(qo, s);
        add(out.egress, s);
        out.frames++;
        ticket.cells = static_cast<std::uint16_t>(s);
        ticket.in_port = static_cast<std::uint16_t>(in_port);
        ticket.out_port = static_cast<std::uint16_t>(out_port);
        ticket.pg = static_cast<std::uint8_t>(pg);
        ticket.queue = static_cast<std::uint8_t>(queue);
    }
};

}  // namespace fabricsim::sw
