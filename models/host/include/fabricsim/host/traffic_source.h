#pragma once
/// UDP-like arrival processes, as plain C++: constant bit rate, Poisson, on/off (CBR during on
/// periods; on and off lengths exponential or Pareto), Bernoulli (CN-SIM's 802.1Qau model: slots
/// at twice the rate, each used with probability 1/2), and backlogged (always a frame ready: the
/// transport sends whenever the NIC takes one, so the NIC's limiters, PAUSE and the link set
/// the rate). Rates count wire bytes (frame + FCS + preamble + IFG), so a source at the link
/// rate fills the link exactly.
#include <cstdint>
#include <string>

#include "fabricsim/core/rng.h"
#include "fabricsim/core/units.h"
#include "fabricsim/host/algo/congestion_control.h"
#include "fabricsim/host/algo/roce_qp.h"
#include "fabricsim/host/algo/rtt_estimator.h"
#include "fabricsim/host/algo/tcp_receiver.h"
#include "fabricsim/host/algo/tcp_sender.h"
#include "fabricsim/host/algo/xpass.h"

namespace fabricsim::host {

enum class arrival_process { CBR, POISSON, ON_OFF, BERNOULLI, BACKLOGGED };
/// The transport of a flow; also the index of its `transport` in every host (the order of
/// make_transports) and the rank of its timers among those due at the same time.
enum class transport_kind : std::uint8_t { UDP, TCP, ROCE, XPASS };
inline constexpr std::size_t TRANSPORT_KINDS = 4;

/// Everything one TCP connection is configured with.
struct tcp_options {
    cc_params cc;
    rtt_params rtt;
    tcp_sender_params sender;
    tcp_receiver_params receiver;
};
enum class period_distribution { EXPONENTIAL, PARETO };

struct flow_spec {
    std::uint32_t id = 0;
    std::uint32_t src = 0;  ///< host index
    std::uint32_t dst = 0;  ///< host index
    arrival_process process = arrival_process::CBR;
    std::uint64_t rate_bps = 1'000'000'000ull;  ///< wire rate while sending
    std::uint32_t packet_bytes = 1500;          ///< IPv4 packet size (IP header + UDP + payload)
    ps_t start = 0;
    ps_t stop = ~ps_t(0);
    std::uint64_t max_frames = 0;  ///< 0 = unlimited
    std::uint8_t dscp = 0;
    std::uint8_t pcp = 0;
    bool ect = false;  ///< frames carry ECT(0), so ECN-capable switches mark instead of drop
    ps_t on_mean = PS_PER_MS;
    ps_t off_mean = PS_PER_MS;
    period_distribution periods = period_distribution::EXPONENTIAL;
    double pareto_shape = 1.5;

    transport_kind transport = transport_kind::UDP;
    std::uint64_t size_bytes = 0;  ///< TCP, RoCE: bytes to transfer (0 = long-lived)
    bool app_driven = false;       ///< TCP: an application writes messages (size/start unused)
    tcp_options tcp;               ///< TCP: connection parameters
    bool trace = false;            ///< TCP: record cwnd/alpha/RTT per ACK; RoCE: DCQCN events
    roce_params roce;              ///< RoCE: queue-pair parameters (last: TCP flows never read it)
    xpass_params xpass;            ///< ExpressPass: credit and connection parameters

    /// Wire bytes of one frame of this flow.
    std::uint32_t wire_bytes() const;
};

/// Generates the send times of one flow.
class traffic_source
{
public:
    traffic_source(const flow_spec& spec, std::uint64_t seed, const std::string& name);

    /// Next send time, or ~0 when the flow is finished.
    ps_t next() const { return m_next; }
    /// Consume the current send time and compute the following one.
    void advance();
    /// BACKLOGGED: a frame left at `at`; the next may leave at once (until stop / max_frames).
    void sent_at(ps_t at) {
        ++m_emitted;
        schedule(at);
    }
    const flow_spec& spec() const { return m_spec; }
    std::uint64_t emitted() const { return m_emitted; }

private:
    ps_t period_length(ps_t mean);
    void schedule(ps_t t);
    /// CBR spacing from `t`, keeping the fractional ps so the long-run rate is exact.
    ps_t cbr_step(ps_t t);

    flow_spec m_spec;
    rng m_rng;
    double m_interval_ps;  ///< mean spacing of frames while sending
    double m_carry = 0;    ///< fractional ps of CBR spacing
    ps_t m_next = 0;
    ps_t m_on_end = 0;  ///< end of the current on period (ON_OFF)
    std::uint64_t m_emitted = 0;
};

}  // namespace fabricsim::host
