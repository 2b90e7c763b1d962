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

void forwarding_table::add_route(std::uint32_t ip, const std::vector<std::uint16_t>& ports) {
    if (ports.empty() || ports.size() > 0xffff)
        throw std::invalid_argument("route needs 1..65535 ports");
    if (2 * (m_size + 1) > m_slots.size()) grow();
    slot& s = m_slots[find_slot(ip)];
    if (s.count == 0) ++m_size;
    s.ip = ip;
    s.count = static_cast<std::uint16_t>(ports.size());
    s.port = ports.front();
    s.first = 0;
    if (ports.size() == 1) return;  // the slot holds it
    // Hosts behind one switch are added in a row with the same ports: store the group once.
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
