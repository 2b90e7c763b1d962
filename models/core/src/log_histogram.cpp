#include "fabricsim/core/log_histogram.h"

#include <cmath>

namespace fabricsim {

namespace bh = boost::histogram;

log_histogram::log_histogram(unsigned bins, double lo, double hi)
    : m_hist(bh::make_histogram(axis_t(bins, lo, hi))) {}

double log_histogram::quantile(double q) const {
    if (m_count == 0) return 0;
    const double target = q * double(m_count);
    double acc = double(m_zeros);
    if (m_zeros > 0 && acc >= target) return 0;
    for (auto&& x : bh::indexed(m_hist, bh::coverage::all)) {
        acc += *x;
        if (acc >= target && *x > 0) {
            if (x.index() >= static_cast<int>(m_hist.axis().size())) return x.bin().lower();
            return x.bin().upper();
        }
    }
    return 0;
}

std::vector<std::pair<double, std::uint64_t>> log_histogram::octaves(double unit) const {
    std::vector<std::pair<double, std::uint64_t>> out;
    auto add_to = [&out](double upper, double n) {
        if (n <= 0) return;
        if (out.empty() || out.back().first != upper) out.emplace_back(upper, 0);
        out.back().second += static_cast<std::uint64_t>(n);
    };
    add_to(0, double(m_zeros));
    const double lo = m_hist.axis().value(0);
    for (auto&& x : bh::indexed(m_hist, bh::coverage::all)) {
        if (*x <= 0) continue;
        // A fine bin goes by its (geometric) centre, under- and overflow by a point inside them.
        const int i = x.index();
        const double at = i < 0                            ? lo / 2
                          : i >= int(m_hist.axis().size()) ? 1.5 * x.bin().lower()
                                                           : x.bin().center();
        const double k = std::floor(std::log2(at / unit)) + 1;
        add_to(unit * std::exp2(k), *x);
    }
    return out;
}

}  // namespace fabricsim
