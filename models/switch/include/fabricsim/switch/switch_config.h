#pragma once
/// Parameters of one switch chip (the `switch:` section of a scenario).
#include <cstdint>
#include <string>

#include "fabricsim/core/config.h"
#include "fabricsim/core/units.h"

namespace fabricsim::sw {

enum class forwarding_mode { STORE_AND_FORWARD, CUT_THROUGH };

struct switch_config {
    double core_clock_hz = 1e9;
    ps_t pipeline_latency = 300 * PS_PER_NS;  ///< ingress pipeline + MMU + egress pipeline
    forwarding_mode mode = forwarding_mode::STORE_AND_FORWARD;
    std::uint32_t cut_through_bytes = 64;     ///< header bytes needed before forwarding
    std::uint64_t buffer_bytes = 4ull << 20;  ///< shared buffer
    size_spec port_cap{600 * 1000, false};    ///< max bytes (or frames) queued per egress port
    std::uint32_t ports = 0;                  ///< set by the platform

    ps_t clock_period() const;
    /// Absolute time when a frame that arrived at `now` leaves the pipeline (clock-aligned).
    ps_t pipeline_exit(ps_t now) const { return ceil_to_period(now + pipeline_latency, clock_period()); }

    static void describe(config_schema& s, const std::string& prefix);
    static switch_config load(const config_node& n);
};

}  // namespace fabricsim::sw
