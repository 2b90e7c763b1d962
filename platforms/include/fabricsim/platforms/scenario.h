#pragma once
/// A scenario: everything one run needs, loaded from YAML (file, string or Python dict) through
/// the single schema, validated before elaboration.
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "fabricsim/core/config.h"
#include "fabricsim/core/pcap_writer.h"
#include "fabricsim/host/partition_aggregate.h"
#include "fabricsim/host/traffic_source.h"
#include "fabricsim/nic/nic_device.h"
#include "fabricsim/platforms/connection_pool.h"
#include "fabricsim/platforms/topology.h"
#include "fabricsim/switch/switch_config.h"

namespace fabricsim::platforms {

struct pcap_request {
    std::string name;  ///< as written ("sw0:3", "h1")
    endpoint at;       ///< frames transmitted by this port are captured
};

/// A named device configuration. Profile 0 is "default": the `switch:` / `nic:` section; every
/// other one is that section with a `switch_profiles[]` / `nic_profiles[]` entry's keys laid
/// over it (maps merge key by key, scalars and lists replace).
template <class CONFIG>
struct device_profile {
    std::string name;
    CONFIG cfg;
};

struct scenario {
    std::string name;
    std::uint64_t seed = 1;
    ps_t duration = PS_PER_MS;
    ps_t host_lookahead = 0;
    topology topo;
    sw::switch_config sw;  ///< the default switch profile (`switch:`)
    nic::nic_config nic;   ///< the default NIC profile (`nic:`)
    std::vector<device_profile<sw::switch_config>> switch_profiles;  ///< [0] = default
    std::vector<device_profile<nic::nic_config>> nic_profiles;       ///< [0] = default
    std::vector<std::uint32_t> profile_of_node;  ///< node -> its switch or NIC profile index
    /// switch node -> per port, per PG: lossless headroom in bytes from the calculator
    /// (switch.flow_control.headroom: calculated); the platform gives it to the MMU.
    std::map<std::uint32_t, std::vector<std::array<std::uint64_t, 8>>> pg_headroom;
    std::vector<host::flow_spec> flows;
    std::vector<host::incast_spec>
        incast;  ///< partition/aggregate groups (their flows are in `flows`)
    /// workloads over persistent connections (their connections' flows are in `flows`)
    std::vector<message_workload_spec> message_workloads;
    ps_t sample_interval = 0;
    bool per_queue_series = true;
    std::vector<std::string> vcd;  ///< results.vcd: time-series columns (globs) to trace.vcd
    bool flows_csv = true;
    /// results.detail: per-device and per-flow statistics in summary.json, or in CSV tables with
    /// aggregates and the top-N in the summary (auto: CSV above AUTO_CSV_DETAIL_HOSTS hosts).
    enum class detail_mode { AUTO, SUMMARY, CSV };
    static constexpr std::size_t AUTO_CSV_DETAIL_HOSTS = 1024;
    detail_mode detail = detail_mode::AUTO;
    std::uint32_t top_n = 10;  ///< rows of each top-N list (results.top_n)
    bool detail_in_csv() const {
        return detail == detail_mode::CSV ||
               (detail == detail_mode::AUTO && topo.hosts().size() > AUTO_CSV_DETAIL_HOSTS);
    }
    std::vector<pcap_request> pcap;
    pcap_options pcap_bounds;            ///< snap length, time window and size cap of each pcap
    std::uint64_t max_output_bytes = 0;  ///< refuse a run whose results would exceed this
    YAML::Node
        echo;  ///< the configuration with every default, `name` and resolved file paths filled in
    std::map<std::string, std::string>
        files_read;  ///< absolute path -> content of every file the scenario read

    /// Configuration of the switch / host's NIC at topology node `node`.
    const sw::switch_config& switch_config_of(std::uint32_t node) const {
        return switch_profiles[profile_of_node[node]].cfg;
    }
    const nic::nic_config& nic_config_of(std::uint32_t node) const {
        return nic_profiles[profile_of_node[node]].cfg;
    }
    const std::string& profile_name_of(std::uint32_t node, bool is_switch) const {
        return is_switch ? switch_profiles[profile_of_node[node]].name
                         : nic_profiles[profile_of_node[node]].name;
    }
    /// The scenario defines profiles besides the defaults (the summary then names them).
    bool has_profiles() const { return switch_profiles.size() > 1 || nic_profiles.size() > 1; }
};

/// The schema of every scenario parameter (what `explain` prints).
const config_schema& scenario_schema();

/// Validates `root` and builds the scenario; throws config_error naming the key. `name` is used
/// without a `name` key, made path-safe (characters other than [A-Za-z0-9._+-] become '_').
/// Relative file paths in the scenario resolve against `base_dir` ("" = the current directory);
/// a resolved path present in `files` is read from there instead of the disk.
scenario load_scenario(const YAML::Node& root, const std::string& name,
                       const std::string& base_dir = {},
                       const std::map<std::string, std::string>& files = {});

}  // namespace fabricsim::platforms
