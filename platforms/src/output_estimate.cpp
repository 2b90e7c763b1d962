#include "fabricsim/platforms/output_estimate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "fabricsim/core/frame.h"

namespace fabricsim::platforms {

namespace {

double digits(double v) {
    return v < 10 ? 1 : std::floor(std::log10(v)) + 1;
}

std::string human(double bytes) {
    const char* units[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
    std::size_t u = 0;
    while (bytes >= 1000 && u + 1 < std::size(units)) {
        bytes /= 1000;
        ++u;
    }
    char b[48];
    std::snprintf(b, sizeof b, "%.3g %s", bytes, units[u]);
    return b;
}

/// Bytes a capture adds per byte on the wire at snap length `snap`, at the frame length that
/// makes it largest: 16 B record header + min(snap, frame without FCS) per frame + 20 B
/// preamble and IFG.
double pcap_bytes_per_wire_byte(double snap) {
    const double frame = std::clamp(snap + FCS_BYTES, 64.0, 16384.0);
    return (16 + std::min(snap, frame - FCS_BYTES)) / (frame + PREAMBLE_SFD + IFG_BYTES);
}

}  // namespace

output_estimate estimate_output(const scenario& sc) {
    output_estimate e;
    const double duration_s = double(sc.duration) / double(PS_PER_S);
    if (sc.sample_interval > 0) {
        e.timeseries_rows = std::ceil(double(sc.duration) / double(sc.sample_interval));
        double digit_columns = 0;
        for (const std::uint32_t n : sc.topo.switches()) {
            const sw::switch_config& c = sc.switch_config_of(n);
            const double pools = double(c.mmu.pool_cells[2] > 0) + (c.mmu.pool_cells[3] > 0);
            const double flow_control =
                double(c.flow_control.enabled()) + 2.0 * c.flow_control_generation.enabled();
            const double cols =
                4 + pools +
                sc.topo.nodes[n].ports *
                    (1.0 + (sc.per_queue_series && c.queues > 1 ? c.queues : 0) + flow_control +
                     (c.fera.rcp()       ? 4
                      : c.fera.enabled() ? 3
                                         : 0));
            digit_columns += cols * (digits(double(c.buffer_bytes)) + 1);
        }
        for (const std::uint32_t n : sc.topo.hosts()) {  // NIC pacer and limiter-bank columns
            const nic::nic_config& c = sc.nic_config_of(n);
            // QCN: in use, flows, lowest and mean rate, and one rate per limiter of a small bank
            // (nic_device::series_columns).
            const double qcn_cols =
                c.qcn.enabled() ? 4.0 + (c.qcn.rate_limiters <= 8 ? c.qcn.rate_limiters : 0) : 0;
            const double cols =
                (c.pacer.mode != nic::nic_config::pacer_config::preset::NONE ? 3 : 0) +
                (c.dcqcn.enabled() ? 4 : 0) + qcn_cols + (c.bcn.enabled() ? 4 : 0) +
                (c.fera.enabled() ? 4 : 0);
            digit_columns += cols * (digits(double(sc.topo.port_rate(n, 0))) + 1);
        }
        e.timeseries_row_bytes =
            digits(double(sc.duration) / double(PS_PER_US)) + 7 + 1 + digit_columns;
    }
    const ps_t stop = std::min(sc.duration, sc.pcap_bounds.stop);
    const double window_s =
        stop > sc.pcap_bounds.start ? double(stop - sc.pcap_bounds.start) / double(PS_PER_S) : 0;
    for (const auto& p : sc.pcap) {
        const double wire = double(sc.topo.port_rate(p.at.node, p.at.port)) / 8 * window_s;
        e.pcap_bytes += std::min(double(sc.pcap_bounds.max_bytes),
                                 24 + wire * pcap_bytes_per_wire_byte(sc.pcap_bounds.snaplen));
    }
    constexpr double TRACE_ROW_BYTES = 128;
    constexpr double TABLE_BYTES_PER_FLOW = 2048;  // a flows.csv row and the flow's summary entry
    const double overhead =
        IPV4_HEADER + TCP_HEADER + ETH_HEADER + FCS_BYTES + PREAMBLE_SFD + IFG_BYTES;
    for (const auto& f : sc.flows) {
        e.table_bytes += TABLE_BYTES_PER_FLOW;
        if (!f.trace || f.transport == host::transport_kind::UDP) continue;
        const double active_s =
            duration_s - std::min(duration_s, double(f.start) / double(PS_PER_S));
        if (f.transport == host::transport_kind::ROCE) {
            // At most a CNP sent and received per CNP interval, and a rate change per increase
            // period and per byte-counter event at line rate.
            const auto& nic = sc.nic_config_of(f.src);
            if (!nic.dcqcn.enabled()) continue;
            const std::uint64_t rate = sc.topo.port_rate(f.src, 0);
            const auto p = nic.dcqcn.params(rate);
            const auto& np = sc.nic_config_of(f.dst).dcqcn;
            double per_s = 1 / (double(p.increase_period) / double(PS_PER_S));
            if (np.enabled()) per_s += 2 / (double(np.cnp_gap()) / double(PS_PER_S));
            if (p.byte_counter) per_s += double(rate) / 8 / double(p.byte_counter);
            e.trace_bytes += std::ceil(per_s * active_s) * TRACE_ROW_BYTES;
            continue;
        }
        if (f.transport == host::transport_kind::XPASS) {
            // One row per credit-rate update: at most one per RTT, and RTTs are >= 1 us.
            e.trace_bytes += std::ceil(active_s * 1e6) * TRACE_ROW_BYTES;
            continue;
        }
        const double segments =
            double(sc.topo.port_rate(f.src, 0)) / 8 * active_s / (f.tcp.cc.mss + overhead);
        e.trace_bytes += std::ceil(segments) * TRACE_ROW_BYTES;
    }
    for (const auto& g : sc.incast) e.table_bytes += 64.0 * g.queries;
    for (const auto& w : sc.message_workloads) e.table_bytes += 128.0 * double(w.messages.size());
    return e;
}

double vcd_bytes(const scenario& sc, const std::vector<vcd_writer::signal>& traced) {
    if (traced.empty() || sc.sample_interval == 0) return 0;
    const double samples = std::ceil(double(sc.duration) / double(sc.sample_interval)) + 1;
    // vcd_writer's identifiers: base 94, one character up to 94 signals.
    const double id = traced.size() <= 94 ? 1 : traced.size() <= 94 * 94 ? 2 : 3;
    double header = 256, per_sample = 2 + digits(double(sc.duration));  // "#<ps>\n"
    for (const vcd_writer::signal& s : traced) {
        header += double(s.path.size()) + 48;  // $scope/$var lines
        per_sample += (s.real ? 1 + 24 : 1 + 64) + 1 + id + 1;
    }
    return header + samples * per_sample;
}

void check_output_estimate(const scenario& sc) {
    check_output_estimate(sc, {});
}

void check_output_estimate(const scenario& sc, const std::vector<vcd_writer::signal>& traced) {
    const output_estimate e = estimate_output(sc);
    const double vcd = vcd_bytes(sc, traced);
    if (e.total() + vcd <= double(sc.max_output_bytes)) return;
    std::string series = human(e.timeseries_bytes());
    if (e.timeseries_rows > 0) {
        char rows[96];
        std::snprintf(rows, sizeof rows, ": %.4g rows of %.0f B", e.timeseries_rows,
                      e.timeseries_row_bytes);
        series += rows;
    }
    const std::string vcd_part = traced.empty() ? ""
                                                : "; trace.vcd up to " + human(vcd) + " (" +
                                                      std::to_string(traced.size()) +
                                                      " signals of results.vcd)";
    throw config_error(
        "results.max_output_bytes",
        "the results would take about " + human(e.total() + vcd) + ", more than the limit of " +
            human(double(sc.max_output_bytes)) + " (" + std::to_string(sc.max_output_bytes) +
            " B): timeseries.csv " + series + vcd_part + "; pcaps " + human(e.pcap_bytes) +
            "; traces " + human(e.trace_bytes) +
            "; flows.csv, queries.csv, messages.csv and summary.json " + human(e.table_bytes) +
            ". Raise results.max_output_bytes or write less (results.sample_interval, "
            "results.vcd, results.pcap_max_bytes/pcap_start/pcap_stop, trace)");
}

}  // namespace fabricsim::platforms
