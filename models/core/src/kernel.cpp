#include "fabricsim/core/kernel.h"

#include <stdexcept>
#include <string>

#include "fabricsim/core/scheduler.h"

namespace fabricsim {

namespace detail {
bool g_model_time_ahead = false;
ps_t g_model_now = 0;
kernel_counters g_counters;
}  // namespace detail

void require_ps_time_resolution() {
    // 1 ps is 1 in the resolution's units only at a 1 ps resolution. Building this sc_time
    // fixes SystemC's default (1 ps) if nothing chose one; unlike sc_set_time_resolution, it
    // does not fail when the platform has already built sc_time objects.
    if (sc_core::sc_time(1.0, sc_core::SC_PS).value() == 1) return;
    const std::string msg =
        "FabricSim needs a SystemC time resolution of 1 ps (its model time is integer "
        "picoseconds); this simulation's is " +
        sc_core::sc_get_time_resolution().to_string() +
        ". Leave SystemC's default or call sc_set_time_resolution(1, SC_PS) before any sc_time "
        "is built";
    SC_REPORT_ERROR("fabricsim/time_resolution", msg.c_str());
    throw std::runtime_error(msg);  // the platform's report handler did not throw
}

void init_kernel_time() {
    require_ps_time_resolution();
    scheduler::instance();  // at top level, before any model module
}

}  // namespace fabricsim
