#pragma once
/// A scenario: everything one run needs, loaded from YAML (file, string or Python dict) through
/// the single schema, validated before elaboration.
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
#include "fabricsim/platforms/topology.h"
#include "fabricsim/switch/switch_config.h"

namespace fabricsim::platforms {

struct pcap_request {
    std::string name;  ///< as written ("sw0:3", "h1")
    endpoint at;       ///< frames transmitted by this port are captured
};

struct scenario {
    std::string name;
    std::uint64_t seed = 1;
    ps_t duration = PS_PER_MS;
    ps_t host_lookahead = 0;
    topology topo;
    sw::switch_config sw;
    nic::nic_config nic;
    std::vector<host::flow_spec> flows;
    std::vector<host::incast_spec>
        incast;  ///< partition/aggregate groups (their flows are in `flows`)
    ps_t sample_interval = 0;
    bool per_queue_series = true;
    bool flows_csv = true;
    std::vector<pcap_request> pcap;
    pcap_options pcap_bounds;            ///< snap length, time window and size cap of each pcap
    std::uint64_t max_output_bytes = 0;  ///< refuse a run whose results would exceed this
    YAML::Node
        echo;  ///< the configuration with every default, `name` and resolved file paths filled in
    std::map<std::string, std::string>
        files_read;  ///< absolute path -> content of every file the scenario read
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
