#pragma once
/// Per-device statistics as a CSV table, for runs too large to list every port, link and NIC in
/// summary.json. Each row is a device's report_stats() object flattened to columns: nested
/// objects join their keys with '.' ("drops.port_cap"), arrays add the index ("xoff_sent.3"),
/// and an object named "drops" gains "drops.total". The header is the union of the rows'
/// columns in first-seen order (a row without a column leaves it empty), so devices of different
/// profiles share one file. The table also gives what the summary keeps: each numeric column's
/// sum and maximum, and the rows with the largest values of a column (top-N).
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

namespace fabricsim::platforms {

class json_table
{
public:
    /// `key_columns` name the row keys given to add() ("switch", "port"); they come first.
    explicit json_table(std::vector<std::string> key_columns);

    /// One row: `keys` (as many as key_columns) and `stats` flattened; members named in `skip`
    /// (at the top level of `stats`) are left out, e.g. the arrays another table holds.
    void add(const std::vector<nlohmann::json>& keys, const nlohmann::json& stats,
             const std::vector<std::string_view>& skip = {});

    std::size_t rows() const { return m_rows.size(); }
    /// The CSV text (header and rows); a table without rows gives the header only.
    void write(const std::string& path) const;
    /// {"count": rows, "sum": {column: sum}, "max": {column: max}} over the numeric columns
    /// (integers summed exactly; a column holding a real sums as a real).
    nlohmann::json aggregate() const;
    /// Up to `n` rows with the largest value in `column` (> 0 only; ties keep row order), each
    /// as {key columns..., `also` columns..., column: value} (null where a row has no cell).
    nlohmann::json top(const std::string& column, std::size_t n,
                       const std::vector<std::string>& also = {}) const;

private:
    struct column_stats {
        bool numeric = true;  ///< every present cell is a number
        bool seen = false;
        bool real = false;  ///< some cell is not an unsigned integer
        std::uint64_t usum = 0, umax = 0;
        double dsum = 0, dmax = 0;
    };
    struct row {
        std::vector<std::uint32_t> columns;  ///< ascending by first appearance
        std::string text;                    ///< the cells' CSV fields, each ended by '\0'
        std::vector<nlohmann::json> keys;
        std::vector<double> values;  ///< numeric value of each cell (0 for text)
    };
    std::uint32_t column(const std::string& name);
    static std::string_view cell_text(const row& r, std::size_t i);
    nlohmann::json value_of(const row& r, const std::string& column) const;
    void flatten(row& r, std::string& path, const nlohmann::json& v);
    void cell(row& r, const std::string& name, const nlohmann::json& v);

    std::vector<std::string> m_keys;
    std::vector<std::string> m_columns;
    std::unordered_map<std::string, std::uint32_t> m_index;
    std::vector<column_stats> m_stats;
    std::vector<row> m_rows;
};

}  // namespace fabricsim::platforms
