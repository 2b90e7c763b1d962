#pragma once
/// Marking and sampling policies of an egress port (plain C++, no SystemC): what decides on a
/// frame as it enters a queue (mark CE, drop, sample) and as it starts on the wire (mark CE).
/// The ECN/RED family (`red_marking`, `step_marking`, with standard, minimum or MQ-ECN
/// per-queue thresholds) and the HULL phantom queue (`phantom_marking`) implement it; the
/// congestion points of 802.1Qau/BCN/FERA will: they see every arriving frame and the queue
/// lengths and can send a frame back through a `frame_emitter`.
/// Timing model: untimed; the port calls a policy at the frame's decision time (enqueue: when
/// it leaves the pipeline into the queue; dequeue: its first bit), with the frame counted in
/// its queue's, the port's and the pool's occupancy.
#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fabricsim/core/frame.h"
#include "fabricsim/core/rng.h"
#include "fabricsim/core/stats.h"
#include "fabricsim/core/units.h"
#include "fabricsim/switch/algo/aqm.h"

namespace fabricsim::sw {

class egress_queues;

/// Sends a frame a policy built (a congestion notification) into the switch's forwarding path
/// at `at` (>= the decision's time), as if it arrived on port `from_port` (the deciding egress
/// port); implemented by the switch. Takes ownership of the pooled frame.
class frame_emitter
{
public:
    virtual ~frame_emitter() = default;
    virtual void emit(frame& f, unsigned from_port, ps_t at) = 0;
};

enum class enqueue_verdict : std::uint8_t { PASS, MARK, DROP };

/// An occupancy of the deciding queue (frames incl. the one decided, or bytes) at or below
/// `value` passes the policy with no state change, so the port may skip the call.
struct pass_bound {
    double value = -std::numeric_limits<double>::infinity();  ///< none: called for every frame
    bool frames = false;
    /// The bound follows the port's MQ-ECN round time: the port refreshes it from its
    /// mq_ecn_estimator after round samples (min_threshold()).
    bool follows_mq_ecn = false;
};

class egress_policy
{
public:
    virtual ~egress_policy() = default;
    /// Queues whose arrivals (bit q) and departures the policy sees.
    std::uint8_t enqueue_mask() const { return m_enqueue_mask; }
    std::uint8_t dequeue_mask() const { return m_dequeue_mask; }
    virtual pass_bound bound() const { return {}; }
    /// Frame `f` arrives in queue q at `now` (counted in `port`'s occupancy).
    virtual enqueue_verdict on_enqueue(const egress_queues& /*port*/, unsigned /*q*/, frame& /*f*/,
                                       ps_t /*now*/) {
        return enqueue_verdict::PASS;
    }
    /// The head of q, `wire_bytes` long, starts at `at` (still counted in `port`'s occupancy:
    /// the queue it leaves behind, itself included). True: set CE. Drops are decided at
    /// enqueue only, as chips do.
    virtual bool on_dequeue(const egress_queues& /*port*/, unsigned /*q*/, frame& /*f*/,
                            std::uint32_t /*wire_bytes*/, ps_t /*at*/) {
        return false;
    }
    /// Where frames the policy builds go (congestion points); nullptr: none.
    void set_emitter(frame_emitter* e) { m_emitter = e; }
    /// The cause a DROP of this policy is counted as (only asked when it drops).
    virtual drop_cause drop_reason() const { return drop_cause::AQM_DROP; }

protected:
    egress_policy(std::uint8_t enqueue_mask, std::uint8_t dequeue_mask)
        : m_enqueue_mask(enqueue_mask), m_dequeue_mask(dequeue_mask) {}
    frame_emitter* emitter() const { return m_emitter; }
    /// A policy without a bound (called for every frame of its queues) may change the queues it
    /// sees while the port runs.
    void set_enqueue_mask(std::uint8_t m) { m_enqueue_mask = m; }

private:
    std::uint8_t m_enqueue_mask;
    std::uint8_t m_dequeue_mask;
    frame_emitter* m_emitter = nullptr;
};

enum class ecn_scope : std::uint8_t { QUEUE, PORT, POOL };
enum class queue_threshold : std::uint8_t { STANDARD, MINIMUM, MQ_ECN };

/// Per-queue threshold scales of the ECN/RED family: 1 (standard), the static minimum share
/// W_q / sum W (seed-001 Eq. 2) or MQ-ECN's min(quantum_q/(T_round·C), 1) (Eq. 5/6); strict
/// queues keep 1.
class threshold_scales
{
public:
    /// `mq` must outlive this (the port's estimator) when mode is MQ_ECN.
    threshold_scales(queue_threshold mode, const std::vector<std::uint32_t>& quanta,
                     const std::vector<bool>& strict, const mq_ecn_estimator* mq);
    double scale(unsigned q) const {
        switch (m_mode) {
            case queue_threshold::MINIMUM:
                return m_min_scale[q];
            case queue_threshold::MQ_ECN:
                return m_strict >> q & 1 || !m_mq ? 1.0 : m_mq->scale(q);
            case queue_threshold::STANDARD:
                break;
        }
        return 1.0;
    }
    queue_threshold mode() const { return m_mode; }
    const mq_ecn_estimator* mq() const { return m_mq; }
    bool strict(unsigned q) const { return m_strict >> q & 1; }

private:
    queue_threshold m_mode;
    std::uint8_t m_strict = 0;
    const mq_ecn_estimator* m_mq;
    std::array<double, 8> m_min_scale{};
};

/// What to do with a frame a threshold says to mark: mark ECT frames (CE), and drop or pass the
/// others.
struct ecn_action_params {
    bool drop_non_ect = true;
    bool at_dequeue = false;  ///< decide as the frame starts, on the queue it leaves behind
};

/// RED / WRED (and a step at port or pool scope) on the EWMA of the queue's, the port's or the
/// service pool's occupancy, in bytes or frames, with per-queue thresholds and threshold
/// scales. Draws from its own seeded RNG.
class red_marking final : public egress_policy
{
public:
    /// `red[q]` for each queue q of `queues`; a port- or pool-scope average takes the weight of
    /// the lowest of them (the caller gives them one weight).
    red_marking(std::uint8_t queues, const std::array<red_params, 8>& red, ecn_scope scope,
                bool frames, const ecn_action_params& action, const threshold_scales& scales,
                std::uint64_t seed, const std::string& rng_name);
    enqueue_verdict on_enqueue(const egress_queues& port, unsigned q, frame& f, ps_t now) override;
    bool on_dequeue(const egress_queues& port, unsigned q, frame& f, std::uint32_t wire_bytes,
                    ps_t at) override;
    const threshold_scales& scales() const { return m_scales; }

private:
    enqueue_verdict decide(const egress_queues& port, unsigned q, const frame& f);

    std::array<red_params, 8> m_red;
    ecn_scope m_scope;
    bool m_frames;
    bool m_drop_non_ect;
    threshold_scales m_scales;
    std::array<red_average, 8> m_queue_avg;
    red_average m_port_avg;
    rng m_rng;
};

/// DCTCP-style step marking on one queue's instantaneous occupancy (the arrival included):
/// mark when it exceeds K_q x the queue's threshold scale. No state of its own, so the port
/// passes every frame at or below bound() (the smallest threshold) without calling it.
class step_marking final : public egress_policy
{
public:
    /// `k[q]` per queue of `queues`, in bytes or frames. With MQ-ECN (`mq`) every queue has one
    /// K (the lowest queue's is used): `mq` is told it and the shortest quantum.
    step_marking(std::uint8_t queues, const std::array<double, 8>& k, bool frames,
                 const ecn_action_params& action, const threshold_scales& scales,
                 mq_ecn_estimator* mq);
    pass_bound bound() const override;
    enqueue_verdict on_enqueue(const egress_queues& port, unsigned q, frame& f, ps_t now) override;
    bool on_dequeue(const egress_queues& port, unsigned q, frame& f, std::uint32_t wire_bytes,
                    ps_t at) override;
    const threshold_scales& scales() const { return m_scales; }
    /// Queue q's threshold now (K x scale).
    double threshold(unsigned q) const {
        return m_mq ? m_mq->threshold_for(m_param[q]) : m_param[q];
    }

private:
    enqueue_verdict decide(const egress_queues& port, unsigned q, const frame& f) const;

    threshold_scales m_scales;
    const mq_ecn_estimator* m_mq;
    /// With MQ-ECN the quantum's time at line rate (ps; +inf for a strict queue, which keeps
    /// K), for mq_ecn_estimator::threshold_for(); else K_q x the queue's scale.
    std::array<double, 8> m_param{};
    double m_min_param;  ///< the smallest m_param of the marking queues
    bool m_frames;
    bool m_drop_non_ect;
};

/// HULL phantom queue in series with the port: every departing frame of the queues in its mask
/// feeds the counter and is marked when the counter is above the threshold (seed-000 §1.5).
class phantom_marking final : public egress_policy
{
public:
    phantom_marking(std::uint8_t queues, std::uint64_t rate_bps, double gamma, ps_t interval,
                    std::uint64_t threshold_bytes)
        : egress_policy(0, queues), m_queue(rate_bps, gamma, interval, threshold_bytes) {}
    bool on_dequeue(const egress_queues&, unsigned, frame&, std::uint32_t wire_bytes,
                    ps_t at) override {
        return m_queue.on_frame(wire_bytes, at);
    }
    const phantom_queue& queue() const { return m_queue; }

private:
    phantom_queue m_queue;
};

}  // namespace fabricsim::sw
