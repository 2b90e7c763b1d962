#pragma once
/// Analytic time of frames crossing an idle network path: the ideal FCT behind the slowdown, and
/// the TCP handshake's RTT seed.
/// Timing model: the devices' own helpers. The source NIC adds its tx_latency; each link adds
/// link_timing::last_bit_delay (preamble and frame serialised, propagation, encoding and FEC
/// latency; the receiver acts on the last bit); each switch leaves its pipeline at
/// switch_config::pipeline_exit (pipeline latency rounded up to its core clock, at the absolute
/// time); the destination NIC adds its rx_latency. A train of frames is posted at once: each
/// hop sends them back to back as soon as they are there (FIFO, whole wire slots,
/// link_timing::wire_time), so the last frame starts on a hop when it has arrived and the one
/// before it has left; the frames before the last follow the first one at the slowest slot so
/// far (exact without clock rounding; with it, the middle frames' waits for clock edges are left
/// out, less than one period per switch). Ignores: cut-through, TCP windows and ACK clocking, the
/// pipelines' packet rate.
#include <cstdint>
#include <vector>

#include "fabricsim/core/frame.h"
#include "fabricsim/core/units.h"
#include "fabricsim/phy/link_timing.h"
#include "fabricsim/switch/switch_config.h"

namespace fabricsim::platforms {

/// The links and switches from one host to another, in order.
struct idle_path {
    struct hop {
        const phy::link_timing* link = nullptr;          ///< direction out of the previous device
        const sw::switch_config* next_switch = nullptr;  ///< switch it leads to; null: last hop
    };
    ps_t nic_tx_latency = 0;
    ps_t nic_rx_latency = 0;
    std::vector<hop> hops;

    /// Whether switches round their pipeline exit to the core clock, as the model does.
    enum class clock_rounding { ON, OFF };

    /// Absolute time at which the last of `frames` frames, posted by the source host at `start`,
    /// reaches the destination host: every frame like `segment`, the last one like `last`.
    ps_t arrival(ps_t start, const frame& segment, const frame& last, std::uint64_t frames,
                 clock_rounding rounding = clock_rounding::ON) const;
};

}  // namespace fabricsim::platforms
