#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "fabricsim/host/algo/congestion_control.h"
#include "fabricsim/host/algo/rtt_estimator.h"

using namespace fabricsim;
using namespace fabricsim::host;

namespace {

constexpr std::uint64_t MSS = 1460;
constexpr ps_t RTT = 100 * PS_PER_US;

cc_params make(cc_kind kind, std::uint32_t iw = 10, std::uint64_t ssthresh_segments = 0) {
    cc_params p;
    p.kind = kind;
    p.mss = static_cast<std::uint32_t>(MSS);
    p.initial_window_segments = iw;
    p.initial_ssthresh_bytes = ssthresh_segments * MSS;
    return p;
}

/// A minimal sender around the CC: byte offsets from 0, one ACK per call.
struct conn {
    congestion_control cc;
    std::uint64_t una = 0;
    std::uint64_t nxt = 0;
    ps_t now = 0;

    explicit conn(const cc_params& p) : cc(p) {}

    void send_segments(std::uint64_t n) { nxt += n * MSS; }

    ack_outcome ack(std::uint64_t bytes, bool ece = false, ps_t rtt = 0) {
        if (nxt < una + bytes) nxt = una + bytes;
        ack_event e;
        e.now = now;
        e.acked_bytes = bytes;
        e.ece = ece;
        e.snd_una_after = una + bytes;
        e.snd_nxt = nxt;
        e.flight_bytes_before = nxt - una;
        e.rtt_sample = rtt;
        una += bytes;
        return cc.on_ack(e);
    }

    /// One round trip: send `n` segments back to back, then ACK each; marks[i % size] = ECE.
    void round(std::uint64_t n, const std::vector<int>& marks = {}) {
        send_segments(n);
        for (std::uint64_t i = 0; i < n; ++i)
            ack(MSS, !marks.empty() && marks[i % marks.size()] != 0);
        now += RTT;
    }

    /// One round trip of a full window (cwnd / MSS segments).
    void full_round() { round(std::max<std::uint64_t>(cc.cwnd() / MSS, 1)); }
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// parameters

TEST_CASE("cc_params / rtt_params: validate rejects nonsense", "[cc][params]") {
    CHECK_NOTHROW(cc_params{}.validate());
    cc_params p;
    p.mss = 0;
    CHECK_THROWS_AS(congestion_control(p), std::invalid_argument);
    p = cc_params{};
    p.dctcp_g = 0;
    CHECK_THROWS_AS(p.validate(), std::invalid_argument);
    p = cc_params{};
    p.cubic_beta = 1.0;
    CHECK_THROWS_AS(p.validate(), std::invalid_argument);
    rtt_params r;
    r.min_rto = 2 * PS_PER_S;
    r.max_rto = 1 * PS_PER_S;
    CHECK_THROWS_AS(rtt_estimator(r), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// NewReno: slow start, congestion avoidance, fast recovery, RTO

TEST_CASE("newreno: slow start doubles cwnd per round trip of ACKs", "[cc][newreno]") {
    conn c(make(cc_kind::NEWRENO, 10));
    CHECK(c.cc.cwnd() == 10 * MSS);
    CHECK(c.cc.in_slow_start());
    SECTION("one ACK per segment") {
        c.full_round();
        CHECK(c.cc.cwnd() == 20 * MSS);
        c.full_round();
        CHECK(c.cc.cwnd() == 40 * MSS);
        c.full_round();
        CHECK(c.cc.cwnd() == 80 * MSS);
    }
    SECTION("delayed ACKs (2 MSS each) still double: ABC with L = 2") {
        c.send_segments(10);
        for (int i = 0; i < 5; ++i) c.ack(2 * MSS);
        CHECK(c.cc.cwnd() == 20 * MSS);
    }
    SECTION("a stretch ACK of 4 MSS grows by L = 2 MSS only") {
        c.send_segments(4);
        c.ack(4 * MSS);
        CHECK(c.cc.cwnd() == 12 * MSS);
    }
}

TEST_CASE("newreno: slow start stops at ssthresh, congestion avoidance adds 1 MSS per window",
          "[cc][newreno]") {
    conn c(make(cc_kind::NEWRENO, 10, 32));
    c.full_round();  // 10 -> 20
    CHECK(c.cc.cwnd() == 20 * MSS);
    c.full_round();  // 20 ACKs: 12 to reach 32, the other 8 MSS feed the byte counter
    CHECK(c.cc.cwnd() == 32 * MSS);
    CHECK_FALSE(c.cc.in_slow_start());
    c.full_round();  // 32 ACKs: counter 8 + 32 MSS >= 32 MSS once -> +1 MSS
    CHECK(c.cc.cwnd() == 33 * MSS);
    c.full_round();
    CHECK(c.cc.cwnd() == 34 * MSS);
    c.full_round();
    CHECK(c.cc.cwnd() == 35 * MSS);
    // byte counting, not per-ACK increments: 34 ACKs of one MSS short of a window add nothing
    conn d(make(cc_kind::NEWRENO, 35, 35));
    d.send_segments(34);
    for (int i = 0; i < 34; ++i) d.ack(MSS);
    CHECK(d.cc.cwnd() == 35 * MSS);
    d.ack(MSS);
    CHECK(d.cc.cwnd() == 36 * MSS);
}

TEST_CASE("newreno: fast recovery with inflation, partial ACKs and deflation on exit",
          "[cc][newreno][recovery]") {
    conn c(make(cc_kind::NEWRENO, 20, 20));
    c.send_segments(20);  // una 0, nxt 20 MSS, segment 0 lost
    c.cc.on_dupack();
    c.cc.on_dupack();
    c.cc.on_dupack();
    CHECK(c.cc.cwnd() == 20 * MSS);  // no inflation outside recovery
    REQUIRE(c.cc.on_dupack_threshold(c.now, c.una, c.nxt, c.nxt - c.una));
    CHECK(c.cc.in_recovery());
    CHECK(c.cc.ssthresh() == 10 * MSS);  // flight / 2
    CHECK(c.cc.cwnd() == 13 * MSS);      // ssthresh + 3 MSS
    CHECK(c.cc.recover() == 20 * MSS);
    CHECK_FALSE(c.cc.should_set_cwr());  // NewReno is not ECN-capable
    c.cc.on_dupack();
    c.cc.on_dupack();
    CHECK(c.cc.cwnd() == 15 * MSS);  // inflation
    CHECK_FALSE(c.cc.on_dupack_threshold(c.now, c.una, c.nxt, c.nxt - c.una));
    CHECK(c.cc.cwnd() == 15 * MSS);

    CHECK(c.ack(4 * MSS) == ack_outcome::PARTIAL_ACK);
    CHECK(c.cc.cwnd() == 12 * MSS);  // 15 - 4 + 1
    CHECK(c.ack(500) == ack_outcome::PARTIAL_ACK);
    CHECK(c.cc.cwnd() == 12 * MSS - 500);  // < 1 MSS acked: no add-back
    CHECK(c.cc.in_recovery());

    SECTION("full ACK with much data outstanding: cwnd = ssthresh") {
        c.send_segments(15);  // new data sent during recovery
        CHECK(c.ack(20 * MSS - c.una) == ack_outcome::RECOVERY_EXIT);
        CHECK_FALSE(c.cc.in_recovery());
        CHECK(c.cc.cwnd() == 10 * MSS);
        CHECK(c.cc.ssthresh() == 10 * MSS);
        // RFC 6582: dupacks at snd_una == recover do not start a new recovery, beyond it they do
        CHECK_FALSE(c.cc.on_dupack_threshold(c.now, c.una, c.nxt, c.nxt - c.una));
        c.ack(MSS);
        CHECK(c.cc.on_dupack_threshold(c.now, c.una, c.nxt, c.nxt - c.una));
        CHECK(c.cc.ssthresh() == 7 * MSS);  // flight 14 MSS / 2
    }
    SECTION("full ACK with nothing outstanding: cwnd = flight + 1 MSS (no burst)") {
        CHECK(c.ack(20 * MSS - c.una) == ack_outcome::RECOVERY_EXIT);
        CHECK(c.cc.cwnd() == 2 * MSS);
        CHECK(c.cc.ssthresh() == 10 * MSS);
        CHECK(c.cc.in_slow_start());
    }
}

TEST_CASE("newreno: RTO sets the loss window and ssthresh, repeated timeouts hold ssthresh",
          "[cc][newreno][rto]") {
    conn c(make(cc_kind::NEWRENO, 20, 20));
    c.send_segments(20);
    REQUIRE(c.cc.on_dupack_threshold(c.now, c.una, c.nxt, c.nxt - c.una));
    c.cc.on_rto(c.now, c.nxt, c.nxt - c.una);
    CHECK_FALSE(c.cc.in_recovery());
    CHECK(c.cc.cwnd() == MSS);
    CHECK(c.cc.ssthresh() == 10 * MSS);
    c.cc.on_rto(c.now, c.nxt, 4 * MSS, true);  // backed-off retransmission timed out again
    CHECK(c.cc.ssthresh() == 10 * MSS);
    CHECK(c.cc.cwnd() == MSS);
    c.cc.on_rto(c.now, c.nxt, 3 * MSS);  // a fresh timeout: max(flight/2, 2 MSS)
    CHECK(c.cc.ssthresh() == 2 * MSS);
    // stale dupacks (snd_una <= recover) do not trigger fast retransmit after an RTO
    CHECK_FALSE(c.cc.on_dupack_threshold(c.now, c.una, c.nxt, c.nxt - c.una));
    c.ack(MSS);  // slow start again
    CHECK(c.cc.cwnd() == 2 * MSS);
}

// ---------------------------------------------------------------------------------------------
// ECN*

TEST_CASE("ecn_star: ECE halves once per window, CWR requested, NewReno ignores ECE", "[cc][ecn]") {
    SECTION("ECN*") {
        conn c(make(cc_kind::ECN_STAR, 20, 20));
        conn ref(make(cc_kind::ECN_STAR, 20, 20));
        CHECK(c.cc.ecn_capable());
        c.send_segments(20);
        ref.send_segments(20);
        c.ack(MSS, true);
        ref.ack(MSS, true);
        CHECK(c.cc.cwnd() == 10 * MSS);
        CHECK(c.cc.ssthresh() == 10 * MSS);
        CHECK(c.cc.should_set_cwr());
        c.cc.on_cwr_sent();
        CHECK_FALSE(c.cc.should_set_cwr());
        // the rest of the window: every ACK marked vs none marked -> identical windows
        for (int i = 0; i < 19; ++i) {
            c.ack(MSS, true);
            ref.ack(MSS, false);
        }
        CHECK(c.cc.cwnd() == ref.cc.cwnd());
        CHECK(c.cc.cwnd() == 11 * MSS);  // 19 MSS acked >= 10 MSS: byte counting +1
        CHECK(c.cc.ecn_reductions() == 1);
        CHECK_FALSE(c.cc.should_set_cwr());
        // next window: the first ACK beyond the reduction point may cut again
        c.send_segments(11);
        c.ack(MSS, true);
        CHECK(c.cc.cwnd() == 11 * MSS / 2);
        CHECK(c.cc.ecn_reductions() == 2);
        CHECK(c.cc.should_set_cwr());
    }
    SECTION("a loss reduction opens the same once-per-window guard and requests CWR") {
        conn c(make(cc_kind::ECN_STAR, 20, 20));
        c.send_segments(20);
        REQUIRE(c.cc.on_dupack_threshold(c.now, c.una, c.nxt, c.nxt - c.una));
        CHECK(c.cc.should_set_cwr());
        c.ack(20 * MSS, true);  // full ACK carrying ECE: recovery exit, no extra cut
        CHECK(c.cc.cwnd() == 2 * MSS);
        CHECK(c.cc.ssthresh() == 10 * MSS);
        CHECK(c.cc.ecn_reductions() == 0);
    }
    SECTION("NewReno is not ECN-capable") {
        conn c(make(cc_kind::NEWRENO, 20, 20));
        CHECK_FALSE(c.cc.ecn_capable());
        c.round(20, {1});
        CHECK(c.cc.cwnd() == 21 * MSS);
        CHECK(c.cc.ecn_reductions() == 0);
        CHECK_FALSE(c.cc.should_set_cwr());
    }
}

// ---------------------------------------------------------------------------------------------
// DCTCP

TEST_CASE("dctcp: alpha <- (1-g) alpha + g F once per window of data", "[cc][dctcp]") {
    cc_params p = make(cc_kind::DCTCP, 10, 10);
    CHECK(p.dctcp_g == 1.0 / 16);
    SECTION("alpha0 = 1, ten unmarked windows -> (15/16)^10") {
        conn c(p);
        CHECK(c.cc.alpha() == 1.0);
        c.send_segments(10);
        for (int i = 0; i < 9; ++i) c.ack(MSS);
        CHECK(c.cc.windows_observed() == 0);  // mid-window: no update yet
        CHECK(c.cc.alpha() == 1.0);
        c.ack(MSS);
        CHECK(c.cc.windows_observed() == 1);
        for (int w = 1; w < 10; ++w) c.round(10);
        CHECK(c.cc.windows_observed() == 10);
        CHECK(c.cc.last_f() == 0.0);
        CHECK(c.cc.alpha() == Approx(std::pow(15.0 / 16.0, 10)).epsilon(1e-12));
        CHECK(c.cc.alpha() == Approx(0.524460475048727).epsilon(1e-12));
    }
    SECTION("F = 0.5 then F = 0.25: 0.96875, 0.923828125") {
        conn c(p);
        c.round(10, {1, 0});
        CHECK(c.cc.last_f() == 0.5);
        CHECK(c.cc.alpha() == 0.96875);
        c.round(8, {1, 0, 0, 0});
        CHECK(c.cc.last_f() == 0.25);
        CHECK(c.cc.alpha() == 0.923828125);
        CHECK(c.cc.windows_observed() == 2);
    }
    SECTION("F is byte-weighted; initial alpha 0 configurable") {
        p.dctcp_initial_alpha = 0.0;
        conn c(p);
        c.send_segments(4);
        c.ack(MSS, true);
        c.ack(3 * MSS, false);
        CHECK(c.cc.last_f() == 0.25);
        CHECK(c.cc.alpha() == 0.25 / 16);
    }
}

TEST_CASE("dctcp: ECE cuts cwnd(1 - alpha/2) at most once per window, floor 2 MSS", "[cc][dctcp]") {
    SECTION("cut with the measured alpha, once per window") {
        conn c(make(cc_kind::DCTCP, 100, 100));
        for (int w = 0; w < 10; ++w) c.round(10);
        CHECK(c.cc.cwnd() == 101 * MSS);  // 100 MSS acked in CA: +1 MSS
        const double a10 = std::pow(15.0 / 16.0, 10);
        REQUIRE(c.cc.alpha() == Approx(a10).epsilon(1e-12));
        const std::uint64_t cw = c.cc.cwnd();
        c.send_segments(10);
        c.ack(MSS, true);
        const std::uint64_t cut = c.cc.cwnd();
        CHECK(static_cast<double>(cut) == Approx(cw * (1 - a10 / 2)).margin(0.5));
        CHECK(cut == 108792);  // 147460 * (1 - 0.52446/2), rounded
        CHECK(c.cc.ssthresh() == cut);
        CHECK(c.cc.should_set_cwr());
        for (int i = 0; i < 9; ++i) c.ack(MSS, true);  // same window: no further cut
        CHECK(c.cc.cwnd() == cut);
        CHECK(c.cc.ecn_reductions() == 1);
        CHECK(c.cc.last_f() == 1.0);
        const double a11 = a10 * 15 / 16 + 1.0 / 16;
        CHECK(c.cc.alpha() == Approx(a11).epsilon(1e-12));
        c.send_segments(10);
        c.ack(MSS, true);  // next window: cut again with the updated alpha
        CHECK(static_cast<double>(c.cc.cwnd()) == Approx(cut * (1 - a11 / 2)).margin(0.5));
        CHECK(c.cc.ecn_reductions() == 2);
    }
    SECTION("never below 2 MSS, never raised") {
        conn c(make(cc_kind::DCTCP, 3, 3));
        c.send_segments(3);
        c.ack(MSS, true);  // alpha 1: 1.5 MSS -> floor 2 MSS
        CHECK(c.cc.cwnd() == 2 * MSS);
        CHECK(c.cc.ssthresh() == 2 * MSS);
        c.cc.on_rto(c.now, c.nxt, c.nxt - c.una);
        c.ack(3 * MSS, true);  // beyond the RTO's reduction point: cwnd 1 MSS stays 1 MSS
        CHECK(c.cc.cwnd() == MSS);
    }
}

TEST_CASE("dctcp: slide table, 8/10 marked -> cut 40%, 1/10 -> 5% once alpha has converged",
          "[cc][dctcp][oracle]") {
    struct row {
        std::vector<int> marks;
        double f;
    };
    const std::vector<row> rows = {{{1, 0, 1, 1, 1, 1, 0, 1, 1, 1}, 0.8},
                                   {{0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 0.1}};
    for (const row& r : rows) {
        INFO("F = " << r.f);
        // 1. alpha converges to F under steady marking (|1 - F| (15/16)^n < 1e-3 for n >= 107)
        conn c(make(cc_kind::DCTCP, 10, 10));
        for (int w = 0; w < 150; ++w) c.round(10, r.marks);
        CHECK(c.cc.last_f() == Approx(r.f).epsilon(1e-12));
        CHECK(c.cc.alpha() == Approx(r.f).margin(1e-3));
        CHECK(c.cc.ecn_reductions() == 150);  // one cut per window
        // 2. a window of 1000 MSS with that alpha is cut by alpha/2 ~= F/2. (Steady marking has
        // long since pinned the first connection at the 2 MSS floor, so carry alpha over.)
        cc_params p = make(cc_kind::DCTCP, 1000, 1000);
        p.dctcp_initial_alpha = c.cc.alpha();
        conn big(p);
        big.send_segments(1000);
        big.ack(MSS, true);
        const double cut = 1.0 - static_cast<double>(big.cc.cwnd()) / (1000.0 * MSS);
        CHECK(cut == Approx(r.f / 2).margin(1e-3));
    }
}

TEST_CASE("dctcp rtt_fair: every marked ACK subtracts alpha/2 (eq 3.35)", "[cc][dctcp][rtt_fair]") {
    cc_params p = make(cc_kind::DCTCP, 100, 100);
    p.rtt_fair = true;
    conn c(p);
    c.send_segments(100);
    c.ack(MSS, true);
    CHECK(c.cc.cwnd() == 100 * MSS - MSS / 2);  // alpha = 1: half a segment
    c.ack(MSS, true);
    CHECK(c.cc.cwnd() == 100 * MSS - MSS);  // no once-per-window guard
    CHECK(c.cc.should_set_cwr());
    // a full window of marks: 100 * alpha/2 = 50 MSS down, byte counting +1 MSS at ACK 67
    for (int i = 2; i < 100; ++i) c.ack(MSS, true);
    CHECK(c.cc.cwnd() == 51 * MSS);
    CHECK(c.cc.ecn_reductions() == 100);
    CHECK(c.cc.alpha() == 1.0);
    SECTION("a mark in slow start ends slow start") {
        cc_params q = make(cc_kind::DCTCP, 10);
        q.rtt_fair = true;
        conn s(q);
        s.send_segments(10);
        s.ack(MSS, true);
        CHECK_FALSE(s.cc.in_slow_start());
        CHECK(s.cc.cwnd() == 10 * MSS - MSS / 2);
    }
}

// ---------------------------------------------------------------------------------------------
// CUBIC

namespace {

constexpr ps_t T0 = PS_PER_S;

/// CUBIC at W = 100 MSS, loss by 3 dupacks, recovery left at T0 with 80 MSS in flight; the
/// next ACK (at T0, carrying an RTT sample `rtt`) starts the epoch.
conn cubic_after_loss(cc_params p, ps_t rtt) {
    conn c(p);
    c.send_segments(100);
    REQUIRE(c.cc.on_dupack_threshold(c.now, c.una, c.nxt, c.nxt - c.una));
    c.send_segments(80);
    c.now = T0;
    REQUIRE(c.ack(100 * MSS, false, rtt) == ack_outcome::RECOVERY_EXIT);
    REQUIRE(c.cc.cwnd() == 102200);
    c.ack(MSS, false, rtt);
    REQUIRE(c.cc.cubic_epoch_started());
    return c;
}

}  // namespace

TEST_CASE("cubic: loss cuts to beta*W and W(t) = C(t-K)^3 + W_max with K = cbrt(W_max(1-beta)/C)",
          "[cc][cubic]") {
    const cc_params p = make(cc_kind::CUBIC, 100, 100);
    {
        conn c(p);
        c.send_segments(100);
        REQUIRE(c.cc.on_dupack_threshold(c.now, c.una, c.nxt, c.nxt - c.una));
        CHECK(c.cc.cubic_w_max() == 100.0 * MSS);
        CHECK(c.cc.ssthresh() == 102200);  // 0.7 * 146000
        CHECK(c.cc.cwnd() == 102200 + 3 * MSS);
    }
    conn c = cubic_after_loss(p, 100 * PS_PER_MS);
    CHECK(c.cc.cubic_k() == Approx(std::cbrt(100 * 0.3 / 0.4)).epsilon(1e-12));
    CHECK(c.cc.cubic_k() == Approx(4.217163326508746).epsilon(1e-12));
    CHECK(c.cc.cubic_window(0.0) == Approx(70.0 * MSS).epsilon(1e-12));
    CHECK(c.cc.cubic_window(1.0) == Approx(86.68076383512988 * MSS).epsilon(1e-12));
    CHECK(c.cc.cubic_window(2.0) == Approx(95.64033568663878 * MSS).epsilon(1e-12));
    CHECK(c.cc.cubic_window(c.cc.cubic_k()) == Approx(100.0 * MSS).epsilon(1e-12));
    CHECK(c.cc.cubic_window(6.0) == Approx(102.26670325646442 * MSS).epsilon(1e-12));
    // cwnd tracks the curve one RTT ahead: many ACKs at t = 1 s converge on W(1.1 s) from below
    // (RTT 100 ms: W_est(1 s) = 70 + 0.529 * 10 = 75.3 MSS < W(1 s), so the cubic region rules)
    c.now = T0 + PS_PER_S;
    const double target = c.cc.cubic_window(1.1);
    for (int i = 0; i < 3000; ++i) c.ack(MSS);
    CHECK(static_cast<double>(c.cc.cwnd()) <= target);
    CHECK(static_cast<double>(c.cc.cwnd()) == Approx(target).margin(2));
    CHECK(static_cast<double>(c.cc.cwnd()) > 87.0 * MSS);  // W(1.1 s) = 87.88 MSS
}

TEST_CASE("cubic: the TCP-friendly region dominates at small RTT", "[cc][cubic]") {
    cc_params p = make(cc_kind::CUBIC, 100, 100);
    SECTION("RTT 100 us, t = 10 ms: W_est = 70 + 3(0.3)/1.7 * 100 MSS = 122.94 MSS") {
        conn c = cubic_after_loss(p, 100 * PS_PER_US);
        c.now = T0 + 10 * PS_PER_MS;
        c.ack(MSS);
        CHECK(c.cc.cwnd() == 179494);
    }
    SECTION("same, TCP-friendly region disabled: cubic growth only") {
        p.cubic_tcp_friendly = false;
        conn c = cubic_after_loss(p, 100 * PS_PER_US);
        c.now = T0 + 10 * PS_PER_MS;
        c.ack(MSS);
        CHECK(c.cc.cwnd() < 71 * MSS);
    }
    SECTION("RTT 100 ms, t = 1 s: W_est = 75.3 MSS < W(t), not TCP-friendly") {
        conn c = cubic_after_loss(p, 100 * PS_PER_MS);
        c.now = T0 + PS_PER_S;
        c.ack(MSS);
        CHECK(c.cc.cwnd() < 71 * MSS);
        CHECK(c.cc.cwnd() > 70 * MSS);
    }
}

TEST_CASE("cubic: fast convergence lowers W_max when congestion recurs below the last W_max",
          "[cc][cubic]") {
    cc_params p = make(cc_kind::CUBIC, 100, 100);
    p.cubic_ecn = true;  // ECE is a congestion event, which gives exact windows without recovery
    bool fast = true;
    SECTION("fast convergence on") {
        fast = true;
    }
    SECTION("fast convergence off") {
        fast = false;
    }
    p.cubic_fast_convergence = fast;
    conn c(p);
    CHECK(c.cc.ecn_capable());
    c.send_segments(100);
    c.ack(MSS, true, RTT);
    CHECK(c.cc.cubic_w_max() == 100.0 * MSS);  // first event: no earlier maximum
    CHECK(c.cc.cwnd() == 102200);
    CHECK(c.cc.should_set_cwr());
    for (int i = 1; i < 100; ++i) c.ack(MSS, true);  // same window: no second event
    CHECK(c.cc.ecn_reductions() == 1);
    const std::uint64_t w2 = c.cc.cwnd();
    REQUIRE(w2 < 100 * MSS);
    c.send_segments(1);
    c.ack(MSS, true);
    CHECK(c.cc.ecn_reductions() == 2);
    CHECK(c.cc.cwnd() == static_cast<std::uint64_t>(std::llround(0.7 * w2)));
    if (fast)
        CHECK(c.cc.cubic_w_max() == Approx(w2 * 0.85).epsilon(1e-12));  // W (1 + beta) / 2
    else
        CHECK(c.cc.cubic_w_max() == Approx(static_cast<double>(w2)).epsilon(1e-12));
}

TEST_CASE("cubic: RTO uses beta for ssthresh and forgets W_max", "[cc][cubic][rto]") {
    conn c = cubic_after_loss(make(cc_kind::CUBIC, 100, 100), RTT);
    CHECK(c.cc.cubic_w_max() == 100.0 * MSS);
    const std::uint64_t w = c.cc.cwnd();
    c.cc.on_rto(c.now, c.nxt, c.nxt - c.una);
    CHECK(c.cc.cwnd() == MSS);
    CHECK(c.cc.ssthresh() == static_cast<std::uint64_t>(std::llround(0.7 * w)));  // not flight/2
    CHECK(c.cc.cubic_w_max() == 0.0);
    CHECK_FALSE(c.cc.cubic_epoch_started());
    CHECK_FALSE(c.cc.in_recovery());
}

// ---------------------------------------------------------------------------------------------
// HyStart (Linux tcp_cubic.c)

namespace {

/// One slow-start round: `w` segments sent at the round's start, their ACKs `gap` apart, each
/// with the RTT sample `rtt`; the next round starts `rtt` after this one.
void ack_train(conn& c, std::uint64_t w, ps_t gap, ps_t rtt) {
    const ps_t start = c.now;
    c.send_segments(w);
    for (std::uint64_t i = 0; i < w; ++i) {
        c.now = start + i * gap;
        c.ack(MSS, false, rtt);
    }
    c.now = start + rtt;
}

constexpr ps_t GAP_1G = 12 * PS_PER_US;  // one 1500 B frame at 1 Gb/s

}  // namespace

TEST_CASE("hystart: an ACK train longer than min RTT / 2 ends slow start at that cwnd",
          "[cc][cubic][hystart]") {
    conn c(make(cc_kind::CUBIC));
    REQUIRE(c.cc.params().hystart());
    const ps_t rtt = PS_PER_MS;
    // Rounds of 10, 20 and 40 segments: the trains last at most 39 x 12 = 468 us <= 500 us.
    for (std::uint64_t w : {10u, 20u, 40u}) ack_train(c, w, GAP_1G, rtt);
    CHECK(c.cc.cwnd() == 80 * MSS);
    CHECK(c.cc.in_slow_start());
    // In the round of 80 the 43rd ACK (i = 42: 504 us into the train) finds it; cwnd is then
    // 80 + 42 segments, and that ACK already counts in congestion avoidance.
    ack_train(c, 80, GAP_1G, rtt);
    CHECK(c.cc.ssthresh() == 122 * MSS);
    CHECK_FALSE(c.cc.in_slow_start());
    CHECK(c.cc.cwnd() < 124 * MSS);  // 37 more ACKs in congestion avoidance, not 37 MSS
    CHECK(c.cc.hystart_train_exits() == 1);
    CHECK(c.cc.hystart_delay_exits() == 0);
    // Without HyStart the same rounds stay in slow start: cwnd 160.
    cc_params off = make(cc_kind::CUBIC);
    off.cubic_hystart = false;
    conn d(off);
    for (std::uint64_t w : {10u, 20u, 40u, 80u}) ack_train(d, w, GAP_1G, rtt);
    CHECK(d.cc.cwnd() == 160 * MSS);
    CHECK(d.cc.in_slow_start());
}

TEST_CASE("hystart: the round's smallest of 8 samples above min RTT + clamp(min/8, 4, 16 ms)",
          "[cc][cubic][hystart]") {
    const ps_t base = 20 * PS_PER_MS;  // threshold: 20 + max(2.5, 4) = 24 ms
    for (const ps_t queued : {24 * PS_PER_MS, 24 * PS_PER_MS + 1}) {
        conn c(make(cc_kind::CUBIC));
        ack_train(c, 10, GAP_1G, base);
        ack_train(c, 20, GAP_1G, base);
        ack_train(c, 40, GAP_1G, queued);
        if (queued == 24 * PS_PER_MS) {
            CHECK(c.cc.in_slow_start());  // not above the threshold
            CHECK(c.cc.cwnd() == 80 * MSS);
        } else {
            // The first 8 samples of the round are taken, the 9th ACK (cwnd 48) checks.
            CHECK(c.cc.ssthresh() == 48 * MSS);
            CHECK(c.cc.hystart_delay_exits() == 1);
            CHECK(c.cc.hystart_train_exits() == 0);
        }
    }
}

TEST_CASE("hystart: not below 16 MSS, once per slow start until an RTO, CUBIC and opt-in GEMINI",
          "[cc][cubic][gemini][hystart]") {
    // A long train below 16 MSS does nothing (cwnd is 8 + i at ACK i, before it grows).
    conn small(make(cc_kind::CUBIC, 8));
    ack_train(small, 8, 100 * PS_PER_US, 100 * PS_PER_US);
    CHECK(small.cc.in_slow_start());
    CHECK(small.cc.hystart_train_exits() == 0);

    conn c(make(cc_kind::CUBIC));
    for (std::uint64_t w : {10u, 20u, 40u, 80u}) ack_train(c, w, GAP_1G, PS_PER_MS);
    REQUIRE(c.cc.hystart_train_exits() == 1);
    c.cc.on_rto(c.now, c.nxt, c.nxt - c.una);
    // Slow start again up to ssthresh (0.7 x cwnd, 85 MSS): HyStart is armed again and ends it
    // early, here in the round of 32 with ACKs 24 us apart (i = 21: 504 us).
    REQUIRE(c.cc.ssthresh() > 60 * MSS);
    for (std::uint64_t w : {1u, 2u, 4u, 8u, 16u}) ack_train(c, w, GAP_1G, PS_PER_MS);
    CHECK(c.cc.hystart_train_exits() == 1);
    ack_train(c, 32, 2 * GAP_1G, PS_PER_MS);
    CHECK(c.cc.hystart_train_exits() == 2);
    CHECK(c.cc.ssthresh() == (32 + 21) * MSS);

    // Other kinds never run it; GEMINI when asked, paced: a train of min RTT (not half).
    for (cc_kind k : {cc_kind::NEWRENO, cc_kind::DCTCP, cc_kind::GEMINI}) {
        cc_params p = make(k);
        p.gemini.capacity_bps = 1'000'000'000ull;
        CHECK_FALSE(p.hystart());
    }
    cc_params g = make(cc_kind::GEMINI);
    g.gemini.capacity_bps = 1'000'000'000ull;
    g.gemini.hystart = true;
    conn gc(g);
    for (std::uint64_t w : {10u, 20u, 40u, 80u}) ack_train(gc, w, GAP_1G, PS_PER_MS);
    CHECK(gc.cc.hystart_train_exits() == 0);  // 79 x 12 = 948 us <= 1 ms
    ack_train(gc, 160, GAP_1G, PS_PER_MS);
    CHECK(gc.cc.hystart_train_exits() == 1);
    CHECK(gc.cc.ssthresh() == (160 + 84) * MSS);  // i = 84: 1008 us
}

// ---------------------------------------------------------------------------------------------
// RFC 6298 RTT estimator

// ---------------------------------------------------------------------------------------------
// GEMINI (seed-002 §1.1, Algorithm 1; Table 3.4)

namespace {

cc_params gemini(std::uint64_t capacity_bps = 1'000'000'000ull,
                 std::uint64_t ssthresh_segments = 10) {
    cc_params p = make(cc_kind::GEMINI, 10, ssthresh_segments);
    p.gemini.capacity_bps = capacity_bps;
    return p;
}

}  // namespace

TEST_CASE("gemini: K, F and h from Table 3.4 and the derived values of seed-002 §1.1",
          "[cc][gemini]") {
    conn c(gemini());
    CHECK(c.cc.ecn_capable());
    // Before any RTT sample: F = 4 (RTT_base 0), h = h_min.
    CHECK(c.cc.gemini_f() == 4.0);
    CHECK(c.cc.gemini_h() == 0.1);
    CHECK(c.cc.params().gemini.k_bytes == 75'000);  // 50 packets of 1500 B per Gb/s
    c.send_segments(1);
    c.ack(MSS, false, 10 * PS_PER_MS);  // RTT_base = 10 ms
    // F = 4K / (C RTT + K) = 300 000 / (1 250 000 + 75 000); h = 1.2e-7 x 1e9 x 0.01 = 1.2.
    CHECK(c.cc.gemini_f() == Approx(300'000.0 / 1'325'000.0).epsilon(1e-12));
    CHECK(c.cc.gemini_h() == Approx(1.2).epsilon(1e-12));
    CHECK(c.cc.gemini_rtt_base() == 10 * PS_PER_MS);

    conn intra(gemini());
    intra.send_segments(1);
    intra.ack(MSS, false, 200 * PS_PER_US);
    CHECK(intra.cc.gemini_f() == Approx(3.0).epsilon(1e-12));  // not clamped (max_cut is)
    CHECK(intra.cc.gemini_h() == 0.1);                         // 0.024, raised to h_min
    conn far(gemini(10'000'000'000ull));
    far.send_segments(1);
    far.ack(MSS, false, 10 * PS_PER_MS);
    CHECK(far.cc.gemini_h() == 5.0);  // 12, capped at h_max
    CHECK(far.cc.params().gemini.k_bytes == 750'000);
}

TEST_CASE("gemini: additive increase of h MSS per window of acked bytes", "[cc][gemini]") {
    conn c(gemini());  // ssthresh 10 segments = IW: congestion avoidance from the start
    c.send_segments(1);
    c.ack(MSS, false, 10 * PS_PER_MS);  // h = 1.2
    const std::uint64_t w0 = c.cc.cwnd();
    // Acking one window of bytes, MSS at a time, adds h x MSS x sum(MSS / cwnd_i).
    double exact = static_cast<double>(w0);
    double cw = static_cast<double>(w0);
    const std::uint64_t n = w0 / MSS;
    for (std::uint64_t i = 0; i < n; ++i) {
        cw += 1.2 * MSS * MSS / std::floor(cw);
        exact = cw;
        c.send_segments(1);
        c.ack(MSS);
    }
    CHECK(c.cc.cwnd() == static_cast<std::uint64_t>(std::floor(exact)));
    CHECK(static_cast<double>(c.cc.cwnd() - w0) > 1.1 * MSS);
    CHECK(static_cast<double>(c.cc.cwnd() - w0) <= 1.2 * MSS);
    CHECK(c.cc.ecn_reductions() == 0);
}

TEST_CASE("gemini: an ECE cut is alpha x F once per window, and no growth while congested",
          "[cc][gemini]") {
    cc_params p = gemini();
    p.gemini.f = 0.25;  // fixed F; alpha starts at 1
    conn c(p);
    c.send_segments(20);
    const std::uint64_t w = c.cc.cwnd();
    c.ack(MSS, true, PS_PER_MS);
    // The first ACK closes alpha's first window (all ECE): alpha = 15/16 + 1/16 = 1.
    CHECK(c.cc.alpha() == 1.0);
    CHECK(c.cc.cwnd() == static_cast<std::uint64_t>(std::llround(w * 0.75)));
    CHECK(c.cc.ssthresh() == c.cc.cwnd());
    CHECK(c.cc.should_set_cwr());
    const std::uint64_t cut = c.cc.cwnd();
    c.ack(MSS, true);  // same window: no second cut, and no increase
    CHECK(c.cc.cwnd() == cut);
    c.ack(MSS, false);  // not congested: grows
    CHECK(c.cc.cwnd() > cut);
    CHECK(c.cc.ecn_reductions() == 1);
    CHECK(c.cc.gemini_wan_reductions() == 0);

    p.gemini.f = 3.0;  // alpha F = 3: the cut stops at max_cut = 0.5
    conn big(p);
    big.send_segments(20);
    big.ack(MSS, true, PS_PER_MS);
    CHECK(big.cc.cwnd() == w / 2);
}

TEST_CASE("gemini: RTT_min above RTT_base + T cuts by beta, the larger factor wins",
          "[cc][gemini]") {
    cc_params p = gemini();
    p.gemini.f = 0.05;
    p.dctcp_initial_alpha = 1.0;
    conn c(p);
    // Window 1 (ends at the first ACK's snd_nxt = 1 segment): base sample 10 ms.
    c.send_segments(1);
    c.ack(MSS, false, 10 * PS_PER_MS);
    CHECK(c.cc.gemini_rtt_min() == 10 * PS_PER_MS);
    // Window 2: samples of 15 ms (not above 10 + 5) then 15.001 ms.
    c.send_segments(2);
    c.ack(MSS, false, 15 * PS_PER_MS);
    CHECK(c.cc.gemini_rtt_min() == 10 * PS_PER_MS);  // window 2 still open
    const std::uint64_t before = c.cc.cwnd();
    c.ack(MSS, false, 15 * PS_PER_MS + 1);  // closes window 2: RTT_min = 15 ms, not > 15 ms
    CHECK(c.cc.gemini_rtt_min() == 15 * PS_PER_MS);
    CHECK(c.cc.cwnd() > before);
    CHECK(c.cc.gemini_wan_reductions() == 0);
    // Window 3: every sample 15 ms + 1 ps; the ACK that closes it sees RTT_min > base + T.
    c.send_segments(2);
    c.ack(MSS, false, 15 * PS_PER_MS + 1);
    const std::uint64_t w3 = c.cc.cwnd();
    c.ack(MSS, false, 15 * PS_PER_MS + 1);
    CHECK(c.cc.gemini_rtt_min() == 15 * PS_PER_MS + 1);
    CHECK(c.cc.gemini_wan_reductions() == 1);
    CHECK(c.cc.cwnd() == static_cast<std::uint64_t>(std::llround(w3 * 0.8)));
    // The next window: ECE as well, alpha F = 0.05 < beta = 0.2, so beta is the cut.
    c.send_segments(4);
    const std::uint64_t w = c.cc.cwnd();
    c.ack(MSS, true, 15 * PS_PER_MS + 1);
    CHECK(c.cc.cwnd() == static_cast<std::uint64_t>(std::llround(w * 0.8)));
    CHECK(c.cc.gemini_wan_reductions() == 2);
    CHECK(c.cc.ecn_reductions() == 1);
}

TEST_CASE("gemini: a loss cuts ssthresh by beta, RTT_base over a finite window forgets",
          "[cc][gemini][loss]") {
    conn c(gemini());
    c.send_segments(20);
    const std::uint64_t w = c.cc.cwnd();
    REQUIRE(c.cc.on_dupack_threshold(c.now, c.una, c.nxt, c.nxt - c.una));
    CHECK(c.cc.ssthresh() == static_cast<std::uint64_t>(std::llround(w * 0.8)));

    cc_params p = gemini();
    p.gemini.rtt_base_window = 10 * PS_PER_MS;
    conn b(p);
    b.send_segments(100);
    b.now = 0;
    b.ack(MSS, false, 2 * PS_PER_MS);  // bucket [0, 10 ms): 2 ms
    b.now = 12 * PS_PER_MS;
    b.ack(MSS, false, 4 * PS_PER_MS);  // bucket [12, 22 ms): 4 ms; the last one still counts
    CHECK(b.cc.gemini_rtt_base() == 2 * PS_PER_MS);
    b.now = 23 * PS_PER_MS;
    b.ack(MSS, false, 6 * PS_PER_MS);  // bucket [23, 33 ms): the 2 ms one is forgotten
    CHECK(b.cc.gemini_rtt_base() == 4 * PS_PER_MS);
    b.now = 50 * PS_PER_MS;
    b.ack(MSS, false, 7 * PS_PER_MS);  // a gap longer than a window forgets both
    CHECK(b.cc.gemini_rtt_base() == 7 * PS_PER_MS);
    CHECK(c.cc.min_rtt() == 0);

    cc_params bad = gemini();
    bad.gemini.capacity_bps = 0;
    CHECK_THROWS_AS(bad.validate(), std::invalid_argument);
    bad = gemini();
    bad.gemini.beta = 1.0;
    CHECK_THROWS_AS(bad.validate(), std::invalid_argument);
    bad = gemini();
    bad.gemini.h_min = 6;
    CHECK_THROWS_AS(bad.validate(), std::invalid_argument);
}

TEST_CASE("gemini: rtt_noise adds U[0, x] to each sample, a stream per seed, GEMINI only",
          "[cc][gemini]") {
    // Table 3.5: the thesis added U[0, x] to every RTT sample its kernel module saw.
    const auto samples = [](cc_kind kind, ps_t noise, std::uint64_t seed) {
        cc_params p = kind == cc_kind::GEMINI ? gemini() : make(kind, 10, 10);
        p.gemini.rtt_noise = noise;
        p.gemini.noise_seed = seed;
        conn c(p);
        std::vector<ps_t> got;
        for (int i = 0; i < 200; ++i) {
            c.send_segments(1);  // each ACK closes its window: RTT_min is that sample
            c.ack(MSS, false, 10 * PS_PER_MS);
            got.push_back(kind == cc_kind::GEMINI ? c.cc.gemini_rtt_min() : c.cc.min_rtt());
        }
        return got;
    };
    const std::vector<ps_t> quiet = samples(cc_kind::GEMINI, 0, 7);
    CHECK(std::all_of(quiet.begin(), quiet.end(), [](ps_t s) { return s == 10 * PS_PER_MS; }));
    const std::vector<ps_t> a = samples(cc_kind::GEMINI, 2 * PS_PER_MS, 7);
    CHECK(std::all_of(a.begin(), a.end(),
                      [](ps_t s) { return s >= 10 * PS_PER_MS && s < 12 * PS_PER_MS; }));
    const auto [lo, hi] = std::minmax_element(a.begin(), a.end());
    CHECK(*lo < 10 * PS_PER_MS + 100 * PS_PER_US);  // 200 draws span the range
    CHECK(*hi > 12 * PS_PER_MS - 100 * PS_PER_US);
    double mean = 0;
    for (ps_t s : a) mean += static_cast<double>(s - 10 * PS_PER_MS) / 200;
    CHECK(mean == Approx(static_cast<double>(PS_PER_MS)).epsilon(0.1));
    CHECK(samples(cc_kind::GEMINI, 2 * PS_PER_MS, 7) == a);  // same seed, same stream
    CHECK(samples(cc_kind::GEMINI, 2 * PS_PER_MS, 8) != a);
    // Another kind ignores the key: its min RTT stays the true one.
    const std::vector<ps_t> cubic = samples(cc_kind::CUBIC, 2 * PS_PER_MS, 7);
    CHECK(std::all_of(cubic.begin(), cubic.end(), [](ps_t s) { return s == 10 * PS_PER_MS; }));
}

TEST_CASE("rtt_estimator: RFC 6298 first and second samples", "[rtt]") {
    rtt_params p;
    p.min_rto = 1 * PS_PER_MS;
    rtt_estimator r(p);
    CHECK_FALSE(r.has_sample());
    CHECK(r.rto() == 1 * PS_PER_S);  // initial RTO
    r.on_sample(80 * PS_PER_MS);
    CHECK(r.srtt() == 80 * PS_PER_MS);    // SRTT = R
    CHECK(r.rttvar() == 40 * PS_PER_MS);  // RTTVAR = R/2
    CHECK(r.rto() == 240 * PS_PER_MS);    // SRTT + 4 RTTVAR
    r.on_sample(160 * PS_PER_MS);
    // RTTVAR first with the old SRTT: 3/4 * 40 + 1/4 * |80 - 160| = 50; SRTT = 7/8 80 + 1/8 160
    CHECK(r.rttvar() == 50 * PS_PER_MS);
    CHECK(r.srtt() == 90 * PS_PER_MS);
    CHECK(r.rto() == 290 * PS_PER_MS);
    SECTION("clock granularity G dominates a small 4*RTTVAR") {
        p.granularity = 500 * PS_PER_MS;
        rtt_estimator g(p);
        g.on_sample(80 * PS_PER_MS);
        CHECK(g.rto() == 580 * PS_PER_MS);
    }
}

TEST_CASE("rtt_estimator: min/max clamp and exponential backoff", "[rtt]") {
    rtt_params p;
    p.min_rto = 200 * PS_PER_MS;
    p.max_rto = 1 * PS_PER_S;
    rtt_estimator r(p);
    r.on_sample(10 * PS_PER_US);
    CHECK(r.rto() == 200 * PS_PER_MS);  // 30 us clamped up to min RTO
    r.backoff();
    CHECK(r.rto() == 400 * PS_PER_MS);
    r.backoff();
    CHECK(r.rto() == 800 * PS_PER_MS);
    r.backoff();
    CHECK(r.rto() == 1 * PS_PER_S);  // capped
    r.backoff();
    CHECK(r.rto() == 1 * PS_PER_S);
    CHECK(r.backoffs() == 4);
    r.on_sample(10 * PS_PER_US);  // a new (Karn-valid) sample ends the backoff
    CHECK(r.backoffs() == 0);
    CHECK(r.rto() == 200 * PS_PER_MS);
    rtt_estimator big(p);
    big.on_sample(2 * PS_PER_S);
    CHECK(big.rto() == 1 * PS_PER_S);  // clamped down to max RTO
}
