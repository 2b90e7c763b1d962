#pragma once
/// TCP connections as a host transport: the senders (NewReno, ECN*, DCTCP, CUBIC through
/// `tcp_sender` and its congestion control) and receivers (`tcp_receiver`) of this host's TCP
/// flows, and the application writes of app-driven flows (partition/aggregate).
///
/// Timing model: timers for flow starts, application writes, retransmission and delayed ACKs
/// in the host's heap (O(log n); a timer that moves later is re-queued lazily when its stale
/// entry surfaces, so restarting the RTO on every ACK costs nothing). Received segments and
/// ACKs are processed at their host-memory time, in order with the timers. Segments and ACKs
/// are posted to the NIC at the time they are decided; data only while the NIC TX queue has
/// more than the host's reserve free (the rest is kept for ACKs), and a blocked flow resumes
/// when the NIC reports space (no polling). Posts must be in time order, so a host with TCP
/// flows runs without lookahead. On a NIC with LSO, the segments one pump sends go to the NIC as
/// sends of up to lso.max_bytes (contiguous, every one but the last a full MSS, CWR only on the
/// first): what Linux's TSO hands the NIC, without its deferral (tcp_tso_should_defer) and
/// autosizing.
/// Receive window: on a host whose application reads at a CPU cost (nic.rx.app_byte_cost), ACKs
/// advertise rwnd minus the bytes not yet read (window field with scale 7) and an application
/// read that at least doubles a window fallen to half the buffer sends a window update (Linux's
/// tcp_cleanup_rbuf rule); elsewhere the window field stays 0xFFFF and the sender's limit is rwnd.
/// No persist timer (ACKs are not lost in these runs).
/// Pacing (GEMINI with gemini.pacing): a started flow is bound to a limiter of the NIC's
/// rate-limiter bank (released when all its data is acked) whose next-send-time spacing is set
/// on every ACK to ratio x cwnd / srtt (Linux fq pacing: 2 in slow start, 1.2 after); a segment
/// waits for its limiter with one host timer per flow, not per segment. Paced flows post single
/// segments (no LSO batching).
#include <cstdint>
#include <vector>

#include "fabricsim/host/algo/tcp_receiver.h"
#include "fabricsim/host/algo/tcp_sender.h"
#include "fabricsim/host/transport.h"

namespace fabricsim::host {

class tcp_transport final : public transport
{
public:
    explicit tcp_transport(host& h, flow_table& flows);

    void add_source(std::uint32_t flow, const flow_path& to) override;
    void add_sink(std::uint32_t flow, const flow_path& from) override;
    std::size_t timer_hint() const override { return 2 * m_tx.size() + m_rx.size(); }
    void start() override;
    bool needs_ordered_posts() const override { return !m_tx.empty() || !m_rx.empty(); }
    void on_timer(std::uint8_t timer_kind, std::uint32_t slot, ps_t at, ps_t now) override;
    void on_frame(frame& f, ps_t at) override;
    void on_tx_ready(ps_t now) override;
    void on_app_read(std::uint32_t flow, std::uint64_t bytes, ps_t at) override;
    void app_write(std::uint32_t flow, std::uint64_t bytes, ps_t at) override;
    std::uint64_t timeouts(std::uint32_t flow) const override;
    void export_flow_results() const override;
    void report_stats(nlohmann::json& out) const override;

    /// Sender statistics of flow `flow` (sent from this host).
    const tcp_sender::stats& sender_stats(std::uint32_t flow) const;

private:
    // Timer kinds; among timers due at the same time they run in this order.
    enum : std::uint8_t { START, APP_WRITE, RTO, DELACK, PACE };
    struct tcp_tx {
        std::uint32_t flow;
        tcp_sender snd;
        std::uint32_t dst_ip;
        mac_addr next_hop;
        ps_t rto_queued = 0;   ///< time of this flow's RTO entry in the heap (0 = none)
        bool blocked = false;  ///< waiting for NIC queue space
        bool ect = false;
        bool paced = false;         ///< GEMINI pacing on the NIC's rate-limiter bank
        std::int32_t limiter = -1;  ///< the bank's limiter while started (-1: none)
        ps_t pace_queued = 0;       ///< time of this flow's PACE entry (0 = none)
    };
    struct tcp_rx {
        std::uint32_t flow;
        tcp_receiver rcv;
        std::uint32_t src_ip;
        mac_addr next_hop;
        ps_t delack_queued = 0;
        bool ect_acks = false;     ///< DCTCP: ACKs are ECN-capable too (Linux)
        bool app_window = false;   ///< the window follows the application's reading
        std::uint64_t rcvbuf = 0;  ///< receive buffer (the flow's rwnd)
        std::uint64_t app_read = 0;
        std::uint64_t adv_edge = 0;  ///< right edge of the last window advertised
    };
    struct pending_write {
        std::uint32_t tx_slot;
        std::uint64_t bytes;
    };

    void on_start(std::uint32_t slot, ps_t at);
    void on_rto(std::uint32_t slot, ps_t at, ps_t now);
    void on_delack(std::uint32_t slot, ps_t at, ps_t now);
    void write_now(std::uint32_t tx_slot, std::uint64_t bytes, ps_t now);
    void on_data(frame& f, ps_t now);
    void on_ack(frame& f, ps_t now);
    /// Sends what flow `slot`'s window allows; re-queues its RTO entry.
    void pump(std::uint32_t slot, ps_t now);
    /// pump() on a NIC with LSO: consecutive full segments go as one send of up to m_lso_max.
    void pump_lso(std::uint32_t slot, ps_t now);
    void sync_rto(std::uint32_t slot);
    /// Paced flow: true if its limiter lets a segment go at `now`, else queues its PACE entry.
    bool pace_allows(tcp_tx& x, std::uint32_t slot, ps_t now);
    /// Paced flow: takes a limiter of the NIC's bank when the flow starts sending.
    void bind_limiter(tcp_tx& x, ps_t now);
    /// Paced flow: the limiter's rate from cwnd and srtt.
    void set_pacing_rate(tcp_tx& x, ps_t now);
    void send_ack(tcp_rx& r, const ack_decision& a, ps_t now);
    frame& new_tcp_frame(std::uint32_t flow, std::uint32_t dst_ip, const mac_addr& dst_mac,
                         std::uint16_t sport, std::uint16_t dport);

    std::vector<tcp_tx> m_tx;
    std::vector<tcp_rx> m_rx;
    std::vector<pending_write> m_writes;  ///< scheduled application writes (slot = index)
    std::vector<std::uint32_t> m_free_writes;
    std::vector<std::uint32_t> m_blocked;  ///< tcp_tx slots waiting for NIC space, in order
    std::uint64_t m_window_updates = 0;    ///< window-update ACKs sent
    std::uint32_t m_lso_max = 0;           ///< the NIC's LSO send size, 0 without LSO
};

}  // namespace fabricsim::host
