#include <algorithm>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include "fabricsim/platforms/platform.h"

namespace fabricsim::platforms {

void print_summary(const nlohmann::json& s, std::ostream& os) {
    char line[256];
    auto row = [&](const char* k, const std::string& v) {
        std::snprintf(line, sizeof line, "  %-26s %s\n", k, v.c_str());
        os << line;
    };
    auto num = [](double v, const char* fmt = "%.0f") {
        char b[64];
        std::snprintf(b, sizeof b, fmt, v);
        return std::string(b);
    };
    const auto& fr = s["frames"];
    os << "FabricSim " << s["fabricsim_version"].get<std::string>() << " - scenario '"
       << s["scenario"].get<std::string>() << "', seed " << s["seed"].get<std::uint64_t>()
       << "\n\n";
    std::string sim = num(s["sim_time_s"].get<double>() * 1e3, "%.3f ms");
    if (s.contains("stop_reason"))
        sim += " (stopped early by " + s["stop_reason"].get<std::string>() + ")";
    row("simulated time", sim);
    row("elaboration", num(s["host_perf"].value("elaboration_s", 0.0), "%.3f s"));
    row("wall time", num(s["host_perf"]["wall_time_s"].get<double>(), "%.3f s"));
    row("frame-hops / wall second",
        num(s["host_perf"]["frame_hops_per_s"].get<double>() / 1e6, "%.2f M"));
    row("activations / frame-hop",
        num(s["kernel"]["activations_per_frame_hop"].get<double>(), "%.3f"));
    row("frames sent", num(fr["sent"].get<double>()));
    row("frames delivered", num(fr["delivered"].get<double>()));
    std::string drops = num(fr["dropped"].get<double>());
    std::string causes;
    for (const auto& [k, v] : fr["dropped_by_cause"].items())
        if (v.get<std::uint64_t>() > 0)
            causes +=
                (causes.empty() ? "" : ", ") + k + " " + std::to_string(v.get<std::uint64_t>());
    if (!causes.empty()) drops += " (" + causes + ")";
    row("frames dropped", drops);
    row("frames in flight at end", num(fr["in_flight"].get<double>()));
    const bool control = fr.contains("control_sent");
    row("conservation", !fr["conserved"].get<bool>() ? "VIOLATED"
                        : control ? "sent + control sent = delivered + control received + "
                                    "dropped + in flight"
                                  : "sent = delivered + dropped + in flight");
    row("goodput", num(s["goodput_bps"].get<double>() / 1e9, "%.3f Gbps"));
    const auto& lat = s["latency_us"];
    row("one-way latency (us)", "mean " + num(lat["mean"].get<double>(), "%.2f") + "  p50 " +
                                    num(lat["p50"].get<double>(), "%.2f") + "  p99 " +
                                    num(lat["p99"].get<double>(), "%.2f") + "  p99.9 " +
                                    num(lat["p999"].get<double>(), "%.2f"));

    if (s.contains("pcap"))
        for (const auto& [file, p] : s["pcap"].items())
            if (p["frames_not_captured"].get<std::uint64_t>() > 0)
                row("pcap size cap reached", file + ": " +
                                                 num(p["frames_not_captured"].get<double>()) +
                                                 " frames not captured (results.pcap_max_bytes)");

    // Per switch, when the scenario has device profiles: which one and its buffer.
    bool profiles = false;
    for (const auto& [swn, sw] : s["switches"].items())
        profiles = profiles || sw.contains("profile");
    if (profiles) {
        os << "\n  switch profiles\n";
        std::snprintf(line, sizeof line, "  %-14s %-20s %14s %12s\n", "switch", "profile",
                      "buffer (B)", "drops");
        os << line;
        for (const auto& [swn, sw] : s["switches"].items()) {
            std::uint64_t d = 0;
            if (sw["ports"].is_array())  // else results.detail: csv, ports in switch_ports.csv
                for (const auto& p : sw["ports"])
                    for (const auto& [k, v] : p["drops"].items()) d += v.get<std::uint64_t>();
            std::snprintf(line, sizeof line, "  %-14s %-20s %14llu %12llu\n", swn.c_str(),
                          sw["profile"].get<std::string>().c_str(),
                          (unsigned long long)sw["buffer_bytes"].get<std::uint64_t>(),
                          (unsigned long long)d);
            os << line;
        }
    }

    // Rate-limited pipelines (switch.pipeline): the busiest one of each switch.
    bool pipelines = false;
    for (const auto& [swn, sw] : s["switches"].items())
        pipelines = pipelines || sw.contains("pipelines");
    if (pipelines) {
        os << "\n  switch pipelines\n";
        std::snprintf(line, sizeof line, "  %-14s %-18s %9s %10s %12s %14s\n", "switch", "chip",
                      "pipelines", "max util", "waited", "overflow drops");
        os << line;
        for (const auto& [swn, sw] : s["switches"].items()) {
            if (!sw.contains("pipelines")) continue;
            double util = 0;
            std::uint64_t waited = 0, overflow = 0;
            for (const auto& p : sw["pipelines"]) {
                util = std::max(util, p["utilisation"].get<double>());
                waited += p["waited"].get<std::uint64_t>();
                overflow += p["overflow_drops"].get<std::uint64_t>();
            }
            std::snprintf(line, sizeof line, "  %-14s %-18s %9zu %10.3f %12llu %14llu\n",
                          swn.c_str(), sw.value("chip", "generic").c_str(), sw["pipelines"].size(),
                          util, (unsigned long long)waited, (unsigned long long)overflow);
            os << line;
        }
    }

    struct port_row {
        std::string name;
        double peak, tx;
        std::uint64_t drops;
    };
    std::vector<port_row> ports;
    if (const auto top = s.find("top"); top != s.end()) {  // results.detail: csv
        for (const auto& p :
             top->value("switch_ports_by_queue_peak_cell_bytes", nlohmann::json::array()))
            ports.push_back(
                {p["switch"].get<std::string>() + ":" + std::to_string(p["port"].get<int>()),
                 p["queue_peak_cell_bytes"].get<double>(), p["tx_frames"].get<double>(),
                 p["drops.total"].get<std::uint64_t>()});
    }
    for (const auto& [swn, sw] : s["switches"].items())
        for (const auto& p : sw["ports"].is_array() ? sw["ports"] : nlohmann::json::array()) {
            std::uint64_t d = 0;
            for (const auto& [k, v] : p["drops"].items()) d += v.get<std::uint64_t>();
            ports.push_back({swn + ":" + std::to_string(p["port"].get<int>()),
                             p["queue_peak_cell_bytes"].get<double>(), p["tx_frames"].get<double>(),
                             d});
        }
    std::stable_sort(ports.begin(), ports.end(),
                     [](const port_row& a, const port_row& b) { return a.peak > b.peak; });
    os << "\n  busiest switch ports (by peak queue)\n";
    std::snprintf(line, sizeof line, "  %-14s %34s %14s %10s\n", "port",
                  "peak queue (cells x cell size, B)", "tx frames", "drops");
    os << line;
    for (std::size_t i = 0; i < std::min<std::size_t>(5, ports.size()); ++i) {
        std::snprintf(line, sizeof line, "  %-14s %34.0f %14.0f %10llu\n", ports[i].name.c_str(),
                      ports[i].peak, ports[i].tx, (unsigned long long)ports[i].drops);
        os << line;
    }
    if (const auto agg = s.find("aggregate"); agg != s.end()) {  // results.detail: csv
        const auto f = agg->find("flows");
        os << "\n  flows (" << (f == agg->end() ? 0 : (*f)["count"].get<std::uint64_t>())
           << "): per-flow detail in flows.csv and summary_flows.csv\n";
    } else {
        const auto& flows = s["flows"];
        os << "\n  flows (" << flows.size() << ")\n";
        std::snprintf(line, sizeof line, "  %-5s %-8s %-8s %12s %12s %12s\n", "id", "src", "dst",
                      "sent", "delivered", "mean lat us");
        os << line;
        for (std::size_t i = 0; i < std::min<std::size_t>(8, flows.size()); ++i) {
            const auto& f = flows[i];
            std::snprintf(line, sizeof line, "  %-5d %-8s %-8s %12llu %12llu %12.2f\n",
                          f["id"].get<int>(), f["src"].get<std::string>().c_str(),
                          f["dst"].get<std::string>().c_str(),
                          (unsigned long long)f["sent_frames"].get<std::uint64_t>(),
                          (unsigned long long)f["delivered_frames"].get<std::uint64_t>(),
                          f["latency_mean_us"].get<double>());
            os << line;
        }
        if (flows.size() > 8) os << "  ... " << flows.size() - 8 << " more in flows.csv\n";
    }

    if (s.contains("tcp")) {
        const auto& t = s["tcp"];
        os << "\n";
        std::string v = num(t["flows"].get<double>()) + " connections, " +
                        num(t["timeouts"].get<double>()) + " retransmission timeouts";
        if (t["sized_flows"].get<std::uint64_t>() > 0)
            v += "; " + num(t["completed"].get<double>()) + " of " +
                 num(t["sized_flows"].get<double>()) + " sized flows completed";
        row("TCP", v);
    }
    if (s.contains("roce")) {
        const auto& r = s["roce"];
        if (!s.contains("tcp")) os << "\n";
        std::string v = num(r["flows"].get<double>()) + " queue pairs, " +
                        num(r["retransmitted"].get<double>()) + " packets resent, " +
                        num(r["timeouts"].get<double>()) + " timeouts, " +
                        num(r["cnps_received"].get<double>()) + " CNPs, " +
                        num(r["rate_limited_flows"].get<double>()) + " rate-limited";
        if (r["sized_flows"].get<std::uint64_t>() > 0)
            v += "; " + num(r["completed"].get<double>()) + " of " +
                 num(r["sized_flows"].get<double>()) + " sized flows completed";
        row("RoCE", v);
    }
    if (s.contains("xpass")) {
        const auto& x = s["xpass"];
        if (!s.contains("tcp") && !s.contains("roce")) os << "\n";
        std::string v = num(x["flows"].get<double>()) + " flows, " +
                        num(x["credits_sent"].get<double>()) + " credits sent, " +
                        num(x["credits_wasted"].get<double>()) + " wasted, " +
                        num(x["retransmitted"].get<double>()) + " packets resent";
        if (x["sized_flows"].get<std::uint64_t>() > 0)
            v += "; " + num(x["completed"].get<double>()) + " of " +
                 num(x["sized_flows"].get<double>()) + " sized flows completed";
        row("ExpressPass", v);
    }
    if (s.contains("flashpass")) {
        const auto& x = s["flashpass"];
        if (!s.contains("tcp") && !s.contains("roce") && !s.contains("xpass")) os << "\n";
        row("FlashPass", num(x["flows"].get<double>()) + " flows, " +
                             num(x["emulation_sent"].get<double>()) + " emulation packets (" +
                             num(x["over_provisioned_sent"].get<double>()) +
                             " over-provisioned), " + num(x["credits_wasted"].get<double>()) +
                             " credits wasted (" + num(x["over_provisioned_wasted"].get<double>()) +
                             " over-provisioned), " + num(x["late_credits"].get<double>()) +
                             " late; " + num(x["completed"].get<double>()) + " flows completed");
    }
    if (s.contains("fct")) {
        os << "\n  flow completion time by size (us; slowdown = FCT / idle-network FCT)\n";
        std::snprintf(line, sizeof line, "  %-12s %7s %7s %10s %10s %10s %9s %9s\n", "size",
                      "flows", "done", "mean", "p50", "p99", "slow p50", "slow p99");
        os << line;
        auto print_bin = [&](const nlohmann::json& b) {
            std::snprintf(line, sizeof line,
                          "  %-12s %7llu %7llu %10.1f %10.1f %10.1f %9.2f %9.2f\n",
                          b["bin"].get<std::string>().c_str(),
                          (unsigned long long)b["flows"].get<std::uint64_t>(),
                          (unsigned long long)b["completed"].get<std::uint64_t>(),
                          b["fct_us"]["mean"].get<double>(), b["fct_us"]["p50"].get<double>(),
                          b["fct_us"]["p99"].get<double>(), b["slowdown"]["p50"].get<double>(),
                          b["slowdown"]["p99"].get<double>());
            os << line;
        };
        for (const auto& b : s["fct"]["by_size"]) print_bin(b);
        print_bin(s["fct"]["all"]);
    }
    if (s.contains("incast")) {
        os << "\n  partition/aggregate queries (QCT in us)\n";
        std::snprintf(line, sizeof line, "  %-10s %7s %9s %9s %10s %10s %10s\n", "aggregator",
                      "workers", "queries", "w/ RTO", "p50", "p95", "max");
        os << line;
        for (const auto& g : s["incast"]) {
            std::snprintf(line, sizeof line, "  %-10s %7llu %9llu %9llu %10.1f %10.1f %10.1f\n",
                          g["aggregator"].get<std::string>().c_str(),
                          (unsigned long long)g["workers"].get<std::uint64_t>(),
                          (unsigned long long)g["queries_completed"].get<std::uint64_t>(),
                          (unsigned long long)g["queries_with_timeouts"].get<std::uint64_t>(),
                          g["qct_us"]["p50"].get<double>(), g["qct_us"]["p95"].get<double>(),
                          g["qct_us"]["max"].get<double>());
            os << line;
        }
    }
}

}  // namespace fabricsim::platforms
