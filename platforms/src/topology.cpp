#include "fabricsim/platforms/topology.h"

#include <algorithm>
#include <map>
#include <utility>

namespace fabricsim::platforms {

std::uint32_t topology::add_node(std::string name, node_kind kind, std::uint32_t ports,
                                 std::string role) {
    nodes.push_back({std::move(name), kind, ports, std::move(role)});
    return static_cast<std::uint32_t>(nodes.size() - 1);
}

int topology::find(const std::string& name) const {
    for (std::size_t i = 0; i < nodes.size(); ++i)
        if (nodes[i].name == name) return static_cast<int>(i);
    return -1;
}

endpoint topology::parse_endpoint(const std::string& text, const std::string& key) const {
    const auto colon = text.find(':');
    const std::string name = text.substr(0, colon);
    const int n = find(name);
    if (n < 0) throw config_error(key, "dangling link: no switch or host named '" + name + "'");
    endpoint e{static_cast<std::uint32_t>(n), 0};
    if (colon != std::string::npos) {
        const std::string port = text.substr(colon + 1);
        try {
            std::size_t used = 0;
            const unsigned long p = std::stoul(port, &used);
            if (used != port.size()) throw std::invalid_argument("trailing");
            e.port = static_cast<std::uint32_t>(p);
        } catch (const std::exception&) {
            throw config_error(key, "'" + text + "': port must be a number after ':'");
        }
    } else if (nodes[e.node].kind == node_kind::SWITCH) {
        throw config_error(key, "'" + text + "' is a switch: name a port as '" + name + ":N'");
    }
    if (e.port >= nodes[e.node].ports)
        throw config_error(key, "'" + text + "': " + name + " has only " +
                                    std::to_string(nodes[e.node].ports) + " port(s)");
    return e;
}

std::string topology::endpoint_name(const endpoint& e) const {
    const node_desc& n = nodes[e.node];
    return n.kind == node_kind::HOST ? n.name : n.name + ":" + std::to_string(e.port);
}

std::vector<std::uint32_t> topology::hosts() const {
    std::vector<std::uint32_t> out;
    for (std::uint32_t i = 0; i < nodes.size(); ++i)
        if (nodes[i].kind == node_kind::HOST) out.push_back(i);
    return out;
}

std::vector<std::uint32_t> topology::switches() const {
    std::vector<std::uint32_t> out;
    for (std::uint32_t i = 0; i < nodes.size(); ++i)
        if (nodes[i].kind == node_kind::SWITCH) out.push_back(i);
    return out;
}

void topology::index_ports() const {
    m_port_base.assign(nodes.size() + 1, 0);
    std::vector<std::uint32_t> width(nodes.size(), 0);
    for (std::size_t n = 0; n < nodes.size(); ++n) width[n] = nodes[n].ports;
    for (const auto& l : links)  // a generator's port beyond the node's count still resolves
        for (const endpoint* e : {&l.a, &l.b})
            if (e->node < nodes.size()) width[e->node] = std::max(width[e->node], e->port + 1);
    for (std::size_t n = 0; n < nodes.size(); ++n) m_port_base[n + 1] = m_port_base[n] + width[n];
    m_port_links.assign(m_port_base.back(), -1);
    for (std::size_t i = 0; i < links.size(); ++i)
        for (const endpoint* e : {&links[i].a, &links[i].b}) {
            if (e->node >= nodes.size()) continue;
            int& slot = m_port_links[m_port_base[e->node] + e->port];
            if (slot < 0) slot = static_cast<int>(i);  // the first link on a port, as before
        }
    m_indexed_nodes = nodes.size();
    m_indexed_links = links.size();
}

int topology::link_at(std::uint32_t node, std::uint32_t port) const {
    if (m_indexed_nodes != nodes.size() || m_indexed_links != links.size()) index_ports();
    if (node >= nodes.size() || m_port_base[node] + port >= m_port_base[node + 1]) return -1;
    return m_port_links[m_port_base[node] + port];
}

std::uint64_t topology::port_rate(std::uint32_t node, std::uint32_t port) const {
    const int l = link_at(node, port);
    return l < 0 ? 0 : links[static_cast<std::size_t>(l)].cfg.rate_bps;
}

void topology::validate() const {
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::string> used;
    for (const auto& l : links) {
        for (const endpoint* e : {&l.a, &l.b}) {
            if (e->node >= nodes.size()) throw config_error(l.key, "dangling link endpoint");
            auto [it, fresh] = used.emplace(std::make_pair(e->node, e->port), l.key);
            if (!fresh)
                throw config_error(
                    l.key, "port " + endpoint_name(*e) + " is already used by " + it->second);
        }
        if (l.a.node == l.b.node)
            throw config_error(l.key, "a link cannot connect a node to itself");
    }
    const auto hs = hosts();
    if (hs.empty()) throw config_error("topology", "has no hosts");
    for (auto h : hs)
        if (link_at(h, 0) < 0)
            throw config_error("topology", "host '" + nodes[h].name + "' is not linked");
    // Reachability: hosts do not forward, so search through switches only. A host reaches
    // another if its neighbour is that host, or a switch with a route to it; routes depend only
    // on the destination's edge switch, so each (first hop, edge switch) pair is checked once
    // and hosts are searched only for the message.
    const route_table r = routes();
    auto neighbour = [&](std::uint32_t h) {
        const link_desc& ld = links[static_cast<std::size_t>(link_at(h, 0))];
        return ld.a.node == h && ld.a.port == 0 ? ld.b.node : ld.a.node;
    };
    std::vector<std::uint32_t> edge_hosts(r.m_edges.size(), route_table::NONE);  // one per edge
    for (auto h : hs) {
        const std::uint32_t e = r.m_edge_of_host[h];
        if (e != route_table::NONE && edge_hosts[e] == route_table::NONE) edge_hosts[e] = h;
    }
    // A host whose neighbour is a host is reached by that host alone.
    const bool all_behind_switches = std::all_of(hs.begin(), hs.end(), [&](std::uint32_t h) {
        return r.m_edge_of_host[h] != route_table::NONE;
    });
    std::vector<std::int8_t> first_hop_ok(nodes.size(), -1);  // switch: reaches every host?
    auto reaches_all = [&](std::uint32_t sw) {
        if (first_hop_ok[sw] < 0)
            first_hop_ok[sw] =
                all_behind_switches &&
                std::all_of(edge_hosts.begin(), edge_hosts.end(),
                            [&](std::uint32_t h) { return !r.ports(sw, h).empty(); });
        return first_hop_ok[sw] == 1;
    };
    for (auto src : hs) {
        const std::uint32_t first = neighbour(src);
        if (nodes[first].kind == node_kind::SWITCH && reaches_all(first)) continue;
        for (auto dst : hs) {
            if (dst == src) continue;
            const bool ok = first == dst || (nodes[first].kind == node_kind::SWITCH &&
                                             !r.ports(first, dst).empty());
            if (!ok)
                throw config_error(
                    "topology",
                    "host '" + nodes[dst].name + "' is unreachable from '" + nodes[src].name + "'");
        }
    }
}

route_table::port_list route_table::ports(std::uint32_t sw, std::uint32_t host) const {
    if (sw >= m_switch_index.size() || host >= m_edge_of_host.size()) return {};
    const std::uint32_t s = m_switch_index[sw], e = m_edge_of_host[host];
    if (s == NONE || e == NONE) return {};
    if (m_edges[e] == sw) return {&m_host_port[host], 1};
    const group& g = m_groups[std::size_t(s) * m_edges.size() + e];
    return {m_ports.data() + g.first, g.count};
}

route_table::port_list route_table::edge_ports(std::uint32_t sw, std::uint32_t edge) const {
    if (sw >= m_switch_index.size() || edge >= m_edges.size()) return {};
    const std::uint32_t s = m_switch_index[sw];
    if (s == NONE || m_edges[edge] == sw) return {};
    const group& g = m_groups[std::size_t(s) * m_edges.size() + edge];
    return {m_ports.data() + g.first, g.count};
}

route_table topology::routes() const {
    route_table r;
    constexpr auto NONE = route_table::NONE;
    r.m_switch_index.assign(nodes.size(), NONE);
    r.m_edge_of_host.assign(nodes.size(), NONE);
    r.m_host_port.assign(nodes.size(), 0);
    std::vector<std::uint32_t> sw_nodes;
    for (std::uint32_t n = 0; n < nodes.size(); ++n)
        if (nodes[n].kind == node_kind::SWITCH) {
            r.m_switch_index[n] = static_cast<std::uint32_t>(sw_nodes.size());
            sw_nodes.push_back(n);
        }
    // Switch-to-switch adjacency (port, neighbour) in link order, and each host's edge switch
    // (a host has one port; one linked to another host has none).
    std::vector<std::vector<std::pair<std::uint16_t, std::uint32_t>>> adj(sw_nodes.size());
    std::vector<std::uint32_t> edge_index(nodes.size(), NONE);
    for (const auto& l : links) {
        if (l.a.node >= nodes.size() || l.b.node >= nodes.size()) continue;
        for (const auto& [me, peer] : {std::pair{l.a, l.b}, std::pair{l.b, l.a}}) {
            if (nodes[me.node].kind != node_kind::SWITCH) continue;
            if (nodes[peer.node].kind == node_kind::SWITCH) {
                adj[r.m_switch_index[me.node]].push_back(
                    {static_cast<std::uint16_t>(me.port), peer.node});
            } else if (peer.port == 0 && link_at(peer.node, 0) >= 0 &&
                       &links[std::size_t(link_at(peer.node, 0))] == &l) {
                if (edge_index[me.node] == NONE) {
                    edge_index[me.node] = static_cast<std::uint32_t>(r.m_edges.size());
                    r.m_edges.push_back(me.node);
                }
                r.m_edge_of_host[peer.node] = edge_index[me.node];
                r.m_host_port[peer.node] = static_cast<std::uint16_t>(me.port);
            }
        }
    }
    // One search per edge switch: a switch's ports towards it are those to a neighbour one hop
    // nearer (the hosts behind it are one more hop on every path, so the same ports).
    const std::size_t edges = r.m_edges.size();
    r.m_groups.assign(sw_nodes.size() * edges, {});
    std::map<std::vector<std::uint16_t>, std::uint32_t> stored;  // equal port sets kept once
    std::vector<std::uint32_t> dist(sw_nodes.size());
    std::vector<std::uint32_t> queue;
    std::vector<std::uint16_t> ports;
    for (std::size_t e = 0; e < edges; ++e) {
        std::fill(dist.begin(), dist.end(), NONE);
        queue.assign(1, r.m_switch_index[r.m_edges[e]]);
        dist[queue[0]] = 0;
        for (std::size_t head = 0; head < queue.size(); ++head)
            for (const auto& [port, nb] : adj[queue[head]]) {
                (void)port;
                const std::uint32_t i = r.m_switch_index[nb];
                if (dist[i] != NONE) continue;
                dist[i] = dist[queue[head]] + 1;
                queue.push_back(i);
            }
        for (std::size_t s = 0; s < sw_nodes.size(); ++s) {
            if (dist[s] == NONE || dist[s] == 0) continue;
            ports.clear();
            for (const auto& [port, nb] : adj[s])
                if (dist[r.m_switch_index[nb]] + 1 == dist[s]) ports.push_back(port);
            std::sort(ports.begin(), ports.end());
            auto [it, fresh] = stored.emplace(ports, static_cast<std::uint32_t>(r.m_ports.size()));
            if (fresh) r.m_ports.insert(r.m_ports.end(), ports.begin(), ports.end());
            r.m_groups[s * edges + e] = {it->second, static_cast<std::uint16_t>(ports.size())};
        }
    }
    return r;
}

}  // namespace fabricsim::platforms
