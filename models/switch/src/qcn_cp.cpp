#include "fabricsim/switch/algo/qcn_cp.h"

#include "fabricsim/core/rng.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace fabricsim::sw {

namespace {

std::int16_t cnm_field(std::int64_t bytes) {
    const std::int64_t units = bytes / 64;  // truncates toward zero
    return static_cast<std::int16_t>(std::clamp<std::int64_t>(
        units, std::numeric_limits<std::int16_t>::min(), std::numeric_limits<std::int16_t>::max()));
}

}  // namespace

qcn_cp_params qcn_cp_params::standard() {
    return qcn_cp_params{};
}

qcn_cp_params qcn_cp_params::thesis(std::uint32_t q_eq_packets, std::uint32_t packet_bytes,
                                    double sample_probability) {
    qcn_cp_params p;
    p.q_eq_bytes = std::uint64_t(q_eq_packets) * packet_bytes;
    p.w = 2.0;
    p.jitter = 0.0;
    p.sample_probability = sample_probability;
    p.quantum_bytes = packet_bytes;
    return p;
}

double qcn_cp_params::from_mib_weight(int log2_w) {
    return std::ldexp(1.0, log2_w);
}

std::optional<qcn_cp_params::error> qcn_cp_params::validate() const {
    auto bad = [](const char* field, const char* reason) {
        return std::optional<error>(error{field, reason});
    };
    if (q_eq_bytes < 100) return bad("q_eq_bytes", "must be >= 100 (cpQueueSizeSetPoint)");
    if (!(w >= 0x1.0p-10 && w <= 0x1.0p10)) return bad("w", "must be in [2^-10, 2^10]");
    if (!(sample_probability >= 0.0 && sample_probability <= 1.0))
        return bad("sample_probability", "must be in [0, 1]");
    if (sample_probability == 0.0) {
        if (sample_base_bytes < 10'000)
            return bad("sample_base_bytes", "must be >= 10000 (cpMinSampleBase)");
        if (!(jitter >= 0.0 && jitter < 1.0)) return bad("jitter", "must be in [0, 1)");
    }
    return std::nullopt;
}

qcn_cp::qcn_cp(const qcn_cp_params& p, std::uint64_t first_draw) : m_p(p) {
    if (auto e = p.validate())
        throw std::invalid_argument("qcn_cp_params." + e->field + ": " + e->reason);
    const std::uint64_t base = p.sample_base_bytes;
    for (unsigned k = 0; k < 6; ++k) m_table[k] = base / (k + 1);
    m_table[6] = base * 43 / 300;  // 21.5 / 150
    m_table[7] = base * 37 / 300;  // 18.5 / 150
    m_fb_max = (2.0 * p.w + 1.0) * static_cast<double>(p.q_eq_bytes);
    m_to_sample = jittered(m_table[0], first_draw);
}

std::uint64_t qcn_cp::jittered(std::uint64_t bytes, std::uint64_t draw) const {
    if (m_p.jitter == 0.0) return bytes;
    const double factor = 1.0 + m_p.jitter * (2.0 * unit_interval(draw) - 1.0);
    const auto b = static_cast<std::uint64_t>(std::llround(static_cast<double>(bytes) * factor));
    return std::max<std::uint64_t>(b, 1);
}

unsigned qcn_cp::quantize(double fb) const {
    if (!(fb < 0.0)) return 0;
    const double mag = -fb;
    if (m_p.quantum_bytes) {
        const double q = std::floor(mag / m_p.quantum_bytes);
        return q >= 63.0 ? 63u : static_cast<unsigned>(q);
    }
    return static_cast<unsigned>(std::floor(63.0 * std::min(mag, m_fb_max) / m_fb_max));
}

std::optional<qcn_feedback> qcn_cp::on_enqueue(std::uint64_t queue_bytes, std::uint32_t frame_bytes,
                                               std::uint64_t draw) {
    ++m_stats.frames;
    if (m_p.sample_probability > 0.0) {
        if (!(unit_interval(draw) < m_p.sample_probability)) return std::nullopt;
    } else if (frame_bytes < m_to_sample) {
        m_to_sample -= frame_bytes;
        return std::nullopt;
    }
    ++m_stats.samples;
    const auto q = static_cast<std::int64_t>(queue_bytes);
    const std::int64_t qoff = q - static_cast<std::int64_t>(m_p.q_eq_bytes);
    const std::int64_t qdelta = q - static_cast<std::int64_t>(m_q_old);
    const double fb = -(static_cast<double>(qoff) + m_p.w * static_cast<double>(qdelta));
    const unsigned qfb = quantize(fb);
    m_q_old = queue_bytes;
    if (m_p.sample_probability == 0.0) m_to_sample = jittered(m_table[qfb >> 3], draw);
    ++m_stats.qfb[qfb];
    if (!(fb < 0.0)) {
        ++m_stats.uncongested;
        return std::nullopt;
    }
    if (qfb == 0) {
        ++m_stats.below_quantum;
        return std::nullopt;
    }
    ++m_stats.cnms;
    return qcn_feedback{qfb, fb, qoff, qdelta, cnm_field(qoff), cnm_field(qdelta)};
}

}  // namespace fabricsim::sw
