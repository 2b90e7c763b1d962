// The NIC register block driven by a CPU model over TLM-2.0 generic payload (b_transport), as
// in a virtual platform. One elaboration per TEST_CASE (ctest runs each in its own process).
#include <algorithm>
#include <array>
#include <functional>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <catch2/catch.hpp>

#include "fabricsim/host/host.h"
#include "fabricsim/nic/nic_registers.h"
#include "fabricsim/phy/link.h"
#include "tb.h"

using namespace fabricsim;
namespace reg = nic::reg;

namespace {

constexpr std::uint64_t RATE = 10'000'000'000ull;

/// A CPU model: a script of register accesses. Every access waits out its annotated delay (the
/// CPU synchronises after each access: no quantum).
struct cpu : sc_core::sc_module {
    tlm_utils::simple_initiator_socket<cpu, 32> socket{"socket"};
    std::function<void(cpu&)> script;
    bool dmi_hint = true;  ///< the DMI-allowed hint of the last access
    ps_t last_delay = 0;   ///< the annotated delay of the last access

    explicit cpu(const sc_core::sc_module_name& n) : sc_core::sc_module(n) {
        SC_HAS_PROCESS(cpu);
        SC_THREAD(run);
    }
    void run() { script(*this); }

    tlm::tlm_response_status access(tlm::tlm_command cmd, std::uint64_t address,
                                    std::uint32_t& value, unsigned length = 4,
                                    unsigned char* byte_enable = nullptr,
                                    unsigned byte_enable_length = 0) {
        tlm::tlm_generic_payload gp;
        gp.set_command(cmd);
        gp.set_address(address);
        gp.set_data_ptr(reinterpret_cast<unsigned char*>(&value));
        gp.set_data_length(length);
        gp.set_streaming_width(length);
        gp.set_byte_enable_ptr(byte_enable);
        gp.set_byte_enable_length(byte_enable_length);
        gp.set_dmi_allowed(true);
        gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        socket->b_transport(gp, delay);
        dmi_hint = gp.is_dmi_allowed();
        last_delay = to_ps(delay);
        wait(delay);
        return gp.get_response_status();
    }
    tlm::tlm_response_status read(std::uint64_t address, std::uint32_t& value) {
        return access(tlm::TLM_READ_COMMAND, address, value);
    }
    tlm::tlm_response_status write(std::uint64_t address, std::uint32_t value) {
        return access(tlm::TLM_WRITE_COMMAND, address, value);
    }
    /// A 64-bit counter: LO first (latches HI), then HI.
    std::uint64_t read64(std::uint64_t address) {
        std::uint32_t lo = 0, hi = 0;
        read(address, lo);
        read(address + 4, hi);
        return std::uint64_t(hi) << 32u | lo;
    }
};

/// The receiving NIC's host: records what reaches host memory, and when.
struct recorder : nic::nic_host_if {
    struct arrival {
        ps_t at, nic_time;
        frame f;
    };
    std::vector<arrival> got;
    void nic_rx(frame& f, ps_t at) override {
        got.push_back({at, now_ps(), f});
        frame_pool::global().release(f);
    }
};

phy::link_config one_us_cable() {
    phy::link_config lc;
    lc.propagation = PS_PER_US;
    return lc;
}

}  // namespace

TEST_CASE(
    "NIC CSR: a CPU model reads the ID, sends a frame through the MMIO window and reads "
    "the counters back",
    "[nic][tb][csr]") {
    nic::nic_config nc;  // 500 ns TX and RX, CSR reads 100 ns, writes 50 ns
    nc.csr.enabled = true;
    nic::nic_device a("a_nic", nc, RATE), b("b_nic", nic::nic_config{}, RATE);
    REQUIRE(a.csr() != nullptr);
    CHECK(b.csr() == nullptr);
    host::flow_table flows;
    host::host ha("ha", {0, ipv4_for_host(0), mac_for_node(0)}, a, flows, 1, 0);
    recorder rec;
    b.attach_host(rec);
    phy::link l("l", one_us_cable(), 1);
    a.tx.socket.bind(l.ab.in);
    l.ab.out.bind(b.rx.socket);
    b.tx.socket.bind(l.ba.in);
    l.ba.out.bind(a.rx.socket);
    cpu c("cpu");
    c.socket.bind(a.csr()->socket);

    const mac_addr dst = mac_for_node(1);
    std::uint32_t id = 0, rate = 0, mac_lo = 0, mac_hi = 0, ip = 0, len_back = 0;
    std::uint64_t tx_frames = 0, tx_bytes = 0, mmio_posts = 0, rx_frames = 0;
    std::vector<ps_t> delays;
    ps_t doorbell_at = 0, end_at = 0;
    c.script = [&](cpu& p) {
        p.read(reg::ID, id);
        delays.push_back(p.last_delay);
        p.read(reg::LINK_RATE_MBPS, rate);
        p.read(reg::MAC_LO, mac_lo);
        p.read(reg::MAC_HI, mac_hi);
        p.read(reg::IP_ADDR, ip);  // 500 ns
        p.write(reg::TXD_DST_IP, ipv4_for_host(1));
        delays.push_back(p.last_delay);
        p.write(reg::TXD_DST_MAC_LO, std::uint32_t(dst[2]) << 24u | std::uint32_t(dst[3]) << 16u |
                                         std::uint32_t(dst[4]) << 8u | dst[5]);
        p.write(reg::TXD_DST_MAC_HI, std::uint32_t(dst[0]) << 8u | dst[1]);
        p.write(reg::TXD_PORTS, 1234u << 16u | 4321u);
        p.write(reg::TXD_LEN, 1000);
        p.write(reg::TXD_CLASS, 26u | 2u << 8u);  // DSCP 26, ECT(0), untagged
        p.write(reg::TXD_FLOW, 7);                // 850 ns
        doorbell_at = now_ps();
        p.write(reg::TXD_DOORBELL, 1);
        p.read(reg::TXD_LEN, len_back);
        wait(to_sc_time(10 * PS_PER_US) - sc_core::sc_time_stamp());
        tx_frames = p.read64(reg::TX_FRAMES);
        tx_bytes = p.read64(reg::TX_BYTES);
        mmio_posts = p.read64(reg::MMIO_POSTS);
        rx_frames = p.read64(reg::RX_FRAMES);
        end_at = now_ps();
    };
    sc_core::sc_start(to_sc_time(20 * PS_PER_US));

    CHECK(id == 0x4653'0001u);
    CHECK(rate == 10'000u);
    CHECK(delays == std::vector<ps_t>{100 * PS_PER_NS, 50 * PS_PER_NS});
    const mac_addr own = mac_for_node(0);  // the host set the NIC's identity
    CHECK(mac_hi == (std::uint32_t(own[0]) << 8u | own[1]));
    CHECK(mac_lo == (std::uint32_t(own[2]) << 24u | std::uint32_t(own[3]) << 16u |
                     std::uint32_t(own[4]) << 8u | own[5]));
    CHECK(ip == ipv4_for_host(0));
    CHECK(len_back == 1000u);
    CHECK(doorbell_at == 850 * PS_PER_NS);
    REQUIRE(rec.got.size() == 1);
    const auto& g = rec.got[0];
    // Doorbell seen at 900 ns (posted write, 50 ns), + 500 ns tx_latency: first bit at 1400 ns;
    // 1000 B IPv4 = 1018 B frame + 8 B preamble: last bit 820.8 ns later, + 1 us cable at
    // 3220.8 ns in b's MAC, + 500 ns rx_latency in host memory at 3720.8 ns.
    CHECK(g.nic_time == 3'220'800u);
    CHECK(g.at == 3'720'800u);
    CHECK(g.f.kind == frame_kind::IPV4_UDP);
    CHECK(g.f.length == 1014u);
    CHECK(g.f.payload_bytes == 972u);
    CHECK(g.f.src_mac == own);
    CHECK(g.f.dst_mac == dst);
    CHECK(g.f.src_ip == ipv4_for_host(0));
    CHECK(g.f.dst_ip == ipv4_for_host(1));
    CHECK(g.f.src_port == 1234u);
    CHECK(g.f.dst_port == 4321u);
    CHECK(g.f.dscp == 26u);
    CHECK(g.f.ecn == ecn_codepoint::ECT0);
    CHECK_FALSE(g.f.vlan_tagged);
    CHECK(g.f.flow_id == 7u);
    CHECK(g.f.created == 900 * PS_PER_NS);
    CHECK(tx_frames == 1u);
    CHECK(tx_bytes == 1018u);
    CHECK(mmio_posts == 1u);
    CHECK(rx_frames == 0u);
    CHECK(end_at == 10 * PS_PER_US + 8 * 100 * PS_PER_NS);
    CHECK(a.csr()->get_stats().mmio_posts == 1u);
    CHECK(a.csr()->get_stats().error_responses == 0u);
}

TEST_CASE("NIC CSR: error responses, a refused doorbell, debug reads and DMI refused",
          "[nic][tb][csr]") {
    nic::nic_config nc;
    nc.csr.enabled = true;
    nic::nic_device a("a_nic", nc, RATE);
    cpu c("cpu");
    c.socket.bind(a.csr()->socket);
    std::vector<tlm::tlm_response_status> got;
    std::vector<ps_t> delays;
    std::uint32_t bad_len_value = 0, id_after = 0, bad = 0;
    bool dmi_granted = true, dmi_none = false, dmi_hint = true;
    sc_dt::uint64 dmi_start = 1, dmi_end = 0;
    unsigned dbg_bytes = 0;
    std::array<std::uint32_t, 3> dbg{};
    c.script = [&](cpu& p) {
        std::uint32_t v = 0;
        got.push_back(p.read(0x008, v));                                // reserved: unmapped
        got.push_back(p.read(0x600, v));                                // reserved
        got.push_back(p.read(reg::WINDOW_BYTES, v));                    // past the block
        got.push_back(p.read(reg::ID + 2, v));                          // misaligned
        got.push_back(p.access(tlm::TLM_READ_COMMAND, reg::ID, v, 2));  // 2-byte read
        delays.push_back(p.last_delay);
        got.push_back(p.access(tlm::TLM_WRITE_COMMAND, reg::TXD_LEN, bad_len_value, 8));
        got.push_back(p.write(reg::ID, 0));  // read only
        delays.push_back(p.last_delay);
        got.push_back(p.write(reg::TX_FRAMES, 0));    // counters are read only
        got.push_back(p.read(reg::TXD_DOORBELL, v));  // write only
        unsigned char be[4] = {TLM_BYTE_ENABLED, TLM_BYTE_ENABLED, TLM_BYTE_DISABLED,
                               TLM_BYTE_ENABLED};
        got.push_back(p.access(tlm::TLM_READ_COMMAND, reg::ID, v, 4, be, 4));
        unsigned char all[1] = {TLM_BYTE_ENABLED};  // a 1-byte pattern, repeated
        got.push_back(p.access(tlm::TLM_READ_COMMAND, reg::ID, id_after, 4, all, 1));
        dmi_hint = p.dmi_hint;
        // A doorbell with TXD_LEN 0 (reset) is refused and counted, not sent.
        got.push_back(p.write(reg::TXD_DOORBELL, 1));
        bad = static_cast<std::uint32_t>(p.read64(reg::MMIO_BAD_DESCRIPTORS));

        tlm::tlm_generic_payload gp;
        gp.set_command(tlm::TLM_READ_COMMAND);
        gp.set_address(reg::ID);
        gp.set_dmi_allowed(true);
        tlm::tlm_dmi dmi;
        dmi_granted = p.socket->get_direct_mem_ptr(gp, dmi);
        dmi_none = dmi.is_none_allowed();
        dmi_start = dmi.get_start_address();
        dmi_end = dmi.get_end_address();

        // Debug read of ID, LINK_RATE_MBPS and the unmapped 0x008: stops at the hole.
        tlm::tlm_generic_payload dbg_gp;
        dbg_gp.set_command(tlm::TLM_READ_COMMAND);
        dbg_gp.set_address(reg::ID);
        dbg_gp.set_data_ptr(reinterpret_cast<unsigned char*>(dbg.data()));
        dbg_gp.set_data_length(12);
        dbg_bytes = p.socket->transport_dbg(dbg_gp);
    };
    sc_core::sc_start(to_sc_time(10 * PS_PER_US));

    using tlm::TLM_ADDRESS_ERROR_RESPONSE, tlm::TLM_BURST_ERROR_RESPONSE,
        tlm::TLM_COMMAND_ERROR_RESPONSE, tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE, tlm::TLM_OK_RESPONSE;
    CHECK(got == std::vector<tlm::tlm_response_status>{
                     TLM_ADDRESS_ERROR_RESPONSE, TLM_ADDRESS_ERROR_RESPONSE,
                     TLM_ADDRESS_ERROR_RESPONSE, TLM_ADDRESS_ERROR_RESPONSE,
                     TLM_BURST_ERROR_RESPONSE, TLM_BURST_ERROR_RESPONSE, TLM_COMMAND_ERROR_RESPONSE,
                     TLM_COMMAND_ERROR_RESPONSE, TLM_COMMAND_ERROR_RESPONSE,
                     TLM_BYTE_ENABLE_ERROR_RESPONSE, TLM_OK_RESPONSE, TLM_OK_RESPONSE});
    // Errors take the access time too: a read's round trip, a write's posting.
    CHECK(delays == std::vector<ps_t>{100 * PS_PER_NS, 50 * PS_PER_NS});
    CHECK(id_after == 0x4653'0001u);
    CHECK_FALSE(dmi_hint);
    CHECK_FALSE(dmi_granted);
    CHECK(dmi_none);
    CHECK(dmi_start == 0u);
    CHECK(dmi_end == ~sc_dt::uint64(0));
    CHECK(bad == 1u);
    CHECK(dbg_bytes == 8u);
    CHECK(dbg[0] == 0x4653'0001u);
    CHECK(dbg[1] == 10'000u);
    CHECK(a.get_stats().tx_frames == 0u);
    CHECK(a.csr()->get_stats().bad_descriptors == 1u);
    CHECK(a.csr()->get_stats().error_responses == 10u);
}

TEST_CASE("NIC CSR: RL_RATE_MBPS sets a DCQCN rate limiter and is ignored without a bank",
          "[nic][tb][csr]") {
    nic::nic_config with;
    with.csr.enabled = true;
    with.dcqcn.mode = nic::nic_config::dcqcn_config::preset::PAPER;
    with.rate_limiters = 16;
    nic::nic_config without;
    without.csr.enabled = true;
    nic::nic_device a("a_nic", with, RATE), b("b_nic", without, RATE);
    REQUIRE(a.limiters() != nullptr);
    REQUIRE(b.limiters() == nullptr);
    cpu ca("ca"), cb("cb");
    ca.socket.bind(a.csr()->socket);
    cb.socket.bind(b.csr()->socket);
    std::uint32_t count_a = 0, count_b = 1, rate_a = 0, rate_b = 1, index_a = 0, out_of_range = 1;
    std::vector<tlm::tlm_response_status> got;
    ca.script = [&](cpu& p) {
        p.read(reg::RL_COUNT, count_a);
        got.push_back(p.write(reg::RL_INDEX, 3));
        got.push_back(p.write(reg::RL_RATE_MBPS, 2'500));
        p.read(reg::RL_RATE_MBPS, rate_a);
        p.read(reg::RL_INDEX, index_a);
        got.push_back(p.write(reg::RL_INDEX, 16));  // past the bank: RL_RATE reads 0, ignored
        p.read(reg::RL_RATE_MBPS, out_of_range);
        got.push_back(p.write(reg::RL_RATE_MBPS, 1'000));
        got.push_back(p.write(reg::RL_COUNT, 1));
    };
    cb.script = [&](cpu& p) {
        p.read(reg::RL_COUNT, count_b);
        got.push_back(p.write(reg::RL_INDEX, 3));
        got.push_back(p.write(reg::RL_RATE_MBPS, 2'500));
        p.read(reg::RL_RATE_MBPS, rate_b);
    };
    sc_core::sc_start(to_sc_time(10 * PS_PER_US));

    CHECK(count_a == 16u);
    CHECK(a.limiters()->at(3).rate_bps() == 2'500'000'000u);
    CHECK(a.limiters()->at(2).rate_bps() == 0u);
    CHECK(rate_a == 2'500u);
    CHECK(index_a == 3u);
    CHECK(out_of_range == 0u);
    CHECK(a.csr()->get_stats().ignored_writes == 1u);
    CHECK(count_b == 0u);
    CHECK(rate_b == 0u);
    CHECK(b.csr()->get_stats().ignored_writes == 2u);
    // ca's five writes, then cb's two (both scripts start at 0; ca's reads come first).
    REQUIRE(got.size() == 7u);
    CHECK(std::count(got.begin(), got.end(), tlm::TLM_OK_RESPONSE) == 6);
    CHECK(a.csr()->get_stats().error_responses == 1u);
}

TEST_CASE("NIC CSR: an MMIO post takes the DMA engine with a PCIe model", "[nic][tb][csr][dma]") {
    nic::nic_config nc;
    nc.csr.enabled = true;
    nc.dma.enabled = true;  // gen3 x16 defaults
    nic::nic_device a("a_nic", nc, RATE);
    phy::link l("l", one_us_cable(), 1);
    test::tb_sink sink("sink");
    a.tx.socket.bind(l.ab.in);
    l.ab.out.bind(sink.rx.socket);
    cpu c("cpu");
    c.socket.bind(a.csr()->socket);
    std::uint64_t dma_posts = 0, tx_frames = 0, bytes_read = 0;
    c.script = [&](cpu& p) {
        p.write(reg::TXD_LEN, 1500);
        p.write(reg::TXD_DOORBELL, 0);
        wait(to_sc_time(10 * PS_PER_US) - sc_core::sc_time_stamp());
        dma_posts = p.read64(reg::DMA_POSTS);
        tx_frames = p.read64(reg::TX_FRAMES);
        bytes_read = p.read64(reg::PCIE_BYTES_READ);
    };
    sc_core::sc_start(to_sc_time(20 * PS_PER_US));
    CHECK(dma_posts == 1u);
    CHECK(tx_frames == 1u);
    CHECK(bytes_read == a.pcie()->stats().bytes_read);
    CHECK(bytes_read == 16u + 1514u);  // the descriptor, then the frame
    CHECK(sink.got.size() == 1u);
}

TEST_CASE(
    "NIC CSR: COAL_RX_FRAMES changes the host's interrupt moderation, ring registers read back",
    "[nic][tb][csr][napi]") {
    nic::nic_config sender;
    nic::nic_config receiver;
    receiver.csr.enabled = true;
    receiver.rx.napi = true;
    receiver.rx.gro = true;
    receiver.rx.coalesce.rx_frames = 10;
    receiver.rx.coalesce.rx_usecs = 50 * PS_PER_US;
    receiver.rx.cpu.irq_cost = 0;  // the poll reads at the interrupt
    receiver.rx.cpu.poll_cost = 0;
    receiver.rx.cpu.packet_cost = 0;
    nic::nic_device a("a_nic", sender, RATE), b("b_nic", receiver, RATE);
    host::flow_table flows;
    host::flow_spec s;
    s.src = 0;
    s.dst = 1;
    s.transport = host::transport_kind::TCP;
    s.size_bytes = 14600;  // one initial window: 10 segments at line rate
    const auto id = flows.add(s);
    host::host ha("ha", {0, ipv4_for_host(0), mac_for_node(0)}, a, flows, 1, 0);
    host::host hb("hb", {1, ipv4_for_host(1), mac_for_node(1)}, b, flows, 1, 0);
    ha.add_source(id, {ipv4_for_host(1), mac_for_node(1)});
    hb.add_sink(id, {ipv4_for_host(0), mac_for_node(0)});
    phy::link l("l", one_us_cable(), 1);
    a.tx.socket.bind(l.ab.in);
    l.ab.out.bind(b.rx.socket);
    b.tx.socket.bind(l.ba.in);
    l.ba.out.bind(a.rx.socket);
    cpu c("cpu");
    c.socket.bind(b.csr()->socket);
    std::uint32_t frames_before = 0, frames_after = 0, irqs = 0, bad = 0;
    std::array<std::uint32_t, 4> rx_ring{}, tx_ring{};
    std::uint32_t base_hi = 0;
    c.script = [&](cpu& p) {
        p.read(reg::COAL_RX_FRAMES, frames_before);
        p.write(reg::COAL_RX_FRAMES, 5);  // seen at 150 ns, before the first segment
        p.read(reg::COAL_RX_FRAMES, frames_after);
        p.write(reg::COAL_RX_FRAMES, 0x7fffffff);  // out of range: ignored
        p.write(reg::RING_SELECT, 0x100);          // RX ring 0
        p.write(reg::RING_BASE_HI, 0x12);
        p.read(reg::RING_BASE_HI, base_hi);
        wait(to_sc_time(100 * PS_PER_US) - sc_core::sc_time_stamp());
        p.read(reg::IRQ_COUNT, irqs);
        p.read(reg::RING_SIZE, rx_ring[0]);
        p.read(reg::RING_HEAD, rx_ring[1]);
        p.read(reg::RING_TAIL, rx_ring[2]);
        p.read(reg::RING_PEAK, rx_ring[3]);
        p.write(reg::RING_SELECT, 0x000);  // TX ring 0: the TX queue without a DMA model
        p.read(reg::RING_SIZE, tx_ring[0]);
        p.read(reg::RING_HEAD, tx_ring[1]);
        p.read(reg::RING_TAIL, tx_ring[2]);
        p.read(reg::RING_PEAK, tx_ring[3]);
        p.write(reg::RING_SELECT, 0x107);  // RX ring 7: none (one core)
        p.read(reg::RING_SIZE, bad);
    };
    sc_core::sc_start(to_sc_time(200 * PS_PER_US));
    CHECK(frames_before == 10);
    CHECK(frames_after == 5);
    CHECK(b.csr()->get_stats().ignored_writes == 1);
    CHECK(base_hi == 0x12);
    // Five segments per interrupt (at 8.1424 and 14.2944 us) instead of one for all ten.
    CHECK(irqs == 2);
    CHECK(flows[id].ack_sent == 2);  // one GRO aggregate each
    CHECK(rx_ring == std::array<std::uint32_t, 4>{1024, 10, 10, 5});
    CHECK(tx_ring == std::array<std::uint32_t, 4>{1024, 2, 2, 0});  // the ACKs; never waited
    CHECK(bad == 0);
}
