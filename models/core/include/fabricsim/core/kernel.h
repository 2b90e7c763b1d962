#pragma once
/// The one place where model time (integer ps) meets SystemC time, plus the count of kernel
/// activations that the benchmark reports (every SC_METHOD of the models bumps it once).
#include <cstdint>
#include <systemc>

#include "fabricsim/core/units.h"

namespace fabricsim {

/// Must run before any sc_time is created: fixes the resolution at 1 ps.
void init_kernel_time();

inline sc_core::sc_time to_sc_time(ps_t t) { return sc_core::sc_time::from_value(t); }
inline ps_t to_ps(const sc_core::sc_time& t) { return t.value(); }
inline ps_t now_ps() { return sc_core::sc_time_stamp().value(); }

/// Process activations of model SC_METHODs (a proxy for kernel events).
struct kernel_counters {
    std::uint64_t activations = 0;
};
kernel_counters& counters();
inline void count_activation() { ++counters().activations; }

}  // namespace fabricsim
