#include "fabricsim/host/algo/gro.h"

#include <stdexcept>

namespace fabricsim::host {

std::optional<gro_params::error> gro_params::validate() const {
    auto bad = [](const char* field, const char* reason) {
        return std::optional<error>(error{field, reason});
    };
    if (max_payload == 0) return bad("max_payload", "must be >= 1");
    if (max_flows == 0 || max_flows > 64) return bad("max_flows", "must be in 1 .. 64");
    return std::nullopt;
}

gro_merger::gro_merger(unsigned queues, const gro_params& p, gro_output& out)
    : m_p(p), m_out(&out) {
    if (auto e = p.validate())
        throw std::invalid_argument("gro_params." + e->field + ": " + e->reason);
    if (queues == 0) throw std::invalid_argument("gro_merger: queues must be >= 1");
    m_open.resize(std::size_t(queues) * p.max_flows);
}

std::uint32_t gro_merger::held(unsigned queue) const {
    std::uint32_t n = 0;
    const open_agg* s = &m_open[std::size_t(queue) * m_p.max_flows];
    for (std::uint32_t i = 0; i < m_p.max_flows; ++i) n += s[i].used ? 1 : 0;
    return n;
}

void gro_merger::flush(unsigned queue, open_agg& o, ps_t at) {
    o.a.at = at;
    o.used = false;
    m_stats.aggregates++;
    m_out->on_aggregate(queue, o.a);
}

void gro_merger::on_delivery(unsigned queue, const rx_packet& p, ps_t at) {
    m_stats.segments++;
    open_agg* s = slots(queue);
    open_agg* mine = nullptr;
    open_agg* free_slot = nullptr;
    open_agg* oldest = nullptr;
    for (std::uint32_t i = 0; i < m_p.max_flows; ++i) {
        open_agg& o = s[i];
        if (!o.used) {
            if (!free_slot) free_slot = &o;
            continue;
        }
        if (o.a.flow == p.flow) mine = &o;
        if (!oldest || o.order < oldest->order) oldest = &o;
    }
    if (p.payload == 0) {
        if (mine) {
            m_stats.flush_control++;
            flush(queue, *mine, at);
        }
        m_stats.aggregates++;
        m_out->on_aggregate(
            queue, gro_aggregate{p.flow, p.seq, 0, 1, p.bytes, p.cookie, p.cookie, at, p.ce});
        return;
    }
    if (mine) {
        const bool in_order = p.seq == mine->a.seq + mine->a.payload;
        const bool fits = std::uint64_t(mine->a.payload) + p.payload <= m_p.max_payload;
        const bool same_tos = p.ce == mine->a.ce;
        if (in_order && fits && same_tos) {
            mine->a.payload += p.payload;
            mine->a.segments++;
            mine->a.bytes += p.bytes;
            m_out->on_merge(mine->a.last_cookie, p.cookie);
            mine->a.last_cookie = p.cookie;
            m_stats.merged++;
            return;
        }
        if (!in_order) {
            m_stats.flush_gap++;
        } else if (!same_tos) {
            m_stats.flush_tos++;
        } else {
            m_stats.flush_full++;
        }
        flush(queue, *mine, at);
        free_slot = mine;
    } else if (!free_slot) {
        m_stats.flush_evict++;
        flush(queue, *oldest, at);
        free_slot = oldest;
    }
    free_slot->used = true;
    free_slot->order = m_next_order++;
    free_slot->a = gro_aggregate{p.flow, p.seq, p.payload, 1, p.bytes, p.cookie, p.cookie, 0, p.ce};
}

void gro_merger::on_poll_end(unsigned queue, ps_t at, bool complete) {
    (void)complete;
    open_agg* s = slots(queue);
    for (;;) {
        open_agg* oldest = nullptr;
        for (std::uint32_t i = 0; i < m_p.max_flows; ++i)
            if (s[i].used && (!oldest || s[i].order < oldest->order)) oldest = &s[i];
        if (!oldest) return;
        m_stats.flush_poll++;
        flush(queue, *oldest, at);
    }
}

}  // namespace fabricsim::host
