#include "fabricsim/platforms/platform.h"

#include <fnmatch.h>
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
#include "fabricsim/core/vcd_writer.h"
#include "fabricsim/platforms/output_estimate.h"
#include "fabricsim/switch/algo/egress_queues.h"
#include "fabricsim/switch/algo/fera_congestion_point.h"

namespace fabricsim::platforms {

namespace {

/// CPU time of the calling thread (the simulation runs on it). Unlike wall time it leaves out
/// time the thread did not run, including a virtual CPU's time stolen by its host.
double thread_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

/// The capture file of the port named `port` ("sw0:3" -> "<out_dir>/sw0.3.pcap").
std::string pcap_path(const std::string& out_dir, const std::string& port) {
    std::string file = port;
    std::replace(file.begin(), file.end(), ':', '.');
    return out_dir + "/" + file + ".pcap";
}

}  // namespace

platform::platform(const sc_core::sc_module_name& name, const scenario& sc,
                   const std::string& out_dir)
    : sc_core::sc_module(name), m_sc(sc) {
    // The blocks built below arm their timers on this platform's scheduler and take their
    // frames from its pool: a second platform in the process shares neither.
    m_scheduler = std::make_unique<scheduler>("fabricsim_scheduler");
    const scheduler::scope use_scheduler(*m_scheduler);
    const frame_pool::scope use_frames(m_frames);
    for (const auto& f : m_sc.flows) m_flows.add(f);
    build_devices();
    build_links(out_dir);
    install_routes();
    attach_flows();
    start_incast();
    start_message_workloads();
    if (m_sc.sample_interval > 0 && !out_dir.empty()) {
        open_timeseries(out_dir);
        // The row at 0 is taken in start_of_simulation (the state before any timer fires);
        // the others by the model scheduler, so sampling cuts no run-ahead window.
        m_scheduler->observe_every(
            m_sc.sample_interval, m_sc.sample_interval,
            [](void* p) { static_cast<platform*>(p)->sample(); }, this);
    }
}

void platform::start_of_simulation() {
    if (m_timeseries) sample();
}

void platform::build_devices() {
    const topology& topo = m_sc.topo;
    m_switch_of_node.assign(topo.nodes.size(), -1);
    m_host_of_node.assign(topo.nodes.size(), -1);
    std::uint32_t host_index = 0;
    for (std::uint32_t n = 0; n < topo.nodes.size(); ++n) {
        const node_desc& nd = topo.nodes[n];
        if (nd.kind == node_kind::SWITCH) {
            std::vector<std::uint64_t> rates(nd.ports);
            for (std::uint32_t p = 0; p < nd.ports; ++p) rates[p] = topo.port_rate(n, p);
            m_switch_of_node[n] = static_cast<int>(m_switches.size());
            m_switches.push_back(std::make_unique<sw::switch_device>(
                nd.name.c_str(), m_sc.switch_config_of(n), rates, m_sc.seed));
            if (const auto it = m_sc.pg_headroom.find(n);
                it != m_sc.pg_headroom.end() && m_sc.switch_config_of(n).headroom.calculated)
                for (std::uint32_t p = 0; p < nd.ports; ++p)
                    for (unsigned g = 0; g < sw::PRIORITY_GROUPS; ++g)
                        if (it->second[p][g])
                            m_switches.back()->set_pg_headroom(p, g, it->second[p][g]);
        } else {
            const std::string nic_name = nd.name + "_nic";
            m_nics.push_back(std::make_unique<nic::nic_device>(
                nic_name.c_str(), m_sc.nic_config_of(n), topo.port_rate(n, 0), m_sc.seed));
            host::host_identity id{host_index, ipv4_for_host(host_index), mac_for_node(n)};
            m_host_of_node[n] = static_cast<int>(m_hosts.size());
            m_hosts.push_back(std::make_unique<host::host>(
                nd.name.c_str(), id, *m_nics.back(), m_flows, m_sc.seed, m_sc.host_lookahead));
            // The host's end of its link has the credit queue of the switch at the other end.
            if (const int l = topo.link_at(n, 0); l >= 0) {
                const link_desc& ld = topo.links[std::size_t(l)];
                const std::uint32_t peer = ld.a.node == n ? ld.b.node : ld.a.node;
                const sw::credit_queue_config& cq = topo.nodes[peer].kind == node_kind::SWITCH
                                                        ? m_sc.switch_config_of(peer).credit_queue
                                                        : sw::credit_queue_config{};
                if (cq.enabled() && m_sc.nic_config_of(n).credit_queue)
                    m_hosts.back()->set_credit_queue(
                        {cq.ratio, cq.buffer_bytes, cq.burst_bytes, cq.selective_drop, cq.jitter});
            }
            ++host_index;
        }
    }
}

void platform::build_links(const std::string& out_dir) {
    const topology& topo = m_sc.topo;
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
        if (!ld.cfg.rate_steps.empty()) rate_steps_to_switches(ld);
        if (out_dir.empty()) continue;
        for (const auto& pc : m_sc.pcap) {
            if (pc.at.node == ld.a.node && pc.at.port == ld.a.port)
                l.ab.capture(pcap_path(out_dir, pc.name), m_sc.pcap_bounds);
            if (pc.at.node == ld.b.node && pc.at.port == ld.b.port)
                l.ba.capture(pcap_path(out_dir, pc.name), m_sc.pcap_bounds);
        }
    }
}

void platform::rate_steps_to_switches(const link_desc& ld) {
    // A switch port that transmits on a stepped direction tells its FERA congestion point (C_i).
    for (const endpoint* e : {&ld.a, &ld.b}) {
        if (m_switch_of_node[e->node] < 0) continue;
        const std::uint8_t bit = e == &ld.a ? 1 : 2;
        std::vector<std::pair<ps_t, std::uint64_t>> steps;
        for (const phy::rate_step& s : ld.cfg.rate_steps)
            if (s.directions & bit) steps.emplace_back(s.at, s.rate_bps);
        sw::egress_queues& q =
            m_switches[std::size_t(m_switch_of_node[e->node])]->port(e->port).data_path();
        if (!steps.empty() && q.fera()) q.fera()->set_capacity_steps(std::move(steps));
    }
}

std::uint32_t platform::host_ip(std::uint32_t node) const {
    return ipv4_for_host(static_cast<std::uint32_t>(m_host_of_node[node]));
}

void platform::install_routes() {
    // As a fabric routes by rack prefix: each switch holds one route per edge switch (the
    // shortest-path ports towards its hosts) and a host route for each host it attaches; the
    // shared address plan gives each host address its edge switch.
    m_routes = m_sc.topo.routes();
    auto plan = std::make_shared<sw::address_plan>();
    for (const std::uint32_t h : m_sc.topo.hosts()) {
        const std::uint32_t e = m_routes.edge_of(h);
        if (e == route_table::NONE) continue;
        plan->assign(host_ip(h), e);
        const std::uint32_t edge_sw = m_routes.edge_node(e);
        const auto p = m_routes.ports(edge_sw, h);
        m_switches[std::size_t(m_switch_of_node[edge_sw])]->routes().add_route(
            host_ip(h), {p.begin(), p.end()});
    }
    std::vector<std::uint16_t> ports;
    for (const std::uint32_t sw : m_sc.topo.switches()) {
        sw::forwarding_table& table = m_switches[std::size_t(m_switch_of_node[sw])]->routes();
        table.set_address_plan(plan);
        for (std::uint32_t e = 0; e < m_routes.edges(); ++e) {
            const auto p = m_routes.edge_ports(sw, e);
            if (p.empty()) continue;
            ports.assign(p.begin(), p.end());
            table.add_group_route(e, ports);
        }
    }
}

void platform::attach_flows() {
    const topology& topo = m_sc.topo;
    // The next hop's MAC is the attached switch (L3 routing) or the peer host.
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
            f.id, {host_ip(f.dst), next_hop(f.src), rtt});
        m_hosts[std::size_t(m_host_of_node[f.dst])]->add_sink(
            f.id, {host_ip(f.src), next_hop(f.dst), rtt});
    }
}

void platform::start_incast() {
    const topology& topo = m_sc.topo;
    std::vector<host::host*> host_of(topo.nodes.size(), nullptr);
    for (std::uint32_t n = 0; n < topo.nodes.size(); ++n)
        if (m_host_of_node[n] >= 0) host_of[n] = m_hosts[std::size_t(m_host_of_node[n])].get();
    for (std::size_t i = 0; i < m_sc.incast.size(); ++i) {
        m_incast.push_back(std::make_unique<host::partition_aggregate>(
            m_sc.incast[i], host_of, m_flows, m_sc.seed,
            "traffic.incast[" + std::to_string(i) + "]"));
        m_incast.back()->start();
    }
}

void platform::start_message_workloads() {
    const topology& topo = m_sc.topo;
    std::vector<host::host*> host_of(topo.nodes.size(), nullptr);
    for (std::uint32_t n = 0; n < topo.nodes.size(); ++n)
        if (m_host_of_node[n] >= 0) host_of[n] = m_hosts[std::size_t(m_host_of_node[n])].get();
    for (const auto& spec : m_sc.message_workloads) {
        m_message_workloads.push_back(
            std::make_unique<message_workload>(spec, host_of, m_flows, m_sc.seed));
        m_message_workloads.back()->start();
    }
}

std::vector<vcd_writer::signal> platform::series_columns() {
    std::vector<vcd_writer::signal> cols;
    auto column = [&](const std::string& name, bool real = false) { cols.push_back({name, real}); };
    for (const auto& s : m_switches) {
        const std::string n = s->basename();
        for (const char* c : {".buffer_cell_bytes", ".lossy_pool_cell_bytes",
                              ".lossless_pool_cell_bytes", ".headroom_cell_bytes"})
            column(n + c);
        for (unsigned pool = 2; pool < sw::SERVICE_POOLS; ++pool)
            if (s->buffer().pool_cells(pool))
                column(n + ".pool" + std::to_string(pool) + "_cell_bytes");
        for (unsigned p = 0; p < s->port_count(); ++p) {
            const std::string port = n + ".p" + std::to_string(p);
            column(port + "_frame_bytes");
            if (m_sc.per_queue_series && s->config().queues > 1)
                for (unsigned q = 0; q < s->config().queues; ++q)
                    column(port + "q" + std::to_string(q) + "_frame_bytes");
            // Flow control, only where configured (bit p = priority p).
            if (s->port(p).pause()) column(port + "_paused");
            if (s->generator(p)) {
                column(port + "_xoff");
                column(port + "_headroom_cell_bytes");
            }
            if (const auto* f = s->port(p).data_path().fera()) {
                column(port + ".fera_rate_bps");  // FERA: r, rho and q of the last close
                if (f->rcp()) {                   // RCP: R now, Fb and y of the last close
                    column(port + ".rcp_fb", true);
                    column(port + ".rcp_y_bps");
                } else {
                    column(port + ".fera_rho", true);
                }
                column(port + ".fera_q_bytes");
            }
        }
    }
    // NICs with a pacer or a rate-limiter bank; no column for the others.
    m_series_nics.clear();
    for (const auto& n : m_nics) {
        if (n->series_columns().empty()) continue;
        m_series_nics.push_back(n.get());
        for (const std::string& c : n->series_columns())
            column(std::string(n->basename()) + '.' + c);
    }
    return cols;
}

void platform::open_timeseries(const std::string& out_dir) {
    std::vector<vcd_writer::signal> cols = series_columns();
    // results.vcd[i] selects columns by glob; each must select one at least.
    std::vector<vcd_writer::signal> traced;
    if (!m_sc.vcd.empty()) {
        std::vector<bool> chosen(cols.size());
        for (std::size_t i = 0; i < m_sc.vcd.size(); ++i) {
            bool any = false;
            for (std::size_t c = 0; c < cols.size(); ++c)
                if (fnmatch(m_sc.vcd[i].c_str(), cols[c].path.c_str(), 0) == 0)
                    chosen[c] = any = true;
            if (!any)
                throw config_error(
                    "results.vcd[" + std::to_string(i) + "]",
                    "'" + m_sc.vcd[i] +
                        "' matches no time-series column of this platform (names "
                        "as in timeseries.csv's header, e.g. '" +
                        (cols.empty() ? std::string("leaf0.p3_frame_bytes") : cols.front().path) +
                        "'; globs * ? [...])");
        }
        for (std::size_t c = 0; c < cols.size(); ++c)
            if (chosen[c]) {
                m_vcd_columns.push_back(c + 1);  // + 1: the row starts with time_us
                traced.push_back(cols[c]);
            }
        // The signals are known now: the output limit counts trace.vcd too.
        check_output_estimate(m_sc, traced);
    }
    m_timeseries = std::make_unique<output_file>(out_dir + "/timeseries.csv");
    std::string h = "time_us";
    for (const auto& c : cols) {
        h += ',';
        csv::append_field(h, c.path);
    }
    h += '\n';
    m_timeseries->write(h);
    m_row.reserve(h.size());
    if (!traced.empty()) {
        m_vcd_fields.resize(traced.size());
        m_vcd = std::make_unique<vcd_writer>(out_dir + "/trace.vcd", basename(), std::move(traced));
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
        const std::uint64_t cell = m.cell_bytes();
        value(m.used_cells() * cell);
        value(m.egress_pool(sw::LOSSY_POOL).cells * cell);
        value(m.egress_pool(sw::LOSSLESS_POOL).cells * cell);
        value(m.headroom_pool().cells * cell);
        for (unsigned pool = 2; pool < sw::SERVICE_POOLS; ++pool)
            if (m.pool_cells(pool)) value(m.egress_pool(pool).cells * cell);
        for (unsigned p = 0; p < s->port_count(); ++p) {
            value(s->port(p).queued_bytes());
            if (m_sc.per_queue_series && s->config().queues > 1)
                for (unsigned q = 0; q < s->config().queues; ++q) value(s->port(p).queue_bytes(q));
            if (const pause_reaction* r = s->port(p).pause()) {
                unsigned paused = 0;
                for (unsigned prio = 0; prio < 8; ++prio)
                    if (r->paused(prio, now_ps())) paused |= 1u << prio;
                value(paused);
            }
            if (const sw::pause_generator* g = s->generator(p)) {
                value(g->xoff_priorities());
                std::uint64_t headroom = 0;
                for (unsigned pg = 0; pg < sw::PRIORITY_GROUPS; ++pg)
                    headroom += m.pg_headroom(p, pg).cells;
                value(headroom * cell);
            }
            if (const sw::fera_congestion_point* f = s->port(p).data_path().fera()) {
                if (const sw::rcp_rate* r = f->rcp()) {
                    value(static_cast<std::uint64_t>(r->rate_at(now_ps())));
                    row += ',';
                    csv::append_real(row, r->fb());
                    value(static_cast<std::uint64_t>(r->y_bps()));
                } else {
                    value(static_cast<std::uint64_t>(f->cp().advertised_bps()));
                    row += ',';
                    csv::append_real(row, f->cp().rho());
                }
                value(f->last_queue_bytes());
            }
        }
    }
    for (const nic::nic_device* n : m_series_nics) n->append_series(row);
    row += '\n';
    m_timeseries->write(row);
    if (m_vcd) trace_row();
}

void platform::trace_row() {
    // The traced fields of the row just written (ascending column indices).
    std::size_t col = 0, pos = 0, next = 0;
    for (std::size_t i = 0; i < m_vcd_columns.size(); ++i) {
        for (; col < m_vcd_columns[i]; ++col) pos = m_row.find(',', pos) + 1;
        next = m_row.find_first_of(",\n", pos);
        m_vcd_fields[i] = std::string_view(m_row).substr(pos, next - pos);
    }
    m_vcd->sample(now_ps(), m_vcd_fields);
}

void platform::check_outputs() const {
    if (m_timeseries) m_timeseries->check();
    if (m_vcd) m_vcd->file().check();
    for (const auto& l : m_links)
        for (const phy::link_direction* d : {&l->ab, &l->ba})
            if (d->capture_file()) d->capture_file()->check();
}

void platform::close_outputs() {
    if (m_timeseries) m_timeseries->close();
    if (m_vcd) m_vcd->file().close();
    for (const auto& l : m_links)
        for (const phy::link_direction* d : {&l->ab, &l->ba})
            if (d->capture_file()) d->capture_file()->close();
}

std::uint64_t platform::frames_on_wires() const {
    std::uint64_t n = 0;
    for (const auto& l : m_links) n += l->ab.get_stats().frames + l->ba.get_stats().frames;
    return n;
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
    require_ps_time_resolution();
    if (!out_dir.empty()) {
        prepare_results_folder(out_dir, opt.overwrite);
        write_file(out_dir + "/config.yaml", echo_yaml(scenario_schema(), sc.echo) + "\n");
    }
    const auto e0 = std::chrono::steady_clock::now();
    auto top = std::make_unique<platform>("top", sc, out_dir);
    const double elaboration =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - e0).count();
    scheduler& sched = top->model_scheduler();
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
        if (opt.check_invariants) top->check_invariants();
        progress.update(t, top->frames_on_wires(), false);
    }
    const double cpu = thread_cpu_seconds() - c0;
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    progress.update(now_ps(), top->frames_on_wires(), true);
    run_result r;
    r.out_dir = out_dir;
    r.summary = top->summary(wall, cpu);
    r.summary["host_perf"]["elaboration_s"] = elaboration;
    const bool complete = now_ps() >= sc.duration;
    r.summary["complete"] = complete;
    if (!complete) {
        r.stop_signal = g_stop_signal;
        r.summary["stop_reason"] = g_stop_signal == SIGTERM ? "SIGTERM" : "SIGINT";
    }
    if (!out_dir.empty()) {
        top->close_outputs();
        if (sc.flows_csv) top->write_flows_csv(out_dir + "/flows.csv");
        top->write_detail_csv(out_dir);
        top->write_traces(out_dir + "/traces");
        top->write_queries_csv(out_dir + "/queries.csv");
        top->write_messages_csv(out_dir + "/messages.csv");
        write_file(out_dir + "/summary.json",
                   r.summary.dump(2) + "\n");  // last: its presence means complete files
    }
    // Not destroyed: SystemC's registries remove each port, export and module by a linear
    // search, so tearing a platform down is quadratic in its size (7 of the 16 s of a
    // 10 000-host run). The kernel elaborates once per process, so this is normally the
    // process's only platform; it stays reachable from a static (no leak report) until exit.
    static auto* const kept = new std::vector<std::unique_ptr<platform>>;
    kept->push_back(std::move(top));
    return r;
}

}  // namespace fabricsim::platforms
