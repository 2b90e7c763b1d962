#pragma once
/// The BCN congestion points of one egress port as an egress_policy: one bcn_cp
/// (algo/bcn_cp.h) per queue of a BCN priority. Each data frame entering such a queue (counted
/// in it) feeds that queue's CP with the frame's rate-regulator tag; a sample that decides a
/// message makes a BCN frame to the sampled frame's source (frame::set_bcn) that the switch
/// forwards like any frame (frame_emitter), as the QCN CP does with its CNMs.
/// Timing model: untimed (the port calls it at the enqueue decision); the message enters the
/// forwarding path at that time and pays the pipeline latency, its queue and its wire time.
/// The CP's MAC is a locally administered address from the port's name (06:.., as QCN's); its
/// 32-bit CPID (the RRT is 32 bits here) is 16 bits of that name's hash, the port and the
/// queue. BCN messages and other non-data frames are neither sampled nor counted.
#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "fabricsim/core/frame.h"
#include "fabricsim/core/frame_pool.h"
#include "fabricsim/switch/algo/bcn_cp.h"
#include "fabricsim/switch/algo/egress_policy.h"

namespace fabricsim::sw {

/// What the port's CPs need besides the bcn_cp parameters.
struct bcn_port_params {
    std::uint8_t queues = 0;            ///< CP queues (bit q)
    std::uint8_t message_priority = 6;  ///< the message's PCP when the sampled frame was tagged
    std::uint8_t msdu_octets = 64;      ///< leading octets of the sampled MSDU the message carries
    unsigned port = 0;                  ///< the deciding port (where emitted messages enter)
};

class bcn_congestion_point final : public egress_policy
{
public:
    /// Fb histogram: bins of one fb unit from FB_MIN to FB_MAX (outside: the end bins).
    static constexpr int FB_MIN = -64, FB_MAX = 64;
    static constexpr std::size_t FB_BINS = FB_MAX - FB_MIN + 1;

    /// `name` names the port (its CP MAC, CPIDs and RNG streams derive from it and `seed`).
    bcn_congestion_point(const bcn_cp_params& cp, const bcn_port_params& port, std::uint64_t seed,
                         const std::string& name);
    enqueue_verdict on_enqueue(const egress_queues& port, unsigned q, frame& f, ps_t now) override;
    /// Queue q's CP, nullptr if q is not a CP queue.
    const bcn_cp* cp(unsigned q) const { return m_cp[q] ? &*m_cp[q] : nullptr; }
    const mac_addr& mac() const { return m_mac; }
    std::uint32_t cpid(unsigned q) const;
    /// Queue q's messages by Fb (negative and positive sent, rounded to a whole unit).
    const std::array<std::uint64_t, FB_BINS>& fb_histogram(unsigned q) const {
        return m_fb_hist[q];
    }
    /// Queue q's sum of |Fb| over its negative and positive messages (unrounded).
    double fb_abs_sum(unsigned q) const { return m_fb_abs_sum[q]; }
    /// The same over its negative messages only.
    double fb_negative_abs_sum(unsigned q) const { return m_fb_neg_abs_sum[q]; }

private:
    frame_pool& m_pool = frame_pool::current();  // the platform's (frame_pool::scope)
    std::array<std::optional<bcn_cp>, 8> m_cp;
    std::array<std::array<std::uint64_t, FB_BINS>, 8> m_fb_hist{};
    std::array<double, 8> m_fb_abs_sum{};
    std::array<double, 8> m_fb_neg_abs_sum{};
    bcn_port_params m_port;
    mac_addr m_mac{};
    std::uint16_t m_cpid_hash = 0;
};

}  // namespace fabricsim::sw
