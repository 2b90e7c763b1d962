#pragma once
/// ExpressPass (Cho, Jang, Han, SIGCOMM 2017) as the ns2-xpass code runs it
/// (facts-mmu-credit-workload §2.3-§2.5): the receiver paces credits at `cur_rate` with a
/// jittered gap and adjusts the rate once per RTT from the credit loss it sees in the data's
/// echoed credit sequence numbers (`xpass_credit_control`, plain C++). The sender's one data
/// frame per credit and the connection control are in xpass_transport.
/// Timing model: untimed; the caller gives every event's time. The rate is in wire bytes/s of
/// credits (the switch credit queue's unit).
#include <cstdint>
#include <optional>
#include <vector>

#include "fabricsim/core/units.h"
#include "fabricsim/host/algo/flashpass.h"

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
    /// Aeolus (ExpressPass*): first-RTT data before the credits, selectively droppable.
    bool aeolus = false;
    /// Aeolus: data bytes the sender may send before credits (unset: one BDP of the path).
    std::optional<std::uint64_t> aeolus_first_rtt;
    /// FlashPass (`transport: flashpass`): sender-driven emulation packets instead of
    /// receiver-paced credits (seed-002 §1.4); its keys are the `flashpass:` section.
    bool flashpass = false;
    flashpass_params fp;

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

/// Aeolus's sender book-keeping of its first-RTT (unscheduled) packets 0 .. n-1: which were
/// sent unscheduled, which the receiver ACKed, and the queue of those to resend with credits
/// (found by the probe's ACK or NACKed), each queued at most once until it is resent.
class aeolus_sender
{
public:
    /// Packets 0 .. `unscheduled` - 1 may go before credits (allocates: set-up only).
    void reset(std::uint64_t unscheduled);
    std::uint64_t unscheduled() const { return m_state.size(); }
    /// Packet `pkt` (< unscheduled()) went unscheduled.
    void sent_unscheduled(std::uint64_t pkt);
    /// The receiver ACKed unscheduled packet `pkt`; false if out of range or already ACKed.
    bool on_ack(std::uint64_t pkt);
    /// The probe's ACK: every packet sent unscheduled and not ACKed is queued. Returns how many.
    std::uint64_t on_probe_ack();
    /// A NACK of `pkt` (< unscheduled(), already sent): queued unless ACKed or queued. True if
    /// queued.
    bool request(std::uint64_t pkt);
    /// Packets queued to resend (an ACK that comes late removes its packet when it surfaces).
    std::uint64_t queued() const { return m_live; }
    /// Takes the next packet to resend into `pkt`; false if none is left.
    bool take_resend(std::uint64_t& pkt);

    std::uint64_t sent() const { return m_sent; }
    std::uint64_t acked() const { return m_acked; }
    std::uint64_t lost() const { return m_lost; }  ///< found missing by the probe's ACK

private:
    enum : std::uint8_t { NOT_SENT, UNACKED, ACKED, QUEUED, RESENT };
    void push(std::size_t pkt);
    std::vector<std::uint8_t> m_state;
    /// Ring of packets to resend: a packet is in it at most once, so it never overflows.
    std::vector<std::uint32_t> m_queue;
    std::size_t m_head = 0;
    std::size_t m_count = 0;
    std::uint64_t m_live = 0;  ///< entries still QUEUED (not ACKed since)
    std::uint64_t m_sent = 0;
    std::uint64_t m_acked = 0;
    std::uint64_t m_lost = 0;
};

/// Selective receive of a sized flow's packets 0 .. n-1 (a bitmap): any order, duplicates
/// told apart, `expected()` the lowest missing packet.
class selective_receiver
{
public:
    /// `packets` in the flow (allocates: set-up only).
    void reset(std::uint64_t packets);
    /// Packet `pkt` arrived: true if it is new (and in range).
    bool on_packet(std::uint64_t pkt);
    std::uint64_t expected() const { return m_expected; }
    std::uint64_t received() const { return m_received; }
    std::uint64_t packets() const { return m_packets; }
    bool complete() const { return m_expected >= m_packets; }

private:
    bool has(std::uint64_t pkt) const { return m_bits[pkt >> 6] >> (pkt & 63) & 1; }
    std::vector<std::uint64_t> m_bits;
    std::uint64_t m_packets = 0;
    std::uint64_t m_expected = 0;
    std::uint64_t m_received = 0;
};

}  // namespace fabricsim::host
