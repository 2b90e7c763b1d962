#include <catch2/catch.hpp>

#include <map>
#include <string>

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

TEST_CASE("device profiles: each switch and NIC gets its profile, the rest is the default",
          "[scenario][profiles]") {
    const auto sc = load_scenario(load_yaml_string(R"(
topology: {kind: leaf_spine, leaf_spine: {leaves: 2, spines: 2, hosts_per_leaf: 2}}
switch: {queues: 2, mmu: {queue_alpha: 4, pg_alpha: 2}}
switch_profiles:
  - {name: shallow, roles: [leaf], buffer: 256KiB, port_cap: 0B, mmu: {queue_alpha: 0.5}}
  - {name: deep, nodes: ["spine*"], buffer: 16MiB}
nic_profiles:
  - {name: slow, nodes: [h0, "h3"], tx_latency: 2us}
)"),
                                  "t");
    const auto node = [&](const char* n) { return static_cast<std::uint32_t>(sc.topo.find(n)); };
    for (const char* leaf : {"leaf0", "leaf1"}) {
        const auto& c = sc.switch_config_of(node(leaf));
        CHECK(sc.profile_name_of(node(leaf), true) == "shallow");
        CHECK(c.buffer_bytes == 256 * 1024);
        CHECK(c.mmu.port_cap.value == 0);
        CHECK(c.mmu.queue[1].shared.alpha == 0.5);  // the profile's
        CHECK(c.mmu.pg[1].shared.alpha == 2);       // merged from switch.mmu
        CHECK(c.queues == 2);                       // inherited from switch:
    }
    for (const char* spine : {"spine0", "spine1"}) {
        const auto& c = sc.switch_config_of(node(spine));
        CHECK(sc.profile_name_of(node(spine), true) == "deep");
        CHECK(c.buffer_bytes == 16 * 1024 * 1024);
        CHECK(c.mmu.port_cap.value == 600000);
        CHECK(c.mmu.queue[1].shared.alpha == 4);
    }
    CHECK(sc.sw.buffer_bytes == 4 * 1024 * 1024);  // the default profile
    CHECK(sc.nic_config_of(node("h0")).tx_latency == 2 * PS_PER_US);
    CHECK(sc.nic_config_of(node("h3")).tx_latency == 2 * PS_PER_US);
    CHECK(sc.nic_config_of(node("h1")).tx_latency == 500 * PS_PER_NS);
    CHECK(sc.profile_name_of(node("h1"), false) == "default");
    CHECK(sc.has_profiles());
    CHECK_FALSE(load_scenario(load_yaml_string(""), "t").has_profiles());
    // A ToR is selected by its role; a custom topology names profiles per node.
    const auto rack = load_scenario(
        load_yaml_string("topology: {kind: incast, incast: {hosts: 3}}\n"
                         "switch_profiles: [{name: tor, roles: [tor], buffer: 1MiB}]"),
        "t");
    CHECK(rack.switch_config_of(static_cast<std::uint32_t>(rack.topo.find("tor"))).buffer_bytes ==
          1024 * 1024);
    const auto custom = load_scenario(load_yaml_string(R"(
topology:
  kind: custom
  switches: [{name: a, ports: 2, profile: big}, {name: b, ports: 2, role: edge}]
  hosts: [{name: h0}, {name: h1}]
  links: [{a: h0, b: 'a:0'}, {a: 'a:1', b: 'b:0'}, {a: 'b:1', b: h1}]
switch_profiles: [{name: big, buffer: 8MiB}, {name: edge, roles: [edge], buffer: 2MiB}]
)"),
                                      "t");
    CHECK(custom.switch_config_of(static_cast<std::uint32_t>(custom.topo.find("a"))).buffer_bytes ==
          8 * 1024 * 1024);
    CHECK(custom.switch_config_of(static_cast<std::uint32_t>(custom.topo.find("b"))).buffer_bytes ==
          2 * 1024 * 1024);
}

TEST_CASE("device profiles: bad names, selections and keys are config errors naming the key",
          "[scenario][profiles]") {
    const std::string ls =
        "topology: {kind: leaf_spine, leaf_spine: {leaves: 2, spines: 2, hosts_per_leaf: 1}}\n";
    CHECK(scenario_error_of(ls + "switch_profiles: [{name: x, roles: [core]}]") ==
          "switch_profiles[0].roles: no switch has role 'core' (roles here: leaf, spine)");
    CHECK(scenario_error_of(ls + "switch_profiles: [{name: x, nodes: ['sp*x']}]") ==
          "switch_profiles[0].nodes: 'sp*x' matches no switch");
    CHECK(scenario_error_of(ls + "switch_profiles: [{name: x, roles: [spine]}, {name: y, nodes: "
                                 "[spine1]}]") ==
          "switch_profiles[1].nodes: switch 'spine1' is also selected by switch_profiles[0].roles "
          "(a switch takes one profile)");
    CHECK(scenario_error_of(ls + "switch_profiles: [{name: x}, {name: x}]") ==
          "switch_profiles[1].name: a profile named 'x' is defined before");
    CHECK(scenario_error_of(ls + "switch_profiles: [{name: default}]") ==
          "switch_profiles[0].name: 'default' names the `switch:` section");
    CHECK(scenario_error_of(ls + "switch_profiles: [{roles: [leaf]}]") ==
          "switch_profiles[0].name: required key is missing");
    CHECK(scenario_error_of(ls + "switch_profiles: [{name: x, bufer: 1MiB}]")
              .find("switch_profiles[0].bufer: unknown key") == 0);
    CHECK(scenario_error_of(ls + "switch_profiles: [{name: x, buffer: 1 parsec}]")
              .find("switch_profiles[0].buffer: ") == 0);
    CHECK(scenario_error_of(ls + "switch_profiles: [{name: x, roles: [leaf], buffer: 256KiB}]") ==
          "switch_profiles[0].port_cap: is larger than switch.buffer (256KiB)");
    CHECK(scenario_error_of(ls + "nic_profiles: [{name: x, nodes: [h9]}]") ==
          "nic_profiles[0].nodes: 'h9' matches no host");
    CHECK(scenario_error_of(
              "topology: {kind: custom, switches: [{name: s, ports: 2, profile: nope}], hosts: "
              "[{name: h0}, {name: h1}], links: [{a: h0, b: 's:0'}, {a: h1, b: 's:1'}]}\n"
              "switch_profiles: [{name: x}]") ==
          "topology.switches[0].profile: no switch profile named 'nope' (defined: x)");
}

TEST_CASE("device profiles: a fat tree's switches are selected by role tor, agg and core",
          "[scenario][profiles][fat_tree]") {
    const auto sc = load_scenario(load_yaml_string(R"(
topology: {kind: fat_tree, fat_tree: {k: 8, hosts_per_tor: 6, tor_uplinks: 2}}
switch_profiles:
  - {name: tor, roles: [tor], buffer: 1MiB}
  - {name: fabric, roles: [agg, core], buffer: 8MiB}
)"),
                                  "t");
    std::map<std::string, std::size_t> by_profile;
    for (const std::uint32_t n : sc.topo.switches()) {
        const std::string& role = sc.topo.nodes[n].role;
        const std::string& profile = sc.profile_name_of(n, true);
        ++by_profile[profile];
        CHECK(profile == (role == "tor" ? "tor" : "fabric"));
        CHECK(sc.switch_config_of(n).buffer_bytes ==
              (role == "tor" ? 1024 * 1024 : 8 * 1024 * 1024));
    }
    CHECK(by_profile == std::map<std::string, std::size_t>{{"fabric", 24}, {"tor", 32}});
    CHECK(scenario_error_of("topology: {kind: fat_tree}\n"
                            "switch_profiles: [{name: x, roles: [spine]}]") ==
          "switch_profiles[0].roles: no switch has role 'spine' (roles here: agg, core, tor)");
}
