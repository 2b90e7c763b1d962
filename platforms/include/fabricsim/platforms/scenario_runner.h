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
    scenario_source(origin from_, std::string file_or_text_,
                    std::vector<std::string> overrides_ = {}, std::string name_ = {},
                    std::string base_dir_ = {}, std::map<std::string, std::string> files_ = {})
        : from(from_),
          file_or_text(std::move(file_or_text_)),
          overrides(std::move(overrides_)),
          name(std::move(name_)),
          base_dir(std::move(base_dir_)),
          files(std::move(files_)) {}

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
