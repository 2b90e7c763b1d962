#pragma once
/// ExpressPass (Cho, Jang, Han, SIGCOMM 2017) as the ns2-xpass code runs it
/// (facts-mmu-credit-workload §2.3-§2.5): the receiver paces credits at `cur_rate` with a
/// jittered gap and adjusts the rate once per RTT from the credit loss it sees in the data's
/// echoed credit sequence numbers (`xpass_credit_control`, plain C++). The sender's one data
/// frame per credit and the connection control are in xpass_transport.
/// Timing model: untimed; the caller gives every event's time. The rate is in wire bytes/s of
/// credits (the switch credit queue's unit).
#include <cstdint>

#include "fabricsim/core/units.h"

namespace fabricsim::host {

/// Per-flow ExpressPass parameters (the `xpass:` section; ns-default.tcl unless noted).
struct xpass_params {
    double alpha = 0.5;                   ///< initial credit rate / max_rate (alpha_)
    double w_init = 0.5;                  ///< w_init_ (large-scale scripts: 0.0625)
    double w_min = 0.01;                  ///< min_w_
    double w_max = 0.5;                   ///< hard-coded in the code
    double w_step = 0.05;                 ///< the code's additive increase of w
    double target_loss_scaling = 0.125;   ///< target loss = (1 - rate/max) x this
    double jitter = 0.1;                  ///< credit gap x (1 + U(-jitter, +jitter))
    std::uint32_t credit_min_bytes = 84;  ///< credit wire size, uniform in [min, max]
    std::uint32_t credit_max_bytes = 84;
    double max_rate_ratio = 84.0 / (84.0 + 1538.0);  ///< max credit rate / the host's link rate
    ps_t retransmit_timeout = 100 * PS_PER_US;       ///< credit request / NACK (scripts: 100 us)
    ps_t stop_timeout = PS_PER_MS;                   ///< credits after CREDIT_STOP: resend it
    std::uint8_t credit_dscp = 56;                   ///< credits' DSCP (-> the credit queue)
    /// The receiver knows the flow's size and sends one credit per data packet, no more
    /// (seed-002 §2.5's crush experiment); else it credits until the sender's STOP.
    bool demand_known = false;

    double avg_credit_bytes() const { return 0.5 * (credit_min_bytes + credit_max_bytes); }
};

/// The receiver's credit rate: ns2-xpass's feedback control.
class xpass_credit_control
{
public:
    /// `max_rate` in credit wire bytes/s (the link's credit share).
    xpass_credit_control(const xpass_params& p, double max_rate);

    /// The first credit request arrived at `now`: w = w_init, rate = alpha x max.
    void start(ps_t now);
    /// A data frame echoes credit `seq`, which this side sent at `sent`: credits between the
    /// last echoed one and this one were lost (or unused); the RTT sample is now - sent.
    void on_data(std::uint64_t seq, ps_t sent, ps_t now);
    /// Just before a credit is sent at `now`: one feedback update if an RTT has passed since
    /// the last one (and the RTT and some echoed credits are known). True if it ran.
    bool before_credit(ps_t now);
    /// Sequence number of the credit being sent (0, 1, ...).
    std::uint64_t take_seq() { return m_next_seq++; }
    /// Gap to the next credit for a uniform draw `u` in [0, 1): avg size / rate, jittered.
    ps_t gap(double u) const;

    double rate() const { return m_rate; }  ///< credit wire bytes/s
    double max_rate() const { return m_max; }
    double w() const { return m_w; }
    ps_t rtt() const { return m_rtt; }
    double last_loss() const { return m_last_loss; }

    struct counters {
        std::uint64_t echoed = 0;  ///< credits accounted by echoes (total)
        std::uint64_t lost = 0;    ///< of which never echoed (dropped, or unused)
        std::uint64_t updates = 0;
        std::uint64_t decreases = 0;
    };
    const counters& stats() const { return m_stats; }

private:
    xpass_params m_p;  // a copy: the flow table may move
    double m_max;
    double m_rate = 0;
    double m_w = 0;
    bool m_can_increase_w = false;
    ps_t m_rtt = 0;  ///< EWMA (0.8 old + 0.2 sample); 0: no sample yet
    std::uint64_t m_total = 0;
    std::uint64_t m_dropped = 0;
    std::uint64_t m_expected = 0;  ///< next credit sequence an echo should carry
    std::uint64_t m_next_seq = 0;
    ps_t m_last_update = 0;
    double m_last_loss = 0;
    counters m_stats;
};

}  // namespace fabricsim::host
