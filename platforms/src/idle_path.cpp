#include "fabricsim/platforms/idle_path.h"

#include <algorithm>

namespace fabricsim::platforms {

ps_t idle_path::arrival(ps_t start, const frame& segment, const frame& last, std::uint64_t frames,
                        clock_rounding rounding) const {
    ps_t slot = 0;
    for (const hop& h : hops) slot = std::max(slot, h.link->wire_time(segment));
    const std::uint64_t before_last = frames > 0 ? frames - 1 : 0;
    ps_t t = start + nic_tx_latency + before_last * slot;  // the last frame's first bit
    for (const hop& h : hops) {
        t += h.link->last_bit_delay(last);
        if (!h.next_switch) continue;
        t = rounding == clock_rounding::ON ? h.next_switch->pipeline_exit(t)
                                           : t + h.next_switch->pipeline_latency;
    }
    return t + nic_rx_latency;
}

}  // namespace fabricsim::platforms
