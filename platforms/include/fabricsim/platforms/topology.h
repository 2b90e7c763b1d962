#pragma once
/// Topology as data: nodes (switches, hosts) and links between numbered ports. Generators
/// build the dumbbell, incast rack, leaf-spine and fat-tree descriptions; custom ones come from
/// YAML.
/// validate() rejects dangling links, ports used twice and unreachable hosts; routes() gives
/// every switch its shortest-path (ECMP) egress ports towards every host.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fabricsim/core/config.h"
#include "fabricsim/phy/link_timing.h"

namespace fabricsim::platforms {

enum class node_kind { SWITCH, HOST };

struct node_desc {
    std::string name;
    node_kind kind = node_kind::HOST;
    std::uint32_t ports = 1;
    /// What the node is in its topology ("leaf", "spine", "tor", "agg", "core"; custom: as
    /// given; may be empty). Device profiles select nodes by it.
    std::string role;
    /// The site (data centre) the node belongs to: multi_dc's DC index, 0 elsewhere. Workloads
    /// pick destinations by it (inter_site, intra_site).
    std::uint32_t site = 0;
};

struct endpoint {
    std::uint32_t node = 0;
    std::uint32_t port = 0;
};

struct link_desc {
    endpoint a;
    endpoint b;
    phy::link_config cfg;
    std::string key;            ///< config path for error messages
    std::optional<double> ber;  ///< this link's BER (WAN links); else phy.ber
};

struct topology {
    std::vector<node_desc> nodes;
    std::vector<link_desc> links;

    std::uint32_t add_node(std::string name, node_kind kind, std::uint32_t ports,
                           std::string role = {});
    int find(const std::string& name) const;
    /// Parses "sw0:3" (switch port) or "h0" (host, port 0); throws config_error under `key`.
    endpoint parse_endpoint(const std::string& text, const std::string& key) const;
    std::string endpoint_name(const endpoint& e) const;

    /// Throws config_error for dangling links, reused ports, unlinked or unreachable hosts.
    void validate() const;

    /// routes[switch node][host node] = egress ports on shortest paths.
    std::map<std::uint32_t, std::map<std::uint32_t, std::vector<std::uint16_t>>> routes() const;

    std::vector<std::uint32_t> hosts() const;
    std::vector<std::uint32_t> switches() const;
    /// Rate of the link attached to (node, port), 0 if none.
    std::uint64_t port_rate(std::uint32_t node, std::uint32_t port) const;
    /// The link attached to (node, port), or -1.
    int link_at(std::uint32_t node, std::uint32_t port) const;
};

}  // namespace fabricsim::platforms
