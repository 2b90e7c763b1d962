#pragma once
/// Full-duplex Ethernet link between two device ports (ARCHITECTURE.md §3).
/// Timing model: see link_timing.h. Each direction keeps its in-flight frames in a FIFO
/// (delivery times are monotone on one wire) with one model_timer for the head: one timer
/// firing per frame. The transmitter learns when the wire is free from the END_REQ delay.
#include <cstdint>
#include <memory>
#include <string>

#include <systemc>

#include "fabricsim/core/eth_protocol.h"
#include "fabricsim/core/frame_pool.h"
#include "fabricsim/core/pcap_writer.h"
#include "fabricsim/core/ring.h"
#include "fabricsim/core/scheduler.h"
#include "fabricsim/core/stats.h"
#include "fabricsim/phy/link_timing.h"

namespace fabricsim::phy {

/// One direction of a link: `in` receives from the transmitting port, `out` drives the far rx.
class link_direction : public sc_core::sc_module,
                       public eth_fw_if,
                       public eth_bw_if,
                       public eth_direct_fw_if,
                       public stats_provider
{
public:
    /// `direction`: 0 = a->b, 1 = b->a (which of cfg.rate_steps apply).
    link_direction(const sc_core::sc_module_name& name, const link_config& cfg, std::uint64_t seed,
                   unsigned direction = 0);

    eth_target_socket in{"in"};
    eth_initiator_socket out{"out"};

    /// Capture the frames put on this direction into a pcap file (bounded by `opt`).
    void capture(const std::string& pcap_path, const pcap_options& opt = {}) {
        m_pcap = std::make_unique<pcap_writer>(pcap_path, opt);
    }
    /// The capture of this direction, or null.
    pcap_writer* capture_file() const { return m_pcap.get(); }

    struct stats {
        std::uint64_t frames = 0;
        std::uint64_t bytes = 0;      ///< frame bytes incl. FCS
        std::uint64_t busy_ps = 0;    ///< wire occupancy incl. preamble and IFG
        std::uint64_t corrupted = 0;  ///< frames given an FCS error
        drop_counters drops;
    };
    const stats& get_stats() const { return m_stats; }
    const link_timing& timing() const { return m_timing; }

    void report_stats(nlohmann::json& out) const override;
    void add_drops(drop_counters& d) const override { d += m_stats.drops; }
    std::uint64_t frames_held() const override { return m_in_flight.size(); }

    // eth_fw_if
    tlm::tlm_sync_enum nb_transport_fw(frame& f, tlm::tlm_phase& phase,
                                       sc_core::sc_time& delay) override;
    // eth_direct_fw_if
    ps_t transmit_at(frame& f, ps_t start) override;
    void b_transport(frame&, sc_core::sc_time&) override {
        sc_assert(false && "links are non-blocking");
    }
    bool get_direct_mem_ptr(frame&, tlm::tlm_dmi&) override { return false; }
    unsigned transport_dbg(frame&) override { return 0; }
    // eth_bw_if
    tlm::tlm_sync_enum nb_transport_bw(frame&, tlm::tlm_phase&, sc_core::sc_time&) override {
        return tlm::TLM_COMPLETED;
    }
    void invalidate_direct_mem_ptr(sc_dt::uint64, sc_dt::uint64) override {}

private:
    frame_pool& m_pool = frame_pool::current();  // the platform's (frame_pool::scope)
    /// Finds the device port behind `out` (frames then skip the TLM call) and asks it how many
    /// bytes it needs before it acts (a cut-through switch port: its cut_through_bytes).
    void end_of_elaboration() override;
    void deliver();

    struct in_flight {
        ps_t at;
        frame* f;
    };
    link_timing m_timing;
    // What a delivery touches, together: a short wire holds a few frames, so their FIFO slots
    // live inline (no second cache line; it grows on a long link).
    alignas(64) ring<in_flight, 4> m_in_flight;
    model_timer m_head_arrives = model_timer::bind<link_direction, &link_direction::deliver>(this);
    eth_rx_port* m_rx = nullptr;  ///< the far port behind `out`, if it is an eth_rx_port
    std::unique_ptr<pcap_writer> m_pcap;
    stats m_stats;
};

/// Link = two directions. Bind: a.tx -> ab.in, ab.out -> b.rx, b.tx -> ba.in, ba.out -> a.rx.
class link : public sc_core::sc_module
{
public:
    link(const sc_core::sc_module_name& name, const link_config& cfg, std::uint64_t seed);
    link_direction ab;
    link_direction ba;
};

}  // namespace fabricsim::phy
