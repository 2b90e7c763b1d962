#include "fabricsim/platforms/idle_path.h"

#include <algorithm>

namespace fabricsim::platforms {

ps_t idle_path::arrival(ps_t start, const frame& segment, const frame& last, std::uint64_t frames,
                        clock_rounding rounding) const {
    auto pipeline_exit = [rounding](const sw::switch_config& s, ps_t t) {
        return rounding == clock_rounding::ON ? s.pipeline_exit(t) : t + s.pipeline_latency;
    };
    // first / tail: when the first / last frame starts on the current hop. The frames between
    // follow the first at the slowest slot so far, so the last one starts once it has arrived
    // and the one before it has left.
    ps_t first = start + nic_tx_latency, tail = first, slowest = 0;
    for (const hop& h : hops) {
        const ps_t slot = h.link->wire_time(segment);
        slowest = std::max(slowest, slot);
        if (frames > 1) tail = std::max(tail, first + (frames - 2) * slowest + slot);
        if (!h.next_switch) return tail + h.link->last_bit_delay(last) + nic_rx_latency;
        first = pipeline_exit(*h.next_switch, first + h.link->last_bit_delay(segment));
        tail = pipeline_exit(*h.next_switch, tail + h.link->last_bit_delay(last));
    }
    return tail + nic_rx_latency;  // no hops
}

}  // namespace fabricsim::platforms
