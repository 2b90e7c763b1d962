#include "fabricsim/host/flow_table.h"

#include <cmath>
#include <utility>

namespace fabricsim::host {

flow_table::flow_table() = default;

std::uint32_t flow_table::add(const flow_spec& spec) {
    flow_record r;
    r.spec = spec;
    r.spec.id = static_cast<std::uint32_t>(m_flows.size());
    m_flows.push_back(std::move(r));
    return m_flows.back().spec.id;
}

void flow_table::on_delivered(std::uint32_t id, std::uint32_t frame_bytes, std::uint32_t payload,
                              ps_t latency, ps_t at) {
    flow_record& r = m_flows[id];
    if (r.delivered_frames == 0) r.first_rx = at;
    r.last_rx = at;
    r.delivered_frames++;
    r.delivered_bytes += frame_bytes;
    r.payload_bytes += payload;
    r.latency_min = std::min(r.latency_min, latency);
    r.latency_max = std::max(r.latency_max, latency);
    r.latency_sum += double(latency);
    m_latency.add(double(latency));
}

}  // namespace fabricsim::host
