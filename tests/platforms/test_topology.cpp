#include <catch2/catch.hpp>

#include <set>

#include "fabricsim/platforms/scenario.h"
#include "scenario_error.h"

using namespace fabricsim;
using namespace fabricsim::platforms;

TEST_CASE("generators build the described topologies", "[platforms]") {
    auto sc = load_scenario(
        load_yaml_string("topology: {kind: leaf_spine, leaf_spine: {leaves: 4, spines: 2, "
                         "hosts_per_leaf: 3, fabric_rate: 40Gbps}}"),
        "t");
    CHECK(sc.topo.hosts().size() == 12);
    CHECK(sc.topo.switches().size() == 6);
    CHECK(sc.topo.links.size() == 12 + 8);
    const int leaf0 = sc.topo.find("leaf0");
    CHECK(sc.topo.port_rate(std::uint32_t(leaf0), 3) == 40'000'000'000ull);
    const auto routes = sc.topo.routes();
    // leaf0 reaches a host on leaf3 over both spines (ports 3 and 4), its own hosts directly.
    CHECK(routes.at(std::uint32_t(leaf0)).at(std::uint32_t(sc.topo.find("h11"))) ==
          std::vector<std::uint16_t>{3, 4});
    CHECK(routes.at(std::uint32_t(leaf0)).at(std::uint32_t(sc.topo.find("h1"))) ==
          std::vector<std::uint16_t>{1});

    auto db = load_scenario(
        load_yaml_string("topology: {kind: dumbbell, dumbbell: {hosts_per_side: 3}}"), "t");
    CHECK(db.topo.hosts().size() == 6);
    CHECK(db.topo.links.size() == 7);
    auto in = load_scenario(load_yaml_string("topology: {kind: incast, incast: {hosts: 17}}"), "t");
    CHECK(in.topo.nodes[std::size_t(in.topo.find("tor"))].ports == 17);
}

TEST_CASE("custom topologies: dangling links, reused ports and unreachable hosts are rejected",
          "[platforms]") {
    const std::string base =
        "topology:\n  kind: custom\n  hosts: [{name: a}, {name: b}]\n"
        "  switches: [{name: s, ports: 2}]\n";
    CHECK(scenario_error_of(base + "  links: [{a: a, b: 's:0'}, {a: b, b: 's:1'}]").empty());
    CHECK(scenario_error_of(base + "  links: [{a: a, b: 'x:0'}, {a: b, b: 's:1'}]") ==
          "topology.links[0].b: dangling link: no switch or host named 'x'");
    CHECK(scenario_error_of(base + "  links: [{a: a, b: 's:0'}, {a: b, b: 's:0'}]") ==
          "topology.links[1]: port s:0 is already used by topology.links[0]");
    CHECK(scenario_error_of(base + "  links: [{a: a, b: 's:0'}, {a: b, b: 's:5'}]") ==
          "topology.links[1].b: 's:5': s has only 2 port(s)");
    CHECK(scenario_error_of(base + "  links: [{a: a, b: 's:0'}]") ==
          "topology: host 'b' is not linked");
    CHECK(
        scenario_error_of(
            "topology:\n  kind: custom\n  hosts: [{name: a}, {name: b}, {name: c}, {name: d}]\n"
            "  switches: [{name: s, ports: 2}, {name: t, ports: 2}]\n"
            "  links: [{a: a, b: 's:0'}, {a: b, b: 's:1'}, {a: c, b: 't:0'}, {a: d, b: 't:1'}]") ==
        "topology: host 'c' is unreachable from 'a'");
}

TEST_CASE("scenario errors name the key and reason", "[platforms]") {
    CHECK(scenario_error_of("switch: {port_cap: 8MiB, buffer: 4MiB}") ==
          "switch.port_cap: is larger than switch.buffer (4MiB)");
    CHECK(scenario_error_of("traffic: {flows: [{src: h0, dst: h9}]}") ==
          "traffic.flows[0].dst: no host named 'h9'");
    CHECK(scenario_error_of("traffic: {flows: [{src: h0, dst: h0}]}") ==
          "traffic.flows[0].dst: is the same host as src");
    CHECK(scenario_error_of("traffic: {flows: [{src: h0, dst: h1, rate: 10}]}") ==
          "traffic.flows[0].rate: '10' needs a bit-rate unit (bps, Kbps, Mbps, Gbps, Tbps)");
    CHECK(scenario_error_of("traffic: {flows: [{src: h0, dst: h1, start: 2ms, stop: 1ms}]}") ==
          "traffic.flows[0].stop: must be after start (2ms)");
    CHECK(scenario_error_of("phy: {faults: [{port: h0, down_at: 2ms, up_at: 1ms}]}") ==
          "phy.faults[0].up_at: must be after down_at");
    CHECK(scenario_error_of("topology: {kind: ring}").find("topology.kind: 'ring' is not one of") ==
          0);
    CHECK(scenario_error_of("results: {pcap: [zz]}") ==
          "results.pcap: dangling link: no switch or host named 'zz'");
}

TEST_CASE("traffic generators: permutation is a derangement, many_to_one targets one host",
          "[platforms]") {
    auto sc =
        load_scenario(load_yaml_string("topology: {kind: incast, incast: {hosts: 8}}\n"
                                       "traffic: {generate: [{pattern: permutation, load: 0.5}, "
                                       "{pattern: many_to_one, target: h3, load: 0.7}]}"),
                      "t");
    REQUIRE(sc.flows.size() == 8 + 7);
    std::set<std::uint32_t> dsts;
    for (int i = 0; i < 8; ++i) {
        CHECK(sc.flows[i].src != sc.flows[i].dst);
        dsts.insert(sc.flows[i].dst);
        CHECK(sc.flows[i].rate_bps == 5'000'000'000ull);
    }
    CHECK(dsts.size() == 8);
    for (int i = 8; i < 15; ++i) {
        CHECK(sc.flows[i].dst == std::uint32_t(sc.topo.find("h3")));
        CHECK(sc.flows[i].rate_bps == 7'000'000'000ull);
    }
}
