// DCQCN reaction point and CNP pacing (plain C++): exact rates, alpha and times per event.
#include <catch2/catch.hpp>
#include <stdexcept>
#include <utility>

#include "fabricsim/nic/algo/dcqcn.h"

using namespace fabricsim;
using namespace fabricsim::nic;

namespace {
constexpr std::uint64_t G40 = 40'000'000'000ull;
constexpr std::uint64_t G100 = 100'000'000'000ull;
constexpr ps_t US = PS_PER_US;

/// Paper preset at 40G after CNPs at 0 and 1 us: RT = 20G, RC = 10G, alpha = 1, and the
/// increase timer restarted at 1 us (events at 56, 111, 166 ... us).
dcqcn_rp two_cuts(dcqcn_params p = dcqcn_params::paper(G40)) {
    dcqcn_rp rp(p);
    rp.on_cnp(0);       // RT = 40G, RC = 40G (1 - 1/2) = 20G, alpha = (255/256) 1 + 1/256 = 1
    rp.on_cnp(1 * US);  // RT = 20G, RC = 20G (1 - 1/2) = 10G
    return rp;
}
}  // namespace

TEST_CASE("dcqcn paper: the first CNP sets RT = RC and cuts RC to RC(1 - alpha/2)",
          "[nic][dcqcn]") {
    dcqcn_rp rp(dcqcn_params::paper(G40));
    CHECK(rp.rate_bps() == 40e9);
    CHECK_FALSE(rp.active());
    CHECK(rp.next_timer() == dcqcn_rp::NEVER);
    rp.on_bytes_sent(20'000'000, 5 * US);  // no byte counting before the first CNP
    CHECK(rp.byte_events() == 0);
    rp.on_cnp(10 * US);
    // alpha starts at 1: RC = 40G x (1 - 1/2) = 20G; alpha = (1 - 1/256) x 1 + 1/256 = 1.
    CHECK(rp.target_bps() == 40e9);
    CHECK(rp.rate_bps() == 20e9);
    CHECK(rp.alpha() == 1.0);
    // Both timers restart at the CNP: alpha timer K and increase timer T, 55 us each.
    CHECK(rp.next_timer() == 65 * US);
    CHECK(rp.next_rate_change() == 65 * US);
    rp.on_cnp(20 * US);  // RT = 20G, RC = 10G, timers now due at 75 us
    CHECK(rp.target_bps() == 20e9);
    CHECK(rp.rate_bps() == 10e9);
    CHECK(rp.next_timer() == 75 * US);
    CHECK(rp.stats().cnps == 2);
    CHECK(rp.stats().cuts == 2);
}

TEST_CASE("dcqcn paper: alpha decays by (1-g)^n over n periods without a CNP", "[nic][dcqcn]") {
    dcqcn_rp rp(dcqcn_params::paper(G40));
    rp.on_cnp(0);  // RC 20G, RT 40G, alpha 1
    // Alpha periods end at 55, 110, 165, 220 us: alpha = (255/256)^4 = 4228250625 / 4294967296
    // = 0.98446631... The increase timer (also 55 us) does 4 FR steps: RC 30, 35, 37.5,
    // 38.75 G.
    rp.on_timer(230 * US);
    const double a4 = 4228250625.0 / 4294967296.0;
    CHECK(rp.alpha() == a4);
    CHECK(rp.rate_bps() == 38.75e9);
    // The next cut uses the decayed alpha: RT = 38.75G, RC = 38.75G (1 - a4/2) = 19.6759...G;
    // then alpha = (255/256) a4 + 1/256 = 0.98452699...
    rp.on_cnp(230 * US);
    CHECK(rp.target_bps() == 38.75e9);
    CHECK(rp.rate_bps() == Approx(19'675'965'155.62036).epsilon(1e-12));
    CHECK(rp.alpha() == Approx(0.984526993007421).epsilon(1e-12));
    // A CNP restarts the alpha timer: none fires at 275 us (alpha stays), the next at 285 us.
    rp.on_timer(284 * US);
    CHECK(rp.alpha() == Approx(0.984526993007421).epsilon(1e-12));
    rp.on_timer(285 * US);
    CHECK(rp.alpha() == Approx(0.984526993007421 * 255 / 256).epsilon(1e-12));
}

TEST_CASE("dcqcn paper: F fast-recovery steps, then additive increase", "[nic][dcqcn]") {
    dcqcn_rp rp = two_cuts();
    // Timer events T = 1..5 (<= F = 5): RC <- (RT + RC)/2 with RT = 20G.
    const double fr[5] = {15e9, 17.5e9, 18.75e9, 19.375e9, 19.6875e9};
    for (int k = 0; k < 5; ++k) {
        rp.on_timer(1 * US + (k + 1) * 55 * US);
        CHECK(rp.timer_events() == static_cast<std::uint32_t>(k + 1));
        CHECK(rp.target_bps() == 20e9);
        CHECK(rp.rate_bps() == fr[k]);
    }
    // T = 6 > F, BC = 0: AI: RT = 20G + 40M = 20.04G, RC = (20.04 + 19.6875)/2 = 19.86375G.
    rp.on_timer(331 * US);
    CHECK(rp.target_bps() == 20.04e9);
    CHECK(rp.rate_bps() == 19.86375e9);
    // T = 7: RT = 20.08G, RC = (20.08 + 19.86375)/2 = 19.971875G.
    rp.on_timer(386 * US);
    CHECK(rp.target_bps() == 20.08e9);
    CHECK(rp.rate_bps() == 19.971875e9);
    CHECK(rp.stats().fast_recovery == 5);
    CHECK(rp.stats().additive == 2);
    CHECK(rp.stats().hyper == 0);
}

TEST_CASE("dcqcn paper: hyper increase adds i x R_HAI with i = min(T, BC) - F", "[nic][dcqcn]") {
    dcqcn_rp rp = two_cuts();
    // Byte events (B = 10 MB, one per call) at 2..7 us: BC = 1..5 FR (RC 15, 17.5, 18.75,
    // 19.375, 19.6875 G); BC = 6 with T = 0 is AI: RT 20.04G, RC 19.86375G.
    for (int k = 0; k < 6; ++k) rp.on_bytes_sent(10'000'000, (2 + k) * US);
    CHECK(rp.byte_events() == 6);
    CHECK(rp.target_bps() == 20.04e9);
    CHECK(rp.rate_bps() == 19.86375e9);
    // Timer events T = 1..5 at 56..276 us: max = 6 > F, min = T <= F: AI, RT +40M each:
    // RT 20.24G; RC 19.971875, 20.0459375, 20.10296875, 20.151484375, 20.1957421875 G.
    rp.on_timer(276 * US);
    CHECK(rp.target_bps() == 20.24e9);
    CHECK(rp.rate_bps() == 20'195'742'187.5);
    // T = 6 at 331 us: min(6, 6) - 5 = 1: RT = 20.24G + 200M = 20.44G, RC = 20.31787109375G.
    rp.on_timer(331 * US);
    CHECK(rp.target_bps() == 20.44e9);
    CHECK(rp.rate_bps() == 20'317'871'093.75);
    // BC = 7 at 332 us: min(6, 7) - 5 = 1: RT = 20.64G, RC = 20.478935546875G.
    rp.on_bytes_sent(10'000'000, 332 * US);
    CHECK(rp.target_bps() == 20.64e9);
    CHECK(rp.rate_bps() == 20'478'935'546.875);
    // T = 7 at 386 us: min(7, 7) - 5 = 2: RT = 20.64G + 2 x 200M = 21.04G,
    // RC = (21.04 + 20.478935546875)/2 = 20.7594677734375G.
    rp.on_timer(386 * US);
    CHECK(rp.target_bps() == 21.04e9);
    CHECK(rp.rate_bps() == 20'759'467'773.4375);
    CHECK(rp.stats().fast_recovery == 5);
    CHECK(rp.stats().additive == 6);
    CHECK(rp.stats().hyper == 3);
}

TEST_CASE("dcqcn: the NS3RDMA stage boundaries (< F, i = min - F + 1)", "[nic][dcqcn]") {
    dcqcn_params p = dcqcn_params::paper(10'000'000'000ull);
    p.stage_rule = dcqcn_stage_rule::NS3RDMA;
    p.fast_recovery_steps = 2;
    p.byte_counter = 1000;
    dcqcn_rp rp(p);
    rp.on_cnp(0);                    // RT 10G, RC 5G
    rp.on_cnp(1 * US);               // RT 5G, RC 2.5G; increase timer at 56, 111 us
    rp.on_bytes_sent(1000, 2 * US);  // BC 1: max 1 < 2: FR, RC 3.75G
    CHECK(rp.rate_bps() == 3.75e9);
    rp.on_bytes_sent(1000, 3 * US);  // BC 2: max 2, min 0 < 2: AI, RT 5.04G, RC 4.395G
    CHECK(rp.target_bps() == 5.04e9);
    CHECK(rp.rate_bps() == 4.395e9);
    rp.on_timer(56 * US);  // T 1, min 1 < 2: AI, RT 5.08G, RC 4.7375G
    CHECK(rp.target_bps() == 5.08e9);
    CHECK(rp.rate_bps() == 4.7375e9);
    rp.on_timer(111 * US);  // T 2: min 2 >= 2: HAI, i = 2 - 2 + 1 = 1: RT 5.28G, RC 5.00875G
    CHECK(rp.target_bps() == 5.28e9);
    CHECK(rp.rate_bps() == 5.00875e9);
    CHECK(rp.stats().hyper == 1);
    // The paper rule on the same events: BC 1, BC 2, T 1, T 2 are all FR (max <= 2).
    p.stage_rule = dcqcn_stage_rule::PAPER;
    dcqcn_rp paper(p);
    paper.on_cnp(0);
    paper.on_cnp(1 * US);
    paper.on_bytes_sent(1000, 2 * US);
    paper.on_bytes_sent(1000, 3 * US);
    paper.on_timer(111 * US);
    CHECK(paper.stats().fast_recovery == 4);
    CHECK(paper.target_bps() == 5e9);
}

TEST_CASE("dcqcn: a byte-counter event every B bytes, restarted by a cut", "[nic][dcqcn]") {
    dcqcn_params p = dcqcn_params::paper(10'000'000'000ull);
    p.byte_counter = 3000;
    dcqcn_rp rp(p);
    rp.on_cnp(0);  // RT 10G, RC 5G
    rp.on_bytes_sent(1000, 1 * US);
    rp.on_bytes_sent(1000, 2 * US);
    CHECK(rp.byte_events() == 0);
    rp.on_bytes_sent(1000, 3 * US);  // 3000 B: BC 1, FR: RC (10 + 5)/2 = 7.5G
    CHECK(rp.byte_events() == 1);
    CHECK(rp.rate_bps() == 7.5e9);
    rp.on_bytes_sent(2500, 4 * US);
    rp.on_bytes_sent(1000, 5 * US);  // 3500 B: BC 2 (RC 8.75G); the 500 B excess is dropped
    CHECK(rp.byte_events() == 2);
    CHECK(rp.rate_bps() == 8.75e9);
    rp.on_bytes_sent(2500, 6 * US);
    CHECK(rp.byte_events() == 2);
    rp.on_bytes_sent(500, 7 * US);  // 3000 B since the last event
    CHECK(rp.byte_events() == 3);
    rp.on_bytes_sent(2000, 8 * US);
    rp.on_cnp(9 * US);  // the cut resets BC and the count
    CHECK(rp.byte_events() == 0);
    rp.on_bytes_sent(1000, 10 * US);
    CHECK(rp.byte_events() == 0);
}

TEST_CASE("dcqcn: RT is capped at the line rate and RC reaches it, then the RP idles",
          "[nic][dcqcn]") {
    dcqcn_rp rp(dcqcn_params::paper(G40));
    rp.on_cnp(0);  // RC 20G, RT 40G
    // T = 6 at 330 us is AI: RT = min(40G + 40M, 40G) = 40G.
    rp.on_timer(330 * US);
    CHECK(rp.stats().additive == 1);
    CHECK(rp.target_bps() == 40e9);
    // RT - RC = 20G / 2^n after n events; after 34 (1870 us) 1.16 bit/s, the 35th (1925 us)
    // halves it below 1 bit/s, and RC is set to RT.
    rp.on_timer(1870 * US);
    CHECK(rp.rate_bps() < 40e9);
    CHECK(rp.rate_bps() > 40e9 - 2);
    CHECK(rp.next_rate_change() == 1925 * US);
    rp.on_timer(1925 * US);
    CHECK(rp.rate_bps() == 40e9);
    CHECK(rp.target_bps() == 40e9);
    // Nothing can change the rate until the next CNP; only the alpha timer runs.
    CHECK(rp.next_rate_change() == dcqcn_rp::NEVER);
    CHECK(rp.next_timer() == 1980 * US);
    rp.on_bytes_sent(20'000'000, 2000 * US);
    CHECK(rp.byte_events() == 0);
    CHECK(rp.stats().fast_recovery + rp.stats().additive == 35);
}

TEST_CASE("dcqcn: min rate floor and maximum single cut", "[nic][dcqcn]") {
    SECTION("min rate 15G: the second cut stops at 15G instead of 10G") {
        dcqcn_params p = dcqcn_params::paper(G40);
        p.min_rate_bps = 15'000'000'000ull;
        dcqcn_rp rp(p);
        rp.on_cnp(0);
        CHECK(rp.rate_bps() == 20e9);
        rp.on_cnp(1 * US);  // max(20G x 0.5, 15G)
        CHECK(rp.rate_bps() == 15e9);
        CHECK(rp.target_bps() == 20e9);
    }
    SECTION("min_decrease_factor 0.75: a cut keeps 75 % of RC (alpha 1 would halve it)") {
        dcqcn_params p = dcqcn_params::paper(G40);
        p.min_decrease_factor = 0.75;
        dcqcn_rp rp(p);
        rp.on_cnp(0);
        CHECK(rp.rate_bps() == 30e9);
    }
}

TEST_CASE("dcqcn mellanox: one cut per 4-us monitor period, alpha every 1 us with G = 1019",
          "[nic][dcqcn]") {
    dcqcn_rp rp(dcqcn_params::mellanox(G100));
    // First CNP: alpha = 1023/1024, no cut yet; the check grid is 4, 8, 12 ... us.
    rp.on_cnp(0);
    CHECK(rp.rate_bps() == 100e9);
    CHECK(rp.cut_pending());
    CHECK(rp.alpha() == 1023.0 / 1024);
    CHECK(rp.next_timer() == 1 * US);
    CHECK(rp.next_rate_change() == 4 * US);
    rp.on_cnp(2500 * PS_PER_NS);  // a second CNP in the same period: still one cut
    // In 1/1024 units, r = 1019/1024, +5 if a CNP came in the period (the first one does not
    // count): 1 us: 1023 r = 1018.0048828125; 2 us: 1013.0341558...; 3 us (CNP at 2.5 us):
    // 1013.0341558 r + 5 = 1013.0877000...; 4 us: 1008.1409827...
    rp.on_timer(3 * US);
    CHECK(rp.alpha() * 1024 == Approx(1013.087700006552).epsilon(1e-12));
    CHECK(rp.stats().cuts == 0);
    rp.on_timer(4 * US);  // alpha first, then the check: RC = 100G (1 - 0.98451/2)
    const double r = 1019.0 / 1024, g = 5.0 / 1024;
    const double a4 = r * (r * (r * (r * (1023.0 / 1024))) + g);
    CHECK(a4 * 1024 == Approx(1008.1409827213638).epsilon(1e-12));
    CHECK(rp.alpha() == a4);
    CHECK(rp.stats().cuts == 1);
    CHECK(rp.rate_bps() == 100e9 * (1 - a4 / 2));  // 50.774366078 G
    CHECK(rp.rate_bps() == Approx(50'774'366'078.05841).epsilon(1e-12));
    CHECK(rp.target_bps() == 100e9);  // no timer increase before the cut: RT not clamped
    CHECK_FALSE(rp.cut_pending());
    rp.on_timer(8 * US);  // no CNP in (4, 8]: no cut
    CHECK(rp.stats().cuts == 1);
    CHECK(rp.next_rate_change() == 304 * US);  // the increase timer restarted at the cut
    rp.on_cnp(9 * US);
    CHECK(rp.next_rate_change() == 12 * US);  // the next grid point
    rp.on_timer(12 * US);
    CHECK(rp.stats().cuts == 2);
}

TEST_CASE("dcqcn mellanox: RT is clamped only after a timer-driven increase", "[nic][dcqcn]") {
    SECTION("byte-counter increases only: RT stays") {
        dcqcn_rp rp(dcqcn_params::mellanox(G100));
        rp.on_cnp(0);
        rp.on_timer(4 * US);  // cut 1, RT 100G
        const double rc1 = rp.rate_bps();
        rp.on_bytes_sent(32767, 5 * US);  // BC 1, s = 0 < F = 1: FR
        CHECK(rp.byte_events() == 1);
        CHECK(rp.rate_bps() == (100e9 + rc1) / 2);
        rp.on_cnp(6 * US);
        rp.on_timer(8 * US);  // cut 2 with T = 0: RT not clamped
        CHECK(rp.stats().cuts == 2);
        CHECK(rp.target_bps() == 100e9);
    }
    SECTION("a timer increase since the cut: RT = RC before the cut") {
        dcqcn_rp rp(dcqcn_params::mellanox(G100));
        rp.on_cnp(0);
        rp.on_timer(4 * US);
        const double rc1 = rp.rate_bps();
        rp.on_timer(304 * US);  // T 1, FR
        CHECK(rp.timer_events() == 1);
        const double rc2 = (100e9 + rc1) / 2;
        CHECK(rp.rate_bps() == rc2);
        rp.on_cnp(305 * US);
        rp.on_timer(308 * US);  // cut 2 with T = 1: RT = rc2, RC = rc2 (1 - alpha/2)
        CHECK(rp.stats().cuts == 2);
        CHECK(rp.target_bps() == rc2);
        CHECK(rp.rate_bps() == rc2 * (1 - rp.alpha() / 2));
    }
}

TEST_CASE("dcqcn scaled (HPCC): FR, one AI step, then HAI not multiplied", "[nic][dcqcn]") {
    dcqcn_rp rp(dcqcn_params::scaled(G100));  // R_AI 20 Mb/s, R_HAI 200 Mb/s at 100G
    CHECK(rp.params().ai_rate_bps == 20'000'000);
    CHECK(rp.params().hai_rate_bps == 200'000'000);
    rp.on_cnp(0);
    rp.on_timer(4 * US);  // alpha (255/256)^4: RC = 100G (1 - 0.98446631/2) = 50.7766842726G
    CHECK(rp.rate_bps() == Approx(50'776'684'272.56867).epsilon(1e-12));
    rp.on_timer(304 * US);  // s = 0: FR
    rp.on_cnp(305 * US);
    rp.on_timer(308 * US);  // clamped: RT = RC of the FR step
    const double rt = rp.target_bps();
    CHECK(rt == Approx((100e9 + 50'776'684'272.56867) / 2).epsilon(1e-12));
    rp.on_timer(608 * US);  // s = 0: FR
    CHECK(rp.target_bps() == rt);
    rp.on_timer(908 * US);  // s = 1 = F: AI
    CHECK(rp.target_bps() == rt + 20e6);
    rp.on_timer(1208 * US);  // s = 2: HAI, + R_HAI
    CHECK(rp.target_bps() == rt + 20e6 + 200e6);
    rp.on_timer(1508 * US);  // s = 3: HAI, + R_HAI again (not 2 x R_HAI)
    CHECK(rp.target_bps() == rt + 20e6 + 200e6 + 200e6);
    CHECK(rp.stats().fast_recovery == 2);
    CHECK(rp.stats().additive == 1);
    CHECK(rp.stats().hyper == 2);
}

TEST_CASE("dcqcn: waking only at next_rate_change gives the same result as every timer",
          "[nic][dcqcn]") {
    // Paper: a cut per CNP. Mellanox: 0 and 3 us share the check at 4 us, 700 and 702 us the
    // one at 704 us, 2000 us is cut at 2004 us.
    const std::pair<dcqcn_params, std::uint64_t> cases[] = {{dcqcn_params::paper(G40), 5},
                                                            {dcqcn_params::mellanox(G100), 3}};
    for (const auto& [p, cuts] : cases) {
        dcqcn_rp every(p), lazy(p);
        const ps_t cnps[] = {0, 3 * US, 700 * US, 702 * US, 2000 * US};
        ps_t t = 0;
        for (ps_t c : cnps) {
            while (every.next_timer() <= c) every.on_timer(every.next_timer());
            while (lazy.next_rate_change() <= c) lazy.on_timer(lazy.next_rate_change());
            every.on_cnp(c);
            lazy.on_cnp(c);
            t = c;
        }
        every.on_timer(t + 3000 * US);
        lazy.on_timer(t + 3000 * US);
        CHECK(every.rate_bps() == lazy.rate_bps());
        CHECK(every.target_bps() == lazy.target_bps());
        CHECK(every.alpha() == lazy.alpha());
        CHECK(every.stats().cuts == cuts);
        CHECK(lazy.stats().cuts == cuts);
    }
}

TEST_CASE("dcqcn: rate set on the first CNP, alpha at its fixed point over a long idle",
          "[nic][dcqcn]") {
    SECTION("paper: RC = RT = 10G at the first CNP, then the cut: RT 10G, RC 5G") {
        dcqcn_params p = dcqcn_params::paper(G40);
        p.first_cnp_rate_bps = 10'000'000'000ull;
        dcqcn_rp rp(p);
        rp.on_cnp(0);
        CHECK(rp.target_bps() == 10e9);
        CHECK(rp.rate_bps() == 5e9);
        rp.on_cnp(1 * US);  // only the first CNP sets the rate: RT 5G, RC 2.5G
        CHECK(rp.target_bps() == 5e9);
        CHECK(rp.rate_bps() == 2.5e9);
    }
    SECTION("mellanox: RC = RT = 10G at once, the cut waits for the check") {
        dcqcn_params p = dcqcn_params::mellanox(G100);
        p.first_cnp_rate_bps = 10'000'000'000ull;
        dcqcn_rp rp(p);
        rp.on_cnp(0);
        CHECK(rp.rate_bps() == 10e9);
        CHECK(rp.target_bps() == 10e9);
        CHECK(rp.cut_pending());
    }
    SECTION("g = 1: alpha is 0 after one period and stays; the idle periods are skipped") {
        dcqcn_params p = dcqcn_params::paper(G40);
        p.g = 1;
        dcqcn_rp rp(p);
        rp.on_cnp(0);  // alpha = 0 x 1 + 1 = 1
        rp.on_timer(55 * US);
        CHECK(rp.alpha() == 0.0);
        // RC is back at the line rate long before; the last alpha period due by 1 s ended at
        // 18181 x 55 us = 999955 us, the next ends at 1000010 us.
        rp.on_timer(1'000'000 * US);
        CHECK(rp.next_rate_change() == dcqcn_rp::NEVER);
        CHECK(rp.next_timer() == 1'000'010 * US);
        CHECK(rp.alpha() == 0.0);
        rp.on_cnp(1'000'010 * US);  // the cut uses alpha 0: RC stays 40G, alpha becomes 1
        CHECK(rp.rate_bps() == 40e9);
        CHECK(rp.alpha() == 1.0);
    }
}

TEST_CASE("dcqcn_params: presets validate, bad fields are named", "[nic][dcqcn]") {
    CHECK_FALSE(dcqcn_params::paper(G40).validate());
    CHECK_FALSE(dcqcn_params::mellanox(G100).validate());
    CHECK_FALSE(dcqcn_params::scaled(G100).validate());
    auto field = [](const dcqcn_params& p) {
        const auto e = p.validate();
        return e ? e->field : std::string("ok");
    };
    dcqcn_params p = dcqcn_params::paper(G40);
    p.g = 0;
    CHECK(field(p) == "g");
    p.g = 1.5;
    CHECK(field(p) == "g");
    p.g = 1;
    CHECK(field(p) == "ok");
    p = dcqcn_params::paper(G40);
    p.fast_recovery_steps = 0;  // the paper rule allows it: no fast recovery
    CHECK(field(p) == "ok");
    p.stage_rule = dcqcn_stage_rule::NS3RDMA;
    CHECK(field(p) == "fast_recovery_steps");
    p.stage_rule = dcqcn_stage_rule::MELLANOX;
    CHECK(field(p) == "fast_recovery_steps");
    p = dcqcn_params::paper(G40);
    p.min_rate_bps = G40 + 1;
    CHECK(field(p) == "min_rate_bps");
    CHECK(p.validate()->reason == "must not exceed the line rate");
    p = dcqcn_params::paper(G40);
    p.initial_alpha = -0.1;
    CHECK(field(p) == "initial_alpha");
    p = dcqcn_params::paper(G40);
    p.first_cnp_rate_bps = 1000;  // below the 100 Mb/s min rate
    CHECK(field(p) == "first_cnp_rate_bps");
    p = dcqcn_params::paper(0);
    CHECK(field(p) == "line_rate_bps");
    p = dcqcn_params::paper(G40);
    p.g = 0;
    CHECK_THROWS_WITH(dcqcn_rp(p), "dcqcn_params.g: must be in (0, 1]");
}

TEST_CASE("dcqcn cnp_pacer: one CNP per 50 us, a mark inside the window is sent at its end",
          "[nic][dcqcn]") {
    cnp_pacer np;  // N = 50 us, remember marks (HTDCQCN)
    CHECK(np.next_due() == cnp_pacer::NEVER);
    CHECK(np.on_marked_packet(0));              // first mark: CNP at 0
    CHECK_FALSE(np.on_marked_packet(10 * US));  // remembered
    CHECK_FALSE(np.on_marked_packet(20 * US));  // same window: nothing more
    CHECK(np.next_due() == 50 * US);
    CHECK_FALSE(np.on_due(49 * US));
    CHECK(np.on_due(50 * US));  // the remembered mark's CNP at 50 us
    CHECK(np.next_due() == cnp_pacer::NEVER);
    CHECK_FALSE(np.on_marked_packet(60 * US));  // inside [50, 100): remembered
    CHECK(np.next_due() == 100 * US);
    CHECK(np.on_due(100 * US));
    CHECK(np.next_due() == cnp_pacer::NEVER);  // no mark in [100, 150): no CNP at 150
    CHECK_FALSE(np.on_due(150 * US));
    CHECK(np.on_marked_packet(170 * US));  // 70 us after the last CNP: at once
    CHECK(np.stats().marked == 5);
    CHECK(np.stats().cnps == 4);
    CHECK(np.stats().deferred == 2);
    CHECK(np.stats().coalesced == 1);
}

TEST_CASE("dcqcn cnp_pacer: marks inside the window dropped, or no pacing at all", "[nic][dcqcn]") {
    SECTION("remember_marks false") {
        cnp_pacer np(50 * US, false);
        CHECK(np.on_marked_packet(0));
        CHECK_FALSE(np.on_marked_packet(10 * US));
        CHECK(np.next_due() == cnp_pacer::NEVER);
        CHECK(np.on_marked_packet(50 * US));  // the window is [0, 50)
        CHECK(np.stats().coalesced == 1);
    }
    SECTION("interval 0: a CNP per mark") {
        cnp_pacer np(0);
        CHECK(np.on_marked_packet(0));
        CHECK(np.on_marked_packet(0));
        CHECK(np.on_marked_packet(1));
        CHECK(np.stats().cnps == 3);
    }
}
