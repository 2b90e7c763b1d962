#include "fabricsim/platforms/connection_pool.h"

#include <stdexcept>

namespace fabricsim::platforms {

connection_pool::connection_pool(const std::vector<std::uint32_t>& connections, rng r) : m_rng(r) {
    m_pairs.resize(connections.size());
    for (std::size_t p = 0; p < connections.size(); ++p) {
        if (connections[p] == 0) throw std::invalid_argument("a pair without connections");
        pair_state& s = m_pairs[p];
        s.busy.assign(connections[p], false);
        for (std::uint32_t c = 0; c < connections[p]; ++c) s.idle.push_back(c);
    }
}

std::uint32_t connection_pool::arrive(std::uint32_t p, std::uint32_t m) {
    pair_state& s = m_pairs.at(p);
    if (s.idle.empty()) {
        s.waiting.push_back(m);
        ++m_queued;
        return NONE;
    }
    const auto i = static_cast<std::size_t>(m_rng.below(s.idle.size()));
    const std::uint32_t c = s.idle[i];
    s.idle[i] = s.idle.back();
    s.idle.pop_back();
    s.busy[c] = true;
    return c;
}

std::uint32_t connection_pool::finish(std::uint32_t p, std::uint32_t c) {
    pair_state& s = m_pairs.at(p);
    if (c >= s.busy.size() || !s.busy[c])
        throw std::logic_error("connection_pool::finish: connection is not busy");
    if (!s.waiting.empty()) {
        const std::uint32_t m = s.waiting.front();
        s.waiting.pop_front();
        return m;
    }
    s.busy[c] = false;
    s.idle.push_back(c);
    return NONE;
}

}  // namespace fabricsim::platforms
