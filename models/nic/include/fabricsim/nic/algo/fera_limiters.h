#pragma once
/// The FERA reaction points of one NIC (seed-003 §1.6, §4): one fera_source (algo/fera_source.h)
/// and one rate regulator per flow, as plain C++ (no SystemC).
///
/// Timing model. A flow gets its regulator at its first frame (no bank limit: the thesis has
/// one regulator per flow). The regulator spaces the flow's frames by next-send-time: a frame
/// may start once last_start + 8·wire_bytes(last)/rate has passed, with the rate in force at
/// the time asked (a returned tag moves the pending gap at once, as the thesis' source "sets
/// its rate"). The first frame starts at once. The flow's frames leave in order; the caller
/// holds them (the NIC's TX queue). Tags: the first frame of a flow and then the first frame
/// at least τ after the last tag carry a forward tag initialised to the link rate (fera_source);
/// a probe without a data frame is not sent (a flow with nothing to send discovers nothing).
/// The idle reset (2T without a returned tag) runs at the calls at or after its deadline.
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "fabricsim/core/units.h"
#include "fabricsim/nic/algo/fera_source.h"

namespace fabricsim::nic {

class fera_limiters
{
public:
    static constexpr ps_t NEVER = fera_source::NEVER;
    /// Throws std::invalid_argument if p is invalid (fera_source).
    explicit fera_limiters(const fera_source_params& p);

    /// The regulator of flow `flow_id`, made at its first frame at `now`.
    unsigned flow(std::uint32_t flow_id, ps_t now);
    /// When regulator i lets its next frame start (at the rate in force at `now`).
    ps_t earliest_start(unsigned i, ps_t now);
    /// A frame of `wire_bytes` (without a tag) of regulator i starts at `now`; true: it must
    /// carry a forward tag (whose bytes the next gap then counts).
    bool sent(unsigned i, ps_t now, std::uint32_t wire_bytes);
    /// A returning tag for `flow_id` arrived at `now`; false: no such flow here (ignored).
    bool on_tag_returned(std::uint32_t flow_id, std::uint64_t rate_bps, ps_t now);

    std::size_t size() const { return m_flows.size(); }
    const fera_source& source(unsigned i) const { return m_flows[i].src; }
    std::uint32_t flow_id(unsigned i) const { return m_flows[i].id; }
    const fera_source_params& params() const { return m_p; }

    struct counters {
        std::uint64_t frames = 0;         ///< frames through the regulators
        std::uint64_t tags_sent = 0;      ///< forward tags
        std::uint64_t tags_returned = 0;  ///< returning tags taken
        std::uint64_t tags_unknown = 0;   ///< returning tags of no flow here
    };
    const counters& stats() const { return m_stats; }

private:
    struct regulator {
        std::uint32_t id;
        fera_source src;
        ps_t last_start = 0;
        std::uint32_t last_wire = 0;  ///< 0: nothing sent yet
    };
    fera_source_params m_p;
    std::vector<regulator> m_flows;
    std::unordered_map<std::uint32_t, unsigned> m_index;  ///< lookups only, never iterated
    counters m_stats;
};

}  // namespace fabricsim::nic
