#pragma once
/// A server: its UDP-like sources and sinks behind one NIC.
/// Timing model: one model_timer per host drives all its flows from a min-heap of next send
/// times (O(log n) per frame, no event per flow). Open-loop sources are temporally decoupled
/// by `lookahead`: one wake-up posts every frame due before now + lookahead to the NIC with
/// its exact send time, so the kernel cost per frame drops without changing any timestamp.
/// Sinks record throughput and one-way latency (creation to host memory) per flow.
#include <cstdint>
#include <string>
#include <vector>

#include <systemc>

#include "fabricsim/core/scheduler.h"
#include "fabricsim/core/stats.h"
#include "fabricsim/host/flow_table.h"
#include "fabricsim/host/traffic_source.h"
#include "fabricsim/nic/nic_device.h"

namespace fabricsim::host {

struct host_identity {
    std::uint32_t index = 0;
    std::uint32_t ip = 0;
    mac_addr mac{};
};

class host : public sc_core::sc_module, public nic::nic_host_if, public stats_provider {
public:
    host(const sc_core::sc_module_name& name, const host_identity& id, nic::nic_device& nic,
         flow_table& flows, std::uint64_t seed, ps_t lookahead);

    /// Adds a source for flow `flow_id` (already in the flow table). Before simulation starts.
    void add_source(std::uint32_t flow_id, std::uint32_t dst_ip, const mac_addr& gateway_mac);

    void nic_rx(frame& f, ps_t at) override;

    struct stats {
        std::uint64_t sent_frames = 0;
        std::uint64_t received_frames = 0;
        std::uint64_t received_bytes = 0;
    };
    const stats& get_stats() const { return m_stats; }
    void report_stats(nlohmann::json& out) const override;

private:
    void on_timer();
    void end_of_elaboration() override;

    struct source_slot {
        traffic_source src;
        std::uint32_t dst_ip;
        mac_addr dst_mac;
    };
    struct timer {
        ps_t at;
        std::uint32_t slot;
        bool operator>(const timer& o) const { return at != o.at ? at > o.at : slot > o.slot; }
    };

    host_identity m_id;
    nic::nic_device& m_nic;
    flow_table& m_flows;
    std::uint64_t m_seed;
    ps_t m_lookahead;
    std::vector<source_slot> m_sources;
    std::vector<timer> m_heap;  ///< min-heap by (time, slot) via std::push_heap/greater
    model_timer m_wake = model_timer::bind<host, &host::on_timer>(this);
    stats m_stats;
};

}  // namespace fabricsim::host
