#pragma once
/// Sorted, disjoint [begin, end) byte ranges (out-of-order data at a receiver, the SACK
/// scoreboard at a sender). A handful of ranges at most, so a sorted vector beats a tree.
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <utility>
#include <vector>

namespace fabricsim::host {

using byte_ranges = std::vector<std::pair<std::uint64_t, std::uint64_t>>;

/// Adds [b, e) to `r`, merging it with the ranges it overlaps or touches.
inline void insert_range(byte_ranges& r, std::uint64_t b, std::uint64_t e) {
    if (e <= b) return;
    auto it = r.insert(std::lower_bound(r.begin(), r.end(), std::make_pair(b, e)), {b, e});
    if (it != r.begin() && std::prev(it)->second >= it->first) {
        std::prev(it)->second = std::max(std::prev(it)->second, it->second);
        it = std::prev(r.erase(it));
    }
    while (std::next(it) != r.end() && std::next(it)->first <= it->second) {
        it->second = std::max(it->second, std::next(it)->second);
        r.erase(std::next(it));
    }
}

}  // namespace fabricsim::host
