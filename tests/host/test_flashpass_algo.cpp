// Unit tests of FlashPass's emulation rate control (seed-002 §1.4 Algorithm 2, §2.7 fixed
// points): start at the maximum, one update per RTT, the decrease to delivered x (1 +
// min_target) above max_target, the x (1 + max_target) increase below min_target, the hold in
// between, the cap and the one-per-RTT floor, and the gap.
#include <catch2/catch.hpp>

#include "fabricsim/host/algo/flashpass.h"

using namespace fabricsim;
using namespace fabricsim::host;

namespace {
constexpr double MAX = 64'734'895.0;  // 10G x 84/1622 in bytes/s
constexpr ps_t RTT = 100 * PS_PER_US;

/// One period: credits for `in` of the next `out` emulation packets (the last one among
/// them), the last at `at` (>= one RTT after the previous period).
bool period(flashpass_rate_control& c, std::uint64_t& base, unsigned out, unsigned in, ps_t at) {
    bool updated = false;
    for (unsigned i = 0; i + 1 < in; ++i) updated = c.on_credit(at - 1, RTT, base + i);
    updated = c.on_credit(at, RTT, base + out - 1) || updated;
    base += out;
    return updated;
}
}  // namespace

TEST_CASE("flashpass: starts at the maximum rate, gap of one 84 B frame", "[flashpass]") {
    flashpass_rate_control c(0.01, 0.10, MAX);
    c.start(0, RTT);
    CHECK(c.rate() == MAX);
    // 84 B at 64.73 MB/s: 1297.6 ns.
    CHECK(c.gap() == 1'297'600);
}

TEST_CASE("flashpass: no update before one RTT", "[flashpass]") {
    flashpass_rate_control c(0.01, 0.10, MAX);
    c.start(0, RTT);
    CHECK_FALSE(c.on_credit(RTT - 1, RTT, 0));
    CHECK(c.updates() == 0);
    CHECK(c.on_credit(RTT, RTT, 1));
    CHECK(c.updates() == 1);
    CHECK(c.last_loss() == 0);
}

TEST_CASE("flashpass: a reordered credit of a judged period is not counted", "[flashpass]") {
    flashpass_rate_control c(0.01, 0.10, MAX);
    c.start(0, RTT);
    REQUIRE(c.on_credit(RTT, RTT, 9));  // 1 of 10: loss 0.9
    CHECK(c.rate() == Approx(MAX * 0.1 * 1.01));
    CHECK_FALSE(c.on_credit(2 * RTT, RTT, 5));
    REQUIRE(c.on_credit(2 * RTT, RTT, 19));  // 1 of 10 again
    CHECK(c.last_loss() == Approx(0.9));
}

TEST_CASE("flashpass: MIMD fixed points (seed-002 §2.7)", "[flashpass]") {
    flashpass_rate_control c(0.01, 0.10, MAX);
    c.start(0, RTT);
    std::uint64_t base = 0;
    SECTION("loss above max_target: rate x (1 - loss) x (1 + min_target)") {
        REQUIRE(period(c, base, 100, 60, RTT));  // 40 % lost
        CHECK(c.last_loss() == Approx(0.4));
        CHECK(c.rate() == Approx(MAX * 0.6 * 1.01));
        SECTION("then no loss: x 1.1, capped at the maximum") {
            REQUIRE(period(c, base, 100, 100, 2 * RTT));
            CHECK(c.rate() == Approx(MAX * 0.6 * 1.01 * 1.1));
            for (int k = 3; k < 12; ++k) period(c, base, 100, 100, k * RTT);
            CHECK(c.rate() == MAX);
        }
    }
    SECTION("loss between the targets: the rate holds") {
        REQUIRE(period(c, base, 100, 95, RTT));  // 5 %
        CHECK(c.rate() == MAX);
        REQUIRE(period(c, base, 100, 90, 2 * RTT));  // exactly 10 %: not above max_target
        CHECK(c.rate() == MAX);
    }
    SECTION("a decrease aims at min_target: delivered share x 1.01") {
        REQUIRE(period(c, base, 200, 100, RTT));
        const double after = c.rate();
        CHECK(after == Approx(MAX * 0.5 * 1.01));
        // The bottleneck passes what it passed before (100 per period) from 101 sent: 0.99 %.
        REQUIRE(period(c, base, 101, 100, 2 * RTT));
        CHECK(c.last_loss() == Approx(1.0 / 101));
        CHECK(c.rate() == Approx(after * 1.1));  // below 1 %: increase
    }
    SECTION("total loss: floor of one emulation packet per RTT") {
        for (int k = 1; k <= 3; ++k) period(c, base, 100, 1, k * RTT);  // 1 of 100 back
        CHECK(c.rate() == Approx(84.0 * 1e12 / double(RTT)));           // 840 kB/s
    }
}

TEST_CASE("flashpass: other targets", "[flashpass]") {
    flashpass_rate_control c(0.01, 0.05, MAX);
    c.start(0, RTT);
    std::uint64_t base = 0;
    REQUIRE(period(c, base, 100, 93, RTT));  // 7 % > 5 %
    CHECK(c.rate() == Approx(MAX * 0.93 * 1.01));
    REQUIRE(period(c, base, 100, 100, 2 * RTT));
    CHECK(c.rate() == Approx(MAX * 0.93 * 1.01 * 1.05));
}

TEST_CASE("flashpass: delayed credit sending holds up to the batch or T + t_wait/2",
          "[flashpass]") {
    const ps_t t_wait = 1000 * PS_PER_US;
    const ps_t gap = 1298 * PS_PER_NS;  // emulation packets at 10G's maximum rate
    const ps_t one_way = 50 * PS_PER_US;
    flashpass_credit_batch b(4, t_wait);
    SECTION("full at the limit: four timestamps, one 114 B credit") {
        for (std::uint64_t s = 0; s < 3; ++s) {
            REQUIRE(b.joins(s));
            CHECK_FALSE(b.add(s, s * gap, s * gap + one_way));
        }
        CHECK(b.deadline() == t_wait / 2);  // the first's T + t_wait/2
        CHECK(b.add(3, 3 * gap, 3 * gap + one_way));
        CHECK(b.count() == 4);
        CHECK(b.first() == 0);
        CHECK(b.sent(3) == 3 * gap);
        CHECK(b.held(3 * gap + one_way + 7) == 7);
        CHECK(flashpass_credit_batch::wire_bytes(4) == 114);
        b.clear();
        CHECK(b.count() == 0);
        CHECK(b.joins(17));
    }
    SECTION("a gap in the numbers does not join") {
        CHECK_FALSE(b.add(5, 0, one_way));
        CHECK(b.joins(6));
        CHECK_FALSE(b.joins(7));  // 6 was dropped on the way
        CHECK(b.first() == 5);
    }
    SECTION("no time to wait: sent at once") {
        // Arrived at T + t_wait/2 (a 1 ms round trip with t_wait = 1 ms): no slack.
        CHECK(b.add(0, 0, t_wait / 2));
        CHECK(b.count() == 1);
    }
    SECTION("batch of one is the plain credit") {
        flashpass_credit_batch one(1, t_wait);
        CHECK(one.add(0, 0, one_way));
        CHECK(flashpass_credit_batch::wire_bytes(1) == 84);
        CHECK(flashpass_credit_batch::wire_bytes(6) == 130);
    }
}
