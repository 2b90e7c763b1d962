// Unit tests of ExpressPass's receiver credit control (ns2-xpass feedback, facts-mmu-credit-
// workload §2.3): start, loss accounting from echoed sequence numbers, the once-per-RTT update
// (increase with w, decrease to the measured delivered rate), its clamps, and the jittered gap;
// and Aeolus's first-RTT book-keeping (probe ACK, NACKs, resend queue) and selective receive.
#include <catch2/catch.hpp>

#include <vector>

#include "fabricsim/host/algo/xpass.h"

using namespace fabricsim;
using namespace fabricsim::host;

namespace {
constexpr double MAX = 64'734'895.0;  // 10G x 84/1622 in bytes/s (ns2's max_credit_rate_)
constexpr ps_t RTT = 20 * PS_PER_US;

/// A controller started at t = 0 that has sent `n` credits at 1 us spacing and seen them all
/// echoed one RTT later.
xpass_credit_control echoed(const xpass_params& p, unsigned n) {
    xpass_credit_control c(p, MAX);
    c.start(0);
    for (unsigned i = 0; i < n; ++i) {
        const std::uint64_t s = c.take_seq();
        c.on_data(s, i * PS_PER_US, i * PS_PER_US + RTT);
    }
    return c;
}
}  // namespace

TEST_CASE("xpass: credits start at alpha x max with w_init", "[xpass]") {
    xpass_params p;
    xpass_credit_control c(p, MAX);
    c.start(5);
    CHECK(c.rate() == 0.5 * MAX);
    CHECK(c.w() == 0.5);
    // No RTT sample yet: no update.
    CHECK_FALSE(c.before_credit(PS_PER_S));
}

TEST_CASE("xpass: echoes count the skipped credits as lost and sample the RTT", "[xpass]") {
    xpass_params p;
    xpass_credit_control c(p, MAX);
    c.start(0);
    for (int i = 0; i < 10; ++i) c.take_seq();
    c.on_data(0, 0, 20 * PS_PER_US);
    CHECK(c.rtt() == 20 * PS_PER_US);
    c.on_data(3, PS_PER_US, 31 * PS_PER_US);  // credits 1 and 2 never came back
    CHECK(c.stats().echoed == 4);
    CHECK(c.stats().lost == 2);
    CHECK(c.rtt() == 22 * PS_PER_US);         // 0.8 x 20 + 0.2 x 30
    c.on_data(2, PS_PER_US, 40 * PS_PER_US);  // a stale echo is ignored
    CHECK(c.stats().echoed == 4);
}

TEST_CASE("xpass: without loss the rate moves by w toward the maximum, w grows from the second",
          "[xpass]") {
    xpass_params p;
    xpass_credit_control c = echoed(p, 30);
    REQUIRE(c.before_credit(RTT + 30 * PS_PER_US));
    // First increase: w stays 0.5 (can_increase_w only set), rate = 0.5 max + 0.5 x 0.5 max.
    CHECK(c.w() == 0.5);
    CHECK(c.rate() == Approx(0.75 * MAX).epsilon(1e-12));
    CHECK(c.last_loss() == 0);
    // Not a full RTT later: no update.
    CHECK_FALSE(c.before_credit(RTT + 30 * PS_PER_US + RTT - 1));
}

TEST_CASE("xpass: w grows by 0.05 per increase from the second, capped at w_max", "[xpass]") {
    xpass_params p;
    p.w_init = 0.1;
    p.alpha = 0.1;
    xpass_credit_control c(p, MAX);
    c.start(0);
    ps_t t = 0;
    auto round = [&] {
        const std::uint64_t s = c.take_seq();
        c.on_data(s, t, t + RTT);
        t += 2 * RTT;
        REQUIRE(c.before_credit(t));
    };
    for (int i = 0; i < 3; ++i) round();
    CHECK(c.w() == Approx(0.2));  // 0.1, then +0.05 twice
    for (int i = 0; i < 10; ++i) round();
    CHECK(c.w() == 0.5);
    CHECK(c.rate() == Approx(MAX).epsilon(0.01));
}

TEST_CASE("xpass: above the target loss the rate drops to the delivered rate x (1 + target)",
          "[xpass]") {
    xpass_params p;
    xpass_credit_control c(p, MAX);
    c.start(0);
    // 100 credits sent, every second one echoed: loss 0.5 over 100 us.
    for (int i = 0; i < 100; ++i) c.take_seq();
    for (std::uint64_t s = 1; s < 100; s += 2) c.on_data(s, 0, RTT);
    const ps_t now = 100 * PS_PER_US;
    REQUIRE(c.before_credit(now));
    const double target = (1 - 0.5) * 0.125;
    const double delivered = 84.0 * 50 / 100e-6;
    CHECK(c.last_loss() == Approx(0.5));
    CHECK(c.rate() == Approx(std::min(delivered * (1 + target), 0.5 * MAX)));
    CHECK(c.w() == 0.25);
    CHECK(c.stats().decreases == 1);
}

TEST_CASE("xpass: total loss sets one credit per RTT, and the rate never leaves its bounds",
          "[xpass]") {
    xpass_params p;
    xpass_credit_control c(p, MAX);
    c.start(0);
    for (int i = 0; i < 10; ++i) c.take_seq();
    c.on_data(9, 0, RTT);  // nine lost, one echoed: loss 0.9
    REQUIRE(c.before_credit(2 * RTT));
    CHECK(c.rate() >= 84.0 / 20e-6);
    CHECK(c.rate() <= MAX);
    CHECK(c.w() == 0.25);
}

TEST_CASE("xpass: the credit gap is the mean credit over the rate, jittered +-10 %", "[xpass]") {
    xpass_params p;
    xpass_credit_control c(p, MAX);
    c.start(0);
    const double mean_ps = 84.0 / (0.5 * MAX) * 1e12;
    CHECK(double(c.gap(0.5)) == Approx(mean_ps).margin(1));
    CHECK(double(c.gap(0.0)) == Approx(0.9 * mean_ps).margin(1));
    CHECK(double(c.gap(0.999999)) == Approx(1.1 * mean_ps).margin(2));
}

// ---------------------------------------------------------------- Aeolus (ExpressPass*)

TEST_CASE("aeolus: the probe's ACK queues exactly the unACKed unscheduled packets", "[aeolus]") {
    aeolus_sender s;
    s.reset(10);
    REQUIRE(s.unscheduled() == 10);
    // Packets 0-7 go unscheduled; 8 and 9 go on credits (never ACKed, never queued).
    for (std::uint64_t p = 0; p < 8; ++p) s.sent_unscheduled(p);
    for (std::uint64_t p : {0, 1, 3, 4, 6}) CHECK(s.on_ack(p));
    CHECK(!s.on_ack(3));   // a duplicate ACK
    CHECK(!s.on_ack(10));  // out of range
    CHECK(s.sent() == 8);
    CHECK(s.acked() == 5);
    CHECK(s.on_probe_ack() == 3);  // 2, 5, 7
    CHECK(s.lost() == 3);
    CHECK(s.queued() == 3);
    CHECK(s.on_probe_ack() == 0);  // queued once
    std::uint64_t p = 0;
    REQUIRE(s.take_resend(p));
    CHECK(p == 2);
    // A late ACK of 5 takes it out of the queue; 7 comes next.
    CHECK(s.on_ack(5));
    CHECK(s.queued() == 1);
    REQUIRE(s.take_resend(p));
    CHECK(p == 7);
    CHECK(!s.take_resend(p));
    CHECK(s.queued() == 0);
}

TEST_CASE("aeolus: NACKs queue a packet once until it is resent, never an ACKed one", "[aeolus]") {
    aeolus_sender s;
    s.reset(4);
    for (std::uint64_t p = 0; p < 4; ++p) s.sent_unscheduled(p);
    CHECK(s.on_ack(0));
    CHECK(!s.request(0));  // ACKed
    CHECK(s.request(1));
    CHECK(!s.request(1));          // queued already
    CHECK(!s.request(4));          // beyond the first RTT
    CHECK(s.on_probe_ack() == 2);  // 2 and 3; 1 was queued by the NACK
    CHECK(s.queued() == 3);
    std::uint64_t p = 0;
    REQUIRE(s.take_resend(p));
    CHECK(p == 1);
    CHECK(s.request(1));  // resent and NACKed again: queued again, behind 2 and 3
    std::vector<std::uint64_t> order;
    while (s.take_resend(p)) order.push_back(p);
    CHECK(order == std::vector<std::uint64_t>{2, 3, 1});
    // The ring holds each packet at most once: 4 slots never overflow.
    for (int round = 0; round < 3; ++round) {
        for (std::uint64_t q = 1; q < 4; ++q) CHECK(s.request(q));
        order.clear();
        while (s.take_resend(p)) order.push_back(p);
        CHECK(order == std::vector<std::uint64_t>{1, 2, 3});
    }
}

TEST_CASE("aeolus: selective receive takes packets in any order and counts duplicates",
          "[aeolus]") {
    selective_receiver r;
    r.reset(130);  // three bitmap words
    CHECK(r.expected() == 0);
    // The first RTT lost 0 and 64; later packets arrive first.
    for (std::uint64_t p = 1; p < 130; ++p)
        if (p != 64) CHECK(r.on_packet(p));
    CHECK(r.received() == 128);
    CHECK(r.expected() == 0);
    CHECK(!r.complete());
    CHECK(!r.on_packet(5));    // duplicate
    CHECK(!r.on_packet(130));  // beyond the flow
    CHECK(r.on_packet(0));
    CHECK(r.expected() == 64);
    CHECK(r.on_packet(64));
    CHECK(r.expected() == 130);
    CHECK(r.complete());
    CHECK(r.received() == 130);
}
