#include "fabricsim/switch/algo/credit_queue.h"

#include "fabricsim/switch/algo/egress_queues.h"

namespace fabricsim::sw {

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
