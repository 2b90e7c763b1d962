#include "fabricsim/host/algo/flow_size_distribution.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace fabricsim::host {

flow_size_distribution flow_size_distribution::from_cdf(
    std::vector<std::pair<double, double>> points, std::string name) {
    if (points.size() < 2) throw std::invalid_argument("a CDF needs at least two points");
    for (std::size_t i = 0; i < points.size(); ++i) {
        const auto [x, p] = points[i];
        if (!(x >= 0) || !(p >= 0) || p > 1)
            throw std::invalid_argument("point " + std::to_string(i + 1) + " is out of range");
        if (i && (x < points[i - 1].first || p < points[i - 1].second))
            throw std::invalid_argument("point " + std::to_string(i + 1) +
                                        " decreases (sizes and probabilities must not)");
    }
    if (points.front().second != 0) throw std::invalid_argument("the first probability must be 0");
    if (std::abs(points.back().second - 1) > 1e-9)
        throw std::invalid_argument("the last probability must be 1");
    flow_size_distribution d;
    d.m_points = std::move(points);
    d.m_name = std::move(name);
    for (std::size_t i = 1; i < d.m_points.size(); ++i)
        d.m_mean += (d.m_points[i].first + d.m_points[i - 1].first) / 2 *
                    (d.m_points[i].second - d.m_points[i - 1].second);
    return d;
}

flow_size_distribution flow_size_distribution::from_csv_text(const std::string& text,
                                                             const std::string& name) {
    std::istringstream in(text);
    std::vector<std::pair<double, double>> pts;
    std::string line;
    bool header_seen = false;
    int n = 0;
    while (std::getline(in, line)) {
        ++n;
        if (line.empty() || line[0] == '#') continue;
        std::replace(line.begin(), line.end(), ',', ' ');
        std::istringstream ss(line);
        double x, p;
        if (!(ss >> x >> p)) {
            if (!header_seen && pts.empty()) {
                header_seen = true;
                continue;
            }
            throw std::invalid_argument(name + " line " + std::to_string(n) +
                                        ": expected 'size_bytes,cdf'");
        }
        pts.push_back({x, p});
    }
    try {
        return from_cdf(std::move(pts), name);
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(name + ": " + e.what());
    }
}

flow_size_distribution flow_size_distribution::fixed(std::uint64_t bytes) {
    return from_cdf({{double(bytes), 0.0}, {double(bytes), 1.0}}, "fixed");
}

flow_size_distribution flow_size_distribution::pareto(double shape, double mean_bytes) {
    if (!(shape > 1)) throw std::invalid_argument("the Pareto shape must be > 1 for a finite mean");
    if (!(mean_bytes >= 1)) throw std::invalid_argument("the Pareto mean must be >= 1 byte");
    flow_size_distribution d;
    d.m_kind = kind::PARETO;
    d.m_shape = shape;
    d.m_mean = mean_bytes;
    d.m_name = "pareto";
    return d;
}

std::uint64_t flow_size_distribution::sample(rng& r) const {
    double v;
    if (m_kind == kind::PARETO) {
        v = r.pareto(m_shape, m_mean);
    } else {
        const double u = r.uniform();
        // First point with cdf >= u; interpolate on the segment before it.
        auto it = std::lower_bound(
            m_points.begin(), m_points.end(), u,
            [](const std::pair<double, double>& a, double x) { return a.second < x; });
        if (it == m_points.begin())
            v = it->first;
        else if (it == m_points.end())
            v = m_points.back().first;
        else {
            const auto& a = *std::prev(it);
            const auto& b = *it;
            v = b.second > a.second
                    ? a.first + (b.first - a.first) * (u - a.second) / (b.second - a.second)
                    : b.first;
        }
    }
    return static_cast<std::uint64_t>(std::max(1.0, std::min(std::round(v), 1e18)));
}

}  // namespace fabricsim::host
