#pragma once
/// A platform top-level elaborated from a scenario's topology: switches, NICs, hosts and
/// links bound over the Ethernet TLM protocol, routes installed, sources attached, plus one
/// periodic sampler for the time series (run by the model scheduler, off when the interval is 0).
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>

#include "fabricsim/core/frame_pool.h"
#include "fabricsim/core/invariants.h"
#include "fabricsim/core/output_file.h"
#include "fabricsim/core/scheduler.h"
#include "fabricsim/core/vcd_writer.h"
#include "fabricsim/host/flow_table.h"
#include "fabricsim/host/host.h"
#include "fabricsim/host/partition_aggregate.h"
#include "fabricsim/nic/nic_device.h"
#include "fabricsim/phy/link.h"
#include "fabricsim/platforms/idle_path.h"
#include "fabricsim/platforms/message_workload.h"
#include "fabricsim/platforms/scenario.h"
#include "fabricsim/switch/switch_device.h"

namespace fabricsim::platforms {

inline constexpr const char* VERSION = "0.1.0";

class platform : public sc_core::sc_module
{
public:
    /// `out_dir` receives pcap and time-series files while the simulation runs ("" = none).
    platform(const sc_core::sc_module_name& name, const scenario& sc, const std::string& out_dir);

    const scenario& config() const { return m_sc; }
    /// The platform's own model scheduler: its blocks' timers, counts and run-ahead window
    /// (two platforms in one process do not share one).
    scheduler& model_scheduler() { return *m_scheduler; }
    const scheduler& model_scheduler() const { return *m_scheduler; }
    /// The platform's own frame pool (frames in flight in it, nothing else).
    const frame_pool& frames() const { return m_frames; }
    const host::flow_table& flows() const { return m_flows; }
    sw::switch_device& switch_named(const std::string& name);
    const std::vector<std::unique_ptr<sw::switch_device>>& switches() const { return m_switches; }
    const std::vector<std::unique_ptr<phy::link>>& links() const { return m_links; }
    const std::vector<std::unique_ptr<nic::nic_device>>& nics() const { return m_nics; }

    /// Builds summary.json content after the run (wall-clock figures under "host_perf").
    nlohmann::json summary(double wall_seconds, double cpu_seconds) const;
    /// Throws write_error if writing the time series or a pcap has failed so far.
    void check_outputs() const;
    /// Flushes and closes the time series and pcaps; throws write_error on failure.
    void close_outputs();
    /// Throws invariant_violation (invariants.h) unless, now: every pending timer is due at or
    /// after now and where the scheduler will find it; each switch's MMU counters are the sums of
    /// the cells of the frames it holds and no lossless PG lost a frame but to its headroom; and
    /// the frames balance (sent = delivered + dropped by cause + in flight, control frames
    /// included). Reads only: a checked run gives the results of an unchecked one.
    void check_invariants() const;
    /// Frames put on all wires so far (for the progress line).
    std::uint64_t frames_on_wires() const;
    void write_flows_csv(const std::string& path) const;
    /// With results.detail: csv, the per-device and per-flow tables that summary() filled
    /// (switch_ports.csv, nics.csv, links.csv, ...) into `out_dir`; nothing otherwise.
    void write_detail_csv(const std::string& out_dir) const;
    struct detail_tables;
    /// queries.csv: one row per partition/aggregate query (start, QCT, timeouts).
    void write_queries_csv(const std::string& path) const;
    /// messages.csv: one row per message of the workloads over persistent connections.
    void write_messages_csv(const std::string& path) const;
    /// One CSV per traced TCP flow (cwnd, alpha, RTT at every ACK) under `dir`.
    void write_traces(const std::string& dir) const;

    /// Completion time of sized TCP flow `flow` on the idle network (idle_path.h), from its start
    /// (the clock edges its frames meet depend on it).
    ps_t ideal_fct(const host::flow_spec& flow) const;

private:
    // Elaboration, in this order (the constructor calls each once).
    void build_devices();  ///< switches, NICs and hosts, each with its profile's configuration
    void build_links(const std::string& out_dir);  ///< links bound to ports, pcap captures
    /// A link's scheduled rate steps to the FERA congestion points of the switch ports on it.
    void rate_steps_to_switches(const link_desc& ld);
    void install_routes();  ///< shortest-path (ECMP) routes per switch
    void attach_flows();    ///< sources and TCP receivers on their hosts, first RTT samples
    void start_incast();    ///< partition/aggregate applications
    void start_message_workloads();                    ///< workloads over persistent connections
    void open_timeseries(const std::string& out_dir);  ///< timeseries.csv and its header
    std::uint32_t host_ip(std::uint32_t node) const;

    /// The links and switches from host node `src` to `dst` (the first of equal-cost ports).
    idle_path path_between(std::uint32_t src, std::uint32_t dst) const;
    /// Idle-path time of `packets` frames of `wire_bytes` (the last one `last_wire_bytes`) from
    /// host node src to dst, without clock rounding (the TCP handshake's RTT seed).
    ps_t path_time(std::uint32_t src, std::uint32_t dst, double wire_bytes, double last_wire_bytes,
                   std::uint64_t packets) const;
    /// summary.json "fct": FCT and slowdown of sized TCP flows and of messages by size bin;
    /// null without any.
    nlohmann::json fct_json() const;
    /// Idle-network completion time of message `m` of workload `w` from its arrival: the
    /// request's (if any), then the message's.
    ps_t ideal_message_fct(const message_workload& w, std::size_t m) const;
    /// The time series' columns after time_us (reals: rcp_fb, fera_rho); also the VCD signals.
    std::vector<vcd_writer::signal> series_columns();
    void start_of_simulation() override;
    void sample();
    void trace_row();  ///< the traced columns of m_row to trace.vcd

    scenario m_sc;
    // First: they outlive the blocks whose timers and frames they hold.
    std::unique_ptr<scheduler> m_scheduler;
    frame_pool m_frames;
    host::flow_table m_flows;
    std::vector<std::unique_ptr<sw::switch_device>> m_switches;
    std::vector<std::unique_ptr<nic::nic_device>> m_nics;
    std::vector<std::unique_ptr<host::host>> m_hosts;
    std::vector<std::unique_ptr<phy::link>> m_links;
    std::vector<std::unique_ptr<host::partition_aggregate>> m_incast;
    std::vector<std::unique_ptr<message_workload>> m_message_workloads;
    route_table m_routes;
    std::vector<int> m_switch_of_node;  ///< node index -> m_switches index or -1
    std::vector<int> m_host_of_node;    ///< node index -> m_hosts index or -1
    std::unique_ptr<output_file> m_timeseries;
    std::string m_row;                                  ///< one time-series row, reused
    std::vector<const nic::nic_device*> m_series_nics;  ///< NICs with time-series columns
    std::unique_ptr<vcd_writer> m_vcd;                  ///< trace.vcd (results.vcd), or null
    std::vector<std::size_t> m_vcd_columns;             ///< its fields' indices in a row
    std::vector<std::string_view> m_vcd_fields;         ///< their text in the row, reused
    mutable std::shared_ptr<detail_tables> m_detail;    ///< results.detail: csv, from summary()
};

/// How a run is carried out; nothing here changes its results.
struct run_options {
    /// Let the model scheduler run ahead of the kernel (scheduler.h); off, it wakes from the
    /// kernel for every expiry. Results are identical either way.
    bool run_ahead = true;
    /// Clear a non-empty results folder first (only one that holds summary.json or config.yaml).
    bool overwrite = false;
    /// A progress line on stderr, refreshed in place about twice a second.
    bool progress = false;
    /// Check the model's invariants between slices and at the end (platform::check_invariants):
    /// on in Debug builds and where FABRICSIM_CHECK_INVARIANTS=1, else off.
    bool check_invariants = invariant_checks_by_default();
};

/// Result of one run.
struct run_result {
    nlohmann::json summary;
    std::string out_dir;
    int stop_signal = 0;  ///< SIGINT or SIGTERM if one stopped the run early, else 0
};

/// Elaborates the platform, simulates, writes the results folder. One call per process:
/// the SystemC kernel can be elaborated only once. The CLI and Python share this path.
/// A non-empty `out_dir` is refused (config_error) unless `opt.overwrite`. config.yaml is
/// written before the simulation starts. The kernel runs in slices of simulated time (about
/// 0.15 s of wall time each); between them it prints progress and looks for SIGINT/SIGTERM
/// (handlers installed for this call only), which end the run early with its results so far:
/// summary "complete": false and "stop_reason". A failed write throws write_error.
run_result run_scenario(const scenario& sc, const std::string& out_dir,
                        const run_options& opt = {});

/// Human-readable table of a summary.
void print_summary(const nlohmann::json& summary, std::ostream& os);

}  // namespace fabricsim::platforms
