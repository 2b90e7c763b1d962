#include <catch2/catch.hpp>

#include "fabricsim/platforms/scenario.h"
#include "scenario_error.h"

using namespace fabricsim;
using namespace fabricsim::platforms;

TEST_CASE("an explicit scenario name must be one safe path component", "[scenario]") {
    const std::string why = " (the name is the results folder's name: one path component)";
    CHECK(scenario_error_of("name: ../../x") == "name: '../../x' starts with '.'" + why);
    CHECK(scenario_error_of("name: a/b") == "name: 'a/b' contains '/'" + why);
    CHECK(scenario_error_of("name: 'a\\b'") == "name: 'a\\b' contains '\\'" + why);
    CHECK(scenario_error_of("name: '..'") == "name: '..' starts with '.'" + why);
    CHECK(scenario_error_of("name: -rf") == "name: '-rf' starts with '-'" + why);
    CHECK(scenario_error_of("name: ''") == "name: is empty" + why);
    CHECK(scenario_error_of("name: \"a\\tb\"") == "name: contains a control character" + why);
    CHECK(scenario_error_of("name: " + std::string(101, 'a')) ==
          "name: is longer than 100 characters" + why);
    const auto sc = load_scenario(load_yaml_string("name: my run, 2"), "t");
    CHECK(sc.name == "my run, 2");
}

TEST_CASE("a derived name is made safe and echoed", "[scenario]") {
    auto sc = load_scenario(load_yaml_string("duration: 1ms"), "my scen,ario");
    CHECK(sc.name == "my_scen_ario");
    CHECK(sc.echo["name"].Scalar() == "my_scen_ario");
    CHECK(sc.echo.begin()->first.Scalar() == "name");
    CHECK(load_scenario(load_yaml_string(""), "..").name == "_.");
    CHECK(load_scenario(load_yaml_string(""), "").name == "scenario");
    CHECK(load_scenario(load_yaml_string(""), "run-1.2+x").name == "run-1.2+x");
}

TEST_CASE("custom node names are letters, digits, '_' and '-'", "[scenario]") {
    const std::string topo =
        "topology: {kind: custom, switches: [{name: sw, ports: 2}], links: [{a: h0, b: 'sw:0'}, "
        "{a: h1, b: 'sw:1'}], hosts: [{name: h0}, {name: ";
    CHECK(scenario_error_of(topo + "h1}]}") == "");
    CHECK(scenario_error_of(topo + "'h.1'}]}") ==
          "topology.hosts[1].name: 'h.1' is not a node name: use letters, digits, '_' and '-'");
    CHECK(scenario_error_of(topo + "'h,1'}]}")
              .find("topology.hosts[1].name: 'h,1' is not a node name") == 0);
    CHECK(scenario_error_of("topology: {kind: custom, switches: [{name: 's 0', ports: 1}]}")
              .find("topology.switches[0].name: 's 0' is not a node name") == 0);
}

TEST_CASE("a workload CSV resolves against base_dir and is read from the given files",
          "[scenario]") {
    const std::string csv = "size_bytes,cdf\n1000,0\n1000,0.5\n5000,1\n";
    const auto root =
        load_yaml_string("duration: 1ms\ntraffic: {workload: [{sizes: sub/../my.csv, load: 0.1}]}");
    const auto sc = load_scenario(root, "t", "/no/such/dir", {{"/no/such/dir/my.csv", csv}});
    REQUIRE_FALSE(sc.flows.empty());
    for (const auto& f : sc.flows) CHECK((f.size_bytes >= 1000 && f.size_bytes <= 5000));
    CHECK(sc.files_read == std::map<std::string, std::string>{{"/no/such/dir/my.csv", csv}});
    CHECK(sc.echo["traffic"]["workload"][0]["sizes"].Scalar() == "/no/such/dir/my.csv");
    CHECK(root["traffic"]["workload"][0]["sizes"].Scalar() ==
          "sub/../my.csv");  // the input is untouched
    try {
        load_scenario(root, "t", "/no/such/dir");
        FAIL("no error");
    } catch (const config_error& e) {
        CHECK(std::string(e.what()) ==
              "traffic.workload[0].sizes: cannot read /no/such/dir/my.csv");
    }
}
