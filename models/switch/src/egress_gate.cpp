#include "fabricsim/switch/algo/egress_gate.h"

#include <algorithm>
#include <stdexcept>

namespace fabricsim::sw {

shaper_gate::shaper_gate(const std::vector<token_bucket>& per_queue) {
    if (per_queue.size() > m_buckets.size())
        throw std::invalid_argument("shaper_gate: at most 8 queue shapers");
    std::copy(per_queue.begin(), per_queue.end(), m_buckets.begin());
}

bool shaper_gate::unlimited() const {
    return std::all_of(m_buckets.begin(), m_buckets.end(),
                       [](const token_bucket& b) { return b.unlimited(); });
}

}  // namespace fabricsim::sw
