#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "fabricsim/switch/algo/aqm.h"

using namespace fabricsim;
using namespace fabricsim::sw;

namespace {

constexpr std::uint64_t GBPS = 1'000'000'000;

double just_above(double x) {
    return std::nextafter(x, std::numeric_limits<double>::infinity());
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// RED / step marking

TEST_CASE("red_probability: linear RED below, at and above the thresholds", "[aqm][red]") {
    const red_params p{10, 30, 0.2, 1.0};
    CHECK(red_probability(p, 0) == 0.0);
    CHECK(red_probability(p, 5) == 0.0);
    CHECK(red_probability(p, 10) == 0.0);  // at min_th: not above it
    CHECK(red_probability(p, 15) == Approx(0.05));
    CHECK(red_probability(p, 20) == Approx(0.1));  // midpoint: max_p / 2
    CHECK(red_probability(p, 30) == Approx(0.2));  // at max_th: max_p
    CHECK(red_probability(p, just_above(30)) == 1.0);
    CHECK(red_probability(p, 1e9) == 1.0);
}

TEST_CASE("red_probability: DCTCP step marks iff avg > K, max_p ignored", "[aqm][red][dctcp]") {
    const red_params k{20, 20, 0.3, 1.0};
    CHECK(red_probability(k, 19) == 0.0);
    CHECK(red_probability(k, 20) == 0.0);  // avg == K: not marked (strict >)
    CHECK(red_probability(k, just_above(20)) == 1.0);
    CHECK(red_probability(k, 21) == 1.0);  // 1, not max_p
    const red_params zero{0, 0, 1.0, 1.0};
    CHECK(red_probability(zero, 0) == 0.0);
    CHECK(red_probability(zero, 1) == 1.0);
}

TEST_CASE("red_probability: scale multiplies both thresholds", "[aqm][red]") {
    const red_params p{10, 30, 0.2, 1.0};  // scale 0.5 -> 5 .. 15
    CHECK(red_probability(p, 5, 0.5) == 0.0);
    CHECK(red_probability(p, 10, 0.5) == Approx(0.1));
    CHECK(red_probability(p, 15, 0.5) == Approx(0.2));
    CHECK(red_probability(p, 15.5, 0.5) == 1.0);
    CHECK(red_probability(p, 15.5) == Approx(0.055));  // unscaled: 0.2·5.5/20
    const red_params k{20, 20, 1.0, 1.0};              // step K 20 -> 10
    CHECK(red_probability(k, 10, 0.5) == 0.0);
    CHECK(red_probability(k, 10.5, 0.5) == 1.0);
    CHECK(red_probability(k, 10.5) == 0.0);
}

TEST_CASE("validate(red_params) rejects bad thresholds, max_p and weight", "[aqm][red]") {
    CHECK_NOTHROW(validate(red_params{}));
    CHECK_NOTHROW(validate(red_params{10, 10, 1.0, 1.0}));
    CHECK_NOTHROW(validate(red_params{0, 30, 0.01, 0.002}));
    CHECK_THROWS_AS(validate(red_params{-1, 10, 0.1, 1.0}), std::invalid_argument);
    CHECK_THROWS_AS(validate(red_params{20, 10, 0.1, 1.0}), std::invalid_argument);
    CHECK_THROWS_AS(validate(red_params{10, 20, 0.0, 1.0}), std::invalid_argument);
    CHECK_THROWS_AS(validate(red_params{10, 20, 1.5, 1.0}), std::invalid_argument);
    CHECK_THROWS_AS(validate(red_params{10, 20, 0.1, 0.0}), std::invalid_argument);
    CHECK_THROWS_AS(validate(red_params{10, 20, 0.1, 1.01}), std::invalid_argument);
    CHECK_THROWS_AS(validate(red_params{std::nan(""), 20, 0.1, 1.0}), std::invalid_argument);
}

TEST_CASE("red_average: weight 1 is the instantaneous queue", "[aqm][red]") {
    red_average a;
    CHECK(a.value() == 0.0);
    CHECK(a.update(7) == 7.0);
    CHECK(a.update(3) == 3.0);
    CHECK(a.update(1e6 + 0.1) == 1e6 + 0.1);
    CHECK(a.value() == 1e6 + 0.1);
}

TEST_CASE("red_average: weight 0.5 EWMA worked by hand", "[aqm][red]") {
    red_average a(0.5);
    CHECK(a.update(10) == Approx(5.0));   // 0.5·0 + 0.5·10
    CHECK(a.update(20) == Approx(12.5));  // 0.5·5 + 0.5·20
    CHECK(a.update(0) == Approx(6.25));   // 0.5·12.5 + 0
    CHECK(a.update(6.25) == Approx(6.25));
    CHECK(a.value() == Approx(6.25));
    CHECK_THROWS_AS(red_average(0.0), std::invalid_argument);
    CHECK_THROWS_AS(red_average(1.5), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// MQ-ECN

TEST_CASE("MQ-ECN: T_round EWMA and clamped scale worked by hand", "[aqm][mqecn]") {
    // 1 Gbps, quantum 1500 B -> one quantum takes 12 us; β 0.75; samples 24 us each.
    mq_ecn_estimator e({1500, 3000}, GBPS, 0.75, 12 * PS_PER_US);
    mq_ecn_estimator::queue_slot q0;
    CHECK(e.t_round_ps() == 0.0);
    CHECK(e.scale(0) == 1.0);  // T_round 0: standard threshold
    e.queue_activated(0, 0, q0);
    e.queue_finished_round(0, 24 * PS_PER_US, q0);  // 0.75·0 + 0.25·24 = 6 us
    CHECK(e.t_round_ps() == Approx(6.0 * PS_PER_US));
    CHECK(e.scale(0) == 1.0);                       // 12/6 = 2, clamped
    e.queue_finished_round(0, 48 * PS_PER_US, q0);  // 0.75·6 + 0.25·24 = 10.5 us
    CHECK(e.t_round_ps() == Approx(10.5 * PS_PER_US));
    CHECK(e.scale(0) == 1.0);                       // 12/10.5 = 1.143, clamped
    e.queue_finished_round(0, 72 * PS_PER_US, q0);  // 0.75·10.5 + 0.25·24 = 13.875 us
    CHECK(e.t_round_ps() == Approx(13.875 * PS_PER_US));
    CHECK(e.scale(0) == Approx(32.0 / 37.0));  // 12/13.875 = 0.8649, not clamped
    CHECK(e.scale(1) == 1.0);                  // 24/13.875, clamped
    CHECK(e.samples() == 3);
    CHECK(q0.t_start == 72 * PS_PER_US);
}

namespace {

/// N always-backlogged queues served round robin (DWRR order 0..N-1), each for quantum_q·8/C;
/// each queue finishes its round when its service ends. All activate at t = 0.
void run_backlogged_rounds(mq_ecn_estimator& e, const std::vector<std::uint32_t>& quanta,
                           std::uint64_t rate_bps, unsigned rounds) {
    std::vector<mq_ecn_estimator::queue_slot> slot(quanta.size());
    for (unsigned q = 0; q < quanta.size(); ++q) e.queue_activated(q, 0, slot[q]);
    ps_t t = 0;
    for (unsigned r = 0; r < rounds; ++r)
        for (unsigned q = 0; q < quanta.size(); ++q) {
            t += serialization_ps(quanta[q], rate_bps);
            e.queue_finished_round(q, t, slot[q]);
        }
}

}  // namespace

TEST_CASE("MQ-ECN O11: N equal backlogged queues give T_round = N·quantum/C and K_i = K_std/N",
          "[aqm][mqecn][oracle]") {
    const double k_std = 32000;  // testbed: 1 Gbps, 32 KB
    const red_params step{k_std, k_std, 1.0, 1.0};
    for (unsigned n : {1u, 2u, 4u}) {
        CAPTURE(n);
        const std::vector<std::uint32_t> quanta(n, 1500);
        mq_ecn_estimator e(quanta, GBPS, 0.75, 12 * PS_PER_US);
        run_backlogged_rounds(e, quanta, GBPS, 200);
        CHECK(e.samples() == 200u * n);
        CHECK(e.t_round_ps() == Approx(n * 12.0 * PS_PER_US).epsilon(0.01));
        for (unsigned q = 0; q < n; ++q) {
            CHECK(e.scale(q) == Approx(1.0 / n).epsilon(0.01));
            const double k_i = k_std / n;
            CHECK(red_probability(step, k_i - 100, e.scale(q)) == 0.0);
            CHECK(red_probability(step, k_i + 100, e.scale(q)) == 1.0);
        }
    }
}

TEST_CASE("MQ-ECN O11: unequal quanta give K_i = K_std·Q_i/sum(Q)", "[aqm][mqecn][oracle]") {
    const std::vector<std::uint32_t> quanta{1500, 3000};  // round = 12 + 24 = 36 us
    mq_ecn_estimator e(quanta, GBPS, 0.75, 12 * PS_PER_US);
    run_backlogged_rounds(e, quanta, GBPS, 200);
    CHECK(e.t_round_ps() == Approx(36.0 * PS_PER_US).epsilon(0.01));
    CHECK(e.scale(0) == Approx(1.0 / 3).epsilon(0.01));
    CHECK(e.scale(1) == Approx(2.0 / 3).epsilon(0.01));
    CHECK(e.scale(0) + e.scale(1) == Approx(1.0).epsilon(0.01));
}

TEST_CASE("MQ-ECN: idle decay by beta^floor(idle/T_idle), applied lazily in port_busy",
          "[aqm][mqecn]") {
    const ps_t t_idle = 12 * PS_PER_US;
    auto make = [&] {
        mq_ecn_estimator e({1500}, GBPS, 0.75, t_idle);
        mq_ecn_estimator::queue_slot q0;
        e.queue_activated(0, 0, q0);
        e.queue_finished_round(0, 24 * PS_PER_US, q0);  // T_round = 6 us
        REQUIRE(e.t_round_ps() == Approx(6.0 * PS_PER_US));
        return e;
    };
    const ps_t t0 = 24 * PS_PER_US;

    SECTION("idle 2.5·T_idle -> β²") {
        auto e = make();
        e.port_idle(t0);
        CHECK(e.idle());
        CHECK(e.t_round_ps() == Approx(6.0 * PS_PER_US));  // lazy: nothing yet
        e.port_busy(t0 + 5 * t_idle / 2);
        CHECK_FALSE(e.idle());
        CHECK(e.t_round_ps() == Approx(6.0 * 0.5625 * PS_PER_US));  // 3.375 us
        e.port_busy(t0 + 100 * t_idle);  // busy again without port_idle: no second decay
        CHECK(e.t_round_ps() == Approx(3.375 * PS_PER_US));
    }
    SECTION("busy again within T_idle: no decay; exactly T_idle: one β") {
        auto e = make();
        e.port_idle(t0);
        e.port_busy(t0 + t_idle - 1);
        CHECK(e.t_round_ps() == Approx(6.0 * PS_PER_US));
        e.port_idle(t0 + t_idle);
        e.port_busy(t0 + 2 * t_idle);
        CHECK(e.t_round_ps() == Approx(4.5 * PS_PER_US));
    }
    SECTION("port_busy without a prior port_idle: no decay") {
        auto e = make();
        e.port_busy(t0 + 1000 * t_idle);
        CHECK(e.t_round_ps() == Approx(6.0 * PS_PER_US));
    }
    SECTION("very long idle decays to (almost) 0: standard threshold") {
        auto e = make();
        e.port_idle(t0);
        e.port_busy(t0 + 1'000'000 * t_idle);
        CHECK(e.t_round_ps() < 1.0);
        CHECK(e.scale(0) == 1.0);
    }
}

TEST_CASE("MQ-ECN: T_start = max(now, T_start) on activation", "[aqm][mqecn]") {
    mq_ecn_estimator e({1500}, GBPS, 0.5, 12 * PS_PER_US);
    mq_ecn_estimator::queue_slot q0;
    e.queue_activated(0, 0, q0);
    e.queue_finished_round(0, 12 * PS_PER_US, q0);  // sample 12 -> T_round 6 us
    CHECK(e.t_round_ps() == Approx(6.0 * PS_PER_US));

    // First activation after a long gap: the gap is not a sample.
    e.queue_activated(0, 1000 * PS_PER_US, q0);
    CHECK(q0.t_start == 1000 * PS_PER_US);
    e.queue_finished_round(0, 1012 * PS_PER_US, q0);  // sample 12 -> 0.5·6 + 0.5·12 = 9 us
    CHECK(e.t_round_ps() == Approx(9.0 * PS_PER_US));

    // T_start ahead of `now` (caller's `at` included the last frame's tx time) is kept.
    e.queue_activated(0, 1011 * PS_PER_US, q0);
    CHECK(q0.t_start == 1012 * PS_PER_US);
    e.queue_finished_round(0, 1024 * PS_PER_US, q0);  // sample 12 -> 10.5 us
    CHECK(e.t_round_ps() == Approx(10.5 * PS_PER_US));

    // A report earlier than T_start counts as a zero sample (no unsigned wrap-around).
    e.queue_finished_round(0, 1020 * PS_PER_US, q0);
    CHECK(e.t_round_ps() == Approx(5.25 * PS_PER_US));
    CHECK(e.samples() == 4);
}

TEST_CASE("MQ-ECN: constructor validation", "[aqm][mqecn]") {
    const ps_t ti = 12 * PS_PER_US;
    CHECK_NOTHROW(mq_ecn_estimator({1500, 0}, GBPS, 0.75, ti));
    CHECK_THROWS_AS(mq_ecn_estimator({}, GBPS, 0.75, ti), std::invalid_argument);
    CHECK_THROWS_AS(mq_ecn_estimator({1500}, 0, 0.75, ti), std::invalid_argument);
    CHECK_THROWS_AS(mq_ecn_estimator({1500}, GBPS, 0.0, ti), std::invalid_argument);
    CHECK_THROWS_AS(mq_ecn_estimator({1500}, GBPS, 1.0, ti), std::invalid_argument);
    CHECK_THROWS_AS(mq_ecn_estimator({1500}, GBPS, 0.75, 0), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// HULL phantom queue (1 Gbps, γ 0.95, 800 ns ticks -> 95 B per tick)

TEST_CASE("phantom queue: counter worked by hand with HULL numbers", "[aqm][hull]") {
    const ps_t tick = 800 * PS_PER_NS;
    phantom_queue pq(GBPS, 0.95, tick, 3000);
    CHECK(pq.drain_per_tick_bytes() == Approx(95.0));
    CHECK_FALSE(pq.on_frame(1500, 0));  // 1500
    CHECK(pq.counter_bytes(0) == Approx(1500));
    CHECK(pq.counter_bytes(tick) == Approx(1405));
    CHECK_FALSE(pq.on_frame(1500, 2 * tick));  // ticks 0.8, 1.6 us: 1500 - 190 + 1500 = 2810
    CHECK(pq.counter_bytes(2 * tick) == Approx(2810));
    CHECK_FALSE(pq.on_frame(
        1500, 2 * PS_PER_US));  // no tick in (1.6, 2.0]: meets 2810 <= 3000, leaves 4310
    CHECK(pq.counter_bytes(3 * tick - 1) == Approx(4310));
    CHECK(pq.counter_bytes(3 * tick) == Approx(4215));
    CHECK(pq.counter_bytes(100 * PS_PER_US) == 0.0);  // const look-ahead: 123 ticks drain it
    CHECK(pq.on_frame(1500, 3 * tick));  // meets 4215 > 3000 (look-ahead changed nothing)
    CHECK(pq.counter_bytes(3 * tick) == Approx(5715));
    CHECK(pq.frames() == 4);
    CHECK(pq.marked() == 1);
}

TEST_CASE("phantom queue: ticks at whole multiples of the interval from t = 0", "[aqm][hull]") {
    const ps_t tick = 800 * PS_PER_NS;
    phantom_queue a(GBPS, 0.95, tick, 1'000'000);
    a.on_frame(1500, 700 * PS_PER_NS);
    a.on_frame(1500, 900 * PS_PER_NS);  // tick at 800 ns lies between: 1405 + 1500
    CHECK(a.counter_bytes(900 * PS_PER_NS) == Approx(2905));

    phantom_queue b(GBPS, 0.95, tick, 1'000'000);
    b.on_frame(1500, 0);
    b.on_frame(1500, tick - 1);  // just before the boundary: no drain
    CHECK(b.counter_bytes(tick - 1) == Approx(3000));

    phantom_queue c(GBPS, 0.95, tick, 1'000'000);
    c.on_frame(1500, 0);
    c.on_frame(1500, tick);  // boundary belongs to (last, now]
    CHECK(c.counter_bytes(tick) == Approx(2905));

    phantom_queue d(GBPS, 0.95, tick, 1'000'000);  // two frames in one tick slot, then a boundary
    d.on_frame(100, 2 * tick + 1);
    d.on_frame(100, 3 * tick - 1);
    d.on_frame(100, 3 * tick);
    CHECK(d.counter_bytes(3 * tick) == Approx(205));
}

TEST_CASE("phantom queue: floors at 0 and is never negative", "[aqm][hull]") {
    const ps_t tick = 800 * PS_PER_NS;
    phantom_queue pq(GBPS, 0.95, tick, 1'000'000);
    pq.on_frame(100, 0);
    pq.on_frame(100, 10 * tick);  // 950 B of drain on 100 B: floor, then + 100
    CHECK(pq.counter_bytes(10 * tick) == Approx(100));

    // Irregular sizes and gaps (fixed LCG sequence).
    std::uint32_t x = 12345;
    ps_t t = 0;
    for (int i = 0; i < 20000; ++i) {
        x = x * 1664525u + 1013904223u;
        t += (x >> 8) % (20 * tick);
        const std::uint32_t bytes = 64 + (x >> 4) % 1455;
        pq.on_frame(bytes, t);
        const double c = pq.counter_bytes(t);
        REQUIRE(c >= bytes);
        REQUIRE(pq.counter_bytes(t + (x % (50 * tick))) >= 0.0);
    }
}

TEST_CASE("phantom queue: load below gamma·C never marks, load above does", "[aqm][hull]") {
    const ps_t tick = 800 * PS_PER_NS;
    SECTION("1500 B every 12.8 us = 0.9375 Gbps < 0.95 Gbps") {
        phantom_queue pq(GBPS, 0.95, tick, 3000);
        for (int i = 0; i < 10000; ++i) {
            const ps_t t = static_cast<ps_t>(i) * 12'800 * PS_PER_NS;  // 16 ticks: 1520 B drained
            pq.on_frame(1500, t);
            REQUIRE(pq.counter_bytes(t) == Approx(1500));
        }
        CHECK(pq.frames() == 10000);
        CHECK(pq.marked() == 0);
    }
    SECTION("1500 B every 12.0 us = 1 Gbps > 0.95 Gbps") {
        phantom_queue pq(GBPS, 0.95, tick, 3000);
        std::uint64_t marked_after_warmup = 0;
        for (int i = 0; i < 10000; ++i) {
            const ps_t t = static_cast<ps_t>(i) * 12 * PS_PER_US;  // 15 ticks: 1425 B, net +75 B
            const bool m = pq.on_frame(1500, t);
            if (i >= 1000 && m) ++marked_after_warmup;
        }
        // Frame k meets 1500 + 75(k-1) - 1425 = 75k, marked iff 75k > 3000, i.e. k >= 41.
        CHECK(pq.counter_bytes(9999 * 12 * PS_PER_US) == Approx(1500 + 75 * 9999));
        CHECK(pq.marked() == 10000 - 41);
        CHECK(marked_after_warmup == 9000);
    }
}

TEST_CASE("phantom queue: constructor validation", "[aqm][hull]") {
    const ps_t tick = 800 * PS_PER_NS;
    CHECK_NOTHROW(phantom_queue(GBPS, 1.0, tick, 0));
    CHECK_THROWS_AS(phantom_queue(0, 0.95, tick, 1000), std::invalid_argument);
    CHECK_THROWS_AS(phantom_queue(GBPS, 0.0, tick, 1000), std::invalid_argument);
    CHECK_THROWS_AS(phantom_queue(GBPS, 1.01, tick, 1000), std::invalid_argument);
    CHECK_THROWS_AS(phantom_queue(GBPS, 0.95, 0, 1000), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// Per-queue minimum thresholds

TEST_CASE("min_threshold_scales: W_q / sum of non-strict W, strict queues 1", "[aqm][minth]") {
    const auto s = min_threshold_scales({1500, 3000, 4500, 1500}, {false, false, false, true});
    REQUIRE(s.size() == 4);
    CHECK(s[0] == Approx(1.0 / 6));
    CHECK(s[1] == Approx(2.0 / 6));
    CHECK(s[2] == Approx(3.0 / 6));
    CHECK(s[3] == 1.0);
    // O7 instance: 8 equal queues, K_std 16 pkt -> 2 pkt each.
    const auto e =
        min_threshold_scales(std::vector<std::uint32_t>(8, 1500), std::vector<bool>(8, false));
    for (double v : e) CHECK(16 * v == Approx(2.0));
    CHECK((min_threshold_scales({0, 0}, {true, true}) == std::vector<double>{1.0, 1.0}));
    CHECK_THROWS_AS(min_threshold_scales({1500}, {false, false}), std::invalid_argument);
    CHECK_THROWS_AS(min_threshold_scales({0, 1500}, {false, true}), std::invalid_argument);
}
