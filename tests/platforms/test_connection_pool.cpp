// Workloads over persistent connections (traffic.workload[].connections): the pool that picks a
// connection per message (plain C++), and what the scenario loader builds from the keys.
#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "fabricsim/platforms/connection_pool.h"
#include "fabricsim/platforms/scenario.h"
#include "scenario_error.h"

using namespace fabricsim;
using namespace fabricsim::platforms;

TEST_CASE("a message takes a random idle connection of its pair, or waits in FIFO order",
          "[connection_pool]") {
    connection_pool pool({3, 1}, rng(1, "pool"));
    std::set<std::uint32_t> taken;
    for (std::uint32_t m = 0; m < 3; ++m) {
        const std::uint32_t c = pool.arrive(0, m);
        REQUIRE(c < 3);
        CHECK(taken.insert(c).second);  // never a busy one
    }
    CHECK(pool.idle(0) == 0);
    // All three busy: the next two wait, oldest first; pair 1 is unaffected.
    CHECK(pool.arrive(0, 3) == connection_pool::NONE);
    CHECK(pool.arrive(0, 4) == connection_pool::NONE);
    CHECK(pool.waiting(0) == 2);
    CHECK(pool.arrive(1, 5) == 0);
    CHECK(pool.queued() == 2);
    // A finishing connection carries the oldest waiting message of its own pair.
    CHECK(pool.finish(0, 1) == 3);
    CHECK(pool.finish(0, 2) == 4);
    CHECK(pool.finish(0, 1) == connection_pool::NONE);
    CHECK(pool.idle(0) == 1);
    CHECK(pool.arrive(0, 6) == 1);  // the only idle one
    CHECK(pool.finish(1, 0) == connection_pool::NONE);
    CHECK_THROWS_AS(pool.finish(1, 0), std::logic_error);  // already idle
}

TEST_CASE("idle connections are drawn uniformly and reproducibly", "[connection_pool]") {
    auto draws = [](std::uint64_t seed) {
        connection_pool pool({4}, rng(seed, "pool"));
        std::vector<std::uint32_t> out;
        for (std::uint32_t m = 0; m < 4000; ++m) {
            const std::uint32_t c = pool.arrive(0, m);
            out.push_back(c);
            pool.finish(0, c);
        }
        return out;
    };
    const auto a = draws(7);
    CHECK(a == draws(7));
    CHECK(a != draws(8));
    std::map<std::uint32_t, int> n;
    for (auto c : a) n[c]++;
    REQUIRE(n.size() == 4);
    for (const auto& [c, k] : n) CHECK(std::abs(k - 1000) < 120);  // ~4 sigma
}

TEST_CASE("a pair needs connections", "[connection_pool]") {
    CHECK_THROWS_AS(connection_pool({2, 0}, rng(1, "p")), std::invalid_argument);
}

namespace {
const std::string INCAST4 =
    "duration: 50ms\n"
    "topology: {kind: incast, host_rate: 1Gbps, incast: {hosts: 4}}\n";
}

TEST_CASE("connections: the flows become messages on persistent connections per pair",
          "[scenario][connection_pool]") {
    const auto sc = load_scenario(
        load_yaml_string(INCAST4 +
                         "traffic: {workload: [{pattern: many_to_one, target: h0, load: 0.1, "
                         "sizes: fixed, size: 20KB, connections: 3, request_size: 100B}]}\n"),
        "t");
    REQUIRE(sc.message_workloads.size() == 1);
    const auto& w = sc.message_workloads[0];
    CHECK(w.name == "traffic.workload[0]");
    CHECK(w.request_bytes == 100);
    // Three senders to h0, in (source, destination) order; per connection a data flow to h0
    // and a request flow back, both app-driven.
    REQUIRE(w.pairs.size() == 3);
    CHECK(sc.flows.size() == 3 * 3 * 2);
    for (std::size_t p = 0; p < 3; ++p) {
        CHECK(int(w.pairs[p].src) == sc.topo.find("h" + std::to_string(p + 1)));
        CHECK(int(w.pairs[p].dst) == sc.topo.find("h0"));
        REQUIRE(w.pairs[p].connections.size() == 3);
        for (const auto& c : w.pairs[p].connections) {
            const auto& data = sc.flows[c.data_flow];
            CHECK((data.src == w.pairs[p].src && data.dst == w.pairs[p].dst));
            CHECK(data.app_driven);
            REQUIRE(c.request_flow >= 0);
            const auto& req = sc.flows[static_cast<std::size_t>(c.request_flow)];
            CHECK((req.src == w.pairs[p].dst && req.dst == w.pairs[p].src));
            CHECK(req.app_driven);
        }
    }
    // Poisson arrivals at 10% of 1 Gb/s per sender for 50 ms: ~30 messages each.
    CHECK(w.messages.size() > 40);
    CHECK(w.messages.size() < 140);
    for (std::size_t i = 0; i < w.messages.size(); ++i) {
        CHECK(w.messages[i].bytes == 20000);
        CHECK(w.messages[i].pair < 3);
        if (i) CHECK(w.messages[i - 1].start <= w.messages[i].start);
    }
    // The same arrivals as the workload with a fresh connection per flow.
    const auto fresh = load_scenario(
        load_yaml_string(INCAST4 +
                         "traffic: {workload: [{pattern: many_to_one, target: h0, load: 0.1, "
                         "sizes: fixed, size: 20KB}]}\n"),
        "t");
    REQUIRE(fresh.flows.size() == w.messages.size());
    for (std::size_t i = 0; i < w.messages.size(); ++i) {
        CHECK(fresh.flows[i].start == w.messages[i].start);
        CHECK(fresh.flows[i].src == w.pairs[w.messages[i].pair].src);
    }
    CHECK(fresh.message_workloads.empty());
}

TEST_CASE("connections: only pairs with messages get connections, none without a request",
          "[scenario][connection_pool]") {
    const auto sc = load_scenario(
        load_yaml_string(INCAST4 +
                         "traffic: {workload: [{pattern: permutation, load: 0.05, sizes: fixed, "
                         "size: 1KB, connections: 2}]}\n"),
        "t");
    REQUIRE(sc.message_workloads.size() == 1);
    const auto& w = sc.message_workloads[0];
    CHECK(w.pairs.size() == 4);  // one destination per source
    CHECK(sc.flows.size() == 4 * 2);
    for (const auto& p : w.pairs)
        for (const auto& c : p.connections) CHECK(c.request_flow == -1);
}

TEST_CASE("connections and request_size are refused where they do not apply",
          "[scenario][connection_pool]") {
    CHECK(scenario_error_of(INCAST4 + "traffic: {workload: [{load: 0.1, request_size: 100B}]}\n") ==
          "traffic.workload[0].request_size: needs persistent connections (connections > 0)");
    CHECK(scenario_error_of(
              INCAST4 + "traffic: {workload: [{load: 0.1, transport: roce, connections: 4}]}\n") ==
          "traffic.workload[0].connections: applies to TCP workloads only (transport: tcp)");
    CHECK(scenario_error_of(INCAST4 + "traffic: {workload: [{load: 0.1, connections: -1}]}\n")
              .find("traffic.workload[0].connections: ") == 0);
    CHECK(scenario_error_of(INCAST4 + "traffic: {workload: [{load: 0.1, connections: 5000}]}\n")
              .find("traffic.workload[0].connections: ") == 0);
}
