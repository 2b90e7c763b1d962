// What a run leaves behind: summary.json (platform::summary and its parts), flows.csv,
// queries.csv, the flow traces, and the idle-network ideal FCT behind the slowdown.
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "fabricsim/core/csv.h"
#include "fabricsim/core/frame_pool.h"
#include "fabricsim/core/kernel.h"
#include "fabricsim/core/scheduler.h"
#include "fabricsim/platforms/json_table.h"
#include "fabricsim/platforms/platform.h"

namespace fabricsim::platforms {

using nlohmann::json;

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

double us(ps_t t) {
    return double(t) / double(PS_PER_US);
}

double seconds(ps_t t) {
    return double(t) / double(PS_PER_S);
}

/// Nearest-rank percentile of sorted values (0 if empty); p = 0 is the minimum, 1 the maximum.
double percentile(const std::vector<double>& sorted, double p) {
    if (sorted.empty()) return 0.0;
    const auto r = static_cast<std::size_t>(std::ceil(p * double(sorted.size())));
    return sorted[std::min(sorted.size(), std::max<std::size_t>(r, 1)) - 1];
}

/// One statistic of a distribution: a percentile in [0, 1], or MEAN.
struct statistic {
    const char* key;
    double p;
};
constexpr double MEAN = -1;
constexpr statistic FCT_STATS[] = {
    {"mean", MEAN}, {"p50", 0.5}, {"p99", 0.99}, {"p999", 0.999}, {"max", 1}};
constexpr statistic QCT_STATS[] = {{"mean", MEAN}, {"min", 0},    {"p50", 0.5},
                                   {"p95", 0.95},  {"p99", 0.99}, {"max", 1}};

template <std::size_t N>
json distribution(std::vector<double> v, const statistic (&stats)[N]) {
    std::sort(v.begin(), v.end());
    double mean = 0;
    for (double x : v) mean += x / double(v.size());
    json j = json::object();
    for (const statistic& s : stats) j[s.key] = s.p == MEAN ? mean : percentile(v, s.p);
    return j;
}

/// Size bins of the FCT summaries (bytes, upper bounds exclusive), and "all" after them.
constexpr double BIN_EDGES[] = {1e4, 1e5, 1e6, 1e7};
const char* const BIN_NAMES[] = {"<10KB", "10KB-100KB", "100KB-1MB", "1MB-10MB", ">=10MB", "all"};
constexpr std::size_t SIZE_BINS = 5;
constexpr std::size_t ALL_BIN = 5;
std::size_t size_bin(std::uint64_t bytes) {
    std::size_t b = 0;
    while (b < SIZE_BINS - 1 && double(bytes) >= BIN_EDGES[b]) ++b;
    return b;
}

bool is_tcp(const host::flow_spec& sp) {
    return sp.transport == host::transport_kind::TCP;
}

bool is_roce(const host::flow_spec& sp) {
    return sp.transport == host::transport_kind::ROCE;
}

bool is_xpass(const host::flow_spec& sp) {
    return sp.transport == host::transport_kind::XPASS;
}

bool is_flashpass(const host::flow_spec& sp) {
    return is_xpass(sp) && sp.xpass.flashpass;
}

const char* transport_name(const host::flow_spec& sp) {
    return is_tcp(sp)         ? "tcp"
           : is_roce(sp)      ? "roce"
           : is_flashpass(sp) ? "flashpass"
           : is_xpass(sp)     ? "xpass"
                              : "udp";
}

/// A TCP flow of a given size that starts on its own (it has an FCT and an ideal FCT).
bool is_sized_tcp(const host::flow_spec& sp) {
    return is_tcp(sp) && !sp.app_driven && sp.size_bytes != 0;
}

/// Payload bytes the application received: in order for TCP, every delivered one for UDP.
std::uint64_t goodput_bytes(const host::flow_record& f) {
    return is_tcp(f.spec) || is_roce(f.spec) || is_xpass(f.spec) ? f.rx_bytes : f.payload_bytes;
}

double mean_latency_us(const host::flow_record& f) {
    return f.delivered_frames ? f.latency_sum / double(f.delivered_frames) / 1e6 : 0.0;
}

template <class F>
void for_each_direction(const std::vector<std::unique_ptr<phy::link>>& links, F&& fn) {
    for (const auto& l : links) {
        fn(*l, l->ab);
        fn(*l, l->ba);
    }
}

/// Frames sent, delivered, dropped and held at the end; all four balance in a correct run.
struct frame_totals {
    std::uint64_t sent = 0;
    std::uint64_t delivered = 0;
    std::uint64_t acks_sent = 0;
    drop_counters drops;
    std::uint64_t held = 0;
    /// Control frames the devices sent and took in (PAUSE/PFC; CNMs a switch made and a NIC
    /// took in): they are counted in held (on a wire, queued) and drops like data, so they
    /// join the balance.
    std::uint64_t control_sent = 0;
    std::uint64_t control_received = 0;
};

/// The devices' side of the frame balance: their drops, held frames and control frames.
void add_device_totals(const std::vector<std::unique_ptr<sw::switch_device>>& switches,
                       const std::vector<std::unique_ptr<nic::nic_device>>& nics,
                       const std::vector<std::unique_ptr<host::host>>& hosts,
                       const std::vector<std::unique_ptr<phy::link>>& links, frame_totals& totals) {
    for (const auto& sw : switches) {
        sw->add_drops(totals.drops);
        totals.held += sw->frames_held();
        totals.control_sent += sw->generated_frames();  // CNMs of its congestion points
        for (unsigned p = 0; p < sw->port_count(); ++p) {
            totals.control_sent += sw->port(p).control_frames_sent();
            totals.control_received += sw->port(p).control_frames_received();
        }
    }
    for (const auto& n : nics) {
        n->add_drops(totals.drops);
        totals.held += n->frames_held();
        totals.control_sent += n->get_stats().tx_control_frames;
        totals.control_received += n->get_stats().rx_control_frames;
    }
    for (const auto& h : hosts) {
        h->add_drops(totals.drops);
        totals.held += h->frames_held();
    }
    for_each_direction(links, [&](const phy::link&, const phy::link_direction& d) {
        d.add_drops(totals.drops);
        totals.held += d.frames_held();
    });
}

/// The flows' side: frames sent and delivered (data, ACKs, transport control).
void add_flow_totals(const host::flow_table& flows, frame_totals& t) {
    for (const auto& f : flows.all()) {
        t.sent += f.sent_frames + f.ack_sent + f.control_sent;
        t.delivered += f.delivered_frames + f.ack_delivered + f.control_delivered;
        t.acks_sent += f.ack_sent;
    }
}

bool balances(const frame_totals& t) {
    return t.sent + t.control_sent == t.delivered + t.control_received + t.drops.total() + t.held;
}

/// Fills `s`'s switches, nics, hosts and links (in that order: the hosts first export their flow
/// results, which the flow parts read) and returns the frame-hops: frames that crossed a link.
std::uint64_t report_devices(const std::vector<std::unique_ptr<sw::switch_device>>& switches,
                             const std::vector<std::unique_ptr<nic::nic_device>>& nics,
                             const std::vector<std::unique_ptr<host::host>>& hosts,
                             const std::vector<std::unique_ptr<phy::link>>& links, json& s) {
    json sw_json = json::object(), nic_json = json::object(), host_json = json::object(),
         link_json = json::object();
    for (const auto& sw : switches) sw->report_stats(sw_json[sw->basename()]);
    for (const auto& n : nics) n->report_stats(nic_json[n->basename()]);
    for (const auto& h : hosts) {
        h->export_flow_results();
        h->report_stats(host_json[h->basename()]);
    }
    std::uint64_t hops = 0;
    for_each_direction(links, [&](const phy::link& l, const phy::link_direction& d) {
        hops += d.get_stats().frames - d.get_stats().drops.total() - d.frames_held();
        d.report_stats(link_json[std::string(l.basename()) + "." + d.basename()]);
    });
    s["switches"] = std::move(sw_json);
    s["nics"] = std::move(nic_json);
    s["hosts"] = std::move(host_json);
    s["links"] = std::move(link_json);
    return hops;
}

}  // namespace

/// Per-device and per-flow statistics of a run whose detail goes to CSV (results.detail).
struct platform::detail_tables {
    json_table ports{{"switch", "port"}};
    json_table queues{{"switch", "port", "queue"}};
    json_table pgs{{"switch", "port", "pg"}};
    json_table nics{{"nic"}};
    json_table hosts{{"host"}};
    json_table links{{"link", "direction"}};
    json_table flows{{"id", "src", "dst"}};
    /// File name and table, in the order they are written and listed.
    std::vector<std::pair<const char*, const json_table*>> files() const {
        return {{"switch_ports.csv", &ports}, {"switch_queues.csv", &queues},
                {"switch_pgs.csv", &pgs},     {"nics.csv", &nics},
                {"hosts.csv", &hosts},        {"links.csv", &links},
                {"summary_flows.csv", &flows}};
    }
};

namespace {

/// report_devices for results.detail: csv. Switches keep their switch-wide figures in `s`; their
/// ports, queues and PGs, the NICs, hosts and link directions become rows of `t`. Returns the
/// frame-hops.
std::uint64_t report_device_tables(const std::vector<std::unique_ptr<sw::switch_device>>& switches,
                                   const std::vector<std::unique_ptr<nic::nic_device>>& nics,
                                   const std::vector<std::unique_ptr<host::host>>& hosts,
                                   const std::vector<std::unique_ptr<phy::link>>& links, json& s,
                                   platform::detail_tables& t,
                                   const std::function<json(const nic::nic_device&)>& nic_profile) {
    json sw_json = json::object();
    for (const auto& sw : switches) {
        json j;
        sw->report_stats(j);
        const json name = sw->basename();
        for (const json& p : j["ports"]) {
            for (const json& q : p["queues"])
                t.queues.add({name, p["port"], q["queue"]}, q, {"queue"});
            for (const json& g : p["ingress_pgs"]) t.pgs.add({name, p["port"], g["pg"]}, g, {"pg"});
            t.ports.add({name, p["port"]}, p, {"port", "queues", "ingress_pgs"});
        }
        j["ports"] = j["ports"].size();  // the count; the ports are rows of switch_ports.csv
        sw_json[sw->basename()] = std::move(j);
    }
    for (const auto& n : nics) {
        json j;
        n->report_stats(j);
        if (json profile = nic_profile(*n); !profile.is_null()) j["profile"] = std::move(profile);
        t.nics.add({n->basename()}, j);
    }
    for (const auto& h : hosts) {
        h->export_flow_results();
        json j;
        h->report_stats(j);
        t.hosts.add({h->basename()}, j);
    }
    std::uint64_t hops = 0;
    for_each_direction(links, [&](const phy::link& l, const phy::link_direction& d) {
        hops += d.get_stats().frames - d.get_stats().drops.total() - d.frames_held();
        json j;
        d.report_stats(j);
        t.links.add({l.basename(), d.basename()}, j);
    });
    s["switches"] = std::move(sw_json);
    return hops;
}

/// The summary's part of the detail tables: each one's aggregate, the busiest rows, the files.
void summarise_tables(const platform::detail_tables& t, std::size_t n, json& s) {
    json agg = json::object(), files = json::array();
    for (const auto& [file, table] : t.files()) {
        if (table->rows() == 0) continue;
        std::string key = file;
        key.resize(key.size() - 4);  // without ".csv"
        if (key == "summary_flows") key = "flows";
        agg[key] = table->aggregate();
        files.push_back(file);
    }
    json top = json::object();
    auto add = [&](const char* key, const json_table& table, const char* column,
                   const std::vector<std::string>& also) {
        if (json rows = table.top(column, n, also); !rows.empty()) top[key] = std::move(rows);
    };
    const std::vector<std::string> port_cols = {"tx_frames", "queue_peak_cell_bytes",
                                                "drops.total"};
    add("switch_ports_by_queue_peak_cell_bytes", t.ports, "queue_peak_cell_bytes", port_cols);
    add("switch_ports_by_drops", t.ports, "drops.total", port_cols);
    add("links_by_utilization", t.links, "utilization", {"frames", "drops.total"});
    add("links_by_drops", t.links, "drops.total", {"frames", "utilization"});
    add("nics_by_drops", t.nics, "drops.total", {"tx_frames", "rx_frames"});
    add("flows_by_latency_max_us", t.flows, "latency_max_us", {"delivered_frames"});
    add("flows_by_fct_us", t.flows, "fct_us", {"size_bytes"});
    s["detail"] = "csv";
    s["detail_files"] = std::move(files);
    s["aggregate"] = std::move(agg);
    s["top"] = std::move(top);
}

json frames_json(const frame_totals& t, const frame_pool& pool) {
    json j = {{"sent", t.sent},
              {"delivered", t.delivered},
              {"dropped", t.drops.total()},
              {"dropped_by_cause", drops_to_json(t.drops)},
              {"in_flight", t.held},
              {"pool_outstanding", pool.outstanding()},
              {"tcp_acks_sent", t.acks_sent},
              {"conserved", balances(t)}};
    if (t.control_sent) {  // else as before
        j["control_sent"] = t.control_sent;
        j["control_received"] = t.control_received;
    }
    return j;
}

json kernel_json(const scheduler& sched, std::uint64_t hops) {
    const std::uint64_t acts = sched.activations();
    return {{"activations", acts},
            {"frame_hops", hops},
            {"activations_per_frame_hop", hops ? double(acts) / double(hops) : 0.0},
            {"systemc_wakeups", sched.kernel_wakeups()}};
}

double goodput_bps(const host::flow_table& flows) {
    std::uint64_t bytes = 0;
    for (const auto& f : flows.all()) bytes += goodput_bytes(f);
    const double sim_s = seconds(now_ps());
    return sim_s > 0 ? double(bytes) * 8.0 / sim_s : 0.0;
}

/// One-way frame latency over all flows; percentiles from the flow table's histogram.
json latency_json(const host::flow_table& flows) {
    double sum = 0;
    std::uint64_t n = 0;
    ps_t lo = std::numeric_limits<ps_t>::max(), hi = 0;
    for (const auto& f : flows.all()) {
        sum += f.latency_sum;
        n += f.delivered_frames;
        if (f.delivered_frames == 0) continue;
        lo = std::min(lo, f.latency_min);
        hi = std::max(hi, f.latency_max);
    }
    if (n == 0) lo = 0;
    // The histogram knows a percentile to its bucket's edge, which may lie beyond what was seen.
    auto q = [&](double p) {
        return std::clamp(flows.latency_quantile(p), double(lo), double(hi)) / 1e6;
    };
    return {{"mean", n ? sum / double(n) / 1e6 : 0.0},
            {"min", us(lo)},
            {"p50", q(0.5)},
            {"p99", q(0.99)},
            {"p999", q(0.999)},
            {"max", us(hi)}};
}

/// Per capture file: frames and bytes written, frames left out by the size cap.
json pcap_json(const std::vector<std::unique_ptr<phy::link>>& links) {
    json pcaps = json::object();
    for_each_direction(links, [&](const phy::link&, const phy::link_direction& d) {
        if (const pcap_writer* p = d.capture_file())
            pcaps[std::filesystem::path(p->path()).filename().string()] = {
                {"frames", p->frames_written()},
                {"bytes", p->bytes()},
                {"frames_not_captured", p->frames_not_captured()}};
    });
    return pcaps;
}

json tcp_flow_json(const host::flow_record& f) {
    const auto& t = f.tcp;
    json j = {{"bytes_acked", t.bytes_acked},
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
    if (f.spec.tcp.cc.hystart())
        j["hystart"] = {{"train_exits", t.hystart_train_exits},
                        {"delay_exits", t.hystart_delay_exits}};
    if (f.spec.tcp.cc.kind == host::cc_kind::GEMINI)
        j["gemini"] = {{"dcn_reductions", t.ecn_reductions},
                       {"wan_reductions", t.wan_reductions},
                       {"f", t.gemini_f},
                       {"h", t.gemini_h},
                       {"rtt_base_us", us(t.rtt_base)},
                       {"pacing_bps", t.pacing_bps}};
    return j;
}

/// Aeolus's first-RTT counters of an ExpressPass* or FlashPass* flow.
void add_first_rtt(json& x, const host::xpass_flow_result& r) {
    x["unscheduled_sent"] = r.unscheduled_sent;
    x["unscheduled_delivered"] = r.unscheduled_delivered;
    x["unscheduled_lost"] = r.unscheduled_sent - r.unscheduled_delivered;
    x["unscheduled_missing"] = r.unscheduled_missing;
    x["probes"] = r.probes;
}

json flows_json(const host::flow_table& flows, const topology& topo) {
    json out = json::array();
    for (const auto& f : flows.all()) {
        const auto& sp = f.spec;
        json j = {{"id", sp.id},
                  {"src", topo.nodes[sp.src].name},
                  {"dst", topo.nodes[sp.dst].name},
                  {"sent_frames", f.sent_frames},
                  {"delivered_frames", f.delivered_frames},
                  {"delivered_bytes", f.delivered_bytes},
                  {"ce_frames", f.ce_frames},
                  {"latency_mean_us", mean_latency_us(f)},
                  {"latency_max_us", us(f.latency_max)}};
        if (is_tcp(sp)) {
            j["transport"] = "tcp";
            j["size_bytes"] = sp.size_bytes;
            j["rx_bytes"] = f.rx_bytes;
            j["fct_us"] = f.completed ? us(f.completed - f.started) : -1.0;
            j["ack_frames"] = f.ack_sent;
            j["tcp"] = tcp_flow_json(f);
        } else if (is_roce(sp)) {
            const host::roce_flow_result r = f.roce ? f.roce->result : host::roce_flow_result{};
            j["transport"] = "roce";
            j["size_bytes"] = sp.size_bytes;
            j["rx_bytes"] = f.rx_bytes;
            j["fct_us"] = f.completed ? us(f.completed - f.started) : -1.0;
            j["ack_frames"] = f.ack_sent;
            j["roce"] = {{"packets", r.packets},         {"retransmitted", r.retransmitted},
                         {"acked_bytes", r.acked_bytes}, {"naks_received", r.naks_received},
                         {"timeouts", r.timeouts},       {"out_of_sequence", r.out_of_sequence},
                         {"duplicates", r.duplicates},   {"marked", r.marked},
                         {"cnps_sent", r.cnps_sent},     {"cnps_received", r.cnps_received},
                         {"limiter", r.limiter},         {"shared_limiter", r.shared_limiter},
                         {"rate_gbps", r.rate_bps / 1e9}};
        } else if (is_flashpass(sp)) {
            const host::xpass_flow_result r = f.xpass ? f.xpass->result : host::xpass_flow_result{};
            j["transport"] = "flashpass";
            j["size_bytes"] = sp.size_bytes;
            j["rx_bytes"] = f.rx_bytes;
            j["fct_us"] = f.completed ? us(f.completed - f.started) : -1.0;
            j["flashpass"] = {{"emulation_sent", r.emulation_sent},
                              {"over_provisioned_sent", r.over_provisioned_sent},
                              {"over_provisioned_credits", r.over_provisioned_credits},
                              {"over_provisioned_wasted", r.over_provisioned_wasted},
                              {"credits_sent", r.credits_sent},
                              {"credits_received", r.credits_received},
                              {"credits_wasted", r.credits_wasted},
                              {"late_credits", r.late_credits},
                              {"pauses", r.pauses},
                              {"data_packets", r.packets},
                              {"retransmitted", r.retransmitted},
                              {"nacks_sent", r.nacks_sent},
                              {"out_of_order", r.out_of_order},
                              {"duplicates", r.duplicates},
                              {"rate_updates", r.rate_updates},
                              {"cur_rate_bps", r.emulation_rate_bps},
                              {"first_data_us", r.packets ? us(r.first_data) : -1.0},
                              {"last_data_us", r.packets ? us(r.last_data) : -1.0}};
            if (sp.xpass.aeolus) add_first_rtt(j["flashpass"], r);
            if (sp.xpass.fp.credits_per_frame() > 1)
                j["flashpass"]["credit_frames"] = r.credit_frames;
        } else if (is_xpass(sp)) {
            const host::xpass_flow_result r = f.xpass ? f.xpass->result : host::xpass_flow_result{};
            j["transport"] = "xpass";
            j["size_bytes"] = sp.size_bytes;
            j["rx_bytes"] = f.rx_bytes;
            j["fct_us"] = f.completed ? us(f.completed - f.started) : -1.0;
            j["xpass"] = {{"credits_sent", r.credits_sent},
                          {"credits_received", r.credits_received},
                          {"credits_wasted", r.credits_wasted},
                          {"credits_lost", r.credits_lost},
                          {"packets", r.packets},
                          {"retransmitted", r.retransmitted},
                          {"nacks_sent", r.nacks_sent},
                          {"out_of_order", r.out_of_order},
                          {"duplicates", r.duplicates},
                          {"requests", r.requests},
                          {"stops", r.stops},
                          {"rate_updates", r.rate_updates},
                          {"credit_rate_gbps", r.credit_rate_bps / 1e9}};
            if (sp.xpass.aeolus) add_first_rtt(j["xpass"], r);
        }
        out.push_back(std::move(j));
    }
    return out;
}

/// TCP connection counts and their concurrency (started and not completed): peak, time average.
/// Null without TCP flows.
json tcp_json(const host::flow_table& flows) {
    std::uint64_t tcp_flows = 0, sized = 0, done = 0, timeouts = 0;
    std::vector<std::pair<ps_t, int>> ev;
    double active_ps = 0;
    const ps_t now = now_ps();
    for (const auto& f : flows.all()) {
        const auto& sp = f.spec;
        if (!is_tcp(sp)) continue;
        ++tcp_flows;
        if (is_sized_tcp(sp)) ++sized;
        if (f.completed) ++done;
        timeouts += f.tcp.timeouts;
        if (sp.app_driven && f.app_written == 0) continue;  // never used
        const ps_t a = sp.app_driven ? f.started : sp.start;
        if (a >= now) continue;
        const ps_t b = f.completed ? f.completed : now;
        ev.push_back({a, 1});
        ev.push_back({b, -1});
        active_ps += double(b - a);
    }
    if (tcp_flows == 0) return nullptr;
    std::sort(ev.begin(), ev.end());
    int cur = 0, peak = 0;
    for (const auto& e : ev) peak = std::max(peak, cur += e.second);
    return {{"flows", tcp_flows},
            {"sized_flows", sized},
            {"completed", done},
            {"timeouts", timeouts},
            {"peak_concurrent_flows", peak},
            {"mean_concurrent_flows", now ? active_ps / double(now) : 0.0}};
}

/// RoCE queue pairs together: completions, go-back-N, CNPs, rate limiters. Null without RoCE.
json roce_json(const host::flow_table& flows) {
    std::uint64_t n = 0, sized = 0, done = 0, packets = 0, resent = 0, timeouts = 0, naks = 0,
                  cnps_sent = 0, cnps_received = 0, limited = 0, shared = 0;
    for (const auto& f : flows.all()) {
        if (!is_roce(f.spec)) continue;
        if (!f.roce) continue;  // never placed on a host (cannot happen in a built platform)
        const host::roce_flow_result& r = f.roce->result;
        ++n;
        if (f.spec.size_bytes) ++sized;
        if (f.completed) ++done;
        packets += r.packets;
        resent += r.retransmitted;
        timeouts += r.timeouts;
        naks += r.naks_received;
        cnps_sent += r.cnps_sent;
        cnps_received += r.cnps_received;
        if (r.limiter >= 0) ++limited;
        if (r.shared_limiter) ++shared;
    }
    if (n == 0) return nullptr;
    return {{"flows", n},
            {"sized_flows", sized},
            {"completed", done},
            {"packets", packets},
            {"retransmitted", resent},
            {"timeouts", timeouts},
            {"naks", naks},
            {"cnps_sent", cnps_sent},
            {"cnps_received", cnps_received},
            {"rate_limited_flows", limited},
            {"shared_limiter_flows", shared}};
}

/// ExpressPass flows together: completions and credits (sent, received, wasted, lost). Null
/// without them.
json xpass_json(const host::flow_table& flows) {
    std::uint64_t n = 0, sized = 0, done = 0, sent = 0, received = 0, wasted = 0, lost = 0,
                  resent = 0, aeolus = 0, u_sent = 0, u_delivered = 0, u_missing = 0, probes = 0;
    for (const auto& f : flows.all()) {
        if (!is_xpass(f.spec) || is_flashpass(f.spec) || !f.xpass) continue;
        const host::xpass_flow_result& r = f.xpass->result;
        ++n;
        if (f.spec.size_bytes) ++sized;
        if (f.completed) ++done;
        sent += r.credits_sent;
        received += r.credits_received;
        wasted += r.credits_wasted;
        lost += r.credits_lost;
        resent += r.retransmitted;
        if (f.spec.xpass.aeolus) {
            ++aeolus;
            u_sent += r.unscheduled_sent;
            u_delivered += r.unscheduled_delivered;
            u_missing += r.unscheduled_missing;
            probes += r.probes;
        }
    }
    if (n == 0) return nullptr;
    json out = {{"flows", n},
                {"sized_flows", sized},
                {"completed", done},
                {"credits_sent", sent},
                {"credits_received", received},
                {"credits_wasted", wasted},
                {"credits_lost", lost},
                {"wasted_share", received ? double(wasted) / double(received) : 0.0},
                {"retransmitted", resent}};
    if (aeolus) {
        out["aeolus_flows"] = aeolus;
        out["unscheduled_sent"] = u_sent;
        out["unscheduled_delivered"] = u_delivered;
        out["unscheduled_lost"] = u_sent - u_delivered;
        out["unscheduled_missing"] = u_missing;
        out["probes"] = probes;
    }
    return out;
}

/// FlashPass flows together. Null without them.
json flashpass_json(const host::flow_table& flows) {
    std::uint64_t n = 0, done = 0, emu = 0, over = 0, over_credits = 0, over_wasted = 0,
                  received = 0, wasted = 0, late = 0, packets = 0, resent = 0, sent = 0, frames = 0;
    bool batched = false;
    for (const auto& f : flows.all()) {
        if (!is_flashpass(f.spec) || !f.xpass) continue;
        const host::xpass_flow_result& r = f.xpass->result;
        ++n;
        if (f.completed) ++done;
        emu += r.emulation_sent;
        over += r.over_provisioned_sent;
        over_credits += r.over_provisioned_credits;
        over_wasted += r.over_provisioned_wasted;
        received += r.credits_received;
        wasted += r.credits_wasted;
        late += r.late_credits;
        packets += r.packets;
        resent += r.retransmitted;
        sent += r.credits_sent;
        frames += r.credit_frames;
        batched = batched || f.spec.xpass.fp.credits_per_frame() > 1;
    }
    if (n == 0) return nullptr;
    // ordinary_wasted_share: the wasted credits that took bandwidth ordinary traffic could have
    // used (over-provisioned emulation gets through only where the emulation queue has room).
    json out = {
        {"flows", n},
        {"completed", done},
        {"emulation_sent", emu},
        {"over_provisioned_sent", over},
        {"credits_received", received},
        {"credits_wasted", wasted},
        {"wasted_share", received ? double(wasted) / double(received) : 0.0},
        {"over_provisioned_credits", over_credits},
        {"over_provisioned_wasted", over_wasted},
        {"ordinary_wasted_share", received ? double(wasted - over_wasted) / double(received) : 0.0},
        {"late_credits", late},
        {"data_packets", packets},
        {"retransmitted", resent}};
    if (batched) {
        // Delayed credit sending: timestamps answered against the frames that carried them.
        out["credits_sent"] = sent;
        out["credit_frames"] = frames;
    }
    return out;
}

/// Query completion times of each partition/aggregate group.
json incast_json(const std::vector<std::unique_ptr<host::partition_aggregate>>& groups,
                 const topology& topo) {
    json out = json::array();
    for (const auto& g : groups) {
        std::vector<double> qct;
        std::uint64_t with_timeouts = 0, timeouts = 0;
        for (const auto& q : g->queries()) {
            if (q.end == 0) continue;
            qct.push_back(us(q.end - q.start));
            if (q.timeouts) ++with_timeouts;
            timeouts += q.timeouts;
        }
        const auto& sp = g->spec();
        out.push_back({{"aggregator", topo.nodes[sp.aggregator].name},
                       {"workers", sp.workers.size()},
                       {"response_bytes", sp.response_bytes},
                       {"queries", sp.queries},
                       {"queries_completed", qct.size()},
                       {"queries_with_timeouts", with_timeouts},
                       {"timeouts", timeouts},
                       {"qct_us", distribution(std::move(qct), QCT_STATS)}});
    }
    return out;
}

/// Per workload over persistent connections: its connections and messages.
json messages_json(const std::vector<std::unique_ptr<message_workload>>& workloads) {
    json out = json::array();
    for (const auto& w : workloads) {
        std::size_t connections = 0, completed = 0;
        for (const auto& p : w->spec().pairs) connections += p.connections.size();
        for (const auto& r : w->records())
            if (r.end) ++completed;
        out.push_back({{"workload", w->spec().name},
                       {"pairs", w->spec().pairs.size()},
                       {"connections", connections},
                       {"request_bytes", w->spec().request_bytes},
                       {"messages", w->records().size()},
                       {"completed", completed},
                       {"waited_for_connection", w->queued()}});
    }
    return out;
}

json host_perf_json(double wall_seconds, double cpu_seconds, std::uint64_t hops) {
    return {{"wall_time_s", wall_seconds},
            {"frame_hops_per_s", wall_seconds > 0 ? double(hops) / wall_seconds : 0.0},
            {"cpu_time_s", cpu_seconds},
            {"frame_hops_per_cpu_s", cpu_seconds > 0 ? double(hops) / cpu_seconds : 0.0},
            {"peak_rss_kib", peak_rss_kib()}};
}

/// One CSV row, field by field; end() turns the last separator into the line end.
class csv_row
{
public:
    void text(std::string_view v) {
        csv::append_field(m_row, v);
        m_row += ',';
    }
    void uint(std::uint64_t v) {
        csv::append_uint(m_row, v);
        m_row += ',';
    }
    void real(double v) {
        csv::append_real(m_row, v);
        m_row += ',';
    }
    void time(ps_t t) {
        csv::append_us(m_row, t);
        m_row += ',';
    }
    void empty() { m_row += ','; }
    const std::string& end() {
        m_row.back() = '\n';
        return m_row;
    }
    void clear() { m_row.clear(); }

private:
    std::string m_row;
};

const char* process_name(host::arrival_process p) {
    switch (p) {
        case host::arrival_process::CBR:
            return "cbr";
        case host::arrival_process::POISSON:
            return "poisson";
        case host::arrival_process::BERNOULLI:
            return "bernoulli";
        case host::arrival_process::BACKLOGGED:
            return "backlogged";
        case host::arrival_process::ON_OFF:
            break;
    }
    return "on_off";
}

}  // namespace

void platform::check_invariants() const {
    if (const std::string why = m_scheduler->audit(); !why.empty())
        throw invariant_violation("the model scheduler", now_ps(), why);
    for (const auto& sw : m_switches) sw->check_invariants();
    frame_totals t;
    add_device_totals(m_switches, m_nics, m_hosts, m_links, t);
    add_flow_totals(m_flows, t);
    if (!balances(t)) {
        std::ostringstream v;
        v << "frames do not balance: sent " << t.sent << " + control sent " << t.control_sent
          << " != delivered " << t.delivered << " + control received " << t.control_received
          << " + dropped " << t.drops.total() << " + in flight " << t.held;
        throw invariant_violation(name(), now_ps(), v.str());
    }
    // Every frame taken from the pool is somewhere in flight: none leaked, none freed twice.
    if (const std::size_t pooled = m_frames.outstanding(); pooled != t.held)
        throw invariant_violation(name(), now_ps(),
                                  std::to_string(pooled) + " frames taken from the pool, " +
                                      std::to_string(t.held) + " in flight");
}

nlohmann::json platform::summary(double wall_seconds, double cpu_seconds) const {
    json s;
    s["fabricsim_version"] = VERSION;
    s["systemc_version"] = sc_core::sc_version();
    s["scenario"] = m_sc.name;
    s["seed"] = m_sc.seed;
    s["sim_time_s"] = seconds(now_ps());
    const bool csv_detail = m_sc.detail_in_csv();
    if (csv_detail) m_detail = std::make_shared<detail_tables>();
    // Profiles only when the scenario has them, so that summaries without stay as they were.
    const auto nic_profile = [this](const nic::nic_device& n) -> json {
        if (!m_sc.has_profiles()) return nullptr;
        std::string host = n.basename();
        host.resize(host.size() - 4);  // "<host>_nic"
        return m_sc.profile_name_of(static_cast<std::uint32_t>(m_sc.topo.find(host)), false);
    };
    const std::uint64_t hops = csv_detail ? report_device_tables(m_switches, m_nics, m_hosts,
                                                                 m_links, s, *m_detail, nic_profile)
                                          : report_devices(m_switches, m_nics, m_hosts, m_links, s);
    if (m_sc.has_profiles()) {
        for (const auto& sw : m_switches)
            s["switches"][sw->basename()]["profile"] = m_sc.profile_name_of(
                static_cast<std::uint32_t>(m_sc.topo.find(sw->basename())), true);
        if (!csv_detail)
            for (const std::uint32_t h : m_sc.topo.hosts())
                s["nics"][m_sc.topo.nodes[h].name + "_nic"]["profile"] =
                    m_sc.profile_name_of(h, false);
    }
    frame_totals totals;
    add_device_totals(m_switches, m_nics, m_hosts, m_links, totals);
    add_flow_totals(m_flows, totals);
    s["frames"] = frames_json(totals, m_frames);
    s["kernel"] = kernel_json(*m_scheduler, hops);
    s["goodput_bps"] = goodput_bps(m_flows);
    s["latency_us"] = latency_json(m_flows);
    if (json p = pcap_json(m_links); !p.empty()) s["pcap"] = std::move(p);
    if (json t = tcp_json(m_flows); !t.is_null()) s["tcp"] = std::move(t);
    if (json r = roce_json(m_flows); !r.is_null()) s["roce"] = std::move(r);
    if (json x = xpass_json(m_flows); !x.is_null()) s["xpass"] = std::move(x);
    if (json x = flashpass_json(m_flows); !x.is_null()) s["flashpass"] = std::move(x);
    if (json f = fct_json(); !f.is_null()) s["fct"] = std::move(f);
    if (!m_incast.empty()) s["incast"] = incast_json(m_incast, m_sc.topo);
    if (!m_message_workloads.empty()) s["messages"] = messages_json(m_message_workloads);
    if (csv_detail) {
        for (const json& f : flows_json(m_flows, m_sc.topo))
            m_detail->flows.add({f["id"], f["src"], f["dst"]}, f, {"id", "src", "dst"});
        summarise_tables(*m_detail, m_sc.top_n, s);
    } else {
        s["flows"] = flows_json(m_flows, m_sc.topo);
    }
    s["config"] = echo_json(scenario_schema(), m_sc.echo);
    s["host_perf"] = host_perf_json(wall_seconds, cpu_seconds, hops);
    return s;
}

nlohmann::json platform::fct_json() const {
    // Flow completion times of sized TCP flows by size bin and over all, with the slowdown
    // against the idle-network ideal.
    std::vector<double> fct[ALL_BIN + 1], slow[ALL_BIN + 1];
    std::uint64_t count[ALL_BIN + 1] = {}, timeouts[ALL_BIN + 1] = {};
    for (const auto& f : m_flows.all()) {
        const auto& sp = f.spec;
        if (!is_sized_tcp(sp)) continue;
        const double ideal = f.completed ? us(ideal_fct(sp)) : 0.0;
        for (const std::size_t i : {size_bin(sp.size_bytes), ALL_BIN}) {
            ++count[i];
            timeouts[i] += f.tcp.timeouts;
            if (!f.completed) continue;
            const double t = us(f.completed - f.started);
            fct[i].push_back(t);
            slow[i].push_back(t / ideal);
        }
    }
    // Messages of the workloads over persistent connections, from their arrival.
    for (const auto& w : m_message_workloads) {
        const auto& recs = w->records();
        for (std::size_t m = 0; m < recs.size(); ++m) {
            const auto& msg = w->spec().messages[m];
            for (const std::size_t i : {size_bin(msg.bytes), ALL_BIN}) {
                ++count[i];
                timeouts[i] += w->timeouts(m);
                if (!recs[m].end) continue;
                const double t = us(recs[m].end - msg.start);
                fct[i].push_back(t);
                slow[i].push_back(t / us(ideal_message_fct(*w, m)));
            }
        }
    }
    if (count[ALL_BIN] == 0) return nullptr;
    auto bin_json = [&](std::size_t i) {
        return json{{"bin", BIN_NAMES[i]},
                    {"flows", count[i]},
                    {"completed", fct[i].size()},
                    {"timeouts", timeouts[i]},
                    {"fct_us", distribution(std::move(fct[i]), FCT_STATS)},
                    {"slowdown", distribution(std::move(slow[i]), FCT_STATS)}};
    };
    json bins = json::array();
    for (std::size_t i = 0; i < SIZE_BINS; ++i)
        if (count[i]) bins.push_back(bin_json(i));
    return {{"all", bin_json(ALL_BIN)}, {"by_size", std::move(bins)}};
}

void platform::write_detail_csv(const std::string& out_dir) const {
    if (!m_detail) return;
    for (const auto& [file, table] : m_detail->files())
        if (table->rows()) table->write(out_dir + "/" + file);
}

void platform::write_flows_csv(const std::string& path) const {
    output_file f(path);
    f.write(
        "id,src,dst,process,rate_bps,packet_bytes,start_us,stop_us,sent_frames,sent_bytes,"
        "delivered_frames,delivered_bytes,undelivered_frames,throughput_bps,latency_min_us,"
        "latency_mean_us,latency_max_us,ce_frames,transport,size_bytes,rx_bytes,goodput_bps,"
        "fct_us,ack_frames,retransmitted_segments,fast_retransmits,timeouts,ecn_reductions,"
        "ece_acks,cwnd_bytes,alpha,srtt_us,ideal_fct_us,slowdown\n");
    const double sim_s = seconds(now_ps());
    csv_row row;
    for (const auto& r : m_flows.all()) {
        const auto& sp = r.spec;
        const bool tcp = is_tcp(sp);
        const ps_t stop = tcp && r.completed ? r.completed : std::min<ps_t>(sp.stop, now_ps());
        const double active = stop > sp.start ? seconds(stop - sp.start) : sim_s;
        auto bps = [active](std::uint64_t bytes) {
            return active > 0 ? double(bytes) * 8.0 / active : 0.0;
        };
        row.clear();
        row.uint(sp.id);
        row.text(m_sc.topo.nodes[sp.src].name);
        row.text(m_sc.topo.nodes[sp.dst].name);
        row.text(process_name(sp.process));
        row.uint(sp.rate_bps);
        row.uint(sp.packet_bytes);
        row.time(sp.start);
        row.time(stop);
        row.uint(r.sent_frames);
        row.uint(r.sent_bytes);
        row.uint(r.delivered_frames);
        row.uint(r.delivered_bytes);
        row.uint(r.sent_frames - r.delivered_frames);
        row.real(bps(r.delivered_bytes));
        row.time(r.delivered_frames ? r.latency_min : 0);
        row.real(mean_latency_us(r));
        row.time(r.latency_max);
        row.uint(r.ce_frames);
        row.text(transport_name(sp));
        row.uint(sp.size_bytes);
        row.uint(goodput_bytes(r));
        row.real(bps(goodput_bytes(r)));
        if ((tcp || is_roce(sp) || is_xpass(sp)) && r.completed)
            row.time(r.completed - r.started);
        else
            row.empty();
        const auto& t = r.tcp;
        for (const std::uint64_t v : {r.ack_sent, t.retransmitted_segments, t.fast_retransmits,
                                      t.timeouts, t.ecn_reductions, t.ece_acks, t.cwnd})
            row.uint(v);
        row.real(t.alpha);
        row.time(t.srtt);
        if (is_sized_tcp(sp)) {
            const ps_t ideal = ideal_fct(sp);
            row.time(ideal);
            if (r.completed)
                row.real(us(r.completed - r.started) / us(ideal));
            else
                row.empty();
        } else {
            row.empty();
            row.empty();
        }
        f.write(row.end());
    }
    f.close();
}

void platform::write_queries_csv(const std::string& path) const {
    if (m_incast.empty()) return;
    output_file f(path);
    f.write("group,query,start_us,end_us,qct_us,timeouts\n");
    csv_row row;
    for (std::size_t g = 0; g < m_incast.size(); ++g) {
        const auto& qs = m_incast[g]->queries();
        for (std::size_t i = 0; i < qs.size(); ++i) {
            row.clear();
            row.uint(g);
            row.uint(i);
            row.time(qs[i].start);
            if (qs[i].end) {
                row.time(qs[i].end);
                row.time(qs[i].end - qs[i].start);
            } else {
                row.empty();
                row.empty();
            }
            row.uint(qs[i].timeouts);
            f.write(row.end());
        }
    }
    f.close();
}

void platform::write_messages_csv(const std::string& path) const {
    if (m_message_workloads.empty()) return;
    output_file f(path);
    f.write(
        "workload,message,src,dst,connection_flow,size_bytes,start_us,dispatch_us,end_us,fct_us,"
        "timeouts,ideal_fct_us,slowdown\n");
    csv_row row;
    for (std::size_t w = 0; w < m_message_workloads.size(); ++w) {
        const message_workload& mw = *m_message_workloads[w];
        const auto& recs = mw.records();
        for (std::size_t m = 0; m < recs.size(); ++m) {
            const auto& msg = mw.spec().messages[m];
            const auto& pair = mw.spec().pairs[msg.pair];
            const auto& r = recs[m];
            row.clear();
            row.uint(w);
            row.uint(m);
            row.text(m_sc.topo.nodes[pair.src].name);
            row.text(m_sc.topo.nodes[pair.dst].name);
            if (r.connection != connection_pool::NONE) {
                row.uint(pair.connections[r.connection].data_flow);
            } else {
                row.empty();
            }
            row.uint(msg.bytes);
            row.time(msg.start);
            if (r.connection != connection_pool::NONE)
                row.time(r.dispatched);
            else
                row.empty();
            const ps_t ideal = ideal_message_fct(mw, m);
            if (r.end) {
                row.time(r.end);
                row.time(r.end - msg.start);
            } else {
                row.empty();
                row.empty();
            }
            row.uint(mw.timeouts(m));
            row.time(ideal);
            if (r.end)
                row.real(us(r.end - msg.start) / us(ideal));
            else
                row.empty();
            f.write(row.end());
        }
    }
    f.close();
}

namespace {
/// A RoCE flow's DCQCN trace: CNPs sent by the receiver, CNPs and rate changes at the sender.
void write_roce_trace(output_file& f, const host::flow_record& r) {
    static constexpr const char* EVENTS[] = {"cnp_sent", "cnp", "timer", "bytes"};
    f.write("time_us,event,rate_gbps,target_gbps,alpha\n");
    csv_row row;
    if (!r.roce) return f.close();
    for (const auto& t : r.roce->trace) {
        row.clear();
        row.time(t.at);
        row.text(EVENTS[static_cast<unsigned>(t.what)]);
        row.real(t.rate_bps / 1e9);
        row.real(t.target_bps / 1e9);
        row.real(t.alpha);
        f.write(row.end());
    }
    f.close();
}
/// An ExpressPass flow's trace: the receiver's credit rate at each feedback update.
void write_xpass_trace(output_file& f, const host::flow_record& r) {
    // FlashPass: the sender's emulation rate at each Algorithm 2 update, E_out in the w column.
    f.write(r.spec.xpass.flashpass ? "time_us,emulation_rate_gbps,e_out,loss,rtt_us\n"
                                   : "time_us,credit_rate_gbps,w,loss,rtt_us\n");
    csv_row row;
    if (!r.xpass) return f.close();
    for (const auto& t : r.xpass->trace) {
        row.clear();
        row.time(t.at);
        row.real(t.credit_rate_bps / 1e9);
        row.real(t.w);
        row.real(t.loss);
        row.time(t.rtt);
        f.write(row.end());
    }
    f.close();
}
}  // namespace

void platform::write_traces(const std::string& dir) const {
    bool any = false;
    csv_row row;
    for (const auto& r : m_flows.all()) {
        if (!r.spec.trace) continue;
        if (!any) std::filesystem::create_directories(dir);
        any = true;
        output_file f(dir + "/flow" + std::to_string(r.spec.id) + ".csv");
        if (r.spec.transport == host::transport_kind::ROCE) {
            write_roce_trace(f, r);
            continue;
        }
        if (is_xpass(r.spec)) {
            write_xpass_trace(f, r);
            continue;
        }
        const bool gemini = r.spec.tcp.cc.kind == host::cc_kind::GEMINI;
        f.write(
            "time_us,cwnd_bytes,ssthresh_bytes,flight_bytes,acked_bytes,alpha,marked_fraction,"
            "srtt_us,rtt_sample_us,ece");
        f.write(gemini ? ",rtt_min_us,rtt_base_us\n" : "\n");
        for (const auto& t : r.trace) {
            row.clear();
            row.time(t.at);
            for (const std::uint64_t v : {t.cwnd, t.ssthresh, t.flight, t.acked}) row.uint(v);
            row.real(t.alpha);
            row.real(t.last_f);
            row.time(t.srtt);
            row.time(t.rtt_sample);
            row.uint(t.ece ? 1 : 0);
            if (gemini) {
                row.time(t.rtt_min);
                row.time(t.rtt_base);
            }
            f.write(row.end());
        }
        f.close();
    }
}

idle_path platform::path_between(std::uint32_t src, std::uint32_t dst) const {
    const topology& topo = m_sc.topo;
    idle_path p;
    // With a PCIe model the NIC's latency depends on the frame: an MTU frame's stands for all.
    p.nic_tx_latency = m_sc.nic_config_of(src).idle_tx_latency(ETH_HEADER + 1500);
    p.nic_rx_latency = m_sc.nic_config_of(dst).idle_rx_latency(ETH_HEADER + 1500);
    std::uint32_t node = src, port = 0;
    for (std::size_t hop = 0; hop <= topo.nodes.size(); ++hop) {
        const auto i = std::size_t(topo.link_at(node, port));
        const link_desc& l = topo.links[i];
        const bool forward = l.a.node == node && l.a.port == port;
        const phy::link_timing& link = (forward ? m_links[i]->ab : m_links[i]->ba).timing();
        node = forward ? l.b.node : l.a.node;
        if (node == dst) {
            p.hops.push_back({&link, nullptr});
            return p;
        }
        if (m_switch_of_node[node] < 0) break;
        p.hops.push_back({&link, &m_switches[std::size_t(m_switch_of_node[node])]->config()});
        const auto ports = m_routes.ports(node, dst);
        if (ports.empty()) break;
        port = ports.front();  // the first of equal-cost ports
    }
    throw std::logic_error("no switched path from " + topo.nodes[src].name + " to " +
                           topo.nodes[dst].name);
}

ps_t platform::path_time(std::uint32_t src, std::uint32_t dst, double wire_bytes,
                         double last_wire_bytes, std::uint64_t packets) const {
    auto frame_of = [](double wire) {
        frame f;
        f.length = static_cast<std::uint32_t>(wire) - PREAMBLE_SFD - IFG_BYTES - FCS_BYTES;
        return f;
    };
    // Only the TCP handshake's RTT seed uses this: it keeps the pipeline latency unrounded, as
    // before the ideal FCT took the core clock into account; rounding it changes TCP runs.
    return path_between(src, dst).arrival(0, frame_of(wire_bytes), frame_of(last_wire_bytes),
                                          packets, idle_path::clock_rounding::OFF);
}

ps_t platform::ideal_message_fct(const message_workload& w, std::size_t m) const {
    const auto& msg = w.spec().messages[m];
    const auto& pair = w.spec().pairs[msg.pair];
    const auto& conn = pair.connections.front();
    ps_t at = msg.start;
    if (conn.request_flow >= 0) {
        host::flow_spec req = m_flows[static_cast<std::uint32_t>(conn.request_flow)].spec;
        req.size_bytes = w.spec().request_bytes;
        req.start = at;
        at += ideal_fct(req);
    }
    host::flow_spec data = m_flows[conn.data_flow].spec;
    data.size_bytes = msg.bytes;
    data.start = at;
    return at + ideal_fct(data) - msg.start;
}

ps_t platform::ideal_fct(const host::flow_spec& flow) const {
    const std::uint32_t mss = flow.tcp.cc.mss;
    const std::uint64_t segments = (flow.size_bytes + mss - 1) / mss;
    frame segment, last;
    // As the host builds them (host::new_frame): a PCP adds a VLAN tag.
    segment.vlan_tagged = last.vlan_tagged = flow.pcp != 0;
    segment.set_ipv4(frame_kind::IPV4_TCP, mss);
    last.set_ipv4(frame_kind::IPV4_TCP,
                  static_cast<std::uint32_t>(flow.size_bytes - (segments - 1) * mss));
    return path_between(flow.src, flow.dst).arrival(flow.start, segment, last, segments) -
           flow.start;
}

}  // namespace fabricsim::platforms
