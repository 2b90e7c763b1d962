#pragma once
/// A server behind one NIC: open-loop UDP-like sources and sinks, and TCP connections
/// (NewReno, ECN*, DCTCP, CUBIC) with their receivers.
///
/// Timing model: one model_timer per host drives everything the host does from one min-heap
/// of (time, kind, slot) entries: UDP send times, TCP flow starts, retransmission and
/// delayed-ACK timers (O(log n) per timer; a timer that moves later is re-queued lazily when
/// its stale entry surfaces, so restarting the RTO on every ACK costs nothing). Frames the NIC
/// hands up are processed at their host-memory time (`nic_rx`'s `at`), in order, from a FIFO
/// whose head shares the same timer. Segments and ACKs are posted to the NIC at the time
/// they are decided; protocol processing takes no time. Data segments are posted only while
/// the NIC TX queue has `data_reserve` free slots (the rest is kept for ACKs); a blocked host
/// resumes when the NIC reports space (no polling). Open-loop sources are temporally
/// decoupled by `lookahead` (posted ahead with their exact send time) only on hosts without
/// TCP connections, because the NIC needs posts in time order. Sinks record throughput and
/// one-way latency per flow (creation to host memory).
#include <cstdint>
#include <string>
#include <vector>

#include <systemc>

#include "fabricsim/core/ring.h"
#include "fabricsim/core/scheduler.h"
#include "fabricsim/core/stats.h"
#include "fabricsim/host/algo/tcp_receiver.h"
#include "fabricsim/host/algo/tcp_sender.h"
#include "fabricsim/host/flow_table.h"
#include "fabricsim/host/traffic_source.h"
#include "fabricsim/nic/nic_device.h"

namespace fabricsim::host {

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

    /// Adds the sending side of flow `flow_id` (already in the flow table): a UDP source or a
    /// TCP sender. `gateway_mac` is the next hop. Before simulation starts.
    void add_source(std::uint32_t flow_id, std::uint32_t dst_ip, const mac_addr& gateway_mac);
    /// Adds the receiving side of TCP flow `flow_id` (ACKs go to `src_ip` via `gateway_mac`).
    void add_tcp_receiver(std::uint32_t flow_id, std::uint32_t src_ip, const mac_addr& gateway_mac);

    /// The application writes `bytes` on app-driven TCP flow `flow` (sent from this host) at
    /// `at` >= now; the receiver's listener hears when they have all arrived.
    void app_write(std::uint32_t flow, std::uint64_t bytes, ps_t at);
    /// Gives TCP flow `flow` (sent from this host) an RTT sample before it starts.
    void seed_rtt(std::uint32_t flow, ps_t rtt) { m_tx[m_flows[flow].tx_slot].snd.seed_rtt(rtt); }
    /// Sender statistics of TCP flow `flow` (sent from this host).
    const tcp_sender::stats& sender_stats(std::uint32_t flow) const {
        return m_tx[m_flows[flow].tx_slot].snd.get_stats();
    }

    void nic_rx(frame& f, ps_t at) override;
    void nic_tx_ready() override;

    /// Copies the TCP senders' end-of-run state into the flow table.
    void export_flow_results() const;

    struct stats {
        std::uint64_t sent_frames = 0;
        std::uint64_t received_frames = 0;
        std::uint64_t received_bytes = 0;
        std::uint64_t tx_blocked = 0;  ///< times data sending stopped on a full NIC queue
    };
    const stats& get_stats() const { return m_stats; }
    void report_stats(nlohmann::json& out) const override;
    /// TCP frames received by the NIC and waiting for their host-memory time.
    std::uint64_t frames_held() const override { return m_rx_fifo.size(); }

private:
    enum class timer_kind : std::uint8_t { UDP_SEND, TCP_START, APP_WRITE, TCP_RTO, TCP_DELACK };
    struct timer {
        ps_t at;
        std::uint32_t slot;
        timer_kind kind;
        bool operator>(const timer& o) const {
            if (at != o.at) return at > o.at;
            if (kind != o.kind) return kind > o.kind;
            return slot > o.slot;
        }
    };
    struct source_slot {
        traffic_source src;
        std::uint32_t dst_ip;
        mac_addr dst_mac;
    };
    struct tcp_tx {
        std::uint32_t flow;
        tcp_sender snd;
        std::uint32_t dst_ip;
        mac_addr next_hop;
        ps_t rto_queued = 0;   ///< time of this flow's RTO entry in the heap (0 = none)
        bool blocked = false;  ///< waiting for NIC queue space
        bool ect = false;
    };
    struct tcp_rx {
        std::uint32_t flow;
        tcp_receiver rcv;
        std::uint32_t src_ip;
        mac_addr next_hop;
        ps_t delack_queued = 0;
        bool ect_acks = false;  ///< DCTCP: ACKs are ECN-capable too (Linux)
    };
    struct pending_write {
        std::uint32_t tx_slot;
        std::uint64_t bytes;
    };
    struct rx_entry {
        frame* f;
        ps_t at;
    };

    void on_timer();
    void end_of_elaboration() override;
    void push_timer(ps_t at, timer_kind kind, std::uint32_t slot);
    void rearm();
    void fire(const timer& t, ps_t now);
    void send_udp(std::uint32_t slot, ps_t at);
    void write_now(std::uint32_t tx_slot, std::uint64_t bytes, ps_t now);
    void process_rx(frame& f, ps_t now);
    void on_tcp_data(frame& f, ps_t now);
    void on_tcp_ack(frame& f, ps_t now);
    /// Sends what flow `slot`'s window allows; re-queues its RTO entry.
    void pump(std::uint32_t slot, ps_t now);
    void sync_rto(std::uint32_t slot);
    void send_ack(tcp_rx& r, const ack_decision& a, ps_t now);
    /// A pooled frame with this host's addresses and `spec`'s class and flow id (UDP and TCP
    /// alike).
    frame& new_frame(const flow_spec& spec, std::uint32_t dst_ip, const mac_addr& dst_mac,
                     std::uint16_t sport, std::uint16_t dport);
    frame& new_tcp_frame(std::uint32_t flow, std::uint32_t dst_ip, const mac_addr& dst_mac,
                         std::uint16_t sport, std::uint16_t dport);

    host_identity m_id;
    nic::nic_device& m_nic;
    flow_table& m_flows;
    std::uint64_t m_seed;
    ps_t m_lookahead;
    std::size_t m_data_reserve;  ///< free NIC TX slots kept for ACKs: data waits below it
    std::vector<source_slot> m_sources;
    std::vector<tcp_tx> m_tx;
    std::vector<tcp_rx> m_rx;
    std::vector<pending_write> m_writes;  ///< scheduled application writes (slot = index)
    std::vector<std::uint32_t> m_free_writes;
    std::vector<std::uint32_t> m_blocked;  ///< tcp_tx slots waiting for NIC space, in order
    ring<rx_entry> m_rx_fifo{64};
    std::vector<timer> m_heap;  ///< min-heap via std::push_heap/greater
    model_timer m_wake = model_timer::bind<host, &host::on_timer>(this);
    stats m_stats;
};

}  // namespace fabricsim::host
