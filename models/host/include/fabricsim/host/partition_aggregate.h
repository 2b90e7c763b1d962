#pragma once
/// Partition/aggregate (incast) application: an aggregator queries N workers over persistent
/// TCP connections; each worker answers with a response of S bytes; the query completes when
/// the last byte of the last response reaches the aggregator; the next query follows after a
/// think time (seed-000 §3.1/§3.2, Fig 2.18-2.20).
///
/// Timing model: requests go out at the query start on every aggregator->worker connection;
/// a worker writes its response when the whole request has arrived, after an optional delay
/// drawn uniformly from [0, jitter] (application jitter, seed-000 Fig 2.7); completion times
/// are the host-memory times of the last bytes. Processing takes no time. The connections stay
/// open across queries (windows and RTT estimates carry over), one message in flight per
/// connection at a time.
#include <cstdint>
#include <string>
#include <vector>

#include "fabricsim/core/rng.h"
#include "fabricsim/core/units.h"
#include "fabricsim/host/flow_table.h"

namespace fabricsim::host {

class host;

struct incast_spec {
    std::uint32_t aggregator = 0;         ///< host node index
    std::vector<std::uint32_t> workers;   ///< host node indices
    std::uint64_t request_bytes = 1600;   ///< seed-000 §3.1: 1.6 KB query requests
    std::uint64_t response_bytes = 2048;  ///< per worker
    std::uint32_t queries = 1;
    ps_t start = 0;
    ps_t think_time = 0;                        ///< from a query's completion to the next query
    ps_t jitter = 0;                            ///< worker response delay ~ U[0, jitter]
    std::vector<std::uint32_t> request_flows;   ///< flow ids, aggregator -> worker i
    std::vector<std::uint32_t> response_flows;  ///< flow ids, worker i -> aggregator
};

struct query_record {
    ps_t start = 0;
    ps_t end = 0;                ///< 0 = not completed in the run
    std::uint64_t timeouts = 0;  ///< RTOs of the response connections during the query
};

class partition_aggregate : public message_listener
{
public:
    /// `hosts[n]` is the host model of topology node n (null for switches).
    partition_aggregate(const incast_spec& spec, std::vector<host*> hosts, flow_table& flows,
                        std::uint64_t seed, const std::string& name);

    /// Schedules the first query; call once before the simulation starts.
    void start();
    void on_message(std::uint32_t flow, ps_t at) override;

    const incast_spec& spec() const { return m_spec; }
    const std::vector<query_record>& queries() const { return m_queries; }

private:
    void begin_query(ps_t at);
    std::uint64_t response_timeouts() const;

    incast_spec m_spec;
    std::vector<host*> m_hosts;
    flow_table& m_flows;
    rng m_rng;
    std::vector<query_record> m_queries;
    std::vector<std::int32_t>
        m_worker_of_flow;  ///< flow id -> worker index (requests), -1 otherwise
    std::uint32_t m_responses = 0;
    std::uint64_t m_timeouts_at_start = 0;
};

}  // namespace fabricsim::host
