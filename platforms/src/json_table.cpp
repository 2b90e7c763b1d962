#include "fabricsim/platforms/json_table.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <utility>

#include "fabricsim/core/csv.h"
#include "fabricsim/core/output_file.h"

namespace fabricsim::platforms {

using nlohmann::json;

namespace {
/// A counter: an unsigned integer, or a signed one that is not negative (json literals).
bool is_count(const json& v) {
    return v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() >= 0);
}
}  // namespace

json_table::json_table(std::vector<std::string> key_columns) : m_keys(std::move(key_columns)) {}

std::uint32_t json_table::column(const std::string& name) {
    const auto [it, added] =
        m_index.try_emplace(name, static_cast<std::uint32_t>(m_columns.size()));
    if (added) {
        m_columns.push_back(name);
        m_stats.emplace_back();
    }
    return it->second;
}

void json_table::cell(row& r, const std::string& name, const json& v) {
    if (v.is_null()) return;
    const std::uint32_t c = column(name);
    column_stats& s = m_stats[c];
    double value = 0;
    if (is_count(v)) {
        const auto u = v.get<std::uint64_t>();
        csv::append_uint(r.text, u);
        s.usum += u;
        s.umax = std::max(s.umax, u);
        value = double(u);
    } else if (v.is_number()) {
        value = v.get<double>();
        if (v.is_number_integer())
            r.text += std::to_string(v.get<std::int64_t>());
        else
            csv::append_real(r.text, value);
        s.real = true;
    } else {
        csv::append_field(r.text, v.is_string() ? v.get_ref<const std::string&>() : v.dump());
        s.numeric = false;
    }
    if (v.is_number()) {
        s.dsum += value;
        s.dmax = s.seen ? std::max(s.dmax, value) : value;
        s.seen = true;
    }
    r.text += '\0';
    r.columns.push_back(c);
    r.values.push_back(value);
}

void json_table::flatten(row& r, std::string& path, const json& v) {
    // `path` is one buffer extended and cut back, not a string per cell (10^6 cells at 10k hosts).
    const std::size_t len = path.size();
    const auto enter = [&path, len](std::string_view key) {
        path.resize(len);
        if (len) path += '.';
        path += key;
    };
    if (v.is_object()) {
        const bool drops = path == "drops" || (len > 6 && path.compare(len - 6, 6, ".drops") == 0);
        std::uint64_t total = 0;
        for (const auto& [key, item] : v.items()) {
            enter(key);
            flatten(r, path, item);
            if (drops && is_count(item)) total += item.get<std::uint64_t>();
        }
        if (drops) {
            enter("total");
            cell(r, path, total);
        }
    } else if (v.is_array()) {
        char index[24];
        for (std::size_t i = 0; i < v.size(); ++i) {
            const int n = std::snprintf(index, sizeof index, "%zu", i);
            enter(std::string_view(index, std::size_t(n)));
            flatten(r, path, v[i]);
        }
    } else {
        cell(r, path, v);
    }
    path.resize(len);
}

void json_table::add(const std::vector<json>& keys, const json& stats,
                     const std::vector<std::string_view>& skip) {
    row r;
    r.keys = keys;
    if (!m_rows.empty()) {  // rows of a table are alike: one allocation each, not a growth series
        r.columns.reserve(m_rows.back().columns.size());
        r.values.reserve(m_rows.back().values.size());
        r.text.reserve(m_rows.back().text.size());
    }
    std::string path;
    path.reserve(64);
    for (const auto& [key, item] : stats.items()) {
        if (std::find(skip.begin(), skip.end(), key) != skip.end()) continue;
        path = key;
        flatten(r, path, item);
    }
    m_rows.push_back(std::move(r));
}

std::string_view json_table::cell_text(const row& r, std::size_t i) {
    std::size_t at = 0;
    for (; i > 0; --i) at = r.text.find('\0', at) + 1;
    return std::string_view(r.text).substr(at, r.text.find('\0', at) - at);
}

json json_table::value_of(const row& r, const std::string& column) const {
    const auto it = m_index.find(column);
    if (it == m_index.end()) return nullptr;
    const auto at = std::find(r.columns.begin(), r.columns.end(), it->second);
    if (at == r.columns.end()) return nullptr;
    const std::size_t i = std::size_t(at - r.columns.begin());
    const column_stats& s = m_stats[it->second];
    if (!s.numeric) return std::string(cell_text(r, i));
    if (s.real) return r.values[i];
    const std::string_view t = cell_text(r, i);
    std::uint64_t u = 0;
    std::from_chars(t.data(), t.data() + t.size(), u);
    return u;
}

void json_table::write(const std::string& path) const {
    output_file f(path);
    std::string line;
    for (const auto& k : m_keys) {
        csv::append_field(line, k);
        line += ',';
    }
    for (const auto& c : m_columns) {
        csv::append_field(line, c);
        line += ',';
    }
    line.back() = '\n';
    f.write(line);
    std::vector<std::string_view> cells(m_columns.size());
    for (const row& r : m_rows) {
        line.clear();
        for (const json& k : r.keys) {
            if (k.is_string())
                csv::append_field(line, k.get_ref<const std::string&>());
            else
                line += k.dump();
            line += ',';
        }
        std::fill(cells.begin(), cells.end(), std::string_view{});
        std::size_t at = 0;
        for (const std::uint32_t c : r.columns) {
            const std::size_t end = r.text.find('\0', at);
            cells[c] = std::string_view(r.text).substr(at, end - at);
            at = end + 1;
        }
        for (const std::string_view c : cells) {
            line += c;
            line += ',';
        }
        line.back() = '\n';
        f.write(line);
    }
    f.close();
}

json json_table::aggregate() const {
    json sum = json::object(), max = json::object();
    for (std::size_t c = 0; c < m_columns.size(); ++c) {
        const column_stats& s = m_stats[c];
        if (!s.numeric) continue;
        if (s.real) {
            sum[m_columns[c]] = s.dsum;
            max[m_columns[c]] = s.dmax;
        } else {
            sum[m_columns[c]] = s.usum;
            max[m_columns[c]] = s.umax;
        }
    }
    return {{"count", m_rows.size()}, {"sum", std::move(sum)}, {"max", std::move(max)}};
}

json json_table::top(const std::string& column, std::size_t n,
                     const std::vector<std::string>& also) const {
    json out = json::array();
    const auto it = m_index.find(column);
    if (it == m_index.end() || !m_stats[it->second].numeric) return out;
    const std::uint32_t c = it->second;
    std::vector<std::pair<double, std::size_t>> hits;
    for (std::size_t i = 0; i < m_rows.size(); ++i) {
        const row& r = m_rows[i];
        const auto at = std::find(r.columns.begin(), r.columns.end(), c);
        if (at != r.columns.end() && r.values[std::size_t(at - r.columns.begin())] > 0)
            hits.emplace_back(r.values[std::size_t(at - r.columns.begin())], i);
    }
    const std::size_t k = std::min(n, hits.size());
    std::partial_sort(hits.begin(), hits.begin() + std::ptrdiff_t(k), hits.end(),
                      [](const auto& a, const auto& b) {
                          return a.first > b.first || (a.first == b.first && a.second < b.second);
                      });
    for (std::size_t i = 0; i < k; ++i) {
        const row& r = m_rows[hits[i].second];
        json e = json::object();
        for (std::size_t j = 0; j < m_keys.size() && j < r.keys.size(); ++j)
            e[m_keys[j]] = r.keys[j];
        for (const std::string& a : also) e[a] = value_of(r, a);
        e[column] = value_of(r, column);
        out.push_back(std::move(e));
    }
    return out;
}

}  // namespace fabricsim::platforms
