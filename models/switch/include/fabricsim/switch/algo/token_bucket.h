#pragma once
/// Token-bucket shaper of an egress queue or port (plain C++, no SystemC). Models: tokens
/// refilled continuously at rate_bps from the last update, capped at burst_bytes; a frame may go
/// when the tokens cover its bytes, and sending takes them. Bytes are whatever the caller counts
/// (typically wire bytes). Exact integer arithmetic in units of 1e-12 bit (rate_bps x elapsed ps
/// adds exactly rate_bps x elapsed units), so long runs do not drift; times are whole ps, rounded
/// up. Ignored: token-update granularity of real shapers (refresh intervals), and frames larger
/// than the burst (config validation enforces burst >= MTU; such a frame waits for a full bucket
/// and leaves it in debt, so the long-run rate still holds).
#include <cstdint>

#include "fabricsim/core/units.h"

namespace fabricsim::sw {

/// Token-bucket shaper (rate, burst), exact integer arithmetic; rate 0 = no shaping.
class token_bucket
{
public:
    token_bucket() = default;  ///< unlimited (rate 0 = no shaping)
    /// Starts full. rate_bps 0 gives an unlimited bucket (burst ignored); otherwise throws
    /// std::invalid_argument if burst_bytes < 64.
    token_bucket(std::uint64_t rate_bps, std::uint64_t burst_bytes);
    bool unlimited() const { return m_rate == 0; }
    /// Earliest time >= now at which `bytes` may be sent (now if enough tokens now). Saturates
    /// at the largest ps_t.
    ps_t ready_at(std::uint32_t bytes, ps_t now) const;
    /// Take `bytes` of tokens at `now` (caller checked ready_at(bytes, now) == now).
    void consume(std::uint32_t bytes, ps_t now);
    /// Tokens held at `now`, in bytes (for tests and statistics; +inf when unlimited).
    double tokens_bytes(ps_t now) const;
    std::uint64_t rate_bps() const { return m_rate; }
    std::uint64_t burst_bytes() const { return m_burst; }

    /// Token units per byte: 8 bits in units of 1e-12 bit.
    static constexpr std::uint64_t UNITS_PER_BYTE = 8 * PS_PER_S;

private:
    __extension__ typedef __int128 i128;

    i128 tokens_at(ps_t now) const;  ///< tokens (units) after refilling up to `now`

    std::uint64_t m_rate = 0;
    std::uint64_t m_burst = 0;
    i128 m_cap = 0;     ///< burst in units (<= 2^64 x 8e12 < 2^107)
    i128 m_tokens = 0;  ///< in units; negative only after a frame larger than the burst
    ps_t m_last = 0;    ///< time m_tokens refers to
};

}  // namespace fabricsim::sw
