#include "fabricsim/switch/egress_port.h"

#include "fabricsim/core/frame_pool.h"
#include "fabricsim/core/kernel.h"

namespace fabricsim::sw {

egress_port::egress_port(const sc_core::sc_module_name& name, unsigned index, shared_buffer& buffer,
                         std::uint64_t rate_bps)
    : sc_core::sc_module(name), m_index(index), m_buffer(buffer), m_rate_bps(rate_bps) {
}

void egress_port::enqueue(frame& f, ps_t ready) {
    const ps_t now = now_ps();
    drop_cause why;
    if (!m_buffer.admit(m_index, f.frame_bytes(), why)) {
        m_stats.drops.add(why);
        frame_pool::global().release(f);
        return;
    }
    if (idle_at(ready)) {
        start(f, ready, now);
        return;
    }
    m_stats.enqueued++;
    if (m_queue.empty()) m_wire_free.arm_at(std::max(m_busy_until, ready));
    m_queue.push_back({&f, ready});
}

void egress_port::on_wire_free() {
    const ps_t now = now_ps();
    entry e = m_queue.pop_front();
    start(*e.f, std::max(now, e.ready), now);
    if (!m_queue.empty()) m_wire_free.arm_at(std::max(m_busy_until, m_queue.front().ready));
}

void egress_port::start(frame& f, ps_t at, ps_t now) {
    m_buffer.release(m_index, f.frame_bytes());
    m_stats.tx_frames++;
    m_stats.tx_bytes += f.frame_bytes();
    m_busy_until = now + to_ps(tx.send(f, to_sc_time(at - now)));
}

}  // namespace fabricsim::sw
