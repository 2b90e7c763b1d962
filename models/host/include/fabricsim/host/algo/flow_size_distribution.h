#pragma once
/// Flow-size distributions of the open-loop workloads (plain C++, no SystemC): empirical CDFs
/// (linear interpolation between the points, as HPCC's generator draws them), the HULL mix
/// (80% 1 KB / 20% 10 MB, seed-000 §3.4) and Pareto sizes (HULL: shape 1.05, mean 100 KB).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "fabricsim/core/rng.h"

namespace fabricsim::host {

class flow_size_distribution
{
public:
    /// Empirical CDF: (size in bytes, cumulative probability) points, sizes non-decreasing,
    /// probabilities non-decreasing from 0 to 1. Throws std::invalid_argument with the reason.
    static flow_size_distribution from_cdf(std::vector<std::pair<double, double>> points,
                                           std::string name);
    /// Parses "size_bytes,cdf" lines ('#' comments and one header line allowed); `name`
    /// prefixes error messages.
    static flow_size_distribution from_csv_text(const std::string& text, const std::string& name);
    static flow_size_distribution fixed(std::uint64_t bytes);
    static flow_size_distribution pareto(double shape, double mean_bytes);

    /// One flow size in bytes (>= 1).
    std::uint64_t sample(rng& r) const;
    /// Mean size in bytes (trapezoid rule for CDFs, the analytic mean for Pareto).
    double mean() const { return m_mean; }
    const std::string& name() const { return m_name; }

private:
    enum class kind { CDF, PARETO };
    kind m_kind = kind::CDF;
    std::vector<std::pair<double, double>> m_points;
    double m_shape = 0;
    double m_mean = 0;
    std::string m_name;
};

}  // namespace fabricsim::host
