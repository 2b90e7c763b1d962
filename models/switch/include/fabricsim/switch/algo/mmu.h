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
    unsigned queues = 8;                         ///< egress queues per port (1..8)
    std::uint64_t lossless_pool_cells = 0;       ///< shared cells of the lossless pool
    std::uint64_t headroom_pool_cells = 0;       ///< cells all PG headrooms draw from
    bool accept_crossing = false;                ///< "cross" threshold test instead of "fit"
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

class mmu {
public:
    explicit mmu(const mmu_config& cfg);

    /// ceil((bytes + overhead) / cell), by a multiply: m = ceil(2^32 / cell) is exact for the
    /// numerators a frame can give (< 2^20 / cell error bound; checked by a unit test).
    std::uint32_t cells_for(std::uint32_t bytes) const {
        const std::uint64_t n = std::uint64_t(bytes) + m_cfg.cell_overhead_bytes + m_cfg.cell_bytes - 1;
        return static_cast<std::uint32_t>((n * m_cell_reciprocal) >> 32);
    }
    /// Admits a frame of `bytes` (frame bytes incl. FCS) or returns false with the cause.
    bool admit(unsigned in_port, unsigned pg, unsigned out_port, unsigned queue, std::uint32_t bytes,
               mmu_ticket& ticket, drop_cause& why);
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
    const occupancy& queue_occupancy(unsigned port, unsigned q) const { return m_ports[port].queue[q]; }
    const occupancy& port_occupancy(unsigned port) const { return m_ports[port].egress; }
    std::uint64_t port_frames(unsigned port) const { return m_ports[port].frames; }
    const occupancy& pg_occupancy(unsigned port, unsigned pg) const { return m_ports[port].pg[pg]; }
    const occupancy& pg_headroom(unsigned port, unsigned pg) const { return m_ports[port].headroom[pg]; }
    /// Shared cells in use per service pool, as seen by ingress and by egress accounting.
    occupancy ingress_pool(unsigned pool) const {
        return m_plain && pool == LOSSY_POOL ? m_used : m_ingress_pool[pool];
    }
    occupancy egress_pool(unsigned pool) const {
        return m_plain && pool == LOSSY_POOL ? m_used : m_egress_pool[pool];
    }
    const occupancy& headroom_pool() const { return m_headroom; }
    std::uint64_t pool_cells(unsigned pool) const { return m_pool_cells[pool]; }

private:
    static std::uint64_t over(std::uint64_t cells, std::uint64_t min) { return cells > min ? cells - min : 0; }
    static void add(occupancy& o, std::uint64_t n) {
        o.cells += n;
        if (o.cells > o.peak_cells) o.peak_cells = o.cells;
    }
    std::uint64_t limit(const threshold_spec& t, unsigned pool, std::uint64_t pool_used) const {
        if (!t.dynamic) return t.static_cells;
        const std::uint64_t free = m_pool_cells[pool] > pool_used ? m_pool_cells[pool] - pool_used : 0;
        return static_cast<std::uint64_t>(t.alpha * double(free));  // >= 0: truncation is floor
    }
    bool exceeds(std::uint64_t shared_before, std::uint64_t shared_after, std::uint64_t limit) const {
        return m_cfg.accept_crossing ? shared_before >= limit && shared_after > shared_before
                                     : shared_after > limit;
    }

    bool admit_plain(unsigned in_port, unsigned pg, unsigned out_port, unsigned queue,
                     std::uint32_t s, mmu_ticket& ticket, drop_cause& why);

    mmu_config m_cfg;
    std::uint64_t m_cell_reciprocal;
    /// No reserved minimum and nothing lossless: every cell is a shared cell of the lossy pool,
    /// so both pool views equal m_used and admit()/release() skip the reserve, headroom and
    /// pool bookkeeping (the common data-center set-up; about half the work per frame).
    bool m_plain = false;
    std::array<std::uint64_t, SERVICE_POOLS> m_pool_cells{};
    occupancy m_used;
    occupancy m_headroom;
    std::array<occupancy, SERVICE_POOLS> m_ingress_pool{};
    std::array<occupancy, SERVICE_POOLS> m_egress_pool{};
    // One block per port, so a frame's ingress or egress accounting touches adjacent lines.
    struct port_accounts {
        occupancy egress;  ///< egress view of the whole port
        std::uint64_t frames = 0;
        std::array<occupancy, MAX_QUEUES> queue{};
        std::array<occupancy, PRIORITY_GROUPS> pg{};        ///< cells outside headroom
        std::array<occupancy, PRIORITY_GROUPS> headroom{};
    };
    std::vector<port_accounts> m_ports;

    /// The optional static per-port cap (bytes or frames) would be exceeded by s more cells.
    bool over_port_cap(const port_accounts& out, std::uint64_t s) const {
        if (!m_cfg.port_cap.value) return false;
        return m_cfg.port_cap.packets ? out.frames + 1 > m_cfg.port_cap.value
                                      : (out.egress.cells + s) * m_cfg.cell_bytes > m_cfg.port_cap.value;
    }
};

}  // namespace fabricsim::sw
