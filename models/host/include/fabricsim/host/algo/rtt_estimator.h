#pragma once
/// RFC 6298 retransmission-timeout estimator (plain C++, no SystemC).
/// Model note: integer picoseconds throughout; SRTT/RTTVAR use alpha = 1/8, beta = 1/4, K = 4
/// with truncating integer division (error <= 1 ps per sample). RTO = SRTT + max(G, 4*RTTVAR),
/// clamped to [min_rto, max_rto] (rule 2.4 min; 2.5 max), before any sample RTO = initial_rto
/// (rule 2.1). backoff() doubles the RTO (rule 5.5), capped at max_rto; a new sample ends the
/// backoff (the RTO is recomputed from SRTT, as rule 5.7's "after backoff, recompute"). Karn's
/// algorithm is the caller's job: feed only samples from segments that were never retransmitted
/// (or from timestamps), and keep the backed-off RTO until such a sample arrives. Timer
/// management (rules 5.1-5.4, 5.6) belongs to the connection. Seed-001 §1.9 quotes min RTO
/// 5-10 ms and seed-000 §1.3 10 ms / 300 ms for data-center stacks; the RFC's 1 s is the default.
#include <cstdint>

#include "fabricsim/core/units.h"

namespace fabricsim::host {

/// Parameters of rtt_estimator; validate() throws std::invalid_argument.
struct rtt_params {
    ps_t initial_rto = 1 * PS_PER_S;  ///< RFC 6298 rule 2.1
    ps_t min_rto = 1 * PS_PER_S;      ///< rule 2.4 (data-center stacks: 5-10 ms)
    ps_t max_rto = 60 * PS_PER_S;     ///< rule 2.5 (>= 60 s recommended)
    ps_t granularity = 0;             ///< clock granularity G
    void validate() const;
};

/// SRTT / RTTVAR / RTO of one connection, with exponential backoff.
class rtt_estimator
{
public:
    explicit rtt_estimator(const rtt_params& p = rtt_params{});

    /// A valid RTT measurement R (> 0; a zero sample is treated as 1 ps). Resets the backoff.
    void on_sample(ps_t r);
    /// The retransmission timer expired: double the RTO (capped at max_rto).
    void backoff();

    /// Current RTO including backoff.
    ps_t rto() const { return m_rto; }
    ps_t srtt() const { return m_srtt; }
    ps_t rttvar() const { return m_rttvar; }
    bool has_sample() const { return m_has_sample; }
    /// Number of backoffs since the last sample.
    unsigned backoffs() const { return m_backoffs; }
    const rtt_params& params() const { return m_p; }

private:
    ps_t clamp(ps_t rto) const;

    rtt_params m_p;
    ps_t m_srtt = 0;
    ps_t m_rttvar = 0;
    ps_t m_rto;
    bool m_has_sample = false;
    unsigned m_backoffs = 0;
};

}  // namespace fabricsim::host
