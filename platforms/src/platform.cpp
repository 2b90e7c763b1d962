#include "fabricsim/platforms/platform.h"

#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <ostream>

#include "fabricsim/core/csv.h"
#include "fabricsim/core/frame_pool.h"
#include "fabricsim/core/kernel.h"
#include "fabricsim/core/scheduler.h"

namespace fabricsim::platforms {

namespace {

/// Peak resident memory of this process image in KiB. VmHWM belongs to the address space, which
/// exec replaces; getrusage's ru_maxrss survives exec and would report the parent's peak for a
/// process started by a larger one (a Python benchmark driver).
long peak_rss_kib() {
    if (std::FILE* f = std::fopen("/proc/self/status", "r")) {
        char line[256];
        long kib = -1;
        while (std::fgets(line, sizeof line, f))
            if (std::sscanf(line, "VmHWM: %ld kB", &kib) == 1) break;
        std::fclose(f);
        if (kib >= 0) return kib;
    }
    struct rusage ru {
    };
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/// CPU time of the calling thread (the simulation runs on it). Unlike wall time it leaves out
/// time the thread did not run, including a virtual CPU's time stolen by its host.
double thread_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

double us(ps_t t) {
    return double(t) / double(PS_PER_US);
}

/// Nearest-rank percentile of sorted values (0 if empty).
double percentile(const std::vector<double>& sorted, double p) {
    if (sorted.empty()) return 0.0;
    const auto r = static_cast<std::size_t>(std::ceil(p * double(sorted.size())));
    return sorted[std::min(sorted.size(), std::max<std::size_t>(r, 1)) - 1];
}

nlohmann::json distribution(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    double mean = 0;
    for (double x : v) mean += x / double(v.size());
    return {{"mean", mean},
            {"p50", percentile(v, 0.5)},
            {"p99", percentile(v, 0.99)},
            {"p999", percentile(v, 0.999)},
            {"max", v.empty() ? 0.0 : v.back()}};
}

/// Size bins of the FCT summaries (bytes, upper bounds exclusive).
constexpr double BIN_EDGES[] = {1e4, 1e5, 1e6, 1e7};
const char* const BIN_NAMES[] = {"<10KB", "10KB-100KB", "100KB-1MB", "1MB-10MB", ">=10MB"};
std::size_t size_bin(std::uint64_t bytes) {
    std::size_t b = 0;
    while (b < 4 && double(bytes) >= BIN_EDGES[b]) ++b;
    return b;
}
}  // namespace

platform::platform(const sc_core::sc_module_name& name, const scenario& sc,
                   const std::string& out_dir)
    : sc_core::sc_module(name), m_sc(sc) {
    SC_HAS_PROCESS(platform);
    const topology& topo = m_sc.topo;
    m_switch_of_node.assign(topo.nodes.size(), -1);
    m_host_of_node.assign(topo.nodes.size(), -1);

    for (const auto& f : m_sc.flows) m_flows.add(f);

    // Devices.
    std::uint32_t host_index = 0;
    for (std::uint32_t n = 0; n < topo.nodes.size(); ++n) {
        const node_desc& nd = topo.nodes[n];
        if (nd.kind == node_kind::SWITCH) {
            std::vector<std::uint64_t> rates(nd.ports);
            for (std::uint32_t p = 0; p < nd.ports; ++p) rates[p] = topo.port_rate(n, p);
            m_switch_of_node[n] = static_cast<int>(m_switches.size());
            m_switches.push_back(
                std::make_unique<sw::switch_device>(nd.name.c_str(), m_sc.sw, rates, m_sc.seed));
        } else {
            const std::string nic_name = nd.name + "_nic";
            m_nics.push_back(std::make_unique<nic::nic_device>(nic_name.c_str(), m_sc.nic,
                                                               topo.port_rate(n, 0)));
            host::host_identity id{host_index, ipv4_for_host(host_index), mac_for_node(n)};
            m_host_of_node[n] = static_cast<int>(m_hosts.size());
            m_hosts.push_back(std::make_unique<host::host>(
                nd.name.c_str(), id, *m_nics.back(), m_flows, m_sc.seed, m_sc.host_lookahead));
            ++host_index;
        }
    }

    // Links.
    auto tx_of = [&](const endpoint& e) -> eth_initiator_socket& {
        if (m_switch_of_node[e.node] >= 0)
            return m_switches[std::size_t(m_switch_of_node[e.node])]->tx_socket(e.port);
        return m_nics[std::size_t(m_host_of_node[e.node])]->tx.socket;
    };
    auto rx_of = [&](const endpoint& e) -> eth_target_socket& {
        if (m_switch_of_node[e.node] >= 0)
            return m_switches[std::size_t(m_switch_of_node[e.node])]->rx_socket(e.port);
        return m_nics[std::size_t(m_host_of_node[e.node])]->rx.socket;
    };
    for (std::size_t i = 0; i < topo.links.size(); ++i) {
        const link_desc& ld = topo.links[i];
        const std::string ln = "link_" + topo.nodes[ld.a.node].name + "_" +
                               std::to_string(ld.a.port) + "__" + topo.nodes[ld.b.node].name + "_" +
                               std::to_string(ld.b.port);
        m_links.push_back(std::make_unique<phy::link>(ln.c_str(), ld.cfg, m_sc.seed));
        phy::link& l = *m_links.back();
        tx_of(ld.a).bind(l.ab.in);
        l.ab.out.bind(rx_of(ld.b));
        tx_of(ld.b).bind(l.ba.in);
        l.ba.out.bind(rx_of(ld.a));
        for (const auto& pc : m_sc.pcap) {
            std::string file = pc.name;
            for (auto& c : file)
                if (c == ':') c = '.';
            if (out_dir.empty()) continue;
            const std::string path = out_dir + "/" + file + ".pcap";
            if (pc.at.node == ld.a.node && pc.at.port == ld.a.port)
                l.ab.capture(path, m_sc.pcap_bounds);
            if (pc.at.node == ld.b.node && pc.at.port == ld.b.port)
                l.ba.capture(path, m_sc.pcap_bounds);
        }
    }

    // Routes: host IP -> shortest-path egress ports.
    m_routes = topo.routes();
    const auto& routes = m_routes;
    std::vector<std::uint32_t> host_ip(topo.nodes.size(), 0);
    for (std::uint32_t n = 0; n < topo.nodes.size(); ++n)
        if (m_host_of_node[n] >= 0)
            host_ip[n] = ipv4_for_host(static_cast<std::uint32_t>(m_host_of_node[n]));
    for (const auto& [sw_node, by_host] : routes)
        for (const auto& [h, ports] : by_host)
            m_switches[std::size_t(m_switch_of_node[sw_node])]->routes().add_route(host_ip[h],
                                                                                   ports);

    // Sources. The next hop's MAC is the attached switch (L3 routing) or the peer host.
    auto next_hop = [&](std::uint32_t h) {
        const auto& ld = topo.links[std::size_t(topo.link_at(h, 0))];
        return mac_for_node(ld.a.node == h ? ld.b.node : ld.a.node);
    };
    for (const auto& f : m_sc.flows) {
        // The idle-path round trip of 64 B frames: what a handshake (not simulated) measures.
        const double syn = MIN_FRAME_WITH_FCS + PREAMBLE_SFD + IFG_BYTES;
        const ps_t rtt =
            path_time(f.src, f.dst, syn, syn, 1) + path_time(f.dst, f.src, syn, syn, 1);
        m_hosts[std::size_t(m_host_of_node[f.src])]->add_source(
            f.id, {host_ip[f.dst], next_hop(f.src), rtt});
        m_hosts[std::size_t(m_host_of_node[f.dst])]->add_sink(
            f.id, {host_ip[f.src], next_hop(f.dst), rtt});
    }

    std::vector<host::host*> host_of(topo.nodes.size(), nullptr);
    for (std::uint32_t n = 0; n < topo.nodes.size(); ++n)
        if (m_host_of_node[n] >= 0) host_of[n] = m_hosts[std::size_t(m_host_of_node[n])].get();
    for (std::size_t i = 0; i < m_sc.incast.size(); ++i) {
        m_incast.push_back(std::make_unique<host::partition_aggregate>(
            m_sc.incast[i], host_of, m_flows, m_sc.seed,
            "traffic.incast[" + std::to_string(i) + "]"));
        m_incast.back()->start();
    }

    if (m_sc.sample_interval > 0 && !out_dir.empty()) {
        m_timeseries = std::make_unique<output_file>(out_dir + "/timeseries.csv");
        std::string h = "time_us";
        auto column = [&](const std::string& name) {
            h += ',';
            csv::append_field(h, name);
        };
        for (const auto& s : m_switches) {
            const std::string n = s->basename();
            for (const char* c : {".buffer_cell_bytes", ".lossy_pool_cell_bytes",
                                  ".lossless_pool_cell_bytes", ".headroom_cell_bytes"})
                column(n + c);
            for (unsigned p = 0; p < s->port_count(); ++p) {
                const std::string port = n + ".p" + std::to_string(p);
                column(port + "_frame_bytes");
                if (m_sc.per_queue_series && s->config().queues > 1)
                    for (unsigned q = 0; q < s->config().queues; ++q)
                        column(port + "q" + std::to_string(q) + "_frame_bytes");
            }
        }
        h += '\n';
        m_timeseries->write(h);
        m_row.reserve(h.size());
        SC_METHOD(sample);
        sensitive << m_sample_tick;
    }
}

sw::switch_device& platform::switch_named(const std::string& name) {
    for (auto& s : m_switches)
        if (name == s->basename()) return *s;
    throw std::out_of_range("no switch named " + name);
}

void platform::sample() {
    std::string& row = m_row;
    row.clear();
    csv::append_us(row, now_ps());
    auto value = [&row](std::uint64_t v) {
        row += ',';
        csv::append_uint(row, v);
    };
    for (const auto& s : m_switches) {
        // Buffer and pools in bytes of cells (what the MMU holds); ports and queues in frame bytes.
        const sw::mmu& m = s->buffer();
        const std::uint64_t cell = m.config().cell_bytes;
        value(m.used_cells() * cell);
        value(m.egress_pool(sw::LOSSY_POOL).cells * cell);
        value(m.egress_pool(sw::LOSSLESS_POOL).cells * cell);
        value(m.headroom_pool().cells * cell);
        for (unsigned p = 0; p < s->port_count(); ++p) {
            value(s->port(p).queued_bytes());
            if (m_sc.per_queue_series && s->config().queues > 1)
                for (unsigned q = 0; q < s->config().queues; ++q) value(s->port(p).queue_bytes(q));
        }
    }
    row += '\n';
    m_timeseries->write(row);
    m_sample_tick.notify(to_sc_time(m_sc.sample_interval));
}

void platform::check_outputs() const {
    if (m_timeseries) m_timeseries->check();
    for (const auto& l : m_links)
        for (const phy::link_direction* d : {&l->ab, &l->ba})
            if (d->capture_file()) d->capture_file()->check();
}

void platform::close_outputs() {
    if (m_timeseries) m_timeseries->close();
    for (const auto& l : m_links)
        for (const phy::link_direction* d : {&l->ab, &l->ba})
            if (d->capture_file()) d->capture_file()->close();
}

std::uint64_t platform::frames_on_wires() const {
    std::uint64_t n = 0;
    for (const auto& l : m_links) n += l->ab.get_stats().frames + l->ba.get_stats().frames;
    return n;
}

nlohmann::json platform::summary(double wall_seconds, double cpu_seconds) const {
    using nlohmann::json;
    json s;
    s["fabricsim_version"] = VERSION;
    s["systemc_version"] = sc_core::sc_version();
    s["scenario"] = m_sc.name;
    s["seed"] = m_sc.seed;
    s["sim_time_s"] = double(now_ps()) / double(PS_PER_S);

    drop_counters drops;
    std::uint64_t held = 0, hops = 0;
    json switches = json::object(), nics = json::object(), links = json::object(),
         hosts = json::object();
    for (const auto& sw : m_switches) {
        sw->add_drops(drops);
        held += sw->frames_held();
        sw->report_stats(switches[sw->basename()]);
    }
    for (const auto& n : m_nics) {
        n->add_drops(drops);
        held += n->frames_held();
        n->report_stats(nics[n->basename()]);
    }
    for (const auto& h : m_hosts) {
        h->export_flow_results();
        held += h->frames_held();
        h->report_stats(hosts[h->basename()]);
    }
    for (const auto& l : m_links) {
        for (const phy::link_direction* d : {&l->ab, &l->ba}) {
            d->add_drops(drops);
            held += d->frames_held();
            hops += d->get_stats().frames - d->get_stats().drops.total() - d->frames_held();
            d->report_stats(links[std::string(l->basename()) + "." + d->basename()]);
        }
    }
    std::uint64_t sent = 0, delivered = 0, delivered_bytes = 0;
    std::uint64_t acks_sent = 0;
    for (const auto& f : m_flows.all()) {
        sent += f.sent_frames + f.ack_sent;
        delivered += f.delivered_frames + f.ack_delivered;
        acks_sent += f.ack_sent;
        delivered_bytes +=
            f.spec.transport == host::transport_kind::TCP ? f.rx_bytes : f.payload_bytes;
    }
    s["frames"] = {{"sent", sent},
                   {"delivered", delivered},
                   {"dropped", drops.total()},
                   {"dropped_by_cause", drops_to_json(drops)},
                   {"in_flight", held},
                   {"pool_outstanding", frame_pool::global().outstanding()},
                   {"tcp_acks_sent", acks_sent},
                   {"conserved", sent == delivered + drops.total() + held}};
    const std::uint64_t acts = counters().activations;
    s["kernel"] = {{"activations", acts},
                   {"frame_hops", hops},
                   {"activations_per_frame_hop", hops ? double(acts) / double(hops) : 0.0},
                   {"systemc_wakeups", scheduler::instance().kernel_wakeups()}};
    const double sim_s = double(now_ps()) / double(PS_PER_S);
    s["goodput_bps"] = sim_s > 0 ? double(delivered_bytes) * 8.0 / sim_s : 0.0;
    double lat_sum = 0;
    std::uint64_t lat_n = 0;
    ps_t lat_min = std::numeric_limits<ps_t>::max(), lat_max = 0;
    for (const auto& f : m_flows.all()) {
        lat_sum += f.latency_sum;
        lat_n += f.delivered_frames;
        if (f.delivered_frames == 0) continue;
        lat_min = std::min(lat_min, f.latency_min);
        lat_max = std::max(lat_max, f.latency_max);
    }
    if (lat_n == 0) lat_min = 0;
    // The histogram knows a percentile to its bucket's edge, which may lie beyond what was seen.
    auto lat_q = [&](double q) {
        return std::clamp(m_flows.latency_quantile(q), double(lat_min), double(lat_max)) / 1e6;
    };
    s["latency_us"] = {{"mean", lat_n ? lat_sum / double(lat_n) / 1e6 : 0.0},
                       {"min", us(lat_min)},
                       {"p50", lat_q(0.5)},
                       {"p99", lat_q(0.99)},
                       {"p999", lat_q(0.999)},
                       {"max", us(lat_max)}};
    s["switches"] = std::move(switches);
    s["nics"] = std::move(nics);
    s["hosts"] = std::move(hosts);
    s["links"] = std::move(links);
    json pcaps = json::object();
    for (const auto& l : m_links)
        for (const phy::link_direction* d : {&l->ab, &l->ba})
            if (const pcap_writer* p = d->capture_file())
                pcaps[std::filesystem::path(p->path()).filename().string()] = {
                    {"frames", p->frames_written()},
                    {"bytes", p->bytes()},
                    {"frames_not_captured", p->frames_not_captured()}};
    if (!pcaps.empty()) s["pcap"] = std::move(pcaps);
    json flows = json::array();
    for (const auto& f : m_flows.all()) {
        const auto& sp = f.spec;
        flows.push_back(
            {{"id", sp.id},
             {"src", m_sc.topo.nodes[sp.src].name},
             {"dst", m_sc.topo.nodes[sp.dst].name},
             {"sent_frames", f.sent_frames},
             {"delivered_frames", f.delivered_frames},
             {"delivered_bytes", f.delivered_bytes},
             {"ce_frames", f.ce_frames},
             {"latency_mean_us",
              f.delivered_frames ? f.latency_sum / double(f.delivered_frames) / 1e6 : 0.0},
             {"latency_max_us", us(f.latency_max)}});
        if (sp.transport == host::transport_kind::TCP) {
            const auto& t = f.tcp;
            json& j = flows.back();
            j["transport"] = "tcp";
            j["size_bytes"] = sp.size_bytes;
            j["rx_bytes"] = f.rx_bytes;
            j["fct_us"] = f.completed ? us(f.completed - f.started) : -1.0;
            j["ack_frames"] = f.ack_sent;
            j["tcp"] = {{"bytes_acked", t.bytes_acked},
                        {"segments", t.segments},
                        {"retransmitted_segments", t.retransmitted_segments},
                        {"fast_retransmits", t.fast_retransmits},
                        {"timeouts", t.timeouts},
                        {"ecn_reductions", t.ecn_reductions},
                        {"ece_acks", t.ece_acks},
                        {"acks", t.acks},
                        {"cwnd_bytes", t.cwnd},
                        {"alpha", t.alpha},
                        {"srtt_us", us(t.srtt)},
                        {"min_rtt_us", us(t.min_rtt)}};
        }
    }
    std::uint64_t tcp_flows = 0, sized = 0, tcp_done = 0, timeouts = 0;
    for (const auto& f : m_flows.all()) {
        if (f.spec.transport != host::transport_kind::TCP) continue;
        ++tcp_flows;
        if (f.spec.size_bytes && !f.spec.app_driven) ++sized;
        if (f.completed) ++tcp_done;
        timeouts += f.tcp.timeouts;
    }
    if (tcp_flows) {
        // Concurrency of TCP flows (started and not completed): peak, and the time average.
        std::vector<std::pair<ps_t, int>> ev;
        double active_ps = 0;
        for (const auto& f : m_flows.all()) {
            if (f.spec.transport != host::transport_kind::TCP) continue;
            if (f.spec.app_driven && f.app_written == 0) continue;  // never used
            const ps_t a = f.spec.app_driven ? f.started : f.spec.start;
            if (a >= now_ps()) continue;
            const ps_t b = f.completed ? f.completed : now_ps();
            ev.push_back({a, 1});
            ev.push_back({b, -1});
            active_ps += double(b - a);
        }
        std::sort(ev.begin(), ev.end());
        int cur = 0, peak = 0;
        for (const auto& e : ev) peak = std::max(peak, cur += e.second);
        s["tcp"] = {{"flows", tcp_flows},
                    {"sized_flows", sized},
                    {"completed", tcp_done},
                    {"timeouts", timeouts},
                    {"peak_concurrent_flows", peak},
                    {"mean_concurrent_flows", now_ps() ? active_ps / double(now_ps()) : 0.0}};
    }
    // Flow completion times of sized TCP flows, overall and by size bin, with the slowdown
    // against the idle-network ideal.
    std::vector<double> fct[6], slow[6];
    std::uint64_t count[6] = {}, flow_timeouts[6] = {};
    for (const auto& f : m_flows.all()) {
        const auto& sp = f.spec;
        if (sp.transport != host::transport_kind::TCP || sp.app_driven || sp.size_bytes == 0)
            continue;
        const std::size_t b = size_bin(sp.size_bytes);
        for (std::size_t i : {b, std::size_t(5)}) {
            ++count[i];
            flow_timeouts[i] += f.tcp.timeouts;
            if (!f.completed) continue;
            const double t = us(f.completed - f.started);
            fct[i].push_back(t);
            slow[i].push_back(t / us(ideal_fct(sp.src, sp.dst, sp.size_bytes, sp.tcp.cc.mss)));
        }
    }
    if (count[5]) {
        json bins = json::array();
        auto row = [&](std::size_t i, const char* name) {
            return json{{"bin", name},
                        {"flows", count[i]},
                        {"completed", fct[i].size()},
                        {"timeouts", flow_timeouts[i]},
                        {"fct_us", distribution(fct[i])},
                        {"slowdown", distribution(slow[i])}};
        };
        for (std::size_t i = 0; i < 5; ++i)
            if (count[i]) bins.push_back(row(i, BIN_NAMES[i]));
        s["fct"] = {{"all", row(5, "all")}, {"by_size", std::move(bins)}};
    }
    if (!m_incast.empty()) {
        json groups = json::array();
        for (const auto& g : m_incast) {
            std::vector<double> qct;
            std::uint64_t with_timeouts = 0, to = 0;
            for (const auto& q : g->queries()) {
                if (q.end == 0) continue;
                qct.push_back(us(q.end - q.start));
                if (q.timeouts) ++with_timeouts;
                to += q.timeouts;
            }
            std::sort(qct.begin(), qct.end());
            auto pct = [&](double p) { return percentile(qct, p); };
            double mean = 0;
            for (double v : qct) mean += v / double(qct.size());
            const auto& sp = g->spec();
            groups.push_back({{"aggregator", m_sc.topo.nodes[sp.aggregator].name},
                              {"workers", sp.workers.size()},
                              {"response_bytes", sp.response_bytes},
                              {"queries", sp.queries},
                              {"queries_completed", qct.size()},
                              {"queries_with_timeouts", with_timeouts},
                              {"timeouts", to},
                              {"qct_us",
                               {{"mean", mean},
                                {"min", qct.empty() ? 0.0 : qct.front()},
                                {"p50", pct(0.5)},
                                {"p95", pct(0.95)},
                                {"p99", pct(0.99)},
                                {"max", qct.empty() ? 0.0 : qct.back()}}}});
        }
        s["incast"] = std::move(groups);
    }
    s["flows"] = std::move(flows);
    s["config"] = echo_json(scenario_schema(), m_sc.echo);
    s["host_perf"] = {{"wall_time_s", wall_seconds},
                      {"frame_hops_per_s", wall_seconds > 0 ? double(hops) / wall_seconds : 0.0},
                      {"cpu_time_s", cpu_seconds},
                      {"frame_hops_per_cpu_s", cpu_seconds > 0 ? double(hops) / cpu_seconds : 0.0},
                      {"peak_rss_kib", peak_rss_kib()}};
    return s;
}

void platform::write_flows_csv(const std::string& path) const {
    output_file f(path);
    f.write(
        "id,src,dst,process,rate_bps,packet_bytes,start_us,stop_us,sent_frames,sent_bytes,"
        "delivered_frames,delivered_bytes,undelivered_frames,throughput_bps,latency_min_us,latency_"
        "mean_us,"
        "latency_max_us,ce_frames,transport,size_bytes,rx_bytes,goodput_bps,fct_us,ack_frames,"
        "retransmitted_segments,fast_retransmits,timeouts,ecn_reductions,ece_acks,cwnd_bytes,alpha,"
        "srtt_us,ideal_fct_us,slowdown\n");
    const double sim_s = double(now_ps()) / double(PS_PER_S);
    std::string row;
    auto text = [&row](std::string_view v) {
        csv::append_field(row, v);
        row += ',';
    };
    auto uint = [&row](std::uint64_t v) {
        csv::append_uint(row, v);
        row += ',';
    };
    auto real = [&row](double v) {
        csv::append_real(row, v);
        row += ',';
    };
    auto time = [&row](ps_t t) {
        csv::append_us(row, t);
        row += ',';
    };
    for (const auto& r : m_flows.all()) {
        const auto& sp = r.spec;
        const char* proc = sp.process == host::arrival_process::CBR       ? "cbr"
                           : sp.process == host::arrival_process::POISSON ? "poisson"
                                                                          : "on_off";
        const bool tcp = sp.transport == host::transport_kind::TCP;
        const ps_t stop = tcp && r.completed ? r.completed : std::min<ps_t>(sp.stop, now_ps());
        const double active = stop > sp.start ? double(stop - sp.start) / double(PS_PER_S) : sim_s;
        row.clear();
        uint(sp.id);
        text(m_sc.topo.nodes[sp.src].name);
        text(m_sc.topo.nodes[sp.dst].name);
        text(proc);
        uint(sp.rate_bps);
        uint(sp.packet_bytes);
        time(sp.start);
        time(stop);
        uint(r.sent_frames);
        uint(r.sent_bytes);
        uint(r.delivered_frames);
        uint(r.delivered_bytes);
        uint(r.sent_frames - r.delivered_frames);
        real(active > 0 ? double(r.delivered_bytes) * 8.0 / active : 0.0);
        time(r.delivered_frames ? r.latency_min : 0);
        real(r.delivered_frames ? r.latency_sum / double(r.delivered_frames) / 1e6 : 0.0);
        time(r.latency_max);
        uint(r.ce_frames);
        const std::uint64_t good = tcp ? r.rx_bytes : r.payload_bytes;
        text(tcp ? "tcp" : "udp");
        uint(sp.size_bytes);
        uint(good);
        real(active > 0 ? double(good) * 8.0 / active : 0.0);
        if (tcp && r.completed) csv::append_us(row, r.completed - r.started);
        row += ',';
        const auto& t = r.tcp;
        for (const std::uint64_t v : {r.ack_sent, t.retransmitted_segments, t.fast_retransmits,
                                      t.timeouts, t.ecn_reductions, t.ece_acks, t.cwnd})
            uint(v);
        real(t.alpha);
        time(t.srtt);
        if (tcp && sp.size_bytes && !sp.app_driven) {
            const ps_t ideal = ideal_fct(sp.src, sp.dst, sp.size_bytes, sp.tcp.cc.mss);
            time(ideal);
            if (r.completed) csv::append_real(row, us(r.completed - r.started) / us(ideal));
        } else {
            row += ',';
        }
        row += '\n';
        f.write(row);
    }
    f.close();
}

ps_t platform::path_time(std::uint32_t src, std::uint32_t dst, double wire_bytes,
                         double last_wire_bytes, std::uint64_t packets) const {
    // Store-and-forward pipeline: the packets before the last queue behind each other at the
    // slowest link (whole wire slots incl. IFG); the last one then crosses every hop, each
    // receiver acting on its last bit.
    const topology& topo = m_sc.topo;
    double t = double(m_sc.nic.tx_latency + m_sc.nic.rx_latency);
    double slowest = 0;
    std::uint32_t node = src, port = 0;
    for (std::size_t hop = 0; hop <= topo.nodes.size(); ++hop) {
        const link_desc& l = topo.links[std::size_t(topo.link_at(node, port))];
        const double bit_time = 8 * double(PS_PER_S) / double(l.cfg.rate_bps);
        t += double(l.cfg.one_way_latency()) +
             (last_wire_bytes - IFG_BYTES) * bit_time;  // last bit, before the IFG
        slowest = std::max(slowest, wire_bytes * bit_time);
        node = l.a.node == node && l.a.port == port ? l.b.node : l.a.node;
        if (node == dst) break;
        t += double(m_sc.sw.pipeline_latency);
        port = m_routes.at(node).at(dst).front();
    }
    return static_cast<ps_t>(t + double(packets - 1) * slowest);
}

ps_t platform::ideal_fct(std::uint32_t src, std::uint32_t dst, std::uint64_t bytes,
                         std::uint32_t mss) const {
    const double overhead =
        IPV4_HEADER + TCP_HEADER + ETH_HEADER + FCS_BYTES + PREAMBLE_SFD + IFG_BYTES;
    const std::uint64_t packets = (bytes + mss - 1) / mss;
    const double last = double(bytes - (packets - 1) * mss) + overhead;
    return path_time(src, dst, double(mss) + overhead,
                     std::max<double>(last, MIN_FRAME_WITH_FCS + PREAMBLE_SFD + IFG_BYTES),
                     packets);
}

void platform::write_queries_csv(const std::string& path) const {
    if (m_incast.empty()) return;
    output_file f(path);
    f.write("group,query,start_us,end_us,qct_us,timeouts\n");
    std::string row;
    for (std::size_t g = 0; g < m_incast.size(); ++g) {
        const auto& qs = m_incast[g]->queries();
        for (std::size_t i = 0; i < qs.size(); ++i) {
            row.clear();
            csv::append_uint(row, g);
            row += ',';
            csv::append_uint(row, i);
            row += ',';
            csv::append_us(row, qs[i].start);
            row += ',';
            if (qs[i].end) {
                csv::append_us(row, qs[i].end);
                row += ',';
                csv::append_us(row, qs[i].end - qs[i].start);
            } else {
                row += ',';
            }
            row += ',';
            csv::append_uint(row, qs[i].timeouts);
            row += '\n';
            f.write(row);
        }
    }
    f.close();
}

void platform::write_traces(const std::string& dir) const {
    bool any = false;
    std::string row;
    for (const auto& r : m_flows.all()) {
        if (!r.spec.trace) continue;
        if (!any) std::filesystem::create_directories(dir);
        any = true;
        output_file f(dir + "/flow" + std::to_string(r.spec.id) + ".csv");
        f.write(
            "time_us,cwnd_bytes,ssthresh_bytes,flight_bytes,acked_bytes,alpha,marked_fraction,srtt_"
            "us,rtt_sample_us,ece\n");
        for (const auto& t : r.trace) {
            row.clear();
            csv::append_us(row, t.at);
            for (const std::uint64_t v : {t.cwnd, t.ssthresh, t.flight, t.acked}) {
                row += ',';
                csv::append_uint(row, v);
            }
            row += ',';
            csv::append_real(row, t.alpha);
            row += ',';
            csv::append_real(row, t.last_f);
            row += ',';
            csv::append_us(row, t.srtt);
            row += ',';
            csv::append_us(row, t.rtt_sample);
            row += t.ece ? ",1\n" : ",0\n";
            f.write(row);
        }
        f.close();
    }
}

namespace {

/// Set by SIGINT/SIGTERM; the run loop looks at it between slices.
volatile std::sig_atomic_t g_stop_signal = 0;

void on_stop_signal(int sig) {
    if (g_stop_signal) {  // the second one stops at once
        std::signal(sig, SIG_DFL);
        std::raise(sig);
        return;
    }
    g_stop_signal = sig;
}

/// Stop handlers for the duration of one run; the previous ones (the Python worker's, say) are
/// restored after it. A signal the process ignores stays ignored.
class stop_signals
{
public:
    stop_signals() {
        g_stop_signal = 0;
        struct sigaction sa {
        };
        sa.sa_handler = on_stop_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART;
        for (std::size_t i = 0; i < 2; ++i) {
            sigaction(SIGNALS[i], nullptr, &m_old[i]);
            if (m_old[i].sa_handler != SIG_IGN) sigaction(SIGNALS[i], &sa, nullptr);
        }
    }
    ~stop_signals() {
        for (std::size_t i = 0; i < 2; ++i) sigaction(SIGNALS[i], &m_old[i], nullptr);
    }
    stop_signals(const stop_signals&) = delete;
    stop_signals& operator=(const stop_signals&) = delete;

private:
    static constexpr int SIGNALS[2] = {SIGINT, SIGTERM};
    struct sigaction m_old[2]{};
};

/// "12.345 ms" in the unit that suits `scale` (the run's duration).
std::string sim_time_text(ps_t t, ps_t scale) {
    char b[32];
    if (scale >= PS_PER_S)
        std::snprintf(b, sizeof b, "%.3f s", double(t) / double(PS_PER_S));
    else if (scale >= PS_PER_MS)
        std::snprintf(b, sizeof b, "%.3f ms", double(t) / double(PS_PER_MS));
    else
        std::snprintf(b, sizeof b, "%.3f us", double(t) / double(PS_PER_US));
    return b;
}

/// The progress line on stderr, rewritten in place (\r) at most twice a second. A run that ends
/// before its first line prints nothing.
class progress_line
{
public:
    progress_line(bool on, ps_t duration) : m_on(on), m_duration(duration) {}

    void update(ps_t now, std::uint64_t frames, bool last) {
        if (!m_on) return;
        const auto t = clock::now();
        const double since = std::chrono::duration<double>(t - m_last).count();
        if (last ? !m_shown : since < 0.5) return;
        const double elapsed = std::chrono::duration<double>(t - m_start).count();
        const double done = double(now) / double(m_duration);
        const double eta = done > 0 ? elapsed * (1 - done) / done : 0;
        char line[200];
        std::snprintf(line, sizeof line,
                      "\r  %s of %s simulated (%.1f%%)  %.2f M frame-hops/s  ETA %d:%02d:%02d  ",
                      sim_time_text(now, m_duration).c_str(),
                      sim_time_text(m_duration, m_duration).c_str(), 100 * done,
                      since > 0 ? double(frames - m_frames) / since / 1e6 : 0.0, int(eta / 3600),
                      int(eta / 60) % 60, int(eta) % 60);
        std::fputs(line, stderr);
        if (last) std::fputc('\n', stderr);
        std::fflush(stderr);
        m_shown = true;
        m_last = t;
        m_frames = frames;
    }

private:
    using clock = std::chrono::steady_clock;
    bool m_on;
    bool m_shown = false;
    ps_t m_duration;
    clock::time_point m_start = clock::now();
    clock::time_point m_last = m_start;
    std::uint64_t m_frames = 0;
};

/// Makes `dir` an empty results folder: creates it, or refuses it when it holds anything unless
/// `overwrite`, and then only clears it if it looks like a results folder.
void prepare_results_folder(const std::string& dir, bool overwrite) {
    namespace fs = std::filesystem;
    if (!fs::exists(dir)) {
        fs::create_directories(dir);
        return;
    }
    if (!fs::is_directory(dir))
        throw config_error("out", "'" + dir + "' exists and is not a folder");
    if (fs::is_empty(dir)) return;
    if (!overwrite)
        throw config_error(
            "out", "results folder '" + dir +
                       "' is not empty: it holds one run (use --overwrite, or overwrite=True in "
                       "Python, to replace it)");
    if (!fs::exists(fs::path(dir) / "summary.json") && !fs::exists(fs::path(dir) / "config.yaml"))
        throw config_error(
            "out", "'" + dir +
                       "' does not look like a results folder (no summary.json or config.yaml); "
                       "refusing to clear it");
    for (const auto& e : fs::directory_iterator(dir)) fs::remove_all(e.path());
}

}  // namespace

run_result run_scenario(const scenario& sc, const std::string& out_dir, const run_options& opt) {
    init_kernel_time();
    if (!out_dir.empty()) {
        prepare_results_folder(out_dir, opt.overwrite);
        write_file(out_dir + "/config.yaml", echo_yaml(scenario_schema(), sc.echo) + "\n");
    }
    auto top = std::make_unique<platform>("top", sc, out_dir);
    scheduler& sched = scheduler::instance();
    if (opt.run_ahead) sched.run_ahead_until(sc.duration);
    const stop_signals signals;
    progress_line progress(opt.progress, sc.duration);
    // The kernel runs in slices of simulated time of about SLICE_WALL_S each; nothing else
    // changes (the scheduler's pause keeps timers, their order and its wake-up count).
    constexpr double SLICE_WALL_S = 0.15;
    ps_t slice = std::min(sc.duration, 10 * PS_PER_US);
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = thread_cpu_seconds();
    for (ps_t t = 0; t < sc.duration && !g_stop_signal;) {
        const ps_t next = std::min(sc.duration, t + slice);
        sched.pause_at(next);
        const auto w0 = std::chrono::steady_clock::now();
        sc_core::sc_start(to_sc_time(next - t));
        t = next;
        const double w =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
        slice = std::max(
            PS_PER_NS, static_cast<ps_t>(double(slice) *
                                         std::clamp(SLICE_WALL_S / std::max(w, 1e-6), 0.25, 8.0)));
        top->check_outputs();
        progress.update(t, top->frames_on_wires(), false);
    }
    const double cpu = thread_cpu_seconds() - c0;
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    progress.update(now_ps(), top->frames_on_wires(), true);
    run_result r;
    r.out_dir = out_dir;
    r.summary = top->summary(wall, cpu);
    const bool complete = now_ps() >= sc.duration;
    r.summary["complete"] = complete;
    if (!complete) {
        r.stop_signal = g_stop_signal;
        r.summary["stop_reason"] = g_stop_signal == SIGTERM ? "SIGTERM" : "SIGINT";
    }
    if (!out_dir.empty()) {
        top->close_outputs();
        if (sc.flows_csv) top->write_flows_csv(out_dir + "/flows.csv");
        top->write_traces(out_dir + "/traces");
        top->write_queries_csv(out_dir + "/queries.csv");
        write_file(out_dir + "/summary.json",
                   r.summary.dump(2) + "\n");  // last: its presence means complete files
    }
    return r;
}

}  // namespace fabricsim::platforms
