#include "fabricsim/nic/algo/lso.h"

namespace fabricsim::nic {

std::optional<lso_params::error> lso_params::validate() const {
    // 16 bits of IPv4 total length and the 64 KB of every TSO engine.
    if (max_bytes < 1 || max_bytes > 262144)
        return error{"max_bytes", "must be 1 B .. 256 KiB (got " + std::to_string(max_bytes) + ")"};
    return std::nullopt;
}

void lso_make_segment(const frame& big, std::uint32_t mss, std::uint32_t k, frame& out) {
    frame* const link = out.pool_next;
    out = big;
    out.pool_next = link;
    const std::uint64_t offset = std::uint64_t(k) * mss;
    const std::uint32_t n = lso_segments(big, mss);
    const std::uint32_t payload = lso_segment_payload(big, mss, k);
    out.seq_no = big.seq_no + offset;
    out.tcp_seq = static_cast<std::uint32_t>(out.seq_no);
    out.ip_id = static_cast<std::uint16_t>(big.ip_id + k);
    std::uint8_t flags = big.tcp_flags;
    if (k + 1 != n) flags &= static_cast<std::uint8_t>(~(tcp_flag::FIN | tcp_flag::PSH));
    if (k != 0) flags &= static_cast<std::uint8_t>(~tcp_flag::CWR);
    out.tcp_flags = flags;
    out.set_ipv4(frame_kind::IPV4_TCP, payload);
}

}  // namespace fabricsim::nic
