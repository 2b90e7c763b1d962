#pragma once
/// The NIC's register block (CSR/MMIO, STYLE rule 7): a 4 KiB window of 32-bit registers on a
/// TLM-2.0 generic-payload target socket, so that a CPU model in a virtual platform can read
/// the NIC's identity and counters, program its rate limiters and send frames through an MMIO
/// transmit window (inline descriptors, like Mellanox BlueFlame). Map: docs/models/nic.md.
/// Timing model: loosely timed, blocking only (b_transport). Each access adds a fixed latency
/// to the annotated delay: `read_latency` (the CPU's MMIO read round trip, it stalls) or
/// `write_latency` (a posted write: when the NIC sees it). The register effect happens in the
/// call, at the kernel time; only the doorbell uses the annotated time: the frame is posted to
/// the NIC at now + delay (after the write latency), and takes the NIC's TX path from there
/// (tx_latency, or the DMA engine with a PCIe model). Ignored: the PCIe link time of the MMIO
/// accesses themselves, write combining, and that inline descriptors skip the descriptor fetch.
/// DMI is refused. Debug transport reads without side effects and writes nothing.
#include <array>
#include <cstdint>

#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include "fabricsim/core/frame.h"
#include "fabricsim/core/frame_pool.h"
#include "fabricsim/core/units.h"

namespace fabricsim::nic {

class nic_device;

/// Register offsets in the block (bytes). Counters are 64 bit: LO at the offset, HI at +4.
namespace reg {
constexpr std::uint32_t WINDOW_BYTES = 0x1000;
constexpr std::uint32_t ID = 0x000;              ///< RO DEVICE_ID << 16 | VERSION
constexpr std::uint32_t LINK_RATE_MBPS = 0x004;  ///< RO
constexpr std::uint32_t MAC_LO = 0x010;          ///< RW MAC bytes 2..5, byte 2 in bits 31:24
constexpr std::uint32_t MAC_HI = 0x014;          ///< RW MAC bytes 0..1, byte 0 in bits 15:8
constexpr std::uint32_t IP_ADDR = 0x018;         ///< RW the NIC's IPv4 address
// Statistics (RO, 64-bit LO/HI pairs; reading LO latches HI)
constexpr std::uint32_t TX_FRAMES = 0x100;
constexpr std::uint32_t TX_BYTES = 0x108;
constexpr std::uint32_t RX_FRAMES = 0x110;
constexpr std::uint32_t RX_BYTES = 0x118;
constexpr std::uint32_t DROPS = 0x120;
constexpr std::uint32_t MMIO_POSTS = 0x128;
constexpr std::uint32_t MMIO_BAD_DESCRIPTORS = 0x130;
constexpr std::uint32_t IGNORED_WRITES = 0x138;
constexpr std::uint32_t DMA_POSTS = 0x140;
constexpr std::uint32_t LSO_SEGMENTS = 0x148;
constexpr std::uint32_t PCIE_BYTES_READ = 0x150;
constexpr std::uint32_t PCIE_BYTES_WRITTEN = 0x158;
constexpr std::uint32_t COUNTERS_END = 0x160;
// MMIO transmit window (RW staging registers; DOORBELL WO)
constexpr std::uint32_t TXD_DST_IP = 0x200;
constexpr std::uint32_t TXD_DST_MAC_LO = 0x204;
constexpr std::uint32_t TXD_DST_MAC_HI = 0x208;
constexpr std::uint32_t TXD_PORTS = 0x20c;  ///< src port << 16 | dst port
constexpr std::uint32_t TXD_LEN = 0x210;    ///< IPv4 packet bytes
constexpr std::uint32_t TXD_CLASS = 0x214;  ///< dscp 5:0, ecn 9:8, pcp 18:16
constexpr std::uint32_t TXD_FLOW = 0x218;
constexpr std::uint32_t TXD_DOORBELL = 0x21c;
// Rate limiters (with a bank: DCQCN on)
constexpr std::uint32_t RL_COUNT = 0x300;      ///< RO
constexpr std::uint32_t RL_INDEX = 0x304;      ///< RW
constexpr std::uint32_t RL_RATE_MBPS = 0x308;  ///< RW, 0 = unlimited
// Rings: RING_SELECT picks one, the others show it
constexpr std::uint32_t RING_SELECT = 0x400;   ///< RW bit 8: 1 = RX; bits 7:0: ring index
constexpr std::uint32_t RING_BASE_LO = 0x404;  ///< RW the ring's host address (kept, unused)
constexpr std::uint32_t RING_BASE_HI = 0x408;  ///< RW
constexpr std::uint32_t RING_SIZE = 0x40c;     ///< RO descriptors (0: no such ring)
constexpr std::uint32_t RING_HEAD = 0x410;     ///< RO consumer index mod 2^32
constexpr std::uint32_t RING_TAIL = 0x414;     ///< RO producer index mod 2^32
constexpr std::uint32_t RING_PEAK = 0x418;     ///< RO most descriptors in use
// Interrupt coalescing of every RX queue (with the host's receive path, nic.rx.napi)
constexpr std::uint32_t COAL_RX_USECS = 0x500;   ///< RW rx-usecs, whole microseconds
constexpr std::uint32_t COAL_RX_FRAMES = 0x504;  ///< RW rx-frames
constexpr std::uint32_t COAL_ADAPTIVE = 0x508;   ///< RW 1 = net_dim
constexpr std::uint32_t IRQ_COUNT = 0x50c;       ///< RO interrupts raised, mod 2^32
constexpr std::uint32_t RINGS_MAX = 8;           ///< base registers kept per direction

constexpr std::uint32_t DEVICE_ID = 0x4653;  ///< "FS"
constexpr std::uint32_t VERSION = 1;
constexpr std::uint32_t TXD_LEN_MIN = IPV4_HEADER + UDP_HEADER;
constexpr std::uint32_t TXD_LEN_MAX = 9216;  ///< jumbo IPv4 packet
}  // namespace reg

/// The register block of a nic_device (built by it when nic_config::csr.enabled is set).
class nic_registers : public sc_core::sc_module
{
public:
    nic_registers(const sc_core::sc_module_name& name, nic_device& nic);

    tlm_utils::simple_target_socket<nic_registers, 32> socket{"socket"};

    /// The NIC's own addresses, the source of MMIO frames (the MAC_* and IP_ADDR registers).
    void set_identity(const mac_addr& mac, std::uint32_t ip);

    struct stats {
        std::uint64_t mmio_posts = 0;       ///< frames sent through the doorbell
        std::uint64_t bad_descriptors = 0;  ///< doorbells refused: TXD_LEN out of range
        std::uint64_t ignored_writes = 0;   ///< RL_*/COAL_* writes without the block behind them
        std::uint64_t error_responses = 0;  ///< accesses answered with an error response
    };
    const stats& get_stats() const { return m_stats; }

private:
    frame_pool& m_pool = frame_pool::current();  // the platform's (frame_pool::scope)
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    unsigned transport_dbg(tlm::tlm_generic_payload& gp);
    bool get_direct_mem_ptr(tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi);

    /// The response an access of `gp` gets before the register looks at it (OK if none).
    static tlm::tlm_response_status check(const tlm::tlm_generic_payload& gp);
    static bool mapped(std::uint32_t offset);
    /// Register read; `latch` is false for debug reads (no HI latch).
    tlm::tlm_response_status read(std::uint32_t offset, std::uint32_t& value, bool latch);
    tlm::tlm_response_status write(std::uint32_t offset, std::uint32_t value, ps_t at);
    std::uint64_t counter(std::uint32_t index) const;
    void ring_doorbell(ps_t at);

    nic_device& m_nic;
    mac_addr m_mac{};
    std::uint32_t m_ip = 0;
    std::uint32_t m_txd_dst_ip = 0;
    std::uint32_t m_txd_mac_lo = 0;
    std::uint32_t m_txd_mac_hi = 0;
    std::uint32_t m_txd_ports = 0;
    std::uint32_t m_txd_len = 0;
    std::uint32_t m_txd_class = 0;
    std::uint32_t m_txd_flow = 0;
    std::uint32_t m_rl_index = 0;
    std::uint32_t m_ring_select = 0;
    std::array<std::array<std::uint64_t, reg::RINGS_MAX>, 2> m_ring_base{};  ///< [TX, RX][ring]
    /// The selected ring's size, head, tail and peak (all 0 when it does not exist).
    std::array<std::uint32_t, 4> ring_registers() const;
    tlm::tlm_response_status coalescing_write(std::uint32_t offset, std::uint32_t value);
    static constexpr std::uint32_t COUNTERS = (reg::COUNTERS_END - reg::TX_FRAMES) / 8;
    std::array<std::uint32_t, COUNTERS> m_latched_hi{};
    stats m_stats;
};

}  // namespace fabricsim::nic
