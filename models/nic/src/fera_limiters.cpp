#include "fabricsim/nic/algo/fera_limiters.h"

#include <algorithm>
#include <cmath>

#include "fabricsim/core/frame.h"

namespace fabricsim::nic {

fera_limiters::fera_limiters(const fera_source_params& p) : m_p(p) {
    fera_source check(p);  // throws on bad parameters
    (void)check;
}

unsigned fera_limiters::flow(std::uint32_t flow_id, ps_t now) {
    const auto [it, added] = m_index.try_emplace(flow_id, unsigned(m_flows.size()));
    if (added) m_flows.push_back({flow_id, fera_source(m_p, now)});
    return it->second;
}

ps_t fera_limiters::earliest_start(unsigned i, ps_t now) {
    regulator& r = m_flows[i];
    r.src.on_timer(now);
    if (r.last_wire == 0) return 0;
    const double gap =
        std::ceil(double(r.last_wire) * 8.0 * double(PS_PER_S) / std::max(r.src.rate_bps(), 1.0));
    return r.last_start + static_cast<ps_t>(gap);
}

bool fera_limiters::sent(unsigned i, ps_t now, std::uint32_t wire_bytes) {
    regulator& r = m_flows[i];
    ++m_stats.frames;
    const bool tag = r.src.on_send(now);
    if (tag) ++m_stats.tags_sent;
    r.last_start = now;
    r.last_wire = wire_bytes + (tag ? frame::FERA_TAG_BYTES : 0);
    return tag;
}

bool fera_limiters::on_tag_returned(std::uint32_t flow_id, std::uint64_t rate_bps, ps_t now) {
    const auto it = m_index.find(flow_id);
    if (it == m_index.end()) {
        ++m_stats.tags_unknown;
        return false;
    }
    m_flows[it->second].src.on_tag_returned(rate_bps, now);
    ++m_stats.tags_returned;
    return true;
}

}  // namespace fabricsim::nic
