#pragma once
/// FlashPass (seed-002 §1.4, Algorithm 2): the sender's emulation rate control. The sender
/// sends 84 B emulation packets on the forward path at `rate()`; each one that gets through
/// the switches' emulation (credit) queues comes back as a credit. Once per update period (one
/// RTT) the loss of the period, 1 - credits in / emulation packets out, sets the rate (MIMD);
/// the packets out are those the period's credits account for (up to the sequence number the
/// last credit echoes: credits come back in order, so the earlier ones missing were dropped):
/// above max_target it is cut to rate x (1 - loss) x (1 + min_target), below min_target it
/// grows by (1 + max_target); it starts at and never exceeds the maximum (84/1622 of the
/// sender's link) and never falls below one emulation packet per RTT.
/// Timing model: untimed; the caller gives every event's time. Rates in emulation wire bytes/s.
#include <array>
#include <cstdint>
#include <optional>

#include "fabricsim/core/units.h"

namespace fabricsim::host {

/// FlashPass parameters (the `flashpass:` section; every key optional so that a scenario
/// without FlashPass echoes no such section).
struct flashpass_params {
    std::optional<ps_t> t_wait;                ///< data of a credit leaves at T + t_wait (required)
    std::optional<double> min_target;          ///< min_target_loss (unset: 0.01)
    std::optional<double> max_target;          ///< max_target_loss (unset: 0.10)
    std::optional<bool> over_provision;        ///< Eq 4.2 marking (unset: false)
    std::optional<bool> early_data;            ///< FlashPass*: Aeolus first-RTT data (unset: false)
    std::optional<std::uint8_t> credit_batch;  ///< timestamps per credit at most (unset: 1)

    double min_target_loss() const { return min_target.value_or(0.01); }
    double max_target_loss() const { return max_target.value_or(0.10); }
    bool over_provisioning() const { return over_provision.value_or(false); }
    std::uint32_t credits_per_frame() const { return credit_batch.value_or(1); }
};

/// Algorithm 2: the emulation rate of one FlashPass sender.
class flashpass_rate_control
{
public:
    /// `max_rate` in emulation wire bytes/s; `emulation_bytes` the emulation frame on the wire.
    flashpass_rate_control(double min_target, double max_target, double max_rate,
                           std::uint32_t emulation_bytes = 84);

    /// The flow starts at `now` with the maximum rate; `rtt` is the first update period.
    void start(ps_t now, ps_t rtt);
    /// A credit for emulation packet `seq` (0, 1, ...) arrived at `now` with RTT sample `rtt`
    /// (now - the emulation's send time): counts it and, if a period has passed since the last
    /// update, runs Algorithm 2 on the period's counts (emulation packets out: those up to
    /// `seq` not accounted before) and starts the next period. True if the rate was updated.
    bool on_credit(ps_t now, ps_t rtt, std::uint64_t seq);
    /// The gap between emulation packets at the current rate.
    ps_t gap() const;
    /// The gap at the maximum rate.
    ps_t gap_at_max() const;

    double rate() const { return m_rate; }
    double max_rate() const { return m_max; }
    double last_loss() const { return m_last_loss; }
    ps_t rtt() const { return m_rtt; }
    std::uint64_t updates() const { return m_updates; }

private:
    double m_min_target;
    double m_max_target;
    double m_max;
    std::uint32_t m_bytes;
    double m_rate = 0;
    ps_t m_rtt = 0;  ///< EWMA of the samples (7/8 old + 1/8 new)
    ps_t m_period_start = 0;
    std::uint64_t m_base = 0;  ///< first emulation packet of this period
    std::uint64_t m_in = 0;    ///< credits received this period
    double m_last_loss = 0;
    std::uint64_t m_updates = 0;
};

/// Delayed credit sending (seed-002 §1.4, "overhead reduction"): the receiver holds the credit
/// of an emulation packet while its data has time to wait, and answers up to `limit`
/// consecutive emulation packets of a flow with one credit carrying all their timestamps. The
/// credit of a packet sent at T leaves by T + t_wait / 2: sent then, it still arrives by
/// T + t_wait over any return trip of up to t_wait / 2 (t_wait is at least the round trip).
/// A gap in the sequence numbers (an emulation packet dropped) sends the held ones first.
/// Timing model: untimed; the caller gives every event's time and keeps the flush timer.
class flashpass_credit_batch
{
public:
    /// Timestamps one credit frame carries at most.
    static constexpr std::uint32_t MAX = 6;

    flashpass_credit_batch(std::uint32_t limit, ps_t t_wait) : m_limit(limit), m_t_wait(t_wait) {}
    /// Emulation packet `seq` can join the held credit (else send the held one first).
    bool joins(std::uint64_t seq) const { return m_count == 0 || seq == m_first + m_count; }
    /// Holds the credit of packet `seq` (after `joins`), sent at `sent`, arrived at `now`.
    /// True if the credit must go now: full, or its first packet has no time left to wait.
    bool add(std::uint64_t seq, ps_t sent, ps_t now);
    /// When the held credit must leave at the latest.
    ps_t deadline() const { return m_sent[0] + m_t_wait / 2; }
    std::uint32_t count() const { return m_count; }
    std::uint64_t first() const { return m_first; }
    /// Send time of the i-th packet held.
    ps_t sent(std::uint32_t i) const { return m_sent[i]; }
    /// How long the newest one has been held at `now` (the sender takes it off its RTT sample).
    ps_t held(ps_t now) const { return now - m_newest; }
    void clear() { m_count = 0; }
    /// Wire bytes of a credit with `n` timestamps: 84 B (the minimum frame) for one; more
    /// carry the first packet's number, n send times and the hold, 8 B each.
    static std::uint32_t wire_bytes(std::uint32_t n) { return n <= 1 ? 84 : 82 + 8 * n; }

private:
    std::uint32_t m_limit;
    ps_t m_t_wait;
    std::uint32_t m_count = 0;
    std::uint64_t m_first = 0;
    ps_t m_newest = 0;
    std::array<ps_t, MAX> m_sent{};
};

}  // namespace fabricsim::host
