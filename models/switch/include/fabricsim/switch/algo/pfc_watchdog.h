#pragma once
/// SONiC PFC watchdog on one switch egress port (facts-l2 §2.6; plain C++, no SystemC): a
/// watched priority that stays paused by received PFC continuously for detection_time (queued
/// frames or not) is declared stormed; the port then ignores PFC on it (`forward`), and with
/// `drop` also discards what its queue holds and every frame for it; `alert` only counts.
/// Restoration: restoration_time after the last XOFF received for the priority, normal
/// operation resumes.
/// Timing model: exact times instead of SONiC's poll interval (a poll only delays detection and
/// restoration by up to one interval); the port asks next_check() and calls check() then.
#include <algorithm>
#include <array>
#include <cstdint>

#include "fabricsim/core/units.h"
#include "fabricsim/switch/algo/egress_policy.h"

namespace fabricsim::sw {

enum class pfc_watchdog_action : std::uint8_t { DROP, FORWARD, ALERT };

struct pfc_watchdog_config {
    bool enabled = false;
    ps_t detection = 200 * PS_PER_MS;    ///< SONiC DEFAULT_DETECTION_TIME
    ps_t restoration = 200 * PS_PER_MS;  ///< SONiC DEFAULT_RESTORATION_TIME
    pfc_watchdog_action action = pfc_watchdog_action::DROP;
    std::uint8_t priorities = 0x18;  ///< watched priorities (SONiC: the lossless 3 and 4)
};

class pfc_watchdog
{
public:
    static constexpr ps_t NEVER = ~ps_t(0);
    explicit pfc_watchdog(const pfc_watchdog_config& cfg) : m_cfg(cfg) { m_check_at.fill(NEVER); }

    /// Priority p is paused continuously since `since` (its MAC stop), or (NEVER) not paused.
    void pause_state(unsigned p, ps_t since) {
        if (!(m_cfg.priorities >> p & 1) || (m_stormed >> p & 1)) return;
        // After a restoration a pause counts from then on.
        m_check_at[p] = since == NEVER ? NEVER : std::max(since, m_watch_from[p]) + m_cfg.detection;
    }
    /// An XOFF for priority p arrived at `now` (restoration counts from the last one).
    void xoff_received(unsigned p, ps_t now) {
        if (m_stormed >> p & 1) m_check_at[p] = now + m_cfg.restoration;
    }
    /// Earliest time check() has something to decide.
    ps_t next_check() const {
        ps_t t = NEVER;
        for (const ps_t c : m_check_at) t = c < t ? c : t;
        return t;
    }
    /// Decides what is due at `now`: returns the priorities whose storm state changed. A
    /// detection is due only if the priority is still paused since then (pause_state keeps
    /// that up to date).
    std::uint8_t check(ps_t now) {
        std::uint8_t changed = 0;
        for (unsigned p = 0; p < 8; ++p) {
            if (m_check_at[p] > now) continue;
            changed = static_cast<std::uint8_t>(changed | 1u << p);
            if (m_stormed >> p & 1) {
                m_stormed = static_cast<std::uint8_t>(m_stormed & ~(1u << p));
                m_stats.restorations[p]++;
                m_stormed_total[p] += now - m_stormed_since[p];
                m_check_at[p] = NEVER;  // watched again from now on
                m_watch_from[p] = now;
            } else {
                m_stormed = static_cast<std::uint8_t>(m_stormed | 1u << p);
                m_stats.storms[p]++;
                m_stormed_since[p] = now;
                m_check_at[p] = now + m_cfg.restoration;
            }
        }
        return changed;
    }
    /// Priorities stormed now: the port ignores PFC on them unless the action is alert.
    std::uint8_t stormed() const { return m_stormed; }
    /// Priorities whose received PFC the port must ignore now.
    std::uint8_t ignoring() const {
        return m_cfg.action == pfc_watchdog_action::ALERT ? 0 : m_stormed;
    }
    /// Priorities whose frames the port must drop now.
    std::uint8_t dropping() const {
        return m_cfg.action == pfc_watchdog_action::DROP ? m_stormed : 0;
    }
    const pfc_watchdog_config& config() const { return m_cfg; }

    struct counters {
        std::array<std::uint64_t, 8> storms{};
        std::array<std::uint64_t, 8> restorations{};
    };
    const counters& stats() const { return m_stats; }
    ps_t stormed_time(unsigned p, ps_t now) const {
        return m_stormed_total[p] + ((m_stormed >> p & 1) ? now - m_stormed_since[p] : 0);
    }

private:
    pfc_watchdog_config m_cfg;
    std::array<ps_t, 8> m_check_at{};  ///< detection or restoration due
    std::array<ps_t, 8> m_stormed_since{};
    std::array<ps_t, 8> m_watch_from{};  ///< the last restoration
    std::array<ps_t, 8> m_stormed_total{};
    std::uint8_t m_stormed = 0;
    counters m_stats;
};

/// The drop action on arrivals: every frame for the queues of stormed priorities is dropped as
/// pfc_watchdog (queues() 0: sees nothing).
class watchdog_drop_policy final : public egress_policy
{
public:
    /// Added to the port with `watched` (every queue it may have to drop), then set to none.
    explicit watchdog_drop_policy(std::uint8_t watched) : egress_policy(watched, 0) {}
    void set_queues(std::uint8_t queues) { set_enqueue_mask(queues); }
    enqueue_verdict on_enqueue(const egress_queues&, unsigned, frame&, ps_t) override {
        return enqueue_verdict::DROP;
    }
    drop_cause drop_reason() const override { return drop_cause::PFC_WATCHDOG; }
};

}  // namespace fabricsim::sw
