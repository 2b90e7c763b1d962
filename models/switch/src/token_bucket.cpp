#include "fabricsim/switch/algo/token_bucket.h"

#include <limits>
#include <stdexcept>

namespace fabricsim::sw {

namespace {
__extension__ typedef unsigned __int128 u128;
constexpr ps_t PS_MAX = std::numeric_limits<ps_t>::max();
}  // namespace

token_bucket::token_bucket(std::uint64_t rate_bps, std::uint64_t burst_bytes)
    : m_rate(rate_bps), m_burst(rate_bps == 0 ? 0 : burst_bytes) {
    if (m_rate != 0 && burst_bytes < 64)
        throw std::invalid_argument("token_bucket: burst must be >= 64 bytes");
    m_cap = static_cast<i128>(static_cast<u128>(m_burst) * UNITS_PER_BYTE);
    m_tokens = m_cap;
}

// No overflow: rate and elapsed are < 2^64, so their product fits u128; it is compared with the
// room below the cap (< 2^108) before it is added, which caps elapsed time without a division.
token_bucket::i128 token_bucket::tokens_at(ps_t now) const {
    if (now <= m_last) return m_tokens;
    const u128 added = static_cast<u128>(m_rate) * (now - m_last);
    const u128 room = static_cast<u128>(m_cap - m_tokens);
    return added >= room ? m_cap : m_tokens + static_cast<i128>(added);
}

ps_t token_bucket::ready_at(std::uint32_t bytes, ps_t now) const {
    if (unlimited()) return now;
    const i128 need = static_cast<i128>(bytes) * static_cast<i128>(UNITS_PER_BYTE);
    const i128 want = need < m_cap ? need : m_cap;  // above the burst: wait for a full bucket
    const i128 have = tokens_at(now);
    if (have >= want) return now;
    // Tokens grow linearly until the cap >= want, so the wait is the missing units over the
    // rate, rounded up so the tokens really suffice at the returned ps.
    const u128 missing = static_cast<u128>(want - have);
    const u128 wait = (missing + m_rate - 1) / m_rate;
    if (wait > static_cast<u128>(PS_MAX - now)) return PS_MAX;
    return now + static_cast<ps_t>(wait);
}

void token_bucket::consume(std::uint32_t bytes, ps_t now) {
    if (unlimited()) return;
    m_tokens = tokens_at(now);
    if (now > m_last) m_last = now;
    m_tokens -= static_cast<i128>(bytes) * static_cast<i128>(UNITS_PER_BYTE);
}

double token_bucket::tokens_bytes(ps_t now) const {
    if (unlimited()) return std::numeric_limits<double>::infinity();
    return static_cast<double>(tokens_at(now)) / static_cast<double>(UNITS_PER_BYTE);
}

}  // namespace fabricsim::sw
