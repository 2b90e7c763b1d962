// The NIC's rate-limiter bank: next-send-time pacing and binding flows to a limited set; the
// options: association table, idle timeout, replacement policies, token-bucket mode, FIFO.
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <vector>

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

// ---------------------------------------------------------------------------------------------
// Options: association table, idle timeout, replacement policies, token-bucket mode, FIFO.

namespace {
constexpr ps_t US = PS_PER_US;

rate_limiter_config token_bucket_config() {
    rate_limiter_config c;
    c.mode = limiter_mode::TOKEN_BUCKET;
    c.rate_granularity_bps = 500'000;  // HULL: 0.5 Mb/s x 16 us = 1 B of token
    c.depth_bytes = 3000;
    c.token_period = 16 * US;
    c.fifo_bytes = 131'072;
    return c;
}
}  // namespace

TEST_CASE("rate_limiter_bank: exhaustion of the limiters under share, none and lru", "[nic][rl]") {
    rate_limiter_bank_config cfg;
    SECTION("share (default): the third flow shares limiter 3 % 2") {
        rate_limiter_bank b(2, cfg);
        CHECK(b.bind(1) == 0);
        CHECK(b.bind(2) == 1);
        CHECK(b.bind(3) == 1);
        CHECK(b.associated() == 3);
        CHECK(b.users(1) == 2);
        CHECK(b.stats().bindings == 2);
        CHECK(b.stats().shared_bindings == 1);
        CHECK(b.stats().rejected_no_limiter == 0);
    }
    SECTION("none: the third flow is not associated (unpaced), counted") {
        cfg.limiters_full = bank_policy::NONE;
        rate_limiter_bank b(2, cfg);
        CHECK(b.bind(1, 0) == 0);
        CHECK(b.bind(2, 0) == 1);
        CHECK(b.bind(3, 0) == rate_limiter_bank::NONE);
        CHECK(b.bind(3, 1) == rate_limiter_bank::NONE);
        CHECK(b.limiter_of(3) == rate_limiter_bank::NONE);
        CHECK(b.associated() == 2);
        CHECK(b.stats().rejected_no_limiter == 2);
        CHECK(b.stats().shared_bindings == 0);
        b.release(1);
        CHECK(b.bind(3, 2) == 0);  // limiter 0 is free again
        CHECK(b.stats().bindings == 3);
    }
    SECTION("lru: the least recently used flow loses its limiter") {
        cfg.limiters_full = bank_policy::LRU;
        rate_limiter_bank b(2, cfg);
        CHECK(b.bind(1, 10) == 0);
        CHECK(b.bind(2, 20) == 1);
        CHECK(b.lookup(1, 30) == 0);  // flow 1 used again: flow 2 is now the oldest
        b.at(1).set_rate(1'000'000'000);
        CHECK(b.bind(3, 40) == 1);
        CHECK(b.limiter_of(2) == rate_limiter_bank::NONE);
        CHECK(b.at(1).rate_bps() == 0);  // a fresh pacer for flow 3
        CHECK(b.users(1) == 1);
        CHECK(b.stats().evictions == 1);
        CHECK(b.stats().bindings == 3);
        CHECK(b.stats().releases == 0);  // an eviction is not a release
        CHECK(b.bind(2, 50) == 0);       // evicts flow 1 (used at 30)
        CHECK(b.limiter_of(1) == rate_limiter_bank::NONE);
        CHECK(b.stats().evictions == 2);
        CHECK(b.in_use() == 2);
        CHECK(b.stats().peak_in_use == 2);
    }
}

TEST_CASE("rate_limiter_bank: a full association table under none and lru", "[nic][rl]") {
    // HULL's shape: many entries, one limiter, every associated flow on it.
    rate_limiter_bank_config cfg;
    cfg.table_entries = 2;
    SECTION("none: the third flow is refused and goes unpaced") {
        rate_limiter_bank b(1, cfg);
        CHECK(b.bind(1, 0) == 0);
        CHECK(b.bind(2, 0) == 0);
        CHECK(b.bind(3, 0) == rate_limiter_bank::NONE);
        CHECK(b.associated() == 2);
        CHECK(b.users(0) == 2);
        CHECK(b.stats().rejected_table_full == 1);
        CHECK(b.stats().bindings == 1);
        CHECK(b.stats().shared_bindings == 1);
        CHECK(b.stats().peak_associated == 2);
        b.release(2);
        CHECK(b.bind(3, 1) == 0);
        CHECK(b.associated() == 2);
    }
    SECTION("lru: the least recently used entry is evicted") {
        cfg.table_full = bank_policy::LRU;
        rate_limiter_bank b(1, cfg);
        CHECK(b.bind(1, 0) == 0);
        CHECK(b.bind(2, 5) == 0);
        CHECK(b.bind(3, 9) == 0);
        CHECK(b.limiter_of(1) == rate_limiter_bank::NONE);
        CHECK(b.limiter_of(2) == 0);
        CHECK(b.associated() == 2);
        CHECK(b.users(0) == 2);
        CHECK(b.stats().evictions == 1);
        CHECK(b.stats().rejected_table_full == 0);
        CHECK(b.bind(2, 12) == 0);  // already associated: refreshed, flow 3 now the oldest
        CHECK(b.bind(4, 13) == 0);
        CHECK(b.limiter_of(3) == rate_limiter_bank::NONE);
        CHECK(b.stats().evictions == 2);
    }
    SECTION("share is not a table policy") {
        cfg.table_full = bank_policy::SHARE;
        REQUIRE(cfg.validate());
        CHECK(cfg.validate()->field == "table_full");
        CHECK_THROWS_WITH(rate_limiter_bank(1, cfg),
                          Catch::Contains("rate_limiter_bank_config.table_full"));
    }
}

TEST_CASE("rate_limiter_bank: idle timeout, checked lazily on access", "[nic][rl]") {
    rate_limiter_bank_config cfg;
    cfg.table_entries = 4;
    cfg.idle_timeout = 10 * US;
    rate_limiter_bank b(1, cfg);
    CHECK(b.bind(1, 0) == 0);
    CHECK(b.bind(2, 5 * US) == 0);
    CHECK(b.lookup(1, 9 * US) == 0);                         // used at 9 us
    CHECK(b.lookup(2, 15 * US) == rate_limiter_bank::NONE);  // idle 10 us: dropped
    CHECK(b.stats().timeouts == 1);
    CHECK(b.find(1, 18 * US) == 0);  // idle 9 us; find does not refresh
    CHECK(b.find(1, 19 * US - 1) == 0);
    CHECK(b.find(1, 19 * US) == rate_limiter_bank::NONE);
    CHECK(b.stats().timeouts == 2);
    CHECK(b.associated() == 0);
    CHECK(b.in_use() == 0);
    // A new flow's bind sweeps idle entries from the least recently used end.
    CHECK(b.bind(3, 20 * US) == 0);
    CHECK(b.bind(4, 25 * US) == 0);
    CHECK(b.bind(5, 31 * US) == 0);  // flow 3 idle 11 us
    CHECK(b.stats().timeouts == 3);
    CHECK(b.associated() == 2);
    b.expire(35 * US);  // flow 4 idle 10 us
    CHECK(b.stats().timeouts == 4);
    CHECK(b.limiter_of(4) == rate_limiter_bank::NONE);
    CHECK(b.limiter_of(5) == 0);
    // A timed-out flow that comes back is a new association.
    CHECK(b.bind(2, 40 * US) == 0);
    // Own limiter: flow 1 at 0, flow 3 at 20 us (the bank had emptied); the rest shared it.
    CHECK(b.stats().bindings == 2);
    CHECK(b.stats().shared_bindings == 4);
    CHECK(b.stats().peak_associated == 2);
}

TEST_CASE("rate_limiter_bank: the association table against a reference map", "[nic][rl]") {
    // Inserts, releases and evictions in a pseudo-random order (raw mt19937_64 output) keep
    // every lookup right: the open-addressing deletion moves entries, never loses them.
    for (const std::uint32_t entries : {0u, 37u}) {
        rate_limiter_bank_config cfg;
        cfg.table_entries = entries;
        cfg.table_full = bank_policy::LRU;
        rate_limiter_bank b(8, cfg);
        std::mt19937_64 gen(7);
        std::map<std::uint32_t, int> ref;
        std::vector<std::uint32_t> order;  // least recently used first
        for (int i = 0; i < 20'000; ++i) {
            const auto flow = static_cast<std::uint32_t>(gen() % 300);
            const ps_t now = ps_t(i);
            if (gen() % 3 == 0) {
                b.release(flow);
                ref.erase(flow);
                order.erase(std::remove(order.begin(), order.end(), flow), order.end());
                continue;
            }
            const int l = b.bind(flow, now);
            REQUIRE(l != rate_limiter_bank::NONE);
            if (ref.count(flow) == 0U && entries != 0 && ref.size() == entries) {
                ref.erase(order.front());
                order.erase(order.begin());
            }
            if (ref.count(flow) != 0U) REQUIRE(ref[flow] == l);
            ref[flow] = l;
            order.erase(std::remove(order.begin(), order.end(), flow), order.end());
            order.push_back(flow);
        }
        CHECK(b.associated() == ref.size());
        for (std::uint32_t f = 0; f < 300; ++f) {
            const auto it = ref.find(f);
            CHECK(b.limiter_of(f) == (it == ref.end() ? rate_limiter_bank::NONE : it->second));
        }
    }
}

TEST_CASE("rate_limiter: token bucket bursts up to its depth, then tokens every period",
          "[nic][rl]") {
    rate_limiter r(token_bucket_config());
    r.set_rate(500'000'000, 0);        // 1000 B of tokens every 16 us
    CHECK(r.tokens_bytes(0) == 3000);  // starts full
    SECTION("1000 B frames: three at once, then one per period") {
        for (int i = 0; i < 5; ++i) REQUIRE(r.enqueue(1000, 1 * US));
        CHECK(r.backlog_bytes() == 5000);
        CHECK(r.earliest_start(1 * US) == 1 * US);
        r.send_head(1 * US);
        CHECK(r.earliest_start(1 * US) == 1 * US);
        r.send_head(1 * US);
        CHECK(r.earliest_start(1 * US) == 1 * US);
        r.send_head(1 * US);
        CHECK(r.tokens_bytes(1 * US) == 0);
        CHECK(r.earliest_start(1 * US) == 16 * US);
        CHECK(r.earliest_start(16 * US - 1) == 16 * US);
        CHECK(r.tokens_bytes(16 * US) == 1000);
        const rate_limiter::fifo_entry e = r.send_head(16 * US);
        CHECK(e.bytes == 1000);
        CHECK(e.enqueued == 1 * US);
        CHECK(r.earliest_start(16 * US) == 32 * US);
        r.send_head(32 * US);
        CHECK(r.fifo_empty());
        CHECK(r.backlog_bytes() == 0);
        CHECK(r.earliest_start(40 * US) == 40 * US);  // empty FIFO: nothing held back
        // Idle: ticks at 48, 64, 80, 96 us refill to the depth and no further.
        CHECK(r.tokens_bytes(80 * US) == 3000);
        CHECK(r.tokens_bytes(1000 * US) == 3000);
    }
    SECTION("1500 B frames: two at once, then the long-run rate (1500 B per 24 us)") {
        for (int i = 0; i < 6; ++i) REQUIRE(r.enqueue(1500, 0));
        std::vector<ps_t> starts;
        ps_t t = 0;
        while (!r.fifo_empty()) {
            t = r.earliest_start(t);
            starts.push_back(t);
            r.send_head(t);
        }
        CHECK(starts == std::vector<ps_t>{0, 0, 32 * US, 48 * US, 80 * US, 96 * US});
        CHECK(r.tokens_bytes(96 * US) == 0);
    }
    SECTION("a frame larger than the depth waits for a full bucket and leaves a debt") {
        r.sent(1000, 0);                                   // 2000 B left
        CHECK(r.earliest_start(1 * US, 4000) == 16 * US);  // full (3000) at the tick at 16 us
        r.sent(4000, 16 * US);
        CHECK(r.tokens_bytes(16 * US) == -1000);
        CHECK(r.earliest_start(16 * US, 1000) == 48 * US);  // two ticks to +1000
    }
    SECTION("a rate change counts earlier ticks at the old rate") {
        r.sent(3000, 0);
        r.set_rate(1'000'000'000, 40 * US);  // ticks at 16 and 32 us: 2 x 1000 B
        CHECK(r.tokens_bytes(40 * US) == 2000);
        CHECK(r.tokens_bytes(48 * US) == 3000);  // 2000 + 2000, capped
        rate_limiter late(token_bucket_config());
        late.set_rate(500'000'000, 0);
        late.sent(3000, 0);
        late.set_rate(1'000'000'000);  // without a time: the 2 ticks count at the new rate
        CHECK(late.tokens_bytes(40 * US) == 3000);
    }
}

TEST_CASE("rate_limiter: rate granularity, unlimited and continuous token buckets", "[nic][rl]") {
    rate_limiter r(token_bucket_config());
    r.set_rate(500'300'000);
    CHECK(r.rate_bps() == 500'000'000);
    r.set_rate(1);
    CHECK(r.rate_bps() == 500'000);  // at least one step
    r.set_rate(0);
    CHECK(r.rate_bps() == 0);
    // Unlimited: frames go at once and take no tokens.
    REQUIRE(r.enqueue(9000, 5));
    CHECK(r.earliest_start(5) == 5);
    r.send_head(5);
    CHECK(r.tokens_bytes(5) == 3000);
    // Period 0: tokens every ps. 8 Gb/s = 1 byte per ns.
    rate_limiter_config c = token_bucket_config();
    c.token_period = 0;
    c.rate_granularity_bps = 0;
    rate_limiter cont(c);
    cont.set_rate(8'000'000'000, 0);
    cont.sent(3000, 0);
    CHECK(cont.earliest_start(0, 1000) == 1000 * PS_PER_NS);
    CHECK(cont.tokens_bytes(1500 * PS_PER_NS) == 1500);
    // Granularity applies in next-send-time mode too.
    rate_limiter_config n;
    n.rate_granularity_bps = 1'000'000;
    rate_limiter nst(n);
    nst.set_rate(2'500'000'000 + 999'999);
    CHECK(nst.rate_bps() == 2'500'000'000);
}

TEST_CASE("rate_limiter: FIFO overflow counted at the exact byte", "[nic][rl]") {
    rate_limiter_config c = token_bucket_config();
    c.fifo_bytes = 4000;
    rate_limiter r(c);
    r.set_rate(500'000'000, 0);
    CHECK(r.enqueue(1500, 0));
    CHECK(r.enqueue(1500, 0));
    CHECK_FALSE(r.enqueue(1500, 0));  // 4500 > 4000
    CHECK(r.enqueue(1000, 0));        // exactly 4000
    CHECK_FALSE(r.enqueue(1, 0));
    CHECK(r.backlog_bytes() == 4000);
    CHECK(r.fifo_frames() == 3);
    CHECK(r.stats().fifo_full_frames == 2);
    CHECK(r.stats().fifo_full_bytes == 1501);
    CHECK(r.stats().enqueued == 3);
    CHECK(r.stats().peak_backlog_bytes == 4000);
    r.send_head(0);
    CHECK(r.backlog_bytes() == 2500);
    CHECK(r.enqueue(1500, 1));
    CHECK(r.backlog_bytes() == 4000);
    // Without a FIFO (the default) nothing is held.
    rate_limiter none;
    CHECK_FALSE(none.enqueue(64, 0));
    CHECK(none.stats().fifo_full_frames == 1);
}

TEST_CASE("rate_limiter: next-send-time mode with a FIFO spaces its head", "[nic][rl]") {
    rate_limiter_config c;
    c.fifo_bytes = 100'000;
    rate_limiter r(c);
    r.set_rate(1'000'000'000);                                 // 1538 B take 12.304 us
    for (int i = 0; i < 40; ++i) REQUIRE(r.enqueue(1538, 0));  // the ring grows past 16 and 32
    CHECK(r.backlog_bytes() == 40 * 1538);
    ps_t t = 0;
    for (int i = 0; i < 40; ++i) {
        t = r.earliest_start(t);
        CHECK(t == ps_t(i) * 12'304'000);
        CHECK(r.send_head(t).bytes == 1538);
    }
    CHECK(r.fifo_empty());
    CHECK(r.backlog_bytes() == 0);
    CHECK(r.stats().fifo_full_frames == 0);
}

TEST_CASE("rate_limiter_bank: limiter options, reset on bind and validation", "[nic][rl]") {
    rate_limiter_bank_config cfg;
    cfg.limiter = token_bucket_config();
    cfg.reset_on_bind = false;
    rate_limiter_bank b(1, cfg);
    CHECK(b.at(0).config().mode == limiter_mode::TOKEN_BUCKET);
    b.at(0).set_rate(500'000'000, 0);
    CHECK(b.bind(1) == 0);
    b.release(1);
    CHECK(b.bind(2) == 0);  // taken from free again: the rate is kept
    CHECK(b.at(0).rate_bps() == 500'000'000);
    cfg.reset_on_bind = true;
    rate_limiter_bank fresh(1, cfg);
    fresh.at(0).set_rate(500'000'000, 0);
    fresh.at(0).sent(3000, 0);
    CHECK(fresh.bind(1) == 0);
    CHECK(fresh.at(0).rate_bps() == 0);
    CHECK(fresh.at(0).tokens_bytes(0) == 3000);

    rate_limiter_config bad = token_bucket_config();
    bad.depth_bytes = 0;
    REQUIRE(bad.validate());
    CHECK(bad.validate()->field == "depth_bytes");
    CHECK_THROWS_WITH(rate_limiter(bad), Catch::Contains("rate_limiter_config.depth_bytes"));
    cfg.limiter = bad;
    REQUIRE(cfg.validate());
    CHECK(cfg.validate()->field == "limiter.depth_bytes");
    CHECK_THROWS_WITH(rate_limiter_bank(1, cfg),
                      Catch::Contains("rate_limiter_bank_config.limiter.depth_bytes"));
    CHECK_FALSE(rate_limiter_bank_config{}.validate());
    CHECK_FALSE(rate_limiter_config{}.validate());
}

TEST_CASE("rate_limiter: copies are independent, the default config stays small", "[nic][rl]") {
    rate_limiter_bank_config cfg;
    cfg.limiter = token_bucket_config();
    rate_limiter_bank two(2, cfg);
    two.at(0).set_rate(500'000'000, 0);
    REQUIRE(two.at(0).enqueue(1000, 0));
    CHECK(two.at(1).fifo_empty());
    CHECK(two.at(1).rate_bps() == 0);
    rate_limiter copy = two.at(0);
    copy.send_head(0);
    CHECK(copy.fifo_empty());
    CHECK(two.at(0).backlog_bytes() == 1000);
    CHECK(two.at(0).tokens_bytes(0) == 3000);
    two.at(1) = copy;
    CHECK(two.at(1).tokens_bytes(0) == 2000);
    CHECK(two.at(1).config().mode == limiter_mode::TOKEN_BUCKET);
    // The default: no FIFO, no counters, next-send-time.
    const rate_limiter d;
    CHECK(d.config().mode == limiter_mode::NEXT_SEND_TIME);
    CHECK(d.stats().enqueued == 0);
    CHECK(d.backlog_bytes() == 0);
    CHECK(d.fifo_empty());
    CHECK(sizeof(rate_limiter) <= 48);
}
