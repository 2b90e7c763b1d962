#pragma once
/// Topology as data: nodes (switches, hosts) and links between numbered ports. Generators
/// build the dumbbell, incast rack, leaf-spine and fat-tree descriptions; custom ones come from
/// YAML.
/// validate() rejects dangling links, ports used twice and unreachable hosts; routes() gives
/// every switch its shortest-path (ECMP) egress ports towards every host.
/// Cost: link_at() is a look-up in an index built on first use; routes() is one breadth-first
/// search per edge switch (a switch with hosts) over the switches, O(edge switches x (switches
/// + links)), and holds switches x edge switches port sets: hosts behind one edge switch share
/// every other switch's ports. validate() checks reachability per edge-switch pair.
#include <cstdint>
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

struct topology;

/// Shortest-path (ECMP) egress ports of every switch towards every host (topology::routes()).
class route_table
{
public:
    /// A run of ports inside the table (valid as long as the table).
    struct port_list {
        const std::uint16_t* first = nullptr;
        std::size_t count = 0;
        const std::uint16_t* begin() const { return first; }
        const std::uint16_t* end() const { return first + count; }
        bool empty() const { return count == 0; }
        std::size_t size() const { return count; }
        std::uint16_t front() const { return *first; }
    };
    /// Egress ports of switch node `sw` on the shortest paths to host node `host`, ascending;
    /// empty if there are none (not a switch, not a host, unreachable).
    port_list ports(std::uint32_t sw, std::uint32_t host) const;

    static constexpr std::uint32_t NONE = ~std::uint32_t(0);
    /// Edge switches (the switches hosts hang off), indexed 0..edges()-1.
    std::size_t edges() const { return m_edges.size(); }
    std::uint32_t edge_node(std::uint32_t edge) const { return m_edges[edge]; }
    /// The edge index of host node `host`, or NONE.
    std::uint32_t edge_of(std::uint32_t host) const {
        return host < m_edge_of_host.size() ? m_edge_of_host[host] : NONE;
    }
    /// Egress ports of switch node `sw` towards the hosts of edge `edge` (empty when `sw` is
    /// that edge switch, which reaches each host by its own port, or cannot reach it).
    port_list edge_ports(std::uint32_t sw, std::uint32_t edge) const;

private:
    friend struct topology;
    struct group {
        std::uint32_t first = 0;  ///< in m_ports
        std::uint16_t count = 0;
    };
    std::vector<std::uint32_t> m_switch_index;  ///< node -> 0..switches-1, or NONE
    std::vector<std::uint32_t> m_edge_of_host;  ///< host node -> index in m_edges, or NONE
    std::vector<std::uint16_t> m_host_port;     ///< host node -> its port on its edge switch
    std::vector<std::uint32_t> m_edges;         ///< edge switch nodes
    std::vector<group> m_groups;                ///< [switch index x edges + edge index]
    std::vector<std::uint16_t> m_ports;         ///< the groups' ports, equal groups stored once
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

    /// Every switch's shortest-path egress ports towards every host.
    route_table routes() const;

    std::vector<std::uint32_t> hosts() const;
    std::vector<std::uint32_t> switches() const;
    /// Rate of the link attached to (node, port), 0 if none.
    std::uint64_t port_rate(std::uint32_t node, std::uint32_t port) const;
    /// The link attached to (node, port), or -1 (the first, if a port is used twice).
    int link_at(std::uint32_t node, std::uint32_t port) const;

private:
    /// link_at()'s index: per node its first slot in m_port_links (one per port). Rebuilt when
    /// the node or link count changed (generators only append).
    void index_ports() const;
    mutable std::vector<std::uint32_t> m_port_base;
    mutable std::vector<int> m_port_links;
    mutable std::size_t m_indexed_nodes = 0;
    mutable std::size_t m_indexed_links = ~std::size_t(0);
};

}  // namespace fabricsim::platforms
