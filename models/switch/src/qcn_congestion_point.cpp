#include "fabricsim/switch/algo/qcn_congestion_point.h"

#include "fabricsim/core/frame_pool.h"
#include "fabricsim/switch/algo/egress_queues.h"

namespace fabricsim::sw {

qcn_congestion_point::qcn_congestion_point(const qcn_cp_params& cp, const qcn_port_params& port,
                                           std::uint64_t seed, const std::string& name)
    : egress_policy(port.queues, 0), m_port(port), m_rng(seed, name + ".qcn") {
    for (unsigned q = 0; q < m_cp.size(); ++q)
        if (port.queues >> q & 1) m_cp[q].emplace(cp, m_rng.next());
    // 06:xx:..: locally administered, unicast, apart from the hosts' 02:fa:.. addresses.
    const std::uint64_t h = hash_name(name);
    m_mac = {0x06,
             std::uint8_t(h >> 32),
             std::uint8_t(h >> 24),
             std::uint8_t(h >> 16),
             std::uint8_t(h >> 8),
             std::uint8_t(h)};
}

std::uint64_t qcn_congestion_point::cpid(unsigned q) const {
    std::uint64_t id = 0;
    for (std::uint8_t b : m_mac) id = id << 8 | b;
    return id << 16 | std::uint64_t(m_port.port & 0xFF) << 8 | q;
}

enqueue_verdict qcn_congestion_point::on_enqueue(const egress_queues& port, unsigned q, frame& f,
                                                 ps_t now) {
    if (!f.is_data()) return enqueue_verdict::PASS;
    const auto fb = m_cp[q]->on_enqueue(port.queue_bytes(q), f.frame_bytes(), m_rng.next());
    if (fb && emitter()) {
        frame& cnm = m_pool.acquire();
        cnm.set_cnm(f, m_mac, cpid(q), static_cast<std::uint8_t>(fb->qfb), fb->cnm_qoff,
                    fb->cnm_qdelta, m_port.cnm_priority, m_port.msdu_octets);
        cnm.created = now;
        emitter()->emit(cnm, m_port.port, now);
    }
    return enqueue_verdict::PASS;
}

}  // namespace fabricsim::sw
