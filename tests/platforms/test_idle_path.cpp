#include <catch2/catch.hpp>

#include "fabricsim/platforms/idle_path.h"

using namespace fabricsim;
using namespace fabricsim::platforms;

namespace {
frame tcp_segment(std::uint32_t payload) {
    frame f;
    f.set_ipv4(frame_kind::IPV4_TCP, payload);
    return f;
}
}  // namespace

TEST_CASE("ideal FCT of a host-switch-host path, clock rounding included", "[platforms]") {
    // 10G links with 100 ns of cable and 60 ns of PCS, a 1 GHz switch with a 300 ns pipeline,
    // 500 ns NIC latencies; 3000 B in 1460 B segments (two of 1518 B frames, one of 138 B).
    phy::link_config lc;
    lc.rate_bps = 10'000'000'000ull;
    lc.propagation = 100'000;
    lc.encoding_latency = 60'000;
    const phy::link_timing up(lc, 1, "up"), down(lc, 1, "down");
    sw::switch_config sc;
    idle_path p;
    p.nic_tx_latency = 500'000;
    p.nic_rx_latency = 500'000;
    p.hops = {{&up, &sc}, {&down, nullptr}};
    const frame full = tcp_segment(1460), last = tcp_segment(3000 - 2 * 1460);
    REQUIRE(full.frame_bytes() == 1518);
    REQUIRE(last.frame_bytes() == 138);
    const ps_t start = 123;
    // The first frame starts on the first link at 123 + 500'000 = 500'123, its last bit reaches
    // the switch (8 + 1518) B * 800 ps + 160 ns later (1'880'923), and it leaves the pipeline
    // at 2'180'923 rounded up to the 1 GHz edge 2'181'000 (+77 ps).
    // The last frame starts on the first link after two wire slots (1538 B * 800 ps):
    // 2'960'923; its last bit is in at + (8 + 138) B * 800 ps + 160 ns = 3'237'723, its pipeline
    // ends at 3'537'723 -> edge 3'538'000. But the second frame holds the second link from
    // 2'181'000 + 1'230'400 until 4'641'800, so the last frame starts then, and arrives
    // 276'800 + 500'000 later.
    CHECK(p.arrival(start, full, last, 3) == 5'418'600u);
    CHECK(p.arrival(start, full, last, 3, idle_path::clock_rounding::OFF) == 5'418'600u - 77);
    // 277 ps later the first frame just misses the edge 2'181'000 and leaves at 2'182'000: the
    // second frame, and so the last one, leave 1 ns later too.
    CHECK(p.arrival(start + 277, full, last, 3) == 5'418'600u + 1000);
    // Full-size frames only: the train is limited by the wire slots, not by the last frame.
    CHECK(p.arrival(start, full, full, 3, idle_path::clock_rounding::OFF) ==
          start + 500'000 + 2 * 1'230'400 + 2 * (1'220'800 + 160'000) + 300'000 + 500'000);
    // One frame: no train. 500'000 + 276'800 + 300'000 = 1'076'800, the edge is 1'077'000.
    CHECK(p.arrival(0, last, last, 1) == 1'077'000u + 276'800 + 500'000);
}
