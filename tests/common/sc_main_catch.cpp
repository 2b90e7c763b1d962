// sc_main for SystemC testbenches: any SystemC warning or error fails the test.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdlib>
#include <systemc>

#include "fabricsim/core/kernel.h"

namespace {
void fail_on_report(const sc_core::sc_report& r, const sc_core::sc_actions& actions) {
    if (r.get_severity() >= sc_core::SC_WARNING) {
        std::string msg = std::string("SystemC report: ") + r.get_msg_type() + ": " + r.get_msg();
        throw std::runtime_error(msg);
    }
    sc_core::sc_report_handler::default_handler(r, actions);
}
}  // namespace

int sc_main(int argc, char* argv[]) {
    // Runs in tests check the model's invariants (invariants.h) whatever the build type.
    setenv("FABRICSIM_CHECK_INVARIANTS", "1", 0);
    fabricsim::init_kernel_time();
    sc_core::sc_report_handler::set_handler(fail_on_report);
    return Catch::Session().run(argc, argv);
}
