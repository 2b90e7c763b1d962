#pragma once
// Tiny testbench parts: a source port that sends frames at given times and a sink that
// records arrival times.
#include <vector>

#include <systemc>

#include "fabricsim/core/eth_protocol.h"
#include "fabricsim/core/frame_pool.h"
#include "fabricsim/core/kernel.h"

namespace fabricsim::test {

inline frame& make_frame(std::uint32_t ip_bytes, std::uint32_t dst_ip = 0x0a000002,
                         std::uint32_t flow = 0) {
    frame& f = frame_pool::global().acquire();
    f.src_ip = 0x0a000001;
    f.dst_ip = dst_ip;
    f.flow_id = flow;
    f.set_ipv4(frame_kind::IPV4_UDP, ip_bytes - IPV4_HEADER - UDP_HEADER);
    return f;
}

/// Sends frames at absolute times (annotated from time 0), back to back if they overlap.
struct tb_source : sc_core::sc_module {
    eth_tx_port tx{"tx"};
    struct item {
        ps_t at;
        frame* f;
    };
    std::vector<item> items;
    std::vector<ps_t> wire_free;
    explicit tb_source(const sc_core::sc_module_name& n) : sc_core::sc_module(n) {
        SC_HAS_PROCESS(tb_source);
        SC_METHOD(run);
    }
    void run() {
        ps_t free_at = 0;
        for (auto& it : items) {
            const ps_t start = std::max(it.at, free_at);
            free_at = to_ps(tx.send(*it.f, to_sc_time(start)));
            wire_free.push_back(free_at);
        }
    }
};

struct tb_sink : sc_core::sc_module, frame_receiver {
    eth_rx_port rx{"rx", *this, 0};
    struct arrival {
        ps_t at;
        std::uint32_t flow;
        bool fcs_error;
        std::uint8_t ttl;
    };
    std::vector<arrival> got;
    explicit tb_sink(const sc_core::sc_module_name& n) : sc_core::sc_module(n) {}
    void receive(unsigned, frame& f) override {
        got.push_back({now_ps(), f.flow_id, f.fcs_error, f.ttl});
        frame_pool::global().release(f);
    }
};

}  // namespace fabricsim::test
