#include "fabricsim/switch/algo/credit_queue.h"

#include <cmath>

#include "fabricsim/switch/algo/egress_queues.h"

namespace fabricsim::sw {

credit_gate::credit_gate(unsigned queue, std::uint64_t rate_bps, std::uint64_t burst_bytes,
                         double jitter, std::uint64_t seed, std::string_view name)
    : m_bucket(rate_bps, burst_bytes), m_queue(queue), m_jitter(jitter) {
    m_bucket.consume(static_cast<std::uint32_t>(burst_bytes), 0);
    if (m_jitter == 0) return;
    m_draws.emplace(seed, name);
    m_next = 2.0 * m_draws->uniform() - 1.0;
}

std::uint32_t credit_gate::jittered(std::uint32_t wire_bytes) const {
    return static_cast<std::uint32_t>(std::lround(double(wire_bytes) * (1.0 + m_jitter * m_next)));
}

void credit_gate::on_start(unsigned q, std::uint32_t wire_bytes, ps_t at) {
    if (q != m_queue) return;
    m_bucket.consume(cost(wire_bytes), at);
    if (m_draws) m_next = 2.0 * m_draws->uniform() - 1.0;
}

enqueue_verdict credit_admission::on_enqueue(const egress_queues& port, unsigned q, frame& f,
                                             ps_t /*now*/) {
    if (m_selective != 0 && f.ecn == ecn_codepoint::NOT_ECT &&
        port.deciding_frames(q) > m_selective)
        return enqueue_verdict::DROP;
    // The queue counts frame bytes; ns2 counts the credit's wire size (preamble and IFG in).
    const std::uint64_t wire =
        port.queue_bytes(q) + port.deciding_frames(q) * (PREAMBLE_SFD + IFG_BYTES);
    return wire > m_buffer ? enqueue_verdict::DROP : enqueue_verdict::PASS;
}

}  // namespace fabricsim::sw
