#pragma once
/// UDP-like sources and their sinks, as a host transport: an open-loop source sends on its
/// `traffic_source` schedule whatever the network does; a backlogged source always has a frame
/// ready and sends whenever the NIC takes one (an L2 source behind the NIC's rate limiters and
/// PAUSE); a sink records what arrives.
///
/// Timing model: one timer per open-loop source at its next send time; a frame is posted with
/// its exact send time as `created`, up to the host's lookahead early (temporal decoupling),
/// and the NIC takes it from there. Backlogged sources (from their start time) are served round
/// robin and keep the NIC's TX queue a few frames ahead of the wire, like the RoCE QP
/// scheduler: a notification from the NIC when it has taken one, no polling, and no lookahead
/// on such a host. Sinks record a frame at its host-memory time without holding it (no event):
/// throughput, one-way latency (creation to host memory) and CE marks per flow.
#include <cstdint>
#include <vector>

#include "fabricsim/core/ring.h"
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
    bool needs_ordered_posts() const override { return m_backlogged > 0; }
    void on_timer(std::uint8_t timer_kind, std::uint32_t slot, ps_t at, ps_t now) override;
    void on_frame(frame& f, ps_t at) override;
    void on_tx_ready(ps_t now) override { pump(now); }

private:
    static constexpr std::uint8_t SEND = 0;   ///< an open-loop source's next frame
    static constexpr std::uint8_t START = 1;  ///< a backlogged source starts
    struct source_slot {
        traffic_source src;
        std::uint32_t dst_ip;
        mac_addr dst_mac;
    };
    /// Builds and posts the source's next frame, to leave at `at`.
    void send(source_slot& s, ps_t at);
    /// Backlogged sources: sends round robin while the NIC queue is short.
    void pump(ps_t now);
    /// Frames a backlogged source keeps in the NIC TX queue: its post-to-wire latency at line
    /// rate, plus two.
    std::size_t depth();

    std::vector<source_slot> m_sources;
    std::size_t m_backlogged = 0;    ///< backlogged sources
    ring<std::uint32_t> m_ready{4};  ///< started backlogged sources, in service order
    std::size_t m_depth = 0;         ///< (0: not computed yet)
};

}  // namespace fabricsim::host
