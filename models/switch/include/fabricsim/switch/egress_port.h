#pragma once
/// One egress port of the switch: the SystemC adapter of egress_queues (queues, scheduler,
/// gates such as shapers and pause, marking policies), bound to the port's link.
/// Timing model: the switch hands a frame over when it arrives, with the time `ready` it leaves
/// the pipeline (>= now). The port adds no timing of its own: egress_queues decides admission,
/// marking and which frame starts when; the port sends a started frame on its link at that time
/// (annotated: a frame that finds the port idle starts with no kernel event) and keeps one
/// timer for the next time a queued frame may start (the wire frees, a head leaves the
/// pipeline, a gate opens). A gate closed until told wakes the port through gates_changed().
/// MAC control: send_control() puts a control frame (PAUSE, PFC, CNM, credit) on the wire at the
/// next frame boundary, ahead of queued data and whatever the gates say; receive_control() takes
/// the PAUSE/PFC frames the port's receiver got and, when the switch honours them, drives the
/// port's pause gate (pause_reaction: response delay, quanta timers) with one more timer.
/// PFC watchdog (optional): one more timer for its detections and restorations; a stormed
/// priority's PFC is ignored, and with the drop action its queue is emptied and arrivals for it
/// (here and, for its lossless PG, at this port's ingress) are dropped.
#include <array>
#include <cstdint>
#include <memory>

#include <systemc>

#include "fabricsim/core/eth_protocol.h"
#include "fabricsim/core/frame_pool.h"
#include "fabricsim/core/kernel.h"
#include "fabricsim/core/pause_reaction.h"
#include "fabricsim/core/scheduler.h"
#include "fabricsim/core/stats.h"
#include "fabricsim/switch/algo/egress_queues.h"
#include "fabricsim/switch/algo/pfc_watchdog.h"
#include "fabricsim/switch/switch_config.h"

namespace fabricsim::sw {

class egress_port final : public sc_core::sc_module
{
public:
    egress_port(const sc_core::sc_module_name& name, unsigned index, const switch_config& cfg,
                mmu& buffer, pool_backlog& pools, std::uint64_t rate_bps, std::uint64_t seed);

    eth_tx_port tx{"tx"};

    /// Frame from ingress `in_port`, priority group `pg`, for queue `q`, out of the pipeline at
    /// `ready` (>= now). Takes ownership (drops are counted and the frame released).
    [[gnu::always_inline]] void accept(frame& f, unsigned in_port, unsigned pg, unsigned q,
                                       ps_t ready) {
        if (frame* start = m_queues.accept(f, in_port, pg, q, ready))
            return send(*start, ready, now_ps());
        arm_next(now_ps());  // queued; after a drop the wake-up stays as it was
    }
    /// A gate of this port opened (or changed) at the current time: start what may go now and
    /// re-plan the wake-up.
    void gates_changed() { on_wake(); }
    /// Sends control frame `f` at the next frame boundary (max(now, wire free)), before any
    /// queued data and also while the data is paused. Takes ownership.
    [[gnu::cold]] void send_control(frame& f);
    /// A MAC-control frame (PAUSE/PFC) received on this port's receiver: counted, acted on when
    /// honoured, released.
    [[gnu::cold]] void receive_control(frame& f);
    /// The pause reaction, nullptr when the switch honours neither PAUSE nor PFC.
    const pause_reaction* pause() const { return m_reaction.get(); }
    /// The PFC watchdog, nullptr when off.
    const pfc_watchdog* watchdog() const { return m_watchdog.get(); }
    std::uint64_t control_frames_sent() const { return m_tx_control; }
    std::uint64_t control_frames_received() const { return m_rx_control; }
    /// The plain data path (queues, gates, policies, statistics).
    egress_queues& data_path() { return m_queues; }
    const egress_queues& data_path() const { return m_queues; }
    unsigned queues() const { return m_queues.queues(); }

    bool idle_at(ps_t t) const { return m_queues.idle_at(t); }
    std::uint64_t rate_bps() const { return m_queues.rate_bps(); }
    std::uint64_t queued_frames() const { return m_queues.queued_frames(); }
    std::uint64_t queued_bytes() const { return m_queues.queued_bytes(); }
    std::uint64_t queue_bytes(unsigned q) const { return m_queues.queue_bytes(q); }
    egress_queues::queue_stats stats_of(unsigned q) const { return m_queues.stats_of(q); }
    drop_counters drops() const { return m_queues.drops(); }
    void report_stats(nlohmann::json& out) const;

private:
    frame_pool& m_pool = frame_pool::current();  // the platform's (frame_pool::scope)
    void send(frame& f, ps_t at, ps_t now) { m_queues.set_busy_until(tx.send_at(f, at, now)); }
    void on_wake();
    void arm_next(ps_t now);
    [[gnu::cold]] void on_pause_due();
    /// The pause gate's queues from the reaction's priorities (a queue waits for the last of
    /// the priorities that map to it).
    [[gnu::cold]] void update_pause_gate();
    /// Tells the watchdog the pause state of its priorities and re-plans its timer.
    [[gnu::cold]] void watch_pauses(ps_t now);
    [[gnu::cold]] void on_watchdog();

    egress_queues m_queues;
    model_timer m_wake = model_timer::bind<egress_port, &egress_port::on_wake>(this);
    std::unique_ptr<pause_reaction> m_reaction;
    pause_gate m_pause;
    std::array<std::uint8_t, 8> m_prio_queue{};  ///< PFC priority -> egress queue
    model_timer m_pause_due = model_timer::bind<egress_port, &egress_port::on_pause_due>(this);
    mmu& m_mmu;
    unsigned m_index;
    std::array<std::uint8_t, 8> m_prio_pg{};  ///< PFC priority -> ingress PG (watchdog drops)
    std::unique_ptr<pfc_watchdog> m_watchdog;
    std::unique_ptr<watchdog_drop_policy> m_watchdog_drop;
    model_timer m_watchdog_due = model_timer::bind<egress_port, &egress_port::on_watchdog>(this);
    std::uint64_t m_rx_control = 0;
    std::uint64_t m_tx_control = 0;
};

}  // namespace fabricsim::sw
