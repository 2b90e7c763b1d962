#pragma once
/// BCN reaction point (seed-003 §1.10 eq. 8; facts-l2 §5.2): the AIMD rate of one flow's rate
/// regulator at the source, as plain C++ (no SystemC).
///
/// Timing model: untimed; one update per BCN message, in arrival order (the thesis's t_n).
///   Fb > 0: r <- r + G_i·Fb·R_u                   (additive increase, capped at the line rate)
///   Fb < 0: r <- r·max(1 − G_d·|Fb|, min_decrease_factor), not below min_rate
///   STOP (BCN(0,0)): r <- min_rate; the random silence before the restart is the caller's.
/// Fb is in the CP's units (bcn_cp: packets by default). The regulator is installed by the
/// first negative message (before it the flow sends at line rate and positive messages are
/// ignored) and records that CP's id, which its frames then carry as the rate-regulator tag;
/// a later negative message from another CP takes the tag over (the most recent congestion
/// dominates: the thesis only says one CP's messages dominate, facts-l2 §5.1); positive
/// messages from any other CP are ignored (a CP sends them only to frames with its tag, so they
/// are stale). The regulator is removed
/// when the rate is back at the line rate ([EXT] facts-l2 §5.2). Rates are double bit/s.
#include <cstdint>
#include <optional>

#include "fabricsim/core/param_error.h"

namespace fabricsim::nic {

/// Parameters of one reaction point. Rates in bit/s.
struct bcn_rp_params {
    std::uint64_t line_rate_bps = 0;
    double g_i = 0.53;     ///< G_i (LLDPAD rp_gi; the thesis gives none)
    double g_d = 2.6e-4;   ///< G_d (thesis, "well-tuned"; LLDPAD rp_gd)
    double r_u_bps = 1e6;  ///< R_u (LLDPAD rp_ru = 1; unit unknown, read as 1 Mb/s)
    std::uint64_t min_rate_bps = 100'000'000;  ///< LLDPAD rp_rmin = 100 read as Mb/s (guess)
    /// A decrease keeps at least this share of r (1 − G_d·|Fb| < 0 would reverse the rate;
    /// none given, at |Fb| <= 1923 packets it does not bind with G_d = 2.6e-4).
    double min_decrease_factor = 0.5;
    /// The rate before any message; 0 = the line rate (the regulator is still installed only by
    /// the first negative message). §2 E's flow joins at 1.1 Gb/s.
    std::uint64_t initial_rate_bps = 0;

    /// G_i 0.53, G_d 2.6e-4, R_u 1 Mb/s, min rate 100 Mb/s: fixed point G_i·R_u/G_d = 2.04 Gb/s.
    static bcn_rp_params thesis_default(std::uint64_t line_rate_bps);

    using error = param_error;
    /// The first field that is out of range, or nothing if the set is usable.
    std::optional<error> validate() const;
};

/// Reaction point of one flow. No allocation after construction.
class bcn_rp
{
public:
    /// Throws std::invalid_argument ("bcn_rp_params.<field>: <reason>") if p does not validate.
    explicit bcn_rp(const bcn_rp_params& p);

    /// A BCN message with feedback `fb` (≠ 0) from congestion point `cpid`. Returns the rate.
    double on_feedback(double fb, std::uint32_t cpid);
    /// A STOP message (BCN(0,0)) from `cpid`: the regulator restarts at the minimum rate.
    double on_stop(std::uint32_t cpid);

    double rate_bps() const { return m_rate; }
    /// The regulator is installed (the flow is rate-limited and its frames carry the tag).
    bool active() const { return m_active; }
    std::uint32_t tag_cpid() const { return m_cpid; }  ///< valid while active()
    const bcn_rp_params& params() const { return m_p; }

    struct counters {
        std::uint64_t increases = 0;
        std::uint64_t decreases = 0;
        std::uint64_t stops = 0;
        std::uint64_t ignored = 0;  ///< positive while not installed, or fb = 0
        std::uint64_t installs = 0;
        std::uint64_t releases = 0;  ///< back at line rate
    };
    const counters& stats() const { return m_stats; }

private:
    void install(std::uint32_t cpid);

    bcn_rp_params m_p;
    double m_line;
    double m_rate;
    bool m_active = false;
    std::uint32_t m_cpid = 0;
    counters m_stats;
};

}  // namespace fabricsim::nic
