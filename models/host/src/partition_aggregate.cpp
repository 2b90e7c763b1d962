#include "fabricsim/host/partition_aggregate.h"

#include <cmath>

#include "fabricsim/host/host.h"

namespace fabricsim::host {

partition_aggregate::partition_aggregate(const incast_spec& spec, std::vector<host*> hosts,
                                         flow_table& flows, std::uint64_t seed,
                                         const std::string& name)
    : m_spec(spec), m_hosts(std::move(hosts)), m_flows(flows), m_rng(seed, name) {
    m_worker_of_flow.assign(flows.size(), -1);
    for (std::size_t i = 0; i < m_spec.workers.size(); ++i) {
        m_worker_of_flow[m_spec.request_flows[i]] = static_cast<std::int32_t>(i);
        m_flows[m_spec.request_flows[i]].listener = this;
        m_flows[m_spec.response_flows[i]].listener = this;
    }
    m_queries.reserve(m_spec.queries);
}

void partition_aggregate::start() {
    begin_query(m_spec.start);
}

std::uint64_t partition_aggregate::response_timeouts() const {
    std::uint64_t n = 0;
    for (std::size_t i = 0; i < m_spec.workers.size(); ++i)
        n += m_hosts[m_spec.workers[i]]->timeouts(m_spec.response_flows[i]);
    return n;
}

void partition_aggregate::begin_query(ps_t at) {
    m_queries.push_back({at, 0, 0});
    m_responses = 0;
    m_timeouts_at_start = response_timeouts();
    host* agg = m_hosts[m_spec.aggregator];
    for (const std::uint32_t f : m_spec.request_flows) agg->app_write(f, m_spec.request_bytes, at);
}

void partition_aggregate::on_message(std::uint32_t flow, ps_t at) {
    const std::int32_t w = m_worker_of_flow[flow];
    if (w >= 0) {
        // A worker has the whole request: it answers, after its jitter.
        ps_t delay = 0;
        if (m_spec.jitter > 0)
            delay = static_cast<ps_t>(std::floor(m_rng.uniform() * double(m_spec.jitter)));
        const auto i = static_cast<std::size_t>(w);
        m_hosts[m_spec.workers[i]]->app_write(m_spec.response_flows[i], m_spec.response_bytes,
                                              at + delay);
        return;
    }
    if (++m_responses < m_spec.workers.size()) return;
    query_record& q = m_queries.back();
    q.end = at;
    q.timeouts = response_timeouts() - m_timeouts_at_start;
    if (m_queries.size() < m_spec.queries) begin_query(at + m_spec.think_time);
}

}  // namespace fabricsim::host
