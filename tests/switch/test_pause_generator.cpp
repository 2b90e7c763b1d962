// PAUSE/PFC generation state: what a switch port advertises and the frames that say it.
#include <catch2/catch.hpp>

#include "fabricsim/core/frame.h"
#include "fabricsim/switch/algo/pause_generator.h"

using namespace fabricsim;
using namespace fabricsim::sw;

namespace {
constexpr std::uint64_t G10 = 10'000'000'000ull;
/// PG 3 covers priorities 3 and 4, PG 1 priority 1.
constexpr std::array<std::uint8_t, 8> PGS{0x01, 0x02, 0, 0x18, 0, 0, 0, 0xe4};

pause_generation_config pfc(std::uint16_t quanta = 0xffff, std::uint16_t refresh = 0x7fff) {
    pause_generation_config c;
    c.mode = pause_generation::PFC;
    c.pause_quanta = quanta;
    c.refresh_quanta = refresh;
    return c;
}
}  // namespace

TEST_CASE("pause_generator: PFC XOFF and XON per PG's priorities", "[switch][pfc]") {
    pause_generator g(pfc(), G10, PGS);
    CHECK(g.refresh_due() == pause_generator::NEVER);
    REQUIRE(g.pg_xoff(3, 1000));
    frame f;
    g.fill(f, 1000);
    CHECK(f.kind == frame_kind::PFC);
    CHECK(f.pfc_enable == 0x18);
    CHECK(f.pause_quanta == std::array<std::uint16_t, 8>{0, 0, 0, 0xffff, 0xffff, 0, 0, 0});
    CHECK(f.frame_bytes() == 64);
    // Refresh every 32767 quanta (51.2 ns each at 10G).
    CHECK(g.refresh_due() == 1000 + 32767ull * 51'200);
    // A second PG: the frame carries every XOFF priority.
    REQUIRE(g.pg_xoff(1, 2000));
    frame f2;
    g.fill(f2, 2000);
    CHECK(f2.pfc_enable == 0x1a);
    CHECK(f2.pause_quanta[1] == 0xffff);
    // The same PG again changes nothing.
    CHECK_FALSE(g.pg_xoff(3, 3000));
    // XON of PG 3: its priorities get quanta 0, PG 1's stay XOFF.
    REQUIRE(g.pg_xon(3, 5000));
    frame f3;
    g.fill(f3, 5000);
    CHECK(f3.pfc_enable == 0x1a);
    CHECK(f3.pause_quanta == std::array<std::uint16_t, 8>{0, 0xffff, 0, 0, 0, 0, 0, 0});
    CHECK(g.xoff_priorities() == 0x02);
    REQUIRE(g.pg_xon(1, 6000));
    frame f4;
    g.fill(f4, 6000);
    CHECK(f4.pfc_enable == 0x02);
    CHECK(f4.pause_quanta[1] == 0);
    CHECK(g.refresh_due() == pause_generator::NEVER);
    // Counts and time in XOFF per priority.
    CHECK(g.stats().frames_sent == 4);
    CHECK(g.stats().refreshes == 0);
    CHECK(g.stats().xoff_sent[3] == 1);
    CHECK(g.stats().xon_sent[4] == 1);
    CHECK(g.xoff_time(3, 9000) == 4000);
    CHECK(g.xoff_time(1, 9000) == 4000);
    CHECK(g.xoff_time(0, 9000) == 0);
}

TEST_CASE("pause_generator: refresh re-sends the XOFF set and an undone change sends nothing",
          "[switch][pfc]") {
    pause_generator g(pfc(2000, 1000), G10, PGS);
    REQUIRE(g.pg_xoff(0, 0));
    frame f;
    g.fill(f, 0);
    const ps_t due = g.refresh_due();
    CHECK(due == 1000 * 51'200);
    CHECK_FALSE(g.change_pending());
    frame r;
    g.fill(r, due);  // the refresh
    CHECK(r.pfc_enable == 0x01);
    CHECK(r.pause_quanta[0] == 2000);
    CHECK(g.stats().refreshes == 1);
    CHECK(g.refresh_due() == 2 * due);
    // XON then XOFF again before a frame went: nothing to tell.
    CHECK(g.pg_xon(0, due + 10));
    CHECK(g.change_pending());
    CHECK(g.pg_xoff(0, due + 20));
    CHECK_FALSE(g.change_pending());
    CHECK(g.stats().xon_sent[0] == 1);
    CHECK(g.stats().xoff_sent[0] == 2);
}

TEST_CASE("pause_generator: 802.3x PAUSE is port level", "[switch][pfc]") {
    pause_generation_config c = pfc(0x1234);
    c.mode = pause_generation::PAUSE;
    pause_generator g(c, G10, PGS);
    REQUIRE(g.pg_xoff(3, 0));
    frame f;
    g.fill(f, 0);
    CHECK(f.kind == frame_kind::PAUSE);
    CHECK(f.pause_quanta[0] == 0x1234);
    CHECK(g.xoff_priorities() == 0xff);
    CHECK_FALSE(g.pg_xoff(1, 10));
    CHECK_FALSE(g.pg_xon(3, 20));  // PG 1 still XOFF
    REQUIRE(g.pg_xon(1, 30));
    frame x;
    g.fill(x, 30);
    CHECK(x.kind == frame_kind::PAUSE);
    CHECK(x.pause_quanta[0] == 0);
    // Queue PAUSE drives the port as a whole.
    c.mode = pause_generation::QUEUE_PAUSE;
    pause_generator q(c, G10, PGS);
    REQUIRE(q.port_state(true, 0));
    CHECK_FALSE(q.port_state(true, 5));
    REQUIRE(q.port_state(false, 7));
    CHECK(q.xoff_time(5, 100) == 7);
}
