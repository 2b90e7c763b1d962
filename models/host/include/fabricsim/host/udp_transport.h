#pragma once
/// Open-loop UDP-like sources and their sinks, as a host transport: each source sends on its
/// `traffic_source` schedule whatever the network does; a sink records what arrives.
///
/// Timing model: one timer per source at its next send time; a frame is posted with its exact
/// send time as `created`, up to the host's lookahead early (temporal decoupling), and the NIC
/// takes it from there. Sinks record a frame at its host-memory time without holding it (no
/// event): throughput, one-way latency (creation to host memory) and CE marks per flow.
#include <cstdint>
#include <vector>

#include "fabricsim/host/transport.h"

namespace fabricsim::host {

class udp_transport final : public transport
{
public:
    explicit udp_transport(host& h, flow_table& flows)
        : transport(h, flows, transport_kind::UDP, false) {}

    void add_source(std::uint32_t flow, const flow_path& to) override;
    void add_sink(std::uint32_t, const flow_path&) override {}
    std::size_t timer_hint() const override { return m_sources.size(); }
    void start() override;
    bool needs_ordered_posts() const override { return false; }
    void on_timer(std::uint8_t timer_kind, std::uint32_t slot, ps_t at, ps_t now) override;
    void on_frame(frame& f, ps_t at) override;

private:
    static constexpr std::uint8_t SEND = 0;
    struct source_slot {
        traffic_source src;
        std::uint32_t dst_ip;
        mac_addr dst_mac;
    };
    void send(std::uint32_t slot, ps_t at);

    std::vector<source_slot> m_sources;
};

}  // namespace fabricsim::host
