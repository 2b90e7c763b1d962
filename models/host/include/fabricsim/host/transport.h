#pragma once
/// The interface every host transport implements (UDP sources, TCP, and the next ones): the
/// host owns one instance of each registered transport and hands it the flows of its kind, the
/// timers it queued and the frames of its flows; the transport decides what to send.
///
/// Timing model: a transport has no process or event of its own. It queues timers in its
/// host's single min-heap (`schedule`), ordered by (time, transport kind, the transport's timer
/// kind, slot), and the host calls `on_timer` when one is due; frames of its flows arrive
/// through `on_frame` at their host-memory time. It posts frames to the NIC at the time it
/// decides them; processing takes no time.
#include <cstdint>

#include <nlohmann/json_fwd.hpp>

#include "fabricsim/core/frame.h"
#include "fabricsim/core/stats.h"
#include "fabricsim/core/units.h"
#include "fabricsim/host/flow_table.h"
#include "fabricsim/host/traffic_source.h"

namespace fabricsim::host {

class host;

/// Every flow's receiver listens on one port; the sender's port tells the flows apart.
inline constexpr std::uint16_t SERVER_PORT = 5001;
inline std::uint16_t client_port(std::uint32_t flow) {
    return static_cast<std::uint16_t>(10000 + flow % 50000);
}

/// Where a flow's frames go from one end: the peer's address, the next hop and the idle-path
/// round trip of minimum-size frames (what a connection handshake would measure).
struct flow_path {
    std::uint32_t peer_ip = 0;
    mac_addr next_hop{};
    ps_t idle_rtt = 0;
};

class transport
{
public:
    virtual ~transport() = default;
    transport(const transport&) = delete;
    transport& operator=(const transport&) = delete;

    transport_kind kind() const { return m_kind; }
    /// Frames of this transport's flows are processed at their host-memory time, in order with
    /// the host's timers (true), or recorded as soon as the NIC hands them up (false).
    bool holds_rx() const { return m_holds_rx; }

    /// The sending side of flow `flow` (already in the flow table). Before simulation starts.
    virtual void add_source(std::uint32_t flow, const flow_path& to) = 0;
    /// The receiving side of flow `flow`. Before simulation starts.
    virtual void add_sink(std::uint32_t flow, const flow_path& from) = 0;
    /// Timers the transport will keep queued at once (a hint to size the host's heap).
    virtual std::size_t timer_hint() const = 0;
    /// Queues the first timers; called once at the end of elaboration.
    virtual void start() = 0;
    /// Frames must reach the NIC in time order (no temporal decoupling on this host).
    virtual bool needs_ordered_posts() const = 0;

    /// A timer this transport queued with `schedule(at, timer_kind, slot)` is due (`now` >=
    /// `at`, or `at` lies within the host's lookahead).
    virtual void on_timer(std::uint8_t timer_kind, std::uint32_t slot, ps_t at, ps_t now) = 0;
    /// A frame of one of this transport's flows, at its host-memory time `at`. The host
    /// releases the frame afterwards.
    virtual void on_frame(frame& f, ps_t at) = 0;
    /// The NIC has room again after this transport called host::wait_for_tx().
    virtual void on_tx_ready(ps_t now) { (void)now; }
    /// The receiving application has read `bytes` of flow `flow`'s data at `at` (hosts with
    /// the NIC profile's rx.app_byte_cost only).
    virtual void on_app_read(std::uint32_t flow, std::uint64_t bytes, ps_t at) {
        (void)flow;
        (void)bytes;
        (void)at;
    }

    /// The application writes `bytes` on flow `flow` at `at` (transports that carry messages;
    /// the receiver's listener hears when they have all arrived). The host rearms afterwards.
    virtual void app_write(std::uint32_t flow, std::uint64_t bytes, ps_t at);
    /// Retransmission timeouts of flow `flow`'s sender so far (0 for transports without).
    virtual std::uint64_t timeouts(std::uint32_t flow) const {
        (void)flow;
        return 0;
    }
    /// Copies end-of-run per-flow state into the flow table.
    virtual void export_flow_results() const {}
    /// Adds the frames this transport's receivers discarded, by cause.
    virtual void add_drops(drop_counters& d) const { (void)d; }
    /// Frames made and not yet handed to the NIC (the frame balance counts them in flight).
    virtual std::uint64_t frames_held() const { return 0; }
    /// Adds this transport's counters to the host's summary object.
    virtual void report_stats(nlohmann::json& out) const { (void)out; }

protected:
    transport(host& h, flow_table& flows, transport_kind kind, bool holds_rx)
        : m_host(h), m_flows(flows), m_kind(kind), m_holds_rx(holds_rx) {}
    /// Queues timer `timer_kind` (the transport's own numbering, < 256) for `slot` at `at`.
    void schedule(ps_t at, std::uint8_t timer_kind, std::uint32_t slot);

    host& m_host;
    flow_table& m_flows;  ///< the host's flow table

private:
    friend class host;
    transport_kind m_kind;
    bool m_holds_rx;
    bool m_waiting_tx = false;  ///< registered with the host for on_tx_ready
};

}  // namespace fabricsim::host
