#pragma once
/// The 802.3x queue-triggered ON/OFF variant of seed-003 §1.9 (FERA thesis §7.7) as an egress
/// policy: a queue is congested from the arrival that takes it above Q_on until the departure
/// that leaves it below Q_off (frames or frame bytes); the switch then sends PAUSE ON / OFF on
/// its other ports (pause_generator).
/// Timing model: untimed; decided at the frame's enqueue and dequeue decisions.
#include <cstdint>

#include "fabricsim/switch/algo/egress_policy.h"
#include "fabricsim/switch/algo/egress_queues.h"

namespace fabricsim::sw {

/// Told when a queue of port `port` becomes congested or stops being so.
class queue_congestion_listener
{
public:
    virtual ~queue_congestion_listener() = default;
    virtual void queue_congestion(unsigned port, bool congested) = 0;
};

class queue_pause_trigger final : public egress_policy
{
public:
    queue_pause_trigger(std::uint8_t queues, std::uint64_t q_on, std::uint64_t q_off, bool frames,
                        queue_congestion_listener& to)
        : egress_policy(queues, queues), m_on(q_on), m_off(q_off), m_frames(frames), m_to(to) {}
    enqueue_verdict on_enqueue(const egress_queues& port, unsigned q, frame& /*f*/,
                               ps_t /*now*/) override {
        const std::uint64_t occ = m_frames ? port.deciding_frames(q) : port.queue_bytes(q);
        if (!(m_congested >> q & 1) && occ > m_on) {
            m_congested = static_cast<std::uint8_t>(m_congested | 1u << q);
            m_to.queue_congestion(port.index(), true);
        }
        return enqueue_verdict::PASS;
    }
    bool on_dequeue(const egress_queues& port, unsigned q, frame& f, std::uint32_t /*wire*/,
                    ps_t /*at*/) override {
        // The queue the frame leaves behind, without it.
        const std::uint64_t left =
            m_frames ? port.deciding_frames(q) - 1 : port.queue_bytes(q) - f.frame_bytes();
        if ((m_congested >> q & 1) && left < m_off) {
            m_congested = static_cast<std::uint8_t>(m_congested & ~(1u << q));
            m_to.queue_congestion(port.index(), false);
        }
        return false;
    }
    std::uint8_t congested() const { return m_congested; }

private:
    std::uint64_t m_on;
    std::uint64_t m_off;
    bool m_frames;
    std::uint8_t m_congested = 0;
    queue_congestion_listener& m_to;
};

}  // namespace fabricsim::sw
