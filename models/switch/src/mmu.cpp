#include "fabricsim/switch/algo/mmu.h"

#include <algorithm>
#include <stdexcept>

namespace fabricsim::sw {

std::uint64_t mmu_config::reserved_cells() const {
    // A reserved cell is charged to both views (its PG and its queue), so a port needs the
    // larger of its ingress and egress reserves, not their sum (as ns2-flexpass sizes pools).
    std::uint64_t pg_min = 0, queue_min = 0;
    for (const auto& p : pg) pg_min += p.min_cells;
    for (unsigned q = 0; q < queues; ++q) queue_min += queue[q].min_cells;
    return std::uint64_t(ports) * std::max(pg_min, queue_min);
}

namespace {
std::uint64_t sized_pools(const mmu_config& c) {
    std::uint64_t n = 0;
    for (unsigned p = 1; p < SERVICE_POOLS; ++p) n += c.pool_cells[p];
    return n;
}
}  // namespace

std::uint64_t mmu_config::lossy_pool_cells() const {
    const std::uint64_t taken = reserved_cells() + sized_pools(*this) + headroom_pool_cells;
    return taken < total_cells ? total_cells - taken : 0;
}

mmu_config mmu_config::partition_config() const {
    mmu_config c = *this;
    c.partitions = 1;
    c.partition_map.clear();
    c.port_pipe.clear();
    c.total_cells = total_cells / partitions;
    for (auto& p : c.pool_cells) p /= partitions;
    c.headroom_pool_cells = headroom_pool_cells / partitions;
    return c;
}

std::string mmu_config::validate() const {
    if (cell_bytes == 0) return "cell size must be positive";
    if (partitions == 0 || partitions > 64) return "partitions must be 1..64";
    if (partitions > 1) {
        if (partition_map.size() != std::size_t(pipes) * pipes)
            return "the partition map has " + std::to_string(partition_map.size()) + " entries; " +
                   std::to_string(pipes) + " pipelines need " + std::to_string(pipes) + " x " +
                   std::to_string(pipes);
        for (const std::uint8_t k : partition_map)
            if (k >= partitions)
                return "the partition map names partition " + std::to_string(k) + " of " +
                       std::to_string(partitions);
        if (port_pipe.size() != ports) return "the port-to-pipeline map does not cover the ports";
        for (const std::uint16_t p : port_pipe)
            if (p >= pipes) return "a port's pipeline is out of range";
        if (const std::string why = partition_config().validate(); !why.empty())
            return "each of the " + std::to_string(partitions) + " partitions: " + why;
    }
    if (total_cells == 0) return "the buffer holds no cell";
    if (total_cells > 0xffffffffu)
        return "the buffer has " + std::to_string(total_cells) +
               " cells, more than the model counts (2^32 - 1)";
    if (queues == 0 || queues > MAX_QUEUES) return "queues must be 1..8";
    if (reserved_cells() + sized_pools(*this) + headroom_pool_cells >= total_cells) {
        // Pools 2 and 3 are named only when used, so the message of a two-pool set-up is as before.
        std::string pools = "the lossless pool (" + std::to_string(pool_cells[LOSSLESS_POOL]) + ")";
        for (unsigned p = 2; p < SERVICE_POOLS; ++p)
            if (pool_cells[p])
                pools += ", pool " + std::to_string(p) + " (" + std::to_string(pool_cells[p]) + ")";
        return "reserves (" + std::to_string(reserved_cells()) + " cells), " + pools +
               " and the headroom pool (" + std::to_string(headroom_pool_cells) +
               ") leave no shared cell of the " + std::to_string(total_cells) +
               "-cell buffer for the lossy pool";
    }
    for (const auto& p : pg) {
        if (p.shared.dynamic && !(p.shared.alpha > 0)) return "a dynamic threshold needs alpha > 0";
        if (p.service_pool() >= SERVICE_POOLS) return "a PG's pool must be 0..3";
    }
    for (unsigned q = 0; q < MAX_QUEUES; ++q) {
        if (q < queues && queue[q].shared.dynamic && !(queue[q].shared.alpha > 0))
            return "a dynamic threshold needs alpha > 0";
        if (queue[q].service_pool() >= SERVICE_POOLS) return "a queue's pool must be 0..3";
    }
    return {};
}

namespace {
std::uint32_t clamp32(std::uint64_t v) {
    return static_cast<std::uint32_t>(std::min<std::uint64_t>(v, 0xffffffffu));
}
}  // namespace

mmu::mmu(const mmu_config& cfg) : m_ports(cfg.ports) {
    if (const std::string why = cfg.validate(); !why.empty()) throw std::invalid_argument(why);
    m_hot.total_cells = clamp32(cfg.total_cells);
    m_hot.pool_cells[LOSSY_POOL] = clamp32(cfg.lossy_pool_cells());
    for (unsigned p = 1; p < SERVICE_POOLS; ++p) m_hot.pool_cells[p] = clamp32(cfg.pool_cells[p]);
    m_hot.headroom_pool_cells = clamp32(cfg.headroom_pool_cells);
    m_hot.cell_reciprocal = ((std::uint64_t(1) << 32) + cfg.cell_bytes - 1) / cfg.cell_bytes;
    m_hot.port_cap = cfg.port_cap.value;
    m_hot.port_cap_packets = cfg.port_cap.packets;
    m_hot.cell_bytes = cfg.cell_bytes;
    m_hot.cell_overhead_bytes = cfg.cell_overhead_bytes;
    m_hot.accept_crossing = cfg.accept_crossing;
    // A static limit at or above the buffer never binds, so 2^32 - 1 stands for any larger one.
    auto limits = [](const threshold_spec& t, std::uint64_t min_cells, unsigned pool,
                     bool lossless) {
        share_limits l;
        l.alpha = t.dynamic ? t.alpha : 0.0;
        l.static_cells = t.dynamic ? 0 : clamp32(t.static_cells);
        l.min_cells = clamp32(min_cells);
        l.pool = static_cast<std::uint8_t>(pool);
        l.lossless = lossless;
        return l;
    };
    m_hot.plain = true;
    for (unsigned g = 0; g < PRIORITY_GROUPS; ++g) {
        const auto& p = cfg.pg[g];
        m_pg[g] = limits(p.shared, p.min_cells, p.service_pool(), p.lossless);
        m_pg[g].headroom_cells = p.lossless ? clamp32(p.headroom_cells) : 0;
        m_pg[g].xon_cells = clamp32(p.xon_cells);
        m_pg[g].xon_offset_cells = clamp32(p.xon_offset_cells);
        m_hot.plain = m_hot.plain && p.min_cells == 0 && !p.lossless && m_pg[g].pool == LOSSY_POOL;
    }
    for (auto& port : m_ports)
        for (unsigned g = 0; g < PRIORITY_GROUPS; ++g)
            port.headroom_limit[g] = m_pg[g].headroom_cells;
    for (unsigned q = 0; q < MAX_QUEUES; ++q) {
        const auto& qp = cfg.queue[q];
        m_queue[q] = limits(qp.shared, qp.min_cells, qp.service_pool(), qp.lossless);
        m_hot.plain =
            m_hot.plain && qp.min_cells == 0 && !qp.lossless && m_queue[q].pool == LOSSY_POOL;
    }
    m_part_flow.chip = this;
    if (cfg.partitions > 1) {
        // The slices decide; this MMU only sums them (admit_general() hands them the frame).
        m_hot.plain = false;
        const mmu_config part = cfg.partition_config();
        for (unsigned k = 0; k < cfg.partitions; ++k)
            m_parts.push_back(std::make_unique<mmu>(part));
        m_part_map = cfg.partition_map;
        m_pipe_of = cfg.port_pipe;
        m_pipes = cfg.pipes;
    }
}

void mmu::set_flow_listener(pg_flow_listener* l) {
    m_listener = l;
    for (auto& part : m_parts) part->set_flow_listener(l ? &m_part_flow : nullptr);
}

void mmu::partition_flow::pg_xoff(unsigned port, unsigned pg) {
    std::uint8_t& xoff = chip->m_ports[port].xoff_pgs;
    if (xoff >> pg & 1) return;  // another slice holds it in XOFF already
    xoff = static_cast<std::uint8_t>(xoff | 1u << pg);
    chip->m_listener->pg_xoff(port, pg);
}

void mmu::partition_flow::pg_xon(unsigned port, unsigned pg) {
    for (const auto& part : chip->m_parts)
        if (part->m_ports[port].xoff_pgs >> pg & 1) return;
    std::uint8_t& xoff = chip->m_ports[port].xoff_pgs;
    xoff = static_cast<std::uint8_t>(xoff & ~(1u << pg));
    chip->m_listener->pg_xon(port, pg);
}

bool mmu::admit_partitioned(unsigned in_port, unsigned pg, unsigned out_port, unsigned queue,
                            std::uint64_t s, mmu_ticket& ticket, drop_cause& why) {
    mmu& part = *m_parts[partition_of(in_port, out_port)];
    const bool admitted = part.m_hot.plain
                              ? part.admit_plain(in_port, pg, out_port, queue,
                                                 static_cast<std::uint32_t>(s), ticket, why)
                              : part.admit_general(in_port, pg, out_port, queue, s, ticket, why);
    if (!admitted) return false;
    port_accounts& out = m_ports[out_port];
    charge(out, out.queue[queue], s, in_port, pg, out_port, queue, ticket);
    sum_partitions(in_port, pg, queue);
    return true;
}

void mmu::release_partitioned(const mmu_ticket& t) {
    mmu& part = *m_parts[partition_of(t.in_port, t.out_port)];
    if (part.m_hot.plain)
        part.release_plain(t);
    else
        part.release_general(t);
    m_used.cells -= t.cells;
    port_accounts& out = m_ports[t.out_port];
    out.queue[t.queue].cells -= t.cells;
    out.egress.cells -= t.cells;
    out.frames--;
    sum_partitions(t.in_port, t.pg, t.queue);
}

namespace {
/// Sets a count to `n`, keeping its peak.
template <class C>
void set_count(C& o, std::uint64_t n) {
    o.cells = static_cast<decltype(o.cells)>(n);
    if (o.cells > o.peak_cells) o.peak_cells = o.cells;
}
}  // namespace

void mmu::sum_partitions(unsigned in_port, unsigned pg, unsigned queue) {
    const unsigned ipool = m_pg[pg].pool, epool = m_queue[queue].pool;
    std::uint64_t pg_cells = 0, headroom = 0, ingress = 0, egress = 0, headroom_pool = 0;
    for (const auto& part : m_parts) {
        pg_cells += part->m_ports[in_port].pg[pg].cells;
        headroom += part->m_ports[in_port].headroom[pg].cells;
        ingress += part->ingress_pool(ipool).cells;
        egress += part->egress_pool(epool).cells;
        headroom_pool += part->m_headroom.cells;
    }
    set_count(m_ports[in_port].pg[pg], pg_cells);
    set_count(m_ports[in_port].headroom[pg], headroom);
    set_count(m_ingress_pool[ipool], ingress);
    set_count(m_egress_pool[epool], egress);
    set_count(m_headroom, headroom_pool);
}

std::uint64_t mmu::queue_limit_cells(unsigned queue) const {
    const share_limits& l = m_queue[queue];
    return limit(l, m_hot.pool_cells[l.pool], egress_pool(l.pool).cells);
}

std::uint64_t mmu::pg_limit_cells(unsigned pg) const {
    const share_limits& l = m_pg[pg];
    return limit(l, m_hot.pool_cells[l.pool], ingress_pool(l.pool).cells);
}

void mmu::set_pg_headroom(unsigned port, unsigned pg, std::uint64_t cells) {
    m_ports[port].headroom_limit[pg] = m_pg[pg].lossless ? clamp32(cells) : 0;
    for (auto& part : m_parts) part->set_pg_headroom(port, pg, cells);
}

std::uint64_t mmu::pg_xon_cells(unsigned pg) const {
    const share_limits& l = m_pg[pg];
    const std::uint64_t total_limit = l.min_cells + pg_limit_cells(pg);
    return std::max<std::uint64_t>(l.xon_cells, over(total_limit, l.xon_offset_cells));
}

bool mmu::admit_general(unsigned in_port, unsigned pg, unsigned out_port, unsigned queue,
                        std::uint64_t s, mmu_ticket& ticket, drop_cause& why) {
    if (!m_parts.empty()) return admit_partitioned(in_port, pg, out_port, queue, s, ticket, why);
    // 1. Global: the free-cell list is empty.
    if (buffer_full(m_used.cells, s, why)) return false;
    // 2. Ingress (port, PG): shared cells above its reserve, in its pool; a lossless PG that
    //    has no room there (or already uses headroom) goes to headroom.
    const share_limits& pl = m_pg[pg];
    occupancy& ipool = m_ingress_pool[pl.pool];
    count& pgo = m_ports[in_port].pg[pg];
    count& hr = m_ports[in_port].headroom[pg];
    const std::uint64_t pg_before = over(pgo.cells, pl.min_cells);
    const std::uint64_t pg_after = over(pgo.cells + s, pl.min_cells);
    if (pl.lossless && (m_ports[in_port].watchdog_drop >> pg & 1)) {
        why = drop_cause::PFC_WATCHDOG;
        return false;
    }
    bool to_headroom = pl.lossless && hr.cells > 0;
    if (!to_headroom && pg_after > pg_before) {
        const share_verdict v =
            check_share(pl, pg_before, pg_after, ipool.cells, m_hot.pool_cells[pl.pool]);
        if (v != share_verdict::FITS) {
            if (!pl.lossless) {
                why = ingress_cause(v);
                return false;
            }
            to_headroom = true;
        }
    }
    if (to_headroom) {
        if (hr.cells + s > m_ports[in_port].headroom_limit[pg]) {
            why = drop_cause::HEADROOM_EXHAUSTED;
            return false;
        }
        if (m_headroom.cells + s > m_hot.headroom_pool_cells) {
            why = drop_cause::HEADROOM_EXHAUSTED;
            return false;
        }
    }
    // 3. Egress (port, queue), lossy queues only.
    const share_limits& ql = m_queue[queue];
    occupancy& epool = m_egress_pool[ql.pool];
    port_accounts& out = m_ports[out_port];
    count& qo = out.queue[queue];
    const std::uint64_t q_before = over(qo.cells, ql.min_cells);
    const std::uint64_t q_after = over(qo.cells + s, ql.min_cells);
    if (!ql.lossless && q_after > q_before) {
        const share_verdict v =
            check_share(ql, q_before, q_after, epool.cells, m_hot.pool_cells[ql.pool]);
        if (v != share_verdict::FITS) {
            why = egress_cause(v);
            return false;
        }
    }
    // 4. Static per-port cap, lossy queues only (a lossless queue is held back by PFC).
    if (!ql.lossless && over_port_cap(out, s)) {
        why = drop_cause::PORT_CAP;
        return false;
    }
    if (to_headroom) {
        add(hr, s);
        add(m_headroom, s);
    } else {
        add(pgo, s);
        add(ipool, pg_after - pg_before);
    }
    add(epool, q_after - q_before);
    charge(out, qo, s, in_port, pg, out_port, queue, ticket);
    if (pl.lossless && m_listener) {
        // XOFF when the frame went to headroom or left the shared cells at the threshold.
        std::uint8_t& xoff = m_ports[in_port].xoff_pgs;
        if (!(xoff >> pg & 1) &&
            (to_headroom ||
             over(pgo.cells, pl.min_cells) >= limit(pl, m_hot.pool_cells[pl.pool], ipool.cells))) {
            xoff = static_cast<std::uint8_t>(xoff | 1u << pg);
            m_listener->pg_xoff(in_port, pg);
        }
    }
    return true;
}

void mmu::release_general(const mmu_ticket& t) {
    if (!m_parts.empty()) return release_partitioned(t);
    const std::uint32_t s = t.cells;
    m_used.cells -= s;
    // Ingress: headroom drains first, then the PG (and its pool's shared part). Only lossless
    // PGs ever use headroom, so lossy ones skip its cache line.
    const share_limits& pl = m_pg[t.pg];
    std::uint32_t rest = s;
    if (pl.lossless) {
        count& hr = m_ports[t.in_port].headroom[t.pg];
        const std::uint32_t from_headroom = std::min(s, hr.cells);
        hr.cells -= from_headroom;
        m_headroom.cells -= from_headroom;
        rest -= from_headroom;
    }
    if (rest) {
        count& pgo = m_ports[t.in_port].pg[t.pg];
        const std::uint64_t before = over(pgo.cells, pl.min_cells);
        pgo.cells -= rest;
        m_ingress_pool[pl.pool].cells -= before - over(pgo.cells, pl.min_cells);
    }
    std::uint8_t& xoff = m_ports[t.in_port].xoff_pgs;
    if ((xoff >> t.pg & 1) && m_ports[t.in_port].headroom[t.pg].cells == 0 &&
        m_ports[t.in_port].pg[t.pg].cells <= pg_xon_cells(t.pg)) {
        xoff = static_cast<std::uint8_t>(xoff & ~(1u << t.pg));
        m_listener->pg_xon(t.in_port, t.pg);
    }
    const share_limits& ql = m_queue[t.queue];
    port_accounts& out = m_ports[t.out_port];
    count& qo = out.queue[t.queue];
    const std::uint64_t before = over(qo.cells, ql.min_cells);
    qo.cells -= s;
    m_egress_pool[ql.pool].cells -= before - over(qo.cells, ql.min_cells);
    out.egress.cells -= s;
    out.frames--;
}

std::string mmu::audit(const std::vector<mmu_ticket>& held) const {
    struct port_sums {
        std::uint64_t egress = 0, frames = 0;
        std::array<std::uint64_t, MAX_QUEUES> queue{};
        std::array<std::uint64_t, PRIORITY_GROUPS> pg{};
    };
    std::vector<port_sums> sums(m_ports.size());
    std::uint64_t used = 0;
    for (const mmu_ticket& t : held) {
        if (t.in_port >= sums.size() || t.out_port >= sums.size() || t.pg >= PRIORITY_GROUPS ||
            t.queue >= MAX_QUEUES)
            return "a held frame's ticket names port " + std::to_string(t.in_port) + "/" +
                   std::to_string(t.out_port) + ", PG " + std::to_string(t.pg) + ", queue " +
                   std::to_string(t.queue) + ": out of range";
        used += t.cells;
        port_sums& out = sums[t.out_port];
        out.egress += t.cells;
        out.frames++;
        out.queue[t.queue] += t.cells;
        sums[t.in_port].pg[t.pg] += t.cells;
    }
    auto differs = [](const std::string& what, std::uint64_t counted, std::uint64_t held_cells) {
        return what + ": " + std::to_string(counted) + " counted, " + std::to_string(held_cells) +
               " held";
    };
    if (m_used.cells != used) return differs("buffer cells", m_used.cells, used);
    std::uint64_t headroom = 0;
    std::array<std::uint64_t, SERVICE_POOLS> ingress{}, egress{};
    for (std::size_t p = 0; p < m_ports.size(); ++p) {
        const port_accounts& a = m_ports[p];
        const port_sums& e = sums[p];
        const std::string port = "port " + std::to_string(p);
        if (a.egress.cells != e.egress)
            return differs(port + " egress cells", a.egress.cells, e.egress);
        if (a.frames != e.frames) return differs(port + " frames", a.frames, e.frames);
        for (unsigned q = 0; q < MAX_QUEUES; ++q) {
            if (a.queue[q].cells != e.queue[q])
                return differs(port + " queue " + std::to_string(q) + " cells", a.queue[q].cells,
                               e.queue[q]);
            egress[m_queue[q].pool] += over(a.queue[q].cells, m_queue[q].min_cells);
        }
        for (unsigned g = 0; g < PRIORITY_GROUPS; ++g) {
            const std::uint64_t pg = std::uint64_t(a.pg[g].cells) + a.headroom[g].cells;
            if (pg != e.pg[g])
                return differs(port + " PG " + std::to_string(g) + " cells (headroom included)", pg,
                               e.pg[g]);
            headroom += a.headroom[g].cells;
            ingress[m_pg[g].pool] += over(a.pg[g].cells, m_pg[g].min_cells);
        }
    }
    if (m_headroom.cells != headroom)
        return differs("headroom pool cells", m_headroom.cells, headroom);
    // A plain MMU keeps no pool counts (its pool 0 is the buffer); a partitioned one sums its
    // slices' (each slice checks its own below).
    if (!m_hot.plain && m_parts.empty())
        for (unsigned p = 0; p < SERVICE_POOLS; ++p) {
            if (m_ingress_pool[p].cells != ingress[p])
                return differs("ingress pool " + std::to_string(p) + " shared cells",
                               m_ingress_pool[p].cells, ingress[p]);
            if (m_egress_pool[p].cells != egress[p])
                return differs("egress pool " + std::to_string(p) + " shared cells",
                               m_egress_pool[p].cells, egress[p]);
        }
    if (!m_parts.empty()) return audit_partitions(held);
    return {};
}

std::string mmu::audit_partitions(const std::vector<mmu_ticket>& held) const {
    std::vector<std::vector<mmu_ticket>> by_part(m_parts.size());
    for (const mmu_ticket& t : held) by_part[partition_of(t.in_port, t.out_port)].push_back(t);
    for (std::size_t k = 0; k < m_parts.size(); ++k)
        if (std::string why = m_parts[k]->audit(by_part[k]); !why.empty())
            return "partition " + std::to_string(k) + ": " + why;
    return {};
}

}  // namespace fabricsim::sw
