#pragma once
/// L3 host-route table with ECMP groups, filled by the platform. Next-hop choice among equal
/// cost ports uses a seeded hash of the IPv4 5-tuple, so one flow stays on one path.
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "fabricsim/core/frame.h"

namespace fabricsim::sw {

std::uint64_t five_tuple_hash(const frame& f, std::uint64_t seed);

class forwarding_table {
public:
    explicit forwarding_table(std::uint64_t hash_seed = 0) : m_seed(hash_seed) {}

    /// Adds the equal-cost egress ports for destination `ip` (replaces an existing entry).
    void add_route(std::uint32_t ip, std::vector<std::uint16_t> ports);
    /// Egress port for `f`, or -1 when there is no route.
    int lookup(const frame& f) const;
    const std::vector<std::uint16_t>* ports_for(std::uint32_t ip) const;
    std::size_t size() const { return m_routes.size(); }

private:
    std::uint64_t m_seed;
    std::unordered_map<std::uint32_t, std::vector<std::uint16_t>> m_routes;
};

}  // namespace fabricsim::sw
