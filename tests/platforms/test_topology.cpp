#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "fabricsim/platforms/scenario.h"
#include "scenario_error.h"

using namespace fabricsim;
using namespace fabricsim::platforms;

namespace {

std::uint32_t node(const topology& t, const std::string& name) {
    const int n = t.find(name);
    REQUIRE(n >= 0);
    return static_cast<std::uint32_t>(n);
}

std::vector<std::uint16_t> ports_of(const route_table& r, std::uint32_t sw, std::uint32_t host) {
    const auto p = r.ports(sw, host);
    return {p.begin(), p.end()};
}

/// The routes as the model first computed them: one breadth-first search per host, backwards
/// over switches; a switch's ports are those to a neighbour one hop nearer (the host itself or a
/// switch), ascending.
std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<std::uint16_t>> per_host_search(
    const topology& t) {
    std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> adj(t.nodes.size());
    for (const auto& l : t.links) {
        adj[l.a.node].push_back({l.a.port, l.b.node});
        adj[l.b.node].push_back({l.b.port, l.a.node});
    }
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<std::uint16_t>> out;
    constexpr auto INF = ~std::uint32_t(0);
    for (const auto h : t.hosts()) {
        std::vector<std::uint32_t> dist(t.nodes.size(), INF);
        std::vector<std::uint32_t> q{h};
        dist[h] = 0;
        for (std::size_t i = 0; i < q.size(); ++i) {
            const auto n = q[i];
            if (n != h && t.nodes[n].kind == node_kind::HOST) continue;
            for (const auto& [port, nb] : adj[n])
                if (dist[nb] == INF && t.nodes[nb].kind == node_kind::SWITCH) {
                    dist[nb] = dist[n] + 1;
                    q.push_back(nb);
                }
        }
        for (const auto s : t.switches()) {
            if (dist[s] == INF) continue;
            std::vector<std::uint16_t> ports;
            for (const auto& [port, nb] : adj[s])
                if (dist[nb] != INF && dist[nb] + 1 == dist[s] &&
                    (nb == h || t.nodes[nb].kind == node_kind::SWITCH))
                    ports.push_back(static_cast<std::uint16_t>(port));
            std::sort(ports.begin(), ports.end());
            if (!ports.empty()) out[{s, h}] = ports;
        }
    }
    return out;
}

/// The node at the far end of the link on (n, port).
std::uint32_t peer(const topology& t, std::uint32_t n, std::uint32_t port) {
    const int l = t.link_at(n, port);
    REQUIRE(l >= 0);
    const link_desc& ld = t.links[std::size_t(l)];
    return ld.a.node == n && ld.a.port == port ? ld.b.node : ld.a.node;
}

/// Every path the routes allow from host `src` to host `dst` (any ECMP choice at every switch):
/// the numbers of switches they cross, and the switches they use.
struct paths {
    std::set<std::size_t> lengths;
    std::set<std::string> switches;
};

paths all_paths(const topology& t, std::uint32_t src, std::uint32_t dst) {
    const auto routes = t.routes();
    paths out;
    std::vector<std::uint32_t> path;
    const std::function<void(std::uint32_t)> walk = [&](std::uint32_t sw) {
        path.push_back(sw);
        for (const std::uint16_t port : routes.ports(sw, dst)) {
            const std::uint32_t next = peer(t, sw, port);
            if (next == dst) {
                out.lengths.insert(path.size());
                for (const auto n : path) out.switches.insert(t.nodes[n].name);
            } else {
                walk(next);
            }
        }
        path.pop_back();
    };
    walk(peer(t, src, 0));
    return out;
}

std::map<std::string, std::size_t> role_counts(const topology& t) {
    std::map<std::string, std::size_t> out;
    for (const auto n : t.switches()) ++out[t.nodes[n].role];
    return out;
}

}  // namespace

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
    CHECK(ports_of(routes, std::uint32_t(leaf0), std::uint32_t(sc.topo.find("h11"))) ==
          std::vector<std::uint16_t>{3, 4});
    CHECK(ports_of(routes, std::uint32_t(leaf0), std::uint32_t(sc.topo.find("h1"))) ==
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
    // The port map's length needs the topology: checked at load (validate), not at elaboration.
    CHECK(scenario_error_of("topology: {kind: incast, incast: {hosts: 4}}\n"
                            "switch: {pipeline: {count: 2, port_map: [0, 1, 0]}}") ==
          "switch.pipeline.port_map: switch 'tor': port_map has 3 entries; the switch has 4 "
          "ports");
    CHECK(scenario_error_of("topology: {kind: incast, incast: {hosts: 4}}\n"
                            "switch_profiles: [{name: p, roles: [tor], pipeline: {count: 2, "
                            "port_map: [0, 1]}}]")
              .rfind("switch_profiles[0].pipeline.port_map: switch 'tor': port_map has 2", 0) == 0);
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

TEST_CASE("fat_tree: the default k = 4 tree is Al-Fares' 20 switches and 16 hosts",
          "[platforms][fat_tree]") {
    const auto sc = load_scenario(load_yaml_string("topology: {kind: fat_tree}"), "t");
    const topology& t = sc.topo;
    CHECK(t.hosts().size() == 16);
    CHECK(t.switches().size() == 20);
    CHECK(t.links.size() == 16 + 16 + 16);
    CHECK(role_counts(t) ==
          std::map<std::string, std::size_t>{{"agg", 8}, {"core", 4}, {"tor", 8}});
    for (const auto n : t.switches()) CHECK(t.nodes[n].ports == 4);
    // Hosts first (h0..h15), then tor0..7, agg0..7, core0..3; hosts on ToR ports 0..k/2-1.
    CHECK(node(t, "h15") == 15);
    CHECK(node(t, "tor0") == 16);
    CHECK(peer(t, node(t, "h5"), 0) == node(t, "tor2"));
    CHECK(peer(t, node(t, "tor2"), 1) == node(t, "h5"));
    // ToR r of pod p: uplink i to agg i of the pod, on the agg's down port r.
    CHECK(peer(t, node(t, "tor3"), 2) == node(t, "agg2"));
    CHECK(peer(t, node(t, "tor3"), 3) == node(t, "agg3"));
    CHECK(peer(t, node(t, "agg3"), 1) == node(t, "tor3"));
    // Agg j of every pod: uplink u to core j*k/2 + u, on the core's port p (the pod).
    CHECK(peer(t, node(t, "agg0"), 2) == node(t, "core0"));
    CHECK(peer(t, node(t, "agg0"), 3) == node(t, "core1"));
    CHECK(peer(t, node(t, "agg7"), 2) == node(t, "core2"));
    CHECK(peer(t, node(t, "agg7"), 3) == node(t, "core3"));
    CHECK(peer(t, node(t, "core3"), 3) == node(t, "agg7"));
    CHECK(t.port_rate(node(t, "agg0"), 2) == 10'000'000'000ull);

    auto k6 = load_scenario(
        load_yaml_string("topology: {kind: fat_tree, fat_tree: {k: 6, fabric_rate: 40Gbps}}"), "t");
    CHECK(k6.topo.hosts().size() == 54);
    CHECK(k6.topo.switches().size() == 6 * 3 + 6 * 3 + 9);
    CHECK(k6.topo.port_rate(node(k6.topo, "tor0"), 2) == 10'000'000'000ull);
    CHECK(k6.topo.port_rate(node(k6.topo, "tor0"), 3) == 40'000'000'000ull);
    CHECK(k6.topo.port_rate(node(k6.topo, "agg0"), 5) == 40'000'000'000ull);
}

TEST_CASE("fat_tree: the HULL ns-2 tree has 56 8-port switches, 192 hosts, 3:1 at the ToR",
          "[platforms][fat_tree]") {
    // seed-000 §3.4: 8 pods; 32 ToRs 6 down / 2 up; 16 aggregation switches 4 down / 4 up;
    // 8 cores with 8 down. aggs_per_pod defaults to tor_uplinks.
    for (const char* yaml :
         {"topology: {kind: fat_tree, fat_tree: {k: 8, hosts_per_tor: 6, tor_uplinks: 2}}",
          "topology: {kind: fat_tree, fat_tree: {k: 8, pods: 8, tors_per_pod: 4, hosts_per_tor: "
          "6, tor_uplinks: 2, aggs_per_pod: 2, agg_uplinks: 4}}"}) {
        INFO(yaml);
        const auto sc = load_scenario(load_yaml_string(yaml), "t");
        const topology& t = sc.topo;
        CHECK(t.hosts().size() == 192);
        CHECK(t.switches().size() == 56);
        CHECK(role_counts(t) ==
              std::map<std::string, std::size_t>{{"agg", 16}, {"core", 8}, {"tor", 32}});
        for (const auto n : t.switches()) CHECK(t.nodes[n].ports == 8);
        CHECK(t.links.size() == 192 + 32 * 2 + 16 * 4);
        // tor5 (pod 1, ToR 1): hosts h30..h35, uplinks to agg2 and agg3 (pod 1).
        CHECK(peer(t, node(t, "tor5"), 0) == node(t, "h30"));
        CHECK(peer(t, node(t, "tor5"), 6) == node(t, "agg2"));
        CHECK(peer(t, node(t, "tor5"), 7) == node(t, "agg3"));
        CHECK(peer(t, node(t, "agg3"), 1) == node(t, "tor5"));
        // agg3 (pod 1, agg 1): cores 4..7 on ports 4..7, its port 1 on each core.
        for (std::uint32_t u = 0; u < 4; ++u) {
            CHECK(peer(t, node(t, "agg3"), 4 + u) == node(t, "core" + std::to_string(4 + u)));
            CHECK(peer(t, node(t, "core" + std::to_string(4 + u)), 1) == node(t, "agg3"));
        }
    }
}

TEST_CASE("fat_tree routes: 1 switch under a ToR, 3 in a pod, 5 between pods over every core",
          "[platforms][fat_tree]") {
    SECTION("k = 4") {
        const auto sc = load_scenario(load_yaml_string("topology: {kind: fat_tree}"), "t");
        const topology& t = sc.topo;
        const auto h0 = node(t, "h0");
        CHECK(all_paths(t, h0, node(t, "h1")).lengths == std::set<std::size_t>{1});
        const auto pod = all_paths(t, h0, node(t, "h2"));
        CHECK(pod.lengths == std::set<std::size_t>{3});
        CHECK(pod.switches == std::set<std::string>{"tor0", "tor1", "agg0", "agg1"});
        const auto far = all_paths(t, h0, node(t, "h4"));
        CHECK(far.lengths == std::set<std::size_t>{5});
        for (const char* c : {"core0", "core1", "core2", "core3"}) CHECK(far.switches.count(c));
        const auto routes = t.routes();
        CHECK(ports_of(routes, node(t, "tor0"), node(t, "h4")) == std::vector<std::uint16_t>{2, 3});
        CHECK(ports_of(routes, node(t, "agg0"), node(t, "h4")) == std::vector<std::uint16_t>{2, 3});
        CHECK(ports_of(routes, node(t, "core0"), node(t, "h4")) == std::vector<std::uint16_t>{1});
        CHECK(ports_of(routes, node(t, "agg0"), node(t, "h1")) == std::vector<std::uint16_t>{0});
    }
    SECTION("the HULL tree") {
        const auto sc = load_scenario(
            load_yaml_string(
                "topology: {kind: fat_tree, fat_tree: {k: 8, hosts_per_tor: 6, tor_uplinks: 2}}"),
            "t");
        const topology& t = sc.topo;
        const auto h0 = node(t, "h0");
        CHECK(all_paths(t, h0, node(t, "h5")).lengths == std::set<std::size_t>{1});
        CHECK(all_paths(t, h0, node(t, "h23")).lengths == std::set<std::size_t>{3});
        const auto far = all_paths(t, h0, node(t, "h191"));
        CHECK(far.lengths == std::set<std::size_t>{5});
        for (int c = 0; c < 8; ++c) CHECK(far.switches.count("core" + std::to_string(c)));
        const auto routes = t.routes();
        CHECK(ports_of(routes, node(t, "tor0"), node(t, "h191")) ==
              std::vector<std::uint16_t>{6, 7});
        CHECK(ports_of(routes, node(t, "agg0"), node(t, "h191")) ==
              std::vector<std::uint16_t>{4, 5, 6, 7});
    }
    SECTION("3 uplinks over 4 aggregation switches, round robin") {
        const auto sc = load_scenario(
            load_yaml_string("topology: {kind: fat_tree, fat_tree: {k: 8, tor_uplinks: 3, "
                             "aggs_per_pod: 4}}"),
            "t");
        const topology& t = sc.topo;
        // ToR r uplink i -> agg (3r + i) mod 4: 12 uplinks, 3 per agg (3 down + 4 up ports).
        CHECK(peer(t, node(t, "tor1"), 4) == node(t, "agg3"));
        CHECK(peer(t, node(t, "tor1"), 5) == node(t, "agg0"));
        CHECK(peer(t, node(t, "tor1"), 6) == node(t, "agg1"));
        CHECK(t.nodes[node(t, "tor1")].ports == 7);
        CHECK(t.nodes[node(t, "agg0")].ports == 7);
        CHECK(t.switches().size() == 32 + 32 + 16);
        CHECK(all_paths(t, node(t, "h0"), node(t, "h4")).lengths == std::set<std::size_t>{3});
        CHECK(all_paths(t, node(t, "h0"), node(t, "h127")).lengths == std::set<std::size_t>{5});
    }
}

TEST_CASE("fat_tree: bad shapes are refused naming the key", "[platforms][fat_tree]") {
    const auto err = [](const std::string& ft) {
        return scenario_error_of("topology: {kind: fat_tree, fat_tree: {" + ft + "}}");
    };
    CHECK(err("k: 5") ==
          "topology.fat_tree.k: must be even (k/2 ToRs, aggregation switches and uplinks per "
          "pod), not 5");
    CHECK(err("k: 2") == "topology.fat_tree.k: '2' is below the minimum 4");
    CHECK(err("k: 66").find("topology.fat_tree.k: '66' is above the maximum 64") == 0);
    CHECK(err("pods: 0") == "topology.fat_tree.pods: '0' is below the minimum 1");
    CHECK(err("hosts_per_tor: 0") == "topology.fat_tree.hosts_per_tor: '0' is below the minimum 1");
    CHECK(err("pods: 1024, tors_per_pod: 1024, hosts_per_tor: 2") ==
          "topology.fat_tree: pods*tors_per_pod*hosts_per_tor = 2097152 hosts, more than 1048576");
    CHECK(err("tor_uplinks: 3, aggs_per_pod: 2") ==
          "topology.fat_tree.tor_uplinks: 3 is more than the 2 aggregation switches per pod "
          "(aggs_per_pod): a ToR has at most one uplink to each");
    CHECK(err("k: 8, tor_uplinks: 2, aggs_per_pod: 4") ==
          "topology.fat_tree.tor_uplinks: 2 uplinks to 4 aggregation switches per pod (round "
          "robin) leave ToRs with no aggregation switch in common: use more than half of "
          "aggs_per_pod");
    CHECK(err("tors_per_pod: 1, tor_uplinks: 1, aggs_per_pod: 2") ==
          "topology.fat_tree.aggs_per_pod: 2 aggregation switches per pod but tor_uplinks = 1 "
          "for the pod's one ToR: some would have no ToR below them");
    CHECK(
        err("fabric_rate: 10").find("topology.fat_tree.fabric_rate: '10' needs a bit-rate unit") ==
        0);
    CHECK(err("spines: 2") ==
          "topology.fat_tree.spines: unknown key (known here: agg_uplinks, aggs_per_pod, "
          "fabric_rate, hosts_per_tor, k, pods, tor_uplinks, tors_per_pod)");
    // Other generators' keys are ignored, and a fat tree's keys too when the kind differs.
    CHECK(err("tors_per_pod: 1, tor_uplinks: 1") == "");
    CHECK(scenario_error_of("topology: {kind: leaf_spine, fat_tree: {k: 5}}") == "");
}

TEST_CASE("routes per edge switch equal a search from every host, on every generator",
          "[platforms][routes]") {
    const char* topologies[] = {
        "topology: {kind: leaf_spine, leaf_spine: {leaves: 6, spines: 3, hosts_per_leaf: 5}}",
        "topology: {kind: fat_tree, fat_tree: {k: 4}}",
        "topology: {kind: fat_tree, fat_tree: {k: 8, hosts_per_tor: 6, tor_uplinks: 2}}",
        "topology: {kind: dumbbell, dumbbell: {hosts_per_side: 3}}",
        "topology: {kind: incast, incast: {hosts: 9}}",
        "topology: {kind: multi_dc, multi_dc: {dcs: 3, leaves: 2, spines: 2, hosts_per_leaf: 2, "
        "borders: 2, wan_delays: [5ms, 10ms, 15ms]}}",
        "topology: {kind: parking_lot, parking_lot: {switches: 4, hosts_per_switch: 2}}",
        // Irregular: parallel links, a ring with unequal paths.
        "topology:\n  kind: custom\n"
        "  hosts: [{name: a}, {name: b}, {name: c}, {name: d}, {name: e}]\n"
        "  switches: [{name: s, ports: 5}, {name: t, ports: 5}, {name: u, ports: 4}, "
        "{name: v, ports: 3}]\n"
        "  links: [{a: a, b: 's:0'}, {a: b, b: 't:0'}, {a: c, b: 'u:0'}, {a: d, b: 'v:0'},"
        " {a: 's:1', b: 't:1'}, {a: 's:2', b: 't:2'}, {a: 't:3', b: 'u:1'}, {a: 'u:2', b: 'v:1'},"
        " {a: 'v:2', b: 's:3'}, {a: e, b: 's:4'}, {a: 'u:3', b: 't:4'}]\n",
    };
    for (const char* text : topologies) {
        INFO(text);
        const auto sc = load_scenario(load_yaml_string(text), "t");
        const topology& t = sc.topo;
        const auto reference = per_host_search(t);
        const route_table r = t.routes();
        std::size_t routes = 0;
        for (const auto s : t.switches())
            for (const auto h : t.hosts()) {
                const auto it = reference.find({s, h});
                const std::vector<std::uint16_t> want =
                    it == reference.end() ? std::vector<std::uint16_t>{} : it->second;
                if (ports_of(r, s, h) != want)
                    FAIL(t.nodes[s].name << " -> " << t.nodes[h].name << ": "
                                         << ports_of(r, s, h).size() << " ports, the search gives "
                                         << want.size());
                routes += want.size();
                // What platform::install_routes installs: a route per edge switch, and at the
                // host's own edge switch its port.
                const std::uint32_t e = r.edge_of(h);
                if (e == route_table::NONE) {
                    CHECK(want.empty());
                    continue;
                }
                const auto by_edge = r.edge_ports(s, e);
                if (r.edge_node(e) == s)
                    CHECK((by_edge.empty() && want.size() == 1));
                else
                    CHECK(std::vector<std::uint16_t>(by_edge.begin(), by_edge.end()) == want);
            }
        CHECK(routes > 0);
        for (const auto h : t.hosts()) CHECK(ports_of(r, h, h).empty());  // a host routes nothing
    }
}
