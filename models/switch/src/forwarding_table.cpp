#include "fabricsim/switch/algo/forwarding_table.h"

#include <algorithm>
#include <stdexcept>

#include "fabricsim/core/rng.h"

namespace fabricsim::sw {

std::uint64_t five_tuple_hash(const frame& f, std::uint64_t seed) {
    const std::uint8_t proto = f.kind == frame_kind::IPV4_TCP ? 6 : 17;
    std::uint64_t h = splitmix64(seed ^ (std::uint64_t(f.src_ip) << 32 | f.dst_ip));
    h = splitmix64(h ^ (std::uint64_t(f.src_port) << 24 | std::uint64_t(f.dst_port) << 8 | proto));
    return h;
}

int forwarding_table::lookup_outlined(const frame& f) const {
    return lookup(f);
}

void forwarding_table::grow() {
    std::vector<slot> old = std::move(m_slots);
    m_slots.assign(old.empty() ? 16 : old.size() * 2, slot{});
    for (const slot& s : old)
        if (s.count) m_slots[find_slot(s.ip)] = s;
}

void address_plan::assign(std::uint32_t ip, std::uint32_t group) {
    if (host_index_for_ipv4(ip) == NONE)
        throw std::invalid_argument("address_plan: not a host address");
    const std::uint32_t i = ip - BASE;
    if (i >= m_group.size()) m_group.resize(std::size_t(i) + 1, NONE);
    m_group[i] = group;
}

void forwarding_table::add_route(std::uint32_t ip, const std::vector<std::uint16_t>& ports) {
    if (ports.empty() || ports.size() > 0xffff)
        throw std::invalid_argument("route needs 1..65535 ports");
    if (2 * (m_size + 1) > m_slots.size()) grow();
    slot& s = m_slots[find_slot(ip)];
    if (s.count == 0) {
        ++m_size;
        count_host_route(ip);
    }
    s.ip = ip;
    set_ports(s, ports);
}

void forwarding_table::set_address_plan(std::shared_ptr<const address_plan> plan) {
    m_plan = std::move(plan);
    m_plan_groups = m_plan ? m_plan->groups().data() : nullptr;
    m_plan_size = m_plan ? static_cast<std::uint32_t>(m_plan->groups().size()) : 0;
    for (slot& g : m_groups) g.ip = 0;
    for (const slot& s : m_slots)
        if (s.count != 0) count_host_route(s.ip);
}

void forwarding_table::count_host_route(std::uint32_t ip) {
    if (!m_plan) return;
    const std::uint32_t g = m_plan->group_of(ip);
    if (g == address_plan::NONE) return;
    if (g >= m_groups.size()) m_groups.resize(std::size_t(g) + 1);
    m_group_count = static_cast<std::uint32_t>(m_groups.size());
    ++m_groups[g].ip;
}

void forwarding_table::add_group_route(std::uint32_t group,
                                       const std::vector<std::uint16_t>& ports) {
    if (ports.empty() || ports.size() > 0xffff)
        throw std::invalid_argument("route needs 1..65535 ports");
    if (group == address_plan::NONE) throw std::invalid_argument("route to no group");
    if (group >= m_groups.size()) m_groups.resize(std::size_t(group) + 1);
    m_group_count = static_cast<std::uint32_t>(m_groups.size());
    set_ports(m_groups[group], ports);
}

void forwarding_table::set_ports(slot& s, const std::vector<std::uint16_t>& ports) {
    s.count = static_cast<std::uint16_t>(ports.size());
    s.port = ports.front();
    s.first = 0;
    if (ports.size() == 1) return;  // the slot holds it
    // Hosts (groups) behind one switch are added in a row with the same ports: store it once.
    if (m_last_group_size == ports.size() &&
        std::equal(ports.begin(), ports.end(), m_ports.begin() + m_last_group)) {
        s.first = m_last_group;
        return;
    }
    s.first = m_last_group = static_cast<std::uint32_t>(m_ports.size());
    m_last_group_size = ports.size();
    m_ports.insert(m_ports.end(), ports.begin(), ports.end());
}

}  // namespace fabricsim::sw
