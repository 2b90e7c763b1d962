#pragma once
/// Per-flow counters shared by sources (sent) and sinks (delivered, one-way latency), plus a
/// run-wide latency histogram for percentiles.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <boost/histogram.hpp>

#include "fabricsim/core/units.h"
#include "fabricsim/host/traffic_source.h"

namespace fabricsim::host {

struct flow_record {
    flow_spec spec;
    std::uint64_t sent_frames = 0;
    std::uint64_t sent_bytes = 0;       ///< frame bytes incl. FCS
    std::uint64_t delivered_frames = 0;
    std::uint64_t delivered_bytes = 0;  ///< frame bytes incl. FCS
    std::uint64_t payload_bytes = 0;    ///< UDP payload delivered
    std::uint64_t ce_frames = 0;        ///< delivered with CE set (ECN-marked on the way)
    ps_t first_rx = 0;
    ps_t last_rx = 0;
    ps_t latency_min = std::numeric_limits<ps_t>::max();
    ps_t latency_max = 0;
    double latency_sum = 0;
};

class flow_table {
public:
    flow_table();
    std::uint32_t add(const flow_spec& spec);
    flow_record& operator[](std::uint32_t id) { return m_flows[id]; }
    const flow_record& operator[](std::uint32_t id) const { return m_flows[id]; }
    std::size_t size() const { return m_flows.size(); }
    const std::vector<flow_record>& all() const { return m_flows; }

    void on_delivered(std::uint32_t id, std::uint32_t frame_bytes, std::uint32_t payload, ps_t latency, ps_t at);
    /// Latency quantile q in [0,1] over all delivered frames (ps), from a log-spaced histogram
    /// (2% bucket width).
    double latency_quantile(double q) const;
    std::uint64_t latency_samples() const { return m_samples; }

private:
    using axis_t = boost::histogram::axis::regular<double, boost::histogram::axis::transform::log>;
    using hist_t = decltype(boost::histogram::make_histogram(std::declval<axis_t>()));
    std::vector<flow_record> m_flows;
    hist_t m_latency;
    std::uint64_t m_samples = 0;
};

}  // namespace fabricsim::host
