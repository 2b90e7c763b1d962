#pragma once
/// A server behind one NIC running its flows' transports: open-loop UDP sources and sinks
/// (`udp_transport`), TCP connections with NewReno, ECN*, DCTCP or CUBIC (`tcp_transport`),
/// and whatever `make_transports` registers next. The host owns the timer and the receive
/// FIFO and dispatches to the transports; what to send is theirs.
///
/// Timing model: one model_timer per host drives everything the host does from one min-heap
/// of (time, transport kind, timer kind, slot) entries (O(log n) per timer, no event per
/// flow). Frames of transports that hold them (TCP) are processed at their host-memory time
/// (`nic_rx`'s `at`), in order, from a FIFO whose head shares the same timer; other frames
/// (UDP sinks) are recorded when the NIC hands them up. Among equal times received frames come
/// first, then timers in heap order. Transports post to the NIC at the time they decide;
/// processing takes no time. Data waits while the NIC TX queue has no more than `data_reserve`
/// free slots (the rest is kept for ACKs); a waiting transport resumes when the NIC reports
/// space (no polling). Open-loop sources are temporally decoupled by `lookahead` (posted ahead
/// with their exact send time) only on hosts whose transports all allow it (no TCP flows),
/// because the NIC needs posts in time order.
/// With the NIC profile's `rx.napi`, received data frames go through the host receive path
/// instead (host/algo/rx_cpu.h: RX ring, interrupt coalescing, NAPI polls at a CPU cost on the
/// host's cores, GRO) and reach their transport when a poll has processed them, from a heap
/// ordered by (time, arrival) that shares the host's timer with the rx_cpu's next event.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <systemc>

#include "fabricsim/core/frame_pool.h"
#include "fabricsim/core/ring.h"
#include "fabricsim/core/scheduler.h"
#include "fabricsim/core/stats.h"
#include "fabricsim/host/flow_table.h"
#include "fabricsim/host/traffic_source.h"
#include "fabricsim/host/transport.h"
#include "fabricsim/nic/nic_device.h"

namespace fabricsim::host {

/// The credit queue at the host's end of its link (ns2-xpass has one at every link end): the
/// credit-class frames the host sends (ExpressPass credits, FlashPass emulation packets and
/// credits) leave through a token bucket at `ratio` x the NIC rate, `burst_bytes` deep and
/// empty at the start, with `buffer_bytes` of tail-drop FIFO (credit_dropped); with
/// `selective_drop` K > 0 a non-ECT frame is dropped when it would make more than K wait; the
/// switch's `jitter` on the tokens each frame takes.
struct credit_queue_params {
    double ratio = 84.0 / (84.0 + 1538.0);
    std::uint64_t buffer_bytes = 8 * 84;
    std::uint64_t burst_bytes = 2 * 84;
    std::uint32_t selective_drop = 0;
    double jitter = 0;  ///< each frame takes wire bytes x (1 + U(-jitter, +jitter)) of tokens
};

struct host_identity {
    std::uint32_t index = 0;
    std::uint32_t ip = 0;
    mac_addr mac{};
};

class host : public sc_core::sc_module, public nic::nic_host_if, public stats_provider
{
public:
    host(const sc_core::sc_module_name& name, const host_identity& id, nic::nic_device& nic,
         flow_table& flows, std::uint64_t seed, ps_t lookahead);
    ~host() override;

    /// Adds the sending side of flow `flow_id` (already in the flow table) to the transport of
    /// its kind. Before simulation starts.
    void add_source(std::uint32_t flow_id, const flow_path& to);
    /// Adds the receiving side of flow `flow_id`. Before simulation starts.
    void add_sink(std::uint32_t flow_id, const flow_path& from);

    /// The application writes `bytes` on app-driven flow `flow` (sent from this host) at
    /// `at` >= now; the receiver's listener hears when they have all arrived.
    void app_write(std::uint32_t flow, std::uint64_t bytes, ps_t at);
    /// Retransmission timeouts so far of flow `flow` (sent from this host).
    std::uint64_t timeouts(std::uint32_t flow) const { return transport_of(flow).timeouts(flow); }

    void nic_rx(frame& f, ps_t at) override;
    void nic_tx_ready() override;
    bool nic_rx_ring(unsigned queue, rx_ring_status& out) const override;
    bool nic_coalescing(nic::coalesce_params& out, std::uint64_t& interrupts) const override;
    bool nic_set_coalescing(const nic::coalesce_params& p) override;

    /// Copies the transports' end-of-run per-flow state into the flow table.
    void export_flow_results() const;

    struct stats {
        std::uint64_t sent_frames = 0;
        std::uint64_t received_frames = 0;
        std::uint64_t received_bytes = 0;
        std::uint64_t tx_blocked = 0;  ///< times data sending stopped on a full NIC queue
    };
    const stats& get_stats() const { return m_stats; }
    void report_stats(nlohmann::json& out) const override;
    void add_drops(drop_counters& d) const override;
    /// Frames received by the NIC and waiting for their host-memory time.
    std::uint64_t frames_held() const override {
        return m_rx_fifo.size() + (m_napi ? napi_held() : 0) + transport_frames_held();
    }

    // For transports.
    flow_table& flows() const { return m_flows; }
    std::uint64_t seed() const { return m_seed; }
    /// A pooled frame with this host's addresses and `spec`'s class and flow id (inline: one
    /// per frame a transport sends).
    frame& new_frame(const flow_spec& spec, std::uint32_t dst_ip, const mac_addr& dst_mac,
                     std::uint16_t sport, std::uint16_t dport) {
        frame& f = m_pool.acquire();
        f.src_mac = m_id.mac;
        f.dst_mac = dst_mac;
        f.src_ip = m_id.ip;
        f.dst_ip = dst_ip;
        f.dscp = spec.dscp;
        f.pcp = spec.pcp;
        f.vlan_tagged = spec.pcp != 0;
        f.src_port = sport;
        f.dst_port = dport;
        f.flow_id = spec.id;
        return f;
    }
    /// Hands `f` to the NIC, to leave at `at`.
    void post(frame& f, ps_t at) {
        m_stats.sent_frames++;
        m_nic.post(f, at);
    }
    /// LSO: hands the TCP send `big` (`segments` MSS segments) to the NIC.
    void post_lso(frame& big, ps_t at, std::uint32_t mss, std::uint32_t segments) {
        m_stats.sent_frames += segments;
        m_nic.post_lso(big, at, mss);
    }
    /// The NIC TX queue has room for a data frame (and `extra` more) beyond the slots kept for
    /// ACKs.
    bool tx_room_for_data(std::size_t extra = 0) const {
        return m_nic.tx_queue_free() > m_data_reserve + extra;
    }
    /// `t` stopped sending data on a full NIC queue (counted as tx_blocked): its on_tx_ready
    /// runs when the queue has drained to half.
    void wait_for_tx(transport& t) {
        m_stats.tx_blocked++;
        wait_for_tx(t, m_nic.tx_queue_capacity() / 2);
    }
    /// `t`'s on_tx_ready runs when the TX queue holds at most `at_most` frames (a transport
    /// that keeps the NIC fed a few frames ahead; not counted).
    void wait_for_tx(transport& t, std::size_t at_most);
    nic::nic_device& nic() const { return m_nic; }
    /// Returns a frame that will not be sent to the pool (a host-side drop, counted by the
    /// caller).
    void discard(frame& f) { m_pool.release(f); }
    /// The credit queue of the host's end of its link (the switch at the other end has one).
    void set_credit_queue(const credit_queue_params& p) { m_credit_queue = p; }
    std::uint64_t transport_frames_held() const;
    const std::optional<credit_queue_params>& credit_queue() const { return m_credit_queue; }
    /// The receiving application reads at a CPU cost (nic.rx.app_byte_cost): TCP then
    /// advertises the window its unread bytes leave.
    bool app_reads_slowly() const { return m_app_model; }
    /// Queues a timer of transport kind `kind`: order among equal times is (kind, timer_kind,
    /// slot).
    void push_timer(ps_t at, transport_kind kind, std::uint8_t timer_kind, std::uint32_t slot) {
        m_heap.push_back(
            {at, slot, static_cast<std::uint16_t>(static_cast<unsigned>(kind) << 8 | timer_kind)});
        std::push_heap(m_heap.begin(), m_heap.end(), std::greater<timer>());
    }

private:
    struct timer {
        ps_t at;
        std::uint32_t slot;
        std::uint16_t order;  ///< transport kind << 8 | the transport's timer kind
        bool operator>(const timer& o) const {
            if (at != o.at) return at > o.at;
            if (order != o.order) return order > o.order;
            return slot > o.slot;
        }
    };
    struct rx_entry {
        frame* f;
        ps_t at;
        transport* t;
    };

    transport& transport_of(std::uint32_t flow) const {
        return *m_by_kind[static_cast<std::size_t>(m_flows[flow].spec.transport)];
    }
    void on_timer();
    /// Pops the earliest timer of the heap and runs it.
    [[gnu::always_inline]] void run_next_timer(ps_t now);
    void end_of_elaboration() override;
    /// Arms m_wake for the heap and the RX FIFO. With NAPI, the path's own events are armed by
    /// rearm_napi() whenever they change (only in nic_rx_napi and on_timer_napi), and arm_at
    /// keeps the earliest time, so rearm() need not look at them.
    void rearm();
    // The NAPI receive path (cold: a host without it never calls these). The path is chosen at
    // construction: m_wake runs on_timer_napi and the NIC delivers to napi_path, which forwards
    // to nic_rx_napi, so the plain path has no test for it.
    class napi_path;
    [[gnu::cold, gnu::noinline]] void nic_rx_napi(frame& f, ps_t at);
    [[gnu::cold, gnu::noinline]] void on_timer_napi();
    [[gnu::cold, gnu::noinline]] void rearm_napi();
    /// `f` leaves the receive path at `at`; `more`: segments of its GRO aggregate follow.
    void deliver_napi(frame& f, ps_t at, bool more);
    std::uint64_t napi_held() const;
    void report_napi(nlohmann::json& out) const;

    host_identity m_id;
    nic::nic_device& m_nic;
    flow_table& m_flows;
    std::uint64_t m_seed;
    ps_t m_lookahead;
    std::size_t m_data_reserve;  ///< free NIC TX slots kept for ACKs: data waits below it
    frame_pool& m_pool = frame_pool::current();            // the platform's (frame_pool::scope)
    std::vector<std::unique_ptr<transport>> m_transports;  ///< index = transport_kind
    std::array<transport*, TRANSPORT_KINDS> m_by_kind{};   ///< m_transports, for dispatch
    std::vector<transport*> m_waiting;  ///< transports waiting for NIC space, in order
    ring<rx_entry, 4> m_rx_fifo;        ///< mostly a few frames: inline, no second line
    std::vector<timer> m_heap;          ///< min-heap via std::push_heap/greater
    model_timer m_wake = m_nic.config().rx.napi
                             ? model_timer::bind<host, &host::on_timer_napi>(this)
                             : model_timer::bind<host, &host::on_timer>(this);
    stats m_stats;
    std::unique_ptr<napi_path> m_napi;  ///< only with the NIC profile's rx.napi
    bool m_app_model = false;
    // Cold (read at start only), so last: the members above keep their offsets.
    std::optional<credit_queue_params> m_credit_queue;
};

/// The transports every host runs, one per transport_kind in enum order (the registry, in
/// transport_registry.cpp).
std::vector<std::unique_ptr<transport>> make_transports(host& h);

inline void transport::schedule(ps_t at, std::uint8_t timer_kind, std::uint32_t slot) {
    m_host.push_timer(at, m_kind, timer_kind, slot);
}

}  // namespace fabricsim::host
