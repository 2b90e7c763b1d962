#pragma once
/// The one path from a scenario's YAML to a run, shared by the fabricsim-sim CLI and the Python
/// module (_fabricsim): read the YAML root (file or text), apply "key=value" overrides in order,
/// validate against the schema, then elaborate and simulate (run_scenario, platform.h).
/// Reading and validating never elaborates SystemC, so they may run in any process.
#include <map>
#include <string>
#include <vector>

#include "fabricsim/platforms/scenario.h"

namespace fabricsim::platforms {

/// Where a scenario comes from. Python passes a dict as JSON text (a subset of YAML).
struct scenario_source {
    enum class origin { FILE, TEXT };
    scenario_source() = default;
    scenario_source(origin kind, std::string source, std::vector<std::string> sets = {},
                    std::string run_name = {}, std::string dir = {},
                    std::map<std::string, std::string> given_files = {})
        : from(kind),
          file_or_text(std::move(source)),
          overrides(std::move(sets)),
          name(std::move(run_name)),
          base_dir(std::move(dir)),
          files(std::move(given_files)) {}

    origin from = origin::FILE;
    std::string file_or_text;
    std::vector<std::string> overrides;  ///< "a.b[2].c=value", value parsed as YAML
    std::string name;  ///< used without a `name` key; "" = file stem, or "scenario"
    /// Relative paths in the scenario (workload CSVs) resolve against it; "" = the file's
    /// directory for FILE, the current directory for TEXT.
    std::string base_dir;
    /// Absolute path -> content, read instead of the disk (a run shipped to another machine).
    std::map<std::string, std::string> files;
};

/// Loads, overrides and validates; throws config_error naming the key, before anything is built.
scenario prepare_scenario(const scenario_source& src);

/// "8 hosts, 2 switches, 9 links, 5 flows" (what `validate` prints).
std::string describe_counts(const scenario& sc);

}  // namespace fabricsim::platforms
