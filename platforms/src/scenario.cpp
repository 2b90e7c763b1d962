#include "fabricsim/platforms/scenario.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <utility>

#include <fnmatch.h>

#include "fabricsim/core/rng.h"
#include "fabricsim/host/algo/flow_size_distribution.h"
#include "fabricsim/host/algo/workload_generator.h"
#include "fabricsim/host/xpass_transport.h"
#include "fabricsim/platforms/output_estimate.h"
#include "fabricsim/switch/algo/headroom.h"

namespace fabricsim::platforms {

const char* builtin_workload_csv(
    const std::string& name);  // generated from platforms/workloads/*.csv

namespace {

/// Every key of a scenario (defined below).
void describe_top_level(config_schema& s);

config_schema make_schema() {
    config_schema s;
    describe_top_level(s);
    return s;
}

}  // namespace

const config_schema& scenario_schema() {
    static const config_schema s = make_schema();
    return s;
}

namespace {

bool is_alnum(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/// Why an explicit scenario name cannot name a results folder, or "".
std::string unsafe_name(const std::string& n) {
    if (n.empty()) return "is empty";
    if (n.size() > 100) return "is longer than 100 characters";
    if (n[0] == '.' || n[0] == '-') return "'" + n + "' starts with '" + n[0] + "'";
    for (const char c : n) {
        if (c == '/' || c == '\\') return "'" + n + "' contains '" + c + "'";
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
            return "contains a control character";
    }
    return {};
}

/// A name derived from a file name, made safe: characters other than [A-Za-z0-9._+-] and a
/// leading '.' or '-' become '_'.
std::string safe_name(const std::string& n) {
    std::string s = n.substr(0, 100);
    for (char& c : s)
        if (!is_alnum(c) && c != '.' && c != '_' && c != '+' && c != '-') c = '_';
    if (!s.empty() && (s[0] == '.' || s[0] == '-')) s[0] = '_';
    return s.empty() ? "scenario" : s;
}

/// Node names become SystemC object names (no '.'), pcap file names, CSV fields and "sw:3".
void check_node_name(const config_value& v) {
    const std::string name = v.str();
    const auto ok = [](char c) { return is_alnum(c) || c == '_' || c == '-'; };
    if (name.empty() || !std::all_of(name.begin(), name.end(), ok))
        v.fail("'" + name + "' is not a node name: use letters, digits, '_' and '-'");
}

// ---------------------------------------------------------------- topology.*

/// A switch or host of a custom topology (topology.switches[], topology.hosts[]).
struct custom_node {
    std::string name;
    std::uint32_t ports = 1;
    std::string role;
    std::string profile;  ///< "" = selected by the profiles' nodes/roles, else default
    std::string at;       ///< display path of the list element
};

/// A link of a custom topology (topology.links[]).
struct custom_link {
    std::string a, b;
    std::optional<std::uint64_t> rate;
    std::optional<ps_t> delay;
    std::optional<double> cable_length;
    std::string at;
};

/// The `topology:` section.
struct topology_params {
    std::string kind;
    std::uint64_t host_rate = 0;
    ps_t link_delay = 0;
    std::optional<double> cable_length;
    std::uint32_t hosts_per_side = 0;
    std::optional<std::uint64_t> bottleneck_rate;
    std::uint32_t incast_hosts = 0;
    std::uint32_t leaves = 0, spines = 0, hosts_per_leaf = 0;
    std::optional<std::uint64_t> fabric_rate;
    std::uint32_t ft_k = 0;
    std::optional<std::uint32_t> ft_pods, ft_tors_per_pod, ft_hosts_per_tor, ft_tor_uplinks,
        ft_aggs_per_pod, ft_agg_uplinks;
    std::optional<std::uint64_t> ft_fabric_rate;
    std::uint32_t pl_switches = 0, pl_hosts = 0;
    std::optional<std::uint64_t> pl_rate;
    std::optional<ps_t> pl_delay;
    std::uint32_t dcs = 0, dc_leaves = 0, dc_spines = 0, dc_hosts_per_leaf = 0, dc_borders = 0;
    std::optional<std::uint64_t> dc_fabric_rate, wan_rate;
    ps_t wan_delay = 0;
    std::vector<ps_t> wan_delays;  ///< per DC pair (0,1), (0,2), ..., (1,2), ...; empty: wan_delay
    double wan_ber = 0;
    std::vector<custom_node> switches, hosts;
    std::vector<custom_link> links;

    static const param_table<topology_params>& params();
};

/// Stores each element of a list with its display path (`at`) into `list`.
template <class T, class E>
std::function<void(T&, E&&, const config_node&)> append_to(std::vector<E> T::*list) {
    return [list](T& t, E&& e, const config_node& n) {
        e.at = n.display_path();
        (t.*list).push_back(std::move(e));
    };
}

const param_table<custom_node>& custom_node_params(bool with_ports) {
    auto make = [](bool ports) {
        param_table<custom_node> t;
        t.add("name", value_kind::STRING, "", ports ? "Switch name" : "Host name",
              [](custom_node& n, const config_value& v) {
                  check_node_name(v);
                  n.name = v.str();
              });
        if (ports) {
            auto& p = t.add("ports", value_kind::INT, "", "Number of ports", &custom_node::ports);
            p.min = 1;
            p.max = 1024;
        }
        const std::string what = ports ? "switch" : "nic";
        t.add("role", value_kind::STRING, "",
              "Role that " + what + "_profiles[].roles can select (" +
                  (ports ? "e.g. leaf, spine, tor, agg, core" : "e.g. storage, gpu") + ")",
              [](custom_node& n, const config_value& v) { n.role = v.str(); })
            .optional = true;
        t.add("profile", value_kind::STRING, "",
              "Name of the " + what + "_profiles[] entry this " +
                  (ports ? "switch" : "host's NIC") + " uses (default: `" + what + ":`)",
              [](custom_node& n, const config_value& v) { n.profile = v.str(); })
            .optional = true;
        return t;
    };
    static const param_table<custom_node> switches = make(true), hosts = make(false);
    return with_ports ? switches : hosts;
}

const param_table<custom_link>& custom_link_params() {
    static const param_table<custom_link> table = [] {
        param_table<custom_link> t;
        t.add("a", value_kind::STRING, "", "One end", &custom_link::a);
        t.add("b", value_kind::STRING, "", "Other end", &custom_link::b);
        t.add("rate", value_kind::BIT_RATE, "Link speed (default: topology.host_rate)",
              &custom_link::rate);
        t.add("delay", value_kind::TIME, "Propagation delay (default: topology.link_delay)",
              &custom_link::delay);
        t.add("cable_length", value_kind::REAL, "Cable length in metres (5 ns/m)",
              &custom_link::cable_length)
            .min = 0;
        return t;
    }();
    return table;
}

const param_table<topology_params>& topology_params::params() {
    static const param_table<topology_params> table = [] {
        using tp = topology_params;
        param_table<tp> t;
        auto& kind = t.add("kind", value_kind::CHOICE, "dumbbell",
                           "Platform generator: dumbbell, incast (one rack), leaf_spine, fat_tree "
                           "(3 tiers, k-ary), parking_lot (a chain of switches with hosts at "
                           "each), multi_dc (leaf-spine DCs joined by border switches over WAN "
                           "links), custom (switches/hosts/links lists)",
                           &tp::kind);
        kind.choices = {"dumbbell",    "incast",   "leaf_spine", "fat_tree",
                        "parking_lot", "multi_dc", "custom"};
        t.add("host_rate", value_kind::BIT_RATE, "10Gbps", "Speed of host links", &tp::host_rate)
            .min = 1e6;
        t.add("link_delay", value_kind::TIME, "1us", "Propagation delay of every generated link",
              &tp::link_delay);
        auto& cl =
            t.add("cable_length", value_kind::REAL,
                  "Cable length in metres for every generated link (5 ns/m); overrides link_delay",
                  &tp::cable_length);
        cl.min = 0;
        cl.max = 1e6;
        auto& hps = t.add("dumbbell.hosts_per_side", value_kind::INT, "2", "Hosts on each side",
                          &tp::hosts_per_side);
        hps.min = 1;
        hps.max = 4096;
        t.add("dumbbell.bottleneck_rate", value_kind::BIT_RATE,
              "Rate of the switch-to-switch link (default: host_rate)", &tp::bottleneck_rate);
        auto& ih = t.add("incast.hosts", value_kind::INT, "9", "Hosts in the rack (one ToR switch)",
                         &tp::incast_hosts);
        ih.min = 2;
        ih.max = 4096;
        auto& lv = t.add("leaf_spine.leaves", value_kind::INT, "2", "Leaf switches", &tp::leaves);
        lv.min = 1;
        lv.max = 1024;
        auto& sp = t.add("leaf_spine.spines", value_kind::INT, "2", "Spine switches", &tp::spines);
        sp.min = 1;
        sp.max = 256;
        auto& hl = t.add("leaf_spine.hosts_per_leaf", value_kind::INT, "4", "Hosts per leaf",
                         &tp::hosts_per_leaf);
        hl.min = 1;
        hl.max = 1024;
        t.add("leaf_spine.fabric_rate", value_kind::BIT_RATE,
              "Leaf-spine link rate (default: host_rate); oversubscription = "
              "hosts_per_leaf*host_rate/(spines*fabric_rate)",
              &tp::fabric_rate);
        auto& k = t.add("fat_tree.k", value_kind::INT, "4",
                        "Switch radix of the standard k-ary fat tree (even): sets the defaults "
                        "below; k pods of k/2 ToRs and k/2 aggregation switches, (k/2)^2 cores, "
                        "k^3/4 hosts",
                        &tp::ft_k);
        k.min = 4;
        k.max = 64;
        auto count = [&t](const std::string& key, const std::string& help,
                          std::optional<std::uint32_t> tp::*member, double max) {
            auto& p = t.add("fat_tree." + key, value_kind::INT, help, member);
            p.min = 1;
            p.max = max;
        };
        count("pods", "Pods (default: k)", &tp::ft_pods, 1024);
        count("tors_per_pod", "ToR (edge) switches per pod (default: k/2)", &tp::ft_tors_per_pod,
              1024);
        count("hosts_per_tor",
              "Hosts per ToR (default: k/2); oversubscription at the ToR = "
              "hosts_per_tor:tor_uplinks",
              &tp::ft_hosts_per_tor, 1024);
        count("tor_uplinks",
              "Uplinks per ToR, each to a different aggregation switch of its pod, round robin "
              "(default: k/2)",
              &tp::ft_tor_uplinks, 256);
        count("aggs_per_pod", "Aggregation switches per pod (default: tor_uplinks)",
              &tp::ft_aggs_per_pod, 256);
        count("agg_uplinks",
              "Uplinks per aggregation switch (default: k/2); agg j of every pod connects to "
              "cores j*agg_uplinks .. j*agg_uplinks+agg_uplinks-1, so there are "
              "aggs_per_pod*agg_uplinks cores with one port per pod",
              &tp::ft_agg_uplinks, 256);
        t.add("fat_tree.fabric_rate", value_kind::BIT_RATE,
              "Rate of the ToR-aggregation and aggregation-core links (default: host_rate)",
              &tp::ft_fabric_rate);
        auto& pls =
            t.add("parking_lot.switches", value_kind::INT, "3",
                  "Switches s0..s(n-1) in a chain (n-1 bottleneck links)", &tp::pl_switches);
        pls.min = 2;
        pls.max = 256;
        auto& plh = t.add("parking_lot.hosts_per_switch", value_kind::INT, "2",
                          "Hosts on each switch, s<i>_h0 .. (the long flow's ends and the cross "
                          "traffic's)",
                          &tp::pl_hosts);
        plh.min = 1;
        plh.max = 256;
        t.add("parking_lot.chain_rate", value_kind::BIT_RATE,
              "Rate of the switch-to-switch links (default: host_rate)", &tp::pl_rate)
            .min = 1e6;
        t.add("parking_lot.chain_delay", value_kind::TIME,
              "Propagation delay of the switch-to-switch links (default: link_delay)",
              &tp::pl_delay);
        auto& dcs =
            t.add("multi_dc.dcs", value_kind::INT, "2", "Data centres dc0, dc1, ...", &tp::dcs);
        dcs.min = 2;
        dcs.max = 16;
        auto dc_count = [&t](const std::string& key, const char* def, const std::string& help,
                             std::uint32_t tp::*member, double max) {
            auto& p = t.add("multi_dc." + key, value_kind::INT, def, help, member);
            p.min = 1;
            p.max = max;
        };
        dc_count("leaves", "2", "Leaf switches per DC (dc<d>_leaf<i>)", &tp::dc_leaves, 1024);
        dc_count("spines", "2", "Spine switches per DC (dc<d>_spine<j>)", &tp::dc_spines, 256);
        dc_count("hosts_per_leaf", "4", "Hosts per leaf (dc<d>_h<i>)", &tp::dc_hosts_per_leaf,
                 1024);
        dc_count("borders", "1",
                 "Border switches per DC (dc<d>_border<b>, role border), each linked to every "
                 "spine of its DC and to border b of every other DC",
                 &tp::dc_borders, 16);
        t.add("multi_dc.fabric_rate", value_kind::BIT_RATE,
              "Leaf-spine and spine-border link rate (default: host_rate)", &tp::dc_fabric_rate)
            .min = 1e6;
        t.add("multi_dc.wan_rate", value_kind::BIT_RATE,
              "Rate of the WAN links between border switches (default: fabric_rate)", &tp::wan_rate)
            .min = 1e6;
        t.add("multi_dc.wan_delay", value_kind::TIME, "10ms",
              "One-way propagation delay of every WAN link", &tp::wan_delay)
            .min = 1;
        t.add("multi_dc.wan_delays", value_kind::STRING_LIST, "[]",
              "One-way delay per DC pair, in the order (dc0,dc1), (dc0,dc2), ..., (dc1,dc2), ... "
              "(e.g. [20ms, 30ms, 40ms] for three DCs); empty: multi_dc.wan_delay for all",
              [](tp& o, const config_value& v) {
                  const std::vector<std::string> items = v.str_list();
                  for (std::size_t i = 0; i < items.size(); ++i) {
                      std::string why;
                      const auto t = parse_time(items[i], why);
                      if (!t || *t == 0)
                          v.section().fail(v.key() + "[" + std::to_string(i) + "]",
                                           t ? "must be positive" : why);
                      o.wan_delays.push_back(*t);
                  }
              });
        auto& wb = t.add("multi_dc.wan_ber", value_kind::REAL, "0",
                         "Bit error rate of the WAN links (frames lost as fcs_error; phy.ber is "
                         "every other link's)",
                         &tp::wan_ber);
        wb.min = 0;
        wb.max = 1e-3;
        t.list<custom_node>("switches", "", "custom: switches", custom_node_params(true),
                            append_to(&tp::switches));
        t.list<custom_node>("hosts", "", "custom: hosts (one NIC port each)",
                            custom_node_params(false), append_to(&tp::hosts));
        t.list<custom_link>("links", "", "custom: links between ports ('sw0:3' or a host name)",
                            custom_link_params(), append_to(&tp::links));
        return t;
    }();
    return table;
}

/// Hosts a generated fat tree may have (as many as the largest leaf-spine: 1024 x 1024).
constexpr std::uint64_t MAX_FAT_TREE_HOSTS = 1u << 20;

/// The counts of a fat tree (topology.fat_tree.*) with their defaults filled in.
struct fat_tree_shape {
    std::uint32_t pods = 0, tors_per_pod = 0, hosts_per_tor = 0, tor_uplinks = 0, aggs_per_pod = 0,
                  agg_uplinks = 0;
};

/// Resolves the fat tree's defaults and refuses shapes that are not a 3-tier Clos with 5-switch
/// shortest paths between pods, naming the key.
fat_tree_shape fat_tree_shape_of(const topology_params& t) {
    const std::string at = "topology.fat_tree.";
    if (t.ft_k % 2 != 0)
        throw config_error(at + "k",
                           "must be even (k/2 ToRs, aggregation switches and uplinks "
                           "per pod), not " +
                               std::to_string(t.ft_k));
    const std::uint32_t half = t.ft_k / 2;
    fat_tree_shape s;
    s.pods = t.ft_pods.value_or(t.ft_k);
    s.tors_per_pod = t.ft_tors_per_pod.value_or(half);
    s.hosts_per_tor = t.ft_hosts_per_tor.value_or(half);
    s.tor_uplinks = t.ft_tor_uplinks.value_or(half);
    s.aggs_per_pod = t.ft_aggs_per_pod.value_or(s.tor_uplinks);
    s.agg_uplinks = t.ft_agg_uplinks.value_or(half);
    const std::string u = std::to_string(s.tor_uplinks), a = std::to_string(s.aggs_per_pod);
    if (s.tor_uplinks > s.aggs_per_pod)
        throw config_error(at + "tor_uplinks",
                           u + " is more than the " + a +
                               " aggregation switches per pod (aggs_per_pod): a ToR has at "
                               "most one uplink to each");
    // Round robin gives ToR t the aggregation switches (t*u + i) mod a, i < u. Two ToRs of a pod
    // (and so, through the cores, of any two pods) share one only if 2u > a.
    if (s.tors_per_pod >= 2 && 2 * s.tor_uplinks <= s.aggs_per_pod)
        throw config_error(at + "tor_uplinks",
                           u + " uplinks to " + a +
                               " aggregation switches per pod (round robin) leave ToRs with "
                               "no aggregation switch in common: use more than half of "
                               "aggs_per_pod");
    const std::uint64_t hosts = std::uint64_t(s.pods) * s.tors_per_pod * s.hosts_per_tor;
    if (hosts > MAX_FAT_TREE_HOSTS)
        throw config_error("topology.fat_tree",
                           "pods*tors_per_pod*hosts_per_tor = " + std::to_string(hosts) +
                               " hosts, more than " + std::to_string(MAX_FAT_TREE_HOSTS));
    if (s.tors_per_pod == 1 && s.tor_uplinks < s.aggs_per_pod)
        throw config_error(at + "aggs_per_pod",
                           a + " aggregation switches per pod but tor_uplinks = " + u +
                               " for the pod's one ToR: some would have no ToR below them");
    return s;
}

/// topology.kind multi_dc: `dcs` leaf-spine fabrics, each with `borders` border switches linked
/// to every spine of their DC; border b of each DC has a WAN link to border b of every other.
void build_multi_dc(scenario& sc, const topology_params& t, ps_t delay) {
    topology& topo = sc.topo;
    const std::string key = "topology.multi_dc";
    const std::uint32_t dcs = t.dcs, pairs = dcs * (dcs - 1) / 2;
    if (!t.wan_delays.empty() && t.wan_delays.size() != pairs)
        throw config_error(key + ".wan_delays", "lists " + std::to_string(t.wan_delays.size()) +
                                                    " delays; " + std::to_string(dcs) +
                                                    " DCs have " + std::to_string(pairs) +
                                                    " pairs");
    const std::uint32_t nl = t.dc_leaves, ns = t.dc_spines, nh = t.dc_hosts_per_leaf,
                        nb = t.dc_borders;
    const std::uint64_t fr = t.dc_fabric_rate.value_or(t.host_rate);
    auto link = [&](std::uint32_t a, std::uint32_t ap, std::uint32_t b, std::uint32_t bp,
                    std::uint64_t rate, ps_t prop, const std::string& k) {
        link_desc l;
        l.a = {a, ap};
        l.b = {b, bp};
        l.cfg.rate_bps = rate;
        l.cfg.propagation = prop;
        l.key = k;
        topo.links.push_back(l);
    };
    for (std::uint32_t d = 0; d < dcs; ++d)
        for (std::uint32_t i = 0; i < nl * nh; ++i)
            topo.nodes[topo.add_node("dc" + std::to_string(d) + "_h" + std::to_string(i),
                                     node_kind::HOST, 1)]
                .site = d;
    std::vector<std::vector<std::uint32_t>> border(dcs);
    for (std::uint32_t d = 0; d < dcs; ++d) {
        const std::string dc = "dc" + std::to_string(d) + "_";
        std::vector<std::uint32_t> leaf, spine;
        for (std::uint32_t i = 0; i < nl; ++i)
            leaf.push_back(
                topo.add_node(dc + "leaf" + std::to_string(i), node_kind::SWITCH, nh + ns, "leaf"));
        for (std::uint32_t j = 0; j < ns; ++j)
            spine.push_back(topo.add_node(dc + "spine" + std::to_string(j), node_kind::SWITCH,
                                          nl + nb, "spine"));
        for (std::uint32_t b = 0; b < nb; ++b)
            border[d].push_back(topo.add_node(dc + "border" + std::to_string(b), node_kind::SWITCH,
                                              ns + dcs - 1, "border"));
        for (const auto v : {&leaf, &spine, &border[d]})
            for (const auto n : *v) topo.nodes[n].site = d;
        const std::uint32_t first_host = d * nl * nh;
        for (std::uint32_t i = 0; i < nl; ++i) {
            for (std::uint32_t k = 0; k < nh; ++k)
                link(first_host + i * nh + k, 0, leaf[i], k, t.host_rate, delay, key);
            for (std::uint32_t j = 0; j < ns; ++j)
                link(leaf[i], nh + j, spine[j], i, fr, delay, key + ".fabric_rate");
        }
        for (std::uint32_t j = 0; j < ns; ++j)
            for (std::uint32_t b = 0; b < nb; ++b)
                link(spine[j], nl + b, border[d][b], j, fr, delay, key + ".fabric_rate");
    }
    // WAN: border port ns + (index of the remote DC among the others).
    std::uint32_t pair = 0;
    for (std::uint32_t d = 0; d < dcs; ++d)
        for (std::uint32_t e = d + 1; e < dcs; ++e, ++pair) {
            const ps_t wan = t.wan_delays.empty() ? t.wan_delay : t.wan_delays[pair];
            for (std::uint32_t b = 0; b < nb; ++b) {
                link(border[d][b], ns + e - 1, border[e][b], ns + d, t.wan_rate.value_or(fr), wan,
                     key + ".wan_rate");
                topo.links.back().ber = t.wan_ber;
            }
        }
}

void build_topology(scenario& sc, const topology_params& t) {
    topology& topo = sc.topo;
    const std::uint64_t host_rate = t.host_rate;
    const ps_t delay = t.cable_length ? phy::cable_propagation(*t.cable_length) : t.link_delay;
    auto link = [&](std::uint32_t a, std::uint32_t ap, std::uint32_t b, std::uint32_t bp,
                    std::uint64_t rate, const std::string& key) {
        link_desc l;
        l.a = {a, ap};
        l.b = {b, bp};
        l.cfg.rate_bps = rate;
        l.cfg.propagation = delay;
        l.key = key;
        topo.links.push_back(l);
    };
    if (t.kind == "dumbbell") {
        const std::uint32_t n = t.hosts_per_side;
        const std::uint64_t bn = t.bottleneck_rate.value_or(host_rate);
        for (std::uint32_t i = 0; i < 2 * n; ++i)
            topo.add_node("h" + std::to_string(i), node_kind::HOST, 1);
        const auto s0 = topo.add_node("s0", node_kind::SWITCH, n + 1);
        const auto s1 = topo.add_node("s1", node_kind::SWITCH, n + 1);
        for (std::uint32_t i = 0; i < n; ++i) {
            link(i, 0, s0, i, host_rate, "topology.dumbbell");
            link(n + i, 0, s1, i, host_rate, "topology.dumbbell");
        }
        link(s0, n, s1, n, bn, "topology.dumbbell.bottleneck_rate");
    } else if (t.kind == "incast") {
        const std::uint32_t n = t.incast_hosts;
        for (std::uint32_t i = 0; i < n; ++i)
            topo.add_node("h" + std::to_string(i), node_kind::HOST, 1);
        const auto tor = topo.add_node("tor", node_kind::SWITCH, n, "tor");
        for (std::uint32_t i = 0; i < n; ++i) link(i, 0, tor, i, host_rate, "topology.incast");
    } else if (t.kind == "leaf_spine") {
        const std::uint32_t n_leaves = t.leaves, n_spines = t.spines, per_leaf = t.hosts_per_leaf;
        const std::uint64_t fr = t.fabric_rate.value_or(host_rate);
        for (std::uint32_t i = 0; i < n_leaves * per_leaf; ++i)
            topo.add_node("h" + std::to_string(i), node_kind::HOST, 1);
        std::vector<std::uint32_t> leaf, spine;
        for (std::uint32_t i = 0; i < n_leaves; ++i)
            leaf.push_back(topo.add_node("leaf" + std::to_string(i), node_kind::SWITCH,
                                         per_leaf + n_spines, "leaf"));
        for (std::uint32_t j = 0; j < n_spines; ++j)
            spine.push_back(
                topo.add_node("spine" + std::to_string(j), node_kind::SWITCH, n_leaves, "spine"));
        for (std::uint32_t i = 0; i < n_leaves; ++i) {
            for (std::uint32_t k = 0; k < per_leaf; ++k)
                link(i * per_leaf + k, 0, leaf[i], k, host_rate, "topology.leaf_spine");
            for (std::uint32_t j = 0; j < n_spines; ++j)
                link(leaf[i], per_leaf + j, spine[j], i, fr, "topology.leaf_spine");
        }
    } else if (t.kind == "fat_tree") {
        const fat_tree_shape s = fat_tree_shape_of(t);
        const std::uint64_t fr = t.ft_fabric_rate.value_or(host_rate);
        const std::uint32_t tors = s.pods * s.tors_per_pod, aggs = s.pods * s.aggs_per_pod,
                            cores = s.aggs_per_pod * s.agg_uplinks;
        const std::string key = "topology.fat_tree";
        // Down ports of the aggregation switch j of a pod: the ToR uplinks that reach it.
        std::vector<std::uint32_t> agg_down(s.aggs_per_pod, 0);
        for (std::uint32_t r = 0; r < s.tors_per_pod; ++r)
            for (std::uint32_t i = 0; i < s.tor_uplinks; ++i)
                ++agg_down[(r * s.tor_uplinks + i) % s.aggs_per_pod];
        for (std::uint32_t i = 0; i < tors * s.hosts_per_tor; ++i)
            topo.add_node("h" + std::to_string(i), node_kind::HOST, 1);
        std::vector<std::uint32_t> tor, agg, core;
        for (std::uint32_t i = 0; i < tors; ++i)
            tor.push_back(topo.add_node("tor" + std::to_string(i), node_kind::SWITCH,
                                        s.hosts_per_tor + s.tor_uplinks, "tor"));
        for (std::uint32_t i = 0; i < aggs; ++i)
            agg.push_back(topo.add_node("agg" + std::to_string(i), node_kind::SWITCH,
                                        agg_down[i % s.aggs_per_pod] + s.agg_uplinks, "agg"));
        for (std::uint32_t c = 0; c < cores; ++c)
            core.push_back(
                topo.add_node("core" + std::to_string(c), node_kind::SWITCH, s.pods, "core"));
        std::vector<std::uint32_t> next_down(aggs, 0);
        for (std::uint32_t p = 0; p < s.pods; ++p) {
            for (std::uint32_t r = 0; r < s.tors_per_pod; ++r) {
                const std::uint32_t i = p * s.tors_per_pod + r;
                for (std::uint32_t h = 0; h < s.hosts_per_tor; ++h)
                    link(i * s.hosts_per_tor + h, 0, tor[i], h, host_rate, key);
                for (std::uint32_t u = 0; u < s.tor_uplinks; ++u) {
                    const std::uint32_t g =
                        p * s.aggs_per_pod + (r * s.tor_uplinks + u) % s.aggs_per_pod;
                    link(tor[i], s.hosts_per_tor + u, agg[g], next_down[g]++, fr, key);
                }
            }
            for (std::uint32_t j = 0; j < s.aggs_per_pod; ++j)
                for (std::uint32_t u = 0; u < s.agg_uplinks; ++u)
                    link(agg[p * s.aggs_per_pod + j], agg_down[j] + u, core[j * s.agg_uplinks + u],
                         p, fr, key);
        }
    } else if (t.kind == "parking_lot") {
        // s0 - s1 - ... - s(n-1); hosts s<i>_h<k> on ports 0..m-1; port m to the right
        // neighbour, port m+1 (port m on the last switch) to the left one.
        const std::uint32_t n = t.pl_switches, m = t.pl_hosts;
        const std::string key = "topology.parking_lot";
        std::vector<std::uint32_t> sw;
        for (std::uint32_t i = 0; i < n; ++i)
            for (std::uint32_t k = 0; k < m; ++k)
                topo.add_node("s" + std::to_string(i) + "_h" + std::to_string(k), node_kind::HOST,
                              1);
        for (std::uint32_t i = 0; i < n; ++i)
            sw.push_back(topo.add_node("s" + std::to_string(i), node_kind::SWITCH,
                                       m + (i == 0 || i + 1 == n ? 1 : 2), "chain"));
        for (std::uint32_t i = 0; i < n; ++i)
            for (std::uint32_t k = 0; k < m; ++k) link(i * m + k, 0, sw[i], k, host_rate, key);
        for (std::uint32_t i = 0; i + 1 < n; ++i) {
            link(sw[i], m, sw[i + 1], i + 1 == n - 1 ? m : m + 1, t.pl_rate.value_or(host_rate),
                 key + ".chain_rate");
            if (t.pl_delay) topo.links.back().cfg.propagation = *t.pl_delay;
        }
    } else if (t.kind == "multi_dc") {
        build_multi_dc(sc, t, delay);
    } else {
        auto add = [&](const custom_node& n, node_kind kind) {
            if (topo.find(n.name) >= 0)
                throw config_error(n.at + ".name", "duplicate node name '" + n.name + "'");
            topo.add_node(n.name, kind, kind == node_kind::HOST ? 1 : n.ports, n.role);
        };
        for (const auto& h : t.hosts) add(h, node_kind::HOST);
        for (const auto& s : t.switches) add(s, node_kind::SWITCH);
        for (const auto& l : t.links) {
            link_desc d;
            d.key = l.at;
            d.a = topo.parse_endpoint(l.a, l.at + ".a");
            d.b = topo.parse_endpoint(l.b, l.at + ".b");
            d.cfg.rate_bps = l.rate.value_or(host_rate);
            d.cfg.propagation = l.cable_length ? phy::cable_propagation(*l.cable_length)
                                : l.delay      ? *l.delay
                                               : delay;
            topo.links.push_back(d);
        }
    }
}

// ---------------------------------------------------------------- phy.*

/// A scheduled link event (phy.faults[]): down from `down_at` to `up_at`, or a rate step at
/// `at` (a LAG member lost or restored) on one or both directions.
struct link_fault {
    std::string port;
    std::optional<ps_t> down_at, up_at, at;
    std::optional<std::uint64_t> rate;
    std::string direction;
    std::string where;  ///< config path for errors
};

/// The `phy:` section: settings of every link (defaults by link rate where absent) and faults.
struct phy_params {
    std::string fec;
    std::optional<ps_t> encoding_latency, fec_latency;
    double ber = 0;
    std::vector<link_fault> faults;

    static const param_table<phy_params>& params();
};

const param_table<phy_params>& phy_params::params() {
    static const param_table<link_fault> fault = [] {
        param_table<link_fault> t;
        t.add("port", value_kind::STRING, "", "Either end of the link ('sw0:3' or a host name)",
              &link_fault::port);
        t.add("down_at", value_kind::TIME, "Link goes down (with up_at)", &link_fault::down_at);
        t.add("up_at", value_kind::TIME, "Link comes back", &link_fault::up_at);
        t.add("at", value_kind::TIME, "Rate step: when the link's rate changes (with rate)",
              &link_fault::at);
        t.add("rate", value_kind::BIT_RATE,
              "Rate step: the link's rate from `at` on (e.g. a LAG member lost: 10Gbps -> 1Gbps)",
              &link_fault::rate);
        auto& dir = t.add("direction", value_kind::CHOICE, "both",
                          "Rate step: both directions, to_port (the direction that `port` "
                          "receives on) or from_port (the one it transmits on)",
                          &link_fault::direction);
        dir.choices = {"both", "to_port", "from_port"};
        return t;
    }();
    static const param_table<phy_params> table = [] {
        param_table<phy_params> t;
        auto& fec = t.add("fec", value_kind::CHOICE, "auto",
                          "FEC: auto (none up to 10G and at 40G, RS(528,514) at 25/50/100G, "
                          "RS(544,514) at 200/400G), "
                          "none, rs528, rs544",
                          &phy_params::fec);
        fec.choices = {"auto", "none", "rs528", "rs544"};
        t.add("encoding_latency", value_kind::TIME,
              "PCS/PMA latency one way (default by rate: 200ns at 1G, 60ns at 10G, 40ns above)",
              &phy_params::encoding_latency);
        t.add("fec_latency", value_kind::TIME,
              "FEC latency one way (default: 100ns rs528, 120ns rs544)", &phy_params::fec_latency);
        auto& ber = t.add("ber", value_kind::REAL, "0",
                          "Post-FEC bit error rate of every link (seeded)", &phy_params::ber);
        ber.min = 0;
        ber.max = 1e-2;
        t.list<link_fault>(
            "faults", "", "Scheduled link down/up events and rate steps", fault,
            [](phy_params& p, link_fault&& f, const config_node& n) {
                const bool outage = f.down_at || f.up_at, step = f.at || f.rate;
                if (outage && step)
                    n.fail(f.at ? "at" : "rate",
                           "a fault is either an outage (down_at/up_at) or a rate step "
                           "(at/rate), not both");
                if (!outage && !step)
                    n.fail("down_at", "missing: give down_at and up_at, or at and rate");
                if (outage) {
                    if (!f.down_at) n.fail("down_at", "missing (up_at is given)");
                    if (!f.up_at) n.fail("up_at", "missing (down_at is given)");
                    if (*f.up_at <= *f.down_at) n.fail("up_at", "must be after down_at");
                    if (n.has("direction")) n.fail("direction", "only a rate step has a direction");
                } else {
                    if (!f.at) n.fail("at", "missing (rate is given)");
                    if (!f.rate) n.fail("rate", "missing (at is given)");
                    if (*f.rate == 0) n.fail("rate", "must be positive");
                }
                f.where = n.display_path();
                p.faults.push_back(std::move(f));
            });
        return t;
    }();
    return table;
}

void apply_phy(scenario& sc, const phy_params& phy) {
    for (auto& l : sc.topo.links) {
        auto& c = l.cfg;
        c.fec = phy.fec == "auto"    ? phy::default_fec(c.rate_bps)
                : phy.fec == "rs528" ? phy::fec_mode::RS_528_514
                : phy.fec == "rs544" ? phy::fec_mode::RS_544_514
                                     : phy::fec_mode::NONE;
        c.encoding_latency =
            phy.encoding_latency.value_or(phy::default_encoding_latency(c.rate_bps));
        c.fec_latency = phy.fec_latency.value_or(phy::default_fec_latency(c.fec, c.rate_bps));
        c.ber = l.ber.value_or(phy.ber);
    }
    for (const auto& f : phy.faults) {
        const endpoint e = sc.topo.parse_endpoint(f.port, f.where + ".port");
        const int li = sc.topo.link_at(e.node, e.port);
        if (li < 0)
            throw config_error(f.where + ".port", "no link is attached to '" + f.port + "'");
        link_desc& l = sc.topo.links[static_cast<std::size_t>(li)];
        if (f.down_at) {
            l.cfg.down.push_back({*f.down_at, *f.up_at});
            continue;
        }
        // Bit 0: a->b, bit 1: b->a. `port` receives on the direction towards it.
        const bool is_a = l.a.node == e.node && l.a.port == e.port;
        const std::uint8_t towards = is_a ? 2 : 1;
        const std::uint8_t dirs = f.direction == "to_port"     ? towards
                                  : f.direction == "from_port" ? std::uint8_t(3 - towards)
                                                               : std::uint8_t(3);
        l.cfg.rate_steps.push_back({*f.at, *f.rate, dirs});
    }
    for (auto& l : sc.topo.links) {
        std::sort(l.cfg.down.begin(), l.cfg.down.end());
        std::stable_sort(l.cfg.rate_steps.begin(), l.cfg.rate_steps.end());
        l.cfg.validate(l.key);
    }
}

// ---------------------------------------------------------------- switch_profiles, nic_profiles

/// One `switch_profiles[]` / `nic_profiles[]` entry: its name, the devices it selects, and the
/// device keys it lays over the default section.
struct profile_rule {
    std::string name;
    std::vector<std::string> nodes;  ///< node names or glob patterns
    std::vector<std::string> roles;
    YAML::Node body;  ///< the entry without name/nodes/roles
    std::string at;
};

struct profile_rules {
    std::vector<profile_rule> switches, nics;

    static const param_table<profile_rules>& params();
};

const param_table<profile_rule>& profile_rule_params(bool is_switch) {
    auto make = [](bool sw) {
        const std::string dev = sw ? "switch" : "host";
        param_table<profile_rule> t;
        t.add("name", value_kind::STRING, "",
              std::string("Profile name (the summary shows it per ") + dev + "; 'default' is the " +
                  (sw ? "`switch:`" : "`nic:`") + " section)",
              &profile_rule::name);
        t.add("nodes", value_kind::STRING_LIST, "",
              sw ? "Switches this profile applies to, by name or glob pattern ('leaf*', "
                   "'spine[01]')"
                 : "Hosts whose NIC uses this profile, by name or glob pattern ('h1*')",
              &profile_rule::nodes)
            .optional = true;
        t.add("roles", value_kind::STRING_LIST, "",
              sw ? "Switches this profile applies to, by role: leaf and spine (leaf_spine), tor, "
                   "agg and core (fat_tree), tor (incast), chain (parking_lot), leaf, spine and "
                   "border (multi_dc), or topology.switches[].role"
                 : "Hosts whose NIC uses this profile, by topology.hosts[].role",
              &profile_rule::roles)
            .optional = true;
        return t;
    };
    static const param_table<profile_rule> switches = make(true), nics = make(false);
    return is_switch ? switches : nics;
}

const param_table<profile_rules>& profile_rules::params() {
    static const param_table<profile_rules> table = [] {
        param_table<profile_rules> t;
        auto keep = [](std::vector<profile_rule> profile_rules::*list) {
            return [list](profile_rules& r, profile_rule&& e, const config_node& n) {
                e.at = n.display_path();
                e.body = YAML::Node(YAML::NodeType::Map);
                for (const auto& kv : n.yaml()) {
                    const std::string key = kv.first.Scalar();
                    if (key != "name" && key != "nodes" && key != "roles") e.body[key] = kv.second;
                }
                (r.*list).push_back(std::move(e));
            };
        };
        t.list<profile_rule>(
            "switch_profiles", "",
            "Switch profiles: each entry has a name, selects switches (nodes, roles, or "
            "topology.switches[].profile) and overrides any switch.* key; the rest comes from "
            "`switch:`",
            profile_rule_params(true), keep(&profile_rules::switches));
        t.list<profile_rule>("nic_profiles", "",
                             "NIC profiles: each entry has a name, selects hosts (nodes, roles, or "
                             "topology.hosts[].profile) and overrides any nic.* key; the rest "
                             "comes from `nic:`",
                             profile_rule_params(false), keep(&profile_rules::nics));
        return t;
    }();
    return table;
}

/// A profile rule at `at` whose `nodes` pattern matches no `dev` ("switch", "host").
config_error no_match(const std::string& at, const std::string& pattern, const std::string& dev) {
    return config_error(at + ".nodes", "'" + pattern + "' matches no " + dev);
}

/// A profile rule at `at` that selects a role no `dev` has (`roles`: the roles there are).
config_error unknown_role(const std::string& at, const std::string& role, const std::string& dev,
                          const std::set<std::string>& roles) {
    std::string known;
    for (const auto& k : roles) known += (known.empty() ? "" : ", ") + k;
    return config_error(at + ".roles", "no " + dev + " has role '" + role + "' (roles here: " +
                                           (known.empty() ? "none" : known) + ")");
}

/// Gives every node of `kind` its profile index (0 = default) in sc.profile_of_node. `custom`
/// are the custom topology's nodes of that kind (their `profile` keys).
void assign_profiles(scenario& sc, const std::vector<profile_rule>& rules, node_kind kind,
                     const std::vector<custom_node>& custom) {
    const bool is_sw = kind == node_kind::SWITCH;
    const std::string dev = is_sw ? "switch" : "host";
    std::vector<std::string> owner(sc.topo.nodes.size());  // key that selected the node
    auto claim = [&](std::uint32_t node, std::uint32_t profile, const std::string& key) {
        if (!owner[node].empty() && sc.profile_of_node[node] != profile)
            throw config_error(key, dev + " '" + sc.topo.nodes[node].name +
                                        "' is also selected by " + owner[node] + " (a " + dev +
                                        " takes one profile)");
        sc.profile_of_node[node] = profile;
        owner[node] = key;
    };
    std::set<std::string> roles_here;
    for (const auto& n : sc.topo.nodes)
        if (n.kind == kind && !n.role.empty()) roles_here.insert(n.role);
    for (std::uint32_t i = 0; i < rules.size(); ++i) {
        const profile_rule& r = rules[i];
        for (const auto& pattern : r.nodes) {
            bool any = false;
            for (std::uint32_t n = 0; n < sc.topo.nodes.size(); ++n)
                if (sc.topo.nodes[n].kind == kind &&
                    fnmatch(pattern.c_str(), sc.topo.nodes[n].name.c_str(), 0) == 0) {
                    claim(n, i + 1, r.at + ".nodes");
                    any = true;
                }
            if (!any) throw no_match(r.at, pattern, dev);
        }
        for (const auto& role : r.roles) {
            if (!roles_here.count(role)) throw unknown_role(r.at, role, dev, roles_here);
            for (std::uint32_t n = 0; n < sc.topo.nodes.size(); ++n)
                if (sc.topo.nodes[n].kind == kind && sc.topo.nodes[n].role == role)
                    claim(n, i + 1, r.at + ".roles");
        }
    }
    for (const auto& c : custom) {
        if (c.profile.empty()) continue;
        std::uint32_t found = 0;
        std::string known;
        for (std::uint32_t i = 0; i < rules.size(); ++i) {
            if (rules[i].name == c.profile) found = i + 1;
            known += (known.empty() ? "" : ", ") + rules[i].name;
        }
        if (!found)
            throw config_error(c.at + ".profile",
                               "no " + std::string(is_sw ? "switch" : "nic") + " profile named '" +
                                   c.profile + "' (defined: " + (known.empty() ? "none" : known) +
                                   ")");
        claim(static_cast<std::uint32_t>(sc.topo.find(c.name)), found, c.at + ".profile");
    }
}

/// Loads the default section `section` and one configuration per rule (the rule's keys over
/// the default section), checking names.
/// `raw`: the section as written (a switch: section before its chip preset was laid under it),
/// so that a rule naming another chip starts from that chip (`expand`).
template <class CONFIG, class LOAD, class EXPAND>
std::vector<device_profile<CONFIG>> load_profiles(const config_node& top,
                                                  const std::string& section, const YAML::Node& raw,
                                                  const std::vector<profile_rule>& rules, LOAD load,
                                                  EXPAND expand) {
    std::vector<device_profile<CONFIG>> out;
    out.push_back({"default", load(top.child(section))});
    for (const auto& r : rules) {
        for (const auto& p : out)
            if (p.name == r.name)
                throw config_error(r.at + ".name",
                                   p.name == "default"
                                       ? "'default' names the `" + section + ":` section"
                                       : "a profile named '" + r.name + "' is defined before");
        const YAML::Node merged = expand(overlay(raw, r.body));
        out.push_back({r.name, load(config_node(scenario_schema(), merged, section, r.at))});
    }
    return out;
}

// ---------------------------------------------------------------- name, seed, host, results

/// The scenario's own keys. results.pcap stores names; their ports resolve once the topology
/// exists (resolve_pcap).
const param_table<scenario>& scenario_params() {
    static const param_table<scenario> table = [] {
        param_table<scenario> t;
        t.add("name", value_kind::STRING, "", "Scenario name (defaults to the file name)",
              [](scenario& sc, const config_value& v) {
                  if (!v.present()) return;
                  sc.name = v.str();
                  if (const std::string why = unsafe_name(sc.name); !why.empty())
                      v.fail(why + " (the name is the results folder's name: one path component)");
              })
            .optional = true;
        auto& seed = t.add("seed", value_kind::INT, "1",
                           "Run seed; every component derives its RNG from it and its name",
                           &scenario::seed);
        seed.min = 0;
        t.add("duration", value_kind::TIME, "1ms", "Simulated time", &scenario::duration).min =
            1000;
        t.add("host.lookahead", value_kind::TIME, "10us",
              "Open-loop sources post frames up to this far ahead (temporal decoupling; timestamps "
              "stay exact)",
              &scenario::host_lookahead)
            .max = 1e9;

        t.add("results.sample_interval", value_kind::TIME, "10us",
              "Time-series sampling interval for queue occupancy (0 = off)",
              &scenario::sample_interval);
        t.add("results.pcap", value_kind::STRING_LIST, "",
              "Ports whose transmitted frames go to <port>.pcap ('sw0:3', 'h1')",
              [](scenario& sc, const config_value& v) {
                  for (const auto& p : v.str_list()) sc.pcap.push_back({p, {}});
              })
            .optional = true;
        auto& snap =
            t.add("results.pcap_snaplen", value_kind::BYTES, "65535B",
                  "Bytes kept of each captured frame; longer frames are cut (incl_len < orig_len)",
                  [](scenario& sc, const config_value& v) {
                      sc.pcap_bounds.snaplen = static_cast<std::uint32_t>(v.bytes());
                  });
        snap.min = 14;
        snap.max = 262144;
        t.add("results.pcap_start", value_kind::TIME, "0s",
              "Capture frames whose first bit leaves at or after this time",
              [](scenario& sc, const config_value& v) { sc.pcap_bounds.start = v.time(); });
        t.add("results.pcap_stop", value_kind::TIME, "",
              "Capture frames whose first bit leaves before this time (default: the end of the "
              "run)",
              [](scenario& sc, const config_value& v) {
                  if (!v.present()) return;
                  sc.pcap_bounds.stop = v.time();
                  if (sc.pcap_bounds.stop <= sc.pcap_bounds.start)
                      v.fail("must be later than results.pcap_start");
              })
            .optional = true;
        t.add("results.pcap_max_bytes", value_kind::BYTES, "1GiB",
              "Size cap of each pcap file: capture stops there, the summary counts the frames "
              "left out",
              [](scenario& sc, const config_value& v) { sc.pcap_bounds.max_bytes = v.bytes(); })
            .min = 1024;
        t.add("results.max_output_bytes", value_kind::BYTES, "4GiB",
              "Refuse a run whose results (time series, pcaps, traces, flow tables) are estimated "
              "larger",
              &scenario::max_output_bytes)
            .min = 1048576;  // below 1 MiB even a short run's tables would not fit
        t.add("results.flows_csv", value_kind::BOOL, "true", "Write flows.csv",
              &scenario::flows_csv);
        t.choice<scenario::detail_mode>(
            "results.detail", "auto",
            "Per-device and per-flow statistics: in summary.json (summary), or in CSV tables "
            "with aggregates and the top-N in the summary (csv); auto = csv above 1024 hosts",
            {{"auto", scenario::detail_mode::AUTO},
             {"summary", scenario::detail_mode::SUMMARY},
             {"csv", scenario::detail_mode::CSV}},
            &scenario::detail);
        auto& top_n = t.add("results.top_n", value_kind::INT, "10",
                            "Rows of each top-N list in summary.json with results.detail: csv",
                            &scenario::top_n);
        top_n.min = 1;
        top_n.max = 100000;
        // Read by the Python front end, which converts the tables after the run.
        t.add("results.format", value_kind::CHOICE, "csv",
              "Tables as csv, or parquet (converted from CSV by the Python front end after the "
              "run)",
              [](scenario&, const config_value&) {})
            .choices = {"csv", "parquet"};
        t.add("results.vcd", value_kind::STRING_LIST, "",
              "Time-series columns (names as in timeseries.csv's header, globs * ? [...]) also "
              "written to trace.vcd, an IEEE 1364 VCD sampled with the time series",
              [](scenario& sc, const config_value& v) {
                  const std::vector<std::string> l = v.str_list();
                  for (std::size_t i = 0; i < l.size(); ++i)
                      if (l[i].empty() || l[i].find_first_not_of(' ') == std::string::npos)
                          throw config_error(
                              "results.vcd[" + std::to_string(i) + "]",
                              "is empty: name a time-series column, e.g. 'leaf0.p3_frame_bytes'");
                  sc.vcd = l;
              })
            .optional = true;
        t.add("results.per_queue_series", value_kind::BOOL, "true",
              "timeseries.csv also has one column per egress queue (when switch.queues > 1)",
              &scenario::per_queue_series);
        return t;
    }();
    return table;
}

void resolve_pcap(scenario& sc) {
    if (!sc.vcd.empty() && sc.sample_interval == 0)
        throw config_error("results.vcd",
                           "needs results.sample_interval > 0: trace.vcd is sampled with the time "
                           "series");
    for (auto& p : sc.pcap) {
        p.at = sc.topo.parse_endpoint(p.name, "results.pcap");
        if (sc.topo.link_at(p.at.node, p.at.port) < 0)
            throw config_error("results.pcap", "no link is attached to '" + p.name + "'");
    }
}
// ---------------------------------------------------------------- tcp.*

/// Congestion controls by name: tcp.cc and the `cc` of a flow or group.
std::vector<std::pair<std::string, host::cc_kind>> cc_names() {
    return {{"newreno", host::cc_kind::NEWRENO},
            {"ecn", host::cc_kind::ECN_STAR},
            {"dctcp", host::cc_kind::DCTCP},
            {"cubic", host::cc_kind::CUBIC},
            {"gemini", host::cc_kind::GEMINI}};
}

/// The `tcp:` section: the scenario-wide TCP options (relations between keys: check_tcp).
const param_table<host::tcp_options>& tcp_params() {
    static const param_table<host::tcp_options> table = [] {
        using opts = host::tcp_options;
        param_table<opts> t;
        t.choice<host::cc_kind>("cc", "newreno",
                                "Congestion control: newreno (RFC 5681/6582), ecn (ECN*: NewReno "
                                "halving once per window on ECE, RFC 3168), dctcp (seed-000 §1.3), "
                                "cubic (RFC 8312), gemini (seed-002 Algorithm 1, tcp.gemini.*)",
                                cc_names(), [](opts& o, host::cc_kind k) { o.cc.kind = k; });
        auto& mss = t.add("mss", value_kind::BYTES, "1460B",
                          "Segment payload; packets are mss + 40 B of IP/TCP headers",
                          [](opts& o, const config_value& v) {
                              o.cc.mss = static_cast<std::uint32_t>(v.bytes());
                          });
        mss.min = 64;
        mss.max = 8960;
        auto& iw =
            t.add("initial_window", value_kind::INT, "10", "Initial window in segments (RFC 6928)",
                  [](opts& o, const config_value& v) {
                      o.cc.initial_window_segments = static_cast<std::uint32_t>(v.integer());
                  });
        iw.min = 1;
        iw.max = 10000;
        auto& abc = t.add("abc_limit", value_kind::INT, "2",
                          "Slow start grows cwnd by the bytes an ACK covers, at most this many "
                          "segments per ACK (RFC 3465 L; Linux has no limit: stretch ACKs from "
                          "GRO or LRO then count in full)",
                          [](opts& o, const config_value& v) {
                              o.cc.abc_limit_segments = static_cast<std::uint32_t>(v.integer());
                          });
        abc.min = 1;
        abc.max = 1 << 20;
        t.add("initial_ssthresh", value_kind::BYTES, "0B",
              "Initial slow-start threshold (0 = unlimited)",
              [](opts& o, const config_value& v) { o.cc.initial_ssthresh_bytes = v.bytes(); });
        t.add("rwnd", value_kind::BYTES, "6MiB",
              "Receive window: flight never exceeds it (Linux tcp_rmem max)",
              [](opts& o, const config_value& v) { o.sender.rwnd = v.bytes(); })
            .min = 64;
        t.add("min_rto", value_kind::TIME, "10ms",
              "Minimum retransmission timeout (seed-000: 10 ms in the DCTCP experiments, 300 ms "
              "production)",
              [](opts& o, const config_value& v) { o.rtt.min_rto = v.time(); })
            .min = 1;
        t.add("initial_rto", value_kind::TIME, "1s", "RTO before the first RTT sample (RFC 6298)",
              [](opts& o, const config_value& v) { o.rtt.initial_rto = v.time(); })
            .min = 1;
        t.add("max_rto", value_kind::TIME, "60s", "Upper limit of the backed-off RTO",
              [](opts& o, const config_value& v) { o.rtt.max_rto = v.time(); })
            .min = 1;
        auto& dt = t.add("dupack_threshold", value_kind::INT, "3",
                         "Duplicate ACKs that trigger fast retransmit",
                         [](opts& o, const config_value& v) {
                             o.sender.dupack_threshold = static_cast<std::uint32_t>(v.integer());
                         });
        dt.min = 1;
        dt.max = 100;
        t.add(
            "sack", value_kind::BOOL, "true",
            "SACK (RFC 2018) with RFC 6675 loss recovery; false = NewReno recovery only (RFC 6582)",
            [](opts& o, const config_value& v) { o.sender.sack = o.receiver.sack = v.boolean(); });
        t.add(
            "idle_restart", value_kind::BOOL, "true",
            "After an idle period longer than the RTO, cwnd = min(cwnd, initial window) (RFC 5681 "
            "§4.1; Linux default)",
            [](opts& o, const config_value& v) { o.sender.idle_restart = v.boolean(); });
        t.add(
            "early_retransmit", value_kind::BOOL, "true",
            "RFC 5827 early retransmit: with fewer than 4 segments outstanding and nothing new to "
            "send, oseg-1 duplicate ACKs start recovery (Linux default)",
            [](opts& o, const config_value& v) { o.sender.early_retransmit = v.boolean(); });
        auto& ae = t.add("ack_every", value_kind::INT, "2",
                         "Receiver ACKs every m-th in-order segment (1 = every one)",
                         [](opts& o, const config_value& v) {
                             o.receiver.ack_every = static_cast<std::uint32_t>(v.integer());
                         });
        ae.min = 1;
        ae.max = 64;
        t.add("delayed_ack_timeout", value_kind::TIME, "1ms",
              "Delayed-ACK timer; kept below tcp.min_rto so it cannot cause spurious timeouts",
              [](opts& o, const config_value& v) { o.receiver.delayed_ack_timeout = v.time(); })
            .min = 1;
        auto& g =
            t.add("dctcp.g", value_kind::REAL, "0.0625", "DCTCP alpha gain g (seed-000: 1/16)",
                  [](opts& o, const config_value& v) { o.cc.dctcp_g = v.real(); });
        g.min = 1e-6;
        g.max = 1;
        auto& a0 =
            t.add("dctcp.initial_alpha", value_kind::REAL, "1",
                  "DCTCP alpha before the first window (Linux: 1)",
                  [](opts& o, const config_value& v) { o.cc.dctcp_initial_alpha = v.real(); });
        a0.min = 0;
        a0.max = 1;
        t.add("dctcp.rtt_fair", value_kind::BOOL, "false",
              "RTT-fair DCTCP (seed-000 eq. 3.35): W <- W + 1/W - alpha/2 per marked ACK",
              [](opts& o, const config_value& v) { o.cc.rtt_fair = v.boolean(); });
        auto& b = t.add("cubic.beta", value_kind::REAL, "0.7",
                        "CUBIC multiplicative decrease (RFC 8312 and Linux: 0.7)",
                        [](opts& o, const config_value& v) { o.cc.cubic_beta = v.real(); });
        b.min = 0.01;
        b.max = 0.99;
        auto& c =
            t.add("cubic.c", value_kind::REAL, "0.4", "CUBIC C in segments/s^3 (RFC 8312: 0.4)",
                  [](opts& o, const config_value& v) { o.cc.cubic_c = v.real(); });
        c.min = 1e-6;
        c.max = 1e6;
        t.add("cubic.fast_convergence", value_kind::BOOL, "true",
              "CUBIC fast convergence (RFC 8312 §4.6)",
              [](opts& o, const config_value& v) { o.cc.cubic_fast_convergence = v.boolean(); });
        t.add("cubic.tcp_friendly", value_kind::BOOL, "true",
              "CUBIC TCP-friendly region (RFC 8312 §4.2)",
              [](opts& o, const config_value& v) { o.cc.cubic_tcp_friendly = v.boolean(); });
        t.add("cubic.hystart", value_kind::BOOL, "true",
              "CUBIC ends slow start by HyStart (Linux tcp_cubic: ACK train and delay "
              "increase; the Linux and ns-3 default)",
              [](opts& o, const config_value& v) { o.cc.cubic_hystart = v.boolean(); });
        t.add("cubic.ecn", value_kind::BOOL, "false",
              "CUBIC flows are ECN-capable and treat ECE as loss",
              [](opts& o, const config_value& v) { o.cc.cubic_ecn = v.boolean(); });
        auto& gc = t.add("gemini.capacity", value_kind::BIT_RATE, "",
                         "GEMINI C of F and h, the bottleneck capacity (absent: the sender's "
                         "line rate)",
                         [](opts& o, const config_value& v) {
                             if (v.present()) o.cc.gemini.capacity_bps = v.rate();
                         });
        gc.min = 1e6;
        gc.optional = true;
        auto& gk = t.add("gemini.k", value_kind::BYTES, "",
                         "GEMINI K of F = 4K/(C RTT_base + K), the DCN switches' ECN threshold "
                         "(absent: 50 packets of 1500 B per Gb/s of C, Table 3.4)",
                         [](opts& o, const config_value& v) {
                             if (v.present()) o.cc.gemini.k_bytes = v.bytes();
                         });
        gk.min = 1;
        gk.optional = true;
        t.add("gemini.t", value_kind::TIME, "5ms",
              "GEMINI T: WAN congestion when RTT_min > RTT_base + T (Table 3.4)",
              [](opts& o, const config_value& v) { o.cc.gemini.t = v.time(); })
            .min = 0;
        auto& gb = t.add("gemini.beta", value_kind::REAL, "0.2",
                         "GEMINI beta: the cut on WAN congestion and on loss (Table 3.4)",
                         [](opts& o, const config_value& v) { o.cc.gemini.beta = v.real(); });
        gb.min = 0.001;
        gb.max = 0.999;
        auto& gh = t.add("gemini.h_scale", value_kind::REAL, "1.2e-7",
                         "GEMINI H of h = H C RTT_base (C in bit/s, RTT in s; Table 3.4)",
                         [](opts& o, const config_value& v) { o.cc.gemini.h_scale = v.real(); });
        gh.min = 1e-15;
        gh.max = 1;
        auto& hmin = t.add("gemini.h_min", value_kind::REAL, "0.1",
                           "Lower bound of h, MSS per RTT (the thesis' protection)",
                           [](opts& o, const config_value& v) { o.cc.gemini.h_min = v.real(); });
        hmin.min = 1e-6;
        hmin.max = 1e6;
        auto& hmax = t.add("gemini.h_max", value_kind::REAL, "5",
                           "Upper bound of h, MSS per RTT (the thesis' protection)",
                           [](opts& o, const config_value& v) { o.cc.gemini.h_max = v.real(); });
        hmax.min = 1e-6;
        hmax.max = 1e6;
        auto& gf = t.add("gemini.f", value_kind::REAL, "",
                         "A fixed F instead of 4K/(C RTT_base + K) (absent: computed), for "
                         "Theorem 3.3.1 sweeps",
                         [](opts& o, const config_value& v) {
                             if (v.present()) o.cc.gemini.f = v.real();
                         });
        gf.min = 1e-6;
        gf.max = 1e6;
        gf.optional = true;
        auto& gmc = t.add("gemini.max_cut", value_kind::REAL, "0.5",
                          "Largest fraction of cwnd one cut removes (the thesis has no clamp; "
                          "alpha F may exceed 1 when K > C RTT/3)",
                          [](opts& o, const config_value& v) { o.cc.gemini.max_cut = v.real(); });
        gmc.min = 0.001;
        gmc.max = 1;
        t.add("gemini.rtt_base_window", value_kind::TIME, "0s",
              "RTT_base is the minimum over the last 1-2 windows of this length (0: over the "
              "whole connection; the thesis says only \"a long time\")",
              [](opts& o, const config_value& v) { o.cc.gemini.rtt_base_window = v.time(); })
            .min = 0;
        t.add("gemini.hystart", value_kind::BOOL, "false",
              "GEMINI flows end slow start by HyStart (as cubic.hystart; the thesis does not "
              "describe GEMINI's slow start)",
              [](opts& o, const config_value& v) { o.cc.gemini.hystart = v.boolean(); });
        auto& noise = t.add(
            "gemini.rtt_noise", value_kind::TIME, "0s",
            "Adds U[0, this] to every RTT sample GEMINI sees (RTT_min, RTT_base), as the thesis' "
            "Table 3.5 added estimation errors in its kernel module (0: off)",
            [](opts& o, const config_value& v) { o.cc.gemini.rtt_noise = v.time(); });
        noise.min = 0;
        noise.max = 1e12;
        t.add("gemini.pacing", value_kind::BOOL, "true",
              "GEMINI flows are paced on a NIC rate limiter at ratio x cwnd / srtt",
              [](opts& o, const config_value& v) { o.cc.gemini.pacing = v.boolean(); });
        auto& pss =
            t.add("gemini.pacing_ss_ratio", value_kind::REAL, "2",
                  "Pacing rate / (cwnd / srtt) in slow start (Linux tcp_pacing_ss_ratio 200 %)",
                  [](opts& o, const config_value& v) { o.cc.gemini.pacing_ss_ratio = v.real(); });
        pss.min = 0.01;
        pss.max = 100;
        auto& pca =
            t.add("gemini.pacing_ca_ratio", value_kind::REAL, "1.2",
                  "Pacing rate / (cwnd / srtt) after slow start (Linux tcp_pacing_ca_ratio 120 %)",
                  [](opts& o, const config_value& v) { o.cc.gemini.pacing_ca_ratio = v.real(); });
        pca.min = 0.01;
        pca.max = 100;
        return t;
    }();
    return table;
}

/// The relations between tcp.* keys (`t` is the `tcp:` section).
void check_tcp(const host::tcp_options& o, const config_node& t) {
    if (o.rtt.max_rto < o.rtt.min_rto)
        t.fail("max_rto", "is below tcp.min_rto (" + format_time(o.rtt.min_rto) + ")");
    if (o.rtt.initial_rto < o.rtt.min_rto || o.rtt.initial_rto > o.rtt.max_rto)
        t.fail("initial_rto", "must lie between tcp.min_rto and tcp.max_rto");
    if (o.sender.rwnd < o.cc.mss) t.fail("rwnd", "is smaller than one segment (tcp.mss)");
    if (o.cc.gemini.h_min > o.cc.gemini.h_max)
        t.fail("gemini.h_min",
               "is above tcp.gemini.h_max (" + std::to_string(o.cc.gemini.h_max) + ")");
}

// ---------------------------------------------------------------- roce.*

/// The `roce:` section: queue-pair parameters of every RoCE flow (DCQCN is the NICs', nic.dcqcn).
const param_table<host::roce_params>& roce_params_table() {
    static const param_table<host::roce_params> table = [] {
        using rp = host::roce_params;
        param_table<rp> t;
        t.choice<std::uint32_t>(
            "mtu", "1024",
            "IB path MTU: payload bytes per packet (RoCE packets add 58 B of "
            "Ethernet/IP/UDP/BTH/ICRC headers and the FCS)",
            {{"256", 256}, {"512", 512}, {"1024", 1024}, {"2048", 2048}, {"4096", 4096}}, &rp::mtu);
        auto& ae = t.add("ack_every", value_kind::INT, "1",
                         "Responder ACKs every n-th in-order packet and each message's last",
                         [](rp& o, const config_value& v) {
                             o.ack_every = static_cast<std::uint32_t>(v.integer());
                         });
        ae.min = 1;
        ae.max = 1024;
        t.add("timeout", value_kind::TIME, "1ms",
              "Requester retransmission timeout (go-back-N from the oldest unacknowledged PSN); "
              "IB: 4.096us x 2^local_ack_timeout",
              [](rp& o, const config_value& v) { o.timeout = v.time(); })
            .min = 1;
        return t;
    }();
    return table;
}

// ---------------------------------------------------------------- xpass.*

/// The `xpass:` section: ExpressPass parameters of every xpass flow (ns2-xpass defaults).
const param_table<host::xpass_params>& xpass_params_table() {
    static const param_table<host::xpass_params> table = [] {
        using xp = host::xpass_params;
        param_table<xp> t;
        auto unit = [&t](const char* key, const char* def, const char* help, double xp::*m,
                         double lo, double hi) {
            auto& p = t.add(key, value_kind::REAL, def, help,
                            [m](xp& o, const config_value& v) { o.*m = v.real(); });
            p.min = lo;
            p.max = hi;
        };
        unit("alpha", "0.5", "Initial credit rate as a share of the maximum (alpha_)", &xp::alpha,
             1e-6, 1);
        unit("w_init", "0.5", "Initial aggressiveness w (w_init_; ns2 large-scale scripts: 0.0625)",
             &xp::w_init, 1e-6, 1);
        unit("w_min", "0.01", "Lowest w (min_w_)", &xp::w_min, 1e-6, 1);
        unit("w_max", "0.5", "Highest w", &xp::w_max, 1e-6, 1);
        unit("target_loss", "0.125",
             "Target credit loss near zero rate: target = (1 - rate/max) x this "
             "(target_loss_scaling_)",
             &xp::target_loss_scaling, 0, 1);
        unit("jitter", "0.1", "Credit gap x (1 + U(-jitter, +jitter))", &xp::jitter, 0, 0.99);
        unit("max_rate", "0.051787916152897656",
             "Highest credit rate as a share of the receiver's link (84/(84+1538))",
             &xp::max_rate_ratio, 1e-6, 1);
        auto bytes32 = [](std::uint32_t xp::*m) {
            return
                [m](xp& o, const config_value& v) { o.*m = static_cast<std::uint32_t>(v.bytes()); };
        };
        auto& cmin = t.add("credit_min", value_kind::BYTES, "84B",
                           "Smallest credit on the wire (84 B: a minimum Ethernet frame)",
                           bytes32(&xp::credit_min_bytes));
        cmin.min = 84;
        cmin.max = 1538;
        auto& cmax = t.add("credit_max", value_kind::BYTES, "84B",
                           "Largest credit on the wire; sizes are uniform in [credit_min, "
                           "credit_max] (ns2 large-scale scripts: 76-92 B, which Ethernet cannot "
                           "carry below 84 B)",
                           bytes32(&xp::credit_max_bytes));
        cmax.min = 84;
        cmax.max = 1538;
        t.add("retransmit_timeout", value_kind::TIME, "100us",
              "Credit request and NACK retry interval (retransmit_timeout_; ns2 scripts 100 us)",
              [](xp& o, const config_value& v) { o.retransmit_timeout = v.time(); })
            .min = 1;
        t.add("stop_timeout", value_kind::TIME, "1ms",
              "Credits still arriving this long after a CREDIT_STOP make the sender send it again",
              [](xp& o, const config_value& v) { o.stop_timeout = v.time(); })
            .min = 1;
        t.add("demand_known", value_kind::BOOL, "false",
              "The receiver knows each flow's size and sends one credit per data packet, then "
              "stops (seed-002 §2.5's data-crush set-up); false: it credits until the sender's "
              "CREDIT_STOP, wasting what is in flight (ns2-xpass)",
              [](xp& o, const config_value& v) { o.demand_known = v.boolean(); });
        auto& dscp = t.add("credit_dscp", value_kind::INT, "56",
                           "DSCP of credits (switch.qos maps it to switch.credit_queue.queue; "
                           "56 -> traffic class 7 by default)",
                           [](xp& o, const config_value& v) {
                               o.credit_dscp = static_cast<std::uint8_t>(v.integer());
                           });
        dscp.min = 0;
        dscp.max = 63;
        t.add("aeolus", value_kind::BOOL, "false",
              "Aeolus (ExpressPass*): each sized flow sends its first-RTT data at line rate "
              "before credits, non-ECT so switches drop it above their ECN step (non_ect: drop), "
              "then a probe; missing packets are resent on credits first",
              [](xp& o, const config_value& v) { o.aeolus = v.boolean(); });
        t.add("aeolus_first_rtt", value_kind::BYTES,
              "Aeolus: data bytes sent before credits (unset: one BDP, the NIC line rate x the "
              "path's idle RTT; at most the flow)",
              &xp::aeolus_first_rtt)
            .min = 1;
        return t;
    }();
    return table;
}

// ---------------------------------------------------------------- flashpass.*

/// The `flashpass:` section (seed-002 §1.4): every key optional, so that scenarios without
/// FlashPass echo no such section.
const param_table<host::flashpass_params>& flashpass_params_table() {
    static const param_table<host::flashpass_params> table = [] {
        using fp = host::flashpass_params;
        param_table<fp> t;
        t.add("t_wait", value_kind::TIME,
              "Required with transport: flashpass. The data packet of a credit leaves at T + "
              "t_wait, T the send time of its emulation packet; at least every FlashPass flow's "
              "idle round trip (a warning below it); a credit that comes later sends at once",
              &fp::t_wait)
            .min = 1;
        auto& lo = t.add("min_target", value_kind::REAL,
                         "Algorithm 2's min_target_loss (unset: 0.01): below it the emulation "
                         "rate grows x (1 + max_target)",
                         &fp::min_target);
        lo.min = 0;
        lo.max = 1;
        auto& hi = t.add("max_target", value_kind::REAL,
                         "Algorithm 2's max_target_loss (unset: 0.10): above it the rate is cut "
                         "to rate x (1 - loss) x (1 + min_target)",
                         &fp::max_target);
        hi.min = 0;
        hi.max = 0.99;
        t.add("over_provision", value_kind::BOOL,
              "Eq 4.2 over-provisioning (unset: false): once the emulation packets in flight x "
              "(1 - max_target) cover the remaining packets, further ones go non-ECT (dropped "
              "above switch.credit_queue.selective_drop); false: the sender pauses instead",
              &fp::over_provision);
        t.add("early_data", value_kind::BOOL,
              "FlashPass* (unset: false): each sized flow sends one BDP of first-RTT data at line "
              "rate before credits, non-ECT (dropped above the data queue's ECN step with "
              "non_ect: drop), then a probe; missing packets go on the next credits (Aeolus)",
              &fp::early_data);
        auto& batch = t.add("credit_batch", value_kind::INT,
                            "Delayed credit sending (unset: 1, off): the receiver holds a "
                            "credit while its data has time to wait (until T + t_wait/2) and "
                            "answers up to this many consecutive emulation packets with one "
                            "credit carrying their timestamps (84 B for one, 82 + 8n B for n)",
                            &fp::credit_batch);
        batch.min = 1;
        batch.max = host::flashpass_credit_batch::MAX;
        return t;
    }();
    return table;
}

void check_flashpass(const host::flashpass_params& o, const config_node& n) {
    if (o.min_target_loss() > o.max_target_loss())
        n.fail("min_target", "is larger than flashpass.max_target");
}

void check_xpass(const host::xpass_params& o, const config_node& n) {
    if (o.aeolus_first_rtt && !o.aeolus) n.fail("aeolus_first_rtt", "needs xpass.aeolus: true");
    if (o.credit_max_bytes < o.credit_min_bytes)
        n.fail("credit_max", "is smaller than xpass.credit_min");
    if (o.w_min > o.w_max) n.fail("w_min", "is larger than xpass.w_max");
    if (o.w_init < o.w_min || o.w_init > o.w_max)
        n.fail("w_init", "must lie between xpass.w_min and xpass.w_max");
}

/// The options of every transport that takes them, from their top-level sections.
struct transport_options {
    host::tcp_options tcp;
    host::roce_params roce;
    host::xpass_params xpass;
    host::flashpass_params flashpass;
};

// ---------------------------------------------------------------- traffic.*

/// An element of a traffic list; errors name its keys below `at` ("traffic.flows[2]").
struct list_entry {
    std::string at;

    [[noreturn]] void fail(const std::string& key, const std::string& reason) const {
        throw config_error(at + "." + key, reason);
    }
};

/// The keys explicit flows (traffic.flows[]) and flow patterns (traffic.generate[]) share, as
/// given. A key that applies to one transport only is listed when it is set (flow_key).
struct flow_keys : list_entry {
    host::flow_spec spec;  ///< what the keys set directly (process, packet size, start ...)
    std::optional<ps_t> stop;
    std::optional<host::cc_kind> cc;
    /// Set keys that apply to UDP, TCP, or TCP and RoCE flows only, in declaration order.
    std::vector<std::string> udp_only, tcp_only, reliable_only;
};

/// traffic.flows[]
struct explicit_flow : flow_keys {
    std::string src, dst;
};

/// traffic.generate[]
struct flow_pattern : flow_keys {
    host::traffic_pattern pattern = host::traffic_pattern::ALL_TO_ALL;
    std::optional<std::string> target;
    double load = 0;
};

/// traffic.workload[]
struct workload_entry : list_entry {
    host::workload_params params;  ///< pattern, load, start and max_flows as given
    std::optional<std::string> target;
    std::optional<ps_t> stop;
    std::string sizes;
    std::optional<std::uint64_t> size;
    double pareto_shape = 0;
    std::uint64_t pareto_mean = 0;
    std::optional<host::cc_kind> cc;
    std::uint8_t dscp = 0;
    host::transport_kind transport = host::transport_kind::TCP;
    bool flashpass = false;         ///< transport: flashpass (an xpass mode)
    std::uint32_t connections = 0;  ///< persistent connections per pair; 0 = one per flow
    std::uint64_t request_size = 0;
};

/// traffic.incast[]
struct incast_entry : list_entry {
    host::incast_spec spec;  ///< request size, queries, start, think time and jitter as given
    std::optional<std::string> aggregator;
    std::optional<std::size_t> workers;
    std::optional<std::uint64_t> response_size, total_response;
    std::optional<host::cc_kind> cc;
    bool trace = false;
    std::uint8_t dscp = 0;
};

/// The `traffic:` section. Hosts are names here; build_traffic resolves them on the topology.
struct traffic_params {
    std::vector<explicit_flow> flows;
    std::vector<flow_pattern> generate;
    std::vector<workload_entry> workload;
    std::vector<incast_entry> incast;

    static const param_table<traffic_params>& params();
};

/// `v` is given with a value other than its default (the config echo has every default filled
/// in and must load again).
bool set_apart_from_default(const config_value& v, const std::string& default_value) {
    if (!v.present()) return false;
    const YAML::Node n = v.section().yaml()[v.key()];
    return !(n.IsScalar() && n.Scalar() == default_value);
}

/// The value of `names` that a validated CHOICE `v` names.
template <class V>
V named(const config_value& v, const std::vector<std::pair<std::string, V>>& names) {
    const std::string s = v.str();
    for (const auto& [name, value] : names)
        if (name == s) return value;
    v.fail("'" + s + "' is not a choice");
}

template <class V>
std::vector<std::string> names_of(const std::vector<std::pair<std::string, V>>& names) {
    std::vector<std::string> out;
    out.reserve(names.size());
    for (const auto& n : names) out.push_back(n.first);
    return out;
}

/// Which flows a key of flows[] / generate[] applies to; the others refuse it when it is set.
enum class applies_to { ALL, UDP, TCP, RELIABLE };

/// Declares a key of flows[] / generate[] stored by `store`.
template <class E>
param_spec& flow_key(param_table<E>& t, applies_to only, const std::string& path, value_kind kind,
                     const std::string& default_value, std::string help,
                     typename param_table<E>::setter store) {
    return t.add(path, kind, default_value, std::move(help),
                 [only, default_value, store](E& e, const config_value& v) {
                     store(e, v);
                     if (only != applies_to::ALL && set_apart_from_default(v, default_value))
                         (only == applies_to::UDP   ? e.udp_only
                          : only == applies_to::TCP ? e.tcp_only
                                                    : e.reliable_only)
                             .push_back(v.key());
                 });
}

/// `process`, the first flow key (explicit flows declare `rate` after it).
template <class E>
void add_process_key(param_table<E>& t) {
    static const std::vector<std::pair<std::string, host::arrival_process>> processes = {
        {"cbr", host::arrival_process::CBR},
        {"poisson", host::arrival_process::POISSON},
        {"on_off", host::arrival_process::ON_OFF},
        {"bernoulli", host::arrival_process::BERNOULLI},
        {"backlogged", host::arrival_process::BACKLOGGED}};
    flow_key(t, applies_to::UDP, "process", value_kind::CHOICE, "cbr",
             "Arrival process: cbr (constant rate), poisson, on_off (cbr during on periods), "
             "bernoulli (802.1Qau CN-SIM: slots at twice the rate, each used with probability "
             "1/2), backlogged (always a frame ready: sends as fast as the NIC takes frames, so "
             "its limiters, PAUSE and the link set the rate; no rate or load)",
             [](E& f, const config_value& v) { f.spec.process = named(v, processes); })
        .choices = names_of(processes);
}

/// The other keys flows[] and generate[] share. The keys of one transport are declared in the
/// order a flow of the other transport reports them.
template <class E>
void add_flow_keys(param_table<E>& t) {
    static const std::vector<std::pair<std::string, host::period_distribution>> periods = {
        {"exponential", host::period_distribution::EXPONENTIAL},
        {"pareto", host::period_distribution::PARETO}};
    static const std::vector<std::pair<std::string, host::transport_kind>> transports = {
        {"udp", host::transport_kind::UDP},
        {"tcp", host::transport_kind::TCP},
        {"roce", host::transport_kind::ROCE},
        {"xpass", host::transport_kind::XPASS},
        {"flashpass", host::transport_kind::XPASS}};
    auto& ps = flow_key(t, applies_to::UDP, "packet_size", value_kind::BYTES, "1500B",
                        "IPv4 packet size (IP + UDP headers + payload); the frame adds 18 B of "
                        "Ethernet header and FCS (22 B with a VLAN tag)",
                        [](E& f, const config_value& v) {
                            f.spec.packet_bytes = static_cast<std::uint32_t>(v.bytes());
                        });
    ps.min = 28;
    ps.max = 9000;
    auto& fr = flow_key(t, applies_to::UDP, "frames", value_kind::INT, "",
                        "Stop after this many frames (default: unlimited)",
                        [](E& f, const config_value& v) {
                            if (v.present())
                                f.spec.max_frames = static_cast<std::uint64_t>(v.integer());
                        });
    fr.optional = true;
    fr.min = 1;
    flow_key(t, applies_to::UDP, "on_time", value_kind::TIME, "1ms",
             "on_off: mean on-period length",
             [](E& f, const config_value& v) { f.spec.on_mean = v.time(); })
        .min = 1;
    flow_key(t, applies_to::UDP, "off_time", value_kind::TIME, "1ms",
             "on_off: mean off-period length",
             [](E& f, const config_value& v) { f.spec.off_mean = v.time(); })
        .min = 1;
    flow_key(t, applies_to::UDP, "period_dist", value_kind::CHOICE, "exponential",
             "on_off: distribution of on and off periods",
             [](E& f, const config_value& v) { f.spec.periods = named(v, periods); })
        .choices = names_of(periods);
    auto& sh = flow_key(t, applies_to::UDP, "pareto_shape", value_kind::REAL, "1.5",
                        "on_off with pareto periods: shape a (> 1)",
                        [](E& f, const config_value& v) { f.spec.pareto_shape = v.real(); });
    sh.min = 1.01;
    sh.max = 100;
    flow_key(t, applies_to::UDP, "ecn", value_kind::BOOL, "false",
             "Frames are ECN-capable (ECT(0)); switches mark CE instead of dropping",
             [](E& f, const config_value& v) { f.spec.ect = v.boolean(); });
    flow_key(t, applies_to::UDP, "stop", value_kind::TIME, "",
             "No frame is sent at or after this time (default: run end)",
             [](E& f, const config_value& v) {
                 if (v.present()) f.stop = v.time();
             })
        .optional = true;
    flow_key(t, applies_to::ALL, "start", value_kind::TIME, "0s", "First send time",
             [](E& f, const config_value& v) { f.spec.start = v.time(); });
    auto& dscp = flow_key(
        t, applies_to::ALL, "dscp", value_kind::INT, "0", "IPv4 DSCP of the flow's frames",
        [](E& f, const config_value& v) { f.spec.dscp = static_cast<std::uint8_t>(v.integer()); });
    dscp.min = 0;
    dscp.max = 63;
    auto& pcp = flow_key(
        t, applies_to::ALL, "pcp", value_kind::INT, "0", "802.1Q PCP; non-zero adds a VLAN tag",
        [](E& f, const config_value& v) { f.spec.pcp = static_cast<std::uint8_t>(v.integer()); });
    pcp.min = 0;
    pcp.max = 7;
    flow_key(t, applies_to::ALL, "transport", value_kind::CHOICE, "udp",
             "udp: open-loop source (process/rate/packet_size); tcp: a TCP connection (see tcp.*); "
             "roce: a RoCEv2 reliable connection (see roce.*, nic.dcqcn.*); xpass: ExpressPass, "
             "receiver-driven credits (see xpass.*, switch.credit_queue); flashpass: FlashPass, "
             "sender-driven emulation packets and T_wait (see flashpass.*, xpass.*)",
             [](E& f, const config_value& v) {
                 f.spec.transport = named(v, transports);
                 f.spec.xpass.flashpass = v.str() == "flashpass";
             })
        .choices = names_of(transports);
    auto& sz = flow_key(t, applies_to::RELIABLE, "size", value_kind::BYTES, "",
                        "tcp, roce, xpass: bytes to transfer (default: long-lived, never ends)",
                        [](E& f, const config_value& v) {
                            if (v.present()) f.spec.size_bytes = v.bytes();
                        });
    sz.optional = true;
    sz.min = 1;
    auto& cc = flow_key(t, applies_to::TCP, "cc", value_kind::CHOICE, "",
                        "tcp: congestion control of this flow (default: tcp.cc)",
                        [](E& f, const config_value& v) {
                            if (v.present()) f.cc = named(v, cc_names());
                        });
    cc.optional = true;
    cc.choices = names_of(cc_names());
    flow_key(t, applies_to::RELIABLE, "trace", value_kind::BOOL, "false",
             "tcp: record cwnd, ssthresh, alpha, RTT and ECE at every ACK; roce: every CNP and "
             "DCQCN rate change; xpass: every credit rate update (traces/flow<id>.csv)",
             [](E& f, const config_value& v) { f.spec.trace = v.boolean(); });
}

/// `cc` of a workload or incast group (TCP only; default: tcp.cc).
template <class E>
void add_group_cc(param_table<E>& t) {
    auto& cc = t.add("cc", value_kind::CHOICE, "", "Congestion control (default: tcp.cc)",
                     [](E& e, const config_value& v) {
                         if (v.present()) e.cc = named(v, cc_names());
                     });
    cc.optional = true;
    cc.choices = names_of(cc_names());
}

const param_table<explicit_flow>& explicit_flow_params() {
    static const param_table<explicit_flow> table = [] {
        param_table<explicit_flow> t;
        t.add("src", value_kind::STRING, "", "Source host", &explicit_flow::src);
        t.add("dst", value_kind::STRING, "", "Destination host", &explicit_flow::dst);
        add_process_key(t);
        flow_key(t, applies_to::UDP, "rate", value_kind::BIT_RATE, "1Gbps",
                 "Wire rate while sending (frames incl. preamble+IFG)",
                 [](explicit_flow& f, const config_value& v) { f.spec.rate_bps = v.rate(); })
            .min = 1e3;
        add_flow_keys(t);
        return t;
    }();
    return table;
}

const param_table<flow_pattern>& flow_pattern_params() {
    static const param_table<flow_pattern> table = [] {
        param_table<flow_pattern> t;
        t.choice<host::traffic_pattern>(
            "pattern", "",
            "permutation (each host to a distinct random host), all_to_all, many_to_one (all to "
            "target)",
            {{"permutation", host::traffic_pattern::PERMUTATION},
             {"all_to_all", host::traffic_pattern::ALL_TO_ALL},
             {"many_to_one", host::traffic_pattern::MANY_TO_ONE}},
            &flow_pattern::pattern);
        t.add("target", value_kind::STRING, "many_to_one: the receiving host (default: last host)",
              &flow_pattern::target);
        add_process_key(t);
        add_flow_keys(t);
        auto& load = flow_key(
            t, applies_to::UDP, "load", value_kind::REAL, "0.5",
            "Offered load per sending host as a fraction of its link rate, split over its flows",
            [](flow_pattern& g, const config_value& v) { g.load = v.real(); });
        load.min = 1e-6;
        load.max = 1.0;
        return t;
    }();
    return table;
}

const param_table<workload_entry>& workload_params() {
    static const param_table<workload_entry> table = [] {
        using we = workload_entry;
        param_table<we> t;
        t.choice<host::traffic_pattern>(
            "pattern", "all_to_all",
            "all_to_all (each flow to a random other host), permutation (each host to a fixed "
            "random host), many_to_one (all to target), inter_site (to a random host of another "
            "site: multi_dc's DCs), intra_site (to a random other host of the same site)",
            {{"all_to_all", host::traffic_pattern::ALL_TO_ALL},
             {"permutation", host::traffic_pattern::PERMUTATION},
             {"many_to_one", host::traffic_pattern::MANY_TO_ONE},
             {"inter_site", host::traffic_pattern::INTER_SITE},
             {"intra_site", host::traffic_pattern::INTRA_SITE}},
            [](we& w, host::traffic_pattern p) { w.params.pattern = p; });
        t.add("target", value_kind::STRING, "many_to_one: the receiving host (default: last host)",
              &we::target);
        auto& load =
            t.add("load", value_kind::REAL, "0.5",
                  "Offered load per sending host as a fraction of its link rate, in wire bytes",
                  [](we& w, const config_value& v) { w.params.load = v.real(); });
        load.min = 1e-6;
        load.max = 1.0;
        t.add("sizes", value_kind::STRING, "websearch",
              "Flow sizes: websearch (DCTCP), datamining (VL2), fb_hadoop, hull_mix (80% 1KB / 20% "
              "10MB), pareto, fixed, or a CSV file of 'size_bytes,cdf' points",
              &we::sizes);
        t.add("size", value_kind::BYTES, "sizes: fixed: the flow size", &we::size).min = 1;
        auto& shape = t.add("pareto_shape", value_kind::REAL, "1.05",
                            "sizes: pareto: shape (HULL: 1.05)", &we::pareto_shape);
        shape.min = 1.001;
        shape.max = 100;
        t.add("pareto_mean", value_kind::BYTES, "100KB", "sizes: pareto: mean (HULL: 100 KB)",
              &we::pareto_mean)
            .min = 1;
        t.add("start", value_kind::TIME, "0s", "Arrivals start",
              [](we& w, const config_value& v) { w.params.start = v.time(); });
        t.add("stop", value_kind::TIME, "Arrivals stop (default: run end)", &we::stop);
        t.choice<std::pair<host::transport_kind, bool>>(
            "transport", "tcp",
            "tcp: one TCP connection per flow (tcp.*); roce: one RoCEv2 queue pair per flow "
            "(roce.*, nic.dcqcn.*); xpass: one ExpressPass flow each (xpass.*); flashpass: one "
            "FlashPass flow each (flashpass.*, xpass.*)",
            {{"tcp", {host::transport_kind::TCP, false}},
             {"roce", {host::transport_kind::ROCE, false}},
             {"xpass", {host::transport_kind::XPASS, false}},
             {"flashpass", {host::transport_kind::XPASS, true}}},
            [](we& w, std::pair<host::transport_kind, bool> v) {
                w.transport = v.first;
                w.flashpass = v.second;
            });
        auto& conns = t.add(
            "connections", value_kind::INT, "0",
            "tcp: persistent connections per (source, destination) pair that carry the flows as "
            "messages, each on a random idle connection of its pair (waiting for one when all are "
            "busy); 0: a fresh connection per flow",
            &we::connections);
        conns.min = 0;
        conns.max = 4096;
        t.add("request_size", value_kind::BYTES, "0B",
              "connections: the destination first sends a request of this size on the "
              "connection and the source answers when it has arrived (0: no request)",
              &we::request_size);
        add_group_cc(t);
        auto& dscp = t.add("dscp", value_kind::INT, "0", "IPv4 DSCP of the flows", &we::dscp);
        dscp.min = 0;
        dscp.max = 63;
        t.add("max_flows", value_kind::INT, "1000000",
              "Refuse a workload that would generate more flows than this (memory guard)",
              [](we& w, const config_value& v) {
                  w.params.max_flows = static_cast<std::uint64_t>(v.integer());
              })
            .min = 1;
        return t;
    }();
    return table;
}

const param_table<incast_entry>& incast_params() {
    static const param_table<incast_entry> table = [] {
        using ie = incast_entry;
        param_table<ie> t;
        t.add("aggregator", value_kind::STRING, "Aggregator host (default: the first host)",
              &ie::aggregator);
        t.add("workers", value_kind::INT,
              "Number of workers: the first N other hosts in host order (default: all other hosts)",
              &ie::workers)
            .min = 1;
        t.add("request_size", value_kind::BYTES, "1600B",
              "Query request per worker (seed-000 §3.1: 1.6 KB)",
              [](ie& g, const config_value& v) { g.spec.request_bytes = v.bytes(); })
            .min = 1;
        t.add("response_size", value_kind::BYTES,
              "Response per worker (default 2KB, seed-000 §3.1); excludes total_response",
              &ie::response_size)
            .min = 1;
        t.add("total_response", value_kind::BYTES,
              "Response of all workers together, split evenly (seed-000 Fig 2.18: 1MB/N each)",
              &ie::total_response)
            .min = 1;
        auto& queries = t.add("queries", value_kind::INT, "1", "Queries, one after another",
                              [](ie& g, const config_value& v) {
                                  g.spec.queries = static_cast<std::uint32_t>(v.integer());
                              });
        queries.min = 1;
        queries.max = 100000000;
        t.add("start", value_kind::TIME, "0s", "First query",
              [](ie& g, const config_value& v) { g.spec.start = v.time(); });
        t.add("think_time", value_kind::TIME, "0s", "From a query's completion to the next query",
              [](ie& g, const config_value& v) { g.spec.think_time = v.time(); });
        t.add("jitter", value_kind::TIME, "0s", "Each worker delays its response by U[0, jitter]",
              [](ie& g, const config_value& v) { g.spec.jitter = v.time(); });
        add_group_cc(t);
        t.add("trace", value_kind::BOOL, "false",
              "Trace the response connections (traces/flow<id>.csv)", &ie::trace);
        auto& dscp =
            t.add("dscp", value_kind::INT, "0", "IPv4 DSCP of requests and responses", &ie::dscp);
        dscp.min = 0;
        dscp.max = 63;
        return t;
    }();
    return table;
}

const param_table<traffic_params>& traffic_params::params() {
    static const param_table<traffic_params> table = [] {
        using tp = traffic_params;
        param_table<tp> t;
        t.list<explicit_flow>("flows", "", "Explicit flows", explicit_flow_params(),
                              append_to(&tp::flows));
        t.list<flow_pattern>("generate", "", "Flow patterns over all hosts", flow_pattern_params(),
                             append_to(&tp::generate));
        t.list<workload_entry>(
            "workload", "",
            "Open-loop TCP or RoCE flows: Poisson arrivals per sending host at a target "
            "load, sizes from a distribution",
            workload_params(), append_to(&tp::workload));
        t.list<incast_entry>("incast", "",
                             "Partition/aggregate groups: an aggregator queries workers over "
                             "persistent TCP connections (tcp.*)",
                             incast_params(), append_to(&tp::incast));
        return t;
    }();
    return table;
}

void describe_top_level(config_schema& s) {
    scenario_params().describe(s, "");
    profile_rules::params().describe(s, "");
    s.alias("switch_profiles[]", "switch");
    s.alias("nic_profiles[]", "nic");
    topology_params::params().describe(s, "topology");
    phy_params::params().describe(s, "phy");
    sw::switch_config::params().describe(s, "switch");
    nic::nic_config::params().describe(s, "nic");
    tcp_params().describe(s, "tcp");
    roce_params_table().describe(s, "roce");
    xpass_params_table().describe(s, "xpass");
    flashpass_params_table().describe(s, "flashpass");
    traffic_params::params().describe(s, "traffic");
}

/// The scenario-wide TCP options with a group's own congestion control, if it has one.
host::tcp_options with_cc(host::tcp_options o, std::optional<host::cc_kind> cc) {
    if (cc) o.cc.kind = *cc;
    return o;
}

/// Makes `f` a TCP flow with options `o`: segment size, ECT and the receiver's ECN feedback
/// follow the sender's algorithm (as negotiated at connection set-up).
void make_tcp(host::flow_spec& f, const host::tcp_options& o) {
    f.transport = host::transport_kind::TCP;
    f.tcp = o;
    f.packet_bytes = o.cc.mss + IPV4_HEADER + TCP_HEADER;
    // GEMINI's ECN is "exactly the same as DCTCP" (seed-002 §1.1): the receiver echoes each CE.
    const bool dctcp_echo = o.cc.kind == host::cc_kind::DCTCP || o.cc.kind == host::cc_kind::GEMINI;
    f.ect = o.cc.kind == host::cc_kind::ECN_STAR || dctcp_echo ||
            (o.cc.kind == host::cc_kind::CUBIC && o.cc.cubic_ecn);
    f.tcp.receiver.ecn = dctcp_echo ? host::ecn_feedback::DCTCP
                         : f.ect    ? host::ecn_feedback::RFC3168
                                    : host::ecn_feedback::NONE;
}

/// Makes `f` a RoCE flow with queue-pair options `o`.
void make_roce(host::flow_spec& f, const host::roce_params& o) {
    f.transport = host::transport_kind::ROCE;
    f.roce = o;
    f.packet_bytes = o.mtu + IPV4_HEADER + UDP_HEADER + roce::udp_payload(roce::SEND_MIDDLE, 0);
}

/// Makes `f` an ExpressPass flow with parameters `o` (1538 B data frames on the wire).
void make_xpass(host::flow_spec& f, const host::xpass_params& o) {
    f.transport = host::transport_kind::XPASS;
    f.xpass = o;
    f.packet_bytes = host::xpass_transport::MAX_DATA + host::xpass_transport::XPASS_FIELDS +
                     IPV4_HEADER + UDP_HEADER;
}

/// Makes `f` a FlashPass flow: the xpass.* frame and credit keys, the flashpass.* ones, and
/// Aeolus only as FlashPass*. `at` names the entry for the t_wait message.
void make_flashpass(host::flow_spec& f, const transport_options& opt, const std::string& at) {
    make_xpass(f, opt.xpass);
    f.xpass.flashpass = true;
    f.xpass.aeolus = opt.flashpass.early_data.value_or(false);
    f.xpass.fp = opt.flashpass;
    if (!opt.flashpass.t_wait)
        throw config_error("flashpass.t_wait",
                           "is required with transport: flashpass (" + at + ")");
}

/// The flow that the keys of a flows[] or generate[] entry describe (endpoints and rate aside):
/// its stop time (default: the run's end) after its start, and no key of another transport
/// set.
host::flow_spec flow_of(const flow_keys& k, ps_t duration, const transport_options& opt) {
    host::flow_spec f = k.spec;
    f.stop = k.stop.value_or(duration);
    if (f.stop <= f.start) k.fail("stop", "must be after start (" + format_time(f.start) + ")");
    switch (f.transport) {
        case host::transport_kind::TCP:
            if (!k.udp_only.empty())
                k.fail(k.udp_only.front(),
                       "applies to UDP flows only (a TCP flow's segments follow tcp.mss and its "
                       "congestion control)");
            make_tcp(f, with_cc(opt.tcp, k.cc));
            break;
        case host::transport_kind::ROCE:
            if (!k.udp_only.empty())
                k.fail(k.udp_only.front(),
                       "applies to UDP flows only (a RoCE flow's packets follow roce.mtu and its "
                       "rate nic.dcqcn)");
            if (!k.tcp_only.empty())
                k.fail(k.tcp_only.front(), "applies to TCP flows only (set transport: tcp)");
            make_roce(f, opt.roce);
            break;
        case host::transport_kind::XPASS:
            if (!k.udp_only.empty())
                k.fail(k.udp_only.front(),
                       "applies to UDP flows only (an ExpressPass flow sends one 1538 B frame per "
                       "credit)");
            if (!k.tcp_only.empty())
                k.fail(k.tcp_only.front(), "applies to TCP flows only (set transport: tcp)");
            if (f.xpass.flashpass) {
                make_flashpass(f, opt, k.at);
                if (f.xpass.aeolus && f.size_bytes == 0)
                    k.fail("size", "must be set with flashpass.early_data (sized flows only)");
                break;
            }
            if (opt.xpass.aeolus && f.size_bytes == 0)
                k.fail("size", "must be set with xpass.aeolus (Aeolus needs sized flows)");
            make_xpass(f, opt.xpass);
            break;
        case host::transport_kind::UDP:
            if (!k.tcp_only.empty())
                k.fail(k.tcp_only.front(), "applies to TCP flows only (set transport: tcp)");
            if (!k.reliable_only.empty())
                k.fail(k.reliable_only.front(),
                       "applies to TCP, RoCE and ExpressPass flows only (set transport: tcp, "
                       "roce or xpass)");
            if (f.process == host::arrival_process::BACKLOGGED)
                for (const std::string& key : k.udp_only)
                    if (key == "rate" || key == "load" || key == "on_time" || key == "off_time" ||
                        key == "period_dist" || key == "pareto_shape")
                        k.fail(key,
                               "does not apply to a backlogged source (it sends as fast as its "
                               "NIC takes frames)");
            break;
    }
    return f;
}

/// The host named `name`, given at `key` of `e`.
std::uint32_t host_named(const scenario& sc, const std::string& name, const list_entry& e,
                         const std::string& key) {
    const int i = sc.topo.find(name);
    if (i < 0 || sc.topo.nodes[static_cast<std::size_t>(i)].kind != node_kind::HOST)
        e.fail(key, "no host named '" + name + "'");
    return static_cast<std::uint32_t>(i);
}

/// `target` of a many_to_one group, by default the last host.
std::uint32_t target_host(const scenario& sc, const std::optional<std::string>& target,
                          const list_entry& e, const std::vector<std::uint32_t>& hosts) {
    return target ? host_named(sc, *target, e, "target") : hosts.back();
}

/// Appends `f` to the scenario's flows with the next id; returns the id.
std::uint32_t add_flow(scenario& sc, host::flow_spec f) {
    f.id = static_cast<std::uint32_t>(sc.flows.size());
    sc.flows.push_back(f);
    return sc.flows.back().id;
}

/// An application-driven TCP connection src -> dst for the whole run (incast, message workloads).
std::uint32_t add_app_connection(scenario& sc, std::uint32_t src, std::uint32_t dst,
                                 const host::tcp_options& o, std::uint8_t dscp) {
    host::flow_spec f;
    f.src = src;
    f.dst = dst;
    make_tcp(f, o);
    f.app_driven = true;
    f.dscp = dscp;
    f.stop = sc.duration;
    return add_flow(sc, f);
}

/// The files a scenario reads (workload CSVs), see load_scenario.
struct file_reader {
    const std::string& base_dir;
    const std::map<std::string, std::string>& given;
    std::map<std::string, std::string>& read;

    /// `path` made absolute against base_dir (the current directory if "") and normalised.
    std::string resolve(const std::string& path) const {
        const std::filesystem::path p(path);
        const auto abs = p.is_absolute() ? p
                         : base_dir.empty()
                             ? std::filesystem::absolute(p)
                             : std::filesystem::absolute(std::filesystem::path(base_dir) / p);
        return abs.lexically_normal().string();
    }
    /// The content of a resolved path: from `given`, else from the disk; recorded in `read`.
    /// `key` is the full path of the key that names the file.
    const std::string& content(const std::string& resolved, const std::string& key) {
        if (auto it = given.find(resolved); it != given.end()) return read[resolved] = it->second;
        std::ifstream in(resolved, std::ios::binary);
        if (!in) throw config_error(key, "cannot read " + resolved);
        std::ostringstream text;
        text << in.rdbuf();
        return read[resolved] = text.str();
    }
};

/// The flow-size distribution a workload names (shipped CDF, analytic, or a CSV file). The
/// absolute path of a CSV file goes to `path`.
host::flow_size_distribution size_distribution(const workload_entry& w, file_reader& files,
                                               std::string& path) {
    const std::string& name = w.sizes;
    try {
        if (name == "hull_mix")
            return host::flow_size_distribution::from_cdf(
                {{1000, 0}, {1000, 0.8}, {1e7, 0.8}, {1e7, 1}}, "hull_mix");
        if (name == "pareto")
            return host::flow_size_distribution::pareto(w.pareto_shape, double(w.pareto_mean));
        if (name == "fixed") {
            if (!w.size) w.fail("size", "is required with sizes: fixed");
            return host::flow_size_distribution::fixed(*w.size);
        }
        if (const char* csv = builtin_workload_csv(name))
            return host::flow_size_distribution::from_csv_text(csv, name);
        if (name.find('/') == std::string::npos && name.find('.') == std::string::npos)
            w.fail("sizes", "unknown distribution '" + name +
                                "' (websearch, datamining, fb_hadoop, hull_mix, pareto, fixed, or "
                                "a CSV file path)");
        path = files.resolve(name);
        return host::flow_size_distribution::from_csv_text(files.content(path, w.at + ".sizes"),
                                                           path);
    } catch (const std::invalid_argument& e) {
        w.fail("sizes", e.what());
    }
}

/// traffic.flows[]: explicit flows.
void add_explicit_flows(scenario& sc, const std::vector<explicit_flow>& flows,
                        const transport_options& opt) {
    for (const auto& e : flows) {
        host::flow_spec spec = flow_of(e, sc.duration, opt);
        spec.src = host_named(sc, e.src, e, "src");
        spec.dst = host_named(sc, e.dst, e, "dst");
        if (spec.src == spec.dst) e.fail("dst", "is the same host as src");
        add_flow(sc, spec);
    }
}

/// traffic.generate[]: one flow per (source, destination) pair of a pattern over all hosts;
/// each source's load is split evenly over its flows.
void add_generated_flows(scenario& sc, const std::vector<flow_pattern>& patterns,
                         const transport_options& opt) {
    const auto hosts = sc.topo.hosts();
    for (std::size_t gi = 0; gi < patterns.size(); ++gi) {
        const flow_pattern& g = patterns[gi];
        std::uint32_t target = 0;
        if (g.pattern == host::traffic_pattern::PERMUTATION && hosts.size() < 2)
            g.fail("pattern", "needs at least two hosts");
        if (g.pattern == host::traffic_pattern::MANY_TO_ONE)
            target = target_host(sc, g.target, g, hosts);
        const auto pairs = host::flow_pairs(
            g.pattern, hosts, target, rng(sc.seed, "traffic.generate[" + std::to_string(gi) + "]"));
        if (pairs.empty()) continue;
        const host::flow_spec common = flow_of(g, sc.duration, opt);
        std::map<std::uint32_t, std::uint32_t> per_src;
        for (auto [s, d] : pairs) per_src[s]++;
        for (auto [s, d] : pairs) {
            host::flow_spec spec = common;
            spec.src = s;
            spec.dst = d;
            const double rate = g.load * double(sc.topo.port_rate(s, 0)) / per_src[s];
            spec.rate_bps =
                std::max<std::uint64_t>(1000, static_cast<std::uint64_t>(std::llround(rate)));
            add_flow(sc, spec);
        }
    }
}

/// traffic.workload[] with `connections`: the generated flows become messages on
/// `w.connections` app-driven TCP connections per (source, destination) pair that has any (plus
/// a request flow back per connection with `request_size`), pairs in (source, destination)
/// order.
void add_message_workload(scenario& sc, const workload_entry& w, const host::tcp_options& o,
                          const std::vector<host::generated_flow>& made, std::size_t index) {
    message_workload_spec spec;
    spec.name = "traffic.workload[" + std::to_string(index) + "]";
    spec.request_bytes = w.request_size;
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> pair_of;
    for (const auto& g : made) pair_of.emplace(std::make_pair(g.src, g.dst), 0);
    auto connection = [&](std::uint32_t src, std::uint32_t dst) {
        return add_app_connection(sc, src, dst, o, w.dscp);
    };
    for (auto& [ends, p] : pair_of) {
        p = static_cast<std::uint32_t>(spec.pairs.size());
        message_workload_spec::pair pair;
        pair.src = ends.first;
        pair.dst = ends.second;
        for (std::uint32_t c = 0; c < w.connections; ++c) {
            message_workload_spec::connection conn;
            conn.data_flow = connection(pair.src, pair.dst);
            if (w.request_size) conn.request_flow = connection(pair.dst, pair.src);
            pair.connections.push_back(conn);
        }
        spec.pairs.push_back(std::move(pair));
    }
    for (const auto& g : made)
        spec.messages.push_back({pair_of.at({g.src, g.dst}), g.size_bytes, g.start});
    sc.message_workloads.push_back(std::move(spec));
}

/// traffic.workload[]: open-loop TCP flows from the workload generator, one fresh connection
/// per flow (or messages on persistent connections, add_message_workload).
void add_workloads(scenario& sc, const std::vector<workload_entry>& workloads,
                   const transport_options& opt, file_reader& files) {
    const auto hosts = sc.topo.hosts();
    std::vector<host::workload_host> endpoints;
    for (const auto h : hosts)
        endpoints.push_back(
            {h, sc.topo.nodes[h].name, sc.topo.port_rate(h, 0), sc.topo.nodes[h].site});
    for (std::size_t index = 0; index < workloads.size(); ++index) {
        const workload_entry& w = workloads[index];
        std::string csv_path;
        host::flow_size_distribution sizes = size_distribution(w, files, csv_path);
        if (!csv_path.empty()) sc.echo["traffic"]["workload"][index]["sizes"] = csv_path;
        const bool roce_flows = w.transport == host::transport_kind::ROCE;
        const bool xpass_flows = w.transport == host::transport_kind::XPASS;
        if ((roce_flows || xpass_flows) && w.cc)
            w.fail("cc", "applies to TCP workloads only (transport: tcp)");
        if ((roce_flows || xpass_flows) && w.connections)
            w.fail("connections", "applies to TCP workloads only (transport: tcp)");
        if (w.request_size && !w.connections)
            w.fail("request_size", "needs persistent connections (connections > 0)");
        const host::tcp_options o = with_cc(opt.tcp, w.cc);
        host::workload_params p = w.params;
        p.stop = w.stop.value_or(sc.duration);
        if (p.stop <= p.start) w.fail("stop", "must be after start (" + format_time(p.start) + ")");
        // Wire bytes per payload byte of full segments (headers, FCS, preamble, IFG).
        p.wire_per_byte = double(o.cc.mss + IPV4_HEADER + TCP_HEADER + ETH_HEADER + FCS_BYTES +
                                 PREAMBLE_SFD + IFG_BYTES) /
                          double(o.cc.mss);
        if (roce_flows)
            p.wire_per_byte =
                double(opt.roce.mtu + roce::udp_payload(roce::SEND_MIDDLE, 0) + IPV4_HEADER +
                       UDP_HEADER + ETH_HEADER + FCS_BYTES + PREAMBLE_SFD + IFG_BYTES) /
                double(opt.roce.mtu);
        if (xpass_flows) p.wire_per_byte = 1538.0 / double(host::xpass_transport::MAX_DATA);
        if (p.pattern == host::traffic_pattern::MANY_TO_ONE)
            p.target = target_host(sc, w.target, w, hosts);
        if (hosts.size() < 2) w.fail("pattern", "needs at least two hosts");
        std::vector<host::generated_flow> made;
        try {
            const host::workload_generator gen(endpoints, std::move(sizes), p, sc.seed,
                                               "traffic.workload[" + std::to_string(index) + "]");
            made = gen.generate();
        } catch (const host::too_many_flows&) {
            w.fail("max_flows", "the workload would generate more than " +
                                    std::to_string(p.max_flows) +
                                    " flows; raise max_flows or lower load or duration");
        } catch (const std::invalid_argument& e) {
            w.fail("pattern", e.what());
        }
        if (w.connections) {
            add_message_workload(sc, w, o, made, index);
            continue;
        }
        for (const auto& g : made) {
            host::flow_spec f;
            f.src = g.src;
            f.dst = g.dst;
            if (roce_flows)
                make_roce(f, opt.roce);
            else if (w.flashpass)
                make_flashpass(f, opt, "traffic.workload[" + std::to_string(index) + "]");
            else if (xpass_flows)
                make_xpass(f, opt.xpass);
            else
                make_tcp(f, o);
            f.size_bytes = g.size_bytes;
            f.start = g.start;
            f.stop = sc.duration;
            f.dscp = w.dscp;
            add_flow(sc, f);
        }
    }
}

/// traffic.incast[]: partition/aggregate groups and their app-driven connections (a request
/// and a response flow per worker).
void add_incast(scenario& sc, const std::vector<incast_entry>& groups,
                const host::tcp_options& tcp) {
    const auto hosts = sc.topo.hosts();
    for (const auto& g : groups) {
        host::incast_spec is = g.spec;
        is.aggregator =
            g.aggregator ? host_named(sc, *g.aggregator, g, "aggregator") : hosts.front();
        std::vector<std::uint32_t> others;
        for (auto h : hosts)
            if (h != is.aggregator) others.push_back(h);
        const std::size_t n = g.workers.value_or(others.size());
        if (n > others.size() || n == 0)
            g.fail("workers", "asks for " + std::to_string(n) + " workers but the topology has " +
                                  std::to_string(others.size()) + " other hosts");
        is.workers.assign(others.begin(), others.begin() + static_cast<long>(n));
        if (g.response_size && g.total_response)
            g.fail("total_response", "give either response_size or total_response, not both");
        is.response_bytes = g.total_response ? std::max<std::uint64_t>(1, *g.total_response / n)
                                             : g.response_size.value_or(2048);
        const host::tcp_options o = with_cc(tcp, g.cc);
        auto connection = [&](std::uint32_t src, std::uint32_t dst) {
            return add_app_connection(sc, src, dst, o, g.dscp);
        };
        for (auto w : is.workers) {
            is.request_flows.push_back(connection(is.aggregator, w));
            is.response_flows.push_back(connection(w, is.aggregator));
            sc.flows.back().trace = g.trace;
        }
        sc.incast.push_back(std::move(is));
    }
}

void build_traffic(scenario& sc, const traffic_params& tr, const transport_options& opt,
                   file_reader& files) {
    add_explicit_flows(sc, tr.flows, opt);
    add_generated_flows(sc, tr.generate, opt);
    add_workloads(sc, tr.workload, opt, files);
    add_incast(sc, tr.incast, opt.tcp);
}

}  // namespace

/// Lossless headroom from the calculator for every switch that asks (calculated or check):
/// per port from its link (speed, one-way latency) and its peer (response delay; a switch peer
/// commits a frame up to its pipeline latency + one clock ahead), for each lossless PG.
/// FERA: the switch parameters against each port's rate (α = C·T/P depends on it), and one
/// reaction point per NIC.
void check_fera(const scenario& sc, const profile_rules& rules) {
    std::set<std::string> warned;
    for (const std::uint32_t n : sc.topo.switches()) {
        const sw::fera_config& f = sc.switch_config_of(n).fera;
        if (!f.enabled()) continue;
        const std::uint32_t prof = sc.profile_of_node[n];
        const std::string at = (prof ? rules.switches[prof - 1].at : "switch") + ".fera.";
        if (f.rcp()) {  // the RCP law: its own keys, against each port's rate
            const sw::rcp_config& r = sc.switch_config_of(n).rcp;
            const std::string rat = (prof ? rules.switches[prof - 1].at : "switch") + ".rcp.";
            for (std::uint32_t p = 0; p < sc.topo.nodes[n].ports; ++p) {
                const std::uint64_t rate = sc.topo.port_rate(n, p);
                if (const auto e = r.params(rate).validate())
                    throw config_error(rat + sw::rcp_config::key_of(e->field),
                                       "switch '" + sc.topo.nodes[n].name + "' port " +
                                           std::to_string(p) + " (" + format_rate(rate) +
                                           "): " + e->reason);
            }
            continue;
        }
        for (std::uint32_t p = 0; p < sc.topo.nodes[n].ports; ++p) {
            const std::uint64_t rate = sc.topo.port_rate(n, p);
            const sw::fera_params fp = f.params(rate);
            const std::string where = "switch '" + sc.topo.nodes[n].name + "' port " +
                                      std::to_string(p) + " (" + format_rate(rate) + "): ";
            if (const auto e = fp.validate()) {
                const std::string key = sw::fera_config::key_of(e->field);
                sw::fera_params loose = fp;
                loose.strict_stability = false;
                const bool stability = !loose.validate();  // only the strict test failed
                throw config_error(
                    at + key,
                    where + e->reason + (stability ? " (refused: strict_stability is true)" : ""));
            }
            if (const auto w = fp.stability()) {
                const std::string key = at + sw::fera_config::key_of(w->field);
                if (warned.insert(key + format_rate(rate)).second)
                    std::cerr << "fabricsim-sim: warning: " << key << ": " << where << w->reason
                              << " (a warning: set " << at
                              << "strict_stability: true to refuse it)\n";
            }
        }
    }
    for (const std::uint32_t h : sc.topo.hosts()) {
        const nic::nic_config& c = sc.nic_config_of(h);
        if (!c.fera.enabled()) continue;
        const std::uint32_t prof = sc.profile_of_node[h];
        const std::string at = (prof ? rules.nics[prof - 1].at : std::string("nic")) + ".fera.";
        if (c.qcn.enabled() || c.bcn.enabled())
            throw config_error(at + "mode", "host '" + sc.topo.nodes[h].name +
                                                "': a NIC has one reaction point: not with " +
                                                (c.qcn.enabled() ? "qcn" : "bcn") +
                                                ".mode (set one of them to none)");
        if (const auto e = c.fera.params(sc.topo.port_rate(h, 0)).validate()) {
            const std::string key = e->field == "initial_flows"  ? "n0"
                                    : e->field == "tag_interval" ? "tau"
                                                                 : e->field;
            throw config_error(at + key, "host '" + sc.topo.nodes[h].name + "': " + e->reason);
        }
    }
}

void size_headroom(scenario& sc, const std::vector<profile_rule>& rules) {
    for (const std::uint32_t n : sc.topo.switches()) {
        const sw::switch_config& c = sc.switch_config_of(n);
        if (!c.headroom.enabled() || !c.flow_control_generation.enabled()) continue;
        const std::uint32_t prof = sc.profile_of_node[n];
        const std::string at = prof ? rules[prof - 1].at : "switch";
        const std::string& sw_name = sc.topo.nodes[n].name;
        auto& ports = sc.pg_headroom[n];
        ports.assign(sc.topo.nodes[n].ports, {});
        for (std::uint32_t p = 0; p < sc.topo.nodes[n].ports; ++p) {
            const int li = sc.topo.link_at(n, p);
            if (li < 0) continue;
            const link_desc& ld = sc.topo.links[std::size_t(li)];
            const std::uint32_t peer = ld.a.node == n && ld.a.port == p ? ld.b.node : ld.a.node;
            sw::headroom_inputs in;
            in.rate_bps = ld.cfg.rate_bps;
            in.one_way_latency = ld.cfg.one_way_latency();
            in.max_frame_bytes = c.headroom.mtu;
            in.lossless_frame_bytes = c.headroom.mtu;
            in.cell_bytes = c.mmu.cell_bytes;
            in.cell_overhead_bytes = c.mmu.cell_overhead_bytes;
            in.local_commit_ahead = c.pipeline_latency + c.clock_period();
            in.crossing_frame_in_headroom = true;
            if (sc.topo.nodes[peer].kind == node_kind::SWITCH) {
                const sw::switch_config& pc = sc.switch_config_of(peer);
                in.response_delay = pc.flow_control.response_delay;
                in.peer_commit_ahead = pc.pipeline_latency + pc.clock_period();
            } else {
                in.response_delay = sc.nic_config_of(peer).flow_control.response_delay;
            }
            sw::headroom_result r;
            try {
                r = sw::headroom_needed(in);
            } catch (const sw::headroom_error& e) {
                std::string why = "switch '";
                why += sw_name;
                why += "' port " + std::to_string(p);
                why += ": the calculated headroom (" + at;
                why += ".flow_control.headroom) cannot size it: ";
                why += e.field();
                why += " ";
                why += e.reason();
                throw config_error(ld.key.empty() ? at + ".flow_control.headroom" : ld.key, why);
            }
            for (unsigned g = 0; g < sw::PRIORITY_GROUPS; ++g) {
                if (!c.mmu.pg[g].lossless) continue;
                ports[p][g] = r.bytes;
                const std::uint64_t given = c.mmu.pg[g].headroom_cells * c.mmu.cell_bytes;
                if (!c.headroom.calculated && given < r.bytes)
                    throw config_error(
                        at + ".mmu.pg_headroom",
                        "PG " + std::to_string(g) + " has " + format_bytes(given) +
                            " of headroom, but switch '" + sw_name + "' port " + std::to_string(p) +
                            " (" + format_rate(ld.cfg.rate_bps) + ", " +
                            format_time(in.one_way_latency) + " one way, to '" +
                            sc.topo.nodes[peer].name + "') needs " + format_bytes(r.bytes) +
                            " (fabricsim headroom; flow_control.headroom_check is on)");
            }
        }
    }
}

scenario load_scenario(const YAML::Node& root_in, const std::string& name,
                       const std::string& base_dir,
                       const std::map<std::string, std::string>& files) {
    const config_schema& schema = scenario_schema();
    YAML::Node root = root_in && !root_in.IsNull() ? root_in : YAML::Node(YAML::NodeType::Map);
    schema.validate(root);
    // A chip preset lies under the user's switch: keys (for the loads and the echo alike).
    const YAML::Node& given = root;  // const: a missing section must not be inserted
    auto section_copy = [&given](const char* key) {
        const YAML::Node n = given[key];
        return n.IsDefined() ? YAML::Clone(n) : YAML::Node();
    };
    const YAML::Node raw_switch = section_copy("switch"), raw_nic = section_copy("nic");
    if (const YAML::Node chip = raw_switch["chip"]; chip && chip.IsScalar()) {
        root = YAML::Clone(root);
        root["switch"] = sw::switch_config::expand_chip(raw_switch);
    }
    config_node top(schema, root, "", "");
    scenario sc = scenario_params().load(top);
    sc.echo = with_defaults(schema, root);
    if (!top.has("name")) {
        sc.name = safe_name(name);
        YAML::Node echo(YAML::NodeType::Map);  // the echo runs again under the same name
        echo["name"] = sc.name;
        for (const auto& kv : sc.echo) echo[kv.first] = kv.second;
        sc.echo = echo;
    }
    const profile_rules rules = profile_rules::params().load(top);
    sc.switch_profiles = load_profiles<sw::switch_config>(
        top, "switch", raw_switch, rules.switches,
        [](const config_node& n) { return sw::switch_config::load(n); },
        [](const YAML::Node& n) { return sw::switch_config::expand_chip(n); });
    sc.nic_profiles = load_profiles<nic::nic_config>(
        top, "nic", raw_nic, rules.nics,
        [](const config_node& n) { return nic::nic_config::params().load(n); },
        [](const YAML::Node& n) { return n; });
    // pipeline.depth replaces pipeline_latency (both given is an error): where a depth is set
    // the echo must not carry the filled-in default latency, or running it again would fail.
    auto sets_depth = [](const YAML::Node& n) {
        return n && n.IsMap() && n["pipeline"] && n["pipeline"].IsMap() && n["pipeline"]["depth"];
    };
    bool depth = sets_depth(sw::switch_config::expand_chip(raw_switch));
    for (const auto& r : rules.switches)
        depth = depth || sets_depth(sw::switch_config::expand_chip(overlay(raw_switch, r.body)));
    if (depth && !(raw_switch && raw_switch.IsMap() && raw_switch["pipeline_latency"]))
        sc.echo["switch"].remove("pipeline_latency");
    sc.sw = sc.switch_profiles[0].cfg;
    sc.nic = sc.nic_profiles[0].cfg;
    const topology_params tp = topology_params::params().load(top.child("topology"));
    build_topology(sc, tp);
    apply_phy(sc, phy_params::params().load(top.child("phy")));
    sc.topo.validate();
    sc.profile_of_node.assign(sc.topo.nodes.size(), 0);
    assign_profiles(sc, rules.switches, node_kind::SWITCH, tp.switches);
    assign_profiles(sc, rules.nics, node_kind::HOST, tp.hosts);
    // The MMU's pools and the pipelines' port map depend on the port count: check every switch
    // before anything is built.
    for (const std::uint32_t n : sc.topo.switches()) {
        const std::uint32_t p = sc.profile_of_node[n];
        const std::string at = p ? rules.switches[p - 1].at : "switch";
        if (const std::string map =
                sc.switch_config_of(n).pipeline.check_ports(sc.topo.nodes[n].ports);
            !map.empty())
            throw config_error(at + ".pipeline.port_map",
                               "switch '" + sc.topo.nodes[n].name + "': " + map);
        const std::string why = sc.switch_config_of(n).mmu_for(sc.topo.nodes[n].ports).validate();
        if (!why.empty())
            throw config_error(at + ".mmu", "switch '" + sc.topo.nodes[n].name + "': " + why);
    }
    size_headroom(sc, rules.switches);
    check_fera(sc, rules);
    // DCQCN parameters against each NIC's line rate (min_rate above it, say).
    for (const std::uint32_t h : sc.topo.hosts()) {
        const std::uint32_t p = sc.profile_of_node[h];
        const auto& d = sc.nic_config_of(h).dcqcn;
        if (!d.enabled()) continue;
        const auto e = d.params(sc.topo.port_rate(h, 0)).validate();
        if (!e) continue;
        static const std::map<std::string, std::string> key_of_field = {
            {"g", "g"},
            {"alpha_period", "alpha_period"},
            {"increase_period", "increase_period"},
            {"fast_recovery_steps", "fast_recovery"},
            {"min_rate_bps", "min_rate"}};
        const auto k = key_of_field.find(e->field);
        throw config_error((p ? rules.nics[p - 1].at : std::string("nic")) + ".dcqcn." +
                               (k == key_of_field.end() ? std::string("mode") : k->second),
                           "host '" + sc.topo.nodes[h].name + "' (" +
                               format_rate(sc.topo.port_rate(h, 0)) + "): " + e->reason);
    }
    // QCN reaction points against each NIC's line rate (min_rate, ai_rate above it): at load,
    // with exit code 2, rather than when the NIC is built.
    for (const std::uint32_t h : sc.topo.hosts()) {
        const std::uint32_t p = sc.profile_of_node[h];
        const auto& q = sc.nic_config_of(h).qcn;
        if (!q.enabled()) continue;
        const auto e = q.params(sc.topo.port_rate(h, 0)).validate();
        if (!e) continue;
        std::string key = e->field;  // min_rate_bps -> min_rate
        if (key.size() > 4 && key.compare(key.size() - 4, 4, "_bps") == 0)
            key.resize(key.size() - 4);
        throw config_error((p ? rules.nics[p - 1].at : std::string("nic")) + ".qcn." + key,
                           "host '" + sc.topo.nodes[h].name + "' (" +
                               format_rate(sc.topo.port_rate(h, 0)) + "): " + e->reason);
    }
    // BCN regulators against each NIC's line rate (min_rate or initial_rate above it).
    for (const std::uint32_t h : sc.topo.hosts()) {
        const std::uint32_t p = sc.profile_of_node[h];
        const auto& b = sc.nic_config_of(h).bcn;
        if (!b.enabled()) continue;
        const auto e = b.params(sc.topo.port_rate(h, 0)).validate();
        if (!e) continue;
        std::string key = e->field;  // min_rate_bps -> min_rate; r_u_bps -> r_u
        if (key.size() > 4 && key.compare(key.size() - 4, 4, "_bps") == 0)
            key.resize(key.size() - 4);
        throw config_error((p ? rules.nics[p - 1].at : std::string("nic")) + ".bcn." + key,
                           "host '" + sc.topo.nodes[h].name + "' (" +
                               format_rate(sc.topo.port_rate(h, 0)) + "): " + e->reason);
    }
    file_reader reader{base_dir, files, sc.files_read};
    const config_node tcp_section = top.child("tcp");
    transport_options opt;
    opt.tcp = tcp_params().load(tcp_section);
    check_tcp(opt.tcp, tcp_section);
    opt.roce = roce_params_table().load(top.child("roce"));
    const config_node xpass_section = top.child("xpass");
    opt.xpass = xpass_params_table().load(xpass_section);
    check_xpass(opt.xpass, xpass_section);
    const config_node fp_section = top.child("flashpass");
    opt.flashpass = flashpass_params_table().load(fp_section);
    check_flashpass(opt.flashpass, fp_section);
    build_traffic(sc, traffic_params::params().load(top.child("traffic")), opt, reader);
    resolve_pcap(sc);
    check_output_estimate(sc);
    return sc;
}

}  // namespace fabricsim::platforms
