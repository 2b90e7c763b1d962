// The NIC's rate-limiter bank: next-send-time pacing and binding flows to a limited set.
#include <catch2/catch.hpp>

#include "fabricsim/nic/algo/rate_limiter.h"

using namespace fabricsim;
using namespace fabricsim::nic;

TEST_CASE("rate_limiter: frames spaced at the rate with the fraction carried", "[nic][rl]") {
    rate_limiter r;
    r.set_rate(3'000'000'000);  // 3 Gbps: 1538 B take 4101.333... ns
    CHECK(r.earliest_start(100) == 100);
    r.sent(1538, 100);
    CHECK(r.next_free() == 100 + 4'101'333);
    CHECK(r.earliest_start(50) == 100 + 4'101'333);
    r.sent(1538, r.next_free());
    CHECK(r.next_free() == 100 + 8'202'666);
    r.sent(1538, r.next_free());
    CHECK(r.next_free() == 100 + 12'304'000);  // three frames: exactly 12.304 us
    // A late frame restarts the spacing from its own start.
    r.sent(84, 20'000'000);
    CHECK(r.next_free() == 20'000'000 + 224'000);
    // Unlimited: no spacing.
    rate_limiter u;
    u.sent(1538, 7);
    CHECK(u.earliest_start(0) == 7);
    CHECK(u.earliest_start(9) == 9);
}

TEST_CASE("rate_limiter_bank: flows take free limiters, share when the bank is full", "[nic][rl]") {
    rate_limiter_bank b(2);
    CHECK(b.limiter_of(7) == rate_limiter_bank::NONE);
    CHECK(b.bind(7) == 0);
    CHECK(b.bind(7) == 0);  // already bound
    CHECK(b.bind(4) == 1);
    CHECK(b.in_use() == 2);
    // Full: flow 9 shares limiter 9 % 2 = 1 with flow 4.
    CHECK(b.bind(9) == 1);
    CHECK(b.users(1) == 2);
    CHECK(b.stats().bindings == 2);
    CHECK(b.stats().shared_bindings == 1);
    // Limiter 1 is free only when both its flows are released.
    b.release(4);
    CHECK(b.in_use() == 2);
    b.release(9);
    CHECK(b.in_use() == 1);
    CHECK(b.limiter_of(9) == rate_limiter_bank::NONE);
    // A fresh binding gets a fresh pacer.
    b.at(1).set_rate(1'000'000'000);
    b.at(1).sent(1538, 0);
    CHECK(b.bind(5) == 1);
    CHECK(b.at(1).rate_bps() == 0);
    CHECK(b.at(1).next_free() == 0);
    CHECK(b.stats().peak_in_use == 2);
    CHECK(b.stats().releases == 2);
    rate_limiter_bank none(0);
    CHECK(none.bind(1) == rate_limiter_bank::NONE);
}
