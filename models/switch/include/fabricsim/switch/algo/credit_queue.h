#pragma once
/// The credit queue of an egress port (ExpressPass's `XPassDropTail`, FlashPass's emulation
/// queue; facts-mmu-credit-workload §2.2): one of the port's queues, served first (strict) when
/// its token bucket holds the head's wire bytes, the bucket refilled at a share of the port
/// rate (84/(84+1538) by default) and starting empty, and a tiny tail-drop buffer counted in
/// wire bytes (8 credits of 84 B). Credits reach it by their priority (the QoS map), so the
/// data path pays nothing for it but the gate and this policy on the ports that have one.
/// Timing model: untimed decisions at the frame's enqueue; the gate (`credit_gate`) holds the
/// credit queue's bucket alone, so a credit leaves at its bucket's ready time when the wire is
/// free.
#include <cstdint>
#include <optional>
#include <string_view>

#include "fabricsim/core/rng.h"
#include "fabricsim/switch/algo/egress_gate.h"
#include "fabricsim/switch/algo/egress_policy.h"
#include "fabricsim/switch/algo/token_bucket.h"

namespace fabricsim::sw {

struct credit_queue_config {
    int queue = -1;                         ///< the credit queue; -1: none
    double ratio = 84.0 / (84.0 + 1538.0);  ///< bucket rate / port rate
    std::uint64_t buffer_bytes = 8 * 84;    ///< wire bytes held (credit_limit_)
    std::uint64_t burst_bytes = 2 * 84;     ///< bucket depth (max_tokens_)
    /// FlashPass over-provisioning (seed-002 §1.4): a non-ECT arrival that makes the queue
    /// hold more than this many frames is dropped (credit_dropped); 0: off.
    std::uint32_t selective_drop = 0;
    /// Each credit takes wire bytes x (1 + U(-jitter, +jitter)) of tokens (whole bytes), so the
    /// gaps of a saturated queue vary by that share: ns2-xpass's random credit sizes (76-92 B
    /// in its large-scale runs) through the bucket, without frames below Ethernet's minimum.
    /// 0: off (every credit takes its wire bytes).
    double jitter = 0;
    bool enabled() const { return queue >= 0; }
};

/// The credit queue's token bucket as a gate on that queue alone. With jitter, the cost of the
/// next credit is drawn when the previous one starts, so open_at() and on_start() agree.
class credit_gate final : public egress_gate
{
public:
    /// `rate_bps` x `burst_bytes`, empty at the start (ns2-xpass); draws from (seed, name).
    credit_gate(unsigned queue, std::uint64_t rate_bps, std::uint64_t burst_bytes, double jitter,
                std::uint64_t seed, std::string_view name);
    ps_t open_at(unsigned q, std::uint32_t wire_bytes, ps_t t) const override {
        return q == m_queue ? m_bucket.ready_at(cost(wire_bytes), t) : t;
    }
    void on_start(unsigned q, std::uint32_t wire_bytes, ps_t at) override;
    const token_bucket& bucket() const { return m_bucket; }
    /// Tokens the next credit of `wire_bytes` takes.
    std::uint32_t cost(std::uint32_t wire_bytes) const {
        return m_jitter == 0 ? wire_bytes : jittered(wire_bytes);
    }

private:
    std::uint32_t jittered(std::uint32_t wire_bytes) const;

    token_bucket m_bucket;
    unsigned m_queue;
    double m_jitter;
    double m_next = 0;           ///< the next credit's U(-1, 1) draw
    std::optional<rng> m_draws;  ///< with jitter only (2.5 KB)
};

/// Tail drop of the credit queue: an arrival that takes the queue's wire bytes above the
/// buffer is dropped as `credit_dropped` (ns2-xpass: the length after the add is compared).
/// With `selective_drop` K > 0 a non-ECT arrival is also dropped when the queue's frames, the
/// arrival included, exceed K (FlashPass's over-provisioned emulation packets; ECT ones use
/// the whole buffer), counted as `credit_dropped` too.
class credit_admission final : public egress_policy
{
public:
    credit_admission(unsigned queue, std::uint64_t buffer_bytes, std::uint32_t selective = 0)
        : egress_policy(static_cast<std::uint8_t>(1u << queue), 0),
          m_buffer(buffer_bytes),
          m_selective(selective) {}
    enqueue_verdict on_enqueue(const egress_queues& port, unsigned q, frame& f, ps_t now) override;
    drop_cause drop_reason() const override { return drop_cause::CREDIT_DROPPED; }

private:
    std::uint64_t m_buffer;
    std::uint32_t m_selective;
};

}  // namespace fabricsim::sw
