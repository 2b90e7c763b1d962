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
#include <cstdint>
#include <optional>

#include "fabricsim/core/units.h"

namespace fabricsim::host {

/// FlashPass parameters (the `flashpass:` section; every key optional so that a scenario
/// without FlashPass echoes no such section).
struct flashpass_params {
    std::optional<ps_t> t_wait;          ///< data of a credit leaves at T + t_wait (required)
    std::optional<double> min_target;    ///< min_target_loss (unset: 0.01)
    std::optional<double> max_target;    ///< max_target_loss (unset: 0.10)
    std::optional<bool> over_provision;  ///< Eq 4.2 marking (unset: false)
    std::optional<bool> early_data;      ///< FlashPass*: Aeolus first-RTT data (unset: false)

    double min_target_loss() const { return min_target.value_or(0.01); }
    double max_target_loss() const { return max_target.value_or(0.10); }
    bool over_provisioning() const { return over_provision.value_or(false); }
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

}  // namespace fabricsim::host
