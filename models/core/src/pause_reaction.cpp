#include "fabricsim/core/pause_reaction.h"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace fabricsim {

ps_t pause_quanta_ps(std::uint32_t quanta, std::uint64_t rate_bps) {
    return serialization_ps(std::uint64_t(quanta) * 64, rate_bps);
}

std::uint32_t annex31b_response_quanta(std::uint64_t rate_bps) {
    // 802.3 Annex 31B Table 31B-1 (facts-l2 §1.3); 10G: 60 quanta (30 720 bit times).
    struct row {
        std::uint64_t rate;
        std::uint32_t quanta;
    };
    static constexpr std::array<row, 9> TABLE{{{100'000'000, 1},
                                               {1'000'000'000, 2},
                                               {10'000'000'000, 60},
                                               {25'000'000'000, 80},
                                               {40'000'000'000, 118},
                                               {50'000'000'000, 147},
                                               {100'000'000'000, 394},
                                               {200'000'000'000, 453},
                                               {400'000'000'000, 905}}};
    std::uint32_t q = 1;
    for (const row& r : TABLE)
        if (r.rate <= rate_bps) q = r.quanta;
    return q;
}

pause_reaction::pause_reaction(const pause_reaction_config& cfg, std::uint64_t rate_bps)
    : m_delay(cfg.response_delay ? *cfg.response_delay : annex31b_response_ps(rate_bps)),
      m_rate_bps(rate_bps),
      m_pause(cfg.honour_pause.value_or(false)),
      m_pfc(cfg.honour_pfc.value_or(false)) {
    m_pending_at.fill(NEVER);
}

std::uint8_t pause_reaction::receive(const frame& f, ps_t now) {
    const bool pfc = f.kind == frame_kind::PFC;
    (pfc ? m_stats.pfc_frames : m_stats.pause_frames)++;
    m_last_xoff = 0;
    if (!(pfc ? m_pfc : m_pause)) {
        m_stats.ignored_frames++;
        return 0;
    }
    const std::uint8_t enable = pfc ? f.pfc_enable : 0xff;
    std::uint8_t released = 0;
    for (unsigned p = 0; p < 8; ++p) {
        if (!(enable >> p & 1)) continue;
        const std::uint16_t q = pfc ? f.pause_quanta[p] : f.pause_quanta[0];
        if (q == 0) {
            m_stats.xon[p]++;
            m_pending_at[p] = NEVER;
            if (m_until[p] > now) {
                released = static_cast<std::uint8_t>(released | 1u << p);
                m_until[p] = std::max(now, m_since[p]);  // the pause ends now
            }
        } else {
            m_stats.xoff[p]++;
            m_last_xoff = static_cast<std::uint8_t>(m_last_xoff | 1u << p);
            m_pending_at[p] = now + m_delay;
            m_pending_len[p] = pause_quanta_ps(q, m_rate_bps);
        }
    }
    m_next_apply = *std::min_element(m_pending_at.begin(), m_pending_at.end());
    return released;
}

std::uint8_t pause_reaction::apply(ps_t now, ps_t wire_free) {
    std::uint8_t changed = 0;
    const ps_t stopped = std::max(now, wire_free);  // the frame on the wire finishes first
    for (unsigned p = 0; p < 8; ++p) {
        if (m_pending_at[p] > now) continue;
        set_pause(p, stopped, stopped + m_pending_len[p]);
        m_pending_at[p] = NEVER;
        changed = static_cast<std::uint8_t>(changed | 1u << p);
    }
    m_next_apply = *std::min_element(m_pending_at.begin(), m_pending_at.end());
    return changed;
}

void pause_reaction::report(nlohmann::json& fc, ps_t now) const {
    fc["pause_frames_received"] = m_stats.pause_frames;
    fc["pfc_frames_received"] = m_stats.pfc_frames;
    fc["ignored_frames"] = m_stats.ignored_frames;
    fc["xoff_received"] = m_stats.xoff;
    fc["xon_received"] = m_stats.xon;
    nlohmann::json paused = nlohmann::json::array();
    for (unsigned p = 0; p < 8; ++p) paused.push_back(double(paused_time(p, now)) / 1e6);
    fc["paused_time_us"] = std::move(paused);
    fc["response_delay_us"] = double(m_delay) / double(PS_PER_US);
}

void pause_reaction::set_pause(unsigned p, ps_t from, ps_t until) {
    if (m_until[p] < from) {  // not paused at `from`: a new pause (else the running one goes on)
        m_paused_total[p] += m_until[p] - m_since[p];
        m_since[p] = from;
    }
    m_until[p] = until;
}

}  // namespace fabricsim
