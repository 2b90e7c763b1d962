// Tier-1 tests of the egress scheduler and the token-bucket shaper (no SystemC).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <limits>
#include <new>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

#include "fabricsim/switch/algo/queue_scheduler.h"
#include "fabricsim/switch/algo/token_bucket.h"

using namespace fabricsim;
using namespace fabricsim::sw;

// Counts every allocation of this test program, to check the hot paths do not allocate. All
// plain and nothrow forms are replaced so that every pair matches (ASan checks it); the aligned
// forms keep the library's own pair.
namespace {
long g_allocations = 0;
void* counted_malloc(std::size_t n) noexcept {
    ++g_allocations;
    return std::malloc(n ? n : 1);
}
}  // namespace
void* operator new(std::size_t n) {
    if (void* p = counted_malloc(n)) return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
    return operator new(n);
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    return counted_malloc(n);
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
    return counted_malloc(n);
}
void operator delete(void* p) noexcept {
    std::free(p);
}
void operator delete[](void* p) noexcept {
    std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
    std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
    std::free(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
    std::free(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
    std::free(p);
}

namespace {

__extension__ typedef unsigned __int128 u128;

constexpr ps_t PS_PER_BYTE_10G = 800;

/// queue_view over one deque of frame sizes per queue; `blocked` makes a queue ineligible.
struct fifo_view : queue_view {
    explicit fifo_view(unsigned n) : q(n), blocked(n, false) {}
    bool eligible(unsigned i, ps_t) const override { return !q[i].empty() && !blocked[i]; }
    std::uint32_t head_bytes(unsigned i) const override { return q[i].front(); }
    std::vector<std::deque<std::uint32_t>> q;
    std::vector<bool> blocked;
};

struct event {
    char kind;  ///< 'A' activated, 'F' finished a round
    unsigned q;
    ps_t t;
    bool operator==(const event& o) const { return kind == o.kind && q == o.q && t == o.t; }
};

std::ostream& operator<<(std::ostream& os, const event& e) {
    return os << e.kind << "(q" << e.q << ", " << e.t << ")";
}

struct recorder : round_observer {
    void queue_activated(unsigned q, ps_t now) override { log.push_back({'A', q, now}); }
    void queue_finished_round(unsigned q, ps_t at) override { log.push_back({'F', q, at}); }
    std::vector<event> log;
};

/// A port at 10 Gbps: a scheduler, its queues and a clock; frames go back to back.
struct port {
    port(sched_discipline d, const std::vector<queue_sched_params>& p)
        : sched(d, p), view(static_cast<unsigned>(p.size())) {
        sched.set_observer(&obs);
    }
    void push(unsigned q, std::uint32_t bytes) {
        const bool was_empty = view.q[q].empty();
        view.q[q].push_back(bytes);
        if (was_empty) sched.backlogged(q, now);
    }
    /// Serves one frame; returns the queue (-1 if none). `refill` keeps the queue backlogged.
    int step(bool refill = false) {
        const int q = sched.pick(view, now);
        if (q < 0) return q;
        const auto u = static_cast<unsigned>(q);
        const std::uint32_t bytes = view.q[u].front();
        view.q[u].pop_front();
        if (refill) view.q[u].push_back(bytes);
        const ps_t tx_end = now + bytes * PS_PER_BYTE_10G;
        sent[u] += bytes;
        sched.served(u, bytes, view.q[u].empty(), now, tx_end);
        now = tx_end;
        return q;
    }
    queue_scheduler sched;
    fifo_view view;
    recorder obs;
    ps_t now = 0;
    std::vector<std::uint64_t> sent = std::vector<std::uint64_t>(8, 0);
};

std::vector<queue_sched_params> quanta(const std::vector<std::uint32_t>& q) {
    std::vector<queue_sched_params> p;
    for (std::uint32_t v : q) p.push_back({false, v});
    return p;
}

/// Fixed pattern of frame sizes in [64, 1500].
std::uint32_t pattern_size(std::uint64_t i) {
    return 64 + static_cast<std::uint32_t>((i * 7919 + i * i * 31) % 1437);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// queue_scheduler

TEST_CASE("queue_scheduler: DWRR hand-worked service order and deficits", "[sched][dwrr]") {
    // q0: quantum 1500, frames 1000; q1: quantum 3000, frames 1500; both always backlogged.
    port p(sched_discipline::DWRR, quanta({1500, 3000}));
    for (int i = 0; i < 20; ++i) {
        p.push(0, 1000);
        p.push(1, 1500);
    }
    // (queue served, deficit q0, deficit q1) after each served(), worked by hand:
    //  1 q0 visit +1500 -> 1500, send 1000 -> 500
    //  2 q0 1000 > 500: round ends, keeps 500; q1 visit +3000, send 1500 -> 1500
    //  3 q1 send 1500 -> 0
    //  4 q1 ends round; q0 visit 500 + 1500 = 2000, send -> 1000
    //  5 q0 send -> 0
    //  6 q0 ends; q1 +3000 -> 1500      7 q1 -> 0
    //  8 q1 ends; q0 0 + 1500 -> 500    (period of 7 steps from here: as steps 2..8)
    const std::vector<std::tuple<int, std::int64_t, std::int64_t>> expected = {
        {0, 500, 0},  {1, 500, 1500}, {1, 500, 0},  {0, 1000, 0},   {0, 0, 0},
        {1, 0, 1500}, {1, 0, 0},      {0, 500, 0},  {1, 500, 1500}, {1, 500, 0},
        {0, 1000, 0}, {0, 0, 0},      {1, 0, 1500}, {1, 0, 0},      {0, 500, 0}};
    for (std::size_t i = 0; i < expected.size(); ++i) {
        INFO("step " << i + 1);
        const int q = p.step();
        CHECK(std::make_tuple(q, p.sched.deficit(0), p.sched.deficit(1)) == expected[i]);
    }
    // Per period (steps 2..8) 3 frames of q0 and 4 of q1: 3000 : 6000 bytes = quanta ratio.
    CHECK(p.sent[0] == 7000);
    CHECK(p.sent[1] == 12000);

    // Round ends at the pick that found the head too large, i.e. at the previous tx_end.
    const ps_t f1 = 1000 * PS_PER_BYTE_10G;       // after step 1
    const ps_t f2 = f1 + 3000 * PS_PER_BYTE_10G;  // after step 3
    const ps_t f3 = f2 + 2000 * PS_PER_BYTE_10G;  // after step 5
    const std::vector<event> first = {
        {'A', 0, 0}, {'A', 1, 0}, {'F', 0, f1}, {'F', 1, f2}, {'F', 0, f3}};
    REQUIRE(p.obs.log.size() >= first.size());
    CHECK(std::vector<event>(p.obs.log.begin(), p.obs.log.begin() + 5) == first);
}

TEST_CASE("queue_scheduler: DWRR long-run byte shares follow quanta and Eq. 7", "[sched][dwrr]") {
    constexpr std::uint32_t MTU = 1500;
    const std::vector<std::uint32_t> q = {1500, 3000, 4500};
    port p(sched_discipline::DWRR, quanta(q));

    // Eq. 7 checked at every round end: exactly M*Q - carried deficit, so within +-MTU.
    struct eq7_checker : round_observer {
        eq7_checker(const port& p, const std::vector<std::uint32_t>& q) : p(p), q(q) {}
        void queue_activated(unsigned, ps_t) override {}
        void queue_finished_round(unsigned i, ps_t) override {
            const auto m = static_cast<std::int64_t>(p.sched.rounds(i));
            const auto sent = static_cast<std::int64_t>(p.sent[i]);
            const std::int64_t mq = m * q[i];
            if (sent != mq - p.sched.deficit(i)) ++exact_bad;
            if (!(mq - MTU <= sent && sent <= mq + MTU)) ++bound_bad;
            ++checks;
        }
        const port& p;
        const std::vector<std::uint32_t>& q;
        int exact_bad = 0, bound_bad = 0;
        std::uint64_t checks = 0;
    } checker(p, q);
    p.sched.set_observer(&checker);

    std::uint64_t k = 0;
    for (unsigned i = 0; i < 3; ++i)
        for (int j = 0; j < 50; ++j) p.push(i, pattern_size(k++));
    for (int n = 0; n < 100000; ++n) REQUIRE(p.step(true) >= 0);

    const double total = static_cast<double>(p.sent[0] + p.sent[1] + p.sent[2]);
    for (unsigned i = 0; i < 3; ++i) {
        const double want = (i + 1) / 6.0;
        INFO("queue " << i << " share " << p.sent[i] / total);
        CHECK(std::abs(p.sent[i] / total / want - 1) < 0.005);
    }
    CHECK(checker.checks > 25000);  // ~8.5k rounds of each queue
    CHECK(checker.checks == p.sched.rounds(0) + p.sched.rounds(1) + p.sched.rounds(2));
    CHECK(checker.exact_bad == 0);
    CHECK(checker.bound_bad == 0);
    // Every queue completed about the same number of rounds (one round = one quantum each).
    CHECK(p.sched.rounds(0) + 1 >= p.sched.rounds(2));
    CHECK(p.sched.rounds(2) + 1 >= p.sched.rounds(0));
}

TEST_CASE("queue_scheduler: WRR discards the leftover, DWRR carries it over", "[sched][wrr]") {
    // Same load as the hand-worked DWRR case. WRR: q0 gets 1500 per visit, sends one 1000 B
    // frame, the 500 left is dropped -> 1 frame of q0 per 2 of q1 (q0 share 1/4, not 1/3).
    port w(sched_discipline::WRR, quanta({1500, 3000}));
    port d(sched_discipline::DWRR, quanta({1500, 3000}));
    for (int i = 0; i < 40; ++i) {
        w.push(0, 1000), w.push(1, 1500);
        d.push(0, 1000), d.push(1, 1500);
    }
    const std::vector<std::tuple<int, std::int64_t, std::int64_t>> wrr = {
        {0, 500, 0}, {1, 0, 1500}, {1, 0, 0}, {0, 500, 0}, {1, 0, 1500}, {1, 0, 0}, {0, 500, 0}};
    for (std::size_t i = 0; i < wrr.size(); ++i) {
        INFO("step " << i + 1);
        const int q = w.step();
        CHECK(std::make_tuple(q, w.sched.deficit(0), w.sched.deficit(1)) == wrr[i]);
    }
    // Step 4 is where they differ: DWRR's q0 has 500 + 1500 = 2000 and sends two frames.
    for (int i = 0; i < 4; ++i) d.step();
    CHECK(d.sched.deficit(0) == 1000);
    CHECK(d.step() == 0);

    for (int i = 0; i < 600; ++i) {
        w.step(true);
        d.step(true);
    }
    const double ws = double(w.sent[0]) / double(w.sent[0] + w.sent[1]);
    const double ds = double(d.sent[0]) / double(d.sent[0] + d.sent[1]);
    CHECK(ws == Approx(1.0 / 4).epsilon(0.01));
    CHECK(ds == Approx(1.0 / 3).epsilon(0.01));
}

TEST_CASE("queue_scheduler: WRR with mixed sizes misses the quanta shares", "[sched][wrr]") {
    // The long-run DWRR test would fail without carry-over: WRR run on the same pattern.
    port p(sched_discipline::WRR, quanta({1500, 3000, 4500}));
    std::uint64_t k = 0;
    for (unsigned i = 0; i < 3; ++i)
        for (int j = 0; j < 50; ++j) p.push(i, pattern_size(k++));
    for (int n = 0; n < 100000; ++n) REQUIRE(p.step(true) >= 0);
    const double total = static_cast<double>(p.sent[0] + p.sent[1] + p.sent[2]);
    double worst = 0;
    for (unsigned i = 0; i < 3; ++i)
        worst = std::max(worst, std::abs(p.sent[i] / total * 6 / (i + 1) - 1));
    INFO("worst relative share error " << worst);
    CHECK(worst > 0.005);
    for (unsigned i = 0; i < 3; ++i) CHECK(p.sched.deficit(i) <= p.sched.quantum(i));
}

TEST_CASE("queue_scheduler: a queue that empties forfeits its deficit", "[sched][dwrr]") {
    for (auto d : {sched_discipline::DWRR, sched_discipline::WRR}) {
        port p(d, quanta({1500, 1500}));
        p.push(0, 1000);
        p.push(0, 200);
        REQUIRE(p.sched.pick(p.view, p.now) == 0);
        CHECK(p.sched.deficit(0) == 1500);
        p.step();
        CHECK(p.sched.deficit(0) == 500);
        p.step();  // 200 <= 500, queue empties with 300 left
        CHECK(p.sched.deficit(0) == 0);
        CHECK_FALSE(p.sched.active(0));
        CHECK(p.sched.active_count() == 0);
        CHECK(p.sched.rounds(0) == 1);
        CHECK(p.sched.pick(p.view, p.now) == -1);
        // Re-activated: a fresh quantum, not 300 + 1500.
        p.push(0, 1500);
        CHECK(p.sched.deficit(0) == 0);
        REQUIRE(p.sched.pick(p.view, p.now) == 0);
        CHECK(p.sched.deficit(0) == 1500);
        p.step();
        CHECK(p.sched.deficit(0) == 0);
    }
}

TEST_CASE("queue_scheduler: a newly backlogged queue joins at the tail", "[sched][dwrr]") {
    port p(sched_discipline::DWRR, quanta({1500, 1500, 1500}));
    for (int i = 0; i < 4; ++i) p.push(1, 1000), p.push(0, 1000);
    CHECK(p.sched.active_at(0) == 1);
    CHECK(p.sched.active_at(1) == 0);
    CHECK(p.step() == 1);  // q1 was backlogged first
    p.push(2, 1000);
    CHECK(p.sched.active_at(2) == 2);
    CHECK(p.sched.active_at(3) == -1);
    CHECK(p.step() == 0);  // q1 ends its round, goes behind q2
    CHECK(p.sched.active_at(0) == 0);
    CHECK(p.sched.active_at(1) == 2);
    CHECK(p.sched.active_at(2) == 1);
    CHECK(p.step() == 2);
    CHECK(p.step() == 1);
}

TEST_CASE("queue_scheduler: SP serves the highest eligible queue and starves the rest",
          "[sched][sp]") {
    port p(sched_discipline::SP, quanta({0, 0, 0}));  // quanta are ignored under SP
    for (int i = 0; i < 3; ++i) p.push(0, 100), p.push(1, 200), p.push(2, 300);
    CHECK(p.step() == 2);
    CHECK(p.step() == 2);
    p.push(2, 300);
    CHECK(p.step() == 2);
    CHECK(p.step() == 2);
    CHECK(p.sent[0] == 0);
    CHECK(p.sent[1] == 0);
    CHECK(p.step() == 1);
    p.push(2, 300);  // a higher frame arriving takes the next slot
    CHECK(p.step() == 2);
    CHECK(p.step() == 1);
    CHECK(p.step() == 1);
    CHECK(p.step() == 0);
    p.view.blocked[0] = true;
    CHECK(p.sched.pick(p.view, p.now) == -1);
    p.view.blocked[0] = false;
    CHECK(p.step() == 0);
    CHECK(p.step() == 0);
    CHECK(p.step() == -1);
    for (unsigned i = 0; i < 3; ++i) {
        CHECK(p.sched.strict(i));
        CHECK(p.sched.deficit(i) == 0);
        CHECK(p.sched.rounds(i) == 0);
    }
    CHECK(p.obs.log.empty());
}

TEST_CASE("queue_scheduler: strict queues beat the DWRR group", "[sched][sp]") {
    // q2, q3 strict; q0, q1 DWRR.
    port p(sched_discipline::DWRR, {{false, 1500}, {false, 1500}, {true, 0}, {true, 0}});
    for (int i = 0; i < 3; ++i) p.push(0, 1000), p.push(1, 1000);
    CHECK(p.step() == 0);
    CHECK(p.sched.deficit(0) == 500);
    p.push(2, 700);
    p.push(3, 600);
    p.push(3, 600);
    CHECK(p.step() == 3);
    CHECK(p.step() == 3);
    CHECK(p.step() == 2);
    CHECK(p.sched.deficit(0) == 500);  // strict service touches no deficit
    CHECK(p.sched.deficit(1) == 0);
    CHECK(p.sched.deficit(2) == 0);
    CHECK(p.sched.deficit(3) == 0);
    CHECK_FALSE(p.sched.active(2));
    CHECK_FALSE(p.sched.active(3));
    CHECK(p.step() == 1);  // the group resumes where it was: q0 ends its round, q1's turn
    for (const event& e : p.obs.log) CHECK(e.q < 2);
    CHECK(p.sched.rounds(2) == 0);
    CHECK(p.sched.rounds(3) == 0);
}

TEST_CASE("queue_scheduler: an ineligible queue is passed over and keeps place and deficit",
          "[sched][dwrr]") {
    port p(sched_discipline::DWRR, quanta({1500, 1500, 1500}));
    for (int i = 0; i < 6; ++i) p.push(0, 500), p.push(1, 500), p.push(2, 500);
    CHECK(p.step() == 0);
    CHECK(p.sched.deficit(0) == 1000);
    p.view.blocked[0] = true;  // e.g. its shaper ran out of tokens
    CHECK(p.step() == 1);
    CHECK(p.step() == 1);
    CHECK(p.step() == 1);
    CHECK(p.sched.deficit(1) == 0);
    CHECK(p.step() == 2);  // q1 ends its round and goes behind q2; q0 stays at the head
    CHECK(p.sched.active_at(0) == 0);
    CHECK(p.sched.active_at(1) == 2);
    CHECK(p.sched.active_at(2) == 1);
    CHECK(p.sched.deficit(0) == 1000);  // no new visit granted to the skipped queue
    CHECK(p.sched.rounds(0) == 0);
    p.view.blocked[0] = false;
    CHECK(p.step() == 0);  // continues its visit: 1000 - 500, not 1000 + 1500 - 500
    CHECK(p.sched.deficit(0) == 500);
    CHECK(p.step() == 0);
    CHECK(p.sched.deficit(0) == 0);
    CHECK(p.step() == 2);  // q0 ends, q2 continues its visit (deficit 1000 left)
    CHECK(p.sched.deficit(2) == 500);
}

TEST_CASE("queue_scheduler: nothing eligible returns -1 without changing state", "[sched]") {
    for (auto d : {sched_discipline::DWRR, sched_discipline::WRR}) {
        port p(d, {{false, 1500}, {false, 1500}, {true, 0}});
        CHECK(p.sched.pick(p.view, 0) == -1);
        p.push(0, 1000), p.push(0, 1000), p.push(1, 1000), p.push(2, 100);
        CHECK(p.step() == 2);
        CHECK(p.step() == 0);
        const auto log = p.obs.log;
        for (unsigned i = 0; i < 3; ++i) p.view.blocked[i] = true;
        CHECK(p.sched.pick(p.view, p.now) == -1);
        CHECK(p.sched.pick(p.view, p.now + 1000) == -1);
        CHECK(p.sched.deficit(0) == 500);
        CHECK(p.sched.deficit(1) == 0);
        CHECK(p.sched.active_at(0) == 0);
        CHECK(p.sched.active_at(1) == 1);
        CHECK(p.sched.rounds(0) == 0);
        CHECK(p.obs.log == log);
    }
}

TEST_CASE("queue_scheduler: repeated pick without served grants one quantum", "[sched]") {
    for (auto d : {sched_discipline::DWRR, sched_discipline::WRR}) {
        port p(d, quanta({1500, 3000}));
        p.push(0, 1000), p.push(0, 1000), p.push(1, 1500);
        for (int i = 0; i < 5; ++i) {
            CHECK(p.sched.pick(p.view, p.now) == 0);
            CHECK(p.sched.deficit(0) == 1500);
        }
        p.step();
        for (int i = 0; i < 5; ++i) {
            CHECK(p.sched.pick(p.view, p.now) == 1);
            CHECK(p.sched.deficit(1) == 3000);
            CHECK(p.sched.rounds(0) == 1);  // q0's round ended once
        }
    }
}

TEST_CASE("queue_scheduler: observer sees activations and round ends at the right times",
          "[sched][observer]") {
    queue_scheduler s(sched_discipline::DWRR, quanta({1000, 1000}));
    recorder obs;
    s.set_observer(&obs);
    fifo_view v(2);
    v.q[0] = {600, 600};
    s.backlogged(0, 10);
    v.q[1] = {300};
    s.backlogged(1, 20);
    CHECK(s.pick(v, 100) == 0);
    v.q[0].pop_front();
    s.served(0, 600, false, 100, 580);
    CHECK(s.pick(v, 580) == 1);  // q0: 600 > 400 -> quantum used up, sampled at pick's now
    v.q[1].pop_front();
    s.served(1, 300, true, 580, 820);  // emptied -> sampled at tx_end
    CHECK(s.pick(v, 820) == 0);
    v.q[0].pop_front();
    s.served(0, 600, true, 820, 1300);
    CHECK(s.pick(v, 1300) == -1);
    const std::vector<event> want = {
        {'A', 0, 10}, {'A', 1, 20}, {'F', 0, 580}, {'F', 1, 820}, {'F', 0, 1300}};
    CHECK(obs.log == want);
    CHECK(s.rounds(0) == 2);
    CHECK(s.rounds(1) == 1);

    // No observer: same bookkeeping, no calls.
    s.set_observer(nullptr);
    v.q[1] = {100};
    s.backlogged(1, 2000);
    CHECK(s.pick(v, 2000) == 1);
    v.q[1].pop_front();
    s.served(1, 100, true, 2000, 2080);
    CHECK(s.rounds(1) == 2);
    CHECK(obs.log.size() == want.size());
}

TEST_CASE("queue_scheduler: serve_alone equals backlogged, pick and served on an idle port",
          "[sched][observer]") {
    for (const sched_discipline d :
         {sched_discipline::DWRR, sched_discipline::WRR, sched_discipline::SP}) {
        std::vector<queue_sched_params> p = quanta({1538, 3000, 1538});
        p[2].strict = true;
        port slow(d, p), fast(d, p);
        // Some history first, so the deficits and round counts are not all zero.
        for (port* x : {&slow, &fast}) {
            x->push(0, 1500);
            x->push(0, 900);
            x->push(1, 700);
            while (x->step() >= 0) {
            }
        }
        using frame_in = std::pair<unsigned, std::uint32_t>;
        for (const auto& [q, bytes] : {frame_in{0, 1500}, {1, 2000}, {2, 64}, {0, 64}}) {
            REQUIRE(fast.sched.serves_alone(q, bytes));
            slow.push(q, bytes);
            CHECK(slow.step() == static_cast<int>(q));
            const ps_t tx_end = fast.now + bytes * PS_PER_BYTE_10G;
            fast.sched.serve_alone(q, bytes, fast.now, tx_end);
            fast.now = tx_end;
            for (unsigned i = 0; i < 3; ++i) {
                CHECK(fast.sched.deficit(i) == slow.sched.deficit(i));
                CHECK(fast.sched.rounds(i) == slow.sched.rounds(i));
                CHECK(fast.sched.active(i) == slow.sched.active(i));
            }
            CHECK(fast.obs.log == slow.obs.log);
        }
    }
    // Not alone: another queue is backlogged, or the frame exceeds a WRR/DWRR quantum.
    queue_scheduler s(sched_discipline::DWRR, quanta({1538, 1538}));
    CHECK_FALSE(s.serves_alone(0, 1539));
    s.backlogged(1, 0);
    CHECK_FALSE(s.serves_alone(0, 64));
    CHECK_THROWS_AS(s.serve_alone(0, 64, 0, 100), std::logic_error);
}

TEST_CASE("queue_scheduler: DWRR quantum below the frame size accumulates over rounds",
          "[sched][dwrr]") {
    port p(sched_discipline::DWRR, quanta({500, 1500}));
    p.push(0, 1500), p.push(0, 1500), p.push(1, 1500), p.push(1, 1500);
    // q0 500 < 1500 -> round ends; q1 serves 1500; q0 1000 -> ends; q1; q0 1500 -> serves.
    CHECK(p.step() == 1);
    CHECK(p.sched.deficit(0) == 500);
    CHECK(p.step() == 1);
    CHECK(p.sched.deficit(0) == 1000);
    CHECK(p.step() == 0);
    CHECK(p.sched.deficit(0) == 0);
    CHECK(p.sched.rounds(0) == 2);
    // Alone, pick() loops through the rounds itself (0 -> 500 -> 1000 -> 1500: three round
    // ends), then the queue empties (a fourth).
    CHECK(p.step() == 0);
    CHECK(p.sched.rounds(0) == 6);
}

TEST_CASE("queue_scheduler: WRR frame above the quantum starves only its queue", "[sched][wrr]") {
    port p(sched_discipline::WRR, quanta({1000, 1000}));
    p.push(0, 1500);  // would never fit a 1000 B counter (config validation forbids it)
    CHECK(p.sched.pick(p.view, p.now) == -1);  // terminates
    p.push(1, 500), p.push(1, 500), p.push(1, 500);
    CHECK(p.step() == 1);
    CHECK(p.step() == 1);
    CHECK(p.step() == 1);
    CHECK(p.step() == -1);
    CHECK(p.sent[0] == 0);
}

TEST_CASE("queue_scheduler and token_bucket: hot paths do not allocate", "[sched][shaper]") {
    struct counting_observer : round_observer {
        void queue_activated(unsigned, ps_t) override { ++calls; }
        void queue_finished_round(unsigned, ps_t) override { ++calls; }
        long calls = 0;
    } obs;
    for (auto d : {sched_discipline::DWRR, sched_discipline::WRR}) {
        port p(d, {{false, 1500}, {false, 3000}, {true, 0}, {false, 4500}});
        p.sched.set_observer(&obs);
        std::uint64_t k = 0;
        for (int j = 0; j < 3000; ++j)
            for (unsigned i = 0; i < 4; ++i) p.push(i, pattern_size(k++));
        p.view.blocked[1] = true;
        token_bucket tb(10'000'000'000, 3000);
        const long before = g_allocations;
        const long calls_before = obs.calls;
        for (int n = 0; n < 9000; ++n) {
            if (n == 4000) p.view.blocked[1] = false;
            const int q = p.sched.pick(p.view, p.now);
            if (q < 0) break;
            const auto u = static_cast<unsigned>(q);
            const std::uint32_t bytes = p.view.q[u].front();
            p.view.q[u].pop_front();
            p.now = tb.ready_at(bytes, p.now);
            tb.consume(bytes, p.now);
            p.sched.served(u, bytes, p.view.q[u].empty(), p.now, p.now + bytes * PS_PER_BYTE_10G);
        }
        const long allocations = g_allocations - before;
        CHECK(allocations == 0);
        CHECK(obs.calls > calls_before);
    }
}

TEST_CASE("queue_scheduler: constructor and call validation", "[sched]") {
    const std::vector<queue_sched_params> eight(8);
    CHECK(queue_scheduler(sched_discipline::DWRR, eight).queues() == 8);
    CHECK_THROWS_AS(queue_scheduler(sched_discipline::DWRR, std::vector<queue_sched_params>(9)),
                    std::invalid_argument);
    CHECK_THROWS_AS(queue_scheduler(sched_discipline::SP, std::vector<queue_sched_params>(9)),
                    std::invalid_argument);
    CHECK_THROWS_AS(queue_scheduler(sched_discipline::WRR, {}), std::invalid_argument);
    CHECK_THROWS_AS(queue_scheduler(sched_discipline::DWRR, quanta({1500, 0})),
                    std::invalid_argument);
    CHECK_THROWS_AS(queue_scheduler(sched_discipline::WRR, quanta({0})), std::invalid_argument);
    CHECK_NOTHROW(queue_scheduler(sched_discipline::SP, quanta({0, 0})));
    CHECK_NOTHROW(queue_scheduler(sched_discipline::DWRR, {{false, 1}, {true, 0}}));

    queue_scheduler s(sched_discipline::WRR, quanta({1500, 3000}));
    CHECK(s.discipline() == sched_discipline::WRR);
    CHECK(s.quantum(1) == 3000);
    CHECK_FALSE(s.strict(0));
    CHECK_THROWS_AS(s.backlogged(2, 0), std::out_of_range);
    CHECK_THROWS_AS(s.served(0, 100, true, 0, 80), std::logic_error);
    s.backlogged(0, 0);
    CHECK_THROWS_AS(s.backlogged(0, 5), std::logic_error);
}

// ---------------------------------------------------------------------------------------------
// token_bucket

TEST_CASE("token_bucket: exact ready_at after draining", "[shaper]") {
    token_bucket b(10'000'000'000, 3000);
    CHECK_FALSE(b.unlimited());
    CHECK(b.tokens_bytes(0) == 3000.0);
    CHECK(b.ready_at(3000, 0) == 0);
    b.consume(3000, 0);
    CHECK(b.tokens_bytes(0) == 0.0);
    CHECK(b.ready_at(1500, 0) == 1'200'000);
    CHECK(b.ready_at(1500, 500'000) == 1'200'000);
    CHECK(b.ready_at(1500, 1'200'000) == 1'200'000);
    CHECK(b.tokens_bytes(1'199'999) < 1500.0);
    CHECK(b.tokens_bytes(1'200'000) == 1500.0);
    CHECK(b.ready_at(1, 0) == 800);
    b.consume(1500, 1'200'000);
    CHECK(b.ready_at(64, 1'200'000) == 1'200'000 + 64 * 800);
}

TEST_CASE("token_bucket: ready_at rounds up to a whole ps", "[shaper]") {
    token_bucket b(3'000'000'000, 64);  // 1 B = 8000/3 = 2666.67 ps
    b.consume(64, 0);
    CHECK(b.ready_at(1, 0) == 2667);
    CHECK(b.ready_at(1, 2666) == 2667);
    CHECK(b.tokens_bytes(2666) < 1.0);
    CHECK(b.tokens_bytes(2667) >= 1.0);
    CHECK(b.ready_at(1, 2667) == 2667);
    b.consume(1, 2667);  // the 1/3 ps of surplus is kept: 2 more bytes by 8000 ps, not 8001
    CHECK(b.ready_at(2, 2667) == 8000);
}

TEST_CASE("token_bucket: long-run rate of back-to-back sending is exact", "[shaper]") {
    const std::uint64_t rates[] = {7'000'000'000, 10'000'000'000, 400'000'000'000, 1'000'003};
    for (std::uint64_t rate : rates) {
        INFO("rate " << rate);
        const std::uint64_t burst = 1538;
        token_bucket b(rate, burst);
        ps_t t = 0;
        u128 total = 0;
        for (std::uint64_t i = 0; i < 1'000'000; ++i) {
            const std::uint32_t bytes = pattern_size(i) + 38;
            const ps_t r = b.ready_at(bytes, t);
            REQUIRE(r >= t);
            t = r;
            b.consume(bytes, t);
            total += bytes;
        }
        // Never capped while sending back to back: cap + rate*t_N covers the total, t_N - 1
        // does not, i.e. t_N = ceil((total - burst) * 8e12 / rate).
        const u128 units = (total - burst) * token_bucket::UNITS_PER_BYTE;
        const auto expect = static_cast<ps_t>((units + rate - 1) / rate);
        CHECK(t == expect);
        const double achieved = static_cast<double>(units) / static_cast<double>(t);
        CHECK(std::abs(achieved / static_cast<double>(rate) - 1) < 1e-9);
        CHECK(b.tokens_bytes(t) >= 0.0);
        CHECK(b.tokens_bytes(t) < static_cast<double>(rate) / 8e12 + 1e-9);
    }
}

TEST_CASE("token_bucket: refill stops at the burst", "[shaper]") {
    token_bucket b(10'000'000'000, 3000);
    b.consume(1000, 0);
    CHECK(b.tokens_bytes(400'000) == 2500.0);
    CHECK(b.tokens_bytes(1'000'000'000) == 3000.0);
    CHECK(b.ready_at(3000, 1'000'000'000) == 1'000'000'000);
    CHECK(b.ready_at(3001, 1'000'000'000) == 1'000'000'000);  // above the burst: full bucket
    b.consume(3000, 1'000'000'000);
    // Idle time beyond filling the bucket earned nothing.
    CHECK(b.ready_at(1500, 1'000'000'000) == 1'000'000'000 + 1'200'000);
    CHECK(b.tokens_bytes(std::numeric_limits<ps_t>::max()) == 3000.0);
}

TEST_CASE("token_bucket: large burst and rate do not overflow", "[shaper]") {
    constexpr ps_t END = std::numeric_limits<ps_t>::max();
    constexpr std::uint64_t U64_MAX = std::numeric_limits<std::uint64_t>::max();
    const std::uint64_t gib = 1ull << 30;
    token_bucket b(1'600'000'000'000, gib);  // 1.6 Tbps: 1 B = 5 ps
    CHECK(b.tokens_bytes(0) == double(gib));
    b.consume(static_cast<std::uint32_t>(gib), 0);
    CHECK(b.ready_at(static_cast<std::uint32_t>(gib), 0) == gib * 5);
    CHECK(b.tokens_bytes(gib * 5) == double(gib));
    CHECK(b.tokens_bytes(END) == double(gib));
    CHECK(b.ready_at(64, END - 1) == END - 1);
    b.consume(1500, 1ull << 62);
    CHECK(b.tokens_bytes(1ull << 62) == double(gib - 1500));

    token_bucket m(U64_MAX, U64_MAX);
    m.consume(std::numeric_limits<std::uint32_t>::max(), 0);
    CHECK(m.tokens_bytes(END) == Approx(1.8446744073709552e19));

    token_bucket slow(1, 64);  // 1 bps: 64 B take 512 s
    slow.consume(64, 0);
    CHECK(slow.ready_at(64, 0) == 512 * PS_PER_S);
    token_bucket never(1, gib);
    never.consume(static_cast<std::uint32_t>(gib), 0);
    CHECK(never.ready_at(static_cast<std::uint32_t>(gib), 0) == END);
}

TEST_CASE("token_bucket: a frame above the burst leaves the bucket in debt", "[shaper]") {
    token_bucket b(10'000'000'000, 64);
    CHECK(b.ready_at(1500, 0) == 0);  // bucket full
    b.consume(1500, 0);
    CHECK(b.tokens_bytes(0) == 64.0 - 1500.0);
    CHECK(b.ready_at(64, 0) == 1500 * 800);  // pays the debt at the rate
}

TEST_CASE("token_bucket: unlimited is always ready", "[shaper]") {
    token_bucket d;
    token_bucket z(0, 0);
    for (token_bucket* b : {&d, &z}) {
        CHECK(b->unlimited());
        CHECK(b->rate_bps() == 0);
        CHECK(b->ready_at(9000, 0) == 0);
        b->consume(9000, 0);
        b->consume(9000, 0);
        CHECK(b->ready_at(std::numeric_limits<std::uint32_t>::max(), 12345) == 12345);
        CHECK(std::isinf(b->tokens_bytes(0)));
    }
}

TEST_CASE("token_bucket: constructor validation", "[shaper]") {
    CHECK_THROWS_AS(token_bucket(10'000'000'000, 63), std::invalid_argument);
    CHECK_THROWS_AS(token_bucket(1, 0), std::invalid_argument);
    token_bucket b(10'000'000'000, 64);
    CHECK(b.rate_bps() == 10'000'000'000);
    CHECK(b.burst_bytes() == 64);
    CHECK(b.tokens_bytes(0) == 64.0);
}
