// Unit tests of egress_queues, the egress port's data path as plain C++: queues, schedulers,
// gates (shapers, pause), and the marking policies (step, RED, scopes, minimum and MQ-ECN
// thresholds, phantom queue), driven with explicit times and no kernel. Exact counts and times.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <set>
#include <vector>

#include "fabricsim/core/frame_pool.h"
#include "fabricsim/switch/algo/egress_queues.h"
#include "fabricsim/switch/switch_config.h"

using namespace fabricsim;
using namespace fabricsim::sw;

namespace {

// 1500 B IP packets: 1518 B frames, 1538 B on the wire, 1230.4 ns at 10G.
constexpr std::uint32_t PAYLOAD = 1500 - 20 - 8;  // UDP
constexpr std::uint64_t RATE = 10'000'000'000ull;
constexpr ps_t FRAME_PS = 1'230'400;

/// A port of a 1-port chip with a 16 MiB buffer and no static cap, and a wire model: a started
/// frame keeps the wire for its serialisation time at RATE. Records every start.
struct port_bench {
    struct sent {
        unsigned q;
        ps_t at;
        bool ce;
        std::uint32_t flow;
    };
    switch_config cfg;
    std::unique_ptr<mmu> buffer;
    pool_backlog pools;
    std::unique_ptr<egress_queues> port;
    std::vector<sent> log;
    ps_t wake = egress_gate::UNTIL_TOLD;  ///< the adapter's timer

    explicit port_bench(switch_config c) : cfg(std::move(c)) {
        cfg.buffer_bytes = 16ull << 20;
        cfg.ports = 1;
        if (cfg.sched.empty()) cfg.sched.resize(cfg.queues);
        buffer = std::make_unique<mmu>(cfg.mmu_for(1));
        port = std::make_unique<egress_queues>(cfg, 0, *buffer, pools, RATE, 1, "bench.port0");
    }
    void started(frame* f, ps_t at) {
        log.push_back({unsigned(f->dscp >> 3), at, f->ecn == ecn_codepoint::CE, f->flow_id});
        port->set_busy_until(at + serialization_ps(f->wire_bytes(), RATE));
        frame_pool::global().release(*f);
    }
    /// The adapter's arm_next(): the next time a queued frame may start.
    void plan(ps_t now) {
        wake = port->queued_frames() ? port->next_start(std::max(now, port->busy_until()))
                                     : egress_gate::UNTIL_TOLD;
    }
    /// Runs wake-ups up to `t` (inclusive of those before it).
    void run_until(ps_t t) {
        while (wake != egress_gate::UNTIL_TOLD && wake < t) {
            const ps_t now = wake;
            if (port->busy_until() <= now)
                if (frame* f = port->try_start(now)) started(f, now);
            plan(now);
        }
    }
    /// A frame of queue q (its DSCP carries q) from flow `flow`, out of the pipeline at `t`.
    void arrive(unsigned q, ps_t t, bool ect = true, std::uint32_t flow = 0,
                std::uint32_t payload = PAYLOAD) {
        run_until(t);
        frame& f = frame_pool::global().acquire();
        f.set_ipv4(frame_kind::IPV4_UDP, payload);
        f.dscp = static_cast<std::uint8_t>(q << 3);
        f.ecn = ect ? ecn_codepoint::ECT0 : ecn_codepoint::NOT_ECT;
        f.flow_id = flow;
        if (frame* s = port->accept(f, 0, 0, q, t)) started(s, t);
        plan(t);
    }
    std::uint64_t count(unsigned q) const {
        std::uint64_t n = 0;
        for (const sent& s : log) n += s.q == q;
        return n;
    }
    std::uint64_t unmarked(std::uint32_t flow) const {
        std::uint64_t n = 0;
        for (const sent& s : log) n += s.flow == flow && !s.ce;
        return n;
    }
};

switch_config base(unsigned queues) {
    switch_config c;
    c.queues = queues;
    c.sched.assign(queues, queue_sched_params{});
    for (auto& q : c.mmu.queue) q.shared = {false, 0, 1ull << 20};  // static, far above use
    return c;
}

/// n frames of each listed queue, all out of the pipeline at t = 0, then the wire drains them.
void backlog(port_bench& b, const std::vector<unsigned>& queues, unsigned n) {
    for (unsigned i = 0; i < n; ++i)
        for (unsigned q : queues) b.arrive(q, 0);
    b.run_until(ps_t(1) << 60);
}

}  // namespace

// ---------------------------------------------------------------- scheduling

TEST_CASE("egress: a lone frame starts when it leaves the pipeline, the next when the wire frees",
          "[egress]") {
    port_bench b(base(1));
    b.arrive(0, 1000);
    b.arrive(0, 2000);
    b.run_until(ps_t(1) << 40);
    REQUIRE(b.log.size() == 2);
    CHECK(b.log[0].at == 1000);
    CHECK(b.log[1].at == 1000 + FRAME_PS);
    CHECK(b.port->stats_of(0).waited == 1);
    CHECK(b.port->idle_at(1000 + 2 * FRAME_PS));
    CHECK(!b.port->idle_at(1000 + 2 * FRAME_PS - 1));
}

TEST_CASE("egress: a frame queued with a later ready than the next one holds the wake until then",
          "[egress]") {
    // A store-and-forward fallback queues a frame whose tail arrives after frames queued
    // behind it are out of the pipeline. The wake must wait for the head, not spin at the
    // time the wire frees (next_start() once trusted the last ready, not the latest).
    port_bench b(base(1));
    b.arrive(0, 0);  // on the wire until FRAME_PS
    const auto queue_one = [&](ps_t ready) {
        frame& f = frame_pool::global().acquire();
        f.set_ipv4(frame_kind::IPV4_UDP, PAYLOAD);
        REQUIRE(b.port->accept(f, 0, 0, 0, ready) == nullptr);
    };
    queue_one(FRAME_PS / 2);  // waits for the wire: on it from FRAME_PS to 2 FRAME_PS
    queue_one(5 * FRAME_PS);  // then the head
    queue_one(2 * FRAME_PS);
    b.plan(0);
    b.run_until(2 * FRAME_PS);
    REQUIRE(b.wake == 5 * FRAME_PS);  // else the wakes would spin at 2 FRAME_PS
    b.run_until(ps_t(1) << 40);
    REQUIRE(b.log.size() == 4);
    CHECK(b.log[1].at == FRAME_PS);
    CHECK(b.log[2].at == 5 * FRAME_PS);
    CHECK(b.log[3].at == 6 * FRAME_PS);
}

TEST_CASE("egress: dwrr quanta 1:2:3 send 1, 2 and 3 frames per round", "[egress][scheduler]") {
    switch_config c = base(3);
    for (unsigned q = 0; q < 3; ++q) c.sched[q].quantum_bytes = 1538 * (q + 1);
    port_bench b(c);
    backlog(b, {0, 1, 2}, 300);
    // The first 600 starts are 100 rounds of 1 + 2 + 3 frames, back to back.
    REQUIRE(b.log.size() == 900);
    std::array<unsigned, 3> n{};
    for (unsigned i = 0; i < 600; ++i) {
        CHECK(b.log[i].at == i * FRAME_PS);
        n[b.log[i].q]++;
    }
    CHECK(n == std::array<unsigned, 3>{100, 200, 300});
    CHECK(b.port->scheduler().rounds(0) >= 100);
}

TEST_CASE("egress: wrr discards the unused quantum so 1038 B frames share 1:2:4",
          "[egress][scheduler]") {
    switch_config c = base(3);
    c.discipline = sched_discipline::WRR;
    for (unsigned q = 0; q < 3; ++q) c.sched[q].quantum_bytes = 1542 * (q + 1);
    port_bench b(c);
    for (unsigned i = 0; i < 280; ++i)
        for (unsigned q = 0; q < 3; ++q) b.arrive(q, 0, true, q, 1000 - 28);
    b.run_until(ps_t(1) << 60);
    // 1000 B packets are 1038 B on the wire: 1, 2 and 4 fit the quanta (DWRR would carry the
    // rest over and give 1:2:3). 70 rounds = 490 frames.
    std::array<unsigned, 3> n{};
    for (unsigned i = 0; i < 490; ++i) n[b.log[i].q]++;
    CHECK(n == std::array<unsigned, 3>{70, 140, 280});
}

TEST_CASE("egress: strict priority serves the higher queue first while it holds frames",
          "[egress][scheduler]") {
    switch_config c = base(2);
    c.discipline = sched_discipline::SP;
    port_bench b(c);
    for (unsigned i = 0; i < 5; ++i) b.arrive(0, 0);
    b.arrive(1, 10);  // behind the first frame of queue 0, ahead of the rest
    b.arrive(1, 20);
    b.run_until(ps_t(1) << 40);
    REQUIRE(b.log.size() == 7);
    const unsigned order[] = {0, 1, 1, 0, 0, 0, 0};
    for (unsigned i = 0; i < 7; ++i) {
        CHECK(b.log[i].q == order[i]);
        CHECK(b.log[i].at == i * FRAME_PS);
    }
}

// ---------------------------------------------------------------- gates

TEST_CASE("egress: a port shaper gate spaces frames at its rate after the burst",
          "[egress][gate]") {
    switch_config c = base(1);
    c.port_shaper = {5'000'000'000ull, 3076};  // 5 Gbps, two frames of burst
    port_bench b(c);
    backlog(b, {0}, 6);
    REQUIRE(b.log.size() == 6);
    // Two frames from the full bucket at line rate; then one per 2 x 1230.4 ns of refill.
    CHECK(b.log[0].at == 0);
    CHECK(b.log[1].at == FRAME_PS);
    for (unsigned i = 2; i < 6; ++i) CHECK(b.log[i].at == (2 * i - 2) * FRAME_PS);
}

TEST_CASE("egress: a port shaper lets a smaller head of another queue pass first, never stalls",
          "[egress][gate]") {
    // 1538 B and 738 B heads behind a 5 Gbps port shaper with a 2000 B burst: whenever the bucket
    // holds 738 B but not 1538 B, the small head goes (a check on the picked head only would wake
    // the port at the same time for ever). Every prefix of the output conforms to the bucket.
    switch_config c = base(2);
    c.port_shaper = {5'000'000'000ull, 2000};
    port_bench b(c);
    for (unsigned i = 0; i < 40; ++i) {
        b.arrive(0, 0, true, 0);
        b.arrive(1, 0, true, 1, 700 - 28);
    }
    b.run_until(ps_t(1) << 60);
    REQUIRE(b.log.size() == 80);
    double sent = 0;
    for (const auto& s : b.log) {
        sent += s.q == 0 ? 1538 : 738;
        const double allowed = 2000 + double(s.at) * 5e9 / 8 / 1e12;
        CHECK(sent <= allowed + 1e-6);
    }
    // Long run at the shaper's rate: the last start within a frame of 5 Gbps.
    CHECK(double(b.log.back().at) == Approx((sent - 2000) * 8 / 5e9 * 1e12).margin(FRAME_PS));
}

TEST_CASE("egress: a queue shaper gate holds its queue and dwrr serves the other",
          "[egress][gate]") {
    switch_config c = base(2);
    c.queue_shaper[1] = {2'000'000'000ull, 1538};  // 2 Gbps, one frame of burst
    port_bench b(c);
    backlog(b, {0, 1}, 50);
    // Queue 1 sends one frame per 5 frame times (2 of 10 Gbps); queue 0 fills the rest.
    std::vector<ps_t> q1;
    for (const auto& s : b.log)
        if (s.q == 1) q1.push_back(s.at);
    REQUIRE(q1.size() >= 10);
    for (unsigned i = 1; i < 10; ++i) CHECK(q1[i] - q1[i - 1] == 5 * FRAME_PS);
    for (unsigned i = 0; i < 60; ++i) CHECK(b.log[i].at == i * FRAME_PS);  // work-conserving
}

// ---------------------------------------------------------------- credit queue

namespace {
// 84/1622 of 10G, rounded to the bps: one 84 B credit per 1297.6 ns.
constexpr ps_t CREDIT_GAP = 1'297'600;
constexpr std::uint32_t CREDIT_PAYLOAD = 0;  // a minimum frame: 64 B, 84 B on the wire

switch_config credit_cfg() {
    switch_config c = base(8);
    c.credit_queue.queue = 7;
    return c;
}
}  // namespace

TEST_CASE("egress: credit_queue.selective_drop drops non-ECT above 2 frames, ECT up to 8",
          "[egress][credit]") {
    switch_config c = credit_cfg();
    c.credit_queue.selective_drop = 2;
    port_bench b(c);
    // Two non-ECT fit (2 frames), the third is dropped; ECT ones fill the buffer to 8.
    for (int i = 0; i < 3; ++i) b.arrive(7, 0, false, 0, CREDIT_PAYLOAD);
    CHECK(b.port->drops_of(7)[drop_cause::CREDIT_DROPPED] == 1);
    for (int i = 0; i < 7; ++i) b.arrive(7, 0, true, 0, CREDIT_PAYLOAD);
    CHECK(b.port->drops_of(7)[drop_cause::CREDIT_DROPPED] == 2);  // the 7th ECT: 9 > 8
    b.arrive(7, 0, false, 0, CREDIT_PAYLOAD);
    CHECK(b.port->drops_of(7)[drop_cause::CREDIT_DROPPED] == 3);
    CHECK(b.port->drops().total() == 3);
    b.run_until(ps_t(1) << 60);
    CHECK(b.count(7) == 8);
    // Drained: a non-ECT one passes again.
    b.arrive(7, 20 * CREDIT_GAP, false, 0, CREDIT_PAYLOAD);
    b.run_until(ps_t(1) << 60);
    CHECK(b.count(7) == 9);
}

TEST_CASE("egress: the credit queue sends at 84/1622 of the port from an empty bucket",
          "[egress][gate][credit]") {
    port_bench b(credit_cfg());
    for (int i = 0; i < 5; ++i) b.arrive(7, 0, false, 0, CREDIT_PAYLOAD);
    b.run_until(ps_t(1) << 60);
    REQUIRE(b.log.size() == 5);
    for (unsigned i = 0; i < 5; ++i) CHECK(b.log[i].at == (i + 1) * CREDIT_GAP);
}

TEST_CASE("egress: the credit queue holds 8 credits and drops the rest as credit_dropped",
          "[egress][credit]") {
    port_bench b(credit_cfg());
    for (int i = 0; i < 12; ++i) b.arrive(7, 0, false, 0, CREDIT_PAYLOAD);
    CHECK(b.port->drops_of(7)[drop_cause::CREDIT_DROPPED] == 4);
    CHECK(b.port->drops().total() == 4);
    b.run_until(ps_t(1) << 60);
    CHECK(b.count(7) == 8);
    // Once one has left, the next arrival fits again.
    b.arrive(7, 20 * CREDIT_GAP, false, 0, CREDIT_PAYLOAD);
    b.run_until(ps_t(1) << 60);
    CHECK(b.count(7) == 9);
    CHECK(b.log.back().at == 20 * CREDIT_GAP);  // the bucket is full (2 credits) by then
    nlohmann::json j;
    b.port->report_stats(j, 21 * CREDIT_GAP);
    CHECK(j["credit_queue"]["credits_sent"] == 9);
    CHECK(j["credit_queue"]["credits_dropped"] == 4);
    CHECK(j["credit_queue"]["rate_bps"] == 517'879'162);
}

TEST_CASE("egress: credit_queue.jitter varies each credit's gap by up to 10 %, mean unchanged",
          "[egress][gate][credit]") {
    switch_config c = credit_cfg();
    c.credit_queue.jitter = 0.1;
    c.credit_queue.buffer_bytes = 400 * 84;
    port_bench b(c);
    for (int i = 0; i < 400; ++i) b.arrive(7, 0, false, 0, CREDIT_PAYLOAD);
    b.run_until(ps_t(1) << 60);
    REQUIRE(b.log.size() == 400);
    // The bucket is never full while credits wait: credit k leaves when the tokens of the k
    // costs so far have come in, each cost a whole number of bytes in [76, 92] (84 +- 8.4).
    const double byte_ps = 8e12 / 517'879'162.0;
    std::set<long> costs;
    ps_t prev = 0;
    for (const auto& s : b.log) {
        const double bytes = double(s.at - prev) / byte_ps;
        const long whole = std::lround(bytes);
        CHECK(std::abs(bytes - double(whole)) < 0.01);  // whole bytes, to the ps rounding
        CHECK(whole >= 76);
        CHECK(whole <= 92);
        costs.insert(whole);
        prev = s.at;
    }
    CHECK(costs.size() == 17);  // every cost from 76 to 92 occurs in 400 draws
    const double mean_gap = double(b.log.back().at) / 400.0;
    CHECK(mean_gap == Approx(double(CREDIT_GAP)).epsilon(0.01));
    // Same seed and port name: the same times.
    port_bench again(c);
    for (int i = 0; i < 400; ++i) again.arrive(7, 0, false, 0, CREDIT_PAYLOAD);
    again.run_until(ps_t(1) << 60);
    REQUIRE(again.log.size() == 400);
    for (std::size_t i = 0; i < 400; ++i) CHECK(again.log[i].at == b.log[i].at);
}

TEST_CASE("egress: data takes the wire while the credit bucket refills, a due credit goes first",
          "[egress][gate][credit]") {
    port_bench b(credit_cfg());
    b.arrive(0, 0);
    b.arrive(0, 0);
    b.arrive(0, 0);
    b.arrive(7, 0, false, 0, CREDIT_PAYLOAD);
    b.arrive(7, 0, false, 0, CREDIT_PAYLOAD);
    b.run_until(ps_t(1) << 60);
    REQUIRE(b.log.size() == 5);
    // The bucket starts empty and the first credit is due at 1297.6 ns: two data frames go
    // (work conserving, XPassDropTail's dequeue), then the due credit before the third.
    CHECK((b.log[0].q == 0 && b.log[0].at == 0));
    CHECK((b.log[1].q == 0 && b.log[1].at == FRAME_PS));
    CHECK((b.log[2].q == 7 && b.log[2].at == 2 * FRAME_PS));
    // 75.3 B of tokens are left: the second credit is due at 2 x 1297.6 ns, while the third
    // data frame is on the wire (from 2 x 1230.4 ns + 67.2 ns).
    CHECK((b.log[3].q == 0 && b.log[3].at == 2 * FRAME_PS + 67'200));
    CHECK((b.log[4].q == 7 && b.log[4].at == 3 * FRAME_PS + 67'200));
}

TEST_CASE("egress: a pause gate closed until told holds a queue until it is opened",
          "[egress][gate]") {
    port_bench b(base(2));
    pause_gate pause;
    b.port->add_gate(pause);
    pause.pause(0b10, egress_gate::UNTIL_TOLD);
    b.arrive(1, 0);
    b.arrive(1, 0);
    b.arrive(0, 100);
    b.run_until(ps_t(1) << 40);
    REQUIRE(b.log.size() == 1);  // only queue 0
    CHECK(b.log[0].q == 0);
    CHECK(b.log[0].at == 100);
    CHECK(b.wake == egress_gate::UNTIL_TOLD);  // nothing will go by itself
    // The owner opens it at 5 us: the port wakes (gates_changed) and sends both.
    pause.resume(0b10);
    b.plan(5'000'000);
    b.run_until(ps_t(1) << 40);
    REQUIRE(b.log.size() == 3);
    CHECK(b.log[1].at == 5'000'000);
    CHECK(b.log[2].at == 5'000'000 + FRAME_PS);
}

TEST_CASE("egress: a timed pause opens by itself", "[egress][gate]") {
    port_bench b(base(1));
    pause_gate pause;
    b.port->add_gate(pause);
    pause.pause(0b1, 3'000'000);
    b.arrive(0, 0);
    b.run_until(ps_t(1) << 40);
    REQUIRE(b.log.size() == 1);
    CHECK(b.log[0].at == 3'000'000);
}

// ---------------------------------------------------------------- marking policies

namespace {
switch_config step(double k_bytes, bool dequeue = false) {
    switch_config c = base(1);
    c.ecn.set_all(ecn_mode::STEP, {k_bytes, k_bytes, 1.0, 1.0});
    c.ecn.mark_on_dequeue = dequeue;
    return c;
}
/// Two arrivals per frame time into one queue (two line-rate senders): the queue grows by one
/// frame per frame time.
void overload(port_bench& b, unsigned n, bool ect = true) {
    for (unsigned i = 0; i < n; ++i) {
        b.arrive(0, i * FRAME_PS, ect, 0);
        b.arrive(0, i * FRAME_PS + 1, ect, 1);
    }
    b.run_until(ps_t(1) << 60);
}
}  // namespace

TEST_CASE("egress: step marking at enqueue passes exactly the arrivals at or below K",
          "[egress][ecn]") {
    // K = 32 KB: an arrival that finds 20 frames (21 x 1518 = 31878 B with itself) passes, one
    // that finds 21 is marked. The first frame starts at once, so arrival 2i + 1 finds i frames.
    port_bench b(step(32000));
    overload(b, 100);
    REQUIRE(b.log.size() == 200);
    // Arrivals 2i and 2i + 1 (i >= 1) find i + 1 frames with themselves: 21 fit under K.
    CHECK(b.unmarked(0) + b.unmarked(1) == 42);
    CHECK(b.port->stats_of(0).ce_marked == 158);
    for (unsigned i = 0; i < 200; ++i) CHECK(b.log[i].ce == (i >= 42));
}

TEST_CASE("egress: per-queue step thresholds: queue 0 marks above K0, queue 1 above K1",
          "[egress][ecn]") {
    switch_config c = base(2);
    c.ecn.set_all(ecn_mode::STEP, {32000, 32000, 1.0, 1.0});
    c.ecn.red[1] = {16000, 16000, 1.0, 1.0};
    port_bench b(c);
    // Each queue overloaded in turn, as in the single-K test: arrivals 2i and 2i + 1 (i >= 1)
    // find i + 1 frames with themselves. K0 = 32 KB passes 21 frames (42 arrivals), K1 = 16 KB
    // 10 (20 arrivals); the port's pass bound is the smaller K, queue 0 still marks at its own.
    for (unsigned q : {0u, 1u}) {
        const ps_t t0 = q * 1000 * FRAME_PS;
        for (unsigned i = 0; i < 100; ++i) {
            b.arrive(q, t0 + i * FRAME_PS, true, 2 * q);
            b.arrive(q, t0 + i * FRAME_PS + 1, true, 2 * q + 1);
        }
        b.run_until(t0 + 500 * FRAME_PS);
    }
    REQUIRE(b.log.size() == 400);
    CHECK(b.unmarked(0) + b.unmarked(1) == 42);
    CHECK(b.unmarked(2) + b.unmarked(3) == 20);
    CHECK(b.port->stats_of(0).ce_marked == 158);
    CHECK(b.port->stats_of(1).ce_marked == 180);
    for (unsigned i = 0; i < 200; ++i) CHECK(b.log[i].ce == (i >= 42));
    for (unsigned i = 0; i < 200; ++i) CHECK(b.log[200 + i].ce == (i >= 20));
}

TEST_CASE("egress: per-queue modes: a step queue and a RED queue are decided by two policies",
          "[egress][ecn]") {
    switch_config c = base(3);
    c.ecn.mode = {ecn_mode::STEP, ecn_mode::RED, ecn_mode::OFF};
    c.ecn.red[0] = {32000, 32000, 1.0, 1.0};
    c.ecn.red[1] = {30000, 90000, 1.0, 1.0};
    c.ecn.red[2] = {1000, 1000, 1.0, 1.0};  // unused: queue 2 does not mark
    port_bench b(c);
    for (unsigned q : {0u, 1u, 2u}) {
        const ps_t t0 = q * 1000 * FRAME_PS;
        for (unsigned i = 0; i < 100; ++i) {
            b.arrive(q, t0 + i * FRAME_PS, true, 2 * q);
            b.arrive(q, t0 + i * FRAME_PS + 1, true, 2 * q + 1);
        }
        b.run_until(t0 + 500 * FRAME_PS);
    }
    REQUIRE(b.log.size() == 600);
    CHECK(b.unmarked(0) + b.unmarked(1) == 42);  // the step at K0, exactly
    // RED: nothing at or below 19 frames (the first 38 arrivals), then marks that grow with
    // the queue; seeded, so exact for this seed, near the expected 79 unmarked of 200.
    for (unsigned i = 0; i < 38; ++i) CHECK(!b.log[200 + i].ce);
    const std::uint64_t red_pass = b.unmarked(2) + b.unmarked(3);
    CHECK(std::abs(double(red_pass) - 79) <= 12);
    CHECK(b.port->stats_of(1).ce_marked == 200 - red_pass);
    CHECK(b.port->stats_of(2).ce_marked == 0);
    CHECK(b.unmarked(4) + b.unmarked(5) == 200);
}

TEST_CASE("egress: dequeue marking judges the queue a frame leaves behind", "[egress][ecn]") {
    port_bench b(step(32000, true));
    overload(b, 100);
    REQUIRE(b.log.size() == 200);
    // Departure j leaves j + 1 frames (itself included) while arrivals go on (j < 100), then
    // 200 - j: the first 21 and the last 21 are at or below K.
    for (unsigned i = 0; i < 200; ++i) CHECK(b.log[i].ce == (i >= 21 && i < 179));
}

TEST_CASE("egress: non-ECT frames above K are dropped as aqm_drop, or passed", "[egress][ecn]") {
    SECTION("drop") {
        port_bench b(step(32000));
        overload(b, 100, false);
        // 21 frames fit under K: the queue is pinned there and the rest is dropped.
        CHECK(b.port->drops_of(0)[drop_cause::AQM_DROP] == 200 - b.log.size());
        CHECK(b.port->stats_of(0).peak_bytes == 21 * 1518);
        CHECK(b.port->stats_of(0).ce_marked == 0);
    }
    SECTION("pass") {
        switch_config c = step(32000);
        c.ecn.drop_non_ect = false;
        port_bench b(c);
        overload(b, 100, false);
        CHECK(b.log.size() == 200);
        CHECK(b.port->drops().total() == 0);
        CHECK(b.port->stats_of(0).peak_bytes > 32000);
    }
}

TEST_CASE("egress: Aeolus selective dropping at K = 2 pkt: non-ECT dropped, ECT marked above",
          "[egress][ecn][aeolus]") {
    switch_config c = base(1);
    c.ecn.set_all(ecn_mode::STEP, {2, 2, 1.0, 1.0}, true);
    port_bench b(c);
    // At t = 0 the first frame starts at once; the queue then holds what waits. Pairs of one
    // ECT (flow 0, scheduled) and one non-ECT (flow 1, unscheduled) frame, all at t = 0.
    for (unsigned i = 0; i < 6; ++i) {
        b.arrive(0, 0, true, 0);
        b.arrive(0, 0, false, 1);
    }
    b.run_until(ps_t(1) << 60);
    // Arrival 0 starts at once; arrivals 1 and 2 find 0 and 1 frames waiting (1 and 2 with
    // themselves) and pass unmarked. Arrivals 3 to 11 find the queue above K: the four ECT
    // ones are marked, the five non-ECT ones dropped.
    CHECK(b.port->drops_of(0)[drop_cause::AQM_DROP] == 5);
    CHECK(b.port->stats_of(0).ce_marked == 4);
    REQUIRE(b.log.size() == 7);
    CHECK(b.unmarked(0) == 2);
    CHECK(b.unmarked(1) == 1);
    // Below K both kinds pass: one ECT and one non-ECT frame per frame time never queue.
    port_bench q(c);
    for (unsigned i = 0; i < 20; ++i) {
        q.arrive(0, 2 * i * FRAME_PS, true, 0);
        q.arrive(0, (2 * i + 1) * FRAME_PS, false, 1);
    }
    q.run_until(ps_t(1) << 60);
    CHECK(q.log.size() == 40);
    CHECK(q.port->drops().total() == 0);
    CHECK(q.port->stats_of(0).ce_marked == 0);
}

TEST_CASE("egress: RED with max_p 1 and weight 1 marks linearly between the thresholds",
          "[egress][ecn]") {
    switch_config c = base(1);
    c.ecn.set_all(ecn_mode::RED, {30000, 90000, 1.0, 1.0});
    port_bench b(c);
    overload(b, 200);
    // At most 19 frames (28842 B) nothing is marked: the first 38 arrivals; above 90 KB (59
    // frames) everything; in between each arrival with (q - min) / (max - min). Seeded: exact
    // for this seed, and within the binomial spread of the expected 79.
    const std::uint64_t pass = b.unmarked(0) + b.unmarked(1);
    CHECK(std::abs(double(pass) - 79) <= 12);
    for (unsigned i = 0; i < 38; ++i) CHECK(!b.log[i].ce);
}

TEST_CASE("egress: port and pool scopes mark a light queue behind a congested one",
          "[egress][ecn]") {
    for (ecn_scope scope : {ecn_scope::QUEUE, ecn_scope::PORT, ecn_scope::POOL}) {
        switch_config c = base(2);
        c.ecn.set_all(ecn_mode::STEP, {32000, 32000, 1.0, 1.0});
        c.ecn.scope = scope;
        port_bench b(c);
        // Queue 0 overloaded for 60 frame times, then one light frame in queue 1.
        for (unsigned i = 0; i < 60; ++i) {
            b.arrive(0, i * FRAME_PS);
            b.arrive(0, i * FRAME_PS + 1);
        }
        b.arrive(1, 60 * FRAME_PS, true, 7);
        b.run_until(ps_t(1) << 60);
        INFO("scope " << int(scope));
        CHECK(b.unmarked(7) == (scope == ecn_scope::QUEUE ? 1u : 0u));
    }
}

TEST_CASE("egress: minimum thresholds scale K by W_i over the non-strict sum, strict keeps K",
          "[egress][ecn]") {
    switch_config c = base(4);
    c.ecn.set_all(ecn_mode::STEP, {32000, 32000, 1.0, 1.0});
    c.ecn.per_queue = queue_threshold::MINIMUM;
    const std::uint32_t w[] = {1538, 3076, 4614, 1538};
    for (unsigned q = 0; q < 4; ++q) c.sched[q].quantum_bytes = w[q];
    c.sched[3].strict = true;
    port_bench b(c);
    const double expected[] = {1538.0 / 9228, 3076.0 / 9228, 4614.0 / 9228, 1.0};
    for (unsigned q = 0; q < 4; ++q) CHECK(b.port->threshold_scale(q) == expected[q]);
    // Queue 0's threshold is 32000/6 = 5333 B. The first frame starts at once; the next ones
    // find 1, 2, 3 and 4 frames with themselves: the 5th (6072 B) is above it.
    for (unsigned i = 0; i < 5; ++i) b.arrive(0, 0);
    b.run_until(ps_t(1) << 40);
    const bool marked[] = {false, false, false, false, true};
    for (unsigned i = 0; i < 5; ++i) CHECK(b.log[i].ce == marked[i]);
}

TEST_CASE("egress: mq-ecn's round time from back-to-back frames and its beta", "[egress][ecn]") {
    switch_config c = base(1);
    c.ecn.set_all(ecn_mode::STEP, {32000, 32000, 1.0, 1.0});
    c.ecn.per_queue = queue_threshold::MQ_ECN;
    c.ecn.mq_beta = 0.5;
    port_bench b(c);
    // Three frames at line rate into an idle port: each is its own round, sampled at the end of
    // its serialisation, from T_round 0: T = 1230.4 ns x (1 - 0.5^3).
    for (unsigned i = 0; i < 3; ++i) b.arrive(0, i * FRAME_PS);
    b.run_until(ps_t(1) << 40);
    REQUIRE(b.port->mq_ecn());
    CHECK(b.port->mq_ecn()->samples() == 3);
    CHECK(b.port->mq_ecn()->t_round_ps() == Approx(FRAME_PS * 0.875).epsilon(1e-12));
}

TEST_CASE("egress: mq-ecn scales K to 1/N with N backlogged equal queues", "[egress][ecn]") {
    switch_config c = base(4);
    c.ecn.set_all(ecn_mode::STEP, {32000, 32000, 1.0, 1.0});
    c.ecn.per_queue = queue_threshold::MQ_ECN;
    port_bench b(c);
    backlog(b, {0, 1, 2, 3}, 200);
    // While all four were backlogged every round took 4 frame times; the last rounds drain.
    REQUIRE(b.port->mq_ecn());
    CHECK(b.port->mq_ecn()->samples() >= 800);
    for (unsigned q = 0; q < 4; ++q) CHECK(b.port->threshold_scale(q) >= 0.25 - 1e-9);
}

TEST_CASE("egress: the phantom queue marks departures once its counter passes the threshold",
          "[egress][phantom]") {
    switch_config c = base(1);
    c.phantom = {true, 0.95, 800 * PS_PER_NS, 1000};
    port_bench b(c);
    // Line rate for 100 frames: the counter gains 1538 B per frame and drains 950 B per 800 ns
    // (1.54 x 950 B per frame): net +75 B per frame, so it passes 1000 B after ~14 frames and
    // stays above.
    for (unsigned i = 0; i < 100; ++i) b.arrive(0, i * FRAME_PS);
    b.run_until(ps_t(1) << 40);
    REQUIRE(b.port->phantom());
    CHECK(b.port->phantom()->frames() == 100);
    CHECK(b.port->phantom()->marked() == b.port->stats_of(0).ce_marked);
    CHECK(!b.log[0].ce);
    CHECK(b.log[99].ce);
    CHECK(b.port->stats_of(0).ce_marked >= 80);
}

TEST_CASE("egress: a policy added to the chain sees every arrival of its queues",
          "[egress][policy]") {
    // A congestion point samples every arrival and the queue length (QCN-style).
    struct sampler final : egress_policy {
        sampler() : egress_policy(0b01, 0) {}
        std::vector<std::uint64_t> seen;
        enqueue_verdict on_enqueue(const egress_queues& port, unsigned q, frame&, ps_t) override {
            seen.push_back(port.queue_bytes(q));
            return enqueue_verdict::PASS;
        }
    } cp;
    port_bench b(base(2));
    b.port->add_policy(cp);
    b.arrive(0, 0);
    b.arrive(0, 1);
    b.arrive(1, 2);
    b.arrive(0, 3);
    // The first frame starts at once (its queue empties); the second waits behind it.
    CHECK(cp.seen == std::vector<std::uint64_t>{1518, 1518, 2 * 1518});
}

// ---------------------------------------------------------------- FERA congestion point

namespace {
/// A data frame with a FERA forward tag (the link rate) at `t`; the tag it leaves with (0 if
/// the port did not send it at once).
std::uint64_t send_tagged(port_bench& b, ps_t t) {
    b.run_until(t);
    frame& f = frame_pool::global().acquire();
    f.set_ipv4(frame_kind::IPV4_UDP, PAYLOAD);
    f.add_fera_tag(RATE);
    std::uint64_t rate = 0;
    if (frame* s = b.port->accept(f, 0, 0, 0, t)) {
        rate = s->fera_rate_bps;
        b.started(s, t);
    }
    b.plan(t);
    return rate;
}
}  // namespace

TEST_CASE("egress: the FERA point measures wire bytes from the first frame and lowers tags",
          "[egress][fera]") {
    switch_config c = base(1);
    c.fera.mode = fera_config::preset::ANALYSIS;  // linear f, k 0.002, N_0 20: r_0 = 500 Mb/s
    port_bench b(c);
    REQUIRE(b.port->fera());
    const fera_congestion_point& fp = *b.port->fera();
    auto tagged = [&b](ps_t t) { return send_tagged(b, t); };
    // The first frame (t_0 = 100 ns) carries a tag: lowered to r_0.
    const ps_t t0 = 100'000;
    CHECK(tagged(t0) == 500'000'000u);
    // 99 more frames 10 us apart (each leaves in 1.23 us: the queue is empty at each arrival).
    for (unsigned i = 1; i < 100; ++i) b.arrive(0, t0 + i * 10'000'000ull, false);
    CHECK(fp.cp().stats().intervals == 0);
    // The tagged frame at t_0 + T closes the interval: A = (1550 + 99 x 1538) B x 8 / 1 ms
    // (wire bytes; the first frame's tag adds 12), q = 0,
    // r_1 = r_0 / (A / (f(0) C)) with f(0) = 1.002; the frame is marked with r_1.
    const std::uint64_t r1 = tagged(t0 + PS_PER_MS);
    const double a = (1550.0 + 99 * 1538) * 8 / 1e-3;
    CHECK(fp.cp().stats().intervals == 1);
    CHECK(fp.cp().arrival_rate_bps() == Approx(a).epsilon(1e-12));
    CHECK(fp.last_queue_bytes() == 0);
    CHECK(fp.cp().advertised_bps() == Approx(500e6 * 1.002e10 / a).epsilon(1e-12));
    CHECK(r1 == static_cast<std::uint64_t>(fp.cp().advertised_bps()));
    CHECK(fp.tags_stamped() == 2);
    CHECK(fp.cp().stats().tags_lowered == 2);
    CHECK(fp.cp().stats().paused_intervals == 0);
    CHECK_FALSE(fp.paused_now());
}

TEST_CASE("egress: the RCP law on the FERA point closes lazily and averages at the mark",
          "[egress][fera][rcp]") {
    switch_config c = base(1);
    c.fera.mode = fera_config::preset::RCP;
    c.rcp.interval = PS_PER_MS;  // T = d0 = 1 ms: gain 1
    c.rcp.d0 = PS_PER_MS;
    c.rcp.variant = rcp_variant::AP;
    c.rcp.initial_rate = 1'000'000'000;
    port_bench b(c);
    REQUIRE(b.port->fera());
    const fera_congestion_point& fp = *b.port->fera();
    REQUIRE(fp.rcp());
    auto tagged = [&b](ps_t t) { return send_tagged(b, t); };
    const ps_t t0 = 100'000;
    CHECK(tagged(t0) == 1'000'000'000u);
    for (unsigned i = 1; i < 100; ++i) b.arrive(0, t0 + i * 10'000'000ull, false);
    CHECK(fp.rcp()->stats().intervals == 0);
    // Close at t_0 + T: y in wire bytes as FERA's A, q = 0: R = 1 Gb/s (1 + 0.1 (C - y)/C).
    const std::uint64_t r1 = tagged(t0 + PS_PER_MS);
    const double y = (1550.0 + 99 * 1538) * 8 / 1e-3;
    const double r = 1e9 * (1 + 0.1 * (1e10 - y) / 1e10);
    CHECK(fp.rcp()->stats().intervals == 1);
    CHECK(fp.rcp()->y_bps() == Approx(y).epsilon(1e-12));
    CHECK(r1 == static_cast<std::uint64_t>(r));
    // T/2 later the mark applies AP's averaging: (R + R_T)/2.
    CHECK(tagged(t0 + PS_PER_MS + PS_PER_MS / 2) == static_cast<std::uint64_t>((r + 1e9) / 2));
    CHECK(fp.rcp()->stats().averagings == 1);
    CHECK(fp.tags_stamped() == 3);
    CHECK(fp.advertised_bps(t0 + PS_PER_MS + PS_PER_MS / 2) == Approx((r + 1e9) / 2));
}
