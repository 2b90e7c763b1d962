#pragma once
/// The 802.1Qau congestion points of one egress port as an egress_policy: one qcn_cp
/// (algo/qcn_cp.h) per queue that carries a CNPV priority. Each data frame entering such a
/// queue (counted in it) feeds that queue's CP; a sample with congestion makes a CNM to the
/// sampled frame's source (frame::set_cnm) that the switch forwards like any frame
/// (frame_emitter), leaving the port's decision at the same time.
/// Timing model: untimed (the port calls it at the enqueue decision); the CNM enters the
/// forwarding path at that time and pays the pipeline latency, its queue and its wire time.
/// The CP's MAC is a locally administered address from the port's name; its CPID is that MAC
/// followed by the port and the queue (facts-l2 §3.4: "typically the CP MAC plus a queue
/// index"). CNMs and other non-data frames are neither sampled nor counted.
#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "fabricsim/core/frame.h"
#include "fabricsim/core/frame_pool.h"
#include "fabricsim/core/rng.h"
#include "fabricsim/switch/algo/egress_policy.h"
#include "fabricsim/switch/algo/qcn_cp.h"

namespace fabricsim::sw {

/// What the port's CPs need besides the qcn_cp parameters.
struct qcn_port_params {
    std::uint8_t queues = 0;        ///< CP queues (bit q)
    std::uint8_t cnm_priority = 6;  ///< cnmTransmitPriority: the CNM's PCP when tagged
    std::uint8_t msdu_octets = 64;  ///< leading octets of the sampled MSDU the CNM carries
    unsigned port = 0;              ///< the deciding port (where emitted CNMs enter)
};

class qcn_congestion_point final : public egress_policy
{
public:
    /// `name` names the port (its CP MAC and RNG stream derive from it and `seed`).
    qcn_congestion_point(const qcn_cp_params& cp, const qcn_port_params& port, std::uint64_t seed,
                         const std::string& name);
    enqueue_verdict on_enqueue(const egress_queues& port, unsigned q, frame& f, ps_t now) override;
    /// Queue q's CP, nullptr if q is not a CP queue.
    const qcn_cp* cp(unsigned q) const { return m_cp[q] ? &*m_cp[q] : nullptr; }
    const mac_addr& mac() const { return m_mac; }
    std::uint64_t cpid(unsigned q) const;

private:
    frame_pool& m_pool = frame_pool::current();  // the platform's (frame_pool::scope)
    std::array<std::optional<qcn_cp>, 8> m_cp;
    qcn_port_params m_port;
    mac_addr m_mac{};
    rng m_rng;
};

}  // namespace fabricsim::sw
