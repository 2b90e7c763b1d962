#pragma once
/// Open-loop workloads over persistent connections (`traffic.workload[].connections`, seed-000
/// §3.4: the HULL dynamic workload's client keeps 16 TCP connections open to each server and
/// sends each request on one of them), as plain C++ (no SystemC): the spec the scenario loader
/// builds, and the pool that picks a connection for each message.
///
/// Timing model: none here; `connection_pool` only decides. A message arriving at a pair with
/// an idle connection takes one of them, drawn uniformly; with every connection of the pair busy
/// it waits in the pair's FIFO and the next connection of the pair that finishes takes it.
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "fabricsim/core/rng.h"
#include "fabricsim/core/units.h"

namespace fabricsim::platforms {

/// One workload whose generated flows are messages on persistent TCP connections.
struct message_workload_spec {
    /// A connection: its two app-driven TCP flows (ids in the scenario's flow table).
    struct connection {
        std::uint32_t data_flow = 0;     ///< source -> destination: carries the message
        std::int64_t request_flow = -1;  ///< destination -> source: carries the request (-1: none)
    };
    /// The connections between one source and one destination host.
    struct pair {
        std::uint32_t src = 0;  ///< host node that sends the messages
        std::uint32_t dst = 0;  ///< host node that receives them (and sends the requests)
        std::vector<connection> connections;
    };
    struct message {
        std::uint32_t pair = 0;  ///< index into `pairs`
        std::uint64_t bytes = 0;
        ps_t start = 0;  ///< arrival: the request is written then (or the message, without one)
    };

    std::string name;                 ///< "traffic.workload[i]": names its RNG and its errors
    std::uint64_t request_bytes = 0;  ///< 0: the source writes the message at its arrival
    std::vector<pair> pairs;
    std::vector<message> messages;  ///< by start time
};

/// Assigns messages to the connections of their (source, destination) pair.
class connection_pool
{
public:
    static constexpr std::uint32_t NONE = ~std::uint32_t(0);

    /// `connections[p]` (>= 1) connections for pair p, all idle; `r` draws the idle one a
    /// message takes. Throws std::invalid_argument for a pair without connections.
    connection_pool(const std::vector<std::uint32_t>& connections, rng r);

    /// Message `m` of pair `p` arrives: the connection (index within the pair) that carries it
    /// from now, drawn uniformly among the idle ones, or NONE if all are busy and it waits.
    std::uint32_t arrive(std::uint32_t p, std::uint32_t m);
    /// Connection `c` of pair `p` has delivered its message: the waiting message it carries
    /// next (the oldest of the pair), or NONE and the connection is idle.
    std::uint32_t finish(std::uint32_t p, std::uint32_t c);

    std::size_t idle(std::uint32_t p) const { return m_pairs.at(p).idle.size(); }
    std::size_t waiting(std::uint32_t p) const { return m_pairs.at(p).waiting.size(); }
    /// Messages that found every connection of their pair busy.
    std::uint64_t queued() const { return m_queued; }

private:
    struct pair_state {
        std::vector<std::uint32_t> idle;  ///< idle connections, in no particular order
        std::vector<bool> busy;
        std::deque<std::uint32_t> waiting;  ///< messages, oldest first
    };
    std::vector<pair_state> m_pairs;
    rng m_rng;
    std::uint64_t m_queued = 0;
};

}  // namespace fabricsim::platforms
