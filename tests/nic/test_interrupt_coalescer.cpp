// RX interrupt coalescing: ethtool rx-frames / rx-usecs, masking while the host polls, and the
// adaptive mode (Linux net_dim with the mlx5 CQE-based RX profiles).
#include <catch2/catch.hpp>

#include <vector>

#include "fabricsim/nic/algo/interrupt_coalescer.h"

using namespace fabricsim;
using namespace fabricsim::nic;

namespace {

constexpr ps_t NEVER = interrupt_coalescer::NEVER;

coalesce_params fixed(ps_t usecs, std::uint32_t frames) {
    coalesce_params p;
    p.rx_usecs = usecs;
    p.rx_frames = frames;
    return p;
}

}  // namespace

TEST_CASE("interrupt_coalescer: rx-frames fires first", "[nic][irq]") {
    interrupt_coalescer c(fixed(16 * PS_PER_US, 4));
    CHECK(c.interrupt_enabled());
    // The first completion starts the 16-us window; the fourth reaches rx-frames at 3 us.
    auto d = c.on_completion(0, 1500);
    CHECK_FALSE(d.fire);
    CHECK(d.deadline == 16 * PS_PER_US);
    CHECK_FALSE(c.on_completion(1 * PS_PER_US, 1500).fire);
    d = c.on_completion(2 * PS_PER_US, 1500);
    CHECK_FALSE(d.fire);
    CHECK(d.deadline == 16 * PS_PER_US);  // later completions do not move it
    d = c.on_completion(3 * PS_PER_US, 1500);
    CHECK(d.fire);
    CHECK(d.deadline == NEVER);
    CHECK_FALSE(c.interrupt_enabled());
    CHECK(c.pending() == 0);
    // The timer armed for 16 us is stale now.
    CHECK_FALSE(c.on_timer(16 * PS_PER_US));
    CHECK(c.stats().interrupts == 1);
    CHECK(c.stats().by_frames == 1);
    CHECK(c.stats().by_timer == 0);
    CHECK(c.stats().frames_signalled == 4);
    CHECK(c.stats().max_frames == 4);
    CHECK(c.stats().frames_hist[2] == 1);  // [4, 8)
    CHECK(c.stats().bytes == 6000);
}

TEST_CASE("interrupt_coalescer: rx-usecs fires first", "[nic][irq]") {
    interrupt_coalescer c(fixed(8 * PS_PER_US, 32));
    CHECK(c.on_completion(1 * PS_PER_US).deadline == 9 * PS_PER_US);
    CHECK(c.on_completion(2 * PS_PER_US).deadline == 9 * PS_PER_US);
    CHECK(c.on_completion(5 * PS_PER_US).deadline == 9 * PS_PER_US);
    CHECK_FALSE(c.on_timer(8 * PS_PER_US));  // early: nothing
    CHECK(c.on_timer(9 * PS_PER_US));
    CHECK_FALSE(c.interrupt_enabled());
    CHECK(c.deadline() == NEVER);
    CHECK_FALSE(c.on_timer(9 * PS_PER_US));  // a second expiry is stale
    // After the host's poll the next window starts at the next completion, not at the unmask.
    CHECK(c.unmask(10 * PS_PER_US).deadline == NEVER);
    CHECK(c.on_completion(15 * PS_PER_US).deadline == 23 * PS_PER_US);
    CHECK(c.on_timer(23 * PS_PER_US));
    CHECK(c.stats().interrupts == 2);
    CHECK(c.stats().by_timer == 2);
    CHECK(c.stats().frames_signalled == 4);
    CHECK(c.stats().mean_frames() == 2.0);
    CHECK(c.stats().max_frames == 3);
    CHECK(c.stats().frames_hist[0] == 1);  // 1 frame
    CHECK(c.stats().frames_hist[1] == 1);  // 3 frames: [2, 4)
}

TEST_CASE("interrupt_coalescer: masking during poll", "[nic][irq]") {
    interrupt_coalescer c(fixed(10 * PS_PER_US, 3));
    c.on_completion(0);
    c.on_completion(1 * PS_PER_US);
    CHECK(c.on_completion(2 * PS_PER_US).fire);
    // The host polls: completions are counted but arm no timer and fire nothing.
    for (ps_t t = 3; t <= 9; ++t) {
        const auto d = c.on_completion(t * PS_PER_US);
        CHECK_FALSE(d.fire);
        CHECK(d.deadline == NEVER);
    }
    CHECK(c.pending() == 0);
    CHECK(c.stats().completions == 10);
    CHECK(c.stats().completions_masked == 7);
    CHECK(c.stats().interrupts == 1);

    SECTION("unmask with an empty ring: the next completion opens the window") {
        CHECK(c.unmask(20 * PS_PER_US).deadline == NEVER);
        CHECK(c.interrupt_enabled());
        CHECK(c.on_completion(21 * PS_PER_US).deadline == 31 * PS_PER_US);
    }
    SECTION("unmask with frames left in the ring opens the window at the unmask") {
        const auto d = c.unmask(20 * PS_PER_US, 2);
        CHECK_FALSE(d.fire);
        CHECK(d.deadline == 30 * PS_PER_US);
        CHECK(c.on_completion(22 * PS_PER_US).fire);  // 2 + 1 = rx-frames
    }
    SECTION("unmask with rx-frames already waiting fires at once") {
        const auto d = c.unmask(20 * PS_PER_US, 5);
        CHECK(d.fire);
        CHECK_FALSE(c.interrupt_enabled());
        CHECK(c.stats().frames_signalled == 3 + 5);
    }
    SECTION("an explicit mask cancels the pending window") {
        c.unmask(20 * PS_PER_US);
        CHECK(c.on_completion(21 * PS_PER_US).deadline == 31 * PS_PER_US);
        c.mask();
        CHECK(c.deadline() == NEVER);
        CHECK_FALSE(c.on_timer(31 * PS_PER_US));
        CHECK(c.stats().interrupts == 1);
    }
}

TEST_CASE("interrupt_coalescer: both criteria off", "[nic][irq]") {
    SECTION("rx-usecs 0 and rx-frames 0: an interrupt per completion") {
        interrupt_coalescer c(fixed(0, 0));
        const auto d = c.on_completion(5);
        CHECK(d.fire);
        CHECK(d.deadline == NEVER);
        c.unmask(6);
        CHECK(c.on_completion(7).fire);
        CHECK(c.stats().immediate == 2);
        CHECK(c.stats().by_frames == 0);
        CHECK(c.stats().max_frames == 1);
    }
    SECTION("rx-usecs 0 and rx-frames 1: the same, Linux drivers' coalescing off") {
        interrupt_coalescer c(fixed(0, 1));
        CHECK(c.on_completion(5).fire);
        CHECK(c.stats().by_frames == 1);
    }
    SECTION("rx-usecs 0 alone: count only, a short tail waits") {
        interrupt_coalescer c(fixed(0, 3));
        CHECK(c.on_completion(1).deadline == NEVER);
        CHECK_FALSE(c.on_completion(1 * PS_PER_S).fire);
        CHECK(c.on_completion(2 * PS_PER_S).fire);
    }
    SECTION("rx-frames 0 alone: timer only") {
        interrupt_coalescer c(fixed(3 * PS_PER_US, 0));
        for (ps_t t = 0; t < 1000; ++t) CHECK_FALSE(c.on_completion(t).fire);
        CHECK(c.deadline() == 3 * PS_PER_US);
        CHECK(c.on_timer(3 * PS_PER_US));
        CHECK(c.stats().max_frames == 1000);
        CHECK(c.stats().frames_hist[9] == 1);  // >= 512
    }
}

TEST_CASE("interrupt_coalescer: validate names the field", "[nic][irq]") {
    CHECK_FALSE(coalesce_params{}.validate());
    auto field = [](coalesce_params p) { return p.validate().value().field; };
    coalesce_params p;
    p.rx_usecs = 65536 * PS_PER_US;
    CHECK(field(p) == "rx_usecs");
    p = coalesce_params{};
    p.rx_usecs = 1500 * PS_PER_NS;
    CHECK(field(p) == "rx_usecs");
    p = coalesce_params{};
    p.rx_frames = 65536;
    CHECK(field(p) == "rx_frames");
    p = coalesce_params{};
    p.profiles[2].usecs = 7 * PS_PER_NS;
    CHECK(field(p) == "profiles[2].usecs");
    p = coalesce_params{};
    p.profiles[4].frames = 70000;
    CHECK(field(p) == "profiles[4].frames");
    p = coalesce_params{};
    p.start_profile = 5;
    CHECK(field(p) == "start_profile");
    p = coalesce_params{};
    p.dim_events = 0;
    CHECK(field(p) == "dim_events");
    p = coalesce_params{};
    p.rx_frames = 70000;
    CHECK_THROWS_WITH(interrupt_coalescer(p), "coalesce_params.rx_frames: must be <= 65535");
}

TEST_CASE("net_dim: stats comparison order and the 10 percent rule", "[nic][irq][dim]") {
    using r = net_dim::rates;
    using c = net_dim::compare_result;
    // Bytes first: +11 % is better, +10 % is not significant.
    CHECK(net_dim::compare(r{100, 1110, 50}, r{100, 1000, 50}) == c::BETTER);
    CHECK(net_dim::compare(r{100, 1100, 50}, r{100, 1000, 50}) == c::SAME);
    CHECK(net_dim::compare(r{100, 889, 50}, r{100, 1000, 50}) == c::WORSE);
    // Then packets, then interrupts (fewer is better).
    CHECK(net_dim::compare(r{120, 1000, 50}, r{100, 1000, 50}) == c::BETTER);
    CHECK(net_dim::compare(r{100, 1000, 40}, r{100, 1000, 50}) == c::BETTER);
    CHECK(net_dim::compare(r{100, 1000, 60}, r{100, 1000, 50}) == c::WORSE);
    // A zero reference: any traffic is better, none is the same.
    CHECK(net_dim::compare(r{1, 1, 1}, r{}) == c::BETTER);
    CHECK(net_dim::compare(r{}, r{}) == c::SAME);
}

namespace {

/// Drives a coalescer with periodic 1500-B completions and a host that polls in no time (it
/// unmasks at the interrupt), and records net_dim's decisions.
struct dim_bench {
    interrupt_coalescer c;
    ps_t t = 0;                      ///< next arrival
    std::vector<unsigned> profiles;  ///< profile after each decision
    std::vector<net_dim::rates> rates;
    std::vector<ps_t> times;

    explicit dim_bench(const coalesce_params& p) : c(p) {}

    void interrupt(ps_t at) {
        c.unmask(at);
        if (c.dim().decisions() > profiles.size()) {
            profiles.push_back(c.profile());
            rates.push_back(c.dim().last_rates());
            times.push_back(at);
        }
    }
    /// Completions every `spacing` until `decisions` decisions have been taken.
    void run(ps_t spacing, std::size_t decisions) {
        while (profiles.size() < decisions) {
            if (c.deadline() < t) {  // a timer strictly before the arrival runs first
                const ps_t d = c.deadline();
                REQUIRE(c.on_timer(d));
                interrupt(d);
                continue;
            }
            if (c.on_completion(t, 1500).fire) interrupt(t);
            t += spacing;
        }
    }
};

}  // namespace

TEST_CASE(
    "interrupt_coalescer: adaptive steps the profile up at a high rate and down when it drops",
    "[nic][irq][dim]") {
    coalesce_params p;
    p.adaptive = true;
    dim_bench b(p);
    CHECK(b.c.profile() == 1);
    CHECK(b.c.moderation().usecs == 8 * PS_PER_US);
    CHECK(b.c.moderation().frames == 128);

    // 1500 B every 1.2304 us (10G line rate). Packets per interrupt and interrupt period per
    // profile (the timer always fires first): {2us}: 2, 2.4608 us; {8us}: 7, 8.6128 us;
    // {16us}: 14, 17.2256 us; {32us}: 27, 33.2208 us; {64us}: 53, 65.2112 us. A measurement
    // spans 64 interrupts: profile 1: 551 us (truncated), 448 packets -> ppms 814,
    // bpms ceil(672e6 / 551) = 1219601, epms ceil(64000 / 551) = 117.
    const ps_t fast = 1'230'400;
    b.run(fast, 8);
    // 1: parked at index 0 with no reference, any traffic is better: exit to the right (0->1).
    // 2: same rates: turn left (1->0). 3: 2-us profile, 408 interrupts/ms, worse: turn right
    // (0->1). 4..6: fewer interrupts each time, better: 1->2->3->4. 7: better, but index 4 is
    // the edge: park on top. 8: same rates: stay parked.
    CHECK(b.profiles == std::vector<unsigned>{1, 0, 1, 2, 3, 4, 4, 4});
    CHECK(b.rates[0] == net_dim::rates{814, 1219601, 117});
    CHECK(b.rates[1] == net_dim::rates{814, 1219601, 117});
    CHECK(b.rates[2] == net_dim::rates{816, 1222930, 408});  // 157 us, 128 packets
    CHECK(b.rates[3] == net_dim::rates{814, 1219601, 117});
    CHECK(b.rates[4] == net_dim::rates{814, 1219601, 59});  // 1102 us, 896 packets
    CHECK(b.rates[5] == net_dim::rates{813, 1219191, 31});  // 2126 us, 1728 packets
    CHECK(b.rates[6] == net_dim::rates{813, 1219267, 16});  // 4173 us, 3392 packets
    CHECK(b.rates[7] == net_dim::rates{813, 1219267, 16});
    CHECK(b.c.dim().state() == net_dim::tune_state::PARKING_ON_TOP);
    CHECK(b.c.moderation().usecs == 64 * PS_PER_US);
    CHECK(b.c.moderation().frames == 64);
    // First decision after 65 interrupts: 8 us + 64 x 8.6128 us.
    CHECK(b.times[0] == 559'219'200);

    // The rate drops tenfold (every 12.304 us), starting right after decision 8.
    b.t = b.times[7] + 12'304'000;
    b.run(12'304'000, 11);
    // 9: throughput fell by far more than 10 %: leave the top going left (4->3).
    // 10: same bytes and packets but twice the interrupts: worse, turn right (3->4).
    // 11: fewer interrupts, better, at the edge: park on top again. With open-loop traffic the
    // throughput does not depend on the moderation, so net_dim settles where it interrupts
    // least; it stays lower only if the lower profile raises throughput.
    CHECK(b.profiles == std::vector<unsigned>{1, 0, 1, 2, 3, 4, 4, 4, 3, 4, 4});
    CHECK(b.rates[8] == net_dim::rates{82, 121854, 14});   // 4727 us, 384 packets
    CHECK(b.rates[9] == net_dim::rates{82, 121931, 28});   // {32us}: 3 per interrupt, 2362 us
    CHECK(b.rates[10] == net_dim::rates{82, 121931, 14});  // {64us}: 6 per interrupt, 4724 us
    CHECK(b.c.dim().state() == net_dim::tune_state::PARKING_ON_TOP);
    // Applied changes: 1->0->1->2->3->4, 4->3->4 (the first decision kept profile 1).
    CHECK(b.c.stats().profile_changes == 7);
}

TEST_CASE("net_dim: constant traffic walks 1-0-1-0 until tired, parks, then leaves",
          "[nic][irq][dim]") {
    // Samples every 1 ms with identical rates, one interrupt per sample (DIM_NEVENTS = 1 here),
    // and a sample at every NAPI completion as mlx5 takes them.
    net_dim d(1);
    std::uint64_t n = 0;
    std::vector<unsigned> after;
    std::vector<net_dim::tune_state> states;
    while (after.size() < 21) {
        ++n;
        const std::uint64_t before = d.decisions();
        d.on_sample(n * PS_PER_MS, n, 10 * n, 15000 * n);
        if (d.decisions() > before) {
            after.push_back(d.profile());
            states.push_back(d.state());
        }
    }
    // 1: no reference yet, better: leave the parking going right (0->1). 2..10: the same rates,
    // never better: turn and step every time, 1->0->1..., one step of "tiredness" each.
    // 11: tired = 10: no step, park tired. 12..21: count down; at 0 leave going right (0->1).
    CHECK(after == std::vector<unsigned>{1, 0, 1, 0, 1, 0, 1, 0, 1, 0,  //
                                         0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1});
    CHECK(states[9] == net_dim::tune_state::GOING_LEFT);
    CHECK(states[10] == net_dim::tune_state::PARKING_TIRED);
    CHECK(states[19] == net_dim::tune_state::PARKING_TIRED);
    CHECK(states[20] == net_dim::tune_state::GOING_RIGHT);
    CHECK(d.tired() == 1);
    CHECK(d.last_rates() == net_dim::rates{10, 15000, 1});
}
