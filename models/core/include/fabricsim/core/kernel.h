#pragma once
/// The one place where model time (integer ps) meets SystemC time, plus the count of kernel
/// activations that the benchmark reports (every model timer firing bumps it once).
#include <cstdint>
#include <systemc>

#include "fabricsim/core/units.h"

namespace fabricsim {

/// Must run before any sc_time is created: fixes the resolution at 1 ps and creates the
/// model scheduler (scheduler.h) at top level.
void init_kernel_time();

/// from_value is out of line in libsystemc; zero (a frame starting now) needs no call.
inline sc_core::sc_time to_sc_time(ps_t t) {
    return t ? sc_core::sc_time::from_value(t) : sc_core::sc_time();
}
inline ps_t to_ps(const sc_core::sc_time& t) {
    return t.value();
}
namespace detail {
extern bool g_model_time_ahead;  ///< set while the scheduler runs timers ahead of the kernel
extern ps_t g_model_now;
}  // namespace detail
/// Model time. Equals sc_time_stamp() except while the scheduler runs timers ahead of the
/// kernel (scheduler.h); model code must read time only through this.
inline ps_t now_ps() {
    return detail::g_model_time_ahead ? detail::g_model_now : sc_core::sc_time_stamp().value();
}

/// Model timer firings (what one kernel event per frame-hop means once the scheduler batches).
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
