#include "fabricsim/platforms/message_workload.h"

#include <utility>

#include "fabricsim/core/kernel.h"
#include "fabricsim/host/host.h"

namespace fabricsim::platforms {

namespace {
std::vector<std::uint32_t> connection_counts(const message_workload_spec& spec) {
    std::vector<std::uint32_t> n;
    for (const auto& p : spec.pairs) n.push_back(static_cast<std::uint32_t>(p.connections.size()));
    return n;
}
}  // namespace

message_workload::message_workload(const message_workload_spec& spec,
                                   std::vector<host::host*> hosts, host::flow_table& flows,
                                   std::uint64_t seed)
    : m_spec(spec),
      m_hosts(std::move(hosts)),
      m_flows(flows),
      m_pool(connection_counts(spec), rng(seed, spec.name + ".connections")),
      m_records(spec.messages.size()) {
    m_role.resize(flows.size());
    m_carrying.resize(m_spec.pairs.size());
    for (std::uint32_t p = 0; p < m_spec.pairs.size(); ++p) {
        const auto& conns = m_spec.pairs[p].connections;
        m_carrying[p].assign(conns.size(), connection_pool::NONE);
        for (std::uint32_t c = 0; c < conns.size(); ++c) {
            m_role[conns[c].data_flow] = {p, c, false};
            m_flows[conns[c].data_flow].listener = this;
            if (conns[c].request_flow < 0) continue;
            const auto req = static_cast<std::uint32_t>(conns[c].request_flow);
            m_role[req] = {p, c, true};
            m_flows[req].listener = this;
        }
    }
}

void message_workload::start() {
    if (!m_spec.messages.empty()) m_timer.arm_at(m_spec.messages.front().start);
}

void message_workload::on_arrival() {
    const ps_t now = now_ps();
    while (m_next < m_spec.messages.size() && m_spec.messages[m_next].start <= now) {
        const auto m = static_cast<std::uint32_t>(m_next++);
        const std::uint32_t c = m_pool.arrive(m_spec.messages[m].pair, m);
        if (c != connection_pool::NONE) dispatch(m, c, now);
    }
    if (m_next < m_spec.messages.size()) m_timer.arm_at(m_spec.messages[m_next].start);
}

void message_workload::dispatch(std::uint32_t m, std::uint32_t c, ps_t at) {
    const message_workload_spec::message& msg = m_spec.messages[m];
    const message_workload_spec::pair& pair = m_spec.pairs[msg.pair];
    record& r = m_records[m];
    r.connection = c;
    r.dispatched = at;
    m_carrying[msg.pair][c] = m;
    const auto& conn = pair.connections[c];
    r.timeouts_before = m_hosts[pair.src]->timeouts(conn.data_flow);
    if (conn.request_flow >= 0) {
        m_hosts[pair.dst]->app_write(static_cast<std::uint32_t>(conn.request_flow),
                                     m_spec.request_bytes, at);
        return;
    }
    write_message(m, at);
}

void message_workload::write_message(std::uint32_t m, ps_t at) {
    const message_workload_spec::message& msg = m_spec.messages[m];
    const message_workload_spec::pair& pair = m_spec.pairs[msg.pair];
    m_hosts[pair.src]->app_write(pair.connections[m_records[m].connection].data_flow, msg.bytes,
                                 at);
}

std::uint64_t message_workload::timeouts(std::size_t m) const {
    const record& r = m_records[m];
    if (r.connection == connection_pool::NONE) return 0;
    if (r.end) return r.timeouts_after - r.timeouts_before;
    const auto& pair = m_spec.pairs[m_spec.messages[m].pair];
    return m_hosts[pair.src]->timeouts(pair.connections[r.connection].data_flow) -
           r.timeouts_before;
}

void message_workload::on_message(std::uint32_t flow, ps_t at) {
    const flow_role role = m_role[flow];
    const std::uint32_t m = m_carrying[role.pair][role.connection];
    if (role.request) {
        // The source has the whole request: it writes the message.
        write_message(m, at);
        return;
    }
    const message_workload_spec::pair& pair = m_spec.pairs[role.pair];
    record& r = m_records[m];
    r.end = at;
    r.timeouts_after = m_hosts[pair.src]->timeouts(flow);
    m_carrying[role.pair][role.connection] = connection_pool::NONE;
    const std::uint32_t next = m_pool.finish(role.pair, role.connection);
    if (next != connection_pool::NONE) dispatch(next, role.connection, at);
}

}  // namespace fabricsim::platforms
