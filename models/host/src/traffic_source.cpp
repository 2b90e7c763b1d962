#include "fabricsim/host/traffic_source.h"

#include <cmath>

#include "fabricsim/core/frame.h"

namespace fabricsim::host {

std::uint32_t flow_spec::wire_bytes() const {
    const std::uint32_t tag = pcp != 0 ? VLAN_TAG : 0;  // a non-zero PCP adds an 802.1Q tag
    const std::uint32_t frame =
        std::max<std::uint32_t>(ETH_HEADER + tag + packet_bytes + FCS_BYTES, MIN_FRAME_WITH_FCS);
    return frame + PREAMBLE_SFD + IFG_BYTES;
}

traffic_source::traffic_source(const flow_spec& spec, std::uint64_t seed, const std::string& name)
    : m_spec(spec), m_rng(seed, name) {
    m_interval_ps = double(spec.wire_bytes()) * 8.0 * double(PS_PER_S) / double(spec.rate_bps);
    // Bernoulli: slots at twice the mean rate, each kept with probability 1/2.
    if (spec.process == arrival_process::BERNOULLI) m_interval_ps /= 2;
    ps_t first = spec.start;
    if (spec.process == arrival_process::BERNOULLI)
        while (!m_rng.bernoulli(0.5) && first < spec.stop) first = cbr_step(first);
    if (spec.process == arrival_process::ON_OFF) m_on_end = first + period_length(spec.on_mean);
    if (spec.process == arrival_process::POISSON)
        first += static_cast<ps_t>(std::llround(m_rng.exponential(m_interval_ps)));
    schedule(first);
}

ps_t traffic_source::period_length(ps_t mean) {
    const double m = double(mean);
    const double v = m_spec.periods == period_distribution::PARETO
                         ? m_rng.pareto(m_spec.pareto_shape, m)
                         : m_rng.exponential(m);
    return std::max<ps_t>(1, static_cast<ps_t>(std::llround(std::min(v, 1e18))));
}

void traffic_source::schedule(ps_t t) {
    if (t >= m_spec.stop || (m_spec.max_frames && m_emitted >= m_spec.max_frames)) {
        m_next = ~ps_t(0);
        return;
    }
    m_next = t;
}

ps_t traffic_source::cbr_step(ps_t t) {
    const double step = m_interval_ps + m_carry;
    const ps_t whole = static_cast<ps_t>(step);
    m_carry = step - double(whole);
    return t + whole;
}

void traffic_source::advance() {
    ++m_emitted;
    const ps_t cur = m_next;
    switch (m_spec.process) {
        case arrival_process::CBR:
            schedule(cbr_step(cur));
            break;
        case arrival_process::BERNOULLI: {
            ps_t t = cbr_step(cur);
            while (!m_rng.bernoulli(0.5) && t < m_spec.stop) t = cbr_step(t);
            schedule(t);
            break;
        }
        case arrival_process::BACKLOGGED:
            schedule(cur);  // (the transport calls sent_at instead)
            break;
        case arrival_process::POISSON:
            schedule(cur + std::max<ps_t>(1, static_cast<ps_t>(
                                                 std::llround(m_rng.exponential(m_interval_ps)))));
            break;
        case arrival_process::ON_OFF: {
            ps_t t = cbr_step(cur);
            while (t >= m_on_end) {
                // Off period, then a new on period starting a fresh frame train.
                const ps_t on_start = m_on_end + period_length(m_spec.off_mean);
                m_on_end = on_start + period_length(m_spec.on_mean);
                t = on_start;
                m_carry = 0;
                if (t >= m_spec.stop) break;
            }
            schedule(t);
            break;
        }
    }
}

}  // namespace fabricsim::host
