// HULL hardware pacer (plain C++): rate estimation step by step, association, bypass, idle
// timeout, the token bucket and FIFO on the rate-limiter bank, presets.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

#include "fabricsim/core/log_histogram.h"
#include "fabricsim/nic/algo/hull_pacer.h"

using namespace fabricsim;
using namespace fabricsim::nic;

namespace {
constexpr ps_t US = PS_PER_US;
constexpr ps_t MS = PS_PER_MS;
constexpr std::uint64_t P_A_LINE = std::uint64_t(1) << 61;  ///< p_a = 1/8 of 2^64
constexpr std::uint64_t MAX_DRAW = ~std::uint64_t(0);

hull_pacer_params at_rate(std::uint64_t initial_bps) {
    hull_pacer_params p = hull_pacer_params::testbed();
    p.initial_rate_bps = initial_bps;
    return p;
}
}  // namespace

TEST_CASE("hull_pacer: presets from the seed validate", "[nic][hull]") {
    const hull_pacer_params t = hull_pacer_params::testbed();
    CHECK(t.line_rate_bps == 1'000'000'000);
    CHECK(t.update_period == 64 * US);
    CHECK(t.eta == 0.125);
    CHECK(t.beta == 16.0);
    CHECK(t.p_a == 0.125);
    CHECK(t.idle_timeout == 10 * MS);
    CHECK(t.table_entries == 64);
    CHECK(t.depth_bytes == 3072);
    CHECK(t.fifo_bytes == 131'072);
    CHECK(t.token_period == 16 * US);
    CHECK(t.rate_granularity_bps == 500'000);
    CHECK(t.initial_rate_bps == 0);
    CHECK_FALSE(t.validate());
    const hull_pacer_params d;  // the defaults are the testbed's
    CHECK(d.update_period == t.update_period);
    CHECK(d.beta == t.beta);
    CHECK(d.depth_bytes == t.depth_bytes);
    CHECK_FALSE(d.validate());

    const hull_pacer_params n = hull_pacer_params::ns2();
    CHECK(n.line_rate_bps == 10'000'000'000);
    CHECK(n.update_period == 7'200'000);
    CHECK(n.eta == 0.125);
    CHECK(n.beta == 375.0);
    CHECK(n.p_a == 0.125);
    CHECK(n.idle_timeout == 1 * MS);
    CHECK(n.token_period == 1'600'000);
    CHECK(n.rate_granularity_bps == 5'000'000);
    CHECK_FALSE(n.validate());
    // Tokens of 1..2000 B at both speeds: the line rate fills 2000 B per period.
    hull_pacer pn(n);
    CHECK(pn.limiter_rate_bps() == 10'000'000'000);
    CHECK(pn.rate_bytes_per_s() == 1.25e9);
    hull_pacer pt(t);
    CHECK(pt.rate_bytes_per_s() == 1.25e8);
    CHECK(pt.next_update() == 64 * US);
}

TEST_CASE("hull_pacer: validate names the bad field", "[nic][hull]") {
    auto field = [](void (*change)(hull_pacer_params&)) {
        hull_pacer_params p = hull_pacer_params::testbed();
        change(p);
        const auto e = p.validate();
        return e ? e->field : std::string("ok");
    };
    CHECK(field([](hull_pacer_params& p) { p.line_rate_bps = 0; }) == "line_rate_bps");
    CHECK(field([](hull_pacer_params& p) { p.update_period = 0; }) == "update_period");
    CHECK(field([](hull_pacer_params& p) { p.eta = 0; }) == "eta");
    CHECK(field([](hull_pacer_params& p) { p.eta = 1.5; }) == "eta");
    CHECK(field([](hull_pacer_params& p) { p.beta = -1; }) == "beta");
    CHECK(field([](hull_pacer_params& p) { p.beta = std::numeric_limits<double>::infinity(); }) ==
          "beta");
    CHECK(field([](hull_pacer_params& p) { p.p_a = 1.5; }) == "p_a");
    CHECK(field([](hull_pacer_params& p) { p.table_full = bank_policy::SHARE; }) == "table_full");
    CHECK(field([](hull_pacer_params& p) { p.fifo_bytes = 0; }) == "fifo_bytes");
    CHECK(field([](hull_pacer_params& p) { p.rate_granularity_bps = 0; }) ==
          "rate_granularity_bps");
    CHECK(field([](hull_pacer_params& p) { p.initial_rate_bps = 1; }) == "initial_rate_bps");
    // 1 Gb/s x 16 us = 2000 B per token: a 1999 B bucket could never reach the line rate.
    CHECK(field([](hull_pacer_params& p) { p.depth_bytes = 1999; }) == "depth_bytes");
    CHECK(field([](hull_pacer_params& p) { p.depth_bytes = 2000; }) == "ok");
    CHECK(field([](hull_pacer_params& p) { p.table_full = bank_policy::LRU; }) == "ok");
    hull_pacer_params bad = hull_pacer_params::testbed();
    bad.eta = 0;
    CHECK_THROWS_WITH(hull_pacer(bad), "hull_pacer_params.eta: must be in (0, 1]");
}

TEST_CASE("hull_pacer: the rate equation over three periods, by hand", "[nic][hull]") {
    // Testbed: R_tb starts at the line rate, 1 Gb/s = 125 000 000 B/s; T_r = 64 us.
    hull_pacer p(hull_pacer_params::testbed());
    CHECK(p.limiter_rate_bps() == 1'000'000'000);

    // Period 1 [0, 64 us): M_r = 6400 B (1e8 B/s), Q_tb = 0.
    p.on_host_bytes(10 * US, 6400);
    CHECK(p.interval_bytes() == 6400);
    p.update(64 * US - 1);
    CHECK(p.stats().updates == 0);
    p.update(64 * US);
    // 0.875 x 125 000 000 + 0.125 x 100 000 000 + 16 x 0 = 109 375 000 + 12 500 000
    CHECK(p.rate_bytes_per_s() == 121'875'000.0);
    CHECK(p.limiter_rate_bps() == 975'000'000);  // 1950 B of tokens per 16 us
    CHECK(p.interval_bytes() == 0);
    CHECK(p.next_update() == 128 * US);

    // Period 2 [64, 128 us): flow 7 is associated and hands over 7500 B in three frames; the
    // first leaves at once (full bucket), 4500 B wait.
    CHECK(p.on_ece_ack(70 * US, 7, 0));
    p.on_host_bytes(70 * US, 7500);
    CHECK(p.on_frame(70 * US, 7, 3000) == pacer_verdict::PACED);
    CHECK(p.on_frame(70 * US, 7, 3000) == pacer_verdict::PACED);
    CHECK(p.on_frame(70 * US, 7, 1500) == pacer_verdict::PACED);
    CHECK(p.backlog_bytes() == 7500);
    CHECK(p.next_departure(70 * US) == 70 * US);
    CHECK(p.depart(70 * US) == 3000);
    // 72 B of tokens left; 2928 more take two ticks of 1950 B: 80 and 96 us.
    CHECK(p.next_departure(70 * US) == 96 * US);
    // The update at 128 us sees M_r = 7500 B (117 187 500 B/s) and Q_tb = 4500 B:
    // 0.875 x 121 875 000 + 0.125 x 117 187 500 + 16 x 4500
    //   = 106 640 625 + 14 648 437.5 + 72 000 = 121 361 062.5 B/s.
    CHECK(p.next_departure(130 * US) == 130 * US);
    CHECK(p.stats().updates == 2);
    CHECK(p.rate_bytes_per_s() == 121'361'062.5);
    CHECK(p.limiter_rate_bps() == 970'500'000);  // 970 888 500 down to 0.5 Mb/s steps
    CHECK(p.depart(130 * US) == 3000);
    CHECK(p.backlog_bytes() == 1500);

    // Period 3 [128, 192 us): nothing from the host, Q_tb = 1500 B at the update:
    // 0.875 x 121 361 062.5 + 0 + 16 x 1500 = 106 190 929.6875 + 24 000.
    p.update(192 * US);
    CHECK(p.rate_bytes_per_s() == 106'214'929.6875);
    CHECK(p.limiter_rate_bps() == 849'500'000);  // 849 719 437.5 -> 849 719 438 -> steps
    const hull_pacer::counters s = p.stats();
    CHECK(s.updates == 3);
    CHECK(s.host_bytes == 13'900);
    CHECK(s.paced_frames == 3);
    CHECK(s.paced_bytes == 7500);
    CHECK(s.departed_frames == 2);
    CHECK(s.delay_sum == 60 * US);
    CHECK(s.delay_max == 60 * US);
    CHECK(s.backlog_peak_bytes == 7500);
    CHECK(s.associated == 1);
    CHECK(s.associations == 1);
}

TEST_CASE("hull_pacer: bytes at the very ps of an update belong to the next interval",
          "[nic][hull]") {
    hull_pacer p(hull_pacer_params::testbed());
    p.on_host_bytes(64 * US, 6400);
    CHECK(p.rate_bytes_per_s() == 109'375'000.0);  // 0.875 x 125 000 000, M_r = 0
    CHECK(p.interval_bytes() == 6400);
    p.update(128 * US);
    CHECK(p.rate_bytes_per_s() == 108'203'125.0);  // 95 703 125 + 12 500 000
}

TEST_CASE("hull_pacer: R_tb is clamped to [granularity, line rate]", "[nic][hull]") {
    SECTION("above the line rate") {
        hull_pacer p(hull_pacer_params::testbed());
        CHECK(p.on_ece_ack(0, 1, 0));
        p.on_host_bytes(1 * US, 8000);  // the line rate for a whole interval
        CHECK(p.on_frame(1 * US, 1, 1500) == pacer_verdict::PACED);
        p.update(64 * US);  // 125 000 000 + 16 x 1500 -> the line rate
        CHECK(p.rate_bytes_per_s() == 125'000'000.0);
        CHECK(p.limiter_rate_bps() == 1'000'000'000);
    }
    SECTION("idle: down to one step of 0.5 Mb/s, the same as period by period") {
        hull_pacer p(hull_pacer_params::testbed());
        hull_pacer q(hull_pacer_params::testbed());
        p.update(1'000'000 * US);
        for (ps_t t = 64 * US; t <= 1'000'000 * US; t += 64 * US) q.update(t);
        CHECK(p.rate_bytes_per_s() == 62'500.0);
        CHECK(p.limiter_rate_bps() == 500'000);
        CHECK(p.stats().updates == 15'625);  // 1 s / 64 us
        CHECK(q.stats().updates == 15'625);
        CHECK(q.rate_bytes_per_s() == p.rate_bytes_per_s());
        CHECK(q.next_update() == p.next_update());
        // Entries idle past T_i are dropped at the skipped updates too.
        CHECK(p.on_ece_ack(1'000'000 * US, 1, 0));
        p.update(1'100'000 * US);
        CHECK(p.stats().associated == 0);
        CHECK(p.stats().timeouts == 1);
    }
}

TEST_CASE("hull_pacer: association with probability p_a, fixed draws", "[nic][hull]") {
    hull_pacer p(hull_pacer_params::testbed());  // p_a = 1/8: draws below 2^61 associate
    CHECK(p.on_ece_ack(1 * US, 1, P_A_LINE - 1));
    CHECK_FALSE(p.on_ece_ack(2 * US, 2, P_A_LINE));
    CHECK(p.on_ece_ack(3 * US, 3, 0));
    CHECK_FALSE(p.on_ece_ack(4 * US, 2, MAX_DRAW));
    CHECK(p.on_ece_ack(5 * US, 2, P_A_LINE / 2));
    CHECK(p.on_ece_ack(6 * US, 1, MAX_DRAW));  // already associated: no draw
    const hull_pacer::counters s = p.stats();
    CHECK(s.ece_acks == 6);
    CHECK(s.draws == 5);
    CHECK(s.associations == 3);
    CHECK(s.associated == 3);
    CHECK(p.associated(7 * US, 2));
    CHECK_FALSE(p.associated(7 * US, 4));

    hull_pacer_params never = hull_pacer_params::testbed();
    never.p_a = 0;
    hull_pacer n(never);
    CHECK_FALSE(n.on_ece_ack(0, 1, 0));
    hull_pacer_params always = hull_pacer_params::testbed();
    always.p_a = 1;
    hull_pacer a(always);
    CHECK(a.on_ece_ack(0, 1, MAX_DRAW));
}

TEST_CASE("hull_pacer: the pacer's own draws are raw std::mt19937_64 output", "[nic][hull]") {
    hull_pacer_params prm = hull_pacer_params::testbed();
    prm.table_entries = 0;  // room for every flow
    hull_pacer p(prm, 42);
    std::mt19937_64 ref(42);
    std::uint64_t expected = 0;
    for (std::uint32_t f = 0; f < 1000; ++f) {
        const bool chosen = ref() < P_A_LINE;
        expected += chosen ? 1 : 0;
        CHECK(p.on_ece_ack(1 * US, f) == chosen);
    }
    CHECK(p.stats().associations == expected);
    CHECK(expected > 100);  // about 1/8 of 1000
    CHECK(expected < 150);
    // ACKs of associated flows draw nothing: the next new flow gets the next output.
    for (std::uint32_t f = 0; f < 1000; ++f)
        if (p.associated(2 * US, f)) CHECK(p.on_ece_ack(2 * US, f));
    CHECK(p.on_ece_ack(3 * US, 5000) == (ref() < P_A_LINE));
    CHECK(p.stats().draws == 1001);
}

TEST_CASE("hull_pacer: frames of flows not associated bypass the pacer", "[nic][hull]") {
    hull_pacer p(hull_pacer_params::testbed());
    CHECK(p.next_departure(0) == hull_pacer::NEVER);
    CHECK(p.on_frame(1 * US, 5, 1500) == pacer_verdict::BYPASS);
    CHECK(p.backlog_bytes() == 0);
    CHECK(p.interval_bytes() == 0);  // M_r is on_host_bytes' alone
    CHECK(p.on_ece_ack(2 * US, 6, 0));
    CHECK(p.on_frame(3 * US, 6, 1000) == pacer_verdict::PACED);
    CHECK(p.on_frame(3 * US, 5, 500) == pacer_verdict::BYPASS);
    CHECK(p.backlog_bytes() == 1000);
    const hull_pacer::counters s = p.stats();
    CHECK(s.bypass_frames == 2);
    CHECK(s.bypass_bytes == 2000);
    CHECK(s.paced_frames == 1);
    CHECK(s.paced_bytes == 1000);
}

TEST_CASE("hull_pacer: an association ends after T_i without a frame", "[nic][hull]") {
    hull_pacer p(hull_pacer_params::testbed());  // T_i = 10 ms
    CHECK(p.on_ece_ack(0, 1, 0));
    CHECK(p.on_frame(1 * MS, 1, 100) == pacer_verdict::PACED);
    p.depart(1 * MS);
    CHECK(p.on_frame(11 * MS - 1, 1, 100) == pacer_verdict::PACED);  // idle 10 ms - 1 ps
    p.depart(11 * MS - 1);
    CHECK(p.on_frame(21 * MS - 1, 1, 100) == pacer_verdict::BYPASS);  // idle 10 ms
    CHECK(p.stats().timeouts == 1);
    CHECK_FALSE(p.on_ece_ack(21 * MS, 1, MAX_DRAW));  // a fresh draw, which fails
    // An idle entry is also dropped at a rate update (40 ms = 625 x 64 us).
    CHECK(p.on_ece_ack(30 * MS, 2, 0));
    p.update(40 * MS - 1);
    CHECK(p.stats().associated == 1);
    p.update(40 * MS);
    CHECK(p.stats().associated == 0);
    CHECK(p.stats().timeouts == 2);
    CHECK(p.stats().peak_associated == 1);
}

TEST_CASE("hull_pacer: a full association table refuses or evicts", "[nic][hull]") {
    hull_pacer_params prm = hull_pacer_params::testbed();
    prm.table_entries = 2;
    SECTION("none") {
        hull_pacer p(prm);
        CHECK(p.on_ece_ack(1 * US, 1, 0));
        CHECK(p.on_ece_ack(2 * US, 2, 0));
        CHECK_FALSE(p.on_ece_ack(3 * US, 3, 0));
        CHECK(p.on_frame(4 * US, 3, 100) == pacer_verdict::BYPASS);
        CHECK(p.stats().rejected_table_full == 1);
        CHECK(p.stats().associations == 2);
    }
    SECTION("lru") {
        prm.table_full = bank_policy::LRU;
        hull_pacer p(prm);
        CHECK(p.on_ece_ack(1 * US, 1, 0));
        CHECK(p.on_ece_ack(2 * US, 2, 0));
        CHECK(p.on_frame(3 * US, 1, 100) == pacer_verdict::PACED);  // flow 2 is now the oldest
        CHECK(p.on_ece_ack(4 * US, 3, 0));
        CHECK_FALSE(p.associated(5 * US, 2));
        CHECK(p.associated(5 * US, 1));
        CHECK(p.stats().evictions == 1);
        CHECK(p.stats().associated == 2);
    }
}

TEST_CASE("hull_pacer: the token bucket paces associated frames at R_tb", "[nic][hull]") {
    hull_pacer p(at_rate(500'000'000));  // 1000 B of tokens every 16 us, 3072 B deep
    CHECK(p.on_ece_ack(0, 1, 0));
    for (int i = 0; i < 5; ++i) REQUIRE(p.on_frame(1 * US, 1, 1000) == pacer_verdict::PACED);
    std::vector<ps_t> out;
    ps_t t = 1 * US;
    while (p.backlog_bytes() != 0) {
        t = p.next_departure(t);
        REQUIRE(t < p.next_update());  // no rate change in between
        out.push_back(t);
        p.depart(t);
    }
    CHECK(out == std::vector<ps_t>{1 * US, 1 * US, 1 * US, 16 * US, 32 * US});
    CHECK(p.stats().delay_sum == 46 * US);
    CHECK(p.stats().delay_max == 31 * US);
    // Delays 0, 0, 0, 15, 31 us: the distribution keeps the zeros exact.
    const log_histogram& d = p.delay_histogram();
    CHECK(d.count() == 5);
    CHECK(d.quantile(0.6) == 0);
    CHECK(d.quantile(0.8) == Approx(15.0 * US).epsilon(0.02));
    CHECK(d.quantile(1.0) == Approx(31.0 * US).epsilon(0.02));
    using octave = std::pair<double, std::uint64_t>;
    CHECK(d.octaves(double(US)) == std::vector<octave>{{0, 3}, {16.0 * US, 1}, {32.0 * US, 1}});
    CHECK(p.next_departure(40 * US) == hull_pacer::NEVER);
}

TEST_CASE("hull_pacer: FIFO overflow counted at the exact byte", "[nic][hull]") {
    hull_pacer p(hull_pacer_params::testbed());  // 128 KB = 131 072 B
    CHECK(p.on_ece_ack(0, 1, 0));
    for (int i = 0; i < 87; ++i) REQUIRE(p.on_frame(1 * US, 1, 1500) == pacer_verdict::PACED);
    CHECK(p.backlog_bytes() == 130'500);
    CHECK(p.on_frame(1 * US, 1, 573) == pacer_verdict::FIFO_FULL);
    CHECK(p.on_frame(1 * US, 1, 572) == pacer_verdict::PACED);
    CHECK(p.on_frame(1 * US, 1, 1) == pacer_verdict::FIFO_FULL);
    const hull_pacer::counters s = p.stats();
    CHECK(s.fifo_full_frames == 2);
    CHECK(s.fifo_full_bytes == 574);
    CHECK(s.paced_frames == 88);
    CHECK(s.backlog_peak_bytes == 131'072);
    CHECK(p.backlog_bytes() == 131'072);
}

TEST_CASE("hull_pacer: fixed point R_tb = M_r / T_r, Q_tb = 0 under a constant input rate",
          "[nic][hull]") {
    // 1000 B every 16 us = 500 Mb/s = 62 500 000 B/s, all of it from one associated flow.
    auto run = [](hull_pacer& p, int frames, bool exact) {
        REQUIRE(p.on_ece_ack(0, 1, 0));
        for (int k = 0; k < frames; ++k) {
            const ps_t t = ps_t(k) * 16 * US + 1 * US;
            REQUIRE(p.backlog_bytes() == 0);
            p.on_host_bytes(t, 1000);
            REQUIRE(p.on_frame(t, 1, 1000) == pacer_verdict::PACED);
            REQUIRE(p.next_departure(t) == t);
            p.depart(t);
            if (exact) REQUIRE(p.rate_bytes_per_s() == 62'500'000.0);
        }
    };
    SECTION("started at the fixed point, it stays there exactly") {
        hull_pacer p(at_rate(500'000'000));
        run(p, 4000, true);
        CHECK(p.stats().updates == 999);
        CHECK(p.limiter_rate_bps() == 500'000'000);
        CHECK(p.stats().delay_max == 0);
    }
    SECTION("started at the line rate, it converges with no backlog") {
        hull_pacer p(hull_pacer_params::testbed());
        run(p, 4000, false);
        CHECK(p.rate_bytes_per_s() == Approx(62'500'000.0).epsilon(1e-12));
        CHECK(p.limiter_rate_bps() == 500'000'000);
        CHECK(p.stats().backlog_peak_bytes == 1000);
        CHECK(p.stats().delay_max == 0);
    }
}
