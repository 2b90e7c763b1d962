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
    // The last frame leaves the NIC two wire slots (1538 B * 800 ps) after the first:
    //   123 + 500'000 + 2 * 1'230'400 = 2'960'923
    // and its last bit reaches the switch (8 + 138) B * 800 ps + 160 ns later: 3'237'723.
    // The pipeline ends at 3'537'723, the next 1 GHz edge is 3'538'000 (+277 ps); then the
    // second link (276'800) and the NIC (500'000): 4'314'800.
    CHECK(p.arrival(start, full, last, 3) == 4'314'800u);
    CHECK(p.arrival(start, full, last, 3, idle_path::clock_rounding::OFF) == 4'314'800u - 277);
    // Started 277 ps later, the frame meets the same edge without waiting: the same arrival.
    CHECK(p.arrival(start + 277, full, last, 3) == 4'314'800u);
    // One frame: no train. 500'000 + 276'800 + 300'000 = 1'076'800, the edge is 1'077'000.
    CHECK(p.arrival(0, last, last, 1) == 1'077'000u + 276'800 + 500'000);
}
