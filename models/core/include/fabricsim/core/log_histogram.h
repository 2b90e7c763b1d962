#pragma once
/// A histogram of non-negative times (or any positive quantity) on a log-spaced axis, for
/// percentiles of latencies and delays: boost::histogram with a log-transformed regular axis,
/// plus an exact count of zeros (a log axis has no bin for 0). Fixed size after construction:
/// add() never allocates.
#include <cstdint>
#include <utility>
#include <vector>

#include <boost/histogram.hpp>

namespace fabricsim {

class log_histogram
{
public:
    /// `bins` log-spaced bins over [lo, hi) (lo > 0); values below lo (but above 0) and above
    /// hi go to the under- and overflow bins.
    log_histogram(unsigned bins, double lo, double hi);
    /// 10 ns .. 1 s in ps, ~2% steps (920 bins).
    static log_histogram ps_10ns_to_1s() { return {920, 1e4, 1e12}; }

    void add(double v) {
        if (v <= 0)
            ++m_zeros;
        else
            m_hist(v);
        ++m_count;
    }
    std::uint64_t count() const { return m_count; }
    /// The q-quantile (q in [0, 1]): 0 if the first q of the samples are zeros, else the upper
    /// edge of the bin holding it (the lower edge for the overflow bin); 0 without samples.
    double quantile(double q) const;
    /// Counts in octaves, bins with edges unit x 2^k (any integer k), as (upper edge, count)
    /// for every non-empty one, in order; the zeros first with edge 0. A fine bin counts in
    /// the octave of its centre (the underflow bin in the one holding lo / 2, the overflow bin
    /// in the one above hi), so values within a bin width of an octave edge may land in the
    /// octave next to theirs.
    std::vector<std::pair<double, std::uint64_t>> octaves(double unit) const;

private:
    using axis_t = boost::histogram::axis::regular<double, boost::histogram::axis::transform::log>;
    using hist_t = decltype(boost::histogram::make_histogram(std::declval<axis_t>()));
    hist_t m_hist;
    std::uint64_t m_zeros = 0;
    std::uint64_t m_count = 0;
};

}  // namespace fabricsim
