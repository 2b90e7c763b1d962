// Ingress pipelines (algo/ingress_pipeline.h): service times, start times, the input buffer and
// its overflow, release order, exact to the picosecond. The switch.pipeline and switch.chip keys
// are in test_switch_config.cpp.
#include <catch2/catch.hpp>

#include <vector>

#include "fabricsim/core/frame_pool.h"
#include "fabricsim/switch/algo/ingress_pipeline.h"

using namespace fabricsim;
using namespace fabricsim::sw;

namespace {

constexpr ps_t P = 1000;  // 1 GHz core clock

/// A UDP frame of `bytes` (FCS included; >= 64).
frame& make(std::uint32_t bytes) {
    frame& f = frame_pool::global().acquire();
    f.set_ipv4(frame_kind::IPV4_UDP, bytes - 46);
    REQUIRE(f.frame_bytes() == bytes);
    return f;
}

struct held_frames {
    std::vector<frame*> all;
    ~held_frames() {
        for (frame* f : all) frame_pool::global().release(*f);
    }
    frame& operator()(std::uint32_t bytes) {
        all.push_back(&make(bytes));
        return *all.back();
    }
};

pipeline_config limited(double ppc, std::uint32_t bpc, std::uint64_t buffer) {
    pipeline_config c;
    c.count = 2;
    c.packets_per_cycle = ppc;
    c.bytes_per_cycle = bpc;
    c.input_buffer_bytes = buffer;
    return c;
}

using verdict = ingress_pipelines::verdict;

}  // namespace

TEST_CASE("pipeline service time is the larger of the packet and the byte limit",
          "[switch][pipeline]") {
    const ingress_pipelines one(limited(1, 0, 0), 4, P);
    CHECK(one.service_ps(64) == 1000);
    CHECK(one.service_ps(1518) == 1000);
    const ingress_pipelines two(limited(2, 0, 0), 4, P);
    CHECK(two.service_ps(64) == 500);
    // 64 B per cycle: a 64 B frame takes 1 cycle, a 65 B one 1.015625 (rounded up to the ps).
    const ingress_pipelines bytes(limited(0, 64, 0), 4, P);
    CHECK(bytes.service_ps(64) == 1000);
    CHECK(bytes.service_ps(65) == 1016);
    CHECK(bytes.service_ps(1518) == 23719);  // ceil(1518000 / 64)
    const ingress_pipelines both(limited(1, 64, 0), 4, P);
    CHECK(both.service_ps(64) == 1000);
    CHECK(both.service_ps(1518) == 23719);
    // Packets per cycle at a period that does not divide: round(1176 / 3) = 392.
    CHECK(ingress_pipelines(limited(3, 0, 0), 4, 1176).service_ps(64) == 392);
}

TEST_CASE("ports map to pipelines in contiguous blocks or by port_map", "[switch][pipeline]") {
    pipeline_config c = limited(1, 0, 0);
    c.count = 4;
    const ingress_pipelines blocks(c, 32, P);
    CHECK(blocks.pipeline_of(0) == 0);
    CHECK(blocks.pipeline_of(7) == 0);
    CHECK(blocks.pipeline_of(8) == 1);
    CHECK(blocks.pipeline_of(31) == 3);
    const ingress_pipelines uneven(c, 6, P);  // p * 4 / 6
    CHECK(uneven.pipeline_of(1) == 0);
    CHECK(uneven.pipeline_of(2) == 1);
    CHECK(uneven.pipeline_of(5) == 3);
    c.count = 2;
    c.port_map = {1, 0, 1};
    const ingress_pipelines mapped(c, 3, P);
    CHECK(mapped.pipeline_of(0) == 1);
    CHECK(mapped.pipeline_of(1) == 0);
    CHECK_THROWS_WITH(ingress_pipelines(c, 4, P),
                      "pipeline.port_map has 3 entries; the switch has 4 ports");
    c.port_map = {0, 2, 1};
    CHECK_THROWS_WITH(ingress_pipelines(c, 3, P),
                      "pipeline.port_map[1]: pipeline 2 of a chip with 2");
}

TEST_CASE("a busy pipeline holds frames in their port's input buffer and drops what does not fit",
          "[switch][pipeline]") {
    held_frames frames;
    // One frame per cycle; 200 B of input buffer per port; ports 0,1 on pipeline 0, 2,3 on 1.
    ingress_pipelines p(limited(1, 0, 200), 4, P);
    // Three 64 B frames of port 0 at t = 100: the first starts, two wait (128 B at port 0).
    CHECK(p.offer(frames(64), 0, 100) == verdict::START);
    frame& b = frames(64);
    frame& c = frames(64);
    CHECK(p.offer(b, 0, 100) == verdict::WAIT);
    CHECK(p.offer(c, 0, 100) == verdict::WAIT);
    CHECK(p.next_start() == 1100);
    CHECK(p.held_bytes(0) == 128);
    // 128 + 100 > 200 at port 0: dropped, and it takes no slot.
    CHECK(p.offer(frames(100), 0, 150) == verdict::OVERFLOW);
    // Port 1 has its own 200 B.
    frame& d = frames(100);
    CHECK(p.offer(d, 1, 150) == verdict::WAIT);
    // The other pipeline is free.
    CHECK(p.offer(frames(1518), 2, 150) == verdict::START);
    CHECK(p.held_frames() == 3);
    // Round robin from the port after the last one served (port 0 at 100): d, b, c.
    unsigned port = 99;
    CHECK(p.pop(1099, port) == nullptr);
    CHECK(p.pop(1100, port) == &d);
    CHECK(port == 1);
    CHECK(p.pop(1100, port) == nullptr);
    CHECK(p.next_start() == 2100);
    CHECK(p.pop(2100, port) == &b);
    CHECK(port == 0);
    CHECK(p.next_start() == 3100);
    CHECK(p.pop(3100, port) == &c);  // port 1 has nothing left: port 0 again
    CHECK(p.next_start() == ingress_pipelines::NONE);
    CHECK(p.held_frames() == 0);
    CHECK(p.held_bytes(0) == 0);
    // Free again at 4100: a frame at 5000 starts at once.
    CHECK(p.offer(frames(64), 0, 5000) == verdict::START);
    const auto& st = p.lane_stats(0);
    CHECK(st.frames == 5);
    CHECK(st.bytes == 64 * 4 + 100);
    CHECK(st.waited == 3);
    CHECK(st.overflow == 1);
    CHECK(st.peak_buffer_bytes == 228);   // both ports' buffers together
    CHECK(p.busy_time(0, 5000) == 4000);  // the frame taken at 5000 is busy until 6000
    CHECK(p.busy_time(0, 6000) == 5000);
    CHECK(p.lane_stats(1).frames == 1);
}

TEST_CASE("the arbiter shares a busy pipeline equally among its ports", "[switch][pipeline]") {
    held_frames frames;
    pipeline_config c = limited(1, 0, 1 << 16);
    c.count = 1;
    ingress_pipelines one(c, 3, P);  // ports 0, 1, 2 on one pipeline
    // Port 0 sends 4 frames, then port 2 sends 2, all at t = 0: port 0's first starts; then
    // port 2 (the next port with a frame after 0), 0, 2, 0, 0.
    std::vector<frame*> sent;
    for (unsigned i = 0; i < 4; ++i) sent.push_back(&frames(64));
    for (unsigned i = 0; i < 2; ++i) sent.push_back(&frames(64));
    CHECK(one.offer(*sent[0], 0, 0) == verdict::START);
    for (unsigned i = 1; i < 4; ++i) CHECK(one.offer(*sent[i], 0, 0) == verdict::WAIT);
    for (unsigned i = 4; i < 6; ++i) CHECK(one.offer(*sent[i], 2, 0) == verdict::WAIT);
    std::vector<unsigned> ports;
    unsigned port = 0;
    for (ps_t t = 1000; t <= 5000; t += 1000) {
        CHECK(one.next_start() == t);
        frame* f = one.pop(t, port);
        REQUIRE(f != nullptr);
        ports.push_back(port);
    }
    CHECK(ports == std::vector<unsigned>{2, 0, 2, 0, 0});
}

TEST_CASE("held frames of several pipelines leave in start order, ties by pipeline",
          "[switch][pipeline]") {
    held_frames frames;
    ingress_pipelines p(limited(0, 64, 1 << 16), 4, P);   // 64 B per cycle
    CHECK(p.offer(frames(640), 2, 0) == verdict::START);  // pipeline 1 busy to 10000
    CHECK(p.offer(frames(128), 0, 0) == verdict::START);  // pipeline 0 busy to 2000
    frame& a = frames(64);
    frame& b = frames(64);
    frame& c = frames(64);
    CHECK(p.offer(a, 3, 500) == verdict::WAIT);  // pipeline 1: starts 10000
    CHECK(p.offer(b, 1, 600) == verdict::WAIT);  // pipeline 0: starts 2000
    CHECK(p.offer(c, 0, 700) == verdict::WAIT);  // pipeline 0: starts 3000
    CHECK(p.next_start() == 2000);
    unsigned port = 0;
    std::vector<frame*> order;
    for (ps_t t : {2000, 3000, 10000})
        while (frame* f = p.pop(t, port)) order.push_back(f);
    CHECK(order == std::vector<frame*>{&b, &c, &a});
    // Two pipelines due at the same time: the lower index first.
    CHECK(p.offer(frames(640), 0, 20000) == verdict::START);
    CHECK(p.offer(frames(640), 2, 20000) == verdict::START);
    frame& x = frames(64);
    frame& y = frames(64);
    CHECK(p.offer(y, 3, 20000) == verdict::WAIT);
    CHECK(p.offer(x, 1, 20000) == verdict::WAIT);
    CHECK(p.pop(30000, port) == &x);
    CHECK(p.pop(30000, port) == &y);
}

// ---------------------------------------------------------------- MMU cell writes

TEST_CASE("cell writes: a frame waits for its partition's write port at the pipeline's end",
          "[switch][pipeline][cells]") {
    // Two pipelines without a rate limit, two partitions, 1 cell per cycle: a 4-cell frame
    // holds its partition's write port for 4 cycles.
    held_frames make_frame;
    ingress_pipelines p(limited(0, 0, 4096), 4, P, 2, 1);
    REQUIRE(p.writes_limited());
    unsigned port = 0, part = 0;
    std::uint32_t cells = 0;
    frame& a = make_frame(64);
    CHECK(p.offer_write(a, 0, 1000, 0, 4) == verdict::START);
    p.wrote(0, 4, 1000);  // admitted: partition 0 writes until 5000
    // The other pipeline's frame to partition 0 waits; one to partition 1 would not.
    frame& b = make_frame(64);
    CHECK(p.offer_write(b, 2, 2000, 0, 1) == verdict::WAIT);
    CHECK(p.next_start() == 5000);
    CHECK(p.pop_write(4999, port, part, cells) == nullptr);
    CHECK(p.pop_write(5000, port, part, cells) == &b);
    CHECK((port == 2 && part == 0 && cells == 1));
    p.wrote(0, 1, 5000);
    CHECK(p.next_start() == ingress_pipelines::NONE);
    CHECK(p.partition_writes(0).frames == 2);
    CHECK(p.partition_writes(0).cells == 5);
    CHECK(p.write_busy_time(0, 5500) == 4500);
    CHECK(p.partition_writes(1).frames == 0);
}

TEST_CASE("cell writes: a frame the MMU drops writes nothing", "[switch][pipeline][cells]") {
    held_frames make_frame;
    ingress_pipelines p(limited(0, 0, 4096), 4, P, 1, 0.5);  // 2 cycles per cell
    unsigned port = 0, part = 0;
    std::uint32_t cells = 0;
    CHECK(p.offer_write(make_frame(64), 0, 0, 0, 2) == verdict::START);
    p.wrote(0, 2, 0);  // busy until 4000
    frame& dropped = make_frame(64);
    frame& next = make_frame(64);
    CHECK(p.offer_write(dropped, 1, 100, 0, 3) == verdict::WAIT);
    CHECK(p.offer_write(next, 1, 200, 0, 1) == verdict::WAIT);
    CHECK(p.pop_write(4000, port, part, cells) == &dropped);
    // No wrote(): the port is still free at 4000, so the next frame starts in the same instant.
    CHECK(p.next_start() == 4000);
    CHECK(p.pop_write(4000, port, part, cells) == &next);
    p.wrote(0, 1, 4000);
    CHECK(p.partition_writes(0).cells == 3);
    CHECK(p.write_busy_time(0, 6000) == 6000);
}

TEST_CASE("cell writes: pipelines waiting for one write port take it round robin",
          "[switch][pipeline][cells]") {
    // Both pipelines always have a 1-cell frame for partition 0; the write port takes one per
    // 2 cycles; each pipeline gets every other write, not the lower-numbered one all of them.
    held_frames make_frame;
    ingress_pipelines p(limited(0, 0, 1 << 20), 4, P, 1, 0.5);
    for (unsigned i = 0; i < 6; ++i) {
        CHECK(p.offer_write(make_frame(64), 0, 0, 0, 1) ==
              (i == 0 ? verdict::START : verdict::WAIT));
        if (i == 0) p.wrote(0, 1, 0);
        CHECK(p.offer_write(make_frame(64), 3, 0, 0, 1) == verdict::WAIT);
    }
    std::vector<unsigned> order;
    std::vector<ps_t> at;
    unsigned port = 0, part = 0;
    std::uint32_t cells = 0;
    while (p.next_start() != ingress_pipelines::NONE) {
        const ps_t now = p.next_start();
        frame* f = p.pop_write(now, port, part, cells);
        REQUIRE(f != nullptr);
        p.wrote(part, cells, now);
        order.push_back(port);
        at.push_back(now);
        if (order.size() > 20) break;
    }
    CHECK(order == std::vector<unsigned>{3, 0, 3, 0, 3, 0, 3, 0, 3, 0, 3});
    CHECK(at == std::vector<ps_t>{2000, 4000, 6000, 8000, 10000, 12000, 14000, 16000, 18000, 20000,
                                  22000});
}

TEST_CASE("cell writes: a frame writing nothing passes a busy write port",
          "[switch][pipeline][cells]") {
    held_frames make_frame;
    ingress_pipelines p(limited(0, 0, 4096), 4, P, 1, 1);
    CHECK(p.offer_write(make_frame(64), 0, 0, 0, 8) == verdict::START);
    p.wrote(0, 8, 0);
    // A control frame (no partition) on the same pipeline, nothing held: it starts at once.
    CHECK(p.offer_write(make_frame(64), 1, 10, ingress_pipelines::NO_PARTITION, 0) ==
          verdict::START);
}
