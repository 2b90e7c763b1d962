#pragma once
/// Shared packet buffer with a per-egress-port cap and tail drop (first switch model; the
/// cell-based MMU with PG/queue accounting and dynamic thresholds replaces it later).
/// Accounting unit: frame bytes (L2 + FCS). A frame is admitted if the buffer has room and
/// its egress port stays within its cap (bytes or frames); it is released when its first bit
/// leaves (cells are read out as the frame is serialised).
#include <cstdint>
#include <vector>

#include "fabricsim/core/stats.h"
#include "fabricsim/core/units.h"

namespace fabricsim::sw {

class shared_buffer {
public:
    shared_buffer(std::uint64_t total_bytes, unsigned ports, size_spec port_cap);

    /// Returns true and reserves space, or false with the drop cause.
    bool admit(unsigned port, std::uint32_t bytes, drop_cause& why);
    void release(unsigned port, std::uint32_t bytes);

    std::uint64_t used() const { return m_used; }
    std::uint64_t used_peak() const { return m_used_peak; }
    std::uint64_t total() const { return m_total; }
    std::uint64_t port_bytes(unsigned p) const { return m_port[p].bytes; }
    std::uint64_t port_frames(unsigned p) const { return m_port[p].frames; }
    std::uint64_t port_peak_bytes(unsigned p) const { return m_port[p].peak_bytes; }

private:
    struct port_state {
        std::uint64_t bytes = 0;
        std::uint64_t frames = 0;
        std::uint64_t peak_bytes = 0;
    };
    std::uint64_t m_total;
    size_spec m_cap;
    std::uint64_t m_used = 0;
    std::uint64_t m_used_peak = 0;
    std::vector<port_state> m_port;
};

}  // namespace fabricsim::sw
