#include "fabricsim/switch/algo/pause_generator.h"

#include "fabricsim/core/pause_reaction.h"

namespace fabricsim::sw {

pause_generator::pause_generator(const pause_generation_config& cfg, std::uint64_t rate_bps,
                                 const std::array<std::uint8_t, 8>& pg_priorities)
    : m_cfg(cfg),
      m_pg_priorities(pg_priorities),
      m_refresh_period(cfg.refresh_quanta ? pause_quanta_ps(cfg.refresh_quanta, rate_bps) : 0) {}

bool pause_generator::advertise(std::uint8_t want, ps_t now) {
    const std::uint8_t diff = static_cast<std::uint8_t>(want ^ m_advertised);
    for (unsigned p = 0; p < 8; ++p) {
        if (!(diff >> p & 1)) continue;
        if (want >> p & 1) {
            m_stats.xoff_sent[p]++;
            m_xoff_since[p] = now;
        } else {
            m_stats.xon_sent[p]++;
            m_xoff_total[p] += now - m_xoff_since[p];
        }
    }
    m_advertised = want;
    m_changed = static_cast<std::uint8_t>(m_changed ^ diff);  // a change undone needs no frame
    return diff != 0;
}

bool pause_generator::pg_xoff(unsigned pg, ps_t now) {
    m_xoff_pgs = static_cast<std::uint8_t>(m_xoff_pgs | 1u << pg);
    if (m_cfg.mode == pause_generation::PAUSE) return advertise(0xff, now);
    return advertise(static_cast<std::uint8_t>(m_advertised | m_pg_priorities[pg]), now);
}

bool pause_generator::pg_xon(unsigned pg, ps_t now) {
    m_xoff_pgs = static_cast<std::uint8_t>(m_xoff_pgs & ~(1u << pg));
    if (m_cfg.mode == pause_generation::PAUSE) return advertise(m_xoff_pgs ? 0xff : 0, now);
    // A priority stays XOFF while another XOFF PG covers it.
    std::uint8_t want = 0;
    for (unsigned g = 0; g < 8; ++g)
        if (m_xoff_pgs >> g & 1) want = static_cast<std::uint8_t>(want | m_pg_priorities[g]);
    return advertise(want, now);
}

bool pause_generator::port_state(bool xoff, ps_t now) {
    return advertise(xoff ? 0xff : 0, now);
}

void pause_generator::fill(frame& f, ps_t now) {
    // Every frame carries the whole XOFF set (so it also refreshes it) and the XONs not yet
    // sent.
    const bool refresh = m_changed == 0;
    const std::uint8_t enable = static_cast<std::uint8_t>(m_changed | m_advertised);
    if (m_cfg.mode == pause_generation::PFC) {
        std::array<std::uint16_t, 8> quanta{};
        for (unsigned p = 0; p < 8; ++p)
            if (m_advertised >> p & 1) quanta[p] = m_cfg.pause_quanta;
        f.set_pfc(enable, quanta);
    } else {
        f.set_pause(m_advertised ? m_cfg.pause_quanta : 0);
    }
    m_changed = 0;
    m_stats.frames_sent++;
    if (refresh) m_stats.refreshes++;
    m_refresh_at = m_advertised && m_refresh_period ? now + m_refresh_period : NEVER;
}

}  // namespace fabricsim::sw
