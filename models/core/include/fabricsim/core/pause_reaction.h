#pragma once
/// The paused side of 802.3x PAUSE and 802.1Qbb PFC (plain C++, no SystemC), shared by the
/// switch egress and the NIC TX: per-priority quanta timers driven by received MAC-control
/// frames. The owner (a port) asks paused_until(p) before it starts a frame of priority p.
/// Timing model (facts-l2 §1.2, §2.2): a received XOFF (quanta q > 0) takes effect
/// `response_delay` after its last bit (the MAC's reaction budget, default 802.3 Annex 31B for
/// the port speed); a frame already on the wire then finishes, and the pause timer of q x 512
/// bit times starts at its end (the timer runs only while the MAC is stopped). A new frame for a
/// priority replaces its timer, also a pending one; quanta 0 (XON) releases at once, with no
/// response delay. PAUSE (opcode 0x0001) pauses every priority, PFC (0x0101) the priorities of
/// its class-enable vector. Frames whose kind is not honoured are counted and ignored.
#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>

#include <nlohmann/json_fwd.hpp>

#include "fabricsim/core/config.h"
#include "fabricsim/core/frame.h"
#include "fabricsim/core/units.h"

namespace fabricsim {

/// What a port honours; every key optional, absent = off / the standard delay.
struct pause_reaction_config {
    std::optional<bool> honour_pause;    ///< act on 802.3x PAUSE
    std::optional<bool> honour_pfc;      ///< act on 802.1Qbb PFC
    std::optional<ps_t> response_delay;  ///< absent: annex31b_response_ps(port rate)
    bool enabled() const { return honour_pause.value_or(false) || honour_pfc.value_or(false); }
};

/// Declares the `flow_control.*` keys (all optional) of a device section whose `member` holds
/// them: the switch and the NIC tables share this one declaration.
template <class T>
void add_flow_control_keys(param_table<T>& t, pause_reaction_config T::*member) {
    t.add("flow_control.honour_pause", value_kind::BOOL, "",
          "Act on received 802.3x PAUSE frames (absent: off; PAUSE is then counted and ignored)",
          [member](T& c, const config_value& v) {
              if (v.present()) (c.*member).honour_pause = v.boolean();
          })
        .optional = true;
    t.add("flow_control.honour_pfc", value_kind::BOOL, "",
          "Act on received 802.1Qbb PFC frames, per priority (absent: off)",
          [member](T& c, const config_value& v) {
              if (v.present()) (c.*member).honour_pfc = v.boolean();
          })
        .optional = true;
    auto& d = t.add("flow_control.response_delay", value_kind::TIME, "",
                    "From the last bit of an XOFF to the MAC stopping (absent: 802.3 Annex 31B "
                    "for the port speed, e.g. 60 quanta = 3.072us at 10G)",
                    [member](T& c, const config_value& v) {
                        if (v.present()) (c.*member).response_delay = v.time();
                    });
    d.optional = true;
    d.min = 0;
    d.max = 1e9;
}

/// Duration of `quanta` pause quanta (512 bit times each) at `rate_bps`, rounded up to a ps.
ps_t pause_quanta_ps(std::uint32_t quanta, std::uint64_t rate_bps);
/// Pause quanta a MAC may take to stop after a PAUSE (802.3 Annex 31B Table 31B-1) at the
/// largest listed speed <= rate_bps (10G: 60 quanta, see docs/models/pfc.md).
std::uint32_t annex31b_response_quanta(std::uint64_t rate_bps);
/// annex31b_response_quanta(rate) as a time at that rate.
inline ps_t annex31b_response_ps(std::uint64_t rate_bps) {
    return pause_quanta_ps(annex31b_response_quanta(rate_bps), rate_bps);
}

/// Per-priority pause timers of one transmitter.
class pause_reaction
{
public:
    static constexpr ps_t NEVER = ~ps_t(0);
    pause_reaction(const pause_reaction_config& cfg, std::uint64_t rate_bps);

    /// A PAUSE or PFC frame received (last bit) at `now`. XONs take effect at once; XOFFs are
    /// pending until now + response delay (apply()). Returns the priorities released now.
    std::uint8_t receive(const frame& f, ps_t now);
    /// Priorities the last receive() paused (XOFF, honoured): what a PFC watchdog counts.
    std::uint8_t last_xoff() const { return m_last_xoff; }
    /// Earliest time a pending XOFF takes effect, NEVER if none.
    ps_t next_apply() const { return m_next_apply; }
    /// Applies the XOFFs due at or before `now`; the wire carries a started frame until
    /// `wire_free` (their timers start at max(now, wire_free)). Returns the priorities changed.
    std::uint8_t apply(ps_t now, ps_t wire_free);
    /// End of priority p's pause (0 or <= t: not paused at t).
    ps_t paused_until(unsigned p) const { return m_until[p]; }
    bool paused(unsigned p, ps_t t) const { return m_until[p] > t; }
    /// Start of priority p's current (or last) pause: paused since then if paused(p, now).
    ps_t pause_start(unsigned p) const { return m_since[p]; }
    ps_t response_delay() const { return m_delay; }

    struct counters {
        std::uint64_t pause_frames = 0;       ///< 802.3x PAUSE frames received
        std::uint64_t pfc_frames = 0;         ///< PFC frames received
        std::uint64_t ignored_frames = 0;     ///< PAUSE/PFC received but not honoured
        std::array<std::uint64_t, 8> xoff{};  ///< XOFFs received per priority
        std::array<std::uint64_t, 8> xon{};   ///< XONs received per priority
    };
    const counters& stats() const { return m_stats; }
    /// Adds the counters, paused time per priority (us) and response delay to `fc` (the
    /// device's `flow_control` statistics).
    void report(nlohmann::json& fc, ps_t now) const;
    /// Time priority p has been paused up to `now` (the MAC held it; pending XOFFs not yet).
    ps_t paused_time(unsigned p, ps_t now) const {
        const ps_t end = std::min(m_until[p], now);
        return m_paused_total[p] + (end > m_since[p] ? end - m_since[p] : 0);
    }

private:
    /// Priority p paused from `from` to `until` (a pause still running is extended).
    void set_pause(unsigned p, ps_t from, ps_t until);

    std::array<ps_t, 8> m_until{};
    std::array<ps_t, 8> m_since{};         ///< start of the current (or last) pause
    std::array<ps_t, 8> m_paused_total{};  ///< pauses before the current one
    std::array<ps_t, 8> m_pending_at{};    ///< when a pending XOFF applies (NEVER: none)
    std::array<ps_t, 8> m_pending_len{};
    ps_t m_next_apply = NEVER;
    std::uint8_t m_last_xoff = 0;
    ps_t m_delay;
    std::uint64_t m_rate_bps;
    bool m_pause;
    bool m_pfc;
    counters m_stats;
};

}  // namespace fabricsim
