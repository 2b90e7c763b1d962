#include "fabricsim/platforms/topology.h"

#include <algorithm>
#include <deque>
#include <limits>

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

int topology::link_at(std::uint32_t node, std::uint32_t port) const {
    for (std::size_t i = 0; i < links.size(); ++i) {
        const auto& l = links[i];
        if ((l.a.node == node && l.a.port == port) || (l.b.node == node && l.b.port == port))
            return static_cast<int>(i);
    }
    return -1;
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
    // Reachability: hosts do not forward, so search through switches only.
    const auto r = routes();
    for (auto src : hs) {
        const int l = link_at(src, 0);
        const auto& ld = links[static_cast<std::size_t>(l)];
        const std::uint32_t first = ld.a.node == src ? ld.b.node : ld.a.node;
        for (auto dst : hs) {
            if (dst == src) continue;
            bool ok = first == dst;
            if (!ok && nodes[first].kind == node_kind::SWITCH) {
                auto it = r.find(first);
                ok = it != r.end() && it->second.count(dst) != 0;
            }
            if (!ok)
                throw config_error(
                    "topology",
                    "host '" + nodes[dst].name + "' is unreachable from '" + nodes[src].name + "'");
        }
    }
}

std::map<std::uint32_t, std::map<std::uint32_t, std::vector<std::uint16_t>>> topology::routes()
    const {
    // Adjacency: per node, (port, neighbour).
    std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> adj(nodes.size());
    for (const auto& l : links) {
        if (l.a.node >= nodes.size() || l.b.node >= nodes.size()) continue;
        adj[l.a.node].push_back({l.a.port, l.b.node});
        adj[l.b.node].push_back({l.b.port, l.a.node});
    }
    std::map<std::uint32_t, std::map<std::uint32_t, std::vector<std::uint16_t>>> out;
    constexpr auto INF = std::numeric_limits<std::uint32_t>::max();
    for (auto h : hosts()) {
        // BFS from the host backwards over switches.
        std::vector<std::uint32_t> dist(nodes.size(), INF);
        std::deque<std::uint32_t> q;
        dist[h] = 0;
        q.push_back(h);
        while (!q.empty()) {
            const auto n = q.front();
            q.pop_front();
            if (n != h && nodes[n].kind == node_kind::HOST) continue;
            for (auto [port, nb] : adj[n]) {
                (void)port;
                if (dist[nb] != INF || nodes[nb].kind != node_kind::SWITCH) continue;
                dist[nb] = dist[n] + 1;
                q.push_back(nb);
            }
        }
        for (auto s : switches()) {
            if (dist[s] == INF) continue;
            std::vector<std::uint16_t> ports;
            for (auto [port, nb] : adj[s])
                if (dist[nb] != INF && dist[nb] + 1 == dist[s] &&
                    (nb == h || nodes[nb].kind == node_kind::SWITCH))
                    ports.push_back(static_cast<std::uint16_t>(port));
            std::sort(ports.begin(), ports.end());
            if (!ports.empty()) out[s][h] = std::move(ports);
        }
    }
    return out;
}

}  // namespace fabricsim::platforms
