// FERA reaction points of a NIC (plain C++): one regulator per flow, next-send-time spacing at
// the flow's rate, tags on the first frame and then every tau, returned tags set the rate.
#include <catch2/catch.hpp>

#include "fabricsim/core/frame.h"
#include "fabricsim/nic/algo/fera_limiters.h"

using namespace fabricsim;
using namespace fabricsim::nic;

namespace {
constexpr std::uint64_t G10 = 10'000'000'000ull;
constexpr ps_t US = PS_PER_US;
constexpr ps_t MS = PS_PER_MS;
}  // namespace

TEST_CASE("fera limiters: per-flow spacing at C/N_0, then at the returned rate", "[nic][fera]") {
    fera_limiters l(fera_source_params::thesis_default(G10, 20));  // r_0 = 500 Mb/s
    const unsigned a = l.flow(7, 0);
    const unsigned b = l.flow(9, 0);
    CHECK(a == 0);
    CHECK(b == 1);
    CHECK(l.flow(7, 5 * US) == a);
    CHECK(l.size() == 2);
    CHECK(l.earliest_start(a, 0) == 0);  // the first frame goes at once
    CHECK(l.sent(a, 0, 1538));           // and carries a tag (+12 bytes on the wire)
    // 1550 B at 500 Mb/s: 24.8 us.
    CHECK(l.earliest_start(a, 0) == 24'800'000);
    CHECK_FALSE(l.sent(a, 24'800'000, 1538));
    CHECK(l.earliest_start(a, 24'800'000) == 24'800'000 + 24'608'000);  // 1538 B, no tag
    // A returned tag moves the pending gap at once: 1538 B at 1 Gb/s.
    CHECK(l.on_tag_returned(7, 1'000'000'000ull, 30 * US));
    CHECK(l.earliest_start(a, 30 * US) == 24'800'000 + 12'304'000);
    CHECK(l.source(a).rate_bps() == 1e9);
    CHECK(l.source(b).rate_bps() == 500e6);
    CHECK_FALSE(l.on_tag_returned(123, 1, 30 * US));  // no such flow
    // The next tag: the first frame at least tau = 1 ms after the last.
    CHECK_FALSE(l.sent(a, MS - 1, 1538));
    CHECK(l.sent(a, MS, 1538));
    // Idle reset: 2T after the last returned tag the rate is C/N_0 again.
    CHECK(l.earliest_start(a, 30 * US + 2 * MS) == MS + 24'800'000);
    CHECK(l.source(a).stats().idle_resets == 1);
    CHECK(l.stats().frames == 4);
    CHECK(l.stats().tags_sent == 2);
    CHECK(l.stats().tags_returned == 1);
    CHECK(l.stats().tags_unknown == 1);
}

TEST_CASE("fera limiters: bad parameters are refused", "[nic][fera]") {
    fera_source_params p = fera_source_params::thesis_default(G10);
    p.initial_flows = 0.5;
    CHECK_THROWS_AS(fera_limiters(p), std::invalid_argument);
}
