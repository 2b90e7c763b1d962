#include <algorithm>
#include <limits>

#include "fabricsim/switch/algo/egress_policy.h"
#include "fabricsim/switch/algo/egress_queues.h"

namespace fabricsim::sw {

namespace {
/// A frame a threshold says to mark: ECT frames are marked, the others dropped or passed.
enqueue_verdict mark_or_drop(const frame& f, bool drop_non_ect) {
    if (f.ecn != ecn_codepoint::NOT_ECT) return enqueue_verdict::MARK;
    return drop_non_ect ? enqueue_verdict::DROP : enqueue_verdict::PASS;
}

std::uint8_t side_mask(std::uint8_t queues, bool this_side) {
    return this_side ? queues : 0;
}
}  // namespace

threshold_scales::threshold_scales(queue_threshold mode, const std::vector<std::uint32_t>& quanta,
                                   const std::vector<bool>& strict, const mq_ecn_estimator* mq)
    : m_mode(mode), m_mq(mq) {
    const std::vector<double> min_scale = min_threshold_scales(quanta, strict);
    for (std::size_t q = 0; q < quanta.size() && q < m_min_scale.size(); ++q) {
        m_min_scale[q] = min_scale[q];
        if (strict[q]) m_strict = static_cast<std::uint8_t>(m_strict | 1u << q);
    }
}

namespace {
unsigned lowest(std::uint8_t queues) {
    return queues ? static_cast<unsigned>(__builtin_ctz(queues)) : 0;
}
}  // namespace

red_marking::red_marking(std::uint8_t queues, const std::array<red_params, 8>& red, ecn_scope scope,
                         bool frames, const ecn_action_params& action,
                         const threshold_scales& scales, std::uint64_t seed,
                         const std::string& rng_name)
    : egress_policy(side_mask(queues, !action.at_dequeue), side_mask(queues, action.at_dequeue)),
      m_red(red),
      m_scope(scope),
      m_frames(frames),
      m_drop_non_ect(action.drop_non_ect),
      m_scales(scales),
      m_port_avg(red[lowest(queues)].weight),
      m_rng(seed, rng_name) {
    for (unsigned q = 0; q < m_queue_avg.size(); ++q) m_queue_avg[q] = red_average(red[q].weight);
}

enqueue_verdict red_marking::decide(const egress_queues& port, unsigned q, const frame& f) {
    double occupancy = 0;
    red_average* avg = &m_port_avg;
    switch (m_scope) {
        case ecn_scope::QUEUE:
            occupancy = m_frames ? double(port.deciding_frames(q)) : double(port.queue_bytes(q));
            avg = &m_queue_avg[q];
            break;
        case ecn_scope::PORT:
            occupancy = m_frames ? double(port.queued_frames()) : double(port.port_bytes());
            break;
        case ecn_scope::POOL: {
            const unsigned pool = port.pool_of(q);
            occupancy = m_frames ? double(port.pool_frames(pool)) : double(port.pool_bytes(pool));
            break;
        }
    }
    const double p = red_probability(m_red[q], avg->update(occupancy), m_scales.scale(q));
    if (p <= 0 || (p < 1 && m_rng.uniform() >= p)) return enqueue_verdict::PASS;
    return mark_or_drop(f, m_drop_non_ect);
}

enqueue_verdict red_marking::on_enqueue(const egress_queues& port, unsigned q, frame& f, ps_t) {
    return decide(port, q, f);
}

bool red_marking::on_dequeue(const egress_queues& port, unsigned q, frame& f, std::uint32_t, ps_t) {
    return decide(port, q, f) == enqueue_verdict::MARK;
}

step_marking::step_marking(std::uint8_t queues, const std::array<double, 8>& k, bool frames,
                           const ecn_action_params& action, const threshold_scales& scales,
                           mq_ecn_estimator* mq)
    : egress_policy(side_mask(queues, !action.at_dequeue), side_mask(queues, action.at_dequeue)),
      m_scales(scales),
      m_mq(mq),
      m_min_param(std::numeric_limits<double>::infinity()),
      m_frames(frames),
      m_drop_non_ect(action.drop_non_ect) {
    for (unsigned q = 0; q < m_param.size(); ++q) {
        if (mq && q < mq->queues())
            m_param[q] =
                scales.strict(q) ? std::numeric_limits<double>::infinity() : mq->quantum_time_ps(q);
        else
            m_param[q] = k[q] * scales.scale(q);
        if (queues >> q & 1) m_min_param = std::min(m_min_param, m_param[q]);
    }
    // The shortest quantum has the smallest MQ-ECN threshold at any T_round.
    if (mq) mq->set_threshold(k[lowest(queues)], m_min_param);
}

pass_bound step_marking::bound() const {
    return {m_mq ? m_mq->min_threshold() : m_min_param, m_frames, m_mq != nullptr};
}

enqueue_verdict step_marking::decide(const egress_queues& port, unsigned q, const frame& f) const {
    // The instantaneous occupancy, the arrival included, against K x the queue's scale: no
    // state and no draw.
    const double occupancy =
        m_frames ? double(port.deciding_frames(q)) : double(port.queue_bytes(q));
    if (occupancy <= threshold(q)) return enqueue_verdict::PASS;
    return mark_or_drop(f, m_drop_non_ect);
}

enqueue_verdict step_marking::on_enqueue(const egress_queues& port, unsigned q, frame& f, ps_t) {
    return decide(port, q, f);
}

bool step_marking::on_dequeue(const egress_queues& port, unsigned q, frame& f, std::uint32_t,
                              ps_t) {
    return decide(port, q, f) == enqueue_verdict::MARK;
}

}  // namespace fabricsim::sw
