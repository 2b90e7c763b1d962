#include "fabricsim/core/frame.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace fabricsim {

void frame::reset() {
    *this = frame{};
}

std::uint32_t frame::header_bytes() const {
    std::uint32_t h = ETH_HEADER + (vlan_tagged ? VLAN_TAG : 0);
    switch (kind) {
        case frame_kind::IPV4_UDP:
        case frame_kind::CREDIT:
            return h + IPV4_HEADER + UDP_HEADER;
        case frame_kind::IPV4_TCP:
            return h + IPV4_HEADER + TCP_HEADER + tcp_option_bytes();
        case frame_kind::PAUSE:
        case frame_kind::PFC:
            return h + 2;  // opcode
        case frame_kind::CNM:
            return h + CNM_FIELDS + cnm_msdu_octets;
        case frame_kind::BCN:
            return h + BCN_FIELDS + cnm_msdu_octets;
        case frame_kind::FERA_TAG:
            return h + FERA_RETURN_FIELDS;
    }
    return h;
}

void frame::set_ipv4(frame_kind l4, std::uint32_t payload) {
    kind = l4;
    payload_bytes = payload;
    // header_bytes() for the data kinds, written out: every data frame comes here, and the
    // control kinds' cases keep header_bytes() from being inlined.
    const std::uint32_t l4_header =
        l4 == frame_kind::IPV4_TCP ? TCP_HEADER + tcp_option_bytes() : UDP_HEADER;
    length = std::max<std::uint32_t>(
        ETH_HEADER + (vlan_tagged ? VLAN_TAG : 0) + IPV4_HEADER + l4_header + payload, 60);
}

void frame::set_pause(std::uint16_t quanta) {
    kind = frame_kind::PAUSE;
    static constexpr mac_addr PAUSE_DST{0x01, 0x80, 0xC2, 0x00, 0x00, 0x01};
    dst_mac = PAUSE_DST;
    vlan_tagged = false;
    pause_quanta = {};
    pause_quanta[0] = quanta;
    payload_bytes = 0;
    ttl = 0;  // no IPv4 header; receivers take ttl <= 1 as their control-path test
    length = 60;
}

void frame::set_pfc(std::uint8_t enable, const std::array<std::uint16_t, 8>& quanta) {
    set_pause(0);
    kind = frame_kind::PFC;
    pfc_enable = enable;
    pause_quanta = quanta;
}

void frame::set_cnm(const frame& sampled, const mac_addr& cp_mac, std::uint64_t cpid,
                    std::uint8_t qfb, std::int16_t qoffset, std::int16_t qdelta,
                    std::uint8_t priority, std::uint8_t msdu_octets) {
    if (&sampled != this) {
        // The sampled frame's header fields (kept for the encapsulated MSDU), not its
        // simulation state.
        src_ip = sampled.src_ip;
        dst_ip = sampled.dst_ip;
        src_port = sampled.src_port;
        dst_port = sampled.dst_port;
        dscp = sampled.dscp;
        ecn = sampled.ecn;
        ip_id = sampled.ip_id;
        tcp_seq = sampled.tcp_seq;
        tcp_ack = sampled.tcp_ack;
        tcp_flags = sampled.tcp_flags;
        tcp_window = sampled.tcp_window;
        sack_blocks = sampled.sack_blocks;
        sack_edges = sampled.sack_edges;
        bth_opcode = sampled.bth_opcode;
        aeth_syndrome = sampled.aeth_syndrome;
        seq_no = sampled.seq_no;
        ack_no = sampled.ack_no;
        payload_bytes = sampled.payload_bytes;
        flow_id = sampled.flow_id;
        vlan_tagged = sampled.vlan_tagged;
        vid = sampled.vid;
    }
    const std::uint32_t tag =
        (sampled.vlan_tagged ? VLAN_TAG : 0) + (sampled.rrt_cpid ? RRT_TAG : 0);
    cnm_encap_msdu_len = static_cast<std::uint16_t>(sampled.length - ETH_HEADER - tag);
    cnm_encap_da = sampled.dst_mac;
    cnm_encap_kind = sampled.kind;
    cnm_encap_priority = sampled.vlan_tagged ? sampled.pcp : std::uint8_t(sampled.dscp >> 3);
    cnm_msdu_octets = static_cast<std::uint8_t>(
        std::min<std::uint32_t>({msdu_octets, CNM_MAX_MSDU_OCTETS, cnm_encap_msdu_len}));
    dst_mac = sampled.src_mac;
    src_mac = cp_mac;
    std::swap(src_ip, dst_ip);
    std::swap(src_port, dst_port);
    pcp = priority;
    kind = frame_kind::CNM;
    cnm_cpid = cpid;
    cnm_fb = qfb & 0x3F;
    cnm_qoffset = qoffset;
    cnm_qdelta = qdelta;
    ttl = 64;  // routed like data: the CP originates it
    length = std::max<std::uint32_t>(header_bytes(), 60);
}

void frame::set_bcn(const frame& sampled, const mac_addr& cp_mac, std::uint32_t cpid, double q_off,
                    double q_delta, double fb, bool stop, std::uint8_t priority,
                    std::uint8_t msdu_octets) {
    set_cnm(sampled, cp_mac, cpid, 0, 0, 0, priority, msdu_octets);
    kind = frame_kind::BCN;
    // 1/256 of the CP's unit, saturated to 32 bits: the RP reacts to what the wire carries.
    auto q8 = [](double v) {
        const double x = std::nearbyint(v * 256.0);
        return static_cast<std::int32_t>(std::clamp(x, -2147483648.0, 2147483647.0));
    };
    bcn_stop = stop;
    bcn_qoff = stop ? 0 : q8(q_off);
    bcn_qdelta = stop ? 0 : q8(q_delta);
    bcn_fb = stop ? 0 : q8(fb);
    length = std::max<std::uint32_t>(header_bytes(), 60);
}

void frame::set_rrt(std::uint32_t cpid) {
    if ((rrt_cpid != 0) == (cpid != 0)) {
        rrt_cpid = cpid;
        return;
    }
    rrt_cpid = cpid;
    // header_bytes() leaves the tag out: frames are built untagged, on the hot path.
    length = std::max<std::uint32_t>(header_bytes() + payload_bytes + (cpid ? RRT_TAG : 0), 60);
}

void frame::set_fera_return(const frame& data, const mac_addr& from) {
    kind = frame_kind::FERA_TAG;
    dst_mac = data.src_mac;
    src_mac = from;
    vlan_tagged = data.vlan_tagged;
    vid = data.vid;
    pcp = data.pcp;
    dscp = data.dscp;
    src_ip = data.dst_ip;
    dst_ip = data.src_ip;
    src_port = data.dst_port;
    dst_port = data.src_port;
    flow_id = data.flow_id;
    fera_rate_bps = data.fera_rate_bps;
    fera_forward = false;
    payload_bytes = 0;
    ttl = 64;  // routed like data
    length = std::max<std::uint32_t>(header_bytes(), 60);
}

namespace {

struct writer {
    std::uint8_t* p;
    std::uint8_t* end;
    void u8(std::uint8_t v) { *p++ = v; }
    void u16(std::uint16_t v) {
        *p++ = std::uint8_t(v >> 8);
        *p++ = std::uint8_t(v);
    }
    void u32(std::uint32_t v) {
        u16(std::uint16_t(v >> 16));
        u16(std::uint16_t(v));
    }
    void mac(const mac_addr& m) {
        std::memcpy(p, m.data(), 6);
        p += 6;
    }
};

std::uint32_t sum16(const std::uint8_t* b, std::size_t n, std::uint32_t acc = 0) {
    for (std::size_t i = 0; i + 1 < n; i += 2) acc += (std::uint32_t(b[i]) << 8) | b[i + 1];
    if (n & 1) acc += std::uint32_t(b[n - 1]) << 8;
    return acc;
}

std::uint16_t fold(std::uint32_t acc) {
    while (acc >> 16) acc = (acc & 0xFFFF) + (acc >> 16);
    return static_cast<std::uint16_t>(~acc & 0xFFFF);
}

}  // namespace

std::size_t frame::to_bytes(std::uint8_t* out, std::size_t capacity) const {
    if (capacity < length) throw std::length_error("frame::to_bytes: buffer too small");
    std::memset(out, 0, length);
    writer w{out, out + length};
    w.mac(dst_mac);
    w.mac(src_mac);
    if (vlan_tagged) {
        w.u16(ethertype::VLAN);
        w.u16(std::uint16_t((pcp & 7u) << 13 | (vid & 0x0FFFu)));
    }
    switch (kind) {
        case frame_kind::PAUSE:
        case frame_kind::PFC: {
            w.u16(ethertype::MAC_CONTROL);
            if (kind == frame_kind::PAUSE) {
                w.u16(0x0001);
                w.u16(pause_quanta[0]);
            } else {
                w.u16(0x0101);
                w.u16(pfc_enable);
                for (auto q : pause_quanta) w.u16(q);
            }
            return length;
        }
        case frame_kind::CNM:
        case frame_kind::BCN: {
            if (kind == frame_kind::CNM) {
                w.u16(ethertype::CNM);
                w.u16(cnm_fb & 0x3Fu);  // version 0 (4 b), reserved (6 b), QuantizedFeedback
                for (int i = 7; i >= 0; --i) w.u8(std::uint8_t(cnm_cpid >> (8 * i)));
                w.u16(std::uint16_t(cnm_qoffset));
                w.u16(std::uint16_t(cnm_qdelta));
                w.u16(std::uint16_t((cnm_encap_priority & 7u) << 13));  // priority, as a TCI
            } else {
                // Our layout (none was published): version 0 (4 b), reserved, STOP (bit 0).
                w.u16(ethertype::BCN);
                w.u16(bcn_stop ? 1 : 0);
                w.u32(std::uint32_t(cnm_cpid));
                w.u32(std::uint32_t(bcn_qoff));
                w.u32(std::uint32_t(bcn_qdelta));
                w.u32(std::uint32_t(bcn_fb));
            }
            w.mac(cnm_encap_da);
            w.u16(cnm_encap_msdu_len);
            if (cnm_msdu_octets) {
                // The sampled frame as it was (addresses and ports back), untagged: its MSDU
                // starts after the EtherType.
                frame s = *this;
                s.kind = cnm_encap_kind;
                s.vlan_tagged = false;
                s.rrt_cpid = 0;
                std::swap(s.src_ip, s.dst_ip);
                std::swap(s.src_port, s.dst_port);
                s.length = ETH_HEADER + cnm_encap_msdu_len;
                std::array<std::uint8_t, 16 * 1024> buf;
                if (s.length > buf.size()) throw std::length_error("frame::to_bytes: CNM MSDU");
                s.to_bytes(buf.data(), buf.size());
                std::memcpy(w.p, buf.data() + ETH_HEADER, cnm_msdu_octets);
            }
            return length;
        }
        case frame_kind::FERA_TAG:
            w.u16(ethertype::FERA);
            w.u8(2);  // returning tag
            w.u8(0);
            for (int i = 7; i >= 0; --i) w.u8(std::uint8_t(fera_rate_bps >> (8 * i)));
            w.u32(flow_id);
            return length;
        case frame_kind::IPV4_UDP:
        case frame_kind::IPV4_TCP:
        case frame_kind::CREDIT:
            break;
    }
    if (rrt_cpid) {
        w.u16(ethertype::RRT);
        w.u32(rrt_cpid);
    }
    w.u16(ethertype::IPV4);
    std::uint8_t* ip = w.p;
    const bool tcp = kind == frame_kind::IPV4_TCP;
    const std::uint32_t opts = tcp ? tcp_option_bytes() : 0;
    const std::uint32_t l4_len = (tcp ? TCP_HEADER + opts : UDP_HEADER) + payload_bytes;
    const std::uint16_t total_len = std::uint16_t(IPV4_HEADER + l4_len);
    w.u8(0x45);
    w.u8(std::uint8_t(dscp << 2 | static_cast<std::uint8_t>(ecn)));
    w.u16(total_len);
    w.u16(ip_id);
    w.u16(0x4000);  // DF
    w.u8(ttl);
    w.u8(tcp ? 6 : 17);
    w.u16(0);  // checksum, below
    w.u32(src_ip);
    w.u32(dst_ip);
    const std::uint16_t ipsum = fold(sum16(ip, IPV4_HEADER));
    ip[10] = std::uint8_t(ipsum >> 8);
    ip[11] = std::uint8_t(ipsum);

    std::uint8_t* l4 = w.p;
    w.u16(src_port);
    w.u16(dst_port);
    if (tcp) {
        w.u32(tcp_seq);
        w.u32(tcp_ack);
        w.u8(std::uint8_t(((TCP_HEADER + opts) / 4) << 4));  // data offset in 32-bit words
        w.u8(tcp_flags);
        w.u16(tcp_window);
        w.u16(0);  // checksum, below
        w.u16(0);  // urgent
        if (sack_blocks) {
            w.u8(1);  // NOP
            w.u8(1);  // NOP
            w.u8(5);  // SACK
            w.u8(std::uint8_t(2 + 8 * sack_blocks));
            for (unsigned i = 0; i < 2u * sack_blocks; ++i) w.u32(std::uint32_t(sack_edges[i]));
        }
    } else {
        w.u16(std::uint16_t(l4_len));
        w.u16(0);  // checksum, below
        if (dst_port == roce::UDP_PORT && payload_bytes >= roce::BTH_BYTES + roce::ICRC_BYTES) {
            // BTH: opcode, SE/M/pad/TVer, P_Key, reserved, dest QP, AckReq/reserved, PSN.
            const bool ack = bth_opcode == roce::ACKNOWLEDGE;
            const std::uint32_t psn = std::uint32_t(ack ? ack_no : seq_no) & 0xFFFFFF;
            const std::uint32_t qp = (flow_id & 0xFFFFFF) + 1;  // QP 0/1 are special
            w.u8(bth_opcode);
            w.u8(0);
            w.u16(0xFFFF);                                       // default P_Key
            w.u32(qp);                                           // reserved byte + 24-bit QP
            w.u32(psn);                                          // AckReq 0, reserved, 24-bit PSN
            if (ack) w.u32(std::uint32_t(aeth_syndrome) << 24);  // MSN 0
        }
    }
    // Pseudo-header checksum over the (zero-filled) payload.
    std::uint32_t acc = sum16(l4, l4_len);
    acc += (src_ip >> 16) + (src_ip & 0xFFFF) + (dst_ip >> 16) + (dst_ip & 0xFFFF);
    acc += (tcp ? 6u : 17u) + l4_len;
    std::uint16_t l4sum = fold(acc);
    if (!tcp && l4sum == 0) l4sum = 0xFFFF;
    const std::size_t off = tcp ? 16 : 6;
    l4[off] = std::uint8_t(l4sum >> 8);
    l4[off + 1] = std::uint8_t(l4sum);
    if (fera_forward && length >= FERA_TAG_BYTES) {
        // The forward tag as an Ethernet trailer after the datagram (and its padding).
        writer t{out + length - FERA_TAG_BYTES, out + length};
        t.u16(ethertype::FERA);
        t.u8(1);  // forward tag
        t.u8(0);
        for (int i = 7; i >= 0; --i) t.u8(std::uint8_t(fera_rate_bps >> (8 * i)));
    }
    return length;
}

mac_addr mac_for_node(std::uint32_t i) {
    // Locally administered unicast: 02:fa:00:xx:xx:xx
    return {0x02, 0xFA, 0x00, std::uint8_t(i >> 16), std::uint8_t(i >> 8), std::uint8_t(i)};
}

std::uint32_t ipv4_for_host(std::uint32_t i) {
    // 10.(i/65024).(i/254 % 256).(i%254+1): skips .0 and .255 host bytes.
    const std::uint32_t c = i % 254 + 1;
    const std::uint32_t rest = i / 254;
    return (10u << 24) | ((rest / 256 % 256) << 16) | ((rest % 256) << 8) | c;
}

}  // namespace fabricsim
