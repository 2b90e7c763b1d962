// Cell-based MMU: admission decisions at the thresholds, drop causes, release and watermarks.
#include <catch2/catch.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "fabricsim/switch/algo/mmu.h"

using namespace fabricsim;
using namespace fabricsim::sw;

namespace {

mmu_config small(std::uint64_t total, unsigned ports, unsigned queues) {
    mmu_config c;
    c.cell_bytes = 208;
    c.total_cells = total;
    c.ports = ports;
    c.queues = queues;
    for (auto& p : c.pg)
        p.shared = {false, 0, 1u << 30};  // ingress out of the way unless a test sets it
    for (auto& q : c.queue) q.shared = {true, 1.0, 0};
    return c;
}

/// Admits 1-cell (64 B) frames until the first drop; returns how many got in.
int fill(mmu& m, unsigned in, unsigned pg, unsigned out, unsigned q, std::uint32_t bytes,
         drop_cause& why, std::vector<mmu_ticket>* kept = nullptr) {
    int n = 0;
    mmu_ticket t;
    while (m.admit(in, pg, out, q, bytes, t, why)) {
        ++n;
        if (kept) kept->push_back(t);
        REQUIRE(n < 100000);
    }
    return n;
}

/// PG 3 lossless (10 static shared cells, then `headroom` cells of headroom from a pool of
/// `headroom_pool`) in a 100-cell lossless pool, into lossless queue `queue`.
void lossless_pg3(mmu_config& c, std::uint64_t headroom, std::uint64_t headroom_pool,
                  unsigned queue) {
    c.pg[3].lossless = true;
    c.pg[3].shared = {false, 0, 10};
    c.pg[3].headroom_cells = headroom;
    c.pool_cells[LOSSLESS_POOL] = 100;
    c.headroom_pool_cells = headroom_pool;
    c.queue[queue].lossless = true;
}

/// Offers `n` frames of mixed sizes over 3 ports, every PG and 4 queues; returns the admitted
/// frames' tickets.
std::vector<mmu_ticket> admit_mix(mmu& m, int n) {
    std::vector<mmu_ticket> kept;
    drop_cause why{};
    mmu_ticket t;
    const std::uint32_t sizes[] = {64, 300, 1500, 9000, 700};
    for (int i = 0; i < n; ++i)
        if (m.admit(unsigned(i % 3), unsigned(i % 8), unsigned((i + 1) % 3), unsigned(i % 4),
                    sizes[i % 5], t, why))
            kept.push_back(t);
    return kept;
}

}  // namespace

TEST_CASE("mmu: a frame takes ceil((bytes + overhead) / cell) cells", "[switch][mmu]") {
    mmu_config c = small(1000, 1, 1);
    mmu m(c);
    CHECK(m.cells_for(64) == 1);
    CHECK(m.cells_for(208) == 1);
    CHECK(m.cells_for(209) == 2);
    CHECK(m.cells_for(1518) == 8);
    c.cell_overhead_bytes = 64;  // Tomahawk's per-packet header
    mmu th(c);
    CHECK(th.cells_for(1500) == 8);
    CHECK(th.cells_for(9216) == 45);
    // The multiply-shift equals the division for every frame size and cell size in range.
    for (std::uint32_t cell = 16; cell <= 4096; cell += 1) {
        c.cell_bytes = cell;
        c.cell_overhead_bytes = cell % 257;
        mmu any(c);
        for (std::uint32_t b = 1; b <= 16384; b += (cell % 7) + 1)
            if (any.cells_for(b) != (b + c.cell_overhead_bytes + cell - 1) / cell)
                FAIL("cell " << cell << " bytes " << b);
    }
}

TEST_CASE("mmu: reserve first, then the dynamic threshold alpha x free shared cells",
          "[switch][mmu]") {
    mmu_config c = small(1000, 2, 1);
    c.queue[0].min_cells = 10;  // 2 ports x 10 reserved -> 980 shared
    mmu m(c);
    REQUIRE(m.pool_cells(LOSSY_POOL) == 980);
    drop_cause why{};
    // alpha 1, 1-cell frames: shared k+1 <= 980 - k admits up to k = 489, so 490 shared + 10
    // reserved.
    CHECK(fill(m, 1, 0, 0, 0, 64, why) == 500);
    CHECK(why == drop_cause::EGRESS_QUEUE_LIMIT);
    CHECK(m.queue_occupancy(0, 0).cells == 500);
    CHECK(m.egress_pool(LOSSY_POOL).cells == 490);
    CHECK(m.queue_limit_cells(0) == 490);
}

TEST_CASE("mmu: 'fit' rejects the frame that would cross the threshold, 'cross' admits it",
          "[switch][mmu]") {
    mmu_config c = small(980, 2, 1);
    drop_cause why{};
    SECTION("fit") {
        mmu m(c);
        // 8-cell frames, alpha 1: 8(k+1) <= 980 - 8k admits k = 0..60.
        CHECK(fill(m, 1, 0, 0, 0, 1500, why) == 61);
        CHECK(m.queue_occupancy(0, 0).cells == 488);
    }
    SECTION("cross") {
        c.accept_crossing = true;
        mmu m(c);
        // 8k < 980 - 8k admits k = 0..61: the 62nd frame crosses the threshold and still enters.
        CHECK(fill(m, 1, 0, 0, 0, 1500, why) == 62);
        CHECK(m.queue_occupancy(0, 0).cells == 496);
    }
}

TEST_CASE("mmu: S saturated queues settle at alpha B / (1 + S alpha)", "[switch][mmu]") {
    for (double alpha : {0.5, 1.0, 2.0, 8.0}) {
        for (unsigned s_queues : {1u, 2u, 4u, 8u}) {
            mmu_config c = small(10000, 8, 1);
            for (auto& q : c.queue) q.shared = {true, alpha, 0};
            mmu m(c);
            drop_cause why{};
            mmu_ticket t;
            // Round-robin 1-cell arrivals into S egress ports until each refuses twice in a row.
            for (int round = 0; round < 20000; ++round)
                for (unsigned p = 0; p < s_queues; ++p) m.admit(0, 0, p, 0, 64, t, why);
            const double expect = alpha * 10000.0 / (1.0 + s_queues * alpha);
            for (unsigned p = 0; p < s_queues; ++p)
                CHECK(double(m.queue_occupancy(p, 0).cells) == Approx(expect).margin(1.0));
        }
    }
}

TEST_CASE("mmu: static thresholds, ingress PG limit and pool exhaustion name their cause",
          "[switch][mmu]") {
    drop_cause why{};
    SECTION("static egress threshold") {
        mmu_config c = small(1000, 1, 2);
        c.queue[1].shared = {false, 0, 100};
        mmu m(c);
        CHECK(fill(m, 0, 0, 0, 1, 64, why) == 100);
        CHECK(why == drop_cause::EGRESS_QUEUE_LIMIT);
    }
    SECTION("ingress PG shared threshold (lossy)") {
        mmu_config c = small(1000, 2, 1);
        c.pg[2].shared = {false, 0, 50};
        c.pg[2].min_cells = 5;
        mmu m(c);
        CHECK(fill(m, 1, 2, 0, 0, 64, why) == 55);
        CHECK(why == drop_cause::INGRESS_PG_LIMIT);
        CHECK(m.pg_occupancy(1, 2).cells == 55);
        CHECK(m.ingress_pool(LOSSY_POOL).cells == 50);
    }
    SECTION("egress pool") {
        mmu_config c = small(1000, 1, 1);
        c.pg[0].min_cells = 100;  // ingress shared use lags egress by 100 cells
        c.queue[0].shared = {false, 0, 1u << 30};
        mmu m(c);
        REQUIRE(m.pool_cells(LOSSY_POOL) == 900);
        CHECK(fill(m, 0, 0, 0, 0, 64, why) == 900);
        CHECK(why == drop_cause::EGRESS_POOL_FULL);
    }
    SECTION("ingress pool") {
        mmu_config c = small(1000, 1, 1);
        c.queue[0].min_cells = 100;
        c.queue[0].shared = {false, 0, 1u << 30};
        mmu m(c);
        CHECK(fill(m, 0, 0, 0, 0, 64, why) == 900);
        CHECK(why == drop_cause::INGRESS_POOL_FULL);
    }
    SECTION("every cell in use") {
        mmu_config c = small(100, 1, 1);
        c.pg[0].min_cells = 50;
        c.queue[0].lossless = true;  // skips egress checks
        mmu m(c);
        CHECK(fill(m, 0, 0, 0, 0, 64, why) == 100);
        CHECK(why == drop_cause::SHARED_BUFFER_FULL);
    }
    SECTION("static port cap in frames and bytes") {
        mmu_config c = small(1000, 1, 2);
        c.port_cap = {3, true};
        mmu m(c);
        mmu_ticket t;
        CHECK(m.admit(0, 0, 0, 0, 64, t, why));
        CHECK(m.admit(0, 0, 0, 1, 64, t, why));
        CHECK(m.admit(0, 0, 0, 0, 64, t, why));
        CHECK_FALSE(m.admit(0, 0, 0, 1, 64, t, why));
        CHECK(why == drop_cause::PORT_CAP);
        c.port_cap = {10 * 208, false};
        mmu mb(c);
        CHECK(fill(mb, 0, 0, 0, 0, 1500, why) == 1);  // 8 cells; a second would need 16 x 208 B
        CHECK(why == drop_cause::PORT_CAP);
    }
}

TEST_CASE("mmu: a lossless PG overflows into its headroom and the headroom pool", "[switch][mmu]") {
    mmu_config c = small(1000, 2, 1);
    lossless_pg3(c, 20, 30, 0);
    mmu m(c);
    drop_cause why{};
    std::vector<mmu_ticket> a;
    CHECK(fill(m, 0, 3, 1, 0, 64, why, &a) == 30);  // 10 shared + 20 headroom
    CHECK(why == drop_cause::HEADROOM_EXHAUSTED);
    CHECK(m.pg_occupancy(0, 3).cells == 10);
    CHECK(m.pg_headroom(0, 3).cells == 20);
    CHECK(m.ingress_pool(LOSSLESS_POOL).cells == 10);
    CHECK(fill(m, 1, 3, 0, 0, 64, why) == 20);  // 10 shared + 10 left in the 30-cell headroom pool
    CHECK(why == drop_cause::HEADROOM_EXHAUSTED);
    // Departures drain headroom first; while any headroom is in use, arrivals still go there.
    for (int i = 0; i < 15; ++i) m.release(a[std::size_t(i)]);
    CHECK(m.pg_headroom(0, 3).cells == 5);
    CHECK(m.pg_occupancy(0, 3).cells == 10);
    mmu_ticket t;
    CHECK(m.admit(0, 3, 1, 0, 64, t, why));
    CHECK(m.pg_headroom(0, 3).cells == 6);
    CHECK(m.headroom_pool().peak_cells == 30);
}

TEST_CASE("mmu: release returns every counter to zero and keeps the watermarks", "[switch][mmu]") {
    mmu_config c = small(2000, 3, 4);
    c.queue[2].min_cells = 4;
    c.pg[1].min_cells = 3;
    mmu m(c);
    const std::vector<mmu_ticket> kept = admit_mix(m, 200);
    REQUIRE(kept.size() > 50);
    const std::uint64_t peak = m.peak_cells();
    for (const auto& k : kept) m.release(k);
    CHECK(m.used_cells() == 0);
    CHECK(m.peak_cells() == peak);
    for (unsigned p = 0; p < 3; ++p) {
        CHECK(m.port_occupancy(p).cells == 0);
        CHECK(m.port_frames(p) == 0);
        for (unsigned q = 0; q < 4; ++q) CHECK(m.queue_occupancy(p, q).cells == 0);
        for (unsigned g = 0; g < 8; ++g) CHECK(m.pg_occupancy(p, g).cells == 0);
    }
    CHECK(m.ingress_pool(LOSSY_POOL).cells == 0);
    CHECK(m.egress_pool(LOSSY_POOL).cells == 0);
}

TEST_CASE("mmu: per-queue alpha: two queues with different alpha stop at their own limits",
          "[switch][mmu]") {
    mmu_config c = small(1000, 2, 2);
    c.queue[0].shared = {true, 1.0, 0};
    c.queue[1].shared = {true, 3.0, 0};
    // The plain path (no reserve, one pool) and the general one (a PG in an empty pool 3 turns
    // it off) share their checks: the same admissions.
    for (const bool plain : {true, false}) {
        INFO("plain " << plain);
        if (!plain) c.pg[7].pool = 3;
        mmu m(c);
        drop_cause why{};
        // Queue 0 alone, alpha 1: k + 1 <= 1000 - k admits k = 0..499.
        CHECK(fill(m, 0, 0, 1, 0, 64, why) == 500);
        CHECK(why == drop_cause::EGRESS_QUEUE_LIMIT);
        CHECK(m.queue_limit_cells(0) == 500);
        // Queue 1, alpha 3, with 500 cells in use: k + 1 <= 3 (500 - k) admits k = 0..374.
        CHECK(fill(m, 0, 0, 1, 1, 64, why) == 375);
        CHECK(why == drop_cause::EGRESS_QUEUE_LIMIT);
        CHECK(m.queue_occupancy(1, 0).cells == 500);
        CHECK(m.queue_occupancy(1, 1).cells == 375);
        CHECK(m.queue_limit_cells(0) == 125);
        CHECK(m.queue_limit_cells(1) == 375);
        CHECK(m.egress_pool(LOSSY_POOL).cells == 875);
        // A static limit per queue: queue 0 at 100 cells refuses at once, queue 1 unchanged.
        c.queue[0].shared = {false, 0, 100};
        mmu s(c);
        CHECK(fill(s, 0, 0, 1, 0, 64, why) == 100);
        CHECK(fill(s, 0, 0, 1, 1, 64, why) == 675);  // k + 1 <= 3 (900 - k): k = 0..674
        c.queue[0].shared = {true, 1.0, 0};
    }
}

TEST_CASE("mmu: four service pools: each PG and queue draws on its own pool", "[switch][mmu]") {
    mmu_config c = small(1000, 2, 4);
    for (unsigned i = 0; i < 4; ++i) {
        c.pg[i].pool = static_cast<std::uint8_t>(i);
        c.queue[i].pool = static_cast<std::uint8_t>(i);
        c.queue[i].shared = {false, 0, 1u << 30};  // only the pools limit
    }
    c.pool_cells = {0, 100, 200, 300};  // pool 0: 1000 - 600 = 400
    REQUIRE(c.validate().empty());
    mmu m(c);
    REQUIRE(m.pool_cells(0) == 400);
    REQUIRE(m.pool_cells(3) == 300);
    drop_cause why{};
    std::vector<mmu_ticket> kept;
    auto pools = [&m](bool ingress) {
        std::vector<std::uint64_t> v;
        for (unsigned p = 0; p < SERVICE_POOLS; ++p)
            v.push_back(ingress ? m.ingress_pool(p).cells : m.egress_pool(p).cells);
        return v;
    };
    using v64 = std::vector<std::uint64_t>;
    // PG 3 -> queue 3: pool 3 on both sides, the ingress check comes first.
    CHECK(fill(m, 0, 3, 1, 3, 64, why, &kept) == 300);
    CHECK(why == drop_cause::INGRESS_POOL_FULL);
    // PG 0 (pool 0, 400) -> queue 2 (pool 2, 200): the egress pool is the smaller.
    CHECK(fill(m, 0, 0, 1, 2, 64, why, &kept) == 200);
    CHECK(why == drop_cause::EGRESS_POOL_FULL);
    // PG 1 (pool 1, 100) -> queue 0 (pool 0).
    CHECK(fill(m, 0, 1, 1, 0, 64, why, &kept) == 100);
    CHECK(why == drop_cause::INGRESS_POOL_FULL);
    // PG 0 -> queue 0: ingress pool 0 has 200 of 400 left, egress pool 0 300.
    CHECK(fill(m, 0, 0, 1, 0, 64, why, &kept) == 200);
    CHECK(why == drop_cause::INGRESS_POOL_FULL);
    // PG 2 (200 free) -> queue 1 (pool 1, 100).
    CHECK(fill(m, 0, 2, 1, 1, 64, why, &kept) == 100);
    CHECK(why == drop_cause::EGRESS_POOL_FULL);
    // PG 2 -> queue 3: pool 3 is full on the egress side.
    CHECK(fill(m, 0, 2, 1, 3, 64, why, &kept) == 0);
    CHECK(why == drop_cause::EGRESS_POOL_FULL);
    CHECK(pools(true) == v64{400, 100, 100, 300});
    CHECK(pools(false) == v64{300, 100, 200, 300});
    CHECK(m.used_cells() == 900);
    CHECK(m.port_occupancy(1).cells == 900);
    // Frames of 8 cells: pool 0 has no ingress room left, so PG 0 refuses even one.
    CHECK(fill(m, 0, 0, 1, 0, 1500, why) == 0);
    CHECK(why == drop_cause::INGRESS_POOL_FULL);
    for (const auto& t : kept) m.release(t);
    CHECK(pools(true) == v64{0, 0, 0, 0});
    CHECK(pools(false) == v64{0, 0, 0, 0});
    CHECK(m.egress_pool(3).peak_cells == 300);
    CHECK(m.ingress_pool(0).peak_cells == 400);
}

TEST_CASE("mmu: a dynamic threshold scales its own pool's free cells", "[switch][mmu]") {
    mmu_config c = small(1000, 2, 4);
    c.pool_cells = {0, 0, 200, 300};  // pool 0: 500
    c.queue[2] = {0, {true, 1.0, 0}, false, 2};
    c.queue[3] = {0, {true, 1.0, 0}, false, 3};
    mmu m(c);
    drop_cause why{};
    // alpha 1 in a 200-cell pool: k + 1 <= 200 - k admits 100; in the 300-cell pool 150;
    // queue 0 in pool 0 (500) is not affected by either: 250.
    CHECK(fill(m, 0, 0, 1, 2, 64, why) == 100);
    CHECK(why == drop_cause::EGRESS_QUEUE_LIMIT);
    CHECK(fill(m, 0, 0, 1, 3, 64, why) == 150);
    CHECK(why == drop_cause::EGRESS_QUEUE_LIMIT);
    CHECK(m.queue_limit_cells(2) == 100);
    CHECK(m.queue_limit_cells(3) == 150);
    CHECK(fill(m, 0, 0, 1, 0, 64, why) == 250);
    CHECK(m.egress_pool(0).cells == 250);
    CHECK(m.egress_pool(2).cells == 100);
    CHECK(m.egress_pool(3).cells == 150);
    CHECK(m.ingress_pool(0).cells == 500);  // every PG in pool 0
}

TEST_CASE("mmu: configurations that leave no shared cell are rejected with the numbers",
          "[switch][mmu]") {
    mmu_config c = small(100, 4, 8);
    CHECK(c.validate().empty());
    c.queue[0].min_cells = 20;  // 4 ports x 20 = 80 reserved
    c.pool_cells[LOSSLESS_POOL] = 20;
    CHECK(c.validate().find("leave no shared cell") != std::string::npos);
    c.pool_cells[LOSSLESS_POOL] = 10;
    CHECK(c.validate().empty());
    CHECK(c.lossy_pool_cells() == 10);
    c.pool_cells[3] = 10;  // pools 2 and 3 are named when they take cells
    CHECK(c.validate() ==
          "reserves (80 cells), the lossless pool (10), pool 3 (10) and the headroom pool (0) "
          "leave no shared cell of the 100-cell buffer for the lossy pool");
    c.pool_cells[3] = 0;
    c.queue[5].pool = 4;
    CHECK(c.validate() == "a queue's pool must be 0..3");
    CHECK_THROWS_AS(mmu(c), std::invalid_argument);
}

namespace {
struct flow_log final : pg_flow_listener {
    struct event {
        bool xoff;
        unsigned port, pg;
    };
    std::vector<event> got;
    void pg_xoff(unsigned port, unsigned pg) override { got.push_back({true, port, pg}); }
    void pg_xon(unsigned port, unsigned pg) override { got.push_back({false, port, pg}); }
};

/// One lossless PG 3 (static limit 20 cells, reserve 2, headroom 10) in a lossless pool.
mmu_config lossless_pg3() {
    mmu_config c = small(1000, 2, 8);
    c.pool_cells[LOSSLESS_POOL] = 200;
    c.headroom_pool_cells = 100;
    c.pg[3].lossless = true;
    c.pg[3].min_cells = 2;
    c.pg[3].shared = {false, 0, 20};
    c.pg[3].headroom_cells = 10;
    c.pg[3].xon_offset_cells = 5;
    return c;
}
}  // namespace

TEST_CASE("mmu: a lossless PG reports XOFF at its threshold and XON below threshold - offset",
          "[switch][mmu][pfc]") {
    mmu m(lossless_pg3());
    flow_log log;
    m.set_flow_listener(&log);
    std::vector<mmu_ticket> t(40);
    drop_cause why{};
    // 1-cell frames: 2 reserve + 19 shared: no XOFF yet; the 22nd brings shared to 20 (= limit).
    unsigned n = 0;
    for (; n < 21; ++n) REQUIRE(m.admit(0, 3, 1, 3, 64, t[n], why));
    CHECK(log.got.empty());
    REQUIRE(m.admit(0, 3, 1, 3, 64, t[n++], why));
    REQUIRE(log.got.size() == 1);
    CHECK((log.got[0].xoff && log.got[0].port == 0 && log.got[0].pg == 3));
    CHECK(m.xoff_pgs(0) == 0x08);
    // Further arrivals go to headroom (10 cells), then headroom_exhausted; no second XOFF.
    for (unsigned k = 0; k < 10; ++k) REQUIRE(m.admit(0, 3, 1, 3, 64, t[n++], why));
    CHECK(m.pg_headroom(0, 3).cells == 10);
    mmu_ticket extra;
    CHECK_FALSE(m.admit(0, 3, 1, 3, 64, extra, why));
    CHECK(why == drop_cause::HEADROOM_EXHAUSTED);
    CHECK(log.got.size() == 1);
    // XON point: max(xon 0, min 2 + limit 20 - offset 5) = 17 cells, headroom empty.
    CHECK(m.pg_xon_cells(3) == 17);
    unsigned r = 0;
    for (; r < 10; ++r) m.release(t[r]);  // headroom drains first
    CHECK(m.pg_headroom(0, 3).cells == 0);
    CHECK(m.pg_occupancy(0, 3).cells == 22);
    for (; r < 14; ++r) m.release(t[r]);  // 18 cells: still XOFF
    CHECK(log.got.size() == 1);
    m.release(t[r++]);  // 17 cells: XON
    REQUIRE(log.got.size() == 2);
    CHECK((!log.got[1].xoff && log.got[1].port == 0 && log.got[1].pg == 3));
    CHECK(m.xoff_pgs(0) == 0);
    // Another port's PG and lossy PGs never report.
    REQUIRE(m.admit(1, 0, 0, 0, 64, t[r], why));
    CHECK(log.got.size() == 2);
}

TEST_CASE("mmu: XON floor and dynamic thresholds", "[switch][mmu][pfc]") {
    mmu_config c = lossless_pg3();
    c.pg[3].xon_cells = 19;  // above limit - offset: the floor decides
    mmu m(c);
    flow_log log;
    m.set_flow_listener(&log);
    CHECK(m.pg_xon_cells(3) == 19);
    c.pg[3].shared = {true, 0.25, 0};  // 0.25 x free lossless-pool cells (200 when empty)
    c.pg[3].xon_cells = 0;
    mmu d(c);
    d.set_flow_listener(&log);
    CHECK(d.pg_xon_cells(3) == 2 + 50 - 5);
    std::vector<mmu_ticket> t(60);
    drop_cause why{};
    // shared s after admission; limit 0.25 x (200 - s): XOFF at the first s >= (200 - s) / 4,
    // s = 40 (limit 40), i.e. the 42nd 1-cell frame.
    for (unsigned n = 0; n < 41; ++n) REQUIRE(d.admit(0, 3, 1, 3, 64, t[n], why));
    CHECK(log.got.empty());
    REQUIRE(d.admit(0, 3, 1, 3, 64, t[41], why));
    CHECK(log.got.size() == 1);
    CHECK(d.xoff_pgs(0) == 0x08);
}

TEST_CASE("mmu: without a listener a lossless PG tracks no XOFF", "[switch][mmu][pfc]") {
    mmu m(lossless_pg3());
    std::vector<mmu_ticket> t(40);
    drop_cause why{};
    for (unsigned n = 0; n < 30; ++n) REQUIRE(m.admit(0, 3, 1, 3, 64, t[n], why));
    CHECK(m.xoff_pgs(0) == 0);
    CHECK(m.pg_headroom(0, 3).cells == 8);
}

TEST_CASE("mmu: audit recomputes every counter from the held frames and names a mismatch",
          "[switch][mmu][invariants]") {
    // Reserves, a lossless PG in headroom and two pools: the general path's every counter.
    mmu_config c = small(2000, 3, 4);
    c.queue[2].min_cells = 4;
    c.pg[1].min_cells = 3;
    lossless_pg3(c, 40, 60, 3);
    mmu m(c);
    std::vector<mmu_ticket> held = admit_mix(m, 300);
    REQUIRE(held.size() > 50);
    CHECK(m.pg_headroom(0, 3).cells + m.pg_headroom(1, 3).cells + m.pg_headroom(2, 3).cells > 0);
    CHECK(m.audit(held).empty());
    // Half leave: still balanced.
    for (std::size_t i = 0; i < held.size() / 2; ++i) m.release(held[i]);
    held.erase(held.begin(), held.begin() + std::ptrdiff_t(held.size() / 2));
    CHECK(m.audit(held).empty());

    SECTION("a release of one cell too few leaves the counters above the held frames") {
        mmu_ticket bad = held.back();
        bad.cells = static_cast<std::uint16_t>(bad.cells - 1);  // the injected accounting bug
        m.release(bad);
        held.pop_back();
        CHECK(m.audit(held) == "buffer cells: " + std::to_string(m.used_cells()) + " counted, " +
                                   std::to_string(m.used_cells() - 1) + " held");
    }
    SECTION("a frame released twice drives a counter below zero") {
        const mmu_ticket twice = held.back();
        m.release(twice);
        held.pop_back();
        m.release(twice);
        CHECK(m.audit(held).rfind("buffer cells: ", 0) == 0);
    }
    SECTION("a frame charged to one queue and released from another") {
        const std::size_t i =
            std::size_t(std::find_if(held.begin(), held.end(),
                                     [](const mmu_ticket& k) { return k.queue == 1; }) -
                        held.begin());
        REQUIRE(i < held.size());
        mmu_ticket moved = held[i];
        moved.queue = 0;
        m.release(moved);
        held.erase(held.begin() + std::ptrdiff_t(i));
        const std::string why_not = m.audit(held);
        CHECK(why_not.find("queue 0 cells") != std::string::npos);
    }
    SECTION("the plain MMU (no reserve, nothing lossless) is audited too") {
        mmu p(small(1000, 2, 2));
        std::vector<mmu_ticket> ph;
        mmu_ticket t;
        drop_cause why{};
        for (int i = 0; i < 20; ++i)
            if (p.admit(unsigned(i % 2), 0, unsigned((i + 1) % 2), unsigned(i % 2), 1500, t, why))
                ph.push_back(t);
        CHECK(p.audit(ph).empty());
        ph.pop_back();
        CHECK(p.audit(ph) == "buffer cells: " + std::to_string(p.used_cells()) + " counted, " +
                                 std::to_string(p.used_cells() - 8) + " held");
    }
}

namespace {
/// Tomahawk's XPE map (facts-mmu §1.3) on a 4-port chip, one port per pipeline, `total` cells.
mmu_config tomahawk_xpes(std::uint64_t total) {
    mmu_config c = small(total, 4, 1);
    c.partitions = 4;
    c.pipes = 4;
    c.partition_map = {0, 0, 1, 1, 2, 2, 3, 3, 2, 2, 3, 3, 0, 0, 1, 1};
    c.port_pipe = {0, 1, 2, 3};
    return c;
}
}  // namespace

TEST_CASE("mmu partitions: a pipeline pair is confined to its XPE's share of the buffer",
          "[switch][mmu][partition]") {
    mmu m(tomahawk_xpes(4000));
    REQUIRE(m.partitions() == 4);
    CHECK(m.partition(0).total_cells() == 1000);
    CHECK(m.partition_of(0, 1) == 0);
    CHECK(m.partition_of(1, 1) == 2);
    CHECK(m.partition_of(3, 2) == 1);
    CHECK(m.partition_of(2, 3) == 3);
    drop_cause why{};
    std::vector<mmu_ticket> held;
    // Alpha 1 on one partition of 1000 cells: the queue stops at 1000 / 2 = 500 cells.
    CHECK(fill(m, 0, 0, 1, 0, 64, why, &held) == 500);
    CHECK(why == drop_cause::EGRESS_QUEUE_LIMIT);
    // Port 3's pipeline maps to the same XPE for this egress port: nothing more.
    CHECK(fill(m, 3, 0, 1, 0, 64, why, &held) == 0);
    // Port 1's pipeline uses XPE 2: another 500 cells for the same queue.
    CHECK(fill(m, 1, 0, 1, 0, 64, why, &held) == 500);
    CHECK(m.partition(0).used_cells() == 500);
    CHECK(m.partition(2).used_cells() == 500);
    CHECK(m.partition(1).used_cells() == 0);
    CHECK(m.used_cells() == 1000);
    CHECK(m.queue_occupancy(1, 0).cells == 1000);
    CHECK(m.port_occupancy(1).peak_cells == 1000);
    CHECK(m.egress_pool(LOSSY_POOL).cells == 1000);
    CHECK(m.audit(held).empty());
    // One shared buffer of the same size holds 2000 cells of the same incast.
    mmu flat(small(4000, 4, 1));
    CHECK(fill(flat, 0, 0, 1, 0, 64, why) == 2000);

    for (const mmu_ticket& t : held) m.release(t);
    CHECK(m.used_cells() == 0);
    CHECK(m.partition(0).used_cells() == 0);
    CHECK(m.peak_cells() == 1000);
    CHECK(m.partition(2).peak_cells() == 500);
    CHECK(m.audit({}).empty());
}

TEST_CASE("mmu partitions: audit checks each partition against its own frames",
          "[switch][mmu][partition][invariants]") {
    mmu m(tomahawk_xpes(4000));
    drop_cause why{};
    mmu_ticket a, b;
    REQUIRE(m.admit(0, 0, 2, 0, 1500, a, why));  // XPE 1
    REQUIRE(m.admit(1, 0, 1, 0, 1500, b, why));  // XPE 2
    CHECK(m.audit({a, b}).empty());
    // Tickets with their egress ports swapped keep every chip-wide sum (same ports, cells and
    // queue) but name XPEs 0 and 3, which hold nothing.
    mmu_ticket a2 = a, b2 = b;
    a2.out_port = 1;
    b2.out_port = 2;
    CHECK(m.audit({a2, b2}) == "partition 0: buffer cells: 0 counted, 8 held");
}

TEST_CASE("mmu partitions: a lossless PG is in XOFF while any partition holds it there",
          "[switch][mmu][partition][pfc]") {
    mmu_config c = tomahawk_xpes(4000);
    c.pool_cells[LOSSLESS_POOL] = 400;  // 100 per partition
    c.headroom_pool_cells = 400;
    c.pg[3].lossless = true;
    c.pg[3].shared = {false, 0, 10};
    c.pg[3].headroom_cells = 20;
    c.queue[0].lossless = true;
    mmu m(c);
    flow_log log;
    m.set_flow_listener(&log);
    drop_cause why{};
    std::vector<mmu_ticket> to1, to3;
    // Port 0 -> egress 1 (XPE 0) reaches its 10 shared cells: XOFF.
    for (int i = 0; i < 10; ++i) REQUIRE(m.admit(0, 3, 1, 0, 64, to1.emplace_back(), why));
    REQUIRE(log.got.size() == 1);
    CHECK(log.got[0].xoff);
    CHECK(m.xoff_pgs(0) == 0x08);
    // The same PG towards egress 3 (XPE 1) has its own 10 shared cells there: a second XOFF
    // inside the chip, none on the wire.
    for (int i = 0; i < 10; ++i) REQUIRE(m.admit(0, 3, 3, 0, 64, to3.emplace_back(), why));
    CHECK(m.partition(1).xoff_pgs(0) == 0x08);
    CHECK(log.got.size() == 1);
    // XPE 0 drains: XPE 1 still holds the PG in XOFF.
    for (const mmu_ticket& t : to1) m.release(t);
    CHECK(m.partition(0).xoff_pgs(0) == 0);
    CHECK(log.got.size() == 1);
    CHECK(m.xoff_pgs(0) == 0x08);
    // XPE 1 drains: XON.
    for (const mmu_ticket& t : to3) m.release(t);
    REQUIRE(log.got.size() == 2);
    CHECK_FALSE(log.got[1].xoff);
    CHECK(m.xoff_pgs(0) == 0);
    CHECK(m.audit({}).empty());
}

TEST_CASE("mmu partitions: a map that does not fit the pipelines or partitions is refused",
          "[switch][mmu][partition]") {
    mmu_config c = tomahawk_xpes(4000);
    c.partition_map.pop_back();
    CHECK(c.validate() == "the partition map has 15 entries; 4 pipelines need 4 x 4");
    c = tomahawk_xpes(4000);
    c.partition_map[5] = 4;
    CHECK(c.validate() == "the partition map names partition 4 of 4");
    c = tomahawk_xpes(4000);
    c.port_pipe.pop_back();
    CHECK(c.validate() == "the port-to-pipeline map does not cover the ports");
    c = tomahawk_xpes(4000);
    c.queue[0].min_cells = 300;  // 4 ports x 300 reserved in each 1000-cell partition
    CHECK(c.validate().rfind("each of the 4 partitions: reserves (1200 cells)", 0) == 0);
    CHECK_THROWS_AS(mmu(c), std::invalid_argument);
}
