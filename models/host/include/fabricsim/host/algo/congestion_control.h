#pragma once
/// Sender-side congestion-control algorithms of the host transports (plain C++, no SystemC):
/// TCP NewReno (RFC 5681 + RFC 6582), ECN* (NewReno + RFC 3168 halving), DCTCP (seed-000 §1.3,
/// eq 2.1/2.2 and the RTT-fair variant eq 3.35; seed-001 §1.9), CUBIC (RFC 8312) and GEMINI
/// (seed-002 §1.1, Algorithm 1: ECN and delay, RTT-scaled decrease, BDP-scaled increase).
///
/// Model note. Units: bytes for every window and sequence number, fabricsim::ps_t for time.
/// Sequence numbers are the connection's 64-bit byte offsets starting at 0 (no wrap-around,
/// no ISN); `snd_nxt` is one past the highest byte sent. Modelled: slow start and congestion
/// avoidance with appropriate byte counting, NewReno fast retransmit / fast recovery with
/// window inflation, partial ACKs and the `recover` point, RTO loss window, ECN reaction at most
/// once per window of data with CWR signalling, the DCTCP alpha estimator, CUBIC's cubic and
/// TCP-friendly windows with fast convergence, slow-start restart after idle (SACK recovery is
/// the sender's, tcp_sender.h), HyStart (Linux tcp_cubic's, for CUBIC and optionally GEMINI).
/// Ignored: PRR, limited transmit, cwnd validation (the
/// window grows on every new ACK whether or not the sender was cwnd-limited), receive window, RFC
/// 3168's "cwnd = 1 MSS -> wait for the RTO" rule, ECE carried on duplicate ACKs (see on_dupack),
/// undo of spurious reductions.
///
/// The connection (sequence numbers, retransmission, RTO timer, delayed-ACK receiver) is the
/// caller. Per event it calls:
///   - on_ack() for every ACK that advances snd_una (acked_bytes > 0), BEFORE it sends the new
///     data the ACK allows; it acts on the returned ack_outcome (PARTIAL_ACK: retransmit the
///     first unacknowledged segment and, per RFC 6582 "impatient" or not, re-arm the RTO).
///   - on_dupack() for every duplicate ACK, and on_dupack_threshold() on the 3rd one; when the
///     latter returns true the connection fast-retransmits snd_una.
///   - on_rto() when the retransmission timer fires (before retransmitting).
///   - should_set_cwr() when building each new data segment; if true it sets CWR on it and calls
///     on_cwr_sent(). ecn_capable() tells it whether to send ECT(0) data / negotiate ECN at all.
/// Sending is allowed while flight + segment <= cwnd().
#include <cstdint>

#include "fabricsim/core/units.h"

namespace fabricsim::host {

/// Which algorithm a congestion_control instance runs.
enum class cc_kind {
    NEWRENO,   ///< RFC 5681/6582, not ECN-capable (ECE is ignored)
    ECN_STAR,  ///< NewReno that also halves on ECE, at most once per window (RFC 3168)
    DCTCP,     ///< ECN-capable, cut cwnd(1 - alpha/2) once per window (seed-000 §1.3)
    CUBIC,     ///< RFC 8312; ECN-capable only with cc_params::cubic_ecn (ECE = loss, §4.5)
    GEMINI,    ///< seed-002 Algorithm 1: DCTCP-style alpha x F on ECE, beta on RTT_min > base + T
};

/// GEMINI's parameters (seed-002 Table 3.4 defaults) and the clamps the thesis leaves open.
struct gemini_params {
    /// C: the bottleneck capacity of F and h in bit/s ("a constant per network"); 0 = the
    /// sender's line rate (the transport fills it in before the connection starts).
    std::uint64_t capacity_bps = 0;
    /// K: the DCN switches' ECN threshold in bytes, in F = 4K/(C RTT_base + K); 0 = 50 packets
    /// of 1500 B per Gb/s of C (Table 3.4).
    std::uint64_t k_bytes = 0;
    ps_t t = 5 * PS_PER_MS;   ///< T: WAN congestion when RTT_min > RTT_base + T
    double beta = 0.2;        ///< f_wan, and the loss decrease (see congestion_control)
    double h_scale = 1.2e-7;  ///< H of h = H C RTT_base, C in bit/s and RTT_base in s
    double h_min = 0.1;       ///< bounds of h, in MSS per RTT (the thesis' "protection")
    double h_max = 5;
    double f = 0;  ///< fixed F instead of 4K/(C RTT_base + K) (0 = computed)
    /// A cut never exceeds this fraction of cwnd (the thesis gives no clamp; F > 1 whenever
    /// K > C RTT/3, so alpha F alone could exceed 1).
    double max_cut = 0.5;
    /// RTT_base is the minimum over the last 1-2 windows of this length; 0 = the connection's.
    ps_t rtt_base_window = 0;
    bool pacing = true;            ///< pace on a NIC rate limiter at ratio x cwnd / srtt
    double pacing_ss_ratio = 2.0;  ///< Linux tcp_pacing_ss_ratio (200 %)
    double pacing_ca_ratio = 1.2;  ///< Linux tcp_pacing_ca_ratio (120 %)
    /// HyStart in slow start (off: the thesis does not describe GEMINI's slow start).
    bool hystart = false;
    /// Table 3.5: U[0, rtt_noise] added to every RTT sample the algorithm sees (RTT_min,
    /// RTT_base, HyStart), as the thesis added estimation errors in its kernel module; 0 = off.
    ps_t rtt_noise = 0;
    std::uint64_t noise_seed = 0;  ///< the noise's stream (the transport sets it per flow)
};

/// Parameters of one connection's congestion control. Plain aggregate; validate() throws
/// std::invalid_argument on nonsense values.
struct cc_params {
    cc_kind kind = cc_kind::NEWRENO;
    std::uint32_t mss = 1460;                    ///< sender MSS (payload bytes per segment)
    std::uint32_t initial_window_segments = 10;  ///< IW (RFC 6928); seed-001 sims use 16
    std::uint64_t initial_ssthresh_bytes = 0;    ///< 0 = "arbitrarily high" (RFC 5681)
    std::uint32_t abc_limit_segments = 2;        ///< L of RFC 3465: max slow-start step per ACK
    double dctcp_g = 1.0 / 16;                   ///< alpha gain g, 0 < g <= 1
    double dctcp_initial_alpha = 1.0;            ///< alpha before the first window (Linux: 1)
    bool rtt_fair = false;                       ///< DCTCP: per-ACK decrease of eq 3.35
    double cubic_c = 0.4;                        ///< C, in segments / s^3
    double cubic_beta = 0.7;                     ///< beta_cubic
    bool cubic_fast_convergence = true;
    bool cubic_tcp_friendly = true;  ///< RFC 8312 §4.2 W_est region
    bool cubic_ecn = false;          ///< CUBIC treats ECE as a loss event (§4.5)
    bool cubic_hystart = true;       ///< HyStart in slow start (Linux and ns-3 default)
    gemini_params gemini;            ///< GEMINI only
    void validate() const;
    /// HyStart runs for this kind (cubic_hystart, gemini.hystart).
    bool hystart() const {
        return kind == cc_kind::CUBIC ? cubic_hystart : kind == cc_kind::GEMINI && gemini.hystart;
    }
};

/// One ACK that advanced snd_una, as seen by the connection before it reacts.
struct ack_event {
    ps_t now = 0;
    std::uint64_t acked_bytes = 0;          ///< newly cumulatively acked (snd_una delta)
    bool ece = false;                       ///< the ACK carried ECN-Echo
    std::uint64_t snd_una_after = 0;        ///< snd_una including this ACK
    std::uint64_t snd_nxt = 0;              ///< one past the highest byte sent so far
    std::uint64_t flight_bytes_before = 0;  ///< bytes in flight before this ACK
    ps_t rtt_sample = 0;                    ///< valid (Karn-filtered) RTT sample, 0 if none
};

/// What the connection must do in response to an ACK.
enum class ack_outcome {
    NORMAL,         ///< nothing special: send what cwnd allows
    PARTIAL_ACK,    ///< in fast recovery, snd_una < recover: retransmit the first hole
    RECOVERY_EXIT,  ///< full ACK: fast recovery finished, cwnd deflated
};

/// Congestion window of one connection for all four algorithms.
///
/// One class that switches on cc_kind rather than a virtual hierarchy: the variants share ~90%
/// of the state machine (slow start, NewReno recovery, RTO, once-per-window ECN bookkeeping) and
/// differ at three points only (ECE reduction, loss ssthresh, congestion-avoidance increase). A
/// single value type keeps every connection's CC inline in its connection object (no heap
/// allocation per flow, copyable for checkpoints and tests, no virtual dispatch per ACK), and
/// the whole behaviour of a kind can be read in one place per event.
///
/// Choices where the sources are silent (details in congestion_control.cpp):
///  - Congestion avoidance uses appropriate byte counting (RFC 3465 / RFC 5681 §3.1
///    RECOMMENDED): +1 MSS once a full cwnd of bytes has been acked. Slow start adds
///    min(acked, L*MSS) per ACK, capped at ssthresh; the excess feeds congestion avoidance.
///  - Multiplicative decreases round to the nearest byte. Floors: ssthresh >= 2 MSS for every
///    kind (RFC 5681 eq 4; DCTCP: Linux dctcp_ssthresh's 2 segments and the ns-2 minimum window
///    of 2 packets, seed-000 §1.3, so that a delayed-ACK receiver still ACKs without its timer).
///    An ECN cut never raises cwnd (cwnd = min(cwnd, new ssthresh)).
///  - The reduction window (ECN at most once per window, RFC 3168 §6.1.2) ends at the snd_nxt
///    of the reduction; a new ECE reacts only on an ACK with snd_una_after > that point (the ACK
///    covers data sent after the cut; Linux leaves CWR on snd_una > high_seq). Fast retransmit
///    and RTO also start a reduction window. cwnd keeps growing in it (as ns-2; no Linux-style
///    CWR freeze); the ACK that triggers a cut does not also grow cwnd.
///  - DCTCP initial alpha = 1 (Linux dctcp_alpha_on_init; seed-000 §3.3.3 starts new flows at
///    1): a flow with no estimate yet reacts like TCP to its first marks instead of ignoring
///    them. The observation window opens at the first ACK after the previous one closed, ends at
///    that ACK's snd_nxt, closes on the ACK with snd_una_after >= end (Linux dctcp: !before);
///    bytes of every ACK in between count (F is byte-weighted, as Linux). On an ACK that both
///    closes a window and carries ECE the new alpha is used for the cut (Linux order).
///  - RTT-fair DCTCP (eq 3.35): every ECE ACK subtracts acked*alpha/2 bytes (no once-per-window
///    state) and sets ssthresh = cwnd; the +1/W term is the same byte-counted increase. The
///    formula needs no per-flow RTT: the per-ACK update itself scales with the ACK rate.
///  - NewReno: recover = snd_nxt at fast retransmit / RTO; entry needs snd_una > recover
///    (RFC 6582 "Ack - 1 > recover"); full ACK = snd_una_after >= recover, exit with RFC 6582
///    option 1: cwnd = min(ssthresh, max(flight_after, MSS) + MSS).
///  - CUBIC: loss and ECE set W_max (fast convergence), ssthresh = cwnd*beta; the epoch starts
///    at the first congestion-avoidance ACK afterwards; K = cbrt((W_max - cwnd_epoch)/C), which
///    is RFC 8312's cbrt(W_max(1-beta)/C) whenever the epoch starts at beta*W_max, and stays
///    continuous when it does not (RFC 9438 §4.2, Linux); W_est starts at cwnd_epoch. RTT in
///    W_cubic(t+RTT) and W_est = minimum RTT sample (Linux delay_min); before any sample the
///    lookahead is 0 and the TCP-friendly region is off. The target is capped at 1.5 cwnd
///    (RFC 9438). RTO: ssthresh = cwnd*beta, W_max forgotten (RFC 9438 §4.8, Linux reset).
///  - GEMINI (Algorithm 1, per ACK that advances snd_una): congested_dcn = the ACK carries ECE
///    (a DCTCP receiver echoes each CE), congested_wan = RTT_min > RTT_base + T. Congested: cut
///    cwnd x (1 - max(alpha F [dcn], beta [wan])) if the last cut's window of data has been
///    acked (the "> 1 RTT" rule, as DCTCP's once per window), else leave cwnd alone; not
///    congested: slow start below ssthresh, then +h MSS per cwnd of acked bytes. alpha is
///    DCTCP's estimator (dctcp.g, dctcp.initial_alpha). RTT_min is the smallest sample of the
///    previous window of data (the alpha window); RTT_base the smallest of the connection
///    (rtt_base_window = 0) or of the last 1-2 windows of that length. F is not clamped (its
///    ratios between flows are Theorem 3.3.2's fairness) but a cut is at most max_cut (0.5,
///    DCTCP's largest: the thesis has F > 1 whenever K > C RTT/3, so alpha F may exceed 1);
///    before the first sample h = h_min and F = 4 (RTT_base 0). Loss (fast retransmit, RTO):
///    ssthresh = cwnd (1 - beta) (the thesis keeps Linux's recovery but names no loss factor; beta
///    is "the same reduction factor as Cubic"). Floors as the others (2 MSS).
///  - HyStart (Linux tcp_cubic.c, hystart_detect 3): in slow start, a round is the data up to
///    the snd_nxt at its first ACK. From a cwnd of 16 MSS, on ACKs with an RTT sample, slow
///    start ends (ssthresh = cwnd) when an ACK train (ACKs at most 2 ms apart from the round's
///    start) lasts more than min RTT / 2 (min RTT when the flow is paced), or when the smallest
///    of the round's first 8 samples exceeds min RTT + clamp(min RTT / 8, 4 ms, 16 ms). Once per
///    slow start: an RTO arms it again. Linux adds the GSO ack delay to the paced train
///    threshold; there is no GSO here, so it is 0.
class congestion_control
{
public:
    explicit congestion_control(const cc_params& p);

    std::uint64_t cwnd() const { return m_cwnd; }
    std::uint64_t ssthresh() const { return m_ssthresh; }
    bool in_recovery() const { return m_in_recovery; }
    bool in_slow_start() const { return m_cwnd < m_ssthresh; }
    /// Recovery point (snd_nxt at the last fast retransmit or RTO).
    std::uint64_t recover() const { return m_recover; }
    cc_kind kind() const { return m_p.kind; }
    const cc_params& params() const { return m_p; }
    /// True when data segments should carry ECT and ECE is acted upon.
    bool ecn_capable() const;

    /// An ACK that advanced snd_una (acked_bytes > 0; calls with 0 are ignored).
    ack_outcome on_ack(const ack_event& e);
    /// A duplicate ACK (call for every one, the 3rd before on_dupack_threshold): inflates cwnd
    /// by 1 MSS while in fast recovery (RFC 6582 step 4). ECE on dupacks is ignored: they ack
    /// no new bytes (DCTCP's byte-weighted F gives them weight 0) and in a loss episode the
    /// window has already been reduced.
    void on_dupack();
    /// The dupack threshold (3rd dupack) was reached. Returns true if fast recovery was entered
    /// (the connection must fast-retransmit snd_una); false while already in recovery or when
    /// snd_una <= recover (RFC 6582 §3.2 step 1: stale dupacks after an RTO).
    bool on_dupack_threshold(ps_t now, std::uint64_t snd_una, std::uint64_t snd_nxt,
                             std::uint64_t flight_bytes);
    /// Retransmission timeout. `repeated` = the segment was already retransmitted by the timer:
    /// ssthresh is then held (RFC 5681 §3.1). cwnd = 1 MSS, leaves fast recovery.
    void on_rto(ps_t now, std::uint64_t snd_nxt, std::uint64_t flight_bytes, bool repeated = false);
    /// Sending resumes after an idle period longer than the RTO (RFC 5681 §4.1, Linux
    /// tcp_cwnd_restart): ssthresh = max(ssthresh, 3/4 cwnd), cwnd = min(cwnd, IW); CUBIC starts
    /// a new epoch. Never raises cwnd.
    void restart_after_idle();

    /// The next new data segment must carry CWR (set after any reduction when ECN-capable).
    bool should_set_cwr() const { return m_cwr_pending; }
    void on_cwr_sent() { m_cwr_pending = false; }
    /// ECE reductions taken (ECN*, DCTCP cuts, CUBIC ECE events; RTT-fair: marked ACKs).
    std::uint64_t ecn_reductions() const { return m_ecn_reductions; }

    // DCTCP trace
    double alpha() const { return m_alpha; }
    double last_f() const { return m_last_f; }
    std::uint64_t windows_observed() const { return m_windows; }

    // CUBIC trace (windows in bytes, times in seconds)
    double cubic_w_max() const { return m_w_max; }
    double cubic_k() const { return m_k; }
    bool cubic_epoch_started() const { return m_epoch_valid; }
    /// W_cubic(t) = C(t-K)^3 + W_max of the current epoch, t seconds since the epoch start.
    double cubic_window(double t) const;
    /// Minimum RTT sample seen (0 = none).
    ps_t min_rtt() const { return m_min_rtt; }
    /// The connection handshake's RTT: GEMINI's first RTT_base sample (Linux's min_rtt takes
    /// the SYN-ACK's), so flows that start into a queue know the path's base; others ignore it.
    void seed_rtt(ps_t rtt);

    // GEMINI trace
    /// RTT_min: the smallest sample of the last completed window of data (0 = none yet).
    ps_t gemini_rtt_min() const { return m_rtt_min_prev; }
    /// RTT_base: the long-term minimum (0 = no sample yet).
    ps_t gemini_rtt_base() const;
    /// F = 4K/(C RTT_base + K), or the fixed F.
    double gemini_f() const;
    /// h in MSS per RTT, within [h_min, h_max].
    double gemini_h() const;
    /// Reductions GEMINI took with the delay signal on (ecn_reductions(): with ECE on; one
    /// reduction with both signals counts in both).
    std::uint64_t gemini_wan_reductions() const { return m_wan_reductions; }

    /// Slow starts HyStart ended by the ACK train and by the delay increase.
    std::uint64_t hystart_train_exits() const { return m_hs_train_exits; }
    std::uint64_t hystart_delay_exits() const { return m_hs_delay_exits; }

private:
    /// on_ack() with the RTT sample the algorithm sees; inlined into on_ack (the hot path
    /// keeps one call) and into the cold on_noisy_ack, which adds GEMINI's rtt_noise first.
    [[gnu::always_inline]] inline ack_outcome on_sampled_ack(const ack_event& e);
    [[gnu::noinline, gnu::cold]] ack_outcome on_noisy_ack(const ack_event& e);
    std::uint64_t two_mss() const { return 2ull * m_p.mss; }
    std::uint64_t scaled(std::uint64_t bytes, double factor) const;
    void dctcp_observe(const ack_event& e);
    void ece_reduce(const ack_event& e);
    void grow(const ack_event& e);
    void congestion_avoidance(ps_t now, std::uint64_t acked);
    void cubic_avoidance(ps_t now, std::uint64_t acked);
    void cubic_on_congestion();
    void add_fraction(double bytes);
    void start_reduction(std::uint64_t snd_nxt);
    void gemini_observe(const ack_event& e);
    void gemini_reduce(const ack_event& e, bool dcn, bool wan);
    void hystart_update(const ack_event& e);
    std::uint64_t loss_ssthresh(std::uint64_t flight_bytes) const;

    cc_params m_p;
    std::uint64_t m_cwnd;
    std::uint64_t m_ssthresh;
    std::uint64_t m_ca_acked = 0;  ///< ABC byte counter
    double m_carry = 0;            ///< fractional bytes of CUBIC increases
    bool m_in_recovery = false;
    bool m_have_recover = false;
    std::uint64_t m_recover = 0;
    std::uint64_t m_reduce_end = 0;
    bool m_cwr_pending = false;
    std::uint64_t m_ecn_reductions = 0;
    ps_t m_min_rtt = 0;

    double m_alpha;
    double m_last_f = 0;
    std::uint64_t m_windows = 0;
    bool m_window_open = false;
    std::uint64_t m_window_end = 0;
    std::uint64_t m_window_bytes = 0;
    std::uint64_t m_window_ece_bytes = 0;

    double m_w_max = 0;
    double m_w_last_max = 0;
    double m_k = 0;
    double m_origin = 0;
    double m_cwnd_epoch = 0;
    bool m_epoch_valid = false;
    ps_t m_epoch_start = 0;

    ps_t m_rtt_noise = 0;             ///< GEMINI's rtt_noise (0 for every other kind)
    std::uint64_t m_noise_state = 0;  ///< Weyl sequence through splitmix64
    ps_t m_rtt_min_cur = 0;           ///< GEMINI: minimum sample of the open window
    ps_t m_rtt_min_prev = 0;
    ps_t m_base_cur = 0;  ///< windowed RTT_base: minimum of the current and last bucket
    ps_t m_base_prev = 0;
    ps_t m_base_bucket_end = 0;
    std::uint64_t m_wan_reductions = 0;

    bool m_hs_found = false;  ///< HyStart ended this slow start
    std::uint32_t m_hs_samples = 0;
    std::uint64_t m_hs_end_seq = 0;  ///< the round ends when snd_una passes it
    ps_t m_hs_round_start = 0;
    ps_t m_hs_last_ack = 0;   ///< the ACK train's last ACK
    ps_t m_hs_round_rtt = 0;  ///< smallest sample of the round (0: none)
    std::uint64_t m_hs_train_exits = 0;
    std::uint64_t m_hs_delay_exits = 0;
};

}  // namespace fabricsim::host
