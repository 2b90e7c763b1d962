#pragma once
/// IEEE 802.1Qau QCN congestion point (CP) of one egress queue as plain C++ (no SystemC), per
/// facts-l2 §3.2-3.4 and seed-000 §1.8. The SystemC adapter (an egress_policy) owns one per
/// CNPV queue and turns a returned qcn_feedback into a CNM to the sampled frame's source.
///
/// Timing model: untimed. The caller calls on_enqueue() once per arriving frame, after
/// admission, with the queue length in bytes that already counts the arriving frame (as the
/// ECN step marking does). Sampling is by bytes (the standard's table) or, thesis mode, by a
/// fixed per-frame probability; the caller supplies one uniform 64-bit draw per call so that
/// it owns the RNG (std::mt19937_64 per module, STYLE rule 20). Nothing is timed here: the
/// CNM's build and wire time belong to the adapter. No allocation after construction.
///
/// Decisions where the sources are silent or disagree:
///  - Sign: the standard's, Fb = -(Qoff + w Qdelta) with Qoff = Q - Qeq, Qdelta = Q - Qold;
///    Fb < 0 is congestion (the thesis uses the opposite sign). Fb >= 0 quantises to 0.
///  - Sample counter: decremented by each frame's bytes; it expires when it reaches 0 (the
///    frame that completes the interval is sampled). The reload replaces the counter: bytes
///    past 0 are dropped (LXQCN, NS3RDMA's byte counter).
///  - Table (LXQCN qcn_mark_table, KiB with base 150 KiB): entry k = base/(k+1) for k = 0..5,
///    base x 21.5/150 and base x 18.5/150 for k = 6, 7 (the two rounded LXQCN entries keep their
///    ratio to the base), floored to whole bytes. MIB base 150 000: 150000, 75000, 50000, 37500,
///    30000, 25000, 21500, 18500.
///  - Jitter: each reload is scaled by 1 + j(2u - 1), u = draw / 2^64, rounded to whole bytes;
///    standard() uses j = 0.15, the [0.85, 1.15] of the QCN pseudo-code (facts-l2 §3.3 [EXT];
///    Broadcom Petra's [0.75, 1.25] is j = 0.25; 0 = LXQCN's none). The first interval, set at
///    construction, is the table's first entry jittered by `first_draw`.
///  - Qold starts at 0 (an empty queue) and is set to Q at every sample, CNM or not.
///  - CNM's cnmQOffset / cnmQDelta: 64-octet units, truncated toward zero, saturated to int16
///    (the unit is unverified; bytes would saturate at 32 KB, below the default Qeq).
#include <array>
#include <cstdint>
#include <optional>

#include "fabricsim/core/param_error.h"

namespace fabricsim::sw {

struct qcn_cp_params {
    std::uint64_t q_eq_bytes = 26'000;  ///< cpQueueSizeSetPoint (MIB range >= 100)
    /// cpFeedbackWeight. The MIB holds log2(w) in -10..10 (default 1, w = 2); here w itself,
    /// in [2^-10, 2^10] (from_mib_weight() converts).
    double w = 2.0;
    std::uint64_t sample_base_bytes = 150'000;  ///< cpMinSampleBase (MIB >= 10 000)
    double jitter = 0.15;  ///< reload x U[1 - jitter, 1 + jitter), [0, 1); 0 = exact table
    /// > 0: thesis sampling, each frame with this probability (the byte table and jitter are
    /// unused); 0: the standard's byte table.
    double sample_probability = 0.0;
    /// 0: standard quantisation qFb = floor(63 |Fb| / Fbmax), |Fb| clipped to Fbmax =
    /// (2w + 1) Qeq. > 0: thesis, Fb counted in units of this many bytes (packets):
    /// qFb = min(63, floor(|Fb| / quantum)), i.e. Fbmax = 64 quanta with Gd Fbmax = 1/2.
    std::uint32_t quantum_bytes = 0;

    /// 802.1Qau MIB defaults (facts-l2 §3.2) with the ±15 % jitter.
    static qcn_cp_params standard();
    /// Alizadeh Fig 5.6: Qeq = q_eq_packets x packet_bytes, w 2, p_s (1 %), Fb in packets.
    static qcn_cp_params thesis(std::uint32_t q_eq_packets = 22, std::uint32_t packet_bytes = 1500,
                                double sample_probability = 0.01);
    /// w from the MIB's log2 form (cpFeedbackWeight = 1 -> 2).
    static double from_mib_weight(int log2_w);

    using error = param_error;
    /// The first field that is out of range, or nothing if the set is usable.
    std::optional<error> validate() const;
};

/// What a sample with congestion reports: the CNM's content.
struct qcn_feedback {
    unsigned qfb = 0;             ///< quantised |Fb|, 1..63
    double fb = 0;                ///< Fb in bytes, standard sign (< 0), before clipping
    std::int64_t qoff = 0;        ///< Q - Qeq, bytes
    std::int64_t qdelta = 0;      ///< Q - Qold, bytes
    std::int16_t cnm_qoff = 0;    ///< cnmQOffset field: qoff in 64-octet units, saturated
    std::int16_t cnm_qdelta = 0;  ///< cnmQDelta field: qdelta in 64-octet units, saturated
};

/// Congestion point of one queue.
class qcn_cp
{
public:
    static constexpr unsigned QFB_LEVELS = 64;
    static constexpr std::uint64_t HALF_DRAW = std::uint64_t(1) << 63;  ///< u = 1/2: no jitter

    /// Throws std::invalid_argument ("qcn_cp_params.<field>: <reason>") if p does not validate.
    explicit qcn_cp(const qcn_cp_params& p, std::uint64_t first_draw = HALF_DRAW);

    /// A frame of `frame_bytes` entered the queue, which now holds `queue_bytes` (the frame
    /// counted). `draw`: a uniform 64-bit random number (probability or jitter). Returns the
    /// CNM's content when the frame is sampled and Fb < 0 with qFb > 0.
    std::optional<qcn_feedback> on_enqueue(std::uint64_t queue_bytes, std::uint32_t frame_bytes,
                                           std::uint64_t draw);

    /// Bytes still to arrive before the next sample (byte-table mode).
    std::uint64_t bytes_to_sample() const { return m_to_sample; }
    std::uint64_t q_old() const { return m_q_old; }
    /// Byte-table entry k (= qFb >> 3), before jitter.
    std::uint64_t table_bytes(unsigned k) const { return m_table[k]; }
    /// Quantisation of an Fb (standard sign): 0 for Fb >= 0, else 0..63.
    unsigned quantize(double fb) const;
    const qcn_cp_params& params() const { return m_p; }

    struct counters {
        std::uint64_t frames = 0;
        std::uint64_t samples = 0;
        std::uint64_t cnms = 0;
        std::uint64_t uncongested = 0;                ///< samples with Fb >= 0
        std::uint64_t below_quantum = 0;              ///< samples with Fb < 0 but qFb = 0 (no CNM)
        std::array<std::uint64_t, QFB_LEVELS> qfb{};  ///< samples by qFb (Fb >= 0 in 0)
    };
    const counters& stats() const { return m_stats; }

private:
    std::uint64_t jittered(std::uint64_t bytes, std::uint64_t draw) const;

    qcn_cp_params m_p;
    std::array<std::uint64_t, 8> m_table{};
    double m_fb_max;  ///< standard quantisation's clip, bytes
    std::uint64_t m_to_sample = 0;
    std::uint64_t m_q_old = 0;
    counters m_stats;
};

}  // namespace fabricsim::sw
