#include "fabricsim/switch/egress_port.h"

#include <algorithm>
#include <string>

namespace fabricsim::sw {

egress_port::egress_port(const sc_core::sc_module_name& name, unsigned index,
                         const switch_config& cfg, mmu& buffer, pool_backlog& pools,
                         std::uint64_t rate_bps, std::uint64_t seed)
    : sc_core::sc_module(name),
      m_queues(cfg, index, buffer, pools, rate_bps, seed, std::string(this->name())) {}

void egress_port::arm_next(ps_t now) {
    if (m_queues.queued_frames() == 0) return;
    const ps_t wire_free = std::max(now, m_queues.busy_until());
    if (m_wake.pending() && m_wake.expiry() <= wire_free) return;  // nothing can go earlier
    const ps_t next = m_queues.next_start(wire_free);
    if (next != egress_gate::UNTIL_TOLD) m_wake.arm_at(next);
}

void egress_port::on_wake() {
    const ps_t now = now_ps();
    if (m_queues.busy_until() <= now)
        if (frame* f = m_queues.try_start(now)) send(*f, now, now);
    arm_next(now);
}

}  // namespace fabricsim::sw
