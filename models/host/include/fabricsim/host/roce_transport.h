#pragma once
/// RoCEv2 reliable connections as a host transport: the NIC's RDMA engine for this host's RoCE
/// flows (one queue pair each). Requesters and responders are `roce_requester` /
/// `roce_responder` (go-back-N, coalesced ACKs, NAK on a PSN gap). With DCQCN on the NIC
/// (`nic.dcqcn`), data is ECN-capable, the receiving NIC is the notification point (one
/// `cnp_pacer` per flow: a CNP at most every `cnp_interval`) and the sending NIC the reaction
/// point: a flow's first CNP binds it to a limiter of the NIC's `rate_limiter_bank`, driven by
/// one `dcqcn_rp` per limiter; flows without a limiter go at line rate.
///
/// Timing model: a QP scheduler serves ready queue pairs round robin and keeps the NIC's TX
/// queue a few frames ahead of the wire (enough to cover its tx_latency at line rate), like a
/// NIC's transmit scheduler pulling work requests: paused or busy, the NIC holds only those
/// frames and the QPs wait (a notification from the NIC when it has taken one, no polling). A
/// rate-limited QP is ready again at its limiter's next send time (next-send-time pacing, one
/// timer per paced frame); DCQCN timers are exact deadlines in the host's heap, re-queued
/// lazily. ACKs and CNPs are posted at once, outside the QP scheduler (NICs send them from a
/// separate high-priority path). Frames are processed at their host-memory time.
#include <cstdint>
#include <memory>
#include <vector>

#include "fabricsim/core/ring.h"
#include "fabricsim/host/algo/roce_qp.h"
#include "fabricsim/host/transport.h"
#include "fabricsim/nic/algo/dcqcn.h"

namespace fabricsim::host {

class roce_transport final : public transport
{
public:
    explicit roce_transport(host& h, flow_table& flows)
        : transport(h, flows, transport_kind::ROCE, true) {}

    void add_source(std::uint32_t flow, const flow_path& to) override;
    void add_sink(std::uint32_t flow, const flow_path& from) override;
    std::size_t timer_hint() const override { return 2 * m_tx.size() + m_rx.size(); }
    void start() override;
    bool needs_ordered_posts() const override { return !m_tx.empty() || !m_rx.empty(); }
    void on_timer(std::uint8_t timer_kind, std::uint32_t slot, ps_t at, ps_t now) override;
    void on_frame(frame& f, ps_t at) override;
    void on_tx_ready(ps_t now) override;
    std::uint64_t timeouts(std::uint32_t flow) const override;
    void export_flow_results() const override;
    void report_stats(nlohmann::json& out) const override;
    void add_drops(drop_counters& d) const override;

private:
    // Timer kinds; among timers due at the same time they run in this order.
    enum : std::uint8_t { START, PACE, RTO, RP_TIMER, CNP_DUE };
    struct qp_tx {
        std::uint32_t flow;
        roce_requester req;
        std::uint32_t dst_ip;
        mac_addr next_hop;
        int limiter = -1;      ///< bound rate limiter (-1: line rate)
        ps_t pace_queued = 0;  ///< time of its PACE entry (0 = none)
        ps_t rto_queued = 0;
        bool ready = false;  ///< in the scheduler's ready ring
    };
    struct qp_rx {
        std::uint32_t flow;
        roce_responder rsp;
        std::uint32_t src_ip;
        mac_addr next_hop;
        nic::cnp_pacer np;
        ps_t cnp_queued = 0;
    };
    /// The reaction point of one rate limiter (created at its first binding).
    struct rp_slot {
        std::unique_ptr<nic::dcqcn_rp> rp;
        std::uint32_t owner = 0;  ///< first flow bound: its trace gets the timer events
        ps_t timer_queued = 0;
        double traced_rc = 0, traced_rt = 0;  ///< rates of the last trace row
    };

    void on_start(std::uint32_t slot, ps_t at);
    void on_rto(std::uint32_t slot, ps_t at, ps_t now);
    void on_rp_timer(std::uint32_t limiter, ps_t at, ps_t now);
    void on_cnp_due(std::uint32_t slot, ps_t at, ps_t now);
    void on_data(frame& f, ps_t now);
    void on_response(frame& f, ps_t now);
    void on_cnp(std::uint32_t slot, ps_t now);
    /// The QP scheduler: sends from ready QPs while the NIC queue is short.
    void pump(ps_t now);
    /// Queues QP `slot` for the scheduler now, or at its limiter's next send time.
    void make_ready(std::uint32_t slot, ps_t now);
    void send_packet(std::uint32_t slot, ps_t now);
    void sync_rto(std::uint32_t slot);
    /// Limiter `l`'s reaction point changed (or may have): new rate, trace, next timer.
    void rp_update(unsigned l, ps_t now, roce_trace_row::event why, std::uint32_t flow);
    void post_response(qp_rx& r, bool nak, std::uint64_t psn, ps_t now);
    void post_cnp(qp_rx& r, ps_t now);
    std::size_t depth();

    std::vector<qp_tx> m_tx;
    std::vector<qp_rx> m_rx;
    std::vector<rp_slot> m_rp;  ///< per limiter of the NIC's bank (DCQCN on)
    ring<std::uint32_t> m_ready{16};
    std::size_t m_depth = 0;  ///< frames kept in the NIC TX queue (0: not computed yet)
    bool m_waiting = false;   ///< registered for the NIC's notification
};

}  // namespace fabricsim::host
