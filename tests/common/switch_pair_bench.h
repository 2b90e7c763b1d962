#pragma once
// A two-port 10G switch testbench for the PAUSE/PFC tests: `src` sends into port 0 (port 0's
// own transmissions go to `back`), port 1 transmits to `out`, and `far` sends into port 1 from
// the output's far end (PAUSE/PFC toward the switch). 1 us cables, routes to DST via port 1.
#include <array>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fabricsim/phy/link.h"
#include "fabricsim/switch/switch_device.h"
#include "tb.h"

namespace fabricsim::test {

/// Every frame a receiver got: time, flow, kind and the PAUSE/PFC fields.
struct recording_sink final : sc_core::sc_module, frame_receiver {
    eth_rx_port rx{"rx", *this, 0};
    struct got_frame {
        ps_t at;
        std::uint32_t flow;
        frame_kind kind;
        std::uint8_t enable;
        std::array<std::uint16_t, 8> quanta;
    };
    std::vector<got_frame> got;
    explicit recording_sink(const sc_core::sc_module_name& n) : sc_core::sc_module(n) {}
    void receive(unsigned, frame& f) override {
        got.push_back({now_ps(), f.flow_id, f.kind, f.pfc_enable, f.pause_quanta});
        frame_pool::global().release(f);
    }
};

struct switch_pair_bench {
    static constexpr std::uint64_t RATE = 10'000'000'000ull;
    static constexpr std::uint32_t DST = 0x0a000002;
    tb_source src{"src"};
    recording_sink back{"back"};
    recording_sink out{"out"};
    tb_source far{"far"};
    std::vector<std::unique_ptr<phy::link>> links;
    std::unique_ptr<sw::switch_device> dut;

    explicit switch_pair_bench(const sw::switch_config& cfg) {
        dut = std::make_unique<sw::switch_device>("dut", cfg,
                                                  std::vector<std::uint64_t>{RATE, RATE}, 1);
        dut->routes().add_route(DST, {1});
        for (unsigned i = 0; i < 2; ++i) {
            phy::link_config lc;
            lc.rate_bps = RATE;
            lc.propagation = PS_PER_US;
            links.push_back(std::make_unique<phy::link>(("l" + std::to_string(i)).c_str(), lc, 1));
        }
        src.tx.socket.bind(links[0]->ab.in);
        links[0]->ab.out.bind(dut->rx_socket(0));
        dut->tx_socket(0).bind(links[0]->ba.in);
        links[0]->ba.out.bind(back.rx.socket);
        dut->tx_socket(1).bind(links[1]->ab.in);
        links[1]->ab.out.bind(out.rx.socket);
        far.tx.socket.bind(links[1]->ba.in);
        links[1]->ba.out.bind(dut->rx_socket(1));
    }
    /// Port p's entry of the switch's statistics.
    nlohmann::json port_stats(unsigned p) const {
        nlohmann::json s;
        dut->report_stats(s);
        return s["ports"][p];
    }
};

}  // namespace fabricsim::test
