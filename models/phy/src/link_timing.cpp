#include "fabricsim/phy/link_timing.h"

#include <cmath>

#include "fabricsim/core/config.h"

namespace fabricsim::phy {

fec_mode default_fec(std::uint64_t rate) {
    // IEEE 802.3by/bj/cd/bs: 25/50/100G use RS(528,514) (KR4/CL91), 200/400G use RS(544,514) (KP4).
    if (rate >= 200'000'000'000ull) return fec_mode::RS_544_514;
    if (rate == 25'000'000'000ull || rate == 50'000'000'000ull || rate == 100'000'000'000ull)
        return fec_mode::RS_528_514;
    return fec_mode::NONE;
}

ps_t default_encoding_latency(std::uint64_t rate) {
    // Typical PCS+PMA encode+decode one way (8b/10b at 1G, 64b/66b above); order-of-magnitude
    // figures, configurable per link.
    if (rate <= 1'000'000'000ull) return 200 * PS_PER_NS;
    if (rate <= 10'000'000'000ull) return 60 * PS_PER_NS;
    return 40 * PS_PER_NS;
}

ps_t default_fec_latency(fec_mode fec, std::uint64_t rate) {
    // RS decoders buffer about one codeword plus pipeline: ~100 ns for RS(528,514) at 25-100G,
    // ~120 ns for RS(544,514) (typical vendor figures).
    (void)rate;
    switch (fec) {
        case fec_mode::NONE:
            return 0;
        case fec_mode::RS_528_514:
            return 100 * PS_PER_NS;
        case fec_mode::RS_544_514:
            return 120 * PS_PER_NS;
    }
    return 0;
}

ps_t cable_propagation(double metres) {
    return static_cast<ps_t>(std::llround(metres * 5000.0));
}

const char* fec_name(fec_mode f) {
    switch (f) {
        case fec_mode::NONE:
            return "none";
        case fec_mode::RS_528_514:
            return "rs528";
        case fec_mode::RS_544_514:
            return "rs544";
    }
    return "?";
}

void link_config::validate(const std::string& key) const {
    if (rate_bps == 0) throw config_error(key + ".rate", "must be positive");
    if (ber < 0 || ber >= 1) throw config_error(key + ".ber", "must be in [0, 1)");
    ps_t prev = 0;
    for (std::size_t i = 0; i < down.size(); ++i) {
        if (down[i].second <= down[i].first)
            throw config_error(key + ".down[" + std::to_string(i) + "]", "'up' must be after 'at'");
        if (down[i].first < prev)
            throw config_error(key + ".down[" + std::to_string(i) + "]",
                               "intervals must be ordered and not overlap");
        prev = down[i].second;
    }
    for (std::size_t i = 0; i < rate_steps.size(); ++i) {
        const std::string k = key + ".rate_steps[" + std::to_string(i) + "]";
        if (rate_steps[i].rate_bps == 0) throw config_error(k + ".rate", "must be positive");
        if (i && rate_steps[i].at < rate_steps[i - 1].at)
            throw config_error(k + ".at", "steps must be ordered by time");
    }
}

link_timing::link_timing(const link_config& cfg, std::uint64_t seed, const std::string& name,
                         unsigned direction)
    : m_cfg(cfg), m_serialize(cfg.rate_bps) {
    if (cfg.ber > 0) {
        m_log1m_ber = std::log1p(-cfg.ber);
        m_rng = std::make_unique<rng>(seed, name);
    }
    for (const rate_step& s : cfg.rate_steps)
        if (s.directions & (1u << direction)) m_steps.push_back(s);
    if (!m_steps.empty()) m_next_step_at = m_steps.front().at;
}

void link_timing::step_rate(ps_t start) {
    while (m_step < m_steps.size() && m_steps[m_step].at <= start)
        m_serialize = serializer(m_steps[m_step++].rate_bps);
    m_next_step_at = m_step < m_steps.size() ? m_steps[m_step].at : ~ps_t(0);
}

std::uint64_t link_timing::stepped_rate_at(ps_t t) const {
    if (m_steps.empty()) return 0;
    std::uint64_t r = m_cfg.rate_bps;
    for (const rate_step& s : m_steps)
        if (s.at <= t) r = s.rate_bps;
    return r;
}

tx_result link_timing::transmit_at_rate(frame& f, ps_t start) {
    tx_result r;
    r.wire_free = start + m_serialize(f.wire_bytes());
    r.last_bit = start + last_bit_delay(f);
    if (m_deliver_after == 0 || m_deliver_after >= f.frame_bytes())
        r.deliver = r.last_bit;
    else
        r.deliver = start + m_serialize(PREAMBLE_SFD + m_deliver_after) + m_cfg.one_way_latency();
    for (const auto& [down_from, down_to] : m_cfg.down) {
        if (start < down_to && r.wire_free > down_from) {
            r.lost = true;
            return r;
        }
        if (down_from >= r.wire_free) break;
    }
    if (m_cfg.ber > 0) {
        const double bits = 8.0 * f.frame_bytes();
        const double p_bad = -std::expm1(bits * m_log1m_ber);
        if (m_rng->uniform() < p_bad) f.fcs_error = true;
    }
    return r;
}

}  // namespace fabricsim::phy
