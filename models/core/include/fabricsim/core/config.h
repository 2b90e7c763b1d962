#pragma once
/// Configuration framework: one schema (in C++) of every parameter with its kind, default,
/// unit, range and help text; YAML trees validated against it before elaboration. Errors
/// name the full key path ("traffic.flows[2].rate") and the reason. Lists of maps use "[]"
/// in schema paths ("traffic.flows[].rate").
///
/// Declaring parameters: each parameter is declared once, next to the struct it fills, in a
/// `param_table<T>`. A declaration carries the key path (relative to the section), the kind,
/// the default as written in YAML, the help text, range and choices, and how the value is
/// stored into T. The same table then drives the schema (`describe`: explain, validation,
/// Python's schema()) and loading (`load`: walks the declarations in order):
///
///     const param_table<nic_config>& nic_config::params() {
///         static const param_table<nic_config> t = [] {
///             param_table<nic_config> t;
///             t.add("tx_latency", value_kind::TIME, "500ns", "Host post to MAC",
///                   &nic_config::tx_latency).max = 1e9;         // range on the spec
///             t.choice<bool>("mode", "poll", "...", {{"poll", false}, {"irq", true}},
///                            [](nic_config& c, bool v) { c.irq = v; });
///             t.add("ring", value_kind::BYTES, "4MiB", "...",  // any setter
///                   [](nic_config& c, const config_value& v) { c.ring = v.bytes(); });
///             return t;
///         }();
///         return t;
///     }
///     schema: nic_config::params().describe(schema, "nic");
///     load:   nic_config c = nic_config::params().load(node.child("nic"));  then c.validate()
///
/// A member pointer stores the value read as the declared kind (static_cast to the member's
/// type); a setter gets a `config_value` (typed reads, `present()`, `fail(reason)` naming the
/// key). Setters run in declaration order, so a setter may read fields stored by earlier
/// declarations (e.g. cell counts need the cell size); relations between keys that are checks,
/// not conversions, belong in the struct's validate step. `list<E>()` declares a list of maps
/// whose elements load through their own `param_table<E>`.
///
/// Per-index parameters (one value per queue, priority group, pool): `indexed()` declares a key
/// whose value is a scalar (every index), a list (index order, no longer than the count) or a
/// map {index: value}; indices not given take the default. The schema checks every element as
/// the declared kind, naming it "switch.mmu.queue_alpha[3]"; the setter is called once per index
/// with a config_value for that element (key "queue_alpha[3]": typed reads, present(), fail()),
/// or, when one value is given for all, for the key itself (errors name the key as written).
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
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
    /// Per-index parameter (param_table::indexed): indices 0..indices-1 of `index_noun`
    /// ("queue"); 0 = one value.
    unsigned indices = 0;
    std::string index_noun;
};

class config_schema
{
public:
    /// Adds a parameter; returns it so callers can set range and choices.
    param_spec& add(std::string path, value_kind kind, std::string default_value, std::string help);
    /// Every key below `prefix` ("switch_profiles[]") is the key of the same name below
    /// `target` ("switch"): same kind, range and help; explain lists it under `target` only.
    void alias(std::string prefix, std::string target);
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
    void validate_scalar(const param_spec& p, const YAML::Node& v, const std::string& dpath) const;

    /// `path` with an alias prefix replaced by its target (else unchanged).
    std::string resolve(const std::string& path) const;

    std::map<std::string, param_spec> m_params;
    std::map<std::string, std::string> m_aliases;
};

/// Reads typed values below one section of a validated tree; absent keys yield the default.
class config_node
{
public:
    config_node(const config_schema& schema, const YAML::Node& node, std::string schema_path,
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

    /// How a per-index key is given: one value for all, a list or a map, and the indices the
    /// list or map names (in order).
    enum class index_form { ALL, LIST, MAP };
    index_form indexed_form(const std::string& key, std::vector<unsigned>& given) const;

    /// Full display path of `key` below this node ("switch.buffer").
    std::string path(const std::string& key) const;
    /// Display path of this node itself ("topology.links[2]").
    const std::string& display_path() const { return m_dpath; }
    [[noreturn]] void fail(const std::string& key, const std::string& reason) const;
    const YAML::Node& yaml() const { return m_node; }

private:
    /// A key's parameter and its value: as given, else the default (null if optional).
    struct lookup {
        const param_spec& spec;
        YAML::Node node;
    };
    lookup value(const std::string& key) const;
    /// `key` or, for "name[i]", element i of a per-index key (null when not given).
    YAML::Node given(const std::string& key) const;

    const config_schema* m_schema;
    YAML::Node m_node;
    std::string m_spath;
    std::string m_dpath;
};

/// One parameter of a section while it loads: typed reads of its key (the default when absent),
/// and errors that name it.
class config_value
{
public:
    config_value(const config_node& section, std::string key)
        : m_section(section), m_key(std::move(key)) {}

    /// The key is given (not null) in the YAML tree, as opposed to its default.
    bool present() const { return m_section.has(m_key); }
    bool boolean() const { return m_section.boolean(m_key); }
    std::int64_t integer() const { return m_section.integer(m_key); }
    double real() const { return m_section.real(m_key); }
    std::string str() const { return m_section.str(m_key); }
    std::vector<std::string> str_list() const { return m_section.str_list(m_key); }
    std::uint64_t rate() const { return m_section.rate(m_key); }
    std::uint64_t bytes() const { return m_section.bytes(m_key); }
    size_spec size() const { return m_section.size(m_key); }
    ps_t time() const { return m_section.time(m_key); }
    double frequency() const { return m_section.frequency(m_key); }
    std::vector<config_node> list() const { return m_section.list(m_key); }

    /// Element i of a per-index key ("queue_alpha[3]").
    config_value element(unsigned i) const {
        return config_value(m_section, m_key + "[" + std::to_string(i) + "]");
    }

    const config_node& section() const { return m_section; }
    const std::string& key() const { return m_key; }
    std::string path() const { return m_section.path(m_key); }
    [[noreturn]] void fail(const std::string& reason) const { m_section.fail(m_key, reason); }

private:
    const config_node& m_section;
    std::string m_key;
};

/// The parameters of one configuration struct T, each declared once (see the top of this file).
template <class T>
class param_table
{
public:
    using setter = std::function<void(T&, const config_value&)>;

    /// Declares `path` (relative to the section, "mmu.pg_alpha") stored by `store`.
    param_spec& add(std::string path, value_kind kind, std::string default_value, std::string help,
                    setter store) {
        m_entries.push_back({{}, std::move(store), {}});
        param_spec& p = m_entries.back().spec;
        p.path = std::move(path);
        p.kind = kind;
        p.default_value = std::move(default_value);
        p.help = std::move(help);
        return p;
    }
    /// Declares `path` stored into `member`, read as `kind`.
    template <class M>
    param_spec& add(std::string path, value_kind kind, std::string default_value, std::string help,
                    M T::*member) {
        return add(
            std::move(path), kind, std::move(default_value), std::move(help),
            [member, kind](T& t, const config_value& v) { t.*member = read_as<M>(v, kind); });
    }
    /// Declares an optional `path` (no default): `member` is set only when the key is given.
    template <class M>
    param_spec& add(std::string path, value_kind kind, std::string help,
                    std::optional<M> T::*member) {
        param_spec& p = add(std::move(path), kind, "", std::move(help),
                            [member, kind](T& t, const config_value& v) {
                                if (v.present()) t.*member = read_as<M>(v, kind);
                            });
        p.optional = true;
        return p;
    }
    /// A CHOICE: each name stands for a value given to `store`.
    template <class V>
    param_spec& choice(std::string path, std::string default_value, std::string help,
                       std::vector<std::pair<std::string, V>> names,
                       std::function<void(T&, V)> store) {
        std::vector<std::string> choices;
        for (const auto& n : names) choices.push_back(n.first);
        param_spec& p = add(std::move(path), value_kind::CHOICE, std::move(default_value),
                            std::move(help), [names, store](T& t, const config_value& v) {
                                const std::string s = v.str();
                                for (const auto& n : names)
                                    if (n.first == s) return store(t, n.second);
                                v.fail("'" + s + "' is not a choice");  // validated before
                            });
        p.choices = std::move(choices);
        return p;
    }
    template <class V>
    param_spec& choice(std::string path, std::string default_value, std::string help,
                       std::vector<std::pair<std::string, V>> names, V T::*member) {
        return choice<V>(std::move(path), std::move(default_value), std::move(help),
                         std::move(names), [member](T& t, V v) { t.*member = v; });
    }
    /// A list of maps; each element loads through `element` and goes to `store` with its node.
    template <class E>
    param_spec& list(std::string path, std::string default_value, std::string help,
                     const param_table<E>& element,
                     std::function<void(T&, E&&, const config_node&)> store) {
        auto elem = std::make_shared<param_table<E>>(element);
        param_spec& p = add(std::move(path), value_kind::MAP_LIST, std::move(default_value),
                            std::move(help), [elem, store](T& t, const config_value& v) {
                                for (const config_node& n : v.list()) store(t, elem->load(n), n);
                            });
        m_entries.back().sub = [elem](config_schema& s, const std::string& prefix) {
            elem->describe(s, prefix + "[]");
        };
        return p;
    }
    /// A list of maps appended to `member`.
    template <class E>
    param_spec& list(std::string path, std::string default_value, std::string help,
                     const param_table<E>& element, std::vector<E> T::*member) {
        return list<E>(
            std::move(path), std::move(default_value), std::move(help), element,
            [member](T& t, E&& e, const config_node&) { (t.*member).push_back(std::move(e)); });
    }

    /// A per-index parameter (see the top of this file): `store(t, i, v)` for every index i <
    /// `indices`, v the element's value (the default where not given). `count(t)` (none: all
    /// `indices`) is how many are in use once the earlier declarations have loaded: a list
    /// longer than that or a map index at or above it is an error naming the key.
    using index_setter = std::function<void(T&, unsigned, const config_value&)>;
    param_spec& indexed(std::string path, value_kind kind, std::string default_value,
                        std::string help, unsigned indices, std::string noun,
                        std::function<unsigned(const T&)> count, index_setter store) {
        const std::string plural = noun + "s";
        param_spec& p = add(std::move(path), kind, std::move(default_value), std::move(help),
                            [indices, plural, count, store](T& t, const config_value& v) {
                                const unsigned n = count ? count(t) : indices;
                                // One value for all: each index reads (and names) the key.
                                const bool all = check_indices(v, n, plural);
                                for (unsigned i = 0; i < indices; ++i)
                                    store(t, i, all ? v : v.element(i));
                            });
        p.indices = indices;
        p.index_noun = std::move(noun);
        return p;
    }

    /// A per-index CHOICE: each name stands for a value given to `store(t, i, value)`.
    template <class V>
    param_spec& indexed_choice(std::string path, std::string default_value, std::string help,
                               unsigned indices, std::string noun,
                               std::function<unsigned(const T&)> count,
                               std::vector<std::pair<std::string, V>> names,
                               std::function<void(T&, unsigned, V)> store) {
        std::vector<std::string> choices;
        for (const auto& n : names) choices.push_back(n.first);
        param_spec& p = indexed(std::move(path), value_kind::CHOICE, std::move(default_value),
                                std::move(help), indices, std::move(noun), std::move(count),
                                [names, store](T& t, unsigned i, const config_value& v) {
                                    const std::string s = v.str();
                                    for (const auto& n : names)
                                        if (n.first == s) return store(t, i, n.second);
                                    v.fail("'" + s + "' is not a choice");  // validated before
                                });
        p.choices = std::move(choices);
        return p;
    }

    /// Adds every parameter to `s` below `prefix` ("" = top level).
    void describe(config_schema& s, const std::string& prefix) const {
        for (const auto& e : m_entries) {
            const std::string path = prefix.empty() ? e.spec.path : prefix + "." + e.spec.path;
            param_spec& p = s.add(path, e.spec.kind, e.spec.default_value, e.spec.help);
            p.min = e.spec.min;
            p.max = e.spec.max;
            p.choices = e.spec.choices;
            p.optional = e.spec.optional;
            p.indices = e.spec.indices;
            p.index_noun = e.spec.index_noun;
            if (e.sub) e.sub(s, path);
        }
    }
    /// Stores every parameter of the (validated) section `n` into `out`, in declaration order.
    void load(const config_node& n, T& out) const {
        std::map<std::string, config_node> sections;
        for (const auto& e : m_entries) {
            const auto dot = e.spec.path.rfind('.');
            const config_node* section = &n;
            if (dot != std::string::npos) {
                const std::string sp = e.spec.path.substr(0, dot);
                auto it = sections.find(sp);
                if (it == sections.end()) it = sections.emplace(sp, child_at(n, sp)).first;
                section = &it->second;
            }
            e.store(out, config_value(*section, e.spec.path.substr(dot + 1)));
        }
    }
    T load(const config_node& n) const {
        T t{};
        load(n, t);
        return t;
    }

private:
    struct entry {
        param_spec spec;
        setter store;
        std::function<void(config_schema&, const std::string&)> sub;  ///< list elements
    };

    // Recursive, not a loop: assigning a YAML::Node (inside config_node) writes into the node
    // it refers to instead of rebinding it.
    static config_node child_at(const config_node& n, const std::string& dotted) {
        const auto dot = dotted.find('.');
        if (dot == std::string::npos) return n.child(dotted);
        return child_at(n.child(dotted.substr(0, dot)), dotted.substr(dot + 1));
    }

    /// Fails on a list or map index at or above n; true if one value (or none) is given for
    /// all indices.
    static bool check_indices(const config_value& v, unsigned n, const std::string& plural) {
        std::vector<unsigned> given;
        const auto form = v.section().indexed_form(v.key(), given);
        for (const unsigned i : given) {
            if (i < n) continue;
            if (form == config_node::index_form::LIST)
                v.fail("has " + std::to_string(given.size()) + " entries, more than the " +
                       std::to_string(n) + " " + plural);
            v.element(i).fail("index out of range: there are " + std::to_string(n) + " " + plural);
        }
        return form == config_node::index_form::ALL;
    }

    template <class M>
    static M read_as(const config_value& v, value_kind kind) {
        switch (kind) {
            case value_kind::BOOL:
                if constexpr (std::is_convertible_v<bool, M>) return static_cast<M>(v.boolean());
                break;
            case value_kind::INT:
                if constexpr (std::is_arithmetic_v<M>) return static_cast<M>(v.integer());
                break;
            case value_kind::REAL:
                if constexpr (std::is_arithmetic_v<M>) return static_cast<M>(v.real());
                break;
            case value_kind::BIT_RATE:
                if constexpr (std::is_arithmetic_v<M>) return static_cast<M>(v.rate());
                break;
            case value_kind::BYTES:
                if constexpr (std::is_arithmetic_v<M>) return static_cast<M>(v.bytes());
                break;
            case value_kind::TIME:
                if constexpr (std::is_arithmetic_v<M>) return static_cast<M>(v.time());
                break;
            case value_kind::FREQUENCY:
                if constexpr (std::is_arithmetic_v<M>) return static_cast<M>(v.frequency());
                break;
            case value_kind::SIZE:
                if constexpr (std::is_same_v<M, size_spec>) return v.size();
                break;
            case value_kind::STRING:
            case value_kind::CHOICE:
                if constexpr (std::is_same_v<M, std::string>) return v.str();
                break;
            case value_kind::STRING_LIST:
                if constexpr (std::is_same_v<M, std::vector<std::string>>) return v.str_list();
                break;
            case value_kind::MAP_LIST:
                break;
        }
        v.fail("internal: the declared kind does not fit the member it is stored in");
    }
    std::vector<entry> m_entries;
};

/// Applies "a.b[2].c=value" to `root` (value parsed as YAML; a repeated key in it is refused).
/// Throws config_error.
void apply_override(YAML::Node& root, const std::string& assignment);
/// The list of small integers ("0", "3") at `key` of `n` as a bit mask; an entry that is not an
/// integer in 0..max fails naming the key. For queue, PG and priority sets.
std::uint8_t load_index_mask(const config_node& n, const std::string& key, unsigned max);

/// Loads a YAML file or string; YAML syntax errors and repeated keys become config_error.
YAML::Node load_yaml_file(const std::string& path);
YAML::Node load_yaml_string(const std::string& text);

/// Deep copy with defaults of `schema` filled in for every absent scalar (for the config echo).
YAML::Node with_defaults(const config_schema& schema, const YAML::Node& root);
/// `base` (a map or null) with the keys of `over` laid on it: maps merge, the rest replaces
/// (switch profiles over the switch: section, a section over its chip preset).
YAML::Node overlay(const YAML::Node& base, const YAML::Node& over);

/// A validated tree as JSON typed by the schema: BOOL a boolean, INT an integer, REAL a number,
/// every other kind (choices, unit strings, names) a string. The config echo: it runs again.
nlohmann::json echo_json(const config_schema& schema, const YAML::Node& root);
/// The same as YAML text that YAML 1.1 readers (PyYAML's safe_load) type alike: strings
/// double-quoted ("off" stays a string), reals always with a '.'. Keeps the tree's key order.
std::string echo_yaml(const config_schema& schema, const YAML::Node& root);

}  // namespace fabricsim
