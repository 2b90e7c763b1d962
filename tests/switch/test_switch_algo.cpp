#include <catch2/catch.hpp>

#include <map>
#include <memory>

#include "fabricsim/switch/algo/forwarding_table.h"
#include "fabricsim/switch/switch_config.h"

using namespace fabricsim;
using namespace fabricsim::sw;

TEST_CASE("ECMP keeps a flow on one port and spreads flows", "[switch][ecmp]") {
    forwarding_table t(99);
    t.add_route(0x0a000005, {3, 4, 5, 6});
    frame f;
    f.dst_ip = 0x0a000005;
    std::map<int, int> per_port;
    for (std::uint16_t sp = 0; sp < 4000; ++sp) {
        f.src_port = sp;
        const int p = t.lookup(f);
        CHECK(p == t.lookup(f));
        per_port[p]++;
    }
    REQUIRE(per_port.size() == 4);
    for (auto& [p, n] : per_port) CHECK(n == Approx(1000).margin(120));
    frame other;
    other.dst_ip = 0x0a000009;
    CHECK(t.lookup(other) == -1);
    forwarding_table t2(100);
    t2.add_route(0x0a000005, {3, 4, 5, 6});
    int differ = 0;
    for (std::uint16_t sp = 0; sp < 100; ++sp) {
        f.src_port = sp;
        differ += t.lookup(f) != t2.lookup(f);
    }
    CHECK(differ > 50);  // the seed changes the hash
}

TEST_CASE("host table keeps every route through growth and replacement", "[switch][routes]") {
    forwarding_table t(1);
    for (std::uint32_t h = 0; h < 1000; ++h)
        t.add_route(0x0a000000 + h * 256, {static_cast<std::uint16_t>(h % 7)});
    CHECK(t.size() == 1000);
    t.add_route(0x0a000000 + 5 * 256, {42});  // replaces
    CHECK(t.size() == 1000);
    frame f;
    for (std::uint32_t h = 0; h < 1000; ++h) {
        f.dst_ip = 0x0a000000 + h * 256;
        CHECK(t.lookup(f) == (h == 5 ? 42 : int(h % 7)));
    }
    f.dst_ip = 0x0b000000;
    CHECK(t.lookup(f) == -1);
    CHECK(forwarding_table().lookup(f) == -1);
}

TEST_CASE("group routes: a rack's hosts by the address plan, host routes first",
          "[switch][routes]") {
    // Hosts 0-3 in rack 0 (behind this switch), 4-7 in rack 1, 8-9 in rack 2, 10 in none.
    auto plan = std::make_shared<address_plan>();
    for (std::uint32_t h = 0; h < 10; ++h)
        plan->assign(ipv4_for_host(h), h < 4 ? 0 : h < 8 ? 1 : 2);
    CHECK(plan->group_of(ipv4_for_host(5)) == 1);
    CHECK(plan->group_of(ipv4_for_host(10)) == address_plan::NONE);
    CHECK(plan->group_of(0x0b000001) == address_plan::NONE);
    CHECK(plan->group_of(ipv4_for_host(253) + 1) == address_plan::NONE);  // 10.0.0.255
    CHECK_THROWS(plan->assign(0x0a0000ff, 0));

    forwarding_table t(7);
    for (std::uint16_t h = 0; h < 4; ++h) t.add_route(ipv4_for_host(h), {h});  // before the plan
    t.set_address_plan(plan);
    t.add_group_route(1, {10, 11});
    t.add_group_route(2, {12});
    t.add_route(ipv4_for_host(9), {13});  // a host route in a routed group wins
    CHECK(t.size() == 5);
    frame f;
    std::map<int, int> per_port;
    for (std::uint32_t h = 0; h < 11; ++h) {
        f.dst_ip = ipv4_for_host(h);
        for (std::uint16_t sp = 0; sp < 200; ++sp) {
            f.src_port = sp;
            const int p = t.lookup(f);
            if (h < 4)
                CHECK(p == int(h));
            else if (h < 8)
                CHECK((p == 10 || p == 11));
            else if (h == 8)
                CHECK(p == 12);
            else if (h == 9)
                CHECK(p == 13);
            else
                CHECK(p == -1);
            if (h == 4) per_port[p]++;
        }
    }
    CHECK(per_port.size() == 2);  // the group is hashed as a host route's group is
    // The same ports as host routes: the same choice for every flow.
    forwarding_table hosts(7);
    hosts.add_route(ipv4_for_host(4), {10, 11});
    f.dst_ip = ipv4_for_host(4);
    for (std::uint16_t sp = 0; sp < 200; ++sp) {
        f.src_port = sp;
        CHECK(t.lookup(f) == hosts.lookup(f));
    }
    CHECK_THROWS(t.add_group_route(3, {}));
    CHECK_THROWS(t.add_group_route(address_plan::NONE, {1}));
}

TEST_CASE("pipeline exit is rounded up to core clock edges", "[switch]") {
    switch_config c;
    c.core_clock_hz = 1.25e9;  // 800 ps
    c.pipeline_latency = 300'000;
    CHECK(c.clock_period() == 800u);
    CHECK(c.pipeline_exit(0) == 300'000u);
    CHECK(c.pipeline_exit(100) == 300'800u);
    CHECK(c.pipeline_exit(500) == 300'800u);
}
