#pragma once
/// The one place where model time (integer ps) meets SystemC time, plus the count of kernel
/// activations that the benchmark reports (every model timer firing bumps it once).
#include <cstdint>
#include <systemc>

#include "fabricsim/core/units.h"

namespace fabricsim {

/// Call at the start of sc_main, before building any block: checks the time resolution
/// (require_ps_time_resolution) and creates the default model scheduler (scheduler.h) at top
/// level. Optional in a virtual platform (the first block does both), but then the scheduler
/// is that block's child.
void init_kernel_time();

/// Model time is integer picoseconds and to_sc_time()/now_ps() convert 1:1 with sc_time's raw
/// value, so the models need SystemC's time resolution to be 1 ps (its default). Fixes it at
/// 1 ps if nothing has chosen it yet; refuses another one with SC_REPORT_ERROR (then throws
/// std::runtime_error if the report handler did not) naming what is needed.
void require_ps_time_resolution();

/// from_value is out of line in libsystemc; zero (a frame starting now) needs no call.
inline sc_core::sc_time to_sc_time(ps_t t) {
    return t ? sc_core::sc_time::from_value(t) : sc_core::sc_time();
}
inline ps_t to_ps(const sc_core::sc_time& t) {
    return t.value();
}
namespace detail {
// Process-wide on purpose: SystemC runs one process at a time, and these describe the scheduler
// running now (any platform's); outside a scheduler's run, now_ps() is the kernel's time.
extern bool g_model_time_ahead;  ///< set while a scheduler runs timers ahead of the kernel
extern ps_t g_model_now;
}  // namespace detail
/// Model time. Equals sc_time_stamp() except while the scheduler runs timers ahead of the
/// kernel (scheduler.h); model code must read time only through this.
inline ps_t now_ps() {
    return detail::g_model_time_ahead ? detail::g_model_now : sc_core::sc_time_stamp().value();
}

/// Model timer firings (what one kernel event per frame-hop means once the scheduler batches),
/// over every scheduler of the process; a platform reports its own (scheduler::activations).
struct kernel_counters {
    std::uint64_t activations = 0;
};
namespace detail {
extern kernel_counters g_counters;
}  // namespace detail
inline kernel_counters& counters() {
    return detail::g_counters;
}
inline void count_activation() {
    ++detail::g_counters.activations;
}

}  // namespace fabricsim
