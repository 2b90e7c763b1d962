#pragma once
/// Open-loop workloads as plain C++ (no YAML, no SystemC): Poisson flow arrivals per sending
/// host at a target load, destinations by pattern (all-to-all, permutation, many-to-one, and
/// uniform over the other sites' or the own site's hosts: the inter- and intra-DC mixes of
/// seed-002 §3A/§3B), sizes
/// from a `flow_size_distribution`; and the fixed (source, destination) pairs of the patterned
/// long-lived flows.
///
/// Timing model: host h's flows arrive as a Poisson process from `start` (exclusive) to `stop`
/// (exclusive) with mean gap `mean size * 8 * wire_per_byte / (load * rate_h)`, so the offered
/// load in wire bytes is `load` of the host's link rate. Arrival times are truncated to whole
/// picoseconds. Each sending host draws from its own RNG `<name>.<host name>` (gap, then the
/// destination for all-to-all, then the size); the permutation from `<name>.permutation`.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "fabricsim/core/rng.h"
#include "fabricsim/core/units.h"
#include "fabricsim/host/algo/flow_size_distribution.h"

namespace fabricsim::host {

enum class traffic_pattern { ALL_TO_ALL, PERMUTATION, MANY_TO_ONE, INTER_SITE, INTRA_SITE };

/// `items` in a seeded random order in which no element keeps its place (Sattolo's algorithm:
/// one cycle through all of them). Needs at least two items to derange.
std::vector<std::uint32_t> derangement(std::vector<std::uint32_t> items, rng r);

/// The (source, destination) pairs of one flow per pair: every ordered pair of distinct hosts
/// (ALL_TO_ALL), each host to its image under `derangement(hosts, perm_rng)` (PERMUTATION), or
/// every other host to `target` (MANY_TO_ONE). In host order.
std::vector<std::pair<std::uint32_t, std::uint32_t>> flow_pairs(
    traffic_pattern pattern, const std::vector<std::uint32_t>& hosts, std::uint32_t target,
    rng perm_rng);

/// A sending or receiving host of a workload.
struct workload_host {
    std::uint32_t id = 0;  ///< what flows carry as src/dst (the topology node index)
    std::string name;      ///< names the host's RNG
    std::uint64_t rate_bps = 0;
    std::uint32_t site = 0;  ///< INTER_SITE / INTRA_SITE: the host's data centre
};

struct workload_params {
    traffic_pattern pattern = traffic_pattern::ALL_TO_ALL;
    std::uint32_t target = 0;  ///< MANY_TO_ONE: id of the receiving host
    double load = 0.5;         ///< offered load per sending host, fraction of its link rate
    ps_t start = 0;
    ps_t stop = 0;
    double wire_per_byte = 1;  ///< wire bytes per payload byte (headers, FCS, preamble, IFG)
    std::uint64_t max_flows = 1'000'000;
};

struct generated_flow {
    std::uint32_t src = 0;
    std::uint32_t dst = 0;
    std::uint64_t size_bytes = 0;
    ps_t start = 0;
};

/// generate() would exceed workload_params::max_flows.
class too_many_flows : public std::length_error
{
public:
    using std::length_error::length_error;
};

class workload_generator
{
public:
    /// Throws std::invalid_argument with the reason for fewer than two hosts, a MANY_TO_ONE
    /// target that is not among them, a host with no destination under INTER_SITE (one site
    /// only) or INTRA_SITE (alone in its site), a load outside (0, 1], or `stop` <= `start`.
    workload_generator(std::vector<workload_host> hosts, flow_size_distribution sizes,
                       const workload_params& params, std::uint64_t seed, std::string name);

    /// Every flow of the run, by start time (equal times in host order, then arrival order).
    /// Throws too_many_flows as soon as there would be more than max_flows.
    std::vector<generated_flow> generate() const;
    /// Mean gap between two flow arrivals at a sending host of link rate `rate_bps`.
    double mean_gap_ps(std::uint64_t rate_bps) const;

    const workload_params& params() const { return m_params; }
    const flow_size_distribution& sizes() const { return m_sizes; }

private:
    std::vector<workload_host> m_hosts;
    flow_size_distribution m_sizes;
    workload_params m_params;
    std::uint64_t m_seed;
    std::string m_name;
    /// INTER_SITE / INTRA_SITE: per host index, the host indices it may send to (in host order).
    std::vector<std::vector<std::uint32_t>> m_peers;
    std::vector<std::uint32_t> m_site_index;  ///< per host index: its index into m_peers
};

}  // namespace fabricsim::host
