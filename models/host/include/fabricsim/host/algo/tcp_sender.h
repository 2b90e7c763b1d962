#pragma once
/// Sending half of a TCP connection (plain C++, no SystemC): segmentation, the send window
/// min(cwnd, rwnd), NewReno loss recovery, the RFC 6298 retransmission timer and RTT sampling,
/// around one congestion_control and one rtt_estimator.
///
/// Model note. Bytes and 64-bit stream offsets; time in ps. Segments carry at most `mss`
/// payload bytes and are sent only whole (flight + len <= window; no silly-window sends).
/// Loss recovery: 3 duplicate ACKs -> fast retransmit of snd_una (NewReno, RFC 6582,
/// impatient variant: only the first partial ACK restarts the timer); each partial ACK
/// retransmits the next hole. RTO (RFC 6298 5.1-5.7): started by a send when not running,
/// restarted by an ACK of new data, stopped when all is acked; on expiry the RTO backs off
/// and the sender goes back to snd_una (go-back-N, as ns-2 and Linux without SACK) with
/// cwnd = 1 MSS. RTT samples come from the echoed send time of the ACKed segment (RFC 7323
/// timestamps, carried as metadata), so retransmissions give valid samples. Fast retransmit
/// and partial-ACK retransmissions bypass the window (RFC 5681 §3.2).
/// With `sack` (default, as the thesis' "NewReno w/ SACK" stacks), loss recovery follows
/// RFC 6675 instead: a scoreboard of SACKed ranges; recovery starts on the 3rd duplicate ACK
/// or when (DupThresh-1)*MSS bytes above snd_una are SACKed; during recovery cwnd = ssthresh
/// and segments go out while cwnd - pipe >= 1 MSS, first the holes below the highest lost
/// point not already retransmitted (NextSeg rule 1), then new data (rule 2); pipe counts
/// unSACKed bytes not deemed lost plus retransmissions still outstanding. Every retransmission
/// of a recovery is remembered with snd_nxt at its sending; it counts as lost again once data
/// sent after it is SACKed while it is not (Linux's lost-retransmit detection, per segment;
/// RFC 6675 alone would wait for the RTO), and rule 1 sends it again.
/// With `early_retransmit` (RFC 5827, Linux default since 3.6): when fewer than 4 segments are
/// outstanding and nothing new may be sent, oseg-1 duplicate ACKs start recovery (a lost
/// segment near the end of a transfer no longer waits for the RTO; Linux's RTT/4 delay is
/// not modelled). Ignored: NextSeg rules 3-4 (rescue retransmissions), tail loss probes,
/// RACK, D-SACK, limited transmit, Nagle, FIN/SYN handshakes (connections are open from the
/// start), window scaling.
#include <cstdint>
#include <utility>
#include <vector>

#include "fabricsim/core/units.h"
#include "fabricsim/host/algo/byte_ranges.h"
#include "fabricsim/host/algo/congestion_control.h"
#include "fabricsim/host/algo/rtt_estimator.h"

namespace fabricsim::host {

struct tcp_sender_params {
    std::uint64_t rwnd = 6ull << 20;  ///< receiver's advertised window (Linux tcp_rmem max: 6 MiB)
    std::uint32_t dupack_threshold = 3;  ///< RFC 5681
    bool sack = true;                    ///< SACK-based recovery (RFC 6675) instead of NewReno
    bool idle_restart =
        true;  ///< slow-start restart after an idle RTO (RFC 5681 §4.1; Linux default)
    bool early_retransmit = true;  ///< RFC 5827 early retransmit (Linux default)
    void validate() const;
};

/// One segment to put on the wire now.
struct tcp_segment {
    std::uint64_t seq = 0;
    std::uint32_t len = 0;
    bool retransmission = false;
    bool cwr = false;
};

class tcp_sender
{
public:
    tcp_sender(const tcp_sender_params& p, const cc_params& cc, const rtt_params& rtt);

    /// The application appends `bytes` to the stream.
    void write(std::uint64_t bytes) { m_written += bytes; }
    /// An RTT measured before data flows (the connection handshake): sets SRTT and the RTO.
    void seed_rtt(ps_t rtt) {
        m_rtt.on_sample(rtt);
        m_cc.seed_rtt(rtt);
    }
    /// The stream never ends (a long-lived flow).
    void set_unlimited() { m_unlimited = true; }

    /// The next segment the window and the data allow now; false if none.
    bool next_segment(ps_t now, tcp_segment& out);
    /// An ACK arrives: cumulative `ack`, ECN-Echo bit, echoed send time (0 = none) and
    /// `blocks` SACK ranges as [begin, end) pairs in `edges`. `window_update`: the ACK changed
    /// the advertised window (set_peer_window), so it is not a duplicate ACK (RFC 5681 §2).
    void on_ack(ps_t now, std::uint64_t ack, bool ece, ps_t ts_echo, unsigned blocks = 0,
                const std::uint64_t* edges = nullptr, bool window_update = false);
    /// The receiver's advertised window `bytes` as of the next on_ack (the send limit is then
    /// min(it, rwnd)); true when it differs from the last one (a window update).
    bool set_peer_window(std::uint64_t bytes) {
        const std::uint64_t w = std::min(bytes, m_p.rwnd);
        const bool changed = w != m_rwnd;
        m_rwnd = w;
        return changed;
    }
    std::uint64_t peer_window() const { return m_rwnd; }
    /// The retransmission timer fired (the caller calls this at rto_deadline()).
    void on_rto_timer(ps_t now);
    /// When the retransmission timer must fire (0 = not running).
    ps_t rto_deadline() const { return m_rto_at; }

    std::uint64_t snd_una() const { return m_snd_una; }
    std::uint64_t snd_nxt() const { return m_snd_nxt; }
    std::uint64_t written() const { return m_written; }
    bool unlimited() const { return m_unlimited; }
    std::uint64_t flight() const { return m_snd_nxt - m_snd_una; }
    /// RFC 6675 pipe: bytes thought to be in the network (SACK recovery).
    std::uint64_t pipe() const;
    /// Bytes SACKed above snd_una.
    std::uint64_t sacked_bytes() const;
    /// Everything written has been acknowledged (never true for an unlimited stream).
    bool all_acked() const { return !m_unlimited && m_snd_una == m_written; }
    std::uint32_t mss() const { return m_cc.params().mss; }

    const congestion_control& cc() const { return m_cc; }
    const rtt_estimator& rtt() const { return m_rtt; }
    ps_t last_rtt_sample() const { return m_last_sample; }

    struct stats {
        std::uint64_t segments = 0;
        std::uint64_t bytes = 0;
        std::uint64_t retransmitted_segments = 0;
        std::uint64_t fast_retransmits = 0;
        std::uint64_t timeouts = 0;
        std::uint64_t acks = 0;
        std::uint64_t ece_acks = 0;
        std::uint64_t dupacks = 0;
        std::uint64_t lost_retransmits = 0;
        std::uint64_t early_retransmits = 0;
        std::uint64_t idle_restarts = 0;
    };
    const stats& get_stats() const { return m_stats; }

private:
    void arm_rto(ps_t now) { m_rto_at = now + m_rtt.rto(); }
    void add_sack(std::uint64_t b, std::uint64_t e);
    /// Holes below this point are deemed lost (RFC 6675 IsLost).
    std::uint64_t lost_edge() const;
    /// pipe() in SACK recovery, with holes below `lost` deemed lost.
    std::uint64_t pipe_below(std::uint64_t lost) const;
    std::uint64_t sacked_in(std::uint64_t b, std::uint64_t e) const;
    bool sack_recovery() const { return m_p.sack && m_cc.in_recovery(); }
    bool next_sack_segment(ps_t now, tcp_segment& out);
    /// Duplicate ACKs that start loss recovery now (DupThresh, or RFC 5827's oseg-1).
    std::uint32_t recovery_threshold();
    /// Remembers a retransmission of [b, e) sent in SACK recovery.
    void add_retransmission(std::uint64_t b, std::uint64_t e);
    /// Drops retransmissions that were ACKed or SACKed, or that are lost (see the model note).
    void update_retransmissions(std::uint64_t ack);
    void emit(ps_t now, tcp_segment& out, std::uint64_t seq, std::uint32_t len, bool retx);

    tcp_sender_params m_p;
    congestion_control m_cc;
    rtt_estimator m_rtt;
    std::uint64_t m_written = 0;
    bool m_unlimited = false;
    std::uint64_t m_snd_una = 0;
    std::uint64_t m_snd_nxt = 0;
    std::uint64_t m_snd_max = 0;  ///< highest byte ever sent + 1
    std::uint32_t m_dupacks = 0;
    bool m_retx_pending = false;  ///< fast / partial-ACK retransmission of snd_una due
    bool m_timer_retx = false;    ///< snd_una was already retransmitted by the timer
    bool m_partial_seen = false;  ///< a partial ACK already restarted the timer in this recovery
    byte_ranges m_sacked;         ///< SACKed above snd_una
    /// A retransmission in SACK recovery still in the network: [begin, end) and snd_nxt when sent.
    struct retransmission {
        std::uint64_t begin, end, mark;
    };
    std::vector<retransmission> m_rtx;  ///< sorted by begin, disjoint
    ps_t m_rto_at = 0;
    std::uint64_t m_rwnd = 0;  ///< the send limit: rwnd, or less as the receiver advertises
    ps_t m_last_send = 0;      ///< time of the last data segment sent
    ps_t m_last_sample = 0;
    stats m_stats;
};

}  // namespace fabricsim::host
