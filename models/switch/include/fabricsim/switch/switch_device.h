#pragma once
/// Shared-buffer switch: N ports of any mix of speeds, L3 host routes with ECMP, a fixed
/// ingress pipeline, classification (DSCP/PCP -> traffic class -> queue and PG), one cell-based
/// MMU (algo/mmu.h) and multi-queue egress ports (egress_port.h).
/// Timing model: a frame the link delivers at t (last bit for store-and-forward, header for
/// cut-through) leaves the pipeline at ceil_clock(t + pipeline_latency) and enters its egress
/// port then (admission and enqueue marking are decided at t, see egress_port.h). Cut-through
/// forwards from the header only when the egress is idle and not faster than the ingress; otherwise
/// it falls back to store-and-forward (waits for the last bit). Corrupted frames are dropped (FCS)
/// when the whole frame was received; cut-through forwards them, as real cut-through switches do.
/// With rate-limited pipelines (switch.pipeline, algo/ingress_pipeline.h) a frame first takes
/// its ingress pipeline's next slot: it is routed, admitted and handed to its port when it
/// starts (at once when the pipeline is free, else from one timer for all pipelines), and
/// leaves at ceil_clock(start + pipeline_latency); with the MMU's cell writes limited
/// (switch.mmu.write_cells_per_cycle, algo/cell_bandwidth.h) it also waits for its partition's
/// write port, and its egress port for the partition's read port. TTL is decremented per hop.
/// Frames the egress policies build (congestion notifications) enter the forwarding path at their
/// emission time as if received then, on the emitting port: one timer for all of them, in emission
/// order. PAUSE/PFC generation (switch.flow_control.generate): the MMU reports a lossless PG's XOFF
/// and XON points from admission and release (or an egress queue its Q_on/Q_off crossings); the
/// port's pause_generator turns them into frames, which the switch sends on that port at the same
/// time in the next delta cycle (one timer for all ports; so a decision inside a port's start never
/// touches the wire it is deciding for) and refreshes with one more timer.
#include <cstdint>
#include <memory>
#include <vector>

#include <systemc>

#include "fabricsim/core/eth_protocol.h"
#include "fabricsim/core/frame_pool.h"
#include "fabricsim/core/ring.h"
#include "fabricsim/core/scheduler.h"
#include "fabricsim/core/stats.h"
#include "fabricsim/switch/algo/cell_bandwidth.h"
#include "fabricsim/switch/algo/egress_pipeline.h"
#include "fabricsim/switch/algo/forwarding_table.h"
#include "fabricsim/switch/algo/ingress_pipeline.h"
#include "fabricsim/switch/algo/mmu.h"
#include "fabricsim/switch/algo/pause_generator.h"
#include "fabricsim/switch/algo/queue_pause_trigger.h"
#include "fabricsim/switch/egress_port.h"
#include "fabricsim/switch/switch_config.h"

namespace fabricsim::sw {

class switch_device : public sc_core::sc_module,
                      public frame_receiver,
                      public stats_provider,
                      public frame_emitter,
                      private pg_flow_listener,
                      private queue_congestion_listener
{
public:
    /// `port_rates` gives the speed of each port (from the links the platform attaches).
    switch_device(const sc_core::sc_module_name& name, const switch_config& cfg,
                  const std::vector<std::uint64_t>& port_rates, std::uint64_t seed);

    unsigned port_count() const { return static_cast<unsigned>(m_rx.size()); }
    eth_target_socket& rx_socket(unsigned p) { return m_rx[p]->socket; }
    eth_initiator_socket& tx_socket(unsigned p) { return m_egress[p]->tx.socket; }
    egress_port& port(unsigned p) { return *m_egress[p]; }
    forwarding_table& routes() { return m_routes; }
    const mmu& buffer() const { return m_mmu; }
    /// Traffic class of a frame (trust DSCP, or PCP for tagged frames when so configured).
    unsigned traffic_class(const frame& f) const;
    const switch_config& config() const { return m_cfg; }

    void receive(unsigned port, frame& f) override;
    /// Cut-through ports act after `cut_through_bytes` of the header, store-and-forward on the last
    /// bit.
    std::uint32_t act_after_bytes(unsigned) const override {
        return m_cfg.mode == forwarding_mode::CUT_THROUGH ? m_cfg.cut_through_bytes : 0;
    }

    /// A frame built by an egress policy of port `from_port` at `at` (>= now, non-decreasing).
    void emit(frame& f, unsigned from_port, ps_t at) override;
    /// Frames the switch built and sent into its forwarding path (emit()).
    std::uint64_t generated_frames() const { return m_generated; }
    /// Headroom of lossless PG `pg` at port `port`, in bytes (rounded up to cells); replaces
    /// mmu.pg_headroom for that port (headroom sized per link). Before the simulation starts.
    void set_pg_headroom(unsigned port, unsigned pg, std::uint64_t bytes) {
        m_mmu.set_pg_headroom(port, pg, (bytes + m_mmu.cell_bytes() - 1) / m_mmu.cell_bytes());
    }
    /// Port p's PAUSE/PFC generator, nullptr when the switch generates none.
    const pause_generator* generator(unsigned p) const {
        return m_generators.empty() ? nullptr : &m_generators[p];
    }

    /// The ingress pipelines, nullptr when they have no rate limit (the flat latency).
    const ingress_pipelines* pipelines() const { return m_pipes.get(); }
    /// The egress pipelines, nullptr without an egress rate limit.
    const egress_pipelines* output_pipelines() const { return m_egress_pipes.get(); }
    /// The MMU's cell reads, nullptr when unlimited.
    const cell_reads* mmu_reads() const { return m_reads.get(); }

    void report_stats(nlohmann::json& out) const override;
    void add_drops(drop_counters& d) const override;
    std::uint64_t frames_held() const override;
    /// Throws invariant_violation (invariants.h) if an MMU counter is not the sum of the cells of
    /// the frames the switch holds, or a lossless PG lost a frame to anything but its headroom.
    void check_invariants() const;

    struct port_rx_stats {
        std::uint64_t frames = 0;
        std::uint64_t bytes = 0;
        drop_counters drops;  ///< drops attributed to the ingress (FCS, no route, TTL)
    };

private:
    frame_pool& m_pool = frame_pool::current();  // the platform's (frame_pool::scope)
    void drop(unsigned in_port, frame& f, drop_cause why);
    /// The egress port of `f` (TTL decremented, ingress port noted), or nullptr after dropping
    /// it (TTL expired, no route). Inlined into receive().
    [[gnu::always_inline]] egress_port* route(unsigned in_port, frame& f);
    /// Hands `f` to `eg` by its traffic class, out of the pipeline at `ready`.
    [[gnu::always_inline]] void enqueue(egress_port& eg, unsigned in_port, frame& f, ps_t ready);
    void on_emitted();
    /// Routes, admits and enqueues `f` received on `in_port` (at its pipeline start, now).
    [[gnu::always_inline]] void forward(unsigned in_port, frame& f, ps_t now);
    /// receive() through the ingress pipelines: the rx ports' receiver when they are
    /// rate-limited (pipelined_receiver), so the flat path tests nothing.
    void receive_pipelined(unsigned in_port, frame& f);
    void on_pipeline_due();
    /// forward() out of line for the pipelined paths: each inlined copy of forward() counts
    /// against GCC's inlining budget, and past it mmu::admit() leaves receive()'s hot path.
    [[gnu::noinline]] void forward_pipelined(unsigned in_port, frame& f, ps_t now);
    /// The same with the MMU's cell writes limited (cell_bandwidth.h).
    [[gnu::cold]] void receive_written(unsigned in_port, frame& f);
    /// forward() of a frame that writes `cells` to partition `part`: the write is charged when
    /// the MMU admits it.
    void forward_written(unsigned in_port, frame& f, ps_t now, unsigned part, std::uint32_t cells);
    struct pipelined_receiver final : frame_receiver {
        explicit pipelined_receiver(switch_device& sw) : m_sw(sw) {}
        void receive(unsigned port, frame& f) override { m_sw.receive_pipelined(port, f); }
        std::uint32_t act_after_bytes(unsigned port) const override {
            return m_sw.act_after_bytes(port);
        }
        switch_device& m_sw;
    };
    /// Control frames (MAC control, and the dispatch point of CNM/credits) received on
    /// `in_port`, reached from route()'s TTL test (MAC control has ttl 0); true when taken (not
    /// forwarded, not counted as data). Cold and out of line: the data path is unchanged.
    [[gnu::cold, gnu::noinline]] bool receive_control(unsigned in_port, frame& f);
    // PAUSE/PFC generation (cold: only lossless PGs and congested queues call these).
    void pg_xoff(unsigned port, unsigned pg) override;
    void pg_xon(unsigned port, unsigned pg) override;
    void queue_congestion(unsigned port, bool congested) override;
    /// Port p's advertisement changed: send its frame at now, in the next delta cycle.
    void control_due(unsigned port);
    void on_control_due();
    void on_refresh_due();
    void arm_refresh();
    void report_generation(unsigned port, nlohmann::json& fc) const;
    struct emitted {
        frame* f;
        unsigned from_port;
        ps_t at;
    };

    switch_config m_cfg;
    period_rounder m_clock;  ///< cached: switch_config::clock_period() rounds a double division
    mmu m_mmu;
    pool_backlog m_pools;
    forwarding_table m_routes;
    std::vector<std::unique_ptr<eth_rx_port>> m_rx;
    std::vector<std::unique_ptr<egress_port>> m_egress;
    std::vector<port_rx_stats> m_rx_stats;
    std::unique_ptr<ingress_pipelines> m_pipes;  ///< only with a rate limit
    pipelined_receiver m_pipelined{*this};
    model_timer m_pipe_timer =
        model_timer::bind<switch_device, &switch_device::on_pipeline_due>(this);
    // Egress pipelines (only with an egress rate limit): a gate on each port, one timer for
    // the turns of all pipelines.
    void on_turn_due();
    struct turn_timer final : egress_pipelines::turn_timer {
        explicit turn_timer(switch_device& sw) : m_sw(sw) {}
        void turn_due(ps_t at) override;
        switch_device& m_sw;
    };
    struct port_turn final : egress_pipelines::port_link {
        explicit port_turn(egress_port& port) : m_port(port) {}
        void pipeline_turn() override { m_port.gates_changed(); }
        egress_port& m_port;
    };
    turn_timer m_turns{*this};
    std::unique_ptr<egress_pipelines> m_egress_pipes;
    std::vector<std::unique_ptr<port_turn>> m_port_turns;
    std::unique_ptr<cell_reads> m_reads;  ///< only with a cell read limit (same timer)
    std::vector<std::unique_ptr<egress_gate>> m_turn_gates;
    model_timer m_turn_timer = model_timer::bind<switch_device, &switch_device::on_turn_due>(this);
    ring<emitted> m_emitted{4};
    std::uint64_t m_generated = 0;
    model_timer m_emit_timer = model_timer::bind<switch_device, &switch_device::on_emitted>(this);
    std::vector<pause_generator> m_generators;  ///< per port; empty: no generation
    std::vector<std::unique_ptr<queue_pause_trigger>> m_triggers;
    std::vector<std::uint32_t> m_congested_queues;  ///< per port (queue PAUSE)
    std::uint32_t m_congested_total = 0;
    std::vector<std::uint8_t> m_control_pending;  ///< per port
    model_timer m_control_timer =
        model_timer::bind<switch_device, &switch_device::on_control_due>(this);
    model_timer m_refresh_timer =
        model_timer::bind<switch_device, &switch_device::on_refresh_due>(this);
};

}  // namespace fabricsim::sw
