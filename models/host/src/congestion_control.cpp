#include "fabricsim/host/algo/congestion_control.h"

#include "fabricsim/core/rng.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace fabricsim::host {

namespace {

constexpr double PS_PER_SECOND = 1e12;

}  // namespace

void cc_params::validate() const {
    if (mss == 0) throw std::invalid_argument("cc_params: mss must be > 0");
    if (initial_window_segments == 0)
        throw std::invalid_argument("cc_params: initial_window_segments must be > 0");
    if (abc_limit_segments == 0)
        throw std::invalid_argument("cc_params: abc_limit_segments must be > 0");
    if (!(dctcp_g > 0.0 && dctcp_g <= 1.0))
        throw std::invalid_argument("cc_params: dctcp_g must be in (0, 1]");
    if (!(dctcp_initial_alpha >= 0.0 && dctcp_initial_alpha <= 1.0))
        throw std::invalid_argument("cc_params: dctcp_initial_alpha must be in [0, 1]");
    if (!(cubic_c > 0.0)) throw std::invalid_argument("cc_params: cubic_c must be > 0");
    if (!(cubic_beta > 0.0 && cubic_beta < 1.0))
        throw std::invalid_argument("cc_params: cubic_beta must be in (0, 1)");
    if (kind == cc_kind::GEMINI) {
        const gemini_params& g = gemini;
        if (g.capacity_bps == 0)
            throw std::invalid_argument("cc_params: gemini.capacity_bps must be set");
        if (!(g.beta > 0.0 && g.beta < 1.0))
            throw std::invalid_argument("cc_params: gemini.beta must be in (0, 1)");
        if (!(g.h_scale > 0.0))
            throw std::invalid_argument("cc_params: gemini.h_scale must be > 0");
        if (!(g.h_min > 0.0 && g.h_min <= g.h_max))
            throw std::invalid_argument("cc_params: gemini.h_min must be in (0, h_max]");
        if (!(g.f >= 0.0)) throw std::invalid_argument("cc_params: gemini.f must be >= 0");
        if (!(g.max_cut > 0.0 && g.max_cut <= 1.0))
            throw std::invalid_argument("cc_params: gemini.max_cut must be in (0, 1]");
        if (!(g.pacing_ss_ratio > 0.0 && g.pacing_ca_ratio > 0.0))
            throw std::invalid_argument("cc_params: gemini pacing ratios must be > 0");
    }
}

congestion_control::congestion_control(const cc_params& p)
    : m_p(p),
      m_cwnd(static_cast<std::uint64_t>(p.initial_window_segments) * p.mss),
      m_ssthresh(p.initial_ssthresh_bytes ? p.initial_ssthresh_bytes
                                          : std::numeric_limits<std::uint64_t>::max()),
      m_alpha(p.dctcp_initial_alpha) {
    m_p.validate();
    // Table 3.4: K = 50 packets per Gb/s of C.
    if (m_p.kind == cc_kind::GEMINI && m_p.gemini.k_bytes == 0)
        m_p.gemini.k_bytes = std::max<std::uint64_t>(
            1, static_cast<std::uint64_t>(std::llround(
                   50.0 * 1500.0 * static_cast<double>(m_p.gemini.capacity_bps) / 1e9)));
    if (m_p.kind == cc_kind::GEMINI) {
        m_rtt_noise = m_p.gemini.rtt_noise;
        m_noise_state = m_p.gemini.noise_seed;
    }
}

bool congestion_control::ecn_capable() const {
    switch (m_p.kind) {
        case cc_kind::ECN_STAR:
        case cc_kind::DCTCP:
        case cc_kind::GEMINI:
            return true;
        case cc_kind::CUBIC:
            return m_p.cubic_ecn;
        case cc_kind::NEWRENO:
            break;
    }
    return false;
}

std::uint64_t congestion_control::scaled(std::uint64_t bytes, double factor) const {
    return static_cast<std::uint64_t>(std::llround(static_cast<double>(bytes) * factor));
}

void congestion_control::start_reduction(std::uint64_t snd_nxt) {
    m_reduce_end = snd_nxt;
    m_ca_acked = 0;
    m_carry = 0;
    if (ecn_capable()) m_cwr_pending = true;
}

ack_outcome congestion_control::on_ack(const ack_event& e) {
    if (e.acked_bytes == 0) return ack_outcome::NORMAL;
    if (m_rtt_noise != 0 && e.rtt_sample != 0) return on_noisy_ack(e);
    return on_sampled_ack(e);
}

ack_outcome congestion_control::on_noisy_ack(const ack_event& e) {
    ack_event noisy = e;
    m_noise_state += 0x9e3779b97f4a7c15ull;
    const double u = unit_interval(splitmix64(m_noise_state));
    noisy.rtt_sample += static_cast<ps_t>(u * static_cast<double>(m_rtt_noise));
    return on_sampled_ack(noisy);
}

ack_outcome congestion_control::on_sampled_ack(const ack_event& e) {
    if (e.rtt_sample && (m_min_rtt == 0 || e.rtt_sample < m_min_rtt)) m_min_rtt = e.rtt_sample;
    if (m_p.kind == cc_kind::DCTCP) dctcp_observe(e);
    if (m_p.kind == cc_kind::GEMINI) gemini_observe(e);
    if (!m_hs_found && m_cwnd < m_ssthresh && m_p.hystart()) hystart_update(e);

    if (m_in_recovery) {
        if (e.snd_una_after >= m_recover) {
            // RFC 6582 §3.2 step 3, option 1: avoid a burst when little data is outstanding.
            const std::uint64_t flight_after =
                e.snd_nxt > e.snd_una_after ? e.snd_nxt - e.snd_una_after : 0;
            m_cwnd = std::min(m_ssthresh, std::max<std::uint64_t>(flight_after, m_p.mss) + m_p.mss);
            m_in_recovery = false;
            m_ca_acked = 0;
            return ack_outcome::RECOVERY_EXIT;
        }
        // Partial ACK (step 5): deflate by the newly acked bytes, add back one MSS if >= 1 MSS.
        const std::uint64_t add_back = e.acked_bytes >= m_p.mss ? m_p.mss : 0;
        const std::uint64_t grown = m_cwnd + add_back;
        m_cwnd = grown > e.acked_bytes ? std::max<std::uint64_t>(grown - e.acked_bytes, m_p.mss)
                                       : m_p.mss;
        return ack_outcome::PARTIAL_ACK;
    }

    if (m_p.kind == cc_kind::GEMINI) {
        const bool dcn = e.ece;
        const ps_t base = gemini_rtt_base();
        const bool wan = m_rtt_min_prev != 0 && m_rtt_min_prev > base + m_p.gemini.t;
        if (!dcn && !wan) {
            grow(e);
        } else if (e.snd_una_after > m_reduce_end) {
            gemini_reduce(e, dcn, wan);
        }
        return ack_outcome::NORMAL;
    }
    if (e.ece && ecn_capable()) {
        if (m_p.kind == cc_kind::DCTCP && m_p.rtt_fair) {
            // eq 3.35: W <- W + 1/W - alpha/2 per marked ACK (per acked segment in bytes).
            if (m_cwnd < m_ssthresh) m_ssthresh = m_cwnd;
            congestion_avoidance(e.now, e.acked_bytes);
            const std::uint64_t dec = scaled(e.acked_bytes, m_alpha / 2);
            m_cwnd = m_cwnd > dec + two_mss() ? m_cwnd - dec : std::min(m_cwnd, two_mss());
            m_ssthresh = std::max(m_cwnd, two_mss());
            ++m_ecn_reductions;
            m_cwr_pending = true;
            return ack_outcome::NORMAL;
        }
        if (e.snd_una_after > m_reduce_end) {
            ece_reduce(e);
            return ack_outcome::NORMAL;
        }
    }
    grow(e);
    return ack_outcome::NORMAL;
}

void congestion_control::dctcp_observe(const ack_event& e) {
    if (!m_window_open) {
        m_window_open = true;
        m_window_end = e.snd_nxt;
        m_window_bytes = 0;
        m_window_ece_bytes = 0;
    }
    m_window_bytes += e.acked_bytes;
    if (e.ece) m_window_ece_bytes += e.acked_bytes;
    if (e.snd_una_after >= m_window_end) {
        m_last_f = static_cast<double>(m_window_ece_bytes) / static_cast<double>(m_window_bytes);
        m_alpha = (1.0 - m_p.dctcp_g) * m_alpha + m_p.dctcp_g * m_last_f;
        ++m_windows;
        m_window_open = false;
    }
}

void congestion_control::gemini_observe(const ack_event& e) {
    const std::uint64_t windows = m_windows;
    dctcp_observe(e);
    if (e.rtt_sample) {
        if (m_rtt_min_cur == 0 || e.rtt_sample < m_rtt_min_cur) m_rtt_min_cur = e.rtt_sample;
        const ps_t w = m_p.gemini.rtt_base_window;
        if (w) {
            if (e.now >= m_base_bucket_end) {
                // A bucket older than one window is forgotten; an empty gap forgets both.
                m_base_prev = e.now < m_base_bucket_end + w ? m_base_cur : 0;
                m_base_cur = 0;
                m_base_bucket_end = e.now + w;
            }
            if (m_base_cur == 0 || e.rtt_sample < m_base_cur) m_base_cur = e.rtt_sample;
        }
    }
    // The window dctcp_observe just closed (the ACK reaching its end) ends the RTT_min window.
    if (m_windows != windows) {
        m_rtt_min_prev = m_rtt_min_cur;
        m_rtt_min_cur = 0;
    }
}

// Linux tcp_cubic.c: bictcp_hystart_reset / hystart_update, called from pkts_acked (with an
// RTT sample, from 16 MSS of cwnd) and cong_avoid (the round reset).
void congestion_control::hystart_update(const ack_event& e) {
    constexpr ps_t ACK_DELTA = 2 * PS_PER_MS;
    constexpr std::uint32_t MIN_SAMPLES = 8;
    constexpr std::uint64_t LOW_WINDOW = 16;
    if (e.snd_una_after > m_hs_end_seq) {  // a new round
        m_hs_round_start = m_hs_last_ack = e.now;
        m_hs_end_seq = e.snd_nxt;
        m_hs_round_rtt = 0;
        m_hs_samples = 0;
    }
    if (e.rtt_sample == 0 || m_cwnd < LOW_WINDOW * m_p.mss) return;
    bool train = false, delay = false;
    if (e.now - m_hs_last_ack <= ACK_DELTA) {
        m_hs_last_ack = e.now;
        // The ACKs of a round at the bottleneck rate span half the RTT when cwnd is half the
        // path's BDP, which doubles to it in this round. Pacing spreads them over up to an RTT.
        const bool paced = m_p.kind == cc_kind::GEMINI && m_p.gemini.pacing;
        const ps_t threshold = paced ? m_min_rtt : m_min_rtt / 2;
        train = e.now - m_hs_round_start > threshold;
    }
    if (m_hs_round_rtt == 0 || e.rtt_sample < m_hs_round_rtt) m_hs_round_rtt = e.rtt_sample;
    if (m_hs_samples < MIN_SAMPLES)
        ++m_hs_samples;
    else
        delay = m_hs_round_rtt >
                m_min_rtt + std::clamp<ps_t>(m_min_rtt / 8, 4 * PS_PER_MS, 16 * PS_PER_MS);
    if (!train && !delay) return;
    m_hs_found = true;
    m_ssthresh = m_cwnd;
    ++(train ? m_hs_train_exits : m_hs_delay_exits);
}

void congestion_control::seed_rtt(ps_t rtt) {
    if (m_p.kind != cc_kind::GEMINI || rtt == 0) return;
    if (m_min_rtt == 0 || rtt < m_min_rtt) m_min_rtt = rtt;
    if (m_base_cur == 0 || rtt < m_base_cur) m_base_cur = rtt;  // a bucket of time 0
}

ps_t congestion_control::gemini_rtt_base() const {
    if (m_p.gemini.rtt_base_window == 0) return m_min_rtt;
    if (m_base_prev == 0) return m_base_cur;
    return m_base_cur == 0 ? m_base_prev : std::min(m_base_cur, m_base_prev);
}

double congestion_control::gemini_f() const {
    const gemini_params& g = m_p.gemini;
    if (g.f > 0) return g.f;
    const double k = static_cast<double>(g.k_bytes);
    const double bdp = static_cast<double>(g.capacity_bps) / 8.0 *
                       static_cast<double>(gemini_rtt_base()) / PS_PER_SECOND;
    return 4.0 * k / (bdp + k);
}

double congestion_control::gemini_h() const {
    const gemini_params& g = m_p.gemini;
    const ps_t base = gemini_rtt_base();
    if (base == 0) return g.h_min;
    const double h =
        g.h_scale * static_cast<double>(g.capacity_bps) * static_cast<double>(base) / PS_PER_SECOND;
    return std::clamp(h, g.h_min, g.h_max);
}

void congestion_control::gemini_reduce(const ack_event& e, bool dcn, bool wan) {
    const double f_dcn = dcn ? m_alpha * gemini_f() : 0.0;
    const double f_wan = wan ? m_p.gemini.beta : 0.0;
    const double cut = std::min(std::max(f_dcn, f_wan), m_p.gemini.max_cut);
    m_ssthresh = std::max(scaled(m_cwnd, 1.0 - cut), two_mss());
    m_cwnd = std::min(m_cwnd, m_ssthresh);
    if (dcn) ++m_ecn_reductions;
    if (wan) ++m_wan_reductions;
    start_reduction(e.snd_nxt);
}

void congestion_control::ece_reduce(const ack_event& e) {
    std::uint64_t target = m_cwnd;
    switch (m_p.kind) {
        case cc_kind::ECN_STAR:
            target = m_cwnd / 2;
            break;
        case cc_kind::DCTCP:
            target = scaled(m_cwnd, 1.0 - m_alpha / 2);
            break;
        case cc_kind::CUBIC:
            cubic_on_congestion();
            target = scaled(m_cwnd, m_p.cubic_beta);
            break;
        case cc_kind::NEWRENO:
        case cc_kind::GEMINI:  // gemini_reduce
            return;
    }
    m_ssthresh = std::max(target, two_mss());
    m_cwnd = std::min(m_cwnd, m_ssthresh);
    ++m_ecn_reductions;
    start_reduction(e.snd_nxt);
}

void congestion_control::grow(const ack_event& e) {
    std::uint64_t acked = e.acked_bytes;
    if (m_cwnd < m_ssthresh) {
        const std::uint64_t step = std::min<std::uint64_t>(
            acked, static_cast<std::uint64_t>(m_p.abc_limit_segments) * m_p.mss);
        const std::uint64_t room = m_ssthresh - m_cwnd;
        if (step < room) {
            m_cwnd += step;
            return;
        }
        m_cwnd = m_ssthresh;
        acked -= std::min(acked, room);
        if (acked == 0) return;
    }
    congestion_avoidance(e.now, acked);
}

void congestion_control::congestion_avoidance(ps_t now, std::uint64_t acked) {
    if (m_p.kind == cc_kind::CUBIC) {
        cubic_avoidance(now, acked);
        return;
    }
    if (m_p.kind == cc_kind::GEMINI) {
        // cwnd += h / cwnd per segment acked, i.e. + h MSS per window of acked bytes.
        add_fraction(gemini_h() * m_p.mss * static_cast<double>(acked) /
                     static_cast<double>(m_cwnd));
        return;
    }
    // Appropriate byte counting: one MSS per cwnd of acknowledged bytes.
    m_ca_acked += acked;
    while (m_ca_acked >= m_cwnd) {
        m_ca_acked -= m_cwnd;
        m_cwnd += m_p.mss;
    }
}

void congestion_control::add_fraction(double bytes) {
    m_carry += bytes;
    const double whole = std::floor(m_carry);
    m_cwnd += static_cast<std::uint64_t>(whole);
    m_carry -= whole;
}

double congestion_control::cubic_window(double t) const {
    const double d = t - m_k;
    return m_p.cubic_c * d * d * d * m_p.mss + m_origin;
}

void congestion_control::cubic_on_congestion() {
    const double w = static_cast<double>(m_cwnd);
    if (m_p.cubic_fast_convergence && w < m_w_last_max) {
        m_w_last_max = w;
        m_w_max = w * (1.0 + m_p.cubic_beta) / 2.0;
    } else {
        m_w_last_max = w;
        m_w_max = w;
    }
    m_epoch_valid = false;
}

void congestion_control::cubic_avoidance(ps_t now, std::uint64_t acked) {
    const double cwnd = static_cast<double>(m_cwnd);
    if (!m_epoch_valid) {
        m_epoch_valid = true;
        m_epoch_start = now;
        m_cwnd_epoch = cwnd;
        if (m_w_max > cwnd) {
            m_k = std::cbrt((m_w_max - cwnd) / m_p.mss / m_p.cubic_c);
            m_origin = m_w_max;
        } else {
            m_k = 0;
            m_origin = cwnd;
        }
    }
    const double t = static_cast<double>(now - m_epoch_start) / PS_PER_SECOND;
    const double rtt = static_cast<double>(m_min_rtt) / PS_PER_SECOND;
    if (m_p.cubic_tcp_friendly && m_min_rtt > 0) {
        const double beta = m_p.cubic_beta;
        const double w_est = m_cwnd_epoch + 3.0 * (1.0 - beta) / (1.0 + beta) * (t / rtt) * m_p.mss;
        if (cubic_window(t) < w_est) {
            if (w_est > cwnd) {
                m_cwnd = static_cast<std::uint64_t>(w_est);
                m_carry = 0;
            }
            return;
        }
    }
    // The window including its fractional carry, so that the curve is approached from below.
    const double exact = cwnd + m_carry;
    const double target = std::min(cubic_window(t + rtt), 1.5 * cwnd);
    if (target > exact) add_fraction((target - exact) * static_cast<double>(acked) / cwnd);
}

void congestion_control::on_dupack() {
    if (m_in_recovery) m_cwnd += m_p.mss;
}

bool congestion_control::on_dupack_threshold(ps_t /*now*/, std::uint64_t snd_una,
                                             std::uint64_t snd_nxt, std::uint64_t flight_bytes) {
    if (m_in_recovery) return false;
    if (m_have_recover && snd_una <= m_recover) return false;
    if (m_p.kind == cc_kind::CUBIC) cubic_on_congestion();
    m_ssthresh = loss_ssthresh(flight_bytes);
    m_cwnd = m_ssthresh + 3ull * m_p.mss;
    m_in_recovery = true;
    m_have_recover = true;
    m_recover = snd_nxt;
    start_reduction(snd_nxt);
    return true;
}

void congestion_control::on_rto(ps_t /*now*/, std::uint64_t snd_nxt, std::uint64_t flight_bytes,
                                bool repeated) {
    if (!repeated) m_ssthresh = loss_ssthresh(flight_bytes);
    if (m_p.kind == cc_kind::CUBIC) {
        m_w_max = 0;
        m_w_last_max = 0;
        m_epoch_valid = false;
    }
    m_cwnd = m_p.mss;
    m_hs_found = false;  // Linux bictcp_state(TCP_CA_Loss): bictcp_reset
    m_in_recovery = false;
    m_have_recover = true;
    m_recover = snd_nxt;
    start_reduction(snd_nxt);
}

std::uint64_t congestion_control::loss_ssthresh(std::uint64_t flight_bytes) const {
    switch (m_p.kind) {
        case cc_kind::CUBIC:
            return std::max(scaled(m_cwnd, m_p.cubic_beta), two_mss());
        case cc_kind::GEMINI:
            return std::max(scaled(m_cwnd, 1.0 - m_p.gemini.beta), two_mss());
        default:
            return std::max(flight_bytes / 2, two_mss());
    }
}

void congestion_control::restart_after_idle() {
    const std::uint64_t iw = std::uint64_t(m_p.initial_window_segments) * m_p.mss;
    m_ssthresh = std::max(m_ssthresh, m_cwnd / 4 * 3);
    m_cwnd = std::min(m_cwnd, iw);
    m_ca_acked = 0;
    m_epoch_valid = false;
}

}  // namespace fabricsim::host
