#include "fabricsim/nic/algo/rate_limiter.h"

namespace fabricsim::nic {

void rate_limiter::sent(std::uint32_t wire_bytes, ps_t start) {
    if (m_rate_bps == 0) {  // unlimited: no spacing
        m_next_free = start;
        return;
    }
    // The remainder of each division is carried to the next frame: the long-run rate is exact.
    __extension__ using u128 = unsigned __int128;
    const u128 num = u128(wire_bytes) * 8u * PS_PER_S + m_carry;
    m_next_free = start + static_cast<ps_t>(num / m_rate_bps);
    m_carry = static_cast<std::uint64_t>(num % m_rate_bps);
}

int rate_limiter_bank::bind(std::uint32_t flow) {
    if (const int l = limiter_of(flow); l != NONE) return l;
    if (m_limiters.empty()) return NONE;
    int chosen = NONE;
    for (unsigned i = 0; i < m_limiters.size(); ++i)
        if (m_users[i] == 0) {
            chosen = int(i);
            break;
        }
    if (chosen == NONE) {
        chosen = int(flow % m_limiters.size());
        m_stats.shared_bindings++;
    } else {
        m_stats.bindings++;
        m_in_use++;
        if (m_in_use > m_stats.peak_in_use) m_stats.peak_in_use = m_in_use;
        m_limiters[unsigned(chosen)] = rate_limiter{};  // a fresh pacer for a fresh binding
    }
    m_users[unsigned(chosen)]++;
    m_bound.emplace(flow, chosen);
    return chosen;
}

void rate_limiter_bank::release(std::uint32_t flow) {
    const auto it = m_bound.find(flow);
    if (it == m_bound.end()) return;
    const auto l = unsigned(it->second);
    m_bound.erase(it);
    m_stats.releases++;
    if (--m_users[l] == 0) m_in_use--;
}

}  // namespace fabricsim::nic
