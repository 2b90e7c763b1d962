// BCN reaction points on the NIC's limiter bank (issue 15): bcn_limiters (plain C++), exact
// rates, spacing, tags and binding.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <vector>

#include "fabricsim/nic/algo/bcn_limiters.h"

using namespace fabricsim;
using nic::bank_policy;
using nic::bcn_limiters;
using nic::bcn_rp_params;

namespace {

constexpr std::uint64_t G10 = 10'000'000'000ull;
constexpr ps_t US = PS_PER_US;
constexpr std::uint32_t WIRE = 1538;
constexpr std::uint32_t FRAME = 1518;

bcn_limiters make(unsigned limiters = 2, bank_policy full = bank_policy::SHARE,
                  std::uint64_t initial = 0) {
    bcn_rp_params p = bcn_rp_params::thesis_default(G10);
    p.initial_rate_bps = initial;
    return bcn_limiters(p, limiters, full, 120 * US, 1);
}

}  // namespace

TEST_CASE("bcn_limiters: a negative message installs the regulator and its tag", "[nic][bcn]") {
    bcn_limiters b = make();
    CHECK(b.limiter_for_frame(0, 7) == bcn_limiters::NONE);  // line rate, no limiter
    // A positive message for an unbound flow is ignored (nothing to speed up).
    CHECK(b.on_message(10, 7, 0xABCD0101u, 3.0) == bcn_limiters::NONE);
    CHECK(b.stats().ignored_messages == 1);
    // Fb = -3: r = 10G (1 - 3 x 2.6e-4) = 9.9922 Gb/s.
    CHECK(b.on_message(20, 7, 0xABCD0101u, -3.0) == 0);
    CHECK(b.limiter_of(7) == 0);
    CHECK(b.rate_bps(0) == 9'992'200'000u);
    CHECK(b.bank().at(0).rate_bps() == 9'992'200'000u);
    CHECK(b.tag(0) == 0xABCD0101u);
    CHECK(b.rp_totals().installs == 1);
    CHECK(b.stats().bindings == 1);
    // A positive message from another CP is stale: ignored by the RP.
    b.on_message(30, 7, 0x1111u, 2.0);
    CHECK(b.rate_bps(0) == 9'992'200'000u);
    CHECK(b.rp_totals().ignored == 1);
    // Its own CP: + G_i Fb R_u = 0.53 x 2 x 1 Mb/s.
    b.on_message(40, 7, 0xABCD0101u, 2.0);
    CHECK(b.rate_bps(0) == 9'993'260'000u);
    CHECK(b.stats().messages == 3);
}

TEST_CASE("bcn_limiters: next-send-time spacing at the regulator's rate", "[nic][bcn]") {
    bcn_limiters b = make();
    // Fb chosen for exactly 5 Gb/s: 1 - 2.6e-4 x |Fb| = 0.5 is the decrease floor.
    b.on_message(0, 3, 9, -5000.0);
    CHECK(b.rate_bps(0) == 5'000'000'000u);
    CHECK(b.earliest_start(0, 100) == 100);
    b.sent(0, 100, WIRE, FRAME, false);
    // 1538 B x 8 / 5 Gb/s = 2460.8 ns.
    CHECK(b.earliest_start(0, 100) == 100 + 2'460'800);
    b.hold(0);
    CHECK(b.held(0) == 1);
    b.sent(0, 100 + 2'460'800, WIRE, FRAME, true);
    CHECK(b.held(0) == 0);
    CHECK(b.stats().limited_frames == 2);
    CHECK(b.stats().held_frames == 1);
    CHECK(b.stats().tagged_frames == 2);
    CHECK(b.stats().limited_bytes == 2 * FRAME);
}

TEST_CASE("bcn_limiters: back at the line rate the limiter is freed once drained", "[nic][bcn]") {
    bcn_limiters b = make();
    b.on_message(0, 3, 9, -1.0);  // 10G (1 - 2.6e-4) = 9.9974 Gb/s
    CHECK(b.rate_bps(0) == 9'997'400'000u);
    b.hold(0);
    // +0.53 x 5000 x 1 Mb/s = 2.65 Gb/s: capped at the line rate, the RP removed; one frame
    // is still held, so the limiter stays until it leaves.
    b.on_message(10, 3, 9, 5000.0);
    CHECK_FALSE(b.rp(0).active());
    CHECK(b.tag(0) == 0);
    CHECK(b.limiter_of(3) == 0);
    b.sent(0, 20, WIRE, FRAME, true);
    CHECK(b.limiter_of(3) == bcn_limiters::NONE);
    CHECK(b.active().empty());
    CHECK(b.stats().limiter_releases == 1);
    CHECK(b.stats().unbindings == 1);
    CHECK(b.rp_totals().releases == 1);
    CHECK(b.stats().tagged_frames == 0);  // the frame left after the removal: untagged
    // A new negative message starts a fresh regulator from the line rate.
    b.on_message(30, 3, 9, -1.0);
    CHECK(b.rate_bps(0) == 9'997'400'000u);
    CHECK(b.rp_totals().installs == 2);
}

TEST_CASE("bcn_limiters: bank full, share or ignore", "[nic][bcn]") {
    SECTION("share: limiter flow % size, one regulator for both flows") {
        bcn_limiters b = make(2, bank_policy::SHARE);
        b.on_message(0, 10, 9, -1.0);
        b.on_message(0, 11, 9, -1.0);
        CHECK(b.on_message(0, 13, 9, -1.0) == 1);
        CHECK(b.stats().shared_bindings == 1);
        CHECK(b.flows(1) == std::vector<std::uint32_t>{11, 13});
        CHECK(b.rp(1).stats().decreases == 2);
        CHECK(b.stats().peak_in_use == 2);
    }
    SECTION("ignore: the message is dropped, the flow stays unlimited") {
        bcn_limiters b = make(2, bank_policy::NONE);
        b.on_message(0, 10, 9, -1.0);
        b.on_message(0, 11, 9, -1.0);
        CHECK(b.on_message(0, 13, 9, -1.0) == bcn_limiters::NONE);
        CHECK(b.limiter_of(13) == bcn_limiters::NONE);
        CHECK(b.stats().ignored_messages == 1);
        CHECK(b.stats().messages == 2);
    }
}

TEST_CASE("bcn_limiters: STOP restarts at the minimum rate after a random silence", "[nic][bcn]") {
    bcn_limiters b = make();
    b.on_stop(1000, 4, 9);
    CHECK(b.rate_bps(0) == 100'000'000u);
    CHECK(b.tag(0) == 9);
    const ps_t resume = b.earliest_start(0, 1000);
    CHECK(resume >= 1000 + 60 * US);  // [0.5, 1.5) x 120 us
    CHECK(resume < 1000 + 180 * US);
    CHECK(b.earliest_start(0, resume + 5) == resume + 5);
    // Same seed, same silence.
    bcn_limiters c = make();
    c.on_stop(1000, 4, 9);
    CHECK(c.earliest_start(0, 1000) == resume);
    CHECK(b.rp_totals().stops == 1);
}

TEST_CASE("bcn_limiters: an initial rate limits a flow from its first frame", "[nic][bcn]") {
    bcn_limiters b = make(2, bank_policy::SHARE, 1'100'000'000u);
    CHECK(b.limiter_for_frame(0, 5) == 0);
    CHECK(b.rate_bps(0) == 1'100'000'000u);
    CHECK(b.tag(0) == 0);  // not installed: untagged until the first negative message
    CHECK_FALSE(b.rp(0).active());
    b.on_message(10, 5, 9, 3.0);  // positive before install: ignored by the RP
    CHECK(b.rate_bps(0) == 1'100'000'000u);
    b.on_message(20, 5, 9, -2.0);  // 1.1G (1 - 5.2e-4)
    CHECK(b.rate_bps(0) == 1'099'428'000u);
    CHECK(b.tag(0) == 9);
    b.on_message(30, 5, 9, 3.0);  // + 1.59 Mb/s
    CHECK(b.rate_bps(0) == 1'101'018'000u);
}

TEST_CASE("bcn_limiters: bad construction", "[nic][bcn]") {
    bcn_rp_params p = bcn_rp_params::thesis_default(G10);
    CHECK_THROWS_AS(bcn_limiters(p, 0, bank_policy::SHARE, US, 1), std::invalid_argument);
    CHECK_THROWS_AS(bcn_limiters(p, 1, bank_policy::LRU, US, 1), std::invalid_argument);
    CHECK_THROWS_AS(bcn_limiters(p, 1, bank_policy::SHARE, 0, 1), std::invalid_argument);
    p.g_d = 2;
    CHECK_THROWS_WITH(bcn_limiters(p, 1, bank_policy::SHARE, US, 1),
                      "bcn_rp_params.g_d: must be in (0, 1)");
}
