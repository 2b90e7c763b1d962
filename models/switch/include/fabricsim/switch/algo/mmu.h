#pragma once
/// Cell-based shared-buffer MMU of a switch chip (Broadcom XGS style; facts-mmu §1.1–1.5,
/// seed-000 §1.12): plain C++, no SystemC.
///
/// Accounting unit: cells. A frame takes ceil((bytes + cell_overhead) / cell_bytes) cells and
/// is charged twice, as two views of the same cells: ingress per (port, priority group) and
/// egress per (port, queue). Each PG and queue has a reserved minimum; cells above it are
/// "shared" and count against a service pool (0 = lossy, 1 = lossless). The shared part of a
/// PG or queue is limited by a static threshold or a dynamic one, T = alpha x free shared
/// cells of its pool (Choudhury–Hahne). Lossless PGs overflow into a per-PG headroom, backed by
/// one headroom pool (PFC, later, pauses the sender while headroom is in use).
///
/// Admission order (the first failing check names the drop cause):
///  1. global: every cell of the buffer in use -> shared_buffer_full.
///  2. ingress, lossy PG: reserve, else pool shared cells (ingress_pool_full), else the PG's
///     shared threshold (ingress_pg_limit).
///     ingress, lossless PG: as lossy while no headroom is in use and the checks pass; else
///     the frame goes to headroom: PG headroom limit (headroom_pg_full), then the headroom
///     pool (headroom_pool_full). Once a PG uses headroom, arrivals go to headroom until it
///     drains (ns3-datacenter "sonic" model).
///  3. egress, lossy queue: reserve, else pool shared cells (egress_pool_full), else the
///     queue's shared threshold (egress_queue_limit). Lossless queues skip the egress
///     thresholds (vendor set-ups give them a static limit as large as the pool: they are held
///     back by PFC at ingress, never dropped at egress).
///  4. egress port cap (static, bytes or frames; optional) -> port_cap.
/// Threshold test: "fit" (default, as the ns-2/ns-3 models) admits if shared + s <= T;
/// "cross" (CH1, "last packet accept") admits while shared < T, so the crossing frame enters.
/// Release (when the frame's first bit leaves): ingress headroom first, then the PG; egress
/// queue. Dynamic thresholds use the free cells at the moment of the decision.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "fabricsim/core/stats.h"
#include "fabricsim/core/units.h"

namespace fabricsim::sw {

constexpr unsigned MAX_QUEUES = 8;
constexpr unsigned PRIORITY_GROUPS = 8;
constexpr unsigned LOSSY_POOL = 0;
constexpr unsigned LOSSLESS_POOL = 1;
constexpr unsigned SERVICE_POOLS = 2;

/// Static (cells) or dynamic (alpha x free shared cells of the pool) limit on shared cells.
struct threshold_spec {
    bool dynamic = true;
    double alpha = 8.0;
    std::uint64_t static_cells = 0;
};

struct mmu_config {
    std::uint32_t cell_bytes = 208;
    std::uint32_t cell_overhead_bytes = 0;  ///< per-frame header stored with the frame
    std::uint64_t total_cells = 0;
    unsigned ports = 0;
    unsigned queues = 8;                    ///< egress queues per port (1..8)
    std::uint64_t lossless_pool_cells = 0;  ///< shared cells of the lossless pool
    std::uint64_t headroom_pool_cells = 0;  ///< cells all PG headrooms draw from
    bool accept_crossing = false;           ///< "cross" threshold test instead of "fit"
    struct pg_params {
        std::uint64_t min_cells = 0;
        threshold_spec shared{true, 8.0, 0};
        std::uint64_t headroom_cells = 0;
        bool lossless = false;
    };
    std::array<pg_params, PRIORITY_GROUPS> pg{};
    struct queue_params {
        std::uint64_t min_cells = 0;
        threshold_spec shared{true, 8.0, 0};
        bool lossless = false;
    };
    std::array<queue_params, MAX_QUEUES> queue{};
    size_spec port_cap{0, false};  ///< 0 = no static per-port limit (bytes or frames)

    /// Cells left for the lossy pool's shared part: total minus every reserve, the lossless
    /// pool and the headroom pool (0 if they do not fit; validate() reports that).
    std::uint64_t lossy_pool_cells() const;
    std::uint64_t reserved_cells() const;
    /// Empty if consistent, else the reason (the config loader turns it into a key error).
    std::string validate() const;
};

/// Where a frame's cells were charged; kept with the frame until it is released.
struct mmu_ticket {
    std::uint16_t cells = 0;
    std::uint16_t in_port = 0;
    std::uint16_t out_port = 0;
    std::uint8_t pg = 0;
    std::uint8_t queue = 0;
};

class mmu
{
public:
    explicit mmu(const mmu_config& cfg);

    /// ceil((bytes + overhead) / cell), by a multiply: m = ceil(2^32 / cell) is exact for the
    /// numerators a frame can give (< 2^20 / cell error bound; checked by a unit test).
    std::uint32_t cells_for(std::uint32_t bytes) const {
        const std::uint64_t n =
            std::uint64_t(bytes) + m_hot.cell_overhead_bytes + m_hot.cell_bytes - 1;
        return static_cast<std::uint32_t>((n * m_hot.cell_reciprocal) >> 32);
    }
    /// Admits a frame of `bytes` (frame bytes incl. FCS) or returns false with the cause.
    bool admit(unsigned in_port, unsigned pg, unsigned out_port, unsigned queue,
               std::uint32_t bytes, mmu_ticket& ticket, drop_cause& why);
    void release(const mmu_ticket& t);

    /// Current limit on the shared cells of an egress queue / ingress PG (dynamic: from the
    /// pool's free cells now).
    std::uint64_t queue_limit_cells(unsigned queue) const;
    std::uint64_t pg_limit_cells(unsigned pg) const;

    struct occupancy {
        std::uint64_t cells = 0;
        std::uint64_t peak_cells = 0;
    };
    const mmu_config& config() const { return m_cfg; }
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
    std::uint64_t pool_cells(unsigned pool) const { return m_pool_cells[pool]; }

private:
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
    static std::uint64_t dynamic_limit(double alpha, std::uint64_t pool_cells,
                                       std::uint64_t pool_used) {
        const std::uint64_t free = pool_cells > pool_used ? pool_cells - pool_used : 0;
        return static_cast<std::uint64_t>(alpha * double(free));  // >= 0: truncation is floor
    }
    /// The plain path's dynamic limit (lossy pool).
    std::uint64_t dynamic_limit(double alpha, std::uint64_t used) const {
        return dynamic_limit(alpha, m_hot.lossy_pool_cells, used);
    }
    std::uint64_t limit(const threshold_spec& t, unsigned pool, std::uint64_t pool_used) const {
        return t.dynamic ? dynamic_limit(t.alpha, m_pool_cells[pool], pool_used) : t.static_cells;
    }
    bool exceeds(std::uint64_t shared_before, std::uint64_t shared_after,
                 std::uint64_t limit) const {
        return m_hot.accept_crossing ? shared_before >= limit && shared_after > shared_before
                                     : shared_after > limit;
    }

    bool admit_plain(unsigned in_port, unsigned pg, unsigned out_port, unsigned queue,
                     std::uint32_t s, mmu_ticket& ticket, drop_cause& why);

    // What every admission and release reads, in one line; the thresholds of the plain path in
    // the next two (m_cfg is the full copy, read by the general path).
    struct hot_config {
        std::uint64_t total_cells = 0;
        std::uint64_t lossy_pool_cells = 0;
        std::uint64_t cell_reciprocal = 0;
        std::uint64_t port_cap = 0;  ///< 0 = none
        std::uint32_t cell_bytes = 0;
        std::uint32_t cell_overhead_bytes = 0;
        /// No reserved minimum and nothing lossless: every cell is a shared cell of the lossy
        /// pool, so both pool views equal m_used and admit()/release() skip the reserve,
        /// headroom and pool bookkeeping (the common data-center set-up; about half the work).
        bool plain = false;
        bool accept_crossing = false;
        bool port_cap_packets = false;
        std::uint8_t pg_dynamic = 0;     ///< bit g: PG g's shared threshold is dynamic
        std::uint8_t queue_dynamic = 0;  ///< bit q: queue q's shared threshold is dynamic
    };
    alignas(64) hot_config m_hot;
    alignas(64) std::array<double, PRIORITY_GROUPS> m_pg_alpha{};
    std::array<double, MAX_QUEUES> m_queue_alpha{};
    occupancy m_used;
    std::array<std::uint64_t, SERVICE_POOLS> m_pool_cells{};
    mmu_config m_cfg;
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
    };
    std::vector<port_accounts> m_ports;

    /// The optional static per-port cap (bytes or frames) would be exceeded by s more cells.
    bool over_port_cap(const port_accounts& out, std::uint64_t s) const {
        if (!m_hot.port_cap) return false;
        return m_hot.port_cap_packets ? std::uint64_t(out.frames) + 1 > m_hot.port_cap
                                      : (out.egress.cells + s) * m_hot.cell_bytes > m_hot.port_cap;
    }
};

}  // namespace fabricsim::sw
