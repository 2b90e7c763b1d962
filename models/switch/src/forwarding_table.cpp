#include "fabricsim/switch/algo/forwarding_table.h"

#include "fabricsim/core/rng.h"

namespace fabricsim::sw {

std::uint64_t five_tuple_hash(const frame& f, std::uint64_t seed) {
    const std::uint8_t proto = f.kind == frame_kind::IPV4_TCP ? 6 : 17;
    std::uint64_t h = splitmix64(seed ^ (std::uint64_t(f.src_ip) << 32 | f.dst_ip));
    h = splitmix64(h ^ (std::uint64_t(f.src_port) << 24 | std::uint64_t(f.dst_port) << 8 | proto));
    return h;
}

void forwarding_table::add_route(std::uint32_t ip, std::vector<std::uint16_t> ports) {
    m_routes[ip] = std::move(ports);
}

const std::vector<std::uint16_t>* forwarding_table::ports_for(std::uint32_t ip) const {
    auto it = m_routes.find(ip);
    return it == m_routes.end() ? nullptr : &it->second;
}

int forwarding_table::lookup(const frame& f) const {
    auto it = m_routes.find(f.dst_ip);
    if (it == m_routes.end() || it->second.empty()) return -1;
    const auto& ports = it->second;
    if (ports.size() == 1) return ports[0];
    return ports[five_tuple_hash(f, m_seed) % ports.size()];
}

}  // namespace fabricsim::sw
