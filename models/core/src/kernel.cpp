#include "fabricsim/core/kernel.h"

#include "fabricsim/core/scheduler.h"

namespace fabricsim {

namespace detail {
bool g_model_time_ahead = false;
ps_t g_model_now = 0;
kernel_counters g_counters;
}  // namespace detail

void init_kernel_time() {
    static bool done = false;
    if (done) return;
    sc_core::sc_set_time_resolution(1, sc_core::SC_PS);
    done = true;
    scheduler::instance();  // at top level, before any model module
}

}  // namespace fabricsim
