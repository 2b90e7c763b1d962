#pragma once
/// L3 host-route table with ECMP groups, filled by the platform. Next-hop choice among equal
/// cost ports uses a seeded hash of the IPv4 5-tuple, so one flow stays on one path.
/// Like an ASIC's exact-match host table it is a hash table: open addressing with linear
/// probing over a power-of-two array (load <= 1/2), so a lookup touches one or two slots.
/// Behind it, as a fabric routes by rack prefix, a table of destination groups: an address the
/// host table lacks is looked up by its group (its rack: the edge switch it hangs off), which
/// the platform's shared address_plan gives. So a switch holds a route per rack and its own
/// hosts' routes, not one per host of the fabric (24 B per host and switch: 126 MB at 9984
/// hosts).
#include <cstdint>
#include <memory>
#include <vector>

#include "fabricsim/core/frame.h"

namespace fabricsim::sw {

std::uint64_t five_tuple_hash(const frame& f, std::uint64_t seed);

/// Host address -> destination group (rack), one per platform, shared by its switches.
/// Addresses are those of ipv4_for_host(): the map is an array by address - 10.0.0.0.
class address_plan
{
public:
    static constexpr std::uint32_t NONE = ~std::uint32_t(0);
    static constexpr std::uint32_t BASE = 0x0a000000;  ///< 10.0.0.0
    void assign(std::uint32_t ip, std::uint32_t group);
    std::uint32_t group_of(std::uint32_t ip) const {
        const std::uint32_t i = ip - BASE;
        return i < m_group.size() ? m_group[i] : NONE;
    }
    const std::vector<std::uint32_t>& groups() const { return m_group; }

private:
    std::vector<std::uint32_t> m_group;  ///< by address - BASE; NONE: no group
};

class forwarding_table
{
public:
    explicit forwarding_table(std::uint64_t hash_seed = 0) : m_seed(hash_seed) {}

    /// Adds the equal-cost egress ports for destination `ip` (replaces an existing entry).
    void add_route(std::uint32_t ip, const std::vector<std::uint16_t>& ports);
    /// Destinations without a host route are looked up by their group in `plan`, which must
    /// be complete: assign() calls after this are not seen.
    void set_address_plan(std::shared_ptr<const address_plan> plan);
    /// Adds the equal-cost egress ports for destination group `group` (replaces an entry).
    void add_group_route(std::uint32_t group, const std::vector<std::uint16_t>& ports);
    /// Egress port for `f`, or -1 when there is no route.
    int lookup(const frame& f) const {
        const slot* found = find(f.dst_ip);
        if (found == nullptr) return -1;
        const slot& s = *found;
        if (s.count == 1) return s.port;
        // Groups are mostly powers of two (2, 4, 8 uplinks): a mask avoids the 64-bit division.
        const std::uint64_t h = five_tuple_hash(f, m_seed);
        const std::uint32_t n = s.count;
        return m_ports[s.first + ((n & (n - 1)) == 0 ? h & (n - 1) : h % n)];
    }
    /// lookup() out of line, for callers off the receive path: an inlined copy there would
    /// count against GCC's inlining budget, which then moves parts of the receive path out.
    [[gnu::noinline]] int lookup_outlined(const frame& f) const;
    /// Host routes held.
    std::size_t size() const { return m_size; }

private:
    struct slot {
        /// The host's address; in a group's slot, how many host routes the group has (a
        /// lookup of a group with none skips the host table).
        std::uint32_t ip = 0;
        std::uint32_t first = 0;  ///< index of the group's first port in m_ports
        std::uint16_t count = 0;  ///< ports in the group; 0 = empty slot
        std::uint16_t port = 0;  ///< the first port, in the slot: a host route needs no second line
    };
    /// The route for `ip`: its host route, else its group's; nullptr if neither. A group
    /// without host routes (every group but a switch's own rack) needs no host-table probe.
    const slot* find(std::uint32_t ip) const {
        const slot* group = nullptr;
        // The plan's array and the group slots by raw pointer and size: set_address_plan()
        // fixes both, and the receive path then pays two bounds checks and two loads.
        const std::uint32_t i = ip - address_plan::BASE;
        if (i < m_plan_size) {
            const std::uint32_t g = m_plan_groups[i];
            if (g < m_group_count) {
                group = &m_groups[g];
                if (group->ip == 0) return group->count != 0 ? group : nullptr;
            }
        }
        if (m_size != 0) {
            const slot& s = m_slots[find_slot(ip)];
            if (s.count != 0) return &s;
        }
        return group != nullptr && group->count != 0 ? group : nullptr;
    }
    /// Slot holding ip, or the empty one to use.
    std::size_t find_slot(std::uint32_t ip) const {
        const std::size_t mask = m_slots.size() - 1;
        std::size_t i = static_cast<std::size_t>((ip * 0x9E3779B97F4A7C15ull) >> 32) & mask;
        while (m_slots[i].count != 0 && m_slots[i].ip != ip) i = (i + 1) & mask;
        return i;
    }
    void grow();
    /// Counts a host route in its group's slot (the plan's group of `ip`, if any).
    void count_host_route(std::uint32_t ip);
    /// Fills s with `ports` (a group stored once when the previous route had the same).
    void set_ports(slot& s, const std::vector<std::uint16_t>& ports);

    std::uint64_t m_seed;
    std::vector<slot> m_slots;
    std::shared_ptr<const address_plan> m_plan;
    const std::uint32_t* m_plan_groups = nullptr;  ///< m_plan's array (it does not change)
    std::uint32_t m_plan_size = 0;
    std::vector<slot> m_groups;          ///< by destination group
    std::uint32_t m_group_count = 0;     ///< m_groups.size(), without the division by 12
    std::vector<std::uint16_t> m_ports;  ///< ECMP groups (2+ ports), consecutive equal ones once
    std::size_t m_size = 0;
    std::uint32_t m_last_group = 0;  ///< the group add_route() stored last
    std::size_t m_last_group_size = 0;
};

}  // namespace fabricsim::sw
