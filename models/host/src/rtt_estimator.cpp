#include "fabricsim/host/algo/rtt_estimator.h"

#include <algorithm>
#include <stdexcept>

namespace fabricsim::host {

void rtt_params::validate() const {
    if (initial_rto == 0) throw std::invalid_argument("rtt_params: initial_rto must be > 0");
    if (min_rto > max_rto) throw std::invalid_argument("rtt_params: min_rto > max_rto");
    if (max_rto == 0) throw std::invalid_argument("rtt_params: max_rto must be > 0");
}

rtt_estimator::rtt_estimator(const rtt_params& p) : m_p(p), m_rto(0) {
    m_p.validate();
    m_rto = std::min(m_p.initial_rto, m_p.max_rto);
}

ps_t rtt_estimator::clamp(ps_t rto) const {
    return std::clamp(rto, m_p.min_rto, m_p.max_rto);
}

void rtt_estimator::on_sample(ps_t r) {
    r = std::max<ps_t>(r, 1);
    if (!m_has_sample) {
        m_srtt = r;  // rule 2.2
        m_rttvar = r / 2;
        m_has_sample = true;
    } else {  // rule 2.3: RTTVAR first, with the old SRTT
        const ps_t err = m_srtt > r ? m_srtt - r : r - m_srtt;
        m_rttvar = (3 * m_rttvar + err) / 4;
        m_srtt = (7 * m_srtt + r) / 8;
    }
    m_backoffs = 0;
    m_rto = clamp(m_srtt + std::max(m_p.granularity, 4 * m_rttvar));
}

void rtt_estimator::backoff() {
    ++m_backoffs;
    m_rto = m_rto > m_p.max_rto / 2 ? m_p.max_rto : 2 * m_rto;
}

}  // namespace fabricsim::host
