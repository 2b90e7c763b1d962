// Egress pipelines (algo/egress_pipeline.h): when a port may start, the round-robin turns of
// waiting ports, a turn passed on by a port that cannot start, service times, exact to the ps.
// End to end (the 64 B egress ceiling on a chip) in tests/platforms/test_switch_pipeline.cpp.
#include <catch2/catch.hpp>

#include <vector>

#include "fabricsim/switch/algo/egress_pipeline.h"

using namespace fabricsim;
using namespace fabricsim::sw;

namespace {

constexpr ps_t P = 1000;  // 1 GHz core clock
constexpr ps_t UNTIL_TOLD = egress_gate::UNTIL_TOLD;

/// The owner's timer: remembers the earliest turn asked for.
struct timer final : egress_pipelines::turn_timer {
    ps_t due = egress_pipelines::NONE;
    void turn_due(ps_t at) override {
        if (at < due) due = at;
    }
    /// Takes the pending turn time (NONE if none).
    ps_t take() {
        const ps_t t = due;
        due = egress_pipelines::NONE;
        return t;
    }
};

/// A port that, on its turn, starts a 64 B frame when `can_start`, and logs the turn.
struct port final : egress_pipelines::port_link {
    egress_pipelines* pipes = nullptr;
    unsigned index = 0;
    ps_t now = 0;
    bool can_start = true;
    std::vector<unsigned>* log = nullptr;
    void pipeline_turn() override {
        log->push_back(index);
        if (can_start && pipes->open_at(index, now) == now) pipes->started(index, 64, now);
    }
};

pipeline_config two_pipes(double ppc, std::uint32_t bpc = 0) {
    pipeline_config c;
    c.count = 2;
    c.egress_packets_per_cycle = ppc;
    c.egress_bytes_per_cycle = bpc;
    return c;
}

/// 4 ports (0-1 on pipeline 0, 2-3 on pipeline 1) with scripted turns.
struct chip {
    timer t;
    egress_pipelines pipes;
    std::vector<port> ports{4};
    std::vector<unsigned> turns;
    explicit chip(const pipeline_config& c) : pipes(c, 4, P, t) {
        for (unsigned p = 0; p < 4; ++p) {
            ports[p].pipes = &pipes;
            ports[p].index = p;
            ports[p].log = &turns;
            pipes.attach(p, ports[p]);
        }
    }
    void run(ps_t now) {
        for (port& p : ports) p.now = now;
        pipes.run_turns(now);
    }
};

}  // namespace

TEST_CASE("egress pipeline: a free pipeline with nobody waiting lets a port start at once",
          "[switch][pipeline][egress]") {
    chip c(two_pipes(1));
    CHECK(c.pipes.pipeline_of(1) == 0);
    CHECK(c.pipes.pipeline_of(2) == 1);
    CHECK(c.pipes.open_at(0, 5000) == 5000);
    c.pipes.started(0, 64, 5000);
    // Busy for one cycle: the other port of pipeline 0 waits its turn; pipeline 1 is free.
    CHECK(c.pipes.open_at(1, 5500) == UNTIL_TOLD);
    CHECK(c.t.take() == 6000);
    CHECK(c.pipes.open_at(2, 5500) == 5500);
    CHECK(c.pipes.waiting_ports(0) == 1);
    // Asking again does not enrol twice or ask for another turn.
    CHECK(c.pipes.open_at(1, 5600) == UNTIL_TOLD);
    CHECK(c.t.take() == egress_pipelines::NONE);
    // Port 0 is back for its next frame while port 1 waits: it waits too.
    CHECK(c.pipes.open_at(0, 6000) == UNTIL_TOLD);
    c.run(6000);
    // Round robin after port 0's start: port 1 first; it starts, so port 0 gets the next turn.
    CHECK(c.turns == std::vector<unsigned>{1});
    CHECK(c.t.take() == 7000);
    c.run(7000);
    CHECK(c.turns == std::vector<unsigned>{1, 0});
    CHECK(c.t.take() == egress_pipelines::NONE);
    CHECK(c.pipes.waiting_ports(0) == 0);
    CHECK(c.pipes.lane_stats(0).frames == 3);
    CHECK(c.pipes.lane_stats(0).turns == 2);
    CHECK(c.pipes.busy_time(0, 7500) == 2500);
}

TEST_CASE("egress pipeline: a port that cannot start passes its turn to the next",
          "[switch][pipeline][egress]") {
    chip c(two_pipes(0.5));  // one frame per 2 cycles
    CHECK(c.pipes.open_at(2, 0) == 0);
    c.pipes.started(2, 64, 0);
    CHECK(c.pipes.open_at(3, 100) == UNTIL_TOLD);
    CHECK(c.pipes.open_at(2, 200) == UNTIL_TOLD);
    CHECK(c.t.take() == 2000);
    c.ports[3].can_start = false;  // e.g. paused
    c.run(2000);
    // Port 3 first (after 2), cannot start: port 2 gets the pipeline in the same instant.
    CHECK(c.turns == std::vector<unsigned>{3, 2});
    CHECK(c.pipes.lane_stats(1).frames == 2);
    CHECK(c.t.take() == egress_pipelines::NONE);  // nobody waits
    CHECK(c.pipes.open_at(3, 4000) == 4000);
}

TEST_CASE("egress pipeline: the byte limit sets the service time", "[switch][pipeline][egress]") {
    chip c(two_pipes(1, 64));
    c.pipes.started(0, 1518, 0);  // ceil(1518 / 64) cycles of 1000 ps, rounded up to the ps
    CHECK(c.pipes.open_at(1, 23718) == UNTIL_TOLD);
    CHECK(c.t.take() == 23719);
    c.run(23719);
    CHECK(c.turns == std::vector<unsigned>{1});
}

TEST_CASE("egress pipeline: every waiting port gets one turn per round",
          "[switch][pipeline][egress]") {
    pipeline_config cfg = two_pipes(1);
    cfg.count = 1;  // all 4 ports on one pipeline
    chip c(cfg);
    CHECK(c.pipes.open_at(0, 0) == 0);
    c.pipes.started(0, 64, 0);
    for (unsigned p : {3u, 1u, 2u, 0u}) CHECK(c.pipes.open_at(p, 0) == UNTIL_TOLD);
    // Each port asks again as soon as it has started (always backlogged).
    for (ps_t t = P; t <= 8 * P; t += P) {
        REQUIRE(c.t.take() == t);
        c.run(t);
        const unsigned last = c.turns.back();
        CHECK(c.pipes.open_at(last, t) == UNTIL_TOLD);
    }
    CHECK(c.turns == std::vector<unsigned>{1, 2, 3, 0, 1, 2, 3, 0});
}

// ---------------------------------------------------------------- turn_arbiter, shared lanes

TEST_CASE("turn arbiter: a port serving two lanes waits its turn in each on its own",
          "[switch][pipeline][egress]") {
    // Lanes as two partitions' read ports: lane 0 serves ports 0-2, lane 1 ports 1-2.
    struct log_port final : turn_arbiter::port_link {
        std::vector<unsigned>* log = nullptr;
        unsigned index = 0;
        void pipeline_turn() override { log->push_back(index); }
    };
    timer t;
    turn_arbiter arb({{0, 1, 2}, {1, 2}}, 3, t);
    std::vector<unsigned> turns;
    std::vector<log_port> ports(3);
    for (unsigned p = 0; p < 3; ++p) {
        ports[p].log = &turns;
        ports[p].index = p;
        arb.attach(p, ports[p]);
    }
    CHECK(arb.open_at(1, 1, 0) == 0);
    arb.started(1, 1, 2, 2000, 0);         // 2 units for 2 cycles
    CHECK(arb.open_at(0, 1, 100) == 100);  // lane 0 is free: port 1 may also start there
    arb.started(0, 1, 1, 1000, 100);
    CHECK(arb.open_at(1, 2, 200) == UNTIL_TOLD);
    CHECK(t.take() == 2000);
    CHECK(arb.open_at(0, 2, 300) == UNTIL_TOLD);
    CHECK(t.take() == 1100);
    CHECK(arb.waiting_ports(0) == 1);
    CHECK(arb.waiting_ports(1) == 1);
    // Port 2 is told once per lane; it does not start (the log port never does).
    arb.run_turns(1100);
    CHECK(turns == std::vector<unsigned>{2});
    CHECK(t.take() == 2000);
    arb.run_turns(2000);
    CHECK(turns == std::vector<unsigned>{2, 2});
    CHECK(t.take() == egress_pipelines::NONE);
    CHECK(arb.lane_stats(1).units == 2);
    CHECK(arb.lane_stats(0).frames == 1);
    CHECK(arb.busy_time(1, 1000) == 1000);
}

TEST_CASE("turn arbiter: a lane serving a port outside the chip is refused",
          "[switch][pipeline][egress]") {
    timer t;
    CHECK_THROWS_WITH(turn_arbiter({{0, 4}}, 4, t), "turn_arbiter: lane 0 serves port 4 of 4");
}
