// QCN reaction point (plain C++): exact rates per CNM, byte-counter and timer event.
#include <catch2/catch.hpp>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "fabricsim/nic/algo/qcn_rp.h"

using namespace fabricsim;
using namespace fabricsim::nic;

namespace {
constexpr std::uint64_t G10 = 10'000'000'000ull;
constexpr ps_t MS = PS_PER_MS;

/// Standard RP at 10G with TR below the line rate: CNM qFb 32 at 0 (CR 7.5G, TR kept 10G),
/// one byte event at 1 ms (FR: CR 8.75G), CNM qFb 32 at 2 ms (TR 8.75G, CR 6.5625G; timer
/// due at 17 ms).
qcn_rp below_line(qcn_rp_params p = qcn_rp_params::standard(G10)) {
    qcn_rp rp(p);
    rp.on_cnm(0, 32);
    rp.on_sent(1 * MS, 150'000);
    rp.on_cnm(2 * MS, 32);
    return rp;
}
}  // namespace

TEST_CASE("qcn rp: a CNM cuts CR by Gd qFb, floored at 50 % and the minimum rate", "[nic][qcn]") {
    qcn_rp rp(qcn_rp_params::standard(G10));
    CHECK(rp.released());
    CHECK(rp.rate_bps() == 10e9);
    CHECK(rp.next_timer() == qcn_rp::NEVER);
    rp.on_sent(0, 1'000'000);  // no byte counting while released
    CHECK(rp.stats().byte_events == 0);
    rp.on_cnm(1 * MS, 32);  // 10G (1 - 32/128) = 7.5G; TR stays 10G (ByteStage 0)
    CHECK(rp.rate_bps() == 7.5e9);
    CHECK(rp.target_bps() == 10e9);
    CHECK(rp.stage() == qcn_stage::FAST_RECOVERY);
    CHECK(rp.next_timer() == 16 * MS);
    CHECK(rp.bytes_to_event() == 150'000);
    rp.on_cnm(2 * MS, 63);  // 7.5G x 65/128 = 3.80859375G
    CHECK(rp.rate_bps() == 3'808'593'750.0);
    rp.on_cnm(3 * MS, 64);  // taken as 63
    CHECK(rp.rate_bps() == 3'808'593'750.0 * 65 / 128);
    CHECK(rp.stats().cnms == 3);
    CHECK(rp.stats().decreases == 3);

    qcn_rp_params p = qcn_rp_params::standard(G10);
    p.gd = 1.0 / 64;  // 63/64 would cut 98 %: rpgMinDecFac keeps 50 %
    qcn_rp rp2(p);
    rp2.on_cnm(0, 63);
    CHECK(rp2.rate_bps() == 5e9);

    qcn_rp rp3(qcn_rp_params::standard(8'000'000));  // 8M x 65/128 < 50 % = 4M < 5M min rate
    rp3.on_cnm(0, 63);
    CHECK(rp3.rate_bps() == 5e6);
    rp3.on_cnm(1 * MS, 0);  // qFb 0 changes no rate, but restarts the cycle
    CHECK(rp3.rate_bps() == 5e6);
    CHECK(rp3.stats().decreases == 1);
}

TEST_CASE("qcn rp thesis: five FR cycles halve the gap to TR, then AI", "[nic][qcn]") {
    const qcn_rp_params p = qcn_rp_params::thesis(G10);
    CHECK(p.byte_counter_only);
    CHECK(p.byte_reset == 150'000);
    CHECK(p.threshold == 6);
    qcn_rp rp(p);
    rp.on_cnm(0, 32);  // TR 10G, CR 7.5G
    rp.on_cnm(0, 32);  // thesis: TR <- CR = 7.5G every CNM, CR 5.625G
    CHECK(rp.target_bps() == 7.5e9);
    CHECK(rp.rate_bps() == 5.625e9);
    CHECK(rp.next_timer() == qcn_rp::NEVER);
    // 99 frames of 1500 B leave 1500 B; the 100th completes the 150 KB cycle.
    for (int i = 0; i < 99; ++i) rp.on_sent(1 * MS, 1500);
    CHECK(rp.bytes_to_event() == 1500);
    CHECK(rp.stats().byte_events == 0);
    rp.on_sent(1 * MS, 1500);
    CHECK(rp.stats().byte_events == 1);
    CHECK(rp.rate_bps() == 6.5625e9);
    const double fr[4] = {7.03125e9, 7.265625e9, 7.3828125e9, 7.44140625e9};
    for (double expect : fr) {
        rp.on_sent(2 * MS, 150'000);
        CHECK(rp.target_bps() == 7.5e9);
        CHECK(rp.rate_bps() == expect);
    }
    CHECK(rp.stats().fast_recovery == 5);
    CHECK(rp.target_bps() - rp.rate_bps() == 1.875e9 / 32);
    // Cycle 6: AI, TR 7.505G, CR (7.505 + 7.44140625)/2; cycle 7: TR 7.51G.
    rp.on_sent(3 * MS, 150'000);
    CHECK(rp.stage() == qcn_stage::ACTIVE_INCREASE);
    CHECK(rp.target_bps() == 7.505e9);
    CHECK(rp.rate_bps() == 7.473203125e9);
    rp.on_sent(3 * MS, 150'000);
    CHECK(rp.target_bps() == 7.51e9);
    CHECK(rp.rate_bps() == 7.4916015625e9);
    CHECK(rp.stats().active_increase == 2);
    rp.on_timer(1'000'000 * MS);  // no timer in the byte-counter-only RP
    CHECK(rp.stats().timer_events == 0);
    CHECK(rp.stats().hyper_increase == 0);
}

TEST_CASE("qcn rp: AI then HAI with both stages at the threshold, halved reloads in HAI",
          "[nic][qcn]") {
    qcn_rp rp = below_line();
    CHECK(rp.target_bps() == 8.75e9);
    CHECK(rp.rate_bps() == 6.5625e9);
    // Byte events 1..4 at 3..6 ms: FR (CR 7.65625, 8.203125, 8.4765625, 8.61328125 G).
    for (int k = 0; k < 4; ++k) rp.on_sent((3 + k) * MS, 150'000);
    CHECK(rp.rate_bps() == 8.61328125e9);
    // ByteStage 5, TimeStage 0: AI, TR 8.755G, CR 8.684140625G.
    rp.on_sent(7 * MS, 150'000);
    CHECK(rp.stage() == qcn_stage::ACTIVE_INCREASE);
    CHECK(rp.target_bps() == 8.755e9);
    CHECK(rp.rate_bps() == 8.684140625e9);
    // Timer events at 17, 32, 47, 62 ms (TimeStage 1..4): AI, TR + 5M each.
    rp.on_timer(62 * MS);
    CHECK(rp.time_stage() == 4);
    CHECK(rp.target_bps() == 8.775e9);
    CHECK(rp.rate_bps() == 140254140625.0 / 16);
    // 77 ms: TimeStage 5 = ByteStage 5: HAI, TR + 50M x (5 - 5 + 1). The RP was in AI before
    // this event, so the timer restarts with the full 15 ms.
    rp.on_timer(77 * MS);
    CHECK(rp.stage() == qcn_stage::HYPER_INCREASE);
    CHECK(rp.target_bps() == 8.825e9);
    CHECK(rp.rate_bps() == 281454140625.0 / 32);
    CHECK(rp.next_timer() == 92 * MS);
    // 92 ms, in HAI: TimeStage 6, i = min(5, 6) - 4 = 1; the next timer is 7.5 ms away.
    rp.on_timer(92 * MS);
    CHECK(rp.target_bps() == 8.875e9);
    CHECK(rp.rate_bps() == 565454140625.0 / 64);
    CHECK(rp.next_timer() == 99'500 * PS_PER_US);
    // Byte event in HAI: ByteStage 6, i = 2: TR + 100M; the byte counter reloads 75000 B.
    rp.on_sent(93 * MS, 150'000);
    CHECK(rp.target_bps() == 8.975e9);
    CHECK(rp.rate_bps() == 1139854140625.0 / 128);
    CHECK(rp.bytes_to_event() == 75'000);
    CHECK(rp.stats().fast_recovery == 5);  // the byte event at 1 ms and 4 here
    CHECK(rp.stats().active_increase == 5);
    CHECK(rp.stats().hyper_increase == 3);
    CHECK(rp.stats().byte_events == 7);
    CHECK(rp.stats().timer_events == 6);
}

TEST_CASE("qcn rp: the NS3RDMA per-counter rule keeps a byte event in AI", "[nic][qcn]") {
    for (const auto rule : {qcn_stage_rule::BOTH_COUNTERS, qcn_stage_rule::PER_COUNTER}) {
        qcn_rp_params p = qcn_rp_params::standard(G10);
        p.stage_rule = rule;
        qcn_rp rp = below_line(p);
        rp.on_timer(77 * MS);  // TimeStage 1..5 (17..77 ms): 4 FR, the 5th AI
        CHECK(rp.stage() == qcn_stage::ACTIVE_INCREASE);
        for (int k = 0; k < 4; ++k) rp.on_sent(80 * MS, 150'000);  // ByteStage 1..4: AI
        CHECK(rp.stats().hyper_increase == 0);
        rp.on_sent(80 * MS, 150'000);  // ByteStage 5: both at 5
        if (rule == qcn_stage_rule::BOTH_COUNTERS) {
            CHECK(rp.stage() == qcn_stage::HYPER_INCREASE);
            CHECK(rp.stats().hyper_increase == 1);
        } else {
            CHECK(rp.stage() == qcn_stage::ACTIVE_INCREASE);
            rp.on_timer(92 * MS);  // a timer event selects HAI
            CHECK(rp.stage() == qcn_stage::HYPER_INCREASE);
        }
    }
}

TEST_CASE("qcn rp: an idle flow recovers on the timer alone and is released", "[nic][qcn]") {
    qcn_rp rp(qcn_rp_params::standard(G10));
    rp.on_cnm(0, 32);  // CR 7.5G, TR 10G
    // Timer events every 15 ms: 1..4 FR, then AI (ByteStage 0: one stage at the threshold);
    // TR is capped at 10G, so each event halves the 2.5G gap: below 1 bit/s at the 32nd.
    rp.on_timer(60 * MS);
    CHECK(rp.rate_bps() == 9.84375e9);
    CHECK(rp.stats().fast_recovery == 4);
    rp.on_timer(479 * MS);
    CHECK_FALSE(rp.released());
    CHECK(rp.time_stage() == 31);
    CHECK(rp.rate_bps() == 10e9 - 2.5e9 / 2147483648.0);
    rp.on_timer(480 * MS);
    CHECK(rp.released());
    CHECK(rp.at_line_rate());
    CHECK(rp.rate_bps() == 10e9);
    CHECK(rp.next_timer() == qcn_rp::NEVER);
    CHECK(rp.stats().active_increase == 28);
    CHECK(rp.stats().hyper_increase == 0);
    CHECK(rp.stats().releases == 1);
    // A new CNM starts a fresh cycle from the line rate.
    rp.on_cnm(500 * MS, 16);
    CHECK(rp.rate_bps() == 8.75e9);
    CHECK(rp.next_timer() == 515 * MS);
}

TEST_CASE("qcn rp: QCN-AIMD adds R_AI per byte-counter cycle, no fast recovery", "[nic][qcn]") {
    qcn_rp rp(qcn_rp_params::thesis_aimd(G10));
    rp.on_cnm(0, 32);
    CHECK(rp.rate_bps() == 7.5e9);
    CHECK(rp.stage() == qcn_stage::ACTIVE_INCREASE);
    rp.on_sent(1 * MS, 150'000);
    CHECK(rp.rate_bps() == 7.505e9);
    rp.on_cnm(2 * MS, 10);  // 7.505G x 118/128
    CHECK(rp.rate_bps() == 6'918'671'875.0);
    rp.on_sent(3 * MS, 150'000);
    CHECK(rp.rate_bps() == 6'923'671'875.0);
    CHECK(rp.stats().fast_recovery == 0);
    CHECK(rp.stats().active_increase == 2);

    qcn_rp rp2(qcn_rp_params::thesis_aimd(G10));
    rp2.on_cnm(0, 1);  // 10G x 127/128 = 9.921875G: 78.125M below the line, 16 x 5M
    for (int k = 0; k < 15; ++k) rp2.on_sent(1 * MS, 150'000);
    CHECK(rp2.rate_bps() == 9.996875e9);
    CHECK_FALSE(rp2.released());
    rp2.on_sent(1 * MS, 150'000);
    CHECK(rp2.released());
    CHECK(rp2.rate_bps() == 10e9);
}

TEST_CASE("qcn rp: back-to-back CNMs keep TR while ByteStage is 0", "[nic][qcn]") {
    SECTION("standard: TR kept, byte counter reloaded") {
        qcn_rp rp(qcn_rp_params::standard(G10));
        rp.on_cnm(0, 32);
        rp.on_sent(1 * MS, 100'000);
        CHECK(rp.bytes_to_event() == 50'000);
        rp.on_cnm(1 * MS, 32);
        CHECK(rp.target_bps() == 10e9);
        CHECK(rp.rate_bps() == 5.625e9);
        CHECK(rp.bytes_to_event() == 150'000);
        rp.on_sent(2 * MS, 150'000);  // ByteStage 1: CR (5.625 + 10)/2
        CHECK(rp.rate_bps() == 7.8125e9);
        rp.on_cnm(3 * MS, 32);  // ByteStage 1: TR <- CR
        CHECK(rp.target_bps() == 7.8125e9);
    }
    SECTION("NS3RDMA: the first cycle's byte counter runs on") {
        qcn_rp_params p = qcn_rp_params::standard(G10);
        p.reload_byte_counter_in_first_cycle = false;
        qcn_rp rp(p);
        rp.on_cnm(0, 32);
        CHECK(rp.bytes_to_event() == 150'000);  // a new RP starts a full cycle
        rp.on_sent(1 * MS, 100'000);
        rp.on_cnm(1 * MS, 32);
        CHECK(rp.bytes_to_event() == 50'000);
    }
    SECTION("thesis: TR <- CR at every CNM") {
        qcn_rp_params p = qcn_rp_params::standard(G10);
        p.keep_target_in_first_cycle = false;
        qcn_rp rp(p);
        rp.on_cnm(0, 32);
        rp.on_cnm(1 * MS, 32);
        CHECK(rp.target_bps() == 7.5e9);
    }
}

TEST_CASE("qcn rp: a stale TR above 10 CR is divided by 8 at the first event", "[nic][qcn]") {
    qcn_rp_params p = qcn_rp_params::standard(G10);
    p.gd = 1.0 / 64;  // each qFb 63 cut stops at the 50 % floor
    SECTION("TR/8") {
        qcn_rp rp(p);
        for (int k = 0; k < 4; ++k) rp.on_cnm(k * MS, 63);  // CR 0.625G, TR kept at 10G
        CHECK(rp.rate_bps() == 0.625e9);
        CHECK(rp.target_bps() == 10e9);
        rp.on_sent(5 * MS, 150'000);  // ByteStage 1, TR 10G > 6.25G: TR 1.25G
        CHECK(rp.target_bps() == 1.25e9);
        CHECK(rp.rate_bps() == 0.9375e9);
        CHECK(rp.stats().target_reductions == 1);
        rp.on_sent(6 * MS, 150'000);  // ByteStage 2: plain FR
        CHECK(rp.rate_bps() == 1.09375e9);
    }
    SECTION("rule off") {
        p.target_reduction = false;
        qcn_rp rp(p);
        for (int k = 0; k < 4; ++k) rp.on_cnm(k * MS, 63);
        rp.on_sent(5 * MS, 150'000);
        CHECK(rp.target_bps() == 10e9);
        CHECK(rp.rate_bps() == 5.3125e9);
    }
}

TEST_CASE("qcn rp: averaging factor other than 1/2 (averaging principle)", "[nic][qcn]") {
    qcn_rp_params p = qcn_rp_params::thesis(G10);
    p.averaging_factor = 0.25;
    qcn_rp rp(p);
    rp.on_cnm(0, 32);
    rp.on_cnm(0, 32);             // TR 7.5G, CR 5.625G
    rp.on_sent(1 * MS, 150'000);  // CR 0.75 x 5.625G + 0.25 x 7.5G
    CHECK(rp.rate_bps() == 6.09375e9);
}

TEST_CASE("qcn rp: validate names the offending field", "[nic][qcn]") {
    auto field = [](const qcn_rp_params& p) {
        const auto e = p.validate();
        return e ? e->field : std::string();
    };
    CHECK(field(qcn_rp_params::standard(G10)).empty());
    CHECK(field(qcn_rp_params::thesis(G10)).empty());
    CHECK(field(qcn_rp_params{}) == "line_rate_bps");
    CHECK_THROWS_WITH(qcn_rp(qcn_rp_params{}), Catch::Contains("qcn_rp_params.line_rate_bps"));
    qcn_rp_params p = qcn_rp_params::standard(G10);
    p.gd = 0;
    CHECK(field(p) == "gd");
    p = qcn_rp_params::standard(G10);
    p.time_reset = 0;
    CHECK(field(p) == "time_reset");
    p.byte_counter_only = true;
    CHECK(field(p).empty());
    p = qcn_rp_params::standard(G10);
    p.byte_reset = 0;
    CHECK(field(p) == "byte_reset");
    p = qcn_rp_params::standard(G10);
    p.threshold = 0;
    CHECK(field(p) == "threshold");
    p = qcn_rp_params::standard(G10);
    p.min_rate_bps = 2 * G10;
    CHECK(field(p) == "min_rate_bps");
    p = qcn_rp_params::standard(G10);
    p.min_decrease_factor = 1.5;
    CHECK(field(p) == "min_decrease_factor");
    p = qcn_rp_params::standard(G10);
    p.averaging_factor = 0;
    CHECK(field(p) == "averaging_factor");
}
