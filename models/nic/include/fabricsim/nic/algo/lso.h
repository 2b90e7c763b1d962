#pragma once
/// Large send offload (LSO/TSO, plain C++, no SystemC): one TCP send of up to `max_bytes`
/// (64 KB in the HULL thesis' NICs, seed-000 §1.7) described by a template frame becomes
/// ceil(payload / mss) MSS segments, each with its own headers.
///
/// Header rules (what TSO hardware does, e.g. the Intel 82599/E810 datasheets' "TCP
/// segmentation" sections and Linux's software GSO, tcp_gso_segment): every segment copies the
/// template's L2/L3/L4 headers; sequence numbers advance by the payload before it; the IPv4 ID
/// increments by one per segment; FIN and PSH stay on the last segment only and CWR on the
/// first only (RFC 3168 §6.1.2: CWR is set once per window reduction); every other flag, the
/// ACK number, the window, the DSCP/ECN codepoint and the SACK option are copied.
/// Timing model: none here; the NIC adapter sends the segments back to back at line rate (or
/// through the rate-limiter bank) after the payload's DMA read.
#include <cstdint>
#include <optional>
#include <string>

#include "fabricsim/core/frame.h"
#include "fabricsim/core/param_error.h"

namespace fabricsim::nic {

struct lso_params {
    std::uint32_t max_bytes = 65536;  ///< largest payload one send may carry (64 KB)
    /// The offending field and why, or nothing.
    using error = param_error;
    std::optional<error> validate() const;
};

/// Segments of a TSO send whose template is `big` (kind IPV4_TCP, payload_bytes the whole send,
/// seq_no its first byte). A send with no payload is one segment (a pure ACK).
inline std::uint32_t lso_segments(const frame& big, std::uint32_t mss) {
    return big.payload_bytes == 0 ? 1u : (big.payload_bytes + mss - 1) / mss;
}

/// Payload bytes of segment `k` of `big`.
inline std::uint32_t lso_segment_payload(const frame& big, std::uint32_t mss, std::uint32_t k) {
    if (big.payload_bytes == 0) return 0;
    const std::uint64_t left = big.payload_bytes - std::uint64_t(k) * mss;
    return left < mss ? static_cast<std::uint32_t>(left) : mss;
}

/// Writes segment `k` (0-based) of `big` into `out` (a frame from the pool; its pool link is
/// kept). `mss` > 0 is the TCP payload per segment.
void lso_make_segment(const frame& big, std::uint32_t mss, std::uint32_t k, frame& out);

}  // namespace fabricsim::nic
