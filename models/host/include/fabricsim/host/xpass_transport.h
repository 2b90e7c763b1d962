#pragma once
/// ExpressPass (credit-based, receiver-driven) as a host transport, after ns2-xpass
/// (facts-mmu-credit-workload §2.3-§2.4): the sender asks for credits (CREDIT_REQUEST, resent
/// every retransmit_timeout until the first credit), sends exactly one data frame per credit
/// it receives (1538 B on the wire: 1460 B of data, 78 B of headers) and a CREDIT_STOP after
/// its last one; the receiver paces credits (84 B, the `credit_dscp` class that switches map to
/// their credit queue) at the rate `xpass_credit_control` sets once per RTT from the credits
/// the data echoes. A credit that finds nothing to send is wasted (counted). Loss recovery is
/// go-back-N: a gap in the data makes the receiver discard and NACK the expected packet (again
/// every retransmit_timeout while it is missing), and the sender rewinds to it. A STOP that
/// arrives before all data (tail loss) is answered with a NACK, and the receiver keeps crediting
/// until everything is in; credits that still reach a stopped sender after stop_timeout make it
/// send the STOP again (a lost STOP).
///
/// With `xpass.aeolus` (ExpressPass*, seed-002 §1.4-1.5, facts §3) the sender also sends its
/// first-RTT budget at line rate right after the request, as unscheduled non-ECT frames that
/// switches drop above their ECN step (selective dropping), then a probe (ECT, like every
/// scheduled frame); the receiver ACKs each unscheduled packet and answers the probe at once, so
/// the probe's ACK names the missing ones, which are resent on the next credits before new
/// data. The request carries the flow's packet count: the receiver takes packets in any order
/// and stops crediting once it has them all.
///
/// With `transport: flashpass` (xpass.flashpass; seed-002 §1.4) the roles turn: the sender
/// sends 84 B emulation packets (credit class, forward path) at the rate of Algorithm 2
/// (`flashpass_rate_control`), each carrying its send time T and a sequence number; the
/// receiver answers each with a credit (credit class, reverse path) echoing both, and the
/// sender sends the data packet of a credit at T + t_wait (at once if the credit comes later).
/// Eq 4.2: once the emulation packets in flight cover the remaining packets, the sender pauses
/// its emulation or, with over-provisioning, sends the further ones non-ECT (switches drop
/// them above `credit_queue.selective_drop`). Data, NACKs and the go-back-N receiver are
/// ExpressPass's.
///
/// Timing model: one host timer per credit at its jittered send time (no lookahead: posts in
/// time order), one per flow start and per pending request or NACK retry (lazy: a stale entry
/// is skipped when it surfaces). Frames are processed at their host-memory time; a data frame
/// is posted the moment its credit is processed. Aeolus's burst is posted at once (the NIC
/// serialises it), as far as the NIC queue has room, the rest when it drains. FlashPass: one
/// emulation timer per sender (the next emulation packet, or the end of a pause) and one release
/// timer (the head of a FIFO of credited packets: credits come back in T order on a FIFO path);
/// with `flashpass.credit_batch`, one flush timer per receiver (its held credit's deadline).
/// Credit-class frames (credits, emulation packets) leave through the credit queue of the
/// host's end of its link when the switch at the other end has one (ns2-xpass: every link
/// end): one timer per host for the head of its FIFO, none for a frame the bucket passes.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "fabricsim/core/rng.h"
#include "fabricsim/host/algo/flashpass.h"
#include "fabricsim/host/algo/xpass.h"
#include "fabricsim/host/transport.h"
#include "fabricsim/nic/algo/rate_limiter.h"

namespace fabricsim::host {

class xpass_transport final : public transport
{
public:
    explicit xpass_transport(host& h, flow_table& flows)
        : transport(h, flows, transport_kind::XPASS, true) {}

    void add_source(std::uint32_t flow, const flow_path& to) override;
    void add_sink(std::uint32_t flow, const flow_path& from) override;
    std::size_t timer_hint() const override {
        return m_tx.size() + 2 * m_rx.size() + 2 * m_fp.size();
    }
    void start() override;
    bool needs_ordered_posts() const override {
        return !m_tx.empty() || !m_rx.empty() || !m_fp.empty();
    }
    void on_timer(std::uint8_t timer_kind, std::uint32_t slot, ps_t at, ps_t now) override;
    void on_frame(frame& f, ps_t at) override;
    void on_tx_ready(ps_t now) override;
    void export_flow_results() const override;
    void report_stats(nlohmann::json& out) const override;
    void add_drops(drop_counters& d) const override;
    std::uint64_t frames_held() const override { return m_cq ? m_cq->count : 0; }

    /// Data bytes a frame carries at most (1538 B on the wire minus the 78 B header).
    static constexpr std::uint32_t MAX_DATA = 1460;
    /// UDP payload bytes beyond the data: ExpressPass's 78 B header less Ethernet, IPv4, UDP
    /// and the FCS.
    static constexpr std::uint32_t XPASS_FIELDS = 78 - 14 - 20 - 8 - 4 - 20;
    /// Aeolus control frames (credit_type values after credit_type::NACK): the probe, its
    /// answer, and the ACK of one unscheduled packet.
    static constexpr std::uint8_t PROBE = 4, PROBE_ACK = 5, DATA_ACK = 6;
    /// FlashPass's emulation packet (sender to receiver, credit class).
    static constexpr std::uint8_t EMULATION = 7;

private:
    // Timer kinds; among timers due at the same time they run in this order.
    enum : std::uint8_t {
        START,
        CREDIT,
        REQUEST_RETRY,
        NACK_RETRY,
        DEMAND_CHECK,
        FP_START,
        EMULATE,
        RELEASE,
        FLUSH,
        CREDIT_TX
    };
    enum class tx_state : std::uint8_t { IDLE, REQUESTING, RECEIVING, STOPPED };
    struct xp_tx {
        xp_tx(std::uint32_t f, std::uint32_t ip, const mac_addr& hop)
            : flow(f), dst_ip(ip), next_hop(hop) {}
        std::uint32_t flow;
        std::uint32_t dst_ip;
        mac_addr next_hop;
        std::uint64_t packets = 0;   ///< data packets of the flow (0: long-lived)
        std::uint64_t next_pkt = 0;  ///< next data packet to send
        tx_state state = tx_state::IDLE;
        ps_t retry_queued = 0;  ///< REQUEST_RETRY entry (0: none)
        ps_t stop_sent = 0;
        bool aeolus = false;
        bool probe_sent = false;
        bool blocked = false;  ///< the burst waits for room in the NIC queue
        aeolus_sender first_rtt;
        xpass_flow_result counters;
    };
    /// A credited FlashPass packet waiting for its release time.
    struct fp_release {
        ps_t at;
        std::uint64_t pkt;
        std::uint64_t emu_seq;
        ps_t emu_sent;
    };
    struct fp_tx {
        fp_tx(std::uint32_t f, std::uint32_t ip, const mac_addr& hop,
              const flashpass_rate_control& c, const rng& r)
            : flow(f), dst_ip(ip), next_hop(hop), ctl(c), draws(r) {}
        std::uint32_t flow;
        std::uint32_t dst_ip;
        mac_addr next_hop;
        flashpass_rate_control ctl;
        rng draws;
        ps_t t_wait = 0;
        ps_t idle_rtt = 0;
        std::uint64_t packets = 0;   ///< data packets of the flow (0: long-lived)
        std::uint64_t next_pkt = 0;  ///< next packet to give a credit
        std::uint64_t emu_seq = 0;   ///< next emulation sequence number
        std::uint64_t echoed = 0;    ///< emulation packets up to the last one credited
        ps_t emu_queued = 0;         ///< EMULATE entry (0: none)
        ps_t paused_at = 0;          ///< Eq 4.2 pause began (0: not paused)
        ps_t last_credit = 0;
        ps_t release_queued = 0;  ///< RELEASE entry (0: none)
        bool early = false;       ///< FlashPass*: first-RTT data before the credits
        bool probe_sent = false;
        bool blocked = false;  ///< the burst waits for room in the NIC queue
        aeolus_sender first_rtt;
        std::vector<fp_release> ring;  ///< FIFO of credited packets (grows by doubling)
        /// Emulation numbers at which the tag turned over-provisioned, then ordinary, ...
        /// (Eq 4.2 flips it a few times a flow): which credits answer over-provisioned ones.
        std::vector<std::uint64_t> over_from;
        bool over_provisioned(std::uint64_t seq) const {
            const auto flips = std::upper_bound(over_from.begin(), over_from.end(), seq);
            return (flips - over_from.begin()) % 2 == 1;  // an odd number at or before seq
        }
        std::size_t head = 0;
        std::size_t count = 0;
        xpass_flow_result counters;
        std::uint64_t e_out() const { return emu_seq - echoed; }
        std::uint64_t remaining() const {
            return packets - std::min(next_pkt, packets) + first_rtt.queued();
        }
        bool all_credited() const { return next_pkt >= packets && first_rtt.queued() == 0; }
    };
    struct xp_rx {
        xp_rx(std::uint32_t f, std::uint32_t ip, const mac_addr& hop, const xpass_credit_control& c,
              const rng& r)
            : flow(f), src_ip(ip), next_hop(hop), ctl(c), draws(r) {}
        std::uint32_t flow;
        std::uint32_t src_ip;
        mac_addr next_hop;
        xpass_credit_control ctl;
        rng draws;
        std::uint64_t expected = 0;      ///< next in-order data packet
        std::uint64_t total = 0;         ///< data packets, from the STOP (0: not known yet)
        ps_t credit_queued = 0;          ///< CREDIT entry (0: not crediting)
        ps_t nack_queued = 0;            ///< NACK_RETRY entry (0: none)
        ps_t check_queued = 0;           ///< DEMAND_CHECK entry (0: none)
        std::uint64_t credit_limit = 0;  ///< demand_known: credits to send (0: not set yet)
        bool started = false;
        bool aeolus = false;
        bool flashpass = false;
        selective_receiver window;           ///< aeolus: packets in any order
        flashpass_credit_batch batch{1, 0};  ///< flashpass.credit_batch: credits held
        ps_t flush_queued = 0;               ///< FLUSH entry of the held credit (0: none)
        xpass_flow_result counters;
    };

    void on_start(std::uint32_t slot, ps_t at);
    void on_credit_due(std::uint32_t slot, ps_t at);
    void on_request_retry(std::uint32_t slot, ps_t at);
    void on_nack_retry(std::uint32_t slot, ps_t at);
    void on_demand_check(std::uint32_t slot, ps_t at);
    // Sender side
    void on_credit(xp_tx& x, const frame& f, ps_t now);
    void on_nack(xp_tx& x, std::uint64_t pkt, ps_t now);
    void send_data(xp_tx& x, const frame& credit, ps_t now);
    void send_request(xp_tx& x, std::uint32_t slot, ps_t now);
    void send_stop(xp_tx& x, ps_t now);
    /// Frames of a first-RTT burst the NIC's TX queue holds at most (about 20 us at line rate).
    std::size_t burst_depth() const;
    /// Aeolus: the first-RTT burst from where it stands, then the probe.
    void pump_unscheduled(std::uint32_t slot, ps_t now);
    /// Data packet `pkt` (scheduled: ECT(0), echoing `credit`; else non-ECT, no echo).
    void post_data(xp_tx& x, std::uint64_t pkt, const frame* credit, ps_t now);
    void on_probe_ack(xp_tx& x, ps_t now);
    /// Aeolus: after the last packet and nothing left to resend, STOP.
    void maybe_stop(xp_tx& x, ps_t now);
    // Receiver side
    void on_data(xp_rx& r, frame& f, ps_t now);
    void on_request(xp_rx& r, std::uint32_t slot, ps_t now);
    void on_stop(xp_rx& r, std::uint32_t slot, std::uint64_t total, ps_t now);
    void send_credit(xp_rx& r, ps_t now);
    void send_nack(xp_rx& r, std::uint32_t slot, ps_t now);
    void on_aeolus_data(xp_rx& r, frame& f, ps_t now);
    /// A CREDIT-kind frame of flow `flow` from this host: type, size on the wire, class.
    frame& control_frame(const flow_spec& spec, std::uint32_t dst_ip, const mac_addr& next_hop,
                         bool from_sender, std::uint8_t type, std::uint32_t wire_bytes);
    /// Posts control frame `f` with sequence field `seq` at `now`.
    void post_control(frame& f, std::uint64_t seq, ps_t now);
    // FlashPass
    void on_fp_start(std::uint32_t slot, ps_t at);
    void on_emulate(std::uint32_t slot, ps_t at);
    void on_release(std::uint32_t slot, ps_t at);
    void on_fp_credit(std::uint32_t slot, const frame& f, ps_t now);
    /// One timestamp of a credit: emulation packet `seq`, sent at `sent`; `rtt` the sample.
    void fp_grant(fp_tx& x, std::uint32_t slot, std::uint64_t seq, ps_t sent, ps_t rtt, ps_t now);
    void on_fp_nack(std::uint32_t slot, std::uint64_t pkt, ps_t now);
    void on_emulation(xp_rx& r, std::uint32_t slot, const frame& f, ps_t now);
    /// Delayed credit sending: the held credit goes out (all its timestamps in one frame).
    void flush_credits(xp_rx& r, ps_t now);
    void on_flush(std::uint32_t slot, ps_t at);
    /// Eq 4.2: the emulation packets in flight, less max_target, cover the remaining packets.
    bool covered(const fp_tx& x) const;
    /// Data packet `e.pkt`; unscheduled (FlashPass* first RTT): non-ECT, no credit echoed.
    void post_fp_data(fp_tx& x, const fp_release& e, ps_t now, bool unscheduled = false);
    /// FlashPass*: the first-RTT burst from where it stands, then the probe.
    void pump_fp_unscheduled(std::uint32_t slot, ps_t now);
    /// Restarts a stopped emulation (more packets need credits).
    void resume_emulation(std::uint32_t slot, ps_t now);
    void fp_trace(const fp_tx& x, ps_t at);
    bool complete(const xp_rx& r) const { return r.total != 0 && r.expected >= r.total; }

    std::vector<xp_tx> m_tx;
    std::vector<xp_rx> m_rx;
    std::vector<fp_tx> m_fp;                  ///< FlashPass senders
    std::vector<std::uint32_t> m_fp_blocked;  ///< FlashPass* bursts waiting for the NIC queue
    bool m_warned_t_wait = false;
    std::vector<std::uint32_t> m_blocked;  ///< senders whose burst waits for the NIC queue

    /// The credit queue of the host's end of its link (host::credit_queue): credit-class
    /// frames wait in a FIFO of frames for the bucket; one CREDIT_TX timer (the head).
    struct link_credit_queue {
        /// A waiting frame and the tokens it takes (its wire bytes, jittered).
        struct entry {
            frame* f = nullptr;
            std::uint32_t cost = 0;
        };
        nic::rate_limiter bucket;  ///< token bucket only; the FIFO is `fifo`
        std::vector<entry> fifo;   ///< ring, sized for the buffer at the smallest frame
        std::size_t head = 0;
        std::size_t count = 0;
        std::uint64_t bytes = 0;  ///< wire bytes waiting (the buffer's tail drop)
        std::uint64_t buffer = 0;
        std::uint32_t selective_drop = 0;
        double jitter = 0;
        std::optional<rng> draws;  ///< with jitter only (2.5 KB)
        /// Tokens a frame of `wire` bytes takes.
        std::uint32_t cost(std::uint32_t wire) {
            if (!draws) return wire;
            return static_cast<std::uint32_t>(
                std::lround(double(wire) * (1.0 + jitter * (2.0 * draws->uniform() - 1.0))));
        }
        ps_t queued = 0;  ///< CREDIT_TX entry (0: none)
        std::uint64_t sent = 0;
        std::uint64_t dropped = 0;
    };
    std::unique_ptr<link_credit_queue> m_cq;  ///< null: no credit queue at this link end
    /// A credit-class frame through the link end's credit queue (posted, held or dropped).
    void post_credit_class(frame& f, ps_t now);
    /// schedule() for the credit queue and the credit batch, out of line: more inlined copies of
    /// the host's timer push made the optimiser stop inlining it into the UDP path.
    [[gnu::noinline]] void schedule_rare(ps_t at, std::uint8_t kind, std::uint32_t slot);
    void on_credit_tx(ps_t at);
};

}  // namespace fabricsim::host
