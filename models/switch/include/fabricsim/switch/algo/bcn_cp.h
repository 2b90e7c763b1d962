#pragma once
/// BCN congestion point (Cisco/Bergamasco 802.1Qau proposal; seed-003 §1.10, facts-l2 §5.1) on
/// one output queue, as plain C++ (no SystemC).
///
/// Timing model: untimed, per frame. The caller passes every frame that enters the queue, with
/// the queue in bytes after it; one frame in `sample_every` (or each with probability
/// 1/sample_every) is a sample. A sample computes, in units of `fb_unit_bytes`,
///   Q_off = q − Q_eq,  Q_δ = q − q_at_last_sample,  Fb = −(Q_off + w·Q_δ)
/// (Fb < 0: congestion; facts-l2 §5.1, the thesis's congestion index e has the same sign), and
/// decides a message: NEGATIVE (Fb < 0) to the source of the sampled frame; POSITIVE (Fb > 0)
/// only if the frame carries a rate-regulator tag naming this CP; STOP (BCN(0,0)) instead of
/// either if q > Q_sc (when Q_sc is set). The message's wire format, its CPID and the copy of
/// the sampled frame are the caller's. Fb is not quantised by default (the thesis says BCN
/// carries the queue's status; quantisation is QCN's); quantise_bits > 0 clips |Fb| to
/// (2w+1)·Q_eq and keeps that many bits, as the QCN CP does (facts-l2 §3.3).
/// Ignored: the sample-interval jitter and QCN's feedback-dependent sampling table.
#include <cstdint>
#include <optional>
#include <string_view>

#include "fabricsim/core/param_error.h"
#include "fabricsim/core/rng.h"

namespace fabricsim::sw {

enum class bcn_sampling : std::uint8_t {
    EVERY_N,  ///< the n-th, 2n-th ... frame (deterministic)
    RANDOM,   ///< each frame with probability 1/n (a per-CP generator seeded from seed, name)
};

/// Parameters of one congestion point. Queue lengths in bytes.
struct bcn_cp_params {
    std::uint64_t q_eq_bytes = 16 * 1500;  ///< Q_eq (no BCN value found; FERA's default)
    std::uint64_t q_sc_bytes = 0;          ///< Q_sc for STOP; 0 = no STOP messages
    double w = 2.0;                        ///< weight of Q_δ (facts-l2 §5.3, [EXT])
    /// Unit of Q_off, Q_δ and Fb. The thesis's |e| <= 3 "slightly congested" with
    /// G_d = 2.6e-4 only makes sense for small numbers: packets (1500 B) by default.
    std::uint32_t fb_unit_bytes = 1500;
    bcn_sampling sampling = bcn_sampling::EVERY_N;
    std::uint32_t sample_every = 100;  ///< one sample per 100 frames (P_m = 0.01)
    std::uint32_t quantise_bits = 0;   ///< 0: Fb as computed; else 1..16 bits of |Fb|

    /// Thesis/facts set: Q_eq 16 packets, w 2, one sample per 100 frames, no STOP.
    static bcn_cp_params thesis_default(std::uint32_t packet_bytes = 1500);

    using error = param_error;
    /// The first field that is out of range, or nothing if the set is usable.
    std::optional<error> validate() const;
};

enum class bcn_message : std::uint8_t { NONE, NEGATIVE, POSITIVE, STOP };

/// The decision for one arriving frame.
struct bcn_feedback {
    bcn_message message = bcn_message::NONE;
    double fb = 0;       ///< −(Q_off + w·Q_δ), quantised if configured; 0 for STOP
    double q_off = 0;    ///< in fb_unit_bytes
    double q_delta = 0;  ///< in fb_unit_bytes
    bool sampled = false;
};

/// Congestion point of one queue. No allocation after construction.
class bcn_cp
{
public:
    /// Throws std::invalid_argument ("bcn_cp_params.<field>: <reason>") if p does not validate.
    explicit bcn_cp(const bcn_cp_params& p, std::uint64_t seed = 0,
                    std::string_view name = "bcn_cp");

    /// A frame entered the queue, which now holds `queue_bytes`; `tagged_by_this_cp`: it
    /// carries a rate-regulator tag with this CP's id.
    bcn_feedback on_arrival(std::uint64_t queue_bytes, bool tagged_by_this_cp);

    /// The largest |Fb| quantisation keeps ((2w+1)·Q_eq in fb units).
    double fb_max() const { return m_fb_max; }
    const bcn_cp_params& params() const { return m_p; }

    struct counters {
        std::uint64_t frames = 0;
        std::uint64_t samples = 0;
        std::uint64_t negative = 0;
        std::uint64_t positive = 0;
        std::uint64_t positive_untagged = 0;  ///< Fb > 0 on a frame without this CP's tag
        std::uint64_t zero = 0;               ///< Fb = 0 (nothing to say)
        std::uint64_t stop = 0;
    };
    const counters& stats() const { return m_stats; }

private:
    bool sample();

    bcn_cp_params m_p;
    rng m_rng;
    double m_fb_max;
    std::uint32_t m_until_sample;
    std::uint64_t m_last_sample_queue = 0;
    counters m_stats;
};

}  // namespace fabricsim::sw
