#include "fabricsim/switch/egress_port.h"

#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>

#include "fabricsim/core/frame_pool.h"

namespace fabricsim::sw {

egress_port::egress_port(const sc_core::sc_module_name& name, unsigned index,
                         const switch_config& cfg, mmu& buffer, pool_backlog& pools,
                         std::uint64_t rate_bps, std::uint64_t seed)
    : sc_core::sc_module(name),
      m_queues(cfg, index, buffer, pools, rate_bps, seed, std::string(this->name())),
      m_mmu(buffer),
      m_index(index) {
    // Installed only when honoured: a port without it has no gate and no cost.
    if (cfg.flow_control.enabled()) {
        m_reaction = std::make_unique<pause_reaction>(cfg.flow_control, rate_bps);
        for (unsigned p = 0; p < 8; ++p)
            m_prio_queue[p] = static_cast<std::uint8_t>(
                std::min(cfg.qos.tc_to_queue[cfg.qos.pcp_to_tc[p]], std::uint8_t(cfg.queues - 1)));
        m_queues.add_gate(m_pause);
        if (cfg.pfc_watchdog.enabled) {
            m_watchdog = std::make_unique<pfc_watchdog>(cfg.pfc_watchdog);
            std::uint8_t watched = 0;
            for (unsigned p = 0; p < 8; ++p) {
                m_prio_pg[p] = cfg.qos.tc_to_pg[cfg.qos.pcp_to_tc[p]];
                if (cfg.pfc_watchdog.priorities >> p & 1)
                    watched = static_cast<std::uint8_t>(watched | 1u << m_prio_queue[p]);
            }
            if (cfg.pfc_watchdog.action == pfc_watchdog_action::DROP) {
                m_watchdog_drop = std::make_unique<watchdog_drop_policy>(watched);
                m_queues.add_policy(*m_watchdog_drop);
                m_watchdog_drop->set_queues(0);
            }
        }
    }
}

void egress_port::send_control(frame& f) {
    const ps_t now = now_ps();
    m_tx_control++;
    m_queues.set_busy_until(tx.send_at(f, std::max(now, m_queues.busy_until()), now));
}

void egress_port::receive_control(frame& f) {
    m_rx_control++;
    if (m_reaction && (f.kind == frame_kind::PAUSE || f.kind == frame_kind::PFC)) {
        const ps_t now = now_ps();
        const std::uint8_t released = m_reaction->receive(f, now);
        if (m_watchdog)
            for (unsigned p = 0; p < 8; ++p)
                if (m_reaction->last_xoff() >> p & 1) m_watchdog->xoff_received(p, now);
        if (m_reaction->next_apply() <= now) m_reaction->apply(now, m_queues.busy_until());
        if (m_reaction->next_apply() != pause_reaction::NEVER)
            m_pause_due.arm_at(m_reaction->next_apply());
        update_pause_gate();
        if (m_watchdog) watch_pauses(now);
        if (released) gates_changed();
    }
    m_pool.release(f);
}

void egress_port::watch_pauses(ps_t now) {
    for (unsigned p = 0; p < 8; ++p)
        m_watchdog->pause_state(
            p, m_reaction->paused(p, now) ? m_reaction->pause_start(p) : pfc_watchdog::NEVER);
    m_watchdog_due.cancel();
    if (m_watchdog->next_check() != pfc_watchdog::NEVER)
        m_watchdog_due.arm_at(std::max(now, m_watchdog->next_check()));
}

void egress_port::on_watchdog() {
    const ps_t now = now_ps();
    watch_pauses(now);  // a pause may have run out since
    if (m_watchdog->next_check() > now) return;
    const std::uint8_t before = m_watchdog->dropping();
    m_watchdog->check(now);
    const std::uint8_t dropping = m_watchdog->dropping();
    if (m_watchdog_drop) {
        std::uint8_t queues = 0, pgs = 0;
        for (unsigned p = 0; p < 8; ++p) {
            if (!(dropping >> p & 1)) continue;
            queues = static_cast<std::uint8_t>(queues | 1u << m_prio_queue[p]);
            pgs = static_cast<std::uint8_t>(pgs | 1u << m_prio_pg[p]);
            if (!(before >> p & 1)) m_queues.discard(m_prio_queue[p], drop_cause::PFC_WATCHDOG);
        }
        m_watchdog_drop->set_queues(queues);
        m_mmu.set_watchdog_drop(m_index, pgs);
    }
    update_pause_gate();
    watch_pauses(now);
    gates_changed();
}

void egress_port::on_pause_due() {
    const ps_t now = now_ps();
    m_reaction->apply(now, m_queues.busy_until());
    if (m_reaction->next_apply() != pause_reaction::NEVER)
        m_pause_due.arm_at(m_reaction->next_apply());
    update_pause_gate();
    if (m_watchdog) watch_pauses(now);
    gates_changed();
}

void egress_port::update_pause_gate() {
    std::array<ps_t, 8> until{};
    const std::uint8_t ignoring = m_watchdog ? m_watchdog->ignoring() : 0;
    for (unsigned p = 0; p < 8; ++p)
        if (!(ignoring >> p & 1))
            until[m_prio_queue[p]] = std::max(until[m_prio_queue[p]], m_reaction->paused_until(p));
    for (unsigned q = 0; q < 8; ++q) m_pause.pause(static_cast<std::uint8_t>(1u << q), until[q]);
}

void egress_port::report_stats(nlohmann::json& out) const {
    m_queues.report_stats(out, now_ps());
    if (!m_reaction && m_rx_control == 0 && m_tx_control == 0) return;  // as before
    nlohmann::json fc = {{"control_frames_received", m_rx_control},
                         {"control_frames_sent", m_tx_control}};
    if (m_reaction) m_reaction->report(fc, now_ps());
    if (m_watchdog) {
        const ps_t now = now_ps();
        nlohmann::json storms = nlohmann::json::array(), restored = nlohmann::json::array(),
                       time = nlohmann::json::array(), now_stormed = nlohmann::json::array();
        for (unsigned p = 0; p < 8; ++p) {
            storms.push_back(m_watchdog->stats().storms[p]);
            restored.push_back(m_watchdog->stats().restorations[p]);
            time.push_back(double(m_watchdog->stormed_time(p, now)) / double(PS_PER_US));
            if (m_watchdog->stormed() >> p & 1) now_stormed.push_back(p);
        }
        fc["watchdog"] = {{"storms", std::move(storms)},
                          {"restorations", std::move(restored)},
                          {"stormed_time_us", std::move(time)},
                          {"stormed_now", std::move(now_stormed)}};
    }
    out["flow_control"] = std::move(fc);
}

void egress_port::arm_next(ps_t now) {
    if (m_queues.queued_frames() == 0) return;
    const ps_t wire_free = std::max(now, m_queues.busy_until());
    if (m_wake.pending() && m_wake.expiry() <= wire_free) return;  // nothing can go earlier
    const ps_t next = m_queues.next_start(wire_free);
    if (next != egress_gate::UNTIL_TOLD) m_wake.arm_at(next);
}

void egress_port::on_wake() {
    const ps_t now = now_ps();
    if (m_queues.busy_until() <= now)
        if (frame* f = m_queues.try_start(now)) send(*f, now, now);
    arm_next(now);
}

}  // namespace fabricsim::sw
