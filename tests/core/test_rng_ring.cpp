#include <catch2/catch.hpp>

#include "fabricsim/core/ring.h"
#include "fabricsim/core/rng.h"

using namespace fabricsim;

TEST_CASE("rng streams depend on seed and name only", "[rng]") {
    rng a(7, "top.h0.flow1"), b(7, "top.h0.flow1"), c(7, "top.h0.flow2"), d(8, "top.h0.flow1");
    const auto va = a.next();
    CHECK(va == b.next());
    CHECK(va != c.next());
    CHECK(va != d.next());
}

TEST_CASE("exponential and pareto draws have the requested mean", "[rng]") {
    rng r(1, "x");
    double se = 0, sp = 0;
    const int n = 200000;
    for (int i = 0; i < n; ++i) {
        se += r.exponential(5.0);
        sp += r.pareto(3.0, 2.0);
    }
    CHECK(se / n == Approx(5.0).epsilon(0.01));
    CHECK(sp / n == Approx(2.0).epsilon(0.02));
    for (int i = 0; i < 1000; ++i) CHECK(r.below(3) < 3);
}

TEST_CASE("an emptied ring starts again at its first slot", "[ring]") {
    ring<int> q(8);
    q.push_back(1);
    const int* first = &q.front();
    q.push_back(2);
    q.pop_front();
    CHECK(&q.front() == first + 1);
    q.pop_front();
    q.push_back(3);  // not first + 2: a queue that holds a few entries stays in its first lines
    CHECK(&q.front() == first);
    CHECK(q.pop_front() == 3);
}

TEST_CASE("ring keeps FIFO order across growth", "[ring]") {
    ring<int> q(2);
    for (int i = 0; i < 5; ++i) q.push_back(i);
    CHECK(q.pop_front() == 0);
    for (int i = 5; i < 40; ++i) q.push_back(i);
    for (int i = 1; i < 40; ++i) CHECK(q.pop_front() == i);
    CHECK(q.empty());
}

TEST_CASE("a ring with inline slots uses them until it grows, then keeps FIFO order", "[ring]") {
    struct holder {
        int before = 0;
        ring<int, 4> q;
    } h;
    const auto* lo = reinterpret_cast<const char*>(&h);
    const auto in_holder = [&](const int* p) {
        const auto* c = reinterpret_cast<const char*>(p);
        return c >= lo && c < lo + sizeof(h);
    };
    for (int i = 0; i < 4; ++i) h.q.push_back(i);
    CHECK(in_holder(&h.q.front()));  // no allocation yet
    CHECK(h.q.pop_front() == 0);
    for (int i = 4; i < 7; ++i) h.q.push_back(i);  // wraps the inline slots, then grows
    CHECK(!in_holder(&h.q.front()));
    for (int i = 7; i < 40; ++i) h.q.push_back(i);
    CHECK(h.q.size() == 39);
    for (int i = 1; i < 40; ++i) CHECK(h.q.pop_front() == i);
    CHECK(h.q.empty());
}
