#include "fabricsim/switch/algo/bcn_cp.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace fabricsim::sw {

bcn_cp_params bcn_cp_params::thesis_default(std::uint32_t packet_bytes) {
    bcn_cp_params p;
    p.q_eq_bytes = 16ull * packet_bytes;
    p.fb_unit_bytes = packet_bytes;
    return p;
}

std::optional<bcn_cp_params::error> bcn_cp_params::validate() const {
    auto bad = [](const char* field, const char* reason) {
        return std::optional<error>(error{field, reason});
    };
    if (q_eq_bytes == 0) return bad("q_eq_bytes", "must be > 0");
    if (q_sc_bytes != 0 && q_sc_bytes <= q_eq_bytes)
        return bad("q_sc_bytes", "must be 0 (no STOP) or > q_eq_bytes");
    if (!(w >= 0.0 && std::isfinite(w))) return bad("w", "must be >= 0");
    if (fb_unit_bytes == 0) return bad("fb_unit_bytes", "must be > 0");
    if (sample_every == 0) return bad("sample_every", "must be >= 1");
    if (quantise_bits > 16) return bad("quantise_bits", "must be 0 (off) to 16");
    return std::nullopt;
}

bcn_cp::bcn_cp(const bcn_cp_params& p, std::uint64_t seed, std::string_view name)
    : m_p(p), m_rng(seed, name), m_until_sample(p.sample_every) {
    if (auto e = p.validate())
        throw std::invalid_argument("bcn_cp_params." + e->field + ": " + e->reason);
    m_fb_max = (2 * p.w + 1) * static_cast<double>(p.q_eq_bytes) / p.fb_unit_bytes;
}

bool bcn_cp::sample() {
    if (m_p.sampling == bcn_sampling::RANDOM)
        return m_p.sample_every == 1 || m_rng.uniform() * m_p.sample_every < 1.0;
    if (--m_until_sample) return false;
    m_until_sample = m_p.sample_every;
    return true;
}

bcn_feedback bcn_cp::on_arrival(std::uint64_t queue_bytes, bool tagged_by_this_cp) {
    ++m_stats.frames;
    bcn_feedback out;
    if (!sample()) return out;
    ++m_stats.samples;
    out.sampled = true;
    const double unit = m_p.fb_unit_bytes;
    const double q = static_cast<double>(queue_bytes);
    out.q_off = (q - static_cast<double>(m_p.q_eq_bytes)) / unit;
    out.q_delta = (q - static_cast<double>(m_last_sample_queue)) / unit;
    m_last_sample_queue = queue_bytes;  // every sample, whether a message goes or not
    if (m_p.q_sc_bytes && queue_bytes > m_p.q_sc_bytes) {
        out.message = bcn_message::STOP;  // BCN(0,0): fb 0
        ++m_stats.stop;
        return out;
    }
    double fb = -(out.q_off + m_p.w * out.q_delta);
    if (m_p.quantise_bits) {
        // |Fb| clipped to Fb_max, then floor(levels·|Fb|/Fb_max) in units of Fb_max/levels.
        const double levels = static_cast<double>((1u << m_p.quantise_bits) - 1);
        const double step = m_fb_max / levels;
        const double mag = std::floor(std::min(std::abs(fb), m_fb_max) / step) * step;
        fb = fb < 0 ? -mag : mag;
    }
    out.fb = fb;
    if (fb < 0) {
        out.message = bcn_message::NEGATIVE;
        ++m_stats.negative;
    } else if (fb > 0 && tagged_by_this_cp) {
        out.message = bcn_message::POSITIVE;
        ++m_stats.positive;
    } else if (fb > 0) {
        ++m_stats.positive_untagged;
    } else {
        ++m_stats.zero;
    }
    return out;
}

}  // namespace fabricsim::sw
