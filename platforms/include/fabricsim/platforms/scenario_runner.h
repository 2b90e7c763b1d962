#pragma once
/// The one path from a scenario's YAML to a run, shared by the fabricsim-sim CLI and the Python
/// module (_fabricsim): read the YAML root (file or text), apply "key=value" overrides in order,
/// validate against the schema, then elaborate and simulate (run_scenario, platform.h).
/// Reading and validating never elaborates SystemC, so they may run in any process.
#include <string>
#include <vector>

#include "fabricsim/platforms/scenario.h"

namespace fabricsim::platforms {

/// Where a scenario comes from. Python passes a dict as JSON text (a subset of YAML).
struct scenario_source {
    enum class origin { FILE, TEXT };
    origin from = origin::FILE;
    std::string file_or_text;
    std::vector<std::string> overrides;  ///< "a.b[2].c=value", value parsed as YAML
    std::string name;                    ///< used without a `name` key; "" = file stem, or "scenario"
};

/// Loads, overrides and validates; throws config_error naming the key, before anything is built.
scenario prepare_scenario(const scenario_source& src);

/// "8 hosts, 2 switches, 9 links, 5 flows" (what `validate` prints).
std::string describe_counts(const scenario& sc);

}  // namespace fabricsim::platforms
