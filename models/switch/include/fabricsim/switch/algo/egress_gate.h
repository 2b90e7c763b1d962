#pragma once
/// Gates on the eligibility of an egress port's queues (plain C++, no SystemC). A queue may
/// start its head frame when every gate of the port is open for it: token-bucket shapers
/// (`shaper_gate`), 802.3x/802.1Qbb pause (`pause_gate`), and credit limits to come.
/// Timing model: untimed; a gate answers "open at t", "closed until t' > t" (it opens by
/// itself then, e.g. a shaper refills or a pause time runs out) or "closed until told" (its
/// owner calls egress_queues' gate_changed() / the port's wake-up when it opens).
#include <array>
#include <cstdint>
#include <vector>

#include "fabricsim/core/units.h"
#include "fabricsim/switch/algo/token_bucket.h"

namespace fabricsim::sw {

/// One condition on starting a queue's head frame.
class egress_gate
{
public:
    /// open_at() of a gate that stays closed until its owner opens it.
    static constexpr ps_t UNTIL_TOLD = ~ps_t(0);
    virtual ~egress_gate() = default;
    /// Earliest time >= t at which the head of queue q, `wire_bytes` long, may pass: t when open
    /// at t, UNTIL_TOLD while closed with no known end. Once open at some t, a gate stays open
    /// until on_start() or its owner changes it (so gates can be asked one after another).
    virtual ps_t open_at(unsigned q, std::uint32_t wire_bytes, ps_t t) const = 0;
    /// The head of queue q, `wire_bytes` long, starts at `at` (a shaper takes its tokens).
    virtual void on_start(unsigned q, std::uint32_t wire_bytes, ps_t at) = 0;
};

/// Token-bucket shapers as a gate: one bucket per queue (queue shapers, an unlimited bucket for
/// an unshaped queue), or one bucket for every queue (the port shaper: a head may start when the
/// bucket holds its bytes, so a smaller head of another queue can pass a larger one).
class shaper_gate final : public egress_gate
{
public:
    /// One bucket for all queues (the port shaper).
    explicit shaper_gate(const token_bucket& port) : m_buckets{port}, m_per_queue(false) {}
    /// Bucket q for queue q.
    explicit shaper_gate(const std::vector<token_bucket>& per_queue);

    ps_t open_at(unsigned q, std::uint32_t wire_bytes, ps_t t) const override {
        const token_bucket& b = bucket(q);
        return b.unlimited() ? t : b.ready_at(wire_bytes, t);
    }
    void on_start(unsigned q, std::uint32_t wire_bytes, ps_t at) override {
        token_bucket& b = m_buckets[m_per_queue ? q : 0];
        if (!b.unlimited()) b.consume(wire_bytes, at);
    }
    const token_bucket& bucket(unsigned q) const { return m_buckets[m_per_queue ? q : 0]; }
    /// No bucket limits anything (the gate need not be installed).
    bool unlimited() const;

private:
    std::array<token_bucket, 8> m_buckets{};
    bool m_per_queue = true;
};

/// Per-queue pause (802.3x PAUSE pauses all queues, 802.1Qbb PFC one priority each): a queue is
/// closed until a time (a received pause of n quanta) or until told (XOFF without a timeout,
/// e.g. a credit or watchdog owner). Frames already started are not affected (the caller stops
/// only new starts, as a MAC does at a frame boundary).
class pause_gate final : public egress_gate
{
public:
    /// Pauses the queues of `mask` (bit q = queue q) until `until` (UNTIL_TOLD: until resume()).
    /// A later pause of a queue replaces the earlier one (802.1Qbb: a new quanta value restarts
    /// the timer), also when it ends sooner.
    void pause(std::uint8_t mask, ps_t until) {
        for (unsigned q = 0; q < 8; ++q)
            if (mask >> q & 1) m_until[q] = until;
    }
    /// Ends the pause of the queues of `mask` (XON, or a pause of 0 quanta).
    void resume(std::uint8_t mask) { pause(mask, 0); }
    ps_t open_at(unsigned q, std::uint32_t /*wire_bytes*/, ps_t t) const override {
        return m_until[q] > t ? m_until[q] : t;
    }
    void on_start(unsigned, std::uint32_t, ps_t) override {}
    bool paused(unsigned q, ps_t t) const { return m_until[q] > t; }

private:
    std::array<ps_t, 8> m_until{};
};

}  // namespace fabricsim::sw
