// GRO: in-order segments of a flow within one poll merge into one delivery of up to 64 KB.
#include <catch2/catch.hpp>

#include <vector>

#include "fabricsim/host/algo/gro.h"
#include "fabricsim/host/algo/rx_cpu.h"

using namespace fabricsim;
using namespace fabricsim::host;

namespace {

struct collector : gro_output {
    std::vector<gro_aggregate> out;
    void on_aggregate(unsigned queue, const gro_aggregate& a) override {
        (void)queue;
        out.push_back(a);
    }
};

rx_packet seg(std::uint32_t flow, std::uint32_t seq, std::uint32_t payload = 1448,
              std::uint64_t cookie = 0) {
    rx_packet p;
    p.flow = flow;
    p.seq = seq;
    p.payload = payload;
    p.bytes = payload + 66;
    p.cookie = cookie;
    return p;
}

constexpr ps_t US = PS_PER_US;

}  // namespace

TEST_CASE("gro: in-order segments of one poll become one delivery at the poll end", "[host][gro]") {
    collector c;
    gro_merger g(1, gro_params{}, c);
    for (std::uint32_t i = 0; i < 10; ++i) g.on_delivery(0, seg(7, 1000 + 1448 * i, 1448, i), i);
    CHECK(c.out.empty());
    CHECK(g.held(0) == 1);
    g.on_poll_end(0, 20 * US, true);
    REQUIRE(c.out.size() == 1);
    const gro_aggregate& a = c.out[0];
    CHECK(a.flow == 7);
    CHECK(a.seq == 1000);
    CHECK(a.payload == 14480);
    CHECK(a.segments == 10);
    CHECK(a.bytes == 10 * 1514);
    CHECK(a.first_cookie == 0);
    CHECK(a.last_cookie == 9);
    CHECK(a.at == 20 * US);
    CHECK(g.held(0) == 0);
    CHECK(g.stats().merged == 9);
    CHECK(g.stats().flush_poll == 1);
    CHECK(g.stats().mean_segments() == 10.0);
}

TEST_CASE("gro: a CE change flushes and the merge chains the cookies", "[host][gro]") {
    struct chain : collector {
        std::vector<std::pair<std::uint64_t, std::uint64_t>> links;
        void on_merge(std::uint64_t prev, std::uint64_t cookie) override {
            links.emplace_back(prev, cookie);
        }
    } c;
    gro_merger g(1, gro_params{}, c);
    for (std::uint32_t i = 0; i < 4; ++i) {
        rx_packet p = seg(7, 1448 * i, 1448, i);
        p.ce = i >= 2;  // Linux flushes on a TOS difference: [0, 1] and [2, 3]
        g.on_delivery(0, p, i * US);
    }
    g.on_poll_end(0, 10 * US, true);
    REQUIRE(c.out.size() == 2);
    CHECK(c.out[0].segments == 2);
    CHECK_FALSE(c.out[0].ce);
    CHECK(c.out[0].at == 2 * US);  // flushed by the CE segment, at its time
    CHECK(c.out[1].segments == 2);
    CHECK(c.out[1].ce);
    CHECK(g.stats().flush_tos == 1);
    const std::vector<std::pair<std::uint64_t, std::uint64_t>> want{{0, 1}, {2, 3}};
    CHECK(c.links == want);
}

TEST_CASE("gro: an aggregate holds at most 64 KB", "[host][gro]") {
    // 45 x 1448 = 65160 B fit in 65536; the 46th segment does not: it flushes the 45 at its own
    // time and starts the next aggregate.
    collector c;
    gro_merger g(1, gro_params{}, c);
    for (std::uint32_t i = 0; i < 50; ++i) g.on_delivery(0, seg(1, 1448 * i), i * US);
    REQUIRE(c.out.size() == 1);
    CHECK(c.out[0].segments == 45);
    CHECK(c.out[0].payload == 65160);
    CHECK(c.out[0].at == 45 * US);
    g.on_poll_end(0, 60 * US, false);  // a budget poll end flushes too
    REQUIRE(c.out.size() == 2);
    CHECK(c.out[1].seq == 45 * 1448);
    CHECK(c.out[1].segments == 5);
    CHECK(c.out[1].at == 60 * US);
    CHECK(g.stats().flush_full == 1);
}

TEST_CASE("gro: a gap, a segment without payload and a full table flush", "[host][gro]") {
    collector c;
    gro_params p;
    p.max_flows = 2;
    gro_merger g(2, p, c);
    g.on_delivery(0, seg(1, 0), 1);
    g.on_delivery(0, seg(1, 1448), 2);
    // Out of order (a segment was lost): the two are handed on, the new one held.
    g.on_delivery(0, seg(1, 4 * 1448), 3);
    REQUIRE(c.out.size() == 1);
    CHECK(c.out[0].segments == 2);
    CHECK(c.out[0].at == 3);
    CHECK(g.stats().flush_gap == 1);
    // A pure ACK of flow 1 ends its aggregate and goes on alone, after it.
    g.on_delivery(0, seg(1, 5 * 1448, 0, 99), 4);
    REQUIRE(c.out.size() == 3);
    CHECK(c.out[1].seq == 4 * 1448);
    CHECK(c.out[2].segments == 1);
    CHECK(c.out[2].payload == 0);
    CHECK(c.out[2].first_cookie == 99);
    CHECK(g.stats().flush_control == 1);
    // Flows 2 and 3 fill the two slots; flow 4 evicts the oldest (flow 2).
    g.on_delivery(0, seg(2, 0), 5);
    g.on_delivery(0, seg(3, 0), 6);
    g.on_delivery(0, seg(2, 1448), 7);
    g.on_delivery(0, seg(4, 0), 8);
    REQUIRE(c.out.size() == 4);
    CHECK(c.out[3].flow == 2);
    CHECK(c.out[3].segments == 2);
    CHECK(g.stats().flush_evict == 1);
    // Queues are independent; the poll end of queue 0 flushes 3 then 4 (oldest first).
    g.on_delivery(1, seg(3, 1448), 9);
    CHECK(g.held(1) == 1);
    g.on_poll_end(0, 10, true);
    REQUIRE(c.out.size() == 6);
    CHECK(c.out[4].flow == 3);
    CHECK(c.out[4].seq == 0);
    CHECK(c.out[5].flow == 4);
    CHECK(g.held(1) == 1);
    CHECK(g.stats().aggregates == 6);
    CHECK(g.stats().segments == 9);
}

TEST_CASE("gro: behind rx_cpu, one aggregate per poll", "[host][gro]") {
    // The budget test's set-up (10 frames, budget 4): polls end at 14, 17 and 19 us, so the
    // transport gets 4 + 4 + 2 segments at those times: three ACK opportunities, not ten.
    collector c;
    gro_merger g(1, gro_params{}, c);
    rx_cpu_params p;
    p.irq_cost = 2 * US;
    p.poll_cost = 1 * US;
    p.packet_cost = 500 * PS_PER_NS;
    p.budget = 4;
    nic::coalesce_params co;
    co.rx_usecs = 0;
    co.rx_frames = 10;
    rx_cpu cpu(p, co, g);
    for (std::uint32_t k = 0; k < 10; ++k) cpu.on_completion(0, k * US, seg(3, 1448 * k, 1448, k));
    while (cpu.next_event() != rx_cpu::NEVER) cpu.advance(cpu.next_event());
    REQUIRE(c.out.size() == 3);
    CHECK(c.out[0].segments == 4);
    CHECK(c.out[0].at == 14 * US);
    CHECK(c.out[1].segments == 4);
    CHECK(c.out[1].seq == 4 * 1448);
    CHECK(c.out[1].at == 17 * US);
    CHECK(c.out[2].segments == 2);
    CHECK(c.out[2].at == 19 * US);
    CHECK(c.out[2].last_cookie == 9);
}

TEST_CASE("gro: validate names the field", "[host][gro]") {
    CHECK_FALSE(gro_params{}.validate());
    gro_params p;
    p.max_payload = 0;
    CHECK(p.validate().value().field == "max_payload");
    p = gro_params{};
    p.max_flows = 0;
    CHECK(p.validate().value().field == "max_flows");
    collector c;
    CHECK_THROWS_WITH(gro_merger(1, p, c), "gro_params.max_flows: must be in 1 .. 64");
}
