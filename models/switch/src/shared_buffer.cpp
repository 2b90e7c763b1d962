#include "fabricsim/switch/algo/shared_buffer.h"

namespace fabricsim::sw {

shared_buffer::shared_buffer(std::uint64_t total_bytes, unsigned ports, size_spec port_cap)
    : m_total(total_bytes), m_cap(port_cap), m_port(ports) {}

bool shared_buffer::admit(unsigned port, std::uint32_t bytes, drop_cause& why) {
    port_state& p = m_port[port];
    const bool over_cap = m_cap.packets ? p.frames + 1 > m_cap.value : p.bytes + bytes > m_cap.value;
    if (over_cap) {
        why = drop_cause::PORT_CAP;
        return false;
    }
    if (m_used + bytes > m_total) {
        why = drop_cause::SHARED_BUFFER_FULL;
        return false;
    }
    p.bytes += bytes;
    p.frames += 1;
    if (p.bytes > p.peak_bytes) p.peak_bytes = p.bytes;
    m_used += bytes;
    if (m_used > m_used_peak) m_used_peak = m_used;
    return true;
}

void shared_buffer::release(unsigned port, std::uint32_t bytes) {
    port_state& p = m_port[port];
    p.bytes -= bytes;
    p.frames -= 1;
    m_used -= bytes;
}

}  // namespace fabricsim::sw
