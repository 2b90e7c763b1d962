#pragma once
/// A RoCEv2 reliable-connection queue pair as plain C++ (no SystemC): the requester's send side
/// with go-back-N, and the responder's receive side (IBTA vol. 1 §9.7 reliable service, as
/// RoCE NICs without selective repeat implement it).
///
/// Timing model: no time of its own; every input carries its time. Messages (SEND) are split
/// into packets of `mtu` payload bytes (the last one shorter) numbered by a PSN (64-bit here,
/// 24-bit on the wire), opcodes FIRST/MIDDLE/LAST or ONLY. The responder accepts only the
/// expected PSN; a later one is dropped and answered by one NAK (PSN sequence error) until the
/// expected one arrives; an earlier one (a duplicate) is dropped and re-acknowledged. It
/// acknowledges every `ack_every`-th accepted packet and the last packet of each message
/// (coalesced ACKs, cumulative). The requester goes back to the NAK's PSN, or to the oldest
/// unacknowledged PSN when the retransmission timer (`timeout`, restarted by every ACK that
/// acknowledges something new) expires. No window: the requester sends as fast as it is
/// allowed (its rate limiter decides). Retries are unlimited (a real QP goes to the error
/// state after retry_cnt = 7): counted, never fatal.
#include <cstdint>
#include <deque>

#include "fabricsim/core/units.h"

namespace fabricsim::host {

struct roce_params {
    std::uint32_t mtu = 1024;     ///< payload bytes per packet (IB path MTU)
    std::uint32_t ack_every = 1;  ///< responder ACKs every n-th accepted packet
    ps_t timeout = PS_PER_MS;     ///< requester's retransmission timeout
};

class roce_requester
{
public:
    explicit roce_requester(const roce_params& p) : m_p(p) {}

    /// The application posts a SEND of `bytes` (> 0) after the ones before.
    void write(std::uint64_t bytes);
    /// A never-ending stream of MTU packets (a long-lived flow).
    void set_unlimited();

    /// A packet is ready to go (data not yet sent, or to resend after going back).
    bool has_packet() const { return m_nxt < m_end; }
    struct packet {
        std::uint64_t psn;
        std::uint32_t payload;
        std::uint8_t opcode;
        bool retransmission;
    };
    /// The next packet, consumed (has_packet() must be true). Starts the timer if it is idle.
    packet next_packet(ps_t now);

    /// An ACK: every PSN before `psn` has arrived.
    void on_ack(std::uint64_t psn, ps_t now);
    /// A NAK (sequence error): PSNs before `psn` have arrived; resend from `psn`.
    void on_nak(std::uint64_t psn, ps_t now);
    /// When the retransmission timer expires (0 = not running).
    ps_t timeout_deadline() const { return m_una < m_sent_max ? m_timer_start + m_p.timeout : 0; }
    /// The timer expired at `now`: resend from the oldest unacknowledged PSN.
    void on_timeout(ps_t now);

    std::uint64_t una() const { return m_una; }
    std::uint64_t nxt() const { return m_nxt; }
    /// Payload bytes acknowledged so far.
    std::uint64_t acked_bytes() const;
    /// Everything written has been acknowledged (and something was written).
    bool done() const { return m_end != 0 && m_end != UNLIMITED && m_una == m_end; }

    struct counters {
        std::uint64_t packets = 0;        ///< data packets sent, resent ones included
        std::uint64_t retransmitted = 0;  ///< of which resent
        std::uint64_t acks = 0;
        std::uint64_t naks = 0;
        std::uint64_t timeouts = 0;
    };
    const counters& stats() const { return m_stats; }

private:
    static constexpr std::uint64_t UNLIMITED = ~std::uint64_t(0) >> 1;
    struct message {
        std::uint64_t first_psn;
        std::uint64_t packets;
        std::uint64_t bytes;
    };
    void acknowledge(std::uint64_t psn, ps_t now);

    roce_params m_p;
    std::deque<message> m_msgs;  ///< from the one holding m_una on
    std::size_t m_cursor = 0;    ///< the message holding m_nxt
    std::uint64_t m_una = 0;
    std::uint64_t m_nxt = 0;
    std::uint64_t m_sent_max = 0;         ///< highest PSN sent + 1
    std::uint64_t m_end = 0;              ///< PSN after the last packet written
    std::uint64_t m_acked_msg_bytes = 0;  ///< bytes of fully acknowledged messages
    ps_t m_timer_start = 0;
    counters m_stats;
};

/// What the responder does with one packet.
struct roce_response {
    bool accepted = false;  ///< in order: its payload is delivered
    bool ack = false;       ///< send an ACK for `psn`
    bool nak = false;       ///< send a NAK (sequence error) for `psn`
    std::uint64_t psn = 0;  ///< the expected PSN after this packet
};

class roce_responder
{
public:
    explicit roce_responder(const roce_params& p) : m_p(p) {}

    /// A data packet with `psn` arrived; `last` marks the last packet of a message.
    roce_response on_packet(std::uint64_t psn, std::uint32_t payload, bool last);

    std::uint64_t expected() const { return m_epsn; }
    std::uint64_t delivered_bytes() const { return m_bytes; }
    std::uint64_t messages() const { return m_messages; }

    struct counters {
        std::uint64_t out_of_sequence = 0;  ///< dropped: a PSN was missing
        std::uint64_t duplicates = 0;       ///< dropped: arrived before
        std::uint64_t acks = 0;
        std::uint64_t naks = 0;
    };
    const counters& stats() const { return m_stats; }

private:
    roce_params m_p;
    std::uint64_t m_epsn = 0;
    std::uint64_t m_bytes = 0;
    std::uint64_t m_messages = 0;
    std::uint32_t m_since_ack = 0;
    bool m_nak_sent = false;  ///< one NAK per gap
    counters m_stats;
};

}  // namespace fabricsim::host
