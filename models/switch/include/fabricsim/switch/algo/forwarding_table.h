#pragma once
/// L3 host-route table with ECMP groups, filled by the platform. Next-hop choice among equal
/// cost ports uses a seeded hash of the IPv4 5-tuple, so one flow stays on one path.
/// Like an ASIC's exact-match host table it is a hash table: open addressing with linear
/// probing over a power-of-two array (load <= 1/2), so a lookup touches one or two slots.
#include <cstdint>
#include <vector>

#include "fabricsim/core/frame.h"

namespace fabricsim::sw {

std::uint64_t five_tuple_hash(const frame& f, std::uint64_t seed);

class forwarding_table
{
public:
    explicit forwarding_table(std::uint64_t hash_seed = 0) : m_seed(hash_seed) {}

    /// Adds the equal-cost egress ports for destination `ip` (replaces an existing entry).
    void add_route(std::uint32_t ip, const std::vector<std::uint16_t>& ports);
    /// Egress port for `f`, or -1 when there is no route.
    int lookup(const frame& f) const {
        if (m_size == 0) return -1;
        const slot& s = m_slots[find_slot(f.dst_ip)];
        if (s.count == 0) return -1;
        if (s.count == 1) return s.port;
        // Groups are mostly powers of two (2, 4, 8 uplinks): a mask avoids the 64-bit division.
        const std::uint64_t h = five_tuple_hash(f, m_seed);
        const std::uint32_t n = s.count;
        return m_ports[s.first + ((n & (n - 1)) == 0 ? h & (n - 1) : h % n)];
    }
    /// lookup() out of line, for callers off the receive path: an inlined copy there would
    /// count against GCC's inlining budget, which then moves parts of the receive path out.
    [[gnu::noinline]] int lookup_outlined(const frame& f) const;
    std::size_t size() const { return m_size; }

private:
    struct slot {
        std::uint32_t ip = 0;
        std::uint32_t first = 0;  ///< index of the group's first port in m_ports
        std::uint16_t count = 0;  ///< ports in the group; 0 = empty slot
        std::uint16_t port = 0;  ///< the first port, in the slot: a host route needs no second line
    };
    /// Slot holding ip, or the empty one to use.
    std::size_t find_slot(std::uint32_t ip) const {
        const std::size_t mask = m_slots.size() - 1;
        std::size_t i = static_cast<std::size_t>((ip * 0x9E3779B97F4A7C15ull) >> 32) & mask;
        while (m_slots[i].count != 0 && m_slots[i].ip != ip) i = (i + 1) & mask;
        return i;
    }
    void grow();

    std::uint64_t m_seed;
    std::vector<slot> m_slots;
    std::vector<std::uint16_t> m_ports;  ///< ECMP groups (2+ ports), consecutive equal ones once
    std::size_t m_size = 0;
    std::uint32_t m_last_group = 0;  ///< the group add_route() stored last
    std::size_t m_last_group_size = 0;
};

}  // namespace fabricsim::sw
