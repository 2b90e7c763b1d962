#pragma once
/// Configuration framework: one schema (in C++) of every parameter with its kind, default,
/// unit, range and help text; YAML trees validated against it before elaboration. Errors
/// name the full key path ("traffic.flows[2].rate") and the reason. Lists of maps use "[]"
/// in schema paths ("traffic.flows[].rate").
#include <cstdint>
#include <iosfwd>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>
#include <nlohmann/json_fwd.hpp>

#include "fabricsim/core/units.h"

namespace fabricsim {

/// A bad value, unknown key or inconsistent configuration. Reported with exit status 2.
class config_error : public std::runtime_error
{
public:
    config_error(std::string key, std::string reason)
        : std::runtime_error(key.empty() ? reason : key + ": " + reason),
          m_key(std::move(key)),
          m_reason(std::move(reason)) {}
    const std::string& key() const { return m_key; }
    const std::string& reason() const { return m_reason; }

private:
    std::string m_key;
    std::string m_reason;
};

enum class value_kind {
    BOOL,
    INT,
    REAL,
    STRING,
    CHOICE,       ///< one of `choices`
    STRING_LIST,  ///< YAML sequence of strings
    BIT_RATE,     ///< "10Gbps" -> bit/s
    BYTES,        ///< "4MiB" -> bytes
    SIZE,         ///< bytes or "65pkt"
    TIME,         ///< "1.5us" -> ps
    FREQUENCY,    ///< "1GHz" -> Hz
    MAP_LIST,     ///< YAML sequence of maps whose keys are "<path>[].*"
};

struct param_spec {
    std::string path;
    value_kind kind = value_kind::STRING;
    std::string default_value;  ///< as written in YAML; empty + !optional = required
    std::string help;
    double min = -std::numeric_limits<double>::infinity();  ///< base units (bps, B, ps, Hz)
    double max = std::numeric_limits<double>::infinity();
    std::vector<std::string> choices;
    bool optional = false;  ///< may be absent with no default
};

class config_schema
{
public:
    /// Adds a parameter; returns it so callers can set range and choices.
    param_spec& add(std::string path, value_kind kind, std::string default_value, std::string help);
    const param_spec* find(const std::string& path) const;
    bool is_section(const std::string& path) const;

    /// Checks every key and value of `root`; throws config_error on the first problem.
    void validate(const YAML::Node& root) const;
    /// Prints parameters whose path starts with `key` (all if empty). Returns false if none.
    bool explain(std::ostream& os, const std::string& key = {}) const;

    const std::map<std::string, param_spec>& params() const { return m_params; }

private:
    void validate_map(const YAML::Node& n, const std::string& spath,
                      const std::string& dpath) const;
    void validate_value(const param_spec& p, const YAML::Node& v, const std::string& dpath) const;

    std::map<std::string, param_spec> m_params;
};

/// Reads typed values below one section of a validated tree; absent keys yield the default.
class config_node
{
public:
    config_node(const config_schema& schema, YAML::Node node, std::string schema_path,
                std::string display_path);

    bool has(const std::string& key) const;
    bool boolean(const std::string& key) const;
    std::int64_t integer(const std::string& key) const;
    double real(const std::string& key) const;
    std::string str(const std::string& key) const;
    std::vector<std::string> str_list(const std::string& key) const;
    std::uint64_t rate(const std::string& key) const;
    std::uint64_t bytes(const std::string& key) const;
    size_spec size(const std::string& key) const;
    ps_t time(const std::string& key) const;
    double frequency(const std::string& key) const;

    config_node child(const std::string& key) const;
    std::vector<config_node> list(const std::string& key) const;

    /// Full display path of `key` below this node ("switch.buffer").
    std::string path(const std::string& key) const;
    [[noreturn]] void fail(const std::string& key, const std::string& reason) const;
    const YAML::Node& yaml() const { return m_node; }

private:
    YAML::Node value(const std::string& key, const param_spec** spec) const;

    const config_schema* m_schema;
    YAML::Node m_node;
    std::string m_spath;
    std::string m_dpath;
};

/// Applies "a.b[2].c=value" to `root` (value parsed as YAML; a repeated key in it is refused).
/// Throws config_error.
void apply_override(YAML::Node& root, const std::string& assignment);

/// Loads a YAML file or string; YAML syntax errors and repeated keys become config_error.
YAML::Node load_yaml_file(const std::string& path);
YAML::Node load_yaml_string(const std::string& text);

/// Deep copy with defaults of `schema` filled in for every absent scalar (for the config echo).
YAML::Node with_defaults(const config_schema& schema, const YAML::Node& root);

/// A validated tree as JSON typed by the schema: BOOL a boolean, INT an integer, REAL a number,
/// every other kind (choices, unit strings, names) a string. The config echo: it runs again.
nlohmann::json echo_json(const config_schema& schema, const YAML::Node& root);
/// The same as YAML text that YAML 1.1 readers (PyYAML's safe_load) type alike: strings
/// double-quoted ("off" stays a string), reals always with a '.'. Keeps the tree's key order.
std::string echo_yaml(const config_schema& schema, const YAML::Node& root);

}  // namespace fabricsim
