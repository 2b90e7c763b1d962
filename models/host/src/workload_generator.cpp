#include "fabricsim/host/algo/workload_generator.h"

#include <algorithm>

namespace fabricsim::host {

std::vector<std::uint32_t> derangement(std::vector<std::uint32_t> items, rng r) {
    for (std::size_t i = items.size() - 1; i > 0; --i) std::swap(items[i], items[r.below(i)]);
    return items;
}

std::vector<std::pair<std::uint32_t, std::uint32_t>> flow_pairs(
    traffic_pattern pattern, const std::vector<std::uint32_t>& hosts, std::uint32_t target,
    rng perm_rng) {
    std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
    if (pattern == traffic_pattern::PERMUTATION) {
        const auto perm = derangement(hosts, perm_rng);
        for (std::size_t i = 0; i < hosts.size(); ++i) pairs.push_back({hosts[i], perm[i]});
    } else if (pattern == traffic_pattern::ALL_TO_ALL) {
        for (auto s : hosts)
            for (auto d : hosts)
                if (s != d) pairs.push_back({s, d});
    } else {
        for (auto s : hosts)
            if (s != target) pairs.push_back({s, target});
    }
    return pairs;
}

workload_generator::workload_generator(std::vector<workload_host> hosts,
                                       flow_size_distribution sizes, const workload_params& params,
                                       std::uint64_t seed, std::string name)
    : m_hosts(std::move(hosts)),
      m_sizes(std::move(sizes)),
      m_params(params),
      m_seed(seed),
      m_name(std::move(name)) {
    if (m_hosts.size() < 2) throw std::invalid_argument("needs at least two hosts");
    if (m_params.pattern == traffic_pattern::MANY_TO_ONE &&
        std::none_of(m_hosts.begin(), m_hosts.end(),
                     [&](const workload_host& h) { return h.id == m_params.target; }))
        throw std::invalid_argument("the target is not one of the hosts");
    if (!(m_params.load > 0 && m_params.load <= 1))
        throw std::invalid_argument("the load must lie in (0, 1]");
    if (m_params.stop <= m_params.start) throw std::invalid_argument("stop must be after start");
    const bool inter = m_params.pattern == traffic_pattern::INTER_SITE;
    if (inter || m_params.pattern == traffic_pattern::INTRA_SITE) {
        // Hosts of one site share a peer list: one per site and direction, not per host.
        std::vector<std::uint32_t> of_site(m_hosts.size());
        std::vector<std::uint32_t> sites;
        for (std::size_t i = 0; i < m_hosts.size(); ++i) {
            const auto it = std::find(sites.begin(), sites.end(), m_hosts[i].site);
            of_site[i] = static_cast<std::uint32_t>(it - sites.begin());
            if (it == sites.end()) sites.push_back(m_hosts[i].site);
        }
        m_peers.resize(sites.size());
        for (std::size_t s = 0; s < sites.size(); ++s)
            for (std::size_t i = 0; i < m_hosts.size(); ++i)
                if ((of_site[i] == s) != inter) m_peers[s].push_back(static_cast<std::uint32_t>(i));
        m_site_index = std::move(of_site);
        for (std::size_t i = 0; i < m_hosts.size(); ++i) {
            const auto& peers = m_peers[m_site_index[i]];
            // intra_site lists the host itself, drawn around below.
            if (peers.size() < (inter ? 1u : 2u))
                throw std::invalid_argument(
                    "host " + m_hosts[i].name + " has no " +
                    (inter ? "host in another site" : "other host in its site") + " to send to");
        }
    }
}

double workload_generator::mean_gap_ps(std::uint64_t rate_bps) const {
    const double rate = m_params.load * double(rate_bps);
    return m_sizes.mean() * 8 * m_params.wire_per_byte / rate * double(PS_PER_S);
}

std::vector<generated_flow> workload_generator::generate() const {
    const workload_params& p = m_params;
    std::vector<std::uint32_t> fixed_dst;
    if (p.pattern == traffic_pattern::PERMUTATION) {
        std::vector<std::uint32_t> ids;
        for (const auto& h : m_hosts) ids.push_back(h.id);
        fixed_dst = derangement(ids, rng(m_seed, m_name + ".permutation"));
    }
    std::vector<generated_flow> made;
    for (std::size_t src_index = 0; src_index < m_hosts.size(); ++src_index) {
        const workload_host& src = m_hosts[src_index];
        if (p.pattern == traffic_pattern::MANY_TO_ONE && src.id == p.target) continue;
        rng r(m_seed, m_name + "." + src.name);
        const double mean_gap = mean_gap_ps(src.rate_bps);
        double t = double(p.start);
        for (;;) {
            t += r.exponential(mean_gap);
            if (t >= double(p.stop)) break;
            generated_flow f;
            f.src = src.id;
            if (!m_peers.empty()) {
                const auto& peers = m_peers[m_site_index[src_index]];
                if (p.pattern == traffic_pattern::INTER_SITE) {
                    f.dst = m_hosts[peers[r.below(peers.size())]].id;
                } else {  // uniform over the site's other hosts: draw among n-1, skip the source
                    const auto self = static_cast<std::size_t>(
                        std::find(peers.begin(), peers.end(), src_index) - peers.begin());
                    const auto k = static_cast<std::size_t>(r.below(peers.size() - 1));
                    f.dst = m_hosts[peers[k < self ? k : k + 1]].id;
                }
            } else if (p.pattern == traffic_pattern::ALL_TO_ALL) {
                // Uniform over the other hosts: draw among n-1 and skip the source.
                const std::size_t k = static_cast<std::size_t>(r.below(m_hosts.size() - 1));
                f.dst = m_hosts[k < src_index ? k : k + 1].id;
            } else {
                f.dst = p.pattern == traffic_pattern::PERMUTATION ? fixed_dst[src_index] : p.target;
            }
            f.size_bytes = m_sizes.sample(r);
            f.start = static_cast<ps_t>(t);
            made.push_back(f);
            if (made.size() > p.max_flows)
                throw too_many_flows("more than " + std::to_string(p.max_flows) + " flows");
        }
    }
    std::stable_sort(
        made.begin(), made.end(),
        [](const generated_flow& a, const generated_flow& b) { return a.start < b.start; });
    return made;
}

}  // namespace fabricsim::host
