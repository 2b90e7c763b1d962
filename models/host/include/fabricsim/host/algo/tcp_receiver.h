#pragma once
/// Receiving half of a TCP connection (plain C++, no SystemC): cumulative ACKs with an
/// out-of-order range list, delayed ACKs (one per `ack_every` in-order segments or after
/// `delayed_ack_timeout`), and the three ECN feedback modes.
///
/// Model note. Byte offsets are the connection's 64-bit stream offsets (no ISN, no wrap).
/// ACKs are immediate for out-of-order and duplicate segments and for a segment that fills
/// a hole (RFC 5681 §4.2); in-order segments are ACKed every `ack_every`-th or when the
/// delayed-ACK timer, started by the first unacknowledged segment, fires. ECN feedback:
/// RFC 3168 latches ECE from a CE segment until a CWR segment arrives; DCTCP (seed-000 §1.2)
/// runs the two-state machine: when the CE bit of an arriving segment differs from the
/// previous one, the segments received so far are ACKed at once with the old state's ECE,
/// then the new segment is counted under the new state. The echoed send time follows
/// RFC 7323's TS.Recent (the first segment after the last ACK sent). With `sack`, every ACK
/// lists up to three out-of-order ranges (RFC 2018): the one holding the most recent segment
/// first, then the others from the lowest up. Ignored: receive-window updates (the window is
/// fixed), D-SACK, quick-ACK mode, PAWS.
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "fabricsim/core/units.h"
#include "fabricsim/host/algo/byte_ranges.h"

namespace fabricsim::host {

enum class ecn_feedback {
    NONE,     ///< not ECN-capable: never sets ECE
    RFC3168,  ///< ECE on every ACK from a CE segment until a CWR segment
    DCTCP,    ///< ECE mirrors the CE bit of the segments each ACK covers (two-state machine)
};

struct tcp_receiver_params {
    std::uint32_t ack_every = 2;  ///< m: in-order segments per delayed ACK (1 = every segment)
    ps_t delayed_ack_timeout = PS_PER_MS;  ///< delayed-ACK timer
    ecn_feedback ecn = ecn_feedback::NONE;
    bool sack = true;  ///< SACK permitted (RFC 2018)
    void validate() const;
};

/// One ACK the receiver wants sent now. No default member values: make_ack sets them all,
/// and zeroing the out[2] of each on_segment call cost ~20 instructions per segment.
struct ack_decision {
    std::uint64_t ack;  ///< cumulative: next byte expected
    bool ece;
    ps_t ts_echo;  ///< echoed send time (0 = none)
    std::uint8_t sack_blocks;
    std::array<std::uint64_t, 6> sack_edges;  ///< [begin, end) pairs
};

class tcp_receiver
{
public:
    explicit tcp_receiver(const tcp_receiver_params& p = tcp_receiver_params{});

    /// Data segment [seq, seq + len) arrives at `now` with its CE and CWR bits and the send
    /// time `ts`. Writes the ACKs to send now (0, 1 or 2: DCTCP's state change first ACKs the
    /// earlier segments) and returns their count. `more`: further in-order segments of the same
    /// GRO aggregate follow at once, so an in-order segment is not ACKed yet (the aggregate's
    /// last one is, as Linux ACKs a GRO skb of more than one MSS at once).
    unsigned on_segment(ps_t now, std::uint64_t seq, std::uint32_t len, bool ce, bool cwr, ps_t ts,
                        ack_decision out[2], bool more = false);
    /// The delayed-ACK timer fired; returns true and the ACK if one was pending.
    bool on_delayed_ack_timer(ps_t now, ack_decision& out);
    /// When the delayed-ACK timer must fire (0 = not running).
    ps_t delayed_ack_deadline() const { return m_delack_at; }

    /// An ACK now, whatever is pending (a window update).
    ack_decision ack_now() { return make_ack(); }
    std::uint64_t rcv_nxt() const { return m_rcv_nxt; }
    /// Bytes received beyond rcv_nxt (out of order).
    std::uint64_t out_of_order_bytes() const;

    struct stats {
        std::uint64_t segments = 0;
        std::uint64_t ce_segments = 0;
        std::uint64_t out_of_order = 0;
        std::uint64_t duplicates = 0;
        std::uint64_t acks = 0;
        std::uint64_t ece_acks = 0;
        std::uint64_t delayed_ack_timeouts = 0;
    };
    const stats& get_stats() const { return m_stats; }

private:
    ack_decision make_ack();
    bool ece_now() const;

    tcp_receiver_params m_p;
    std::uint64_t m_rcv_nxt = 0;
    byte_ranges m_ooo;               ///< received beyond rcv_nxt
    std::uint32_t m_pending = 0;     ///< in-order segments not yet ACKed (or ack_every: ACK next)
    std::uint64_t m_last_ack = 0;    ///< ack number of the last ACK sent
    std::uint64_t m_recent_ooo = 0;  ///< start of the most recent out-of-order segment
    ps_t m_ts_recent = 0;
    ps_t m_delack_at = 0;
    bool m_ce_state = false;     ///< DCTCP: CE bit of the last segment
    bool m_ece_latched = false;  ///< RFC 3168
    stats m_stats;
};

}  // namespace fabricsim::host
