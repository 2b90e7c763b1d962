#pragma once
/// One Ethernet frame as the hardware sees it, plus simulation metadata.
/// `length` is the L2 frame from destination MAC to the end of the payload, without FCS
/// (what a pcap holds); the wire adds FCS, preamble/SFD and IFG (see wire_bytes()).
/// Frames come from frame_pool; models pass `frame&` and never allocate one per hop.
#include <array>
#include <cstddef>
#include <cstdint>

#include "fabricsim/core/units.h"

namespace fabricsim {

using mac_addr = std::array<std::uint8_t, 6>;

enum class frame_kind : std::uint8_t {
    IPV4_UDP,  ///< data over UDP
    IPV4_TCP,  ///< data or ACK over TCP
    PAUSE,     ///< 802.3x MAC control PAUSE (opcode 0x0001)
    PFC,       ///< 802.1Qbb priority flow control (opcode 0x0101)
    CNM,       ///< 802.1Qau congestion notification message (ethertype 0x22E7)
    CREDIT,    ///< credit frame of credit-based transports (minimum-size UDP)
    BCN,       ///< BCN message (Cisco 802.1Qau proposal; local experimental ethertype 0x88B6)
    FERA_TAG,  ///< FERA returning rate tag (ethertype 0x88B5, docs/models/fera_bcn.md)
};

enum class ecn_codepoint : std::uint8_t { NOT_ECT = 0, ECT1 = 1, ECT0 = 2, CE = 3 };

namespace ethertype {
constexpr std::uint16_t IPV4 = 0x0800;
constexpr std::uint16_t VLAN = 0x8100;
constexpr std::uint16_t MAC_CONTROL = 0x8808;
constexpr std::uint16_t CN_TAG = 0x22E9;
constexpr std::uint16_t CNM = 0x22E7;
// BCN's EtherTypes were never published (facts-l2 §6 item 5): the IEEE 802 local experimental
// ones, 0x88B6 for the message and 0x88B5 for the rate-regulator tag (docs/models/bcn.md).
constexpr std::uint16_t BCN = 0x88B6;
constexpr std::uint16_t RRT = 0x88B5;
constexpr std::uint16_t FERA = 0x88B5;  ///< IEEE 802 local experimental 1: FERA tags
}  // namespace ethertype

/// CREDIT frames of the credit-based transports (ExpressPass): credit, and the connection's
/// control packets, all minimum-size (84 B on the wire).
namespace credit_type {
constexpr std::uint8_t CREDIT = 0, REQUEST = 1, STOP = 2, NACK = 3;
}

namespace tcp_flag {
constexpr std::uint8_t FIN = 0x01, SYN = 0x02, RST = 0x04, PSH = 0x08, ACK = 0x10, URG = 0x20,
                       ECE = 0x40, CWR = 0x80;
}

constexpr std::uint32_t ETH_HEADER = 14;
constexpr std::uint32_t VLAN_TAG = 4;
constexpr std::uint32_t IPV4_HEADER = 20;
constexpr std::uint32_t UDP_HEADER = 8;
constexpr std::uint32_t TCP_HEADER = 20;
constexpr std::uint32_t FCS_BYTES = 4;
constexpr std::uint32_t MIN_FRAME_WITH_FCS = 64;
constexpr std::uint32_t PREAMBLE_SFD = 8;
constexpr std::uint32_t IFG_BYTES = 12;

/// RoCEv2: InfiniBand transport over UDP (IBTA Annex A17).
namespace roce {
constexpr std::uint16_t UDP_PORT = 4791;
constexpr std::uint32_t BTH_BYTES = 12;     ///< base transport header
constexpr std::uint32_t AETH_BYTES = 4;     ///< ACK extended transport header
constexpr std::uint32_t ICRC_BYTES = 4;     ///< invariant CRC trailer
constexpr std::uint32_t CNP_RESERVED = 16;  ///< a CNP's reserved payload
// BTH opcodes (RC transport, and the RoCEv2 CNP)
constexpr std::uint8_t SEND_FIRST = 0x00, SEND_MIDDLE = 0x01, SEND_LAST = 0x02, SEND_ONLY = 0x04,
                       ACKNOWLEDGE = 0x11, CNP = 0x81;
constexpr std::uint8_t AETH_ACK = 0x1F;      ///< ACK, credit count invalid
constexpr std::uint8_t AETH_NAK_SEQ = 0x60;  ///< NAK: PSN sequence error
/// UDP payload of an RC packet with `data` bytes (BTH [+ AETH] + data + ICRC).
constexpr std::uint32_t udp_payload(std::uint8_t opcode, std::uint32_t data) {
    return BTH_BYTES + (opcode == ACKNOWLEDGE ? AETH_BYTES : 0) +
           (opcode == CNP ? CNP_RESERVED : data) + ICRC_BYTES;
}
}  // namespace roce

// Hot fields first: a switch hop (route hash, classification, MMU, link timing) and the
// pool touch only the first cache line; TCP options and MAC control fields come last.
struct alignas(64) frame {
    frame_kind kind = frame_kind::IPV4_UDP;
    bool vlan_tagged = false;
    std::uint8_t pcp = 0;
    std::uint8_t dscp = 0;
    ecn_codepoint ecn = ecn_codepoint::NOT_ECT;
    std::uint8_t ttl = 64;
    bool fcs_error = false;  ///< corrupted on a link; dropped by the next store-and-forward MAC
    bool rx_more = false;    ///< host RX: more segments of the same GRO aggregate follow
    std::uint16_t ingress_port = 0;
    std::uint16_t hops = 0;
    std::uint32_t src_ip = 0;
    std::uint32_t dst_ip = 0;
    std::uint16_t src_port = 0;
    std::uint16_t dst_port = 0;
    std::uint32_t length = 60;        ///< L2 bytes without FCS
    std::uint32_t payload_bytes = 0;  ///< L4 payload
    std::uint32_t flow_id = 0;
    ps_t rx_last_bit = 0;  ///< set by the link: last bit arrives at the receiver
    ps_t created = 0;      ///< when the source generated it
    /// Free-list link, owned by frame_pool while the frame is free; an owner may chain its
    /// frames with it meanwhile (host GRO) and leaves it null when it passes a frame on.
    frame* pool_next = nullptr;

    // Ethernet / 802.1Q
    mac_addr dst_mac{};
    mac_addr src_mac{};
    std::uint16_t vid = 0;

    // IPv4
    std::uint16_t ip_id = 0;

    // L4
    std::uint32_t tcp_seq = 0;
    std::uint32_t tcp_ack = 0;
    std::uint8_t tcp_flags = 0;
    std::uint16_t tcp_window = 0;
    std::uint8_t sack_blocks = 0;  ///< TCP SACK option blocks (RFC 2018), 0..3
    // RoCEv2 (IPV4_UDP to port 4791): BTH opcode; the PSN is seq_no (data, CNP: 0) or ack_no
    // (ACK/NAK: the PSN it acknowledges up to), 24 bits on the wire.
    std::uint8_t bth_opcode = 0;
    std::uint8_t aeth_syndrome = 0;  ///< ACK 0x1F (no credit count), NAK 0x60 (PSN sequence error)

    // Simulation metadata
    std::uint64_t seq_no =
        0;  ///< UDP: per-flow frame number; TCP: 64-bit byte offset of the segment
    std::uint64_t ack_no = 0;  ///< TCP: 64-bit cumulative ACK (tcp_ack is its low 32 bits)
    ps_t ts_echo =
        0;  ///< TCP ACK: send time of the segment it echoes (RFC 7323 TSecr, metadata only)

    std::array<std::uint64_t, 6>
        sack_edges{};  ///< 64-bit [begin, end) pairs; the wire carries the low 32 bits

    // MAC control (PAUSE: quanta[0]; PFC: enable vector + per-priority quanta)
    std::uint8_t pfc_enable = 0;
    std::array<std::uint16_t, 8> pause_quanta{};

    // CNM (802.1Qau, facts-l2 §3.4): the feedback fields, then what it encapsulates of the
    // sampled frame. The sampled frame's IPv4/L4 fields stay in the frame's own (set_cnm).
    std::uint8_t cnm_fb = 0;  ///< QuantizedFeedback, 6 bits
    std::int16_t cnm_qoffset = 0;
    std::int16_t cnm_qdelta = 0;
    std::uint64_t cnm_cpid = 0;
    mac_addr cnm_encap_da{};               ///< the sampled frame's destination MAC
    std::uint16_t cnm_encap_msdu_len = 0;  ///< its MSDU length (after DA, SA, tag, EtherType)
    frame_kind cnm_encap_kind = frame_kind::IPV4_UDP;
    std::uint8_t cnm_encap_priority = 0;  ///< its priority (PCP, or DSCP / 8 untagged)
    std::uint8_t cnm_msdu_octets = 0;     ///< leading MSDU octets carried, 0..64

    // BCN message (set_bcn): CPID in cnm_cpid, the sampled frame as for a CNM; Q_off, Q_δ and
    // Fb in 1/256 of the CP's unit (signed 32-bit fixed point, exact on the wire).
    std::int32_t bcn_qoff = 0;
    std::int32_t bcn_qdelta = 0;
    std::int32_t bcn_fb = 0;
    bool bcn_stop = false;  ///< BCN(0,0): stop, restart at the minimum rate
    /// Data frames: the rate-regulator tag (RRT), the CPID of the BCN CP whose regulator limits
    /// the flow; 0 = untagged. In the frame's tail padding (no size change); on the wire a
    /// 6-byte tag (EtherType 0x88B5, CPID) after the VLAN tag, which `length` includes.
    std::uint32_t rrt_cpid = 0;
    // FERA (seed-003 §1.2), in the struct's tail padding (no size change). A data frame with
    // fera_forward carries a forward tag (a FERA_TAG_BYTES trailer after the IPv4 datagram,
    // counted in length); a FERA_TAG frame is the returning tag. Both carry the rate here.
    bool fera_forward = false;
    /// CREDIT frames: what the credit transport means by it (credit_type::*), in padding.
    std::uint8_t credit_type = 0;
    std::uint64_t fera_rate_bps = 0;

    /// Restore all fields to defaults (called on return to the pool).
    void reset();

    /// Fill headers for an IPv4 data frame with `payload` L4 bytes; sets length (padded to 60).
    void set_ipv4(frame_kind l4, std::uint32_t payload);

    /// Make this an 802.3x PAUSE frame with the given quanta. MAC-control frames have no IPv4
    /// header and carry ttl 0: a switch reaches its control path from its TTL test.
    void set_pause(std::uint16_t quanta);
    /// Make this an 802.1Qbb PFC frame (enable vector + quanta per priority).
    void set_pfc(std::uint8_t enable, const std::array<std::uint16_t, 8>& quanta);
    /// Make this an 802.1Qau CNM about `sampled`, from a congestion point with MAC `cp_mac`
    /// and identifier `cpid`, sent to the sampled frame's source MAC at priority `priority`
    /// (PCP if the sampled frame was tagged; forwarding classifies by it). It carries qfb,
    /// the QOffset/QDelta fields and the first `msdu_octets` (<= 64) octets of the sampled
    /// frame's MSDU. Forwarding is by destination IP here, so the frame keeps the sampled
    /// frame's IPv4/L4 fields with addresses and ports swapped (routed back to the source,
    /// flow_id kept: the reaction point's flow); to_bytes() swaps them back to write the
    /// encapsulated MSDU as it was sampled.
    void set_cnm(const frame& sampled, const mac_addr& cp_mac, std::uint64_t cpid, std::uint8_t qfb,
                 std::int16_t qoffset, std::int16_t qdelta, std::uint8_t priority,
                 std::uint8_t msdu_octets);
    /// Add a forward FERA tag with `rate_bps` (the source's link rate): the trailer's bytes
    /// join length (and the wire time).
    void add_fera_tag(std::uint64_t rate_bps) {
        fera_forward = true;
        fera_rate_bps = rate_bps;
        length += FERA_TAG_BYTES;
    }
    /// Make this the returning tag of forward-tagged data frame `data`, from MAC `from`: to
    /// the data's source, routed back like a CNM (IPv4 addresses and ports swapped, flow_id
    /// kept), with the forward tag's rate.
    void set_fera_return(const frame& data, const mac_addr& from);
    /// Forward tag trailer: EtherType 0x88B5, type 1, reserved, 8-byte rate in bit/s.
    static constexpr std::uint32_t FERA_TAG_BYTES = 12;
    /// Returning tag PDU after the EtherType: type 2, reserved, rate (8 B), flow id (4 B).
    static constexpr std::uint32_t FERA_RETURN_FIELDS = 14;
    /// CNM PDU octets after the EtherType, without the encapsulated MSDU.
    static constexpr std::uint32_t CNM_FIELDS = 24;
    static constexpr std::uint8_t CNM_MAX_MSDU_OCTETS = 64;
    /// Make this a BCN message about `sampled` from the CP with MAC `cp_mac` and id `cpid`:
    /// routed back to the sampled frame's source as set_cnm() does, carrying Q_off, Q_δ and Fb
    /// (in the CP's unit, stored in 1/256) or the STOP flag (BCN(0,0): all three 0), and the
    /// first `msdu_octets` (<= 64) octets of the sampled MSDU.
    void set_bcn(const frame& sampled, const mac_addr& cp_mac, std::uint32_t cpid, double q_off,
                 double q_delta, double fb, bool stop, std::uint8_t priority,
                 std::uint8_t msdu_octets);
    /// Fb of a BCN message in the CP's unit.
    double bcn_feedback() const { return bcn_fb / 256.0; }
    /// BCN PDU octets after the EtherType, without the encapsulated MSDU: version/flags (2),
    /// CPID (4), Q_off (4), Q_δ (4), Fb (4), sampled DA (6), its MSDU length (2).
    static constexpr std::uint32_t BCN_FIELDS = 26;
    /// The rate-regulator tag on the wire: EtherType 0x88B5 and the 32-bit CPID.
    static constexpr std::uint32_t RRT_TAG = 6;
    /// Tag (cpid != 0) or untag (0) a data frame with the RRT; its length follows.
    void set_rrt(std::uint32_t cpid);

    /// L2 to L4 header bytes (a data frame's without its RRT: see set_rrt).
    std::uint32_t header_bytes() const;
    /// TCP option bytes: NOP, NOP, SACK kind/length and 8 bytes per block.
    std::uint32_t tcp_option_bytes() const { return sack_blocks ? 4u + 8u * sack_blocks : 0u; }
    /// Frame size counted by MACs: length + FCS, at least 64.
    std::uint32_t frame_bytes() const {
        const std::uint32_t b = length + FCS_BYTES;
        return b < MIN_FRAME_WITH_FCS ? MIN_FRAME_WITH_FCS : b;
    }
    /// Bytes the frame occupies on the wire: frame + preamble/SFD + IFG.
    std::uint32_t wire_bytes() const { return frame_bytes() + PREAMBLE_SFD + IFG_BYTES; }
    bool is_data() const { return kind == frame_kind::IPV4_UDP || kind == frame_kind::IPV4_TCP; }

    /// Write the frame's `length` bytes (real headers, zero payload) into `out`.
    /// Returns the number of bytes written (== length).
    std::size_t to_bytes(std::uint8_t* out, std::size_t capacity) const;
};

mac_addr mac_for_node(std::uint32_t node_index);
std::uint32_t ipv4_for_host(std::uint32_t host_index);  ///< 10.a.b.c from host index
/// The host index ipv4_for_host() gave `ip`, or ~0 for an address it never gives.
inline std::uint32_t host_index_for_ipv4(std::uint32_t ip) {
    const std::uint32_t c = ip & 0xff;
    if ((ip >> 24) != 10 || c == 0 || c == 255) return ~std::uint32_t(0);
    return ((ip >> 8) & 0xffff) * 254 + (c - 1);
}

}  // namespace fabricsim
