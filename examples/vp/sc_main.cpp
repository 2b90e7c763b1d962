// A small virtual platform built from the installed FabricSim headers: a CPU model drives two
// NICs through their TLM-2.0 register sockets, and the NICs exchange UDP frames through one
// switch. Exits non-zero unless every frame arrived.
//
//   cpu --(generic payload)--> nic0.csr, nic1.csr
//   nic0 <--link0--> tor (switch) <--link1--> nic1
#include <cstdio>
#include <cstring>

#include <tlm_utils/simple_initiator_socket.h>
#include <systemc>
#include <tlm>

#include "fabricsim/core/kernel.h"
#include "fabricsim/nic/nic_device.h"
#include "fabricsim/nic/nic_registers.h"
#include "fabricsim/phy/link.h"
#include "fabricsim/switch/switch_device.h"

using namespace fabricsim;
namespace reg = nic::reg;

constexpr std::uint64_t RATE = 10'000'000'000ull;  // 10 Gb/s ports
constexpr unsigned FRAMES = 100;                   // per direction

// A trivial CPU: programs each NIC's MMIO TX window, rings its doorbell FRAMES times, then
// reads the counters. Loosely timed: it waits out each access's annotated delay.
struct cpu : sc_core::sc_module {
    sc_core::sc_vector<tlm_utils::simple_initiator_socket<cpu, 32>> bus{"bus", 2};  // one per NIC
    std::uint64_t tx[2] = {}, rx[2] = {};

    explicit cpu(const sc_core::sc_module_name& n) : sc_core::sc_module(n) {
        SC_HAS_PROCESS(cpu);
        SC_THREAD(run);
    }

    std::uint32_t access(int nic, tlm::tlm_command cmd, std::uint32_t addr, std::uint32_t v = 0) {
        tlm::tlm_generic_payload gp;
        gp.set_command(cmd);
        gp.set_address(addr);
        gp.set_data_ptr(reinterpret_cast<unsigned char*>(&v));
        gp.set_data_length(4);
        gp.set_streaming_width(4);
        gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        bus[nic]->b_transport(gp, delay);
        if (gp.is_response_error()) SC_REPORT_ERROR("vp/cpu", gp.get_response_string().c_str());
        wait(delay);
        return v;
    }
    void write(int nic, std::uint32_t addr, std::uint32_t v) {
        access(nic, tlm::TLM_WRITE_COMMAND, addr, v);
    }
    std::uint64_t read64(int nic, std::uint32_t addr) {  // LO first: it latches HI
        const std::uint64_t lo = access(nic, tlm::TLM_READ_COMMAND, addr);
        const std::uint64_t hi = access(nic, tlm::TLM_READ_COMMAND, addr + 4);
        return hi << 32 | lo;
    }

    void run() {
        for (int n = 0; n < 2; ++n) {
            const int peer = 1 - n;
            write(n, reg::IP_ADDR, ipv4_for_host(n));  // the source of MMIO frames
            write(n, reg::TXD_DST_IP, ipv4_for_host(peer));
            write(n, reg::TXD_PORTS, 4000u << 16 | 4001u);
            write(n, reg::TXD_LEN, 1000);  // IPv4 bytes: 0.82 us on the wire at 10G
            write(n, reg::TXD_FLOW, n);
        }
        for (unsigned i = 0; i < FRAMES; ++i) {
            write(0, reg::TXD_DOORBELL, 1);
            write(1, reg::TXD_DOORBELL, 1);
            wait(1, sc_core::SC_US);
        }
        wait(20, sc_core::SC_US);  // let the last frames land
        for (int n = 0; n < 2; ++n) {
            tx[n] = read64(n, reg::TX_FRAMES);
            rx[n] = read64(n, reg::RX_FRAMES);
        }
        sc_core::sc_stop();
    }
};

int sc_main(int argc, char* argv[]) {
    // FabricSim's model time is integer picoseconds: it needs a 1 ps time resolution (SystemC's
    // default) and refuses another at elaboration. `vp 1ns` shows the refusal.
    if (argc > 1 && std::strcmp(argv[1], "1ns") == 0)
        sc_core::sc_set_time_resolution(1, sc_core::SC_NS);
    init_kernel_time();  // checks the resolution; creates the model scheduler at top level

    sw::switch_device tor("tor", sw::switch_config{}, {RATE, RATE}, /*seed=*/1);
    nic::nic_config nc;
    nc.csr.enabled = true;  // the register block and its target socket
    nic::nic_device nic0("nic0", nc, RATE), nic1("nic1", nc, RATE);
    phy::link_config lc;
    lc.rate_bps = RATE;
    lc.propagation = 100 * PS_PER_NS;  // 20 m of cable
    phy::link link0("link0", lc, 1), link1("link1", lc, 2);
    cpu cpu0("cpu");

    nic::nic_device* nics[2] = {&nic0, &nic1};
    phy::link* links[2] = {&link0, &link1};
    for (unsigned p = 0; p < 2; ++p) {
        nics[p]->tx.socket.bind(links[p]->ab.in);
        links[p]->ab.out.bind(tor.rx_socket(p));
        tor.tx_socket(p).bind(links[p]->ba.in);
        links[p]->ba.out.bind(nics[p]->rx.socket);
        tor.routes().add_route(ipv4_for_host(p), {static_cast<std::uint16_t>(p)});
        cpu0.bus[p].bind(nics[p]->csr()->socket);
    }

    sc_core::sc_start();
    bool ok = true;
    for (int n = 0; n < 2; ++n) {
        std::printf("nic%d: %llu frames sent, %llu received (expected %u each)\n", n,
                    static_cast<unsigned long long>(cpu0.tx[n]),
                    static_cast<unsigned long long>(cpu0.rx[n]), FRAMES);
        ok = ok && cpu0.tx[n] == FRAMES && cpu0.rx[n] == FRAMES;
    }
    std::printf("%s at %s\n", ok ? "PASS" : "FAIL", sc_core::sc_time_stamp().to_string().c_str());
    return ok ? 0 : 1;
}
