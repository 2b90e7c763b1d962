#include "fabricsim/switch/algo/mmu.h"

#include <algorithm>
#include <cmath>

namespace fabricsim::sw {

std::uint64_t mmu_config::reserved_cells() const {
    // A reserved cell is charged to both views (its PG and its queue), so a port needs the
    // larger of its ingress and egress reserves, not their sum (as ns2-flexpass sizes pools).
    std::uint64_t pg_min = 0, queue_min = 0;
    for (const auto& p : pg) pg_min += p.min_cells;
    for (unsigned q = 0; q < queues; ++q) queue_min += queue[q].min_cells;
    return std::uint64_t(ports) * std::max(pg_min, queue_min);
}

std::uint64_t mmu_config::lossy_pool_cells() const {
    const std::uint64_t taken = reserved_cells() + lossless_pool_cells + headroom_pool_cells;
    return taken < total_cells ? total_cells - taken : 0;
}

std::string mmu_config::validate() const {
    if (cell_bytes == 0) return "cell size must be positive";
    if (total_cells == 0) return "the buffer holds no cell";
    if (total_cells > 0xffffffffu)
        return "the buffer has " + std::to_string(total_cells) +
               " cells, more than the model counts (2^32 - 1)";
    if (queues == 0 || queues > MAX_QUEUES) return "queues must be 1..8";
    const std::uint64_t taken = reserved_cells() + lossless_pool_cells + headroom_pool_cells;
    if (taken >= total_cells)
        return "reserves (" + std::to_string(reserved_cells()) + " cells), the lossless pool (" +
               std::to_string(lossless_pool_cells) + ") and the headroom pool (" +
               std::to_string(headroom_pool_cells) + ") leave no shared cell of the " +
               std::to_string(total_cells) + "-cell buffer for the lossy pool";
    for (const auto& p : pg)
        if (p.shared.dynamic && !(p.shared.alpha > 0)) return "a dynamic threshold needs alpha > 0";
    for (const auto& q : queue)
        if (q.shared.dynamic && !(q.shared.alpha > 0)) return "a dynamic threshold needs alpha > 0";
    return {};
}

mmu::mmu(const mmu_config& cfg) : m_cfg(cfg), m_ports(cfg.ports) {
    m_pool_cells[LOSSY_POOL] = cfg.lossy_pool_cells();
    m_pool_cells[LOSSLESS_POOL] = cfg.lossless_pool_cells;
    m_hot.total_cells = cfg.total_cells;
    m_hot.lossy_pool_cells = m_pool_cells[LOSSY_POOL];
    m_hot.cell_reciprocal = ((std::uint64_t(1) << 32) + cfg.cell_bytes - 1) / cfg.cell_bytes;
    m_hot.port_cap = cfg.port_cap.value;
    m_hot.port_cap_packets = cfg.port_cap.packets;
    m_hot.cell_bytes = cfg.cell_bytes;
    m_hot.cell_overhead_bytes = cfg.cell_overhead_bytes;
    m_hot.accept_crossing = cfg.accept_crossing;
    m_hot.plain = true;
    for (const auto& p : cfg.pg) m_hot.plain = m_hot.plain && p.min_cells == 0 && !p.lossless;
    for (const auto& q : cfg.queue) m_hot.plain = m_hot.plain && q.min_cells == 0 && !q.lossless;
    for (unsigned i = 0; i < PRIORITY_GROUPS; ++i) {
        m_pg_alpha[i] = cfg.pg[i].shared.alpha;
        if (cfg.pg[i].shared.dynamic)
            m_hot.pg_dynamic = static_cast<std::uint8_t>(m_hot.pg_dynamic | 1u << i);
    }
    for (unsigned i = 0; i < MAX_QUEUES; ++i) {
        m_queue_alpha[i] = cfg.queue[i].shared.alpha;
        if (cfg.queue[i].shared.dynamic)
            m_hot.queue_dynamic = static_cast<std::uint8_t>(m_hot.queue_dynamic | 1u << i);
    }
}

std::uint64_t mmu::queue_limit_cells(unsigned queue) const {
    const auto& qp = m_cfg.queue[queue];
    const unsigned pool = qp.lossless ? LOSSLESS_POOL : LOSSY_POOL;
    return limit(qp.shared, pool, egress_pool(pool).cells);
}

std::uint64_t mmu::pg_limit_cells(unsigned pg) const {
    const auto& pp = m_cfg.pg[pg];
    const unsigned pool = pp.lossless ? LOSSLESS_POOL : LOSSY_POOL;
    return limit(pp.shared, pool, ingress_pool(pool).cells);
}

bool mmu::admit(unsigned in_port, unsigned pg, unsigned out_port, unsigned queue,
                std::uint32_t bytes, mmu_ticket& ticket, drop_cause& why) {
    const std::uint64_t s = cells_for(bytes);
    if (m_hot.plain)
        return admit_plain(in_port, pg, out_port, queue, static_cast<std::uint32_t>(s), ticket,
                           why);
    // 1. Global: the free-cell list is empty.
    if (m_used.cells + s > m_cfg.total_cells) {
        why = drop_cause::SHARED_BUFFER_FULL;
        return false;
    }
    // 2. Ingress (port, PG).
    const auto& pp = m_cfg.pg[pg];
    const unsigned ipool = pp.lossless ? LOSSLESS_POOL : LOSSY_POOL;
    count& pgo = m_ports[in_port].pg[pg];
    count& hr = m_ports[in_port].headroom[pg];
    const std::uint64_t pg_before = over(pgo.cells, pp.min_cells);
    const std::uint64_t pg_after = over(pgo.cells + s, pp.min_cells);
    bool to_headroom = pp.lossless && hr.cells > 0;
    if (!to_headroom && pg_after > pg_before) {
        const bool pool_full =
            m_ingress_pool[ipool].cells + (pg_after - pg_before) > m_pool_cells[ipool];
        const bool over_limit =
            !pool_full &&
            exceeds(pg_before, pg_after, limit(pp.shared, ipool, m_ingress_pool[ipool].cells));
        if (pool_full || over_limit) {
            if (!pp.lossless) {
                why = pool_full ? drop_cause::INGRESS_POOL_FULL : drop_cause::INGRESS_PG_LIMIT;
                return false;
            }
            to_headroom = true;
        }
    }
    if (to_headroom) {
        if (hr.cells + s > pp.headroom_cells) {
            why = drop_cause::HEADROOM_PG_FULL;
            return false;
        }
        if (m_headroom.cells + s > m_cfg.headroom_pool_cells) {
            why = drop_cause::HEADROOM_POOL_FULL;
            return false;
        }
    }
    // 3. Egress (port, queue).
    const auto& qp = m_cfg.queue[queue];
    const unsigned epool = qp.lossless ? LOSSLESS_POOL : LOSSY_POOL;
    port_accounts& out = m_ports[out_port];
    count& qo = out.queue[queue];
    const std::uint64_t q_before = over(qo.cells, qp.min_cells);
    const std::uint64_t q_after = over(qo.cells + s, qp.min_cells);
    if (!qp.lossless && q_after > q_before) {
        if (m_egress_pool[epool].cells + (q_after - q_before) > m_pool_cells[epool]) {
            why = drop_cause::EGRESS_POOL_FULL;
            return false;
        }
        if (exceeds(q_before, q_after, limit(qp.shared, epool, m_egress_pool[epool].cells))) {
            why = drop_cause::EGRESS_QUEUE_LIMIT;
            return false;
        }
    }
    // 4. Static per-port cap.
    if (over_port_cap(out, s)) {
        why = drop_cause::PORT_CAP;
        return false;
    }
    // Charge both views.
    add(m_used, s);
    if (to_headroom) {
        add(hr, s);
        add(m_headroom, s);
    } else {
        add(pgo, s);
        add(m_ingress_pool[ipool], pg_after - pg_before);
    }
    add(qo, s);
    add(m_egress_pool[epool], q_after - q_before);
    add(out.egress, s);
    out.frames++;
    ticket.cells = static_cast<std::uint16_t>(s);
    ticket.in_port = static_cast<std::uint16_t>(in_port);
    ticket.out_port = static_cast<std::uint16_t>(out_port);
    ticket.pg = static_cast<std::uint8_t>(pg);
    ticket.queue = static_cast<std::uint8_t>(queue);
    return true;
}

// admit() with no reserves and only the lossy pool: the same checks in the same order, with
// shared = occupancy and both pool views = m_used (the egress pool check can only fail where the
// ingress one already did, as the two views are equal).
bool mmu::admit_plain(unsigned in_port, unsigned pg, unsigned out_port, unsigned queue,
                      std::uint32_t s, mmu_ticket& ticket, drop_cause& why) {
    const std::uint64_t used = m_used.cells;
    if (used + s > m_hot.total_cells) {
        why = drop_cause::SHARED_BUFFER_FULL;
        return false;
    }
    if (used + s > m_hot.lossy_pool_cells) {
        why = drop_cause::INGRESS_POOL_FULL;
        return false;
    }
    count& pgo = m_ports[in_port].pg[pg];
    if (exceeds(pgo.cells, pgo.cells + s,
                m_hot.pg_dynamic >> pg & 1 ? dynamic_limit(m_pg_alpha[pg], used)
                                           : m_cfg.pg[pg].shared.static_cells)) {
        why = drop_cause::INGRESS_PG_LIMIT;
        return false;
    }
    port_accounts& out = m_ports[out_port];
    count& qo = out.queue[queue];
    if (exceeds(qo.cells, qo.cells + s,
                m_hot.queue_dynamic >> queue & 1 ? dynamic_limit(m_queue_alpha[queue], used)
                                                 : m_cfg.queue[queue].shared.static_cells)) {
        why = drop_cause::EGRESS_QUEUE_LIMIT;
        return false;
    }
    if (over_port_cap(out, s)) {
        why = drop_cause::PORT_CAP;
        return false;
    }
    add(m_used, s);
    add(pgo, s);
    add(qo, s);
    add(out.egress, s);
    out.frames++;
    ticket.cells = static_cast<std::uint16_t>(s);
    ticket.in_port = static_cast<std::uint16_t>(in_port);
    ticket.out_port = static_cast<std::uint16_t>(out_port);
    ticket.pg = static_cast<std::uint8_t>(pg);
    ticket.queue = static_cast<std::uint8_t>(queue);
    return true;
}

void mmu::release(const mmu_ticket& t) {
    const std::uint32_t s = t.cells;
    m_used.cells -= s;
    if (m_hot.plain) {
        m_ports[t.in_port].pg[t.pg].cells -= s;
        port_accounts& out = m_ports[t.out_port];
        out.queue[t.queue].cells -= s;
        out.egress.cells -= s;
        out.frames--;
        return;
    }
    // Ingress: headroom drains first, then the PG (and its pool's shared part). Only lossless
    // PGs ever use headroom, so lossy ones skip its cache line.
    const auto& pp = m_cfg.pg[t.pg];
    std::uint32_t rest = s;
    if (pp.lossless) {
        count& hr = m_ports[t.in_port].headroom[t.pg];
        const std::uint32_t from_headroom = std::min(s, hr.cells);
        hr.cells -= from_headroom;
        m_headroom.cells -= from_headroom;
        rest -= from_headroom;
    }
    if (rest) {
        count& pgo = m_ports[t.in_port].pg[t.pg];
        const std::uint64_t before = over(pgo.cells, pp.min_cells);
        pgo.cells -= rest;
        m_ingress_pool[pp.lossless ? LOSSLESS_POOL : LOSSY_POOL].cells -=
            before - over(pgo.cells, pp.min_cells);
    }
    const auto& qp = m_cfg.queue[t.queue];
    port_accounts& out = m_ports[t.out_port];
    count& qo = out.queue[t.queue];
    const std::uint64_t before = over(qo.cells, qp.min_cells);
    qo.cells -= s;
    m_egress_pool[qp.lossless ? LOSSLESS_POOL : LOSSY_POOL].cells -=
        before - over(qo.cells, qp.min_cells);
    out.egress.cells -= s;
    out.frames--;
}

}  // namespace fabricsim::sw
