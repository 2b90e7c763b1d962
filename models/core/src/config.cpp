#include "fabricsim/core/config.h"

#include <charconv>
#include <cmath>
#include <iomanip>
#include <limits>
#include <ostream>
#include <set>
#include <sstream>

#include <yaml-cpp/depthguard.h>
#include <nlohmann/json.hpp>

namespace fabricsim {

namespace {

std::string join(const std::string& a, const std::string& b) {
    return a.empty() ? b : a + "." + b;
}

const char* kind_name(value_kind k) {
    switch (k) {
        case value_kind::BOOL:
            return "bool";
        case value_kind::INT:
            return "int";
        case value_kind::REAL:
            return "real";
        case value_kind::STRING:
            return "string";
        case value_kind::CHOICE:
            return "choice";
        case value_kind::STRING_LIST:
            return "list of strings";
        case value_kind::BIT_RATE:
            return "bit rate";
        case value_kind::BYTES:
            return "bytes";
        case value_kind::SIZE:
            return "bytes or pkt";
        case value_kind::TIME:
            return "time";
        case value_kind::FREQUENCY:
            return "frequency";
        case value_kind::MAP_LIST:
            return "list";
    }
    return "?";
}

std::string fmt_bound(value_kind k, double v) {
    std::ostringstream os;
    switch (k) {
        case value_kind::BIT_RATE:
            return format_rate(static_cast<std::uint64_t>(v));
        case value_kind::BYTES:
        case value_kind::SIZE:
            return format_bytes(static_cast<std::uint64_t>(v));
        case value_kind::TIME:
            return format_time(static_cast<ps_t>(v));
        default:
            os << v;
            return os.str();
    }
}

/// Parses a scalar of a unit kind to its base-unit value; throws config_error.
double parse_scalar_as(const param_spec& p, const YAML::Node& v, const std::string& dpath,
                       const std::string& s, std::string& why) {
    switch (p.kind) {
        case value_kind::BOOL: {
            bool b;
            if (!YAML::convert<bool>::decode(v, b))
                throw config_error(dpath, "'" + s + "' is not true/false");
            return b ? 1 : 0;
        }
        case value_kind::INT: {
            auto r = parse_integer(s, why);
            if (!r) throw config_error(dpath, why);
            return static_cast<double>(*r);
        }
        case value_kind::REAL: {
            auto r = parse_real(s, why);
            if (!r) throw config_error(dpath, why);
            return *r;
        }
        case value_kind::STRING:
            return 0;
        case value_kind::CHOICE: {
            for (const auto& c : p.choices)
                if (c == s) return 0;
            std::string list;
            for (const auto& c : p.choices) list += (list.empty() ? "" : ", ") + c;
            throw config_error(dpath, "'" + s + "' is not one of: " + list);
        }
        case value_kind::BIT_RATE: {
            auto r = parse_bit_rate(s, why);
            if (!r) throw config_error(dpath, why);
            return static_cast<double>(*r);
        }
        case value_kind::BYTES: {
            auto r = parse_bytes(s, why);
            if (!r) throw config_error(dpath, why);
            return static_cast<double>(*r);
        }
        case value_kind::SIZE: {
            auto r = parse_size(s, why);
            if (!r) throw config_error(dpath, why);
            return static_cast<double>(r->packets ? r->value * 1500 : r->value);
        }
        case value_kind::TIME: {
            auto r = parse_time(s, why);
            if (!r) throw config_error(dpath, why);
            return static_cast<double>(*r);
        }
        case value_kind::FREQUENCY: {
            auto r = parse_frequency_hz(s, why);
            if (!r) throw config_error(dpath, why);
            return *r;
        }
        case value_kind::STRING_LIST:
        case value_kind::MAP_LIST:
            break;
    }
    throw config_error(dpath, "internal: not a scalar kind");
}

/// Unit kinds parse only values >= 0 (a '-' is refused), so their range starts at 0.
bool non_negative(value_kind k) {
    return k == value_kind::BIT_RATE || k == value_kind::BYTES || k == value_kind::SIZE ||
           k == value_kind::TIME || k == value_kind::FREQUENCY;
}

/// `why` for a number too large for its type ("is out of range", "is too large") names the
/// parameter's range instead: "must be <= 1024", or the type's limit without a maximum.
std::string range_reason(const param_spec& p, const std::string& s, const std::string& why) {
    const bool overflow =
        why.size() > 13 && (why.compare(why.size() - 13, 13, " out of range") == 0 ||
                            why.compare(why.size() - 10, 10, " too large") == 0);
    if (!overflow) return why;
    const bool negative = s.find('-') != std::string::npos;
    std::string bound;
    if (negative)
        bound = std::isfinite(p.min) ? fmt_bound(p.kind, p.min)
                                     : std::to_string(std::numeric_limits<std::int64_t>::min());
    else if (std::isfinite(p.max))
        bound = fmt_bound(p.kind, p.max);
    else if (p.kind == value_kind::INT)
        bound = std::to_string(std::numeric_limits<std::int64_t>::max());
    else
        return why + ": the model counts at most 2^64 - 1 of the base unit";
    return "'" + s + "' is out of range: must be " + (negative ? ">= " : "<= ") + bound;
}

double parse_scalar(const param_spec& p, const YAML::Node& v, const std::string& dpath) {
    if (!v.IsScalar())
        throw config_error(dpath, std::string("expected a ") + kind_name(p.kind) + " value");
    const std::string& s = v.Scalar();
    std::string why;
    try {
        return parse_scalar_as(p, v, dpath, s, why);
    } catch (const config_error& e) {
        throw config_error(dpath, range_reason(p, s, e.reason()));
    }
}

}  // namespace

param_spec& config_schema::add(std::string path, value_kind kind, std::string default_value,
                               std::string help) {
    param_spec& p = m_params[path];
    p.path = std::move(path);
    p.kind = kind;
    p.default_value = std::move(default_value);
    p.help = std::move(help);
    return p;
}

void config_schema::alias(std::string prefix, std::string target) {
    m_aliases[std::move(prefix)] = std::move(target);
}

std::string config_schema::resolve(const std::string& path) const {
    for (const auto& [prefix, target] : m_aliases)
        if (path.size() > prefix.size() && path.compare(0, prefix.size(), prefix) == 0 &&
            path[prefix.size()] == '.')
            return target + path.substr(prefix.size());
    return path;
}

const param_spec* config_schema::find(const std::string& path) const {
    auto it = m_params.find(path);
    if (it == m_params.end() && !m_aliases.empty()) it = m_params.find(resolve(path));
    return it == m_params.end() ? nullptr : &it->second;
}

bool config_schema::is_section(const std::string& path) const {
    const std::string prefix = (m_aliases.empty() ? path : resolve(path)) + ".";
    auto it = m_params.lower_bound(prefix);
    return it != m_params.end() && it->first.compare(0, prefix.size(), prefix) == 0;
}

void config_schema::validate(const YAML::Node& root) const {
    if (!root || root.IsNull()) return;
    if (!root.IsMap()) throw config_error("", "the scenario must be a YAML mapping");
    validate_map(root, "", "");
}

void config_schema::validate_map(const YAML::Node& n, const std::string& spath,
                                 const std::string& dpath) const {
    for (const auto& kv : n) {
        const std::string key = kv.first.Scalar();
        if (key.empty())  // "" or ~ (null), which yaml-cpp reads as ""
            throw config_error(dpath,
                               std::string(dpath.empty() ? "at the top level: " : "") +
                                   "a key is empty or null ('' or ~); every key needs a name");
        const std::string sp = join(spath, key);
        const std::string dp = join(dpath, key);
        if (key.find_first_of(".[]") != std::string::npos)
            throw config_error(dp, "a key cannot contain '.' or brackets; nest it as a mapping");
        if (const param_spec* p = find(sp)) {
            validate_value(*p, kv.second, dp);
        } else if (is_section(sp)) {
            if (kv.second.IsNull()) continue;
            if (!kv.second.IsMap()) throw config_error(dp, "expected a mapping of settings");
            validate_map(kv.second, sp, dp);
        } else {
            std::string hint;
            std::set<std::string> listed;  // whole names: "k" is not found in "agg_uplinks"
            const std::string parent = spath.empty() ? "" : spath + ".";
            for (const auto& [path, spec] : m_params) {
                if (path.compare(0, parent.size(), parent) != 0) continue;
                std::string rest = path.substr(parent.size());
                rest = rest.substr(0, rest.find_first_of(".["));
                if (listed.insert(rest).second) hint += (hint.empty() ? "" : ", ") + rest;
            }
            throw config_error(dp,
                               "unknown key" + (hint.empty() ? "" : " (known here: " + hint + ")"));
        }
    }
}

void config_schema::validate_value(const param_spec& p, const YAML::Node& v,
                                   const std::string& dpath) const {
    if (p.kind == value_kind::MAP_LIST) {
        if (!v.IsSequence()) throw config_error(dpath, "expected a list");
        for (std::size_t i = 0; i < v.size(); ++i) {
            const std::string dp = dpath + "[" + std::to_string(i) + "]";
            if (!v[i].IsMap()) throw config_error(dp, "expected a mapping");
            validate_map(v[i], p.path + "[]", dp);
            for (const auto& [path, spec] : m_params) {
                const std::string prefix = p.path + "[].";
                if (path.compare(0, prefix.size(), prefix) != 0) continue;
                const std::string key = path.substr(prefix.size());
                if (key.find('.') != std::string::npos || key.find('[') != std::string::npos)
                    continue;
                if (spec.default_value.empty() && !spec.optional &&
                    spec.kind != value_kind::MAP_LIST && !v[i][key])
                    throw config_error(join(dp, key), "required key is missing");
            }
        }
        return;
    }
    if (p.kind == value_kind::STRING_LIST) {
        if (v.IsScalar()) return;  // a single string is a one-element list
        if (!v.IsSequence()) throw config_error(dpath, "expected a list of strings");
        for (std::size_t i = 0; i < v.size(); ++i)
            if (!v[i].IsScalar())
                throw config_error(dpath + "[" + std::to_string(i) + "]", "expected a string");
        return;
    }
    if (p.indices && (v.IsSequence() || v.IsMap())) {
        const std::string plural = p.index_noun + "s";
        if (v.IsSequence()) {
            if (v.size() > p.indices)
                throw config_error(dpath, "has " + std::to_string(v.size()) +
                                              " entries, more than the " +
                                              std::to_string(p.indices) + " " + plural);
            for (std::size_t i = 0; i < v.size(); ++i)
                validate_scalar(p, v[i], dpath + "[" + std::to_string(i) + "]");
            return;
        }
        for (const auto& kv : v) {
            const std::string key = kv.first.Scalar();
            std::string why;
            const auto i = parse_integer(key, why);
            if (!i)
                throw config_error(dpath, "'" + key + "' is not a " + p.index_noun + " index (0.." +
                                              std::to_string(p.indices - 1) + ")");
            std::string dp = dpath;
            dp.append("[").append(key).append("]");
            if (*i < 0 || *i >= std::int64_t(p.indices))
                throw config_error(dp, "index out of range: there are " +
                                           std::to_string(p.indices) + " " + plural);
            validate_scalar(p, kv.second, dp);
        }
        return;
    }
    validate_scalar(p, v, dpath);
}

void config_schema::validate_scalar(const param_spec& p, const YAML::Node& v,
                                    const std::string& dpath) const {
    const double x = parse_scalar(p, v, dpath);
    if (x < p.min)
        throw config_error(dpath,
                           "'" + v.Scalar() + "' is below the minimum " + fmt_bound(p.kind, p.min));
    if (x > p.max)
        throw config_error(dpath,
                           "'" + v.Scalar() + "' is above the maximum " + fmt_bound(p.kind, p.max));
}

bool config_schema::explain(std::ostream& os, const std::string& key) const {
    bool any = false;
    for (const auto& [path, p] : m_params) {
        if (!key.empty() && path.compare(0, key.size(), key) != 0) continue;
        any = true;
        os << path << "  (" << kind_name(p.kind) << (p.indices ? ", per " + p.index_noun : "")
           << ")\n    " << p.help << "\n";
        if (p.indices)
            os << "    one value for every " << p.index_noun << ", a list in " << p.index_noun
               << " order or a map {" << p.index_noun << ": value} (" << p.index_noun << "s 0.."
               << p.indices - 1 << "; the default where not given)\n";
        if (!p.default_value.empty())
            os << "    default: " << p.default_value << "\n";
        else if (p.kind != value_kind::MAP_LIST)
            os << (p.optional ? "    optional\n" : "    required\n");
        if (std::isfinite(p.min) || std::isfinite(p.max)) {
            os << "    range: ";
            os << (std::isfinite(p.min)   ? fmt_bound(p.kind, p.min)
                   : non_negative(p.kind) ? fmt_bound(p.kind, 0)
                                          : "-inf")
               << " .. ";
            os << (std::isfinite(p.max) ? fmt_bound(p.kind, p.max) : "inf") << "\n";
        }
        if (!p.choices.empty()) {
            os << "    choices:";
            for (const auto& c : p.choices) os << " " << c;
            os << "\n";
        }
    }
    return any;
}

// ---------------------------------------------------------------- config_node

config_node::config_node(const config_schema& schema, const YAML::Node& node,
                         std::string schema_path, std::string display_path)
    : m_schema(&schema),
      m_node(node),
      m_spath(std::move(schema_path)),
      m_dpath(std::move(display_path)) {}

std::string config_node::path(const std::string& key) const {
    return join(m_dpath, key);
}

void config_node::fail(const std::string& key, const std::string& reason) const {
    throw config_error(path(key), reason);
}

namespace {
/// "name[i]" -> name and i; false for a plain key.
bool split_index(const std::string& key, std::string& name, unsigned& index) {
    const auto open = key.find('[');
    if (open == std::string::npos || key.back() != ']') return false;
    name = key.substr(0, open);
    index = static_cast<unsigned>(std::stoul(key.substr(open + 1, key.size() - open - 2)));
    return true;
}

/// The map key of a (validated) per-index map that names index i, or a null node.
YAML::Node map_entry(const YAML::Node& map, unsigned i) {
    for (const auto& kv : map) {
        std::string why;
        const auto k = parse_integer(kv.first.Scalar(), why);
        if (k && *k == std::int64_t(i)) return kv.second;
    }
    return YAML::Node();
}
}  // namespace

YAML::Node config_node::given(const std::string& key) const {
    std::string name;
    unsigned i = 0;
    if (!split_index(key, name, i)) {
        if (m_node && m_node.IsMap() && m_node[key] && !m_node[key].IsNull()) return m_node[key];
        return YAML::Node();
    }
    const YAML::Node all = given(name);
    if (!all || all.IsScalar()) return all;
    if (all.IsSequence()) return i < all.size() ? all[i] : YAML::Node();
    if (all.IsMap()) return map_entry(all, i);
    return YAML::Node();
}

bool config_node::has(const std::string& key) const {
    const YAML::Node n = given(key);
    return n && !n.IsNull();
}

config_node::index_form config_node::indexed_form(const std::string& key,
                                                  std::vector<unsigned>& indices) const {
    indices.clear();
    const YAML::Node n = given(key);
    if (n && n.IsSequence()) {
        for (unsigned i = 0; i < n.size(); ++i) indices.push_back(i);
        return index_form::LIST;
    }
    if (n && n.IsMap()) {
        for (const auto& kv : n) {
            std::string why;
            if (const auto k = parse_integer(kv.first.Scalar(), why); k && *k >= 0)
                indices.push_back(static_cast<unsigned>(*k));
        }
        return index_form::MAP;
    }
    return index_form::ALL;
}

config_node::lookup config_node::value(const std::string& key) const {
    // A dotted key would look up a literal YAML key the validator rejects: read it via child().
    if (key.find('.') != std::string::npos)
        throw config_error(path(key), "internal: read nested keys through child()");
    std::string name = key;
    unsigned index = 0;
    const bool element = split_index(key, name, index);
    const param_spec* p = m_schema->find(join(m_spath, name));
    if (!p) throw config_error(path(key), "internal: parameter missing from the schema");
    if (element && !p->indices)
        throw config_error(path(key), "internal: not a per-index parameter");
    if (const YAML::Node n = given(key); n && !n.IsNull()) return {*p, n};
    if (p->default_value.empty()) {
        if (p->optional) return {*p, YAML::Node()};
        fail(key, "required key is missing");
    }
    return {*p, YAML::Load(p->default_value)};
}

bool config_node::boolean(const std::string& key) const {
    const lookup v = value(key);
    return parse_scalar(v.spec, v.node, path(key)) != 0;
}
std::int64_t config_node::integer(const std::string& key) const {
    const YAML::Node v = value(key).node;
    std::string why;
    const auto r = v.IsScalar() ? parse_integer(v.Scalar(), why) : std::nullopt;
    if (!r) fail(key, why.empty() ? "expected an int value" : why);
    return *r;
}
double config_node::real(const std::string& key) const {
    const YAML::Node v = value(key).node;
    std::string why;
    const auto r = v.IsScalar() ? parse_real(v.Scalar(), why) : std::nullopt;
    if (!r) fail(key, why.empty() ? "expected a real value" : why);
    return *r;
}
std::string config_node::str(const std::string& key) const {
    const YAML::Node v = value(key).node;
    return v.IsNull() ? std::string() : v.Scalar();
}
std::vector<std::string> config_node::str_list(const std::string& key) const {
    const YAML::Node v = value(key).node;
    std::vector<std::string> out;
    if (v.IsScalar())
        out.push_back(v.Scalar());
    else if (v.IsSequence())
        for (const auto& e : v) out.push_back(e.Scalar());
    return out;
}
std::uint64_t config_node::rate(const std::string& key) const {
    const lookup v = value(key);
    return static_cast<std::uint64_t>(parse_scalar(v.spec, v.node, path(key)));
}
std::uint64_t config_node::bytes(const std::string& key) const {
    const lookup v = value(key);
    return static_cast<std::uint64_t>(parse_scalar(v.spec, v.node, path(key)));
}
size_spec config_node::size(const std::string& key) const {
    const YAML::Node v = value(key).node;
    std::string why;
    auto r = parse_size(v.Scalar(), why);
    if (!r) fail(key, why);
    return *r;
}
ps_t config_node::time(const std::string& key) const {
    const lookup v = value(key);
    return static_cast<ps_t>(parse_scalar(v.spec, v.node, path(key)));
}
double config_node::frequency(const std::string& key) const {
    const lookup v = value(key);
    return parse_scalar(v.spec, v.node, path(key));
}

config_node config_node::child(const std::string& key) const {
    YAML::Node n = has(key) ? m_node[key] : YAML::Node(YAML::NodeType::Map);
    return config_node(*m_schema, n, join(m_spath, key), path(key));
}

std::vector<config_node> config_node::list(const std::string& key) const {
    std::vector<config_node> out;
    if (!has(key)) return out;
    const YAML::Node seq = m_node[key];
    for (std::size_t i = 0; i < seq.size(); ++i)
        out.emplace_back(*m_schema, seq[i], join(m_spath, key) + "[]",
                         path(key) + "[" + std::to_string(i) + "]");
    return out;
}

// ---------------------------------------------------------------- overrides and loading

namespace {

std::string where(const YAML::Mark& a, const YAML::Mark& b) {
    if (a.line == b.line)
        return "line " + std::to_string(a.line + 1) + ", columns " + std::to_string(a.column + 1) +
               " and " + std::to_string(b.column + 1);
    return "lines " + std::to_string(a.line + 1) + " and " + std::to_string(b.line + 1);
}

/// yaml-cpp keeps both pairs of a repeated key; node[key] finds the first, iteration (and so the
/// echo) sees both. Refused anywhere in the tree, naming the key's path and both places.
/// Nodes a document may expand to through its aliases: far above any topology's, far below
/// a "billion laughs" (each alias is walked again wherever it is used).
constexpr std::size_t MAX_EXPANDED_NODES = 10'000'000;

void check_unique_keys(const YAML::Node& n, const std::string& dpath, const std::string& source,
                       std::size_t& budget) {
    if (budget-- == 0)
        throw config_error(dpath.empty() ? "(document)" : dpath,
                           "the document expands to more than " +
                               std::to_string(MAX_EXPANDED_NODES) + " nodes (YAML aliases" +
                               source + ")");
    if (n.IsSequence()) {
        for (std::size_t i = 0; i < n.size(); ++i)
            check_unique_keys(n[i], dpath + "[" + std::to_string(i) + "]", source, budget);
    } else if (n.IsMap()) {
        std::map<std::string, YAML::Mark> seen;
        for (const auto& kv : n) {
            const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : std::string();
            const std::string dp = join(dpath, key);
            const auto [it, fresh] = seen.emplace(key, kv.first.Mark());
            if (!fresh)
                throw config_error(
                    dp, "duplicate key (" + where(it->second, kv.first.Mark()) + source + ")");
            check_unique_keys(kv.second, dp, source, budget);
        }
    }
}

void check_unique_keys(const YAML::Node& n, const std::string& dpath, const std::string& source) {
    std::size_t budget = MAX_EXPANDED_NODES;
    check_unique_keys(n, dpath, source, budget);
}

}  // namespace

void apply_override(YAML::Node& root, const std::string& assignment) {
    const auto eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0)
        throw config_error(assignment, "--set expects key=value");
    const std::string key = assignment.substr(0, eq);
    const std::string text = assignment.substr(eq + 1);
    YAML::Node value;
    try {
        value = YAML::Load(text);
    } catch (const YAML::Exception& e) {
        throw config_error(key, "cannot parse value '" + text + "': " + e.msg);
    }
    check_unique_keys(value, key, " of the value set");
    // Walk "a.b[2].c" creating maps on the way.
    std::vector<YAML::Node> chain{root};
    std::size_t pos = 0;
    std::string done;
    while (pos < key.size()) {
        std::size_t end = key.find_first_of(".[", pos);
        std::string part =
            key.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
        if (part.empty()) throw config_error(key, "malformed key path");
        done = join(done, part);
        YAML::Node cur = chain.back();
        if (!cur.IsMap() && !cur.IsNull()) throw config_error(done, "is not a mapping");
        bool last = end == std::string::npos;
        if (last) {
            cur[part] = value;
            return;
        }
        YAML::Node next = cur[part];
        pos = end + 1;
        if (key[end] == '[') {
            const auto close = key.find(']', pos);
            if (close == std::string::npos) throw config_error(key, "missing ']'");
            const std::string idx_s = key.substr(pos, close - pos);
            std::string why;
            const auto parsed = parse_integer(idx_s, why);
            if (!parsed || *parsed < 0) throw config_error(key, "bad list index '" + idx_s + "'");
            const auto idx = static_cast<std::size_t>(*parsed);
            done += "[" + idx_s + "]";
            if (!next.IsSequence() || idx >= next.size())
                throw config_error(done, "no such list element");
            if (close + 1 == key.size()) {
                next[idx] = value;
                return;
            }
            if (key[close + 1] != '.') throw config_error(key, "expected '.' after ']'");
            pos = close + 2;
            chain.push_back(next[idx]);
        } else {
            if (!next) {
                cur[part] = YAML::Node(YAML::NodeType::Map);
                next = cur[part];
            }
            chain.push_back(next);
        }
    }
}

namespace {
/// yaml-cpp stops at its nesting limit with the message "bad file"; say what happened.
std::string too_deep(const YAML::DeepRecursion& e) {
    return "YAML nested deeper than " + std::to_string(e.depth()) +
           " levels, the parser's limit (no scenario needs that many)";
}
}  // namespace

YAML::Node load_yaml_file(const std::string& path) {
    try {
        YAML::Node root = YAML::LoadFile(path);
        check_unique_keys(root, "", " of " + path);
        return root;
    } catch (const YAML::BadFile&) {
        throw config_error("", "cannot read scenario file '" + path + "'");
    } catch (const YAML::DeepRecursion& e) {
        throw config_error("", path + ":" + std::to_string(e.mark.line + 1) + ": " + too_deep(e));
    } catch (const YAML::Exception& e) {
        throw config_error(
            "", path + ":" + std::to_string(e.mark.line + 1) + ": YAML syntax error: " + e.msg);
    }
}

YAML::Node load_yaml_string(const std::string& text) {
    try {
        YAML::Node root = YAML::Load(text);
        check_unique_keys(root, "", "");
        return root;
    } catch (const YAML::DeepRecursion& e) {
        throw config_error("", "line " + std::to_string(e.mark.line + 1) + ": " + too_deep(e));
    } catch (const YAML::Exception& e) {
        throw config_error(
            "", "line " + std::to_string(e.mark.line + 1) + ": YAML syntax error: " + e.msg);
    }
}

namespace {
void fill_defaults(const config_schema& schema, YAML::Node out, const std::string& spath) {
    const std::string prefix = spath.empty() ? "" : spath + ".";
    std::set<std::string> sections_done;  // each sub-section once, not once per parameter in it
    for (const auto& [path, p] : schema.params()) {
        if (path.compare(0, prefix.size(), prefix) != 0) continue;
        const std::string rest = path.substr(prefix.size());
        const auto dot = rest.find('.');
        if (rest.find('[') != std::string::npos &&
            (dot == std::string::npos || rest.find('[') < dot))
            continue;  // list element parameters: handled with their list
        if (dot == std::string::npos) {
            if (p.kind == value_kind::MAP_LIST) {
                if (out[rest] && out[rest].IsSequence())
                    for (std::size_t i = 0; i < out[rest].size(); ++i)
                        fill_defaults(schema, out[rest][i], path + "[]");
                continue;
            }
            if (!out[rest] && !p.default_value.empty()) out[rest] = YAML::Load(p.default_value);
        } else {
            const std::string section = rest.substr(0, dot);
            if (!sections_done.insert(section).second) continue;
            const bool created = !out[section] || out[section].IsNull();
            if (created) out[section] = YAML::Node(YAML::NodeType::Map);
            YAML::Node child = out[section];
            fill_defaults(schema, child, prefix + section);
            // A section of optional keys only, none given (switch.flow_control), stays out of
            // the tree, so the echo of a scenario that does not use it is unchanged.
            if (created && child.size() == 0) out.remove(section);
        }
    }
}
}  // namespace

YAML::Node overlay(const YAML::Node& base, const YAML::Node& over) {
    YAML::Node out = base && base.IsMap() ? YAML::Clone(base) : YAML::Node(YAML::NodeType::Map);
    for (const auto& kv : over) {
        const std::string key = kv.first.Scalar();
        const YAML::Node mine = out[key];
        out[key] = mine && mine.IsMap() && kv.second.IsMap() ? overlay(mine, kv.second)
                                                             : YAML::Clone(kv.second);
    }
    return out;
}

YAML::Node with_defaults(const config_schema& schema, const YAML::Node& root) {
    YAML::Node out = root && root.IsMap() ? YAML::Clone(root) : YAML::Node(YAML::NodeType::Map);
    fill_defaults(schema, out, "");
    return out;
}

namespace {

/// One scalar typed by its parameter's kind (a validated tree: the parses succeed).
template <class JSON>
JSON typed_scalar(const param_spec& p, const YAML::Node& v) {
    std::string why;
    switch (p.kind) {
        case value_kind::BOOL: {
            bool b = false;
            if (YAML::convert<bool>::decode(v, b)) return b;
            break;
        }
        case value_kind::INT:
            if (const auto i = parse_integer(v.Scalar(), why)) return *i;
            break;
        case value_kind::REAL:
            if (const auto d = parse_real(v.Scalar(), why)) return *d;
            break;
        default:
            break;
    }
    return v.Scalar();
}

/// `n` below schema path `spath` as JSON typed by the schema; list elements of a MAP_LIST use
/// the "<path>[]" parameters, those of a STRING_LIST their list's kind.
template <class JSON>
JSON echo_node(const config_schema& schema, const YAML::Node& n, const std::string& spath) {
    if (!n || n.IsNull()) return nullptr;
    const param_spec* p = schema.find(spath);
    if (n.IsMap()) {
        // A per-index map's values are elements of its parameter, not keys below it.
        const bool indexed = p && p->indices;
        JSON o = JSON::object();
        for (const auto& kv : n) {
            const std::string key = kv.first.Scalar();
            o[key] = echo_node<JSON>(schema, kv.second, indexed ? spath : join(spath, key));
        }
        return o;
    }
    if (n.IsSequence()) {
        const std::string element = p && p->kind == value_kind::MAP_LIST ? spath + "[]" : spath;
        JSON a = JSON::array();
        for (const auto& e : n) a.push_back(echo_node<JSON>(schema, e, element));
        return a;
    }
    return p ? typed_scalar<JSON>(*p, n) : JSON(n.Scalar());
}

/// A real that YAML 1.1 readers (PyYAML) also read as a float: shortest round-trip digits with
/// a '.' in the mantissa and a signed exponent ("1.0e-06", not "1e-06", which is a string there).
std::string yaml_real(double d) {
    char buf[64];
    std::string s(buf, std::to_chars(buf, buf + sizeof buf, d).ptr);
    const auto e = s.find('e');
    std::string mantissa = s.substr(0, e);
    if (mantissa.find('.') == std::string::npos) mantissa += ".0";
    if (e == std::string::npos) return mantissa;
    std::string exponent = s.substr(e + 1);
    if (exponent[0] != '-' && exponent[0] != '+') exponent.insert(0, "+");
    return mantissa + "e" + exponent;
}

void emit(YAML::Emitter& out, const nlohmann::ordered_json& j) {
    if (j.empty() && (j.is_object() || j.is_array()))
        out << YAML::Flow;  // "[]", not a line of its own
    if (j.is_object()) {
        out << YAML::BeginMap;
        for (const auto& [k, v] : j.items()) {
            out << YAML::Key << k << YAML::Value;
            emit(out, v);
        }
        out << YAML::EndMap;
    } else if (j.is_array()) {
        out << YAML::BeginSeq;
        for (const auto& v : j) emit(out, v);
        out << YAML::EndSeq;
    } else if (j.is_string()) {
        out << YAML::DoubleQuoted << j.get<std::string>();
    } else if (j.is_boolean()) {
        out << (j.get<bool>() ? "true" : "false");
    } else if (j.is_number_float()) {
        out << yaml_real(j.get<double>());
    } else if (j.is_number()) {
        out << j.dump();
    } else {
        out << YAML::Null;
    }
}

}  // namespace

nlohmann::json echo_json(const config_schema& schema, const YAML::Node& root) {
    return echo_node<nlohmann::json>(schema, root, "");
}

std::string echo_yaml(const config_schema& schema, const YAML::Node& root) {
    YAML::Emitter out;
    emit(out, echo_node<nlohmann::ordered_json>(schema, root, ""));
    return out.c_str();
}

std::uint8_t load_index_mask(const config_node& n, const std::string& key, unsigned max) {
    std::uint8_t m = 0;
    for (const std::string& s : n.str_list(key)) {
        unsigned v = 0;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec != std::errc() || end != s.data() + s.size() || s.empty() || v > max)
            n.fail(key, "'" + s + "' is not an integer in 0.." + std::to_string(max));
        m = static_cast<std::uint8_t>(m | 1u << v);
    }
    return m;
}

}  // namespace fabricsim
