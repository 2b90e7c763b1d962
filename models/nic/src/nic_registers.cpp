#include "fabricsim/nic/nic_registers.h"

#include <cstring>

#include "fabricsim/core/frame_pool.h"
#include "fabricsim/core/kernel.h"
#include "fabricsim/nic/nic_device.h"

namespace fabricsim::nic {

namespace {

constexpr std::uint32_t WORD = 4;
constexpr std::uint64_t BPS_PER_MBPS = 1'000'000;

bool in(std::uint32_t offset, std::uint32_t first, std::uint32_t end) {
    return offset >= first && offset < end;
}

}  // namespace

nic_registers::nic_registers(const sc_core::sc_module_name& name, nic_device& nic)
    : sc_core::sc_module(name), m_nic(nic) {
    socket.register_b_transport(this, &nic_registers::b_transport);
    socket.register_transport_dbg(this, &nic_registers::transport_dbg);
    socket.register_get_direct_mem_ptr(this, &nic_registers::get_direct_mem_ptr);
}

void nic_registers::set_identity(const mac_addr& mac, std::uint32_t ip) {
    m_mac = mac;
    m_ip = ip;
}

bool nic_registers::mapped(std::uint32_t offset) {
    if (offset % WORD) return false;
    return offset == reg::ID || offset == reg::LINK_RATE_MBPS ||
           in(offset, reg::MAC_LO, reg::IP_ADDR + WORD) ||
           in(offset, reg::TX_FRAMES, reg::COUNTERS_END) ||
           in(offset, reg::TXD_DST_IP, reg::TXD_DOORBELL + WORD) ||
           in(offset, reg::RL_COUNT, reg::RL_RATE_MBPS + WORD) ||
           in(offset, reg::RING_SELECT, reg::RING_PEAK + WORD) ||
           in(offset, reg::COAL_RX_USECS, reg::IRQ_COUNT + WORD);
}

std::array<std::uint32_t, 4> nic_registers::ring_registers() const {
    const bool rx = (m_ring_select >> 8u & 1u) != 0;
    const std::uint32_t ring = m_ring_select & 0xffu;
    auto low = [](std::uint64_t v) { return static_cast<std::uint32_t>(v); };
    if (rx) {
        nic_host_if::rx_ring_status st;
        const nic_host_if* h = m_nic.host();
        if (!h || !h->nic_rx_ring(ring, st)) return {};
        return {st.size, low(st.processed), low(st.written), st.peak};
    }
    if (const tx_dma* dma = m_nic.dma()) {
        if (ring >= dma->config().rings) return {};
        const auto& i = dma->indices(ring);
        return {m_nic.config().tx_queue_frames, low(i.done), low(i.posted), i.peak};
    }
    if (ring != 0) return {};
    // Without a DMA model the TX queue is ring 0: posted = sent + waiting.
    const auto& s = m_nic.get_stats();
    return {m_nic.config().tx_queue_frames, low(s.tx_frames), low(s.tx_frames + m_nic.tx_queued()),
            static_cast<std::uint32_t>(s.tx_queue_peak)};
}

tlm::tlm_response_status nic_registers::coalescing_write(std::uint32_t offset,
                                                         std::uint32_t value) {
    nic_host_if* h = m_nic.host();
    coalesce_params p;
    std::uint64_t interrupts = 0;
    if (!h || !h->nic_coalescing(p, interrupts)) {
        m_stats.ignored_writes++;
        return tlm::TLM_OK_RESPONSE;
    }
    if (offset == reg::COAL_RX_USECS) p.rx_usecs = ps_t(value) * PS_PER_US;
    if (offset == reg::COAL_RX_FRAMES) p.rx_frames = value;
    if (offset == reg::COAL_ADAPTIVE) p.adaptive = (value & 1u) != 0;
    if (!h->nic_set_coalescing(p)) m_stats.ignored_writes++;  // out of range
    return tlm::TLM_OK_RESPONSE;
}

tlm::tlm_response_status nic_registers::check(const tlm::tlm_generic_payload& gp) {
    if (gp.get_address() >= reg::WINDOW_BYTES ||
        !mapped(static_cast<std::uint32_t>(gp.get_address())))
        return tlm::TLM_ADDRESS_ERROR_RESPONSE;
    if (gp.get_data_length() != WORD || gp.get_streaming_width() < WORD)
        return tlm::TLM_BURST_ERROR_RESPONSE;
    if (const unsigned char* be = gp.get_byte_enable_ptr()) {
        const unsigned n = gp.get_byte_enable_length();
        if (n == 0) return tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE;
        for (unsigned i = 0; i < WORD; ++i)
            if (be[i % n] != TLM_BYTE_ENABLED) return tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE;
    }
    return tlm::TLM_OK_RESPONSE;
}

void nic_registers::b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    gp.set_dmi_allowed(false);
    const auto& cfg = m_nic.config().csr;
    delay += to_sc_time(gp.is_write() ? cfg.write_latency : cfg.read_latency);
    tlm::tlm_response_status status = check(gp);
    const auto offset = static_cast<std::uint32_t>(gp.get_address());
    std::uint32_t value = 0;
    if (status == tlm::TLM_OK_RESPONSE && gp.is_read()) {
        status = read(offset, value, true);
        if (status == tlm::TLM_OK_RESPONSE) std::memcpy(gp.get_data_ptr(), &value, WORD);
    } else if (status == tlm::TLM_OK_RESPONSE && gp.is_write()) {
        std::memcpy(&value, gp.get_data_ptr(), WORD);
        status = write(offset, value, now_ps() + to_ps(delay));
    }
    if (status != tlm::TLM_OK_RESPONSE) m_stats.error_responses++;
    gp.set_response_status(status);
}

unsigned nic_registers::transport_dbg(tlm::tlm_generic_payload& gp) {
    const std::uint64_t address = gp.get_address();
    const unsigned length = gp.get_data_length();
    if (!gp.is_read() || address % WORD || length % WORD) return 0;
    unsigned done = 0;
    for (; done < length; done += WORD) {
        const std::uint64_t a = address + done;
        if (a >= reg::WINDOW_BYTES || !mapped(static_cast<std::uint32_t>(a))) break;
        std::uint32_t value = 0;
        if (read(static_cast<std::uint32_t>(a), value, false) != tlm::TLM_OK_RESPONSE) break;
        std::memcpy(gp.get_data_ptr() + done, &value, WORD);
    }
    return done;
}

bool nic_registers::get_direct_mem_ptr(tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi) {
    gp.set_dmi_allowed(false);
    dmi.allow_none();
    dmi.set_start_address(0);
    dmi.set_end_address(~sc_dt::uint64(0));  // no DMI anywhere in the block
    return false;
}

std::uint64_t nic_registers::counter(std::uint32_t index) const {
    const auto& s = m_nic.get_stats();
    const tx_dma* dma = m_nic.dma();
    const pcie_link* pcie = m_nic.pcie();
    switch (index) {
        case 0:
            return s.tx_frames;
        case 1:
            return s.tx_bytes;
        case 2:
            return s.rx_frames;
        case 3:
            return s.rx_bytes;
        case 4:
            return s.drops.total();
        case 5:
            return m_stats.mmio_posts;
        case 6:
            return m_stats.bad_descriptors;
        case 7:
            return m_stats.ignored_writes;
        case 8:
            return dma ? dma->stats().posts : 0;
        case 9:
            return dma ? dma->stats().lso_segments : 0;
        case 10:
            return pcie ? pcie->stats().bytes_read : 0;
        default:
            return pcie ? pcie->stats().bytes_written : 0;
    }
}

tlm::tlm_response_status nic_registers::read(std::uint32_t offset, std::uint32_t& value,
                                             bool latch) {
    const rate_limiter_bank* bank = m_nic.limiters();
    if (in(offset, reg::TX_FRAMES, reg::COUNTERS_END)) {
        const std::uint32_t index = (offset - reg::TX_FRAMES) / 8;
        const std::uint64_t c = counter(index);
        if ((offset - reg::TX_FRAMES) % 8 == 0) {
            value = static_cast<std::uint32_t>(c);
            if (latch) m_latched_hi[index] = static_cast<std::uint32_t>(c >> 32u);
        } else {
            value = latch ? m_latched_hi[index] : static_cast<std::uint32_t>(c >> 32u);
        }
        return tlm::TLM_OK_RESPONSE;
    }
    switch (offset) {
        case reg::ID:
            value = reg::DEVICE_ID << 16u | reg::VERSION;
            break;
        case reg::LINK_RATE_MBPS:
            value = static_cast<std::uint32_t>(m_nic.rate_bps() / BPS_PER_MBPS);
            break;
        case reg::MAC_LO:
            value = std::uint32_t(m_mac[2]) << 24u | std::uint32_t(m_mac[3]) << 16u |
                    std::uint32_t(m_mac[4]) << 8u | m_mac[5];
            break;
        case reg::MAC_HI:
            value = std::uint32_t(m_mac[0]) << 8u | m_mac[1];
            break;
        case reg::IP_ADDR:
            value = m_ip;
            break;
        case reg::TXD_DST_IP:
            value = m_txd_dst_ip;
            break;
        case reg::TXD_DST_MAC_LO:
            value = m_txd_mac_lo;
            break;
        case reg::TXD_DST_MAC_HI:
            value = m_txd_mac_hi;
            break;
        case reg::TXD_PORTS:
            value = m_txd_ports;
            break;
        case reg::TXD_LEN:
            value = m_txd_len;
            break;
        case reg::TXD_CLASS:
            value = m_txd_class;
            break;
        case reg::TXD_FLOW:
            value = m_txd_flow;
            break;
        case reg::RL_COUNT:
            value = bank ? bank->size() : 0;
            break;
        case reg::RL_INDEX:
            value = m_rl_index;
            break;
        case reg::RL_RATE_MBPS:
            value = bank && m_rl_index < bank->size()
                        ? static_cast<std::uint32_t>(bank->at(m_rl_index).rate_bps() / BPS_PER_MBPS)
                        : 0;
            break;
        case reg::RING_SELECT:
            value = m_ring_select;
            break;
        case reg::RING_BASE_LO:
        case reg::RING_BASE_HI: {
            const std::uint32_t ring = m_ring_select & 0xffu;
            const std::uint64_t base =
                ring < reg::RINGS_MAX ? m_ring_base[m_ring_select >> 8u & 1u][ring] : 0;
            value = static_cast<std::uint32_t>(offset == reg::RING_BASE_LO ? base : base >> 32u);
            break;
        }
        case reg::RING_SIZE:
        case reg::RING_HEAD:
        case reg::RING_TAIL:
        case reg::RING_PEAK:
            value = ring_registers()[(offset - reg::RING_SIZE) / WORD];
            break;
        case reg::COAL_RX_USECS:
        case reg::COAL_RX_FRAMES:
        case reg::COAL_ADAPTIVE:
        case reg::IRQ_COUNT: {
            coalesce_params p;
            std::uint64_t interrupts = 0;
            const nic_host_if* h = m_nic.host();
            if (!h || !h->nic_coalescing(p, interrupts)) {
                value = 0;
            } else if (offset == reg::COAL_RX_USECS) {
                value = static_cast<std::uint32_t>(p.rx_usecs / PS_PER_US);
            } else if (offset == reg::COAL_RX_FRAMES) {
                value = p.rx_frames;
            } else if (offset == reg::COAL_ADAPTIVE) {
                value = p.adaptive ? 1 : 0;
            } else {
                value = static_cast<std::uint32_t>(interrupts);
            }
            break;
        }
        default:  // TXD_DOORBELL: write only
            return tlm::TLM_COMMAND_ERROR_RESPONSE;
    }
    return tlm::TLM_OK_RESPONSE;
}

tlm::tlm_response_status nic_registers::write(std::uint32_t offset, std::uint32_t value, ps_t at) {
    rate_limiter_bank* bank = m_nic.limiters();
    switch (offset) {
        case reg::MAC_LO:
            for (unsigned i = 0; i < 4; ++i)
                m_mac[2 + i] = static_cast<std::uint8_t>(value >> (24u - 8u * i));
            break;
        case reg::MAC_HI:
            m_mac[0] = static_cast<std::uint8_t>(value >> 8u);
            m_mac[1] = static_cast<std::uint8_t>(value);
            break;
        case reg::IP_ADDR:
            m_ip = value;
            break;
        case reg::TXD_DST_IP:
            m_txd_dst_ip = value;
            break;
        case reg::TXD_DST_MAC_LO:
            m_txd_mac_lo = value;
            break;
        case reg::TXD_DST_MAC_HI:
            m_txd_mac_hi = value & 0xffffu;
            break;
        case reg::TXD_PORTS:
            m_txd_ports = value;
            break;
        case reg::TXD_LEN:
            m_txd_len = value;
            break;
        case reg::TXD_CLASS:
            m_txd_class = value & 0x0007'033fu;
            break;
        case reg::TXD_FLOW:
            m_txd_flow = value;
            break;
        case reg::TXD_DOORBELL:
            ring_doorbell(at);
            break;
        case reg::RL_INDEX:
            if (bank)
                m_rl_index = value;
            else
                m_stats.ignored_writes++;
            break;
        case reg::RL_RATE_MBPS:
            if (bank && m_rl_index < bank->size())
                bank->at(m_rl_index).set_rate(std::uint64_t(value) * BPS_PER_MBPS, now_ps());
            else
                m_stats.ignored_writes++;
            break;
        case reg::RING_SELECT:
            m_ring_select = value & 0x1ffu;
            break;
        case reg::RING_BASE_LO:
        case reg::RING_BASE_HI: {
            const std::uint32_t ring = m_ring_select & 0xffu;
            if (ring >= reg::RINGS_MAX) {
                m_stats.ignored_writes++;
                break;
            }
            std::uint64_t& base = m_ring_base[m_ring_select >> 8u & 1u][ring];
            base = offset == reg::RING_BASE_LO
                       ? (base & ~0xffff'ffffull) | value
                       : (base & 0xffff'ffffull) | std::uint64_t(value) << 32u;
            break;
        }
        case reg::COAL_RX_USECS:
        case reg::COAL_RX_FRAMES:
        case reg::COAL_ADAPTIVE:
            return coalescing_write(offset, value);
        default:  // ID, LINK_RATE_MBPS, the counters, RL_COUNT, RING_SIZE..PEAK, IRQ_COUNT
            return tlm::TLM_COMMAND_ERROR_RESPONSE;
    }
    return tlm::TLM_OK_RESPONSE;
}

void nic_registers::ring_doorbell(ps_t at) {
    if (m_txd_len < reg::TXD_LEN_MIN || m_txd_len > reg::TXD_LEN_MAX) {
        m_stats.bad_descriptors++;
        return;
    }
    frame& f = m_pool.acquire();
    f.src_mac = m_mac;
    f.src_ip = m_ip;
    f.dst_ip = m_txd_dst_ip;
    f.dst_mac = {static_cast<std::uint8_t>(m_txd_mac_hi >> 8u),
                 static_cast<std::uint8_t>(m_txd_mac_hi),
                 static_cast<std::uint8_t>(m_txd_mac_lo >> 24u),
                 static_cast<std::uint8_t>(m_txd_mac_lo >> 16u),
                 static_cast<std::uint8_t>(m_txd_mac_lo >> 8u),
                 static_cast<std::uint8_t>(m_txd_mac_lo)};
    f.src_port = static_cast<std::uint16_t>(m_txd_ports >> 16u);
    f.dst_port = static_cast<std::uint16_t>(m_txd_ports);
    f.dscp = static_cast<std::uint8_t>(m_txd_class & 0x3fu);
    f.ecn = static_cast<ecn_codepoint>(m_txd_class >> 8u & 3u);
    f.pcp = static_cast<std::uint8_t>(m_txd_class >> 16u & 7u);
    f.vlan_tagged = f.pcp != 0;
    f.flow_id = m_txd_flow;
    f.seq_no = m_stats.mmio_posts++;
    f.created = at;
    f.set_ipv4(frame_kind::IPV4_UDP, m_txd_len - IPV4_HEADER - UDP_HEADER);
    m_nic.post(f, at);
}

}  // namespace fabricsim::nic
