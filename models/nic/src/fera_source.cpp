#include "fabricsim/nic/algo/fera_source.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace fabricsim::nic {

fera_source_params fera_source_params::thesis_default(std::uint64_t link_rate_bps,
                                                      double initial_flows) {
    fera_source_params p;
    p.link_rate_bps = link_rate_bps;
    p.initial_flows = initial_flows;
    return p;
}

std::optional<fera_source_params::error> fera_source_params::validate() const {
    auto bad = [](const char* field, const char* reason) {
        return std::optional<error>(error{field, reason});
    };
    if (link_rate_bps == 0) return bad("link_rate_bps", "must be > 0");
    if (!(initial_flows >= 1.0 && std::isfinite(initial_flows)))
        return bad("initial_flows", "must be >= 1 (r_0 = C/N_0 <= C)");
    if (interval == 0) return bad("interval", "must be > 0");
    if (tag_interval == 0) return bad("tag_interval", "must be > 0");
    if (tag_interval > interval) return bad("tag_interval", "must be <= interval (tau <= T)");
    return std::nullopt;
}

fera_source::fera_source(const fera_source_params& p, ps_t start)
    : m_p(p),
      m_initial(static_cast<double>(p.link_rate_bps) / p.initial_flows),
      m_rate(m_initial),
      m_start(start) {
    if (auto e = p.validate())
        throw std::invalid_argument("fera_source_params." + e->field + ": " + e->reason);
}

void fera_source::advance(ps_t now) {
    if (m_reset_at == NEVER || m_reset_at > now) return;
    m_reset_at = NEVER;
    ++m_stats.idle_resets;
    if (m_rate != m_initial) ++m_stats.rate_changes;
    m_rate = m_initial;
}

void fera_source::record_tag(ps_t now) {
    advance(now);
    m_tagged = true;
    m_last_tag = now;
    ++m_stats.tags_sent;
}

bool fera_source::on_send(ps_t now) {
    advance(now);
    if (m_p.reset_only_when_idle && m_reset_at != NEVER) m_reset_at = now + 2 * m_p.interval;
    if (m_tagged && now < m_last_tag + m_p.tag_interval) return false;
    record_tag(now);
    return true;
}

void fera_source::on_tag_returned(std::uint64_t rate_bps, ps_t now) {
    advance(now);
    ++m_stats.tags_returned;
    // A tag starts at the link rate and is only lowered; the cap guards a foreign one.
    const double r = static_cast<double>(std::min(rate_bps, m_p.link_rate_bps));
    if (r != m_rate) ++m_stats.rate_changes;
    m_rate = r;
    m_reset_at = now + 2 * m_p.interval;
}

}  // namespace fabricsim::nic
