#include "fabricsim/switch/algo/bcn_congestion_point.h"

#include <algorithm>
#include <cmath>

#include "fabricsim/core/frame_pool.h"
#include "fabricsim/core/rng.h"
#include "fabricsim/switch/algo/egress_queues.h"

namespace fabricsim::sw {

bcn_congestion_point::bcn_congestion_point(const bcn_cp_params& cp, const bcn_port_params& port,
                                           std::uint64_t seed, const std::string& name)
    : egress_policy(port.queues, 0), m_port(port) {
    for (unsigned q = 0; q < m_cp.size(); ++q)
        if (port.queues >> q & 1) m_cp[q].emplace(cp, seed, name + ".bcn.q" + std::to_string(q));
    // 06:xx:..: locally administered, unicast, apart from the hosts' 02:fa:.. addresses.
    const std::uint64_t h = hash_name(name);
    m_mac = {0x06,
             std::uint8_t(h >> 32),
             std::uint8_t(h >> 24),
             std::uint8_t(h >> 16),
             std::uint8_t(h >> 8),
             std::uint8_t(h)};
    m_cpid_hash = static_cast<std::uint16_t>(h >> 40);
}

std::uint32_t bcn_congestion_point::cpid(unsigned q) const {
    // Never 0 (0 = untagged): the queue index is stored + 1.
    return std::uint32_t(m_cpid_hash) << 16 | std::uint32_t(m_port.port & 0xFF) << 8 | (q + 1);
}

enqueue_verdict bcn_congestion_point::on_enqueue(const egress_queues& port, unsigned q, frame& f,
                                                 ps_t now) {
    if (!f.is_data()) return enqueue_verdict::PASS;
    const std::uint32_t id = cpid(q);
    const bcn_feedback fb = m_cp[q]->on_arrival(port.queue_bytes(q), f.rrt_cpid == id);
    if (fb.message == bcn_message::NONE) return enqueue_verdict::PASS;
    if (fb.message != bcn_message::STOP) {
        const long bin = std::clamp<long>(std::lround(fb.fb), FB_MIN, FB_MAX) - FB_MIN;
        ++m_fb_hist[q][static_cast<std::size_t>(bin)];
        m_fb_abs_sum[q] += std::abs(fb.fb);
        if (fb.fb < 0) m_fb_neg_abs_sum[q] -= fb.fb;
    }
    if (emitter()) {
        frame& msg = m_pool.acquire();
        msg.set_bcn(f, m_mac, id, fb.q_off, fb.q_delta, fb.fb, fb.message == bcn_message::STOP,
                    m_port.message_priority, m_port.msdu_octets);
        msg.created = now;
        emitter()->emit(msg, m_port.port, now);
    }
    return enqueue_verdict::PASS;
}

}  // namespace fabricsim::sw
