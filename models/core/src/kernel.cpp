#include "fabricsim/core/kernel.h"

namespace fabricsim {

void init_kernel_time() {
    static bool done = false;
    if (done) return;
    sc_core::sc_set_time_resolution(1, sc_core::SC_PS);
    done = true;
}

kernel_counters& counters() {
    static kernel_counters c;
    return c;
}

}  // namespace fabricsim
