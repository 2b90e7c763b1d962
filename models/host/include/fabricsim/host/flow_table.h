#pragma once
/// Per-flow counters shared by sources (sent) and sinks (delivered, one-way latency), plus a
/// run-wide latency histogram for percentiles.
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "fabricsim/core/log_histogram.h"
#include "fabricsim/core/units.h"
#include "fabricsim/host/traffic_source.h"

namespace fabricsim::host {

/// Told when a whole application message has reached the receiver of a TCP flow.
class message_listener
{
public:
    virtual ~message_listener() = default;
    virtual void on_message(std::uint32_t flow, ps_t at) = 0;
};

/// One row of a TCP flow's trace, taken at every ACK the sender processes.
struct tcp_trace_row {
    ps_t at;
    std::uint64_t cwnd;
    std::uint64_t ssthresh;
    std::uint64_t flight;
    std::uint64_t acked;  ///< snd_una: bytes cumulatively acknowledged
    double alpha;         ///< DCTCP estimate (0 for other algorithms)
    double last_f;        ///< DCTCP: fraction of marked bytes in the last observed window
    ps_t srtt;
    ps_t rtt_sample;  ///< 0 when this ACK gave none
    bool ece;
    ps_t rtt_min;   ///< GEMINI: RTT_min of the last window (0 for other algorithms)
    ps_t rtt_base;  ///< GEMINI: RTT_base
};

/// End-of-run state of a TCP flow (filled by the hosts when the run ends).
struct tcp_flow_result {
    std::uint64_t bytes_acked = 0;
    std::uint64_t segments = 0;
    std::uint64_t retransmitted_segments = 0;
    std::uint64_t fast_retransmits = 0;
    std::uint64_t timeouts = 0;
    std::uint64_t ecn_reductions = 0;
    std::uint64_t ece_acks = 0;
    std::uint64_t acks = 0;
    std::uint64_t cwnd = 0;
    double alpha = 0;
    ps_t srtt = 0;
    ps_t min_rtt = 0;
    std::uint64_t hystart_train_exits = 0;  ///< slow starts HyStart ended (ACK train)
    std::uint64_t hystart_delay_exits = 0;  ///< (delay increase)
    // GEMINI only
    std::uint64_t wan_reductions = 0;  ///< cuts with the delay signal on
    double gemini_f = 0;               ///< F at the end
    double gemini_h = 0;               ///< h at the end (MSS per RTT)
    ps_t rtt_base = 0;
    std::uint64_t pacing_bps = 0;  ///< the limiter's rate at the end (0: not paced or done)
};

/// One row of a RoCE flow's DCQCN trace: a CNP sent by the receiver's notification point, or
/// a CNP reaching the sender's reaction point or a rate change there (the rates after it).
struct roce_trace_row {
    enum class event : std::uint8_t { CNP_SENT, CNP, TIMER, BYTES };
    ps_t at;
    event what;
    double rate_bps;    ///< RC (0 for CNP_SENT)
    double target_bps;  ///< RT
    double alpha;
};

/// End-of-run state of a RoCE flow (filled by the hosts when the run ends).
struct roce_flow_result {
    std::uint64_t packets = 0;        ///< data packets sent, resent ones included
    std::uint64_t retransmitted = 0;  ///< of which resent (go-back-N)
    std::uint64_t acked_bytes = 0;
    std::uint64_t naks_received = 0;
    std::uint64_t timeouts = 0;
    std::uint64_t out_of_sequence = 0;  ///< receiver: dropped, a PSN was missing
    std::uint64_t duplicates = 0;       ///< receiver: dropped, seen before
    std::uint64_t marked = 0;           ///< receiver: CE-marked packets
    std::uint64_t cnps_sent = 0;        ///< receiver (notification point)
    std::uint64_t cnps_received = 0;    ///< sender (reaction point)
    std::int64_t limiter = -1;          ///< the rate limiter the flow is bound to (-1: none)
    bool shared_limiter = false;        ///< bound to a limiter other flows use too
    double rate_bps = 0;                ///< the limiter's DCQCN rate at the end (0: none)
};

/// What only a RoCE flow records (allocated for RoCE flows only: flow records stay small).
struct roce_flow_state {
    roce_flow_result result;
    std::vector<roce_trace_row> trace;
};

/// One row of an ExpressPass flow's trace: a feedback update of the receiver's credit rate.
struct xpass_trace_row {
    ps_t at;
    double credit_rate_bps;  ///< credit wire bits/s after the update
    double w;
    double loss;  ///< credit loss of the period the update judged
    ps_t rtt;
};

/// End-of-run state of an ExpressPass flow (filled by the hosts when the run ends).
struct xpass_flow_result {
    // Receiver (credit sender)
    std::uint64_t credits_sent = 0;
    std::uint64_t credits_lost = 0;  ///< sent, never echoed by data (dropped, or unused)
    std::uint64_t nacks_sent = 0;
    std::uint64_t out_of_order = 0;  ///< data discarded, a packet was missing (go-back-N)
    std::uint64_t duplicates = 0;    ///< data discarded, it had arrived before
    std::uint64_t rate_updates = 0;
    double credit_rate_bps = 0;  ///< at the end
    // Sender
    std::uint64_t credits_received = 0;
    std::uint64_t credits_wasted = 0;  ///< received with nothing to send
    std::uint64_t packets = 0;         ///< data packets sent, resent ones included
    std::uint64_t retransmitted = 0;
    std::uint64_t requests = 0;  ///< CREDIT_REQUESTs sent
    std::uint64_t stops = 0;     ///< CREDIT_STOPs sent
    // Aeolus (xpass.aeolus)
    std::uint64_t unscheduled_sent = 0;       ///< first-RTT packets sent before credits
    std::uint64_t unscheduled_delivered = 0;  ///< of which the receiver got
    std::uint64_t unscheduled_missing = 0;    ///< found missing by the probe's ACK
    std::uint64_t probes = 0;
    // FlashPass (transport: flashpass)
    std::uint64_t emulation_sent = 0;
    std::uint64_t over_provisioned_sent = 0;  ///< of which non-ECT (Eq 4.2)
    /// Of credits_received and credits_wasted, those of over-provisioned emulation packets.
    std::uint64_t over_provisioned_credits = 0;
    std::uint64_t over_provisioned_wasted = 0;
    std::uint64_t late_credits = 0;   ///< arrived after T + t_wait: data sent at once
    std::uint64_t pauses = 0;         ///< Eq 4.2 pauses (over-provisioning off)
    std::uint64_t early_acked = 0;    ///< FlashPass*: unscheduled packets ACKed
    std::uint64_t credit_frames = 0;  ///< receiver: credit frames (flashpass.credit_batch)
    ps_t first_data = 0;              ///< first data packet sent
    ps_t last_data = 0;               ///< last data packet sent
    double emulation_rate_bps = 0;    ///< at the end
};

/// What only an ExpressPass flow records (allocated for those flows only).
struct xpass_flow_state {
    xpass_flow_result result;
    std::vector<xpass_trace_row> trace;
};

struct flow_record {
    flow_spec spec;
    std::uint64_t sent_frames = 0;
    std::uint64_t sent_bytes = 0;  ///< frame bytes incl. FCS
    std::uint64_t delivered_frames = 0;
    std::uint64_t delivered_bytes = 0;  ///< frame bytes incl. FCS
    std::uint64_t payload_bytes = 0;    ///< UDP payload delivered
    std::uint64_t ce_frames = 0;        ///< delivered with CE set (ECN-marked on the way)
    ps_t first_rx = 0;
    ps_t last_rx = 0;
    ps_t latency_min = std::numeric_limits<ps_t>::max();
    ps_t latency_max = 0;
    double latency_sum = 0;
    // TCP
    std::uint64_t ack_sent = 0;       ///< pure ACK frames sent by the receiver
    std::uint64_t ack_delivered = 0;  ///< pure ACK frames that reached the sender
    // Credit transports: credits and connection control, both directions
    std::uint64_t control_sent = 0;
    std::uint64_t control_delivered = 0;
    std::uint64_t rx_bytes = 0;  ///< in-order payload bytes delivered to the application
    ps_t started = 0;            ///< when the application wrote the data
    ps_t completed = 0;          ///< when the last byte reached the receiver (0 = not yet)
    tcp_flow_result tcp;
    std::vector<tcp_trace_row> trace;
    std::unique_ptr<roce_flow_state> roce;    ///< RoCE flows only (roce_transport sets it)
    std::unique_ptr<xpass_flow_state> xpass;  ///< ExpressPass flows only
    // Application messages (app-driven flows): one outstanding message per flow.
    message_listener* listener = nullptr;
    std::uint64_t app_written = 0;  ///< bytes the application has written so far
    std::uint64_t msg_end = 0;      ///< stream offset that completes the pending message (0 = none)
    std::uint32_t tx_slot = 0;      ///< index of the flow in its transport at the source host
    std::uint32_t rx_slot = 0;      ///< index of the flow in its transport at the destination
};

class flow_table
{
public:
    flow_table();
    std::uint32_t add(const flow_spec& spec);
    flow_record& operator[](std::uint32_t id) { return m_flows[id]; }
    const flow_record& operator[](std::uint32_t id) const { return m_flows[id]; }
    std::size_t size() const { return m_flows.size(); }
    const std::vector<flow_record>& all() const { return m_flows; }

    void on_delivered(std::uint32_t id, std::uint32_t frame_bytes, std::uint32_t payload,
                      ps_t latency, ps_t at);
    /// Latency quantile q in [0,1] over all delivered frames (ps), from a log-spaced histogram
    /// (2% bucket width).
    double latency_quantile(double q) const { return m_latency.quantile(q); }
    std::uint64_t latency_samples() const { return m_latency.count(); }

private:
    std::vector<flow_record> m_flows;
    log_histogram m_latency = log_histogram::ps_10ns_to_1s();
};

}  // namespace fabricsim::host
