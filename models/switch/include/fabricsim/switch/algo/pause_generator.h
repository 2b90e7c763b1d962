#pragma once
/// The congested side of 802.3x PAUSE and 802.1Qbb PFC (plain C++, no SystemC): what one switch
/// port advertises to its link peer and the frames that say it (facts-l2 §1.4, §2.3).
/// The MMU decides when a lossless PG of the port crosses its XOFF or XON point
/// (pg_flow_listener); the 802.3x queue-triggered variant (seed-003 §1.9) decides from an egress
/// queue of any port. The generator turns those into advertised state per priority:
///  - PFC: priority p is XOFF while a PG it maps to (tc_to_pg[pcp_to_tc[p]]) is XOFF; a change
///    sends one PFC frame whose enable vector has the changed priorities (quanta: pause_quanta
///    for XOFF, 0 for XON);
///  - PAUSE (port level): XOFF while any lossless PG of the port is, one 802.3x PAUSE frame per
///    change (quanta or 0);
///  - queue PAUSE: XOFF while the switch holds any congested queue (the switch tells every
///    port but the congested one's).
/// While anything is XOFF the advertisement is refreshed every refresh_quanta x 512 bit times
/// (XOFF re-sent with pause_quanta, as vendors do: 0xFFFF refreshed at 0x7FFF).
/// Timing model: untimed state; the port sends the frames the generator fills at the next frame
/// boundary. Time in XOFF is accounted per priority from the decisions' times.
#include <array>
#include <cstdint>

#include "fabricsim/core/frame.h"
#include "fabricsim/core/units.h"

namespace fabricsim::sw {

enum class pause_generation : std::uint8_t { OFF, PFC, PAUSE, QUEUE_PAUSE };

struct pause_generation_config {
    pause_generation mode = pause_generation::OFF;
    std::uint16_t pause_quanta = 0xffff;    ///< advertised in every XOFF
    std::uint16_t refresh_quanta = 0x7fff;  ///< XOFF re-sent this often while on; 0 = never
    /// Queue PAUSE: ON above q_on, OFF below q_off (frames or bytes of one egress queue).
    std::uint64_t q_on = 0;
    std::uint64_t q_off = 0;
    bool q_in_frames = true;
    bool enabled() const { return mode != pause_generation::OFF; }
};

class pause_generator
{
public:
    static constexpr ps_t NEVER = ~ps_t(0);
    /// `pg_priorities[g]`: priorities (bit p) that PG g covers.
    pause_generator(const pause_generation_config& cfg, std::uint64_t rate_bps,
                    const std::array<std::uint8_t, 8>& pg_priorities);

    /// PG g of this port went XOFF / XON at `now`. True if a frame must be sent (fill()).
    bool pg_xoff(unsigned pg, ps_t now);
    bool pg_xon(unsigned pg, ps_t now);
    /// The whole port (queue PAUSE) on or off at `now`. True if a frame must be sent.
    bool port_state(bool xoff, ps_t now);
    /// Fills `f` (a fresh pooled frame) with what changed since the last frame, or with the
    /// refresh when nothing did, and counts it. Call once per true above or refresh_due().
    void fill(frame& f, ps_t now);
    /// A change is waiting for its frame (false if it was undone before the frame went).
    bool change_pending() const { return m_changed != 0; }
    /// When the XOFF must be re-sent (NEVER if nothing is XOFF or refresh is off).
    ps_t refresh_due() const { return m_refresh_at; }
    /// Priorities advertised XOFF now (PAUSE: all 8 or none).
    std::uint8_t xoff_priorities() const { return m_advertised; }

    struct counters {
        std::uint64_t frames_sent = 0;  ///< PAUSE/PFC frames, refreshes included
        std::uint64_t refreshes = 0;
        std::array<std::uint64_t, 8> xoff_sent{};  ///< XOFF transitions per priority
        std::array<std::uint64_t, 8> xon_sent{};
    };
    const counters& stats() const { return m_stats; }
    /// Time priority p has been advertised XOFF up to `now`.
    ps_t xoff_time(unsigned p, ps_t now) const {
        return m_xoff_total[p] + ((m_advertised >> p & 1) ? now - m_xoff_since[p] : 0);
    }

private:
    /// The advertisement becomes `want` at `now`; true if that changes what the peer was told.
    bool advertise(std::uint8_t want, ps_t now);

    pause_generation_config m_cfg;
    std::array<std::uint8_t, 8> m_pg_priorities;
    ps_t m_refresh_period;
    std::uint8_t m_xoff_pgs = 0;
    std::uint8_t m_advertised = 0;  ///< what the last frames told the peer (or will)
    std::uint8_t m_changed = 0;     ///< priorities whose change is not yet in a frame
    ps_t m_refresh_at = NEVER;
    std::array<ps_t, 8> m_xoff_since{};
    std::array<ps_t, 8> m_xoff_total{};
    counters m_stats;
};

}  // namespace fabricsim::sw
