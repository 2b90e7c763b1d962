// The SystemC time resolution a virtual platform chose: the models need 1 ps (SystemC's default)
// and refuse another at elaboration, naming it; a platform that built sc_time objects before the
// models (which fixes the default) works. Its own sc_main, unlike the other tests': the
// resolution is set once per process, and each TEST_CASE is a process of its own (ctest).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

#include <systemc>

#include "fabricsim/nic/nic_device.h"
#include "fabricsim/phy/link.h"
#include "tb.h"

using namespace fabricsim;
using Catch::Matchers::Contains;

TEST_CASE("time resolution: a platform at 1 ns is refused when the first block is built",
          "[core][time_resolution]") {
    sc_core::sc_set_time_resolution(1, sc_core::SC_NS);
    CHECK_THROWS_WITH(nic::nic_device("nic", nic::nic_config{}, 10'000'000'000ull),
                      Contains("FabricSim needs a SystemC time resolution of 1 ps") &&
                          Contains("this simulation's is 1 ns"));
}

TEST_CASE("time resolution: 1 fs is refused by init_kernel_time", "[core][time_resolution]") {
    sc_core::sc_set_time_resolution(1, sc_core::SC_FS);
    CHECK_THROWS_WITH(init_kernel_time(), Contains("this simulation's is 1 fs"));
}

TEST_CASE("time resolution: sc_time objects built before the models (1 ps default) are fine",
          "[core][time_resolution]") {
    const sc_core::sc_time clock_period(10, sc_core::SC_NS);  // fixes the default resolution
    init_kernel_time();  // once set it again, and failed (E514)
    phy::link_config c;
    c.propagation = PS_PER_US;
    test::tb_source src("src");
    test::tb_sink sink("sink");
    phy::link l("l", c, 1);
    src.tx.socket.bind(l.ab.in);
    l.ab.out.bind(sink.rx.socket);
    src.items.push_back({0, &test::make_frame(1500)});
    sc_core::sc_start(clock_period * 1000);
    REQUIRE(sink.got.size() == 1);
    CHECK(sink.got[0].at == 1'220'800u + 1'000'000u);  // 1518 B at 10G, then 1 us of cable
}

namespace {
/// As sc_main_catch.cpp's: any SystemC warning or error fails the test (or is the expected throw).
void fail_on_report(const sc_core::sc_report& r, const sc_core::sc_actions& actions) {
    if (r.get_severity() >= sc_core::SC_WARNING)
        throw std::runtime_error(std::string("SystemC report: ") + r.get_msg_type() + ": " +
                                 r.get_msg());
    sc_core::sc_report_handler::default_handler(r, actions);
}
}  // namespace

int sc_main(int argc, char* argv[]) {
    // Unlike sc_main_catch.cpp, no init_kernel_time() here: each case chooses the resolution.
    sc_core::sc_report_handler::set_handler(fail_on_report);
    return Catch::Session().run(argc, argv);
}
