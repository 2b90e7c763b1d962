#include "fabricsim/platforms/scenario_runner.h"

#include <filesystem>

namespace fabricsim::platforms {

scenario prepare_scenario(const scenario_source& src) {
    const bool file = src.from == scenario_source::origin::FILE;
    YAML::Node root = file ? load_yaml_file(src.file_or_text) : load_yaml_string(src.file_or_text);
    if (!root || root.IsNull()) root = YAML::Node(YAML::NodeType::Map);
    for (const auto& s : src.overrides) apply_override(root, s);
    std::string name = src.name;
    if (name.empty())
        name = file ? std::filesystem::path(src.file_or_text).stem().string() : "scenario";
    std::string base_dir = src.base_dir;
    if (base_dir.empty() && file)
        base_dir = std::filesystem::absolute(src.file_or_text).parent_path().string();
    return load_scenario(root, name, base_dir, src.files);
}

std::string describe_counts(const scenario& sc) {
    return std::to_string(sc.topo.hosts().size()) + " hosts, " +
           std::to_string(sc.topo.switches().size()) + " switches, " +
           std::to_string(sc.topo.links.size()) + " links, " + std::to_string(sc.flows.size()) +
           " flows";
}

}  // namespace fabricsim::platforms
