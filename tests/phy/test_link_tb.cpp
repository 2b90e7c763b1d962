#include <catch2/catch.hpp>

#include "fabricsim/phy/link.h"
#include "tb.h"

using namespace fabricsim;

TEST_CASE("link delivers back-to-back frames at exact times with one event each", "[phy][tb]") {
    phy::link_config c;
    c.rate_bps = 10'000'000'000ull;
    c.propagation = PS_PER_US;
    test::tb_source src("src");
    test::tb_sink sink("sink"), back("back");
    phy::link l("l", c, 1);
    src.tx.socket.bind(l.ab.in);
    l.ab.out.bind(sink.rx.socket);
    for (int i = 0; i < 3; ++i) src.items.push_back({0, &test::make_frame(1500, 0, i)});
    const auto before = counters().activations;
    sc_core::sc_start(to_sc_time(10 * PS_PER_US));
    REQUIRE(sink.got.size() == 3);
    for (int i = 0; i < 3; ++i) {
        CHECK(sink.got[i].at == 1'230'400u * i + 1'220'800u + 1'000'000u);
        CHECK(src.wire_free[i] == 1'230'400u * (i + 1));
    }
    CHECK(counters().activations - before == 3);
    CHECK(l.ab.get_stats().frames == 3);
    CHECK(l.ab.frames_held() == 0);
}

TEST_CASE("link down drops and counts frames", "[phy][tb]") {
    phy::link_config c;
    c.down = {{2 * PS_PER_US, 5 * PS_PER_US}};  // hits frames 2 and 3
    test::tb_source src("src");
    test::tb_sink sink("sink");
    phy::link l("l", c, 1);
    src.tx.socket.bind(l.ab.in);
    l.ab.out.bind(sink.rx.socket);
    for (int i = 0; i < 3; ++i) src.items.push_back({0, &test::make_frame(1500)});
    sc_core::sc_start(to_sc_time(20 * PS_PER_US));
    CHECK(sink.got.size() == 1);
    CHECK(l.ab.get_stats().drops[drop_cause::LINK_DOWN] == 2);
    CHECK(frame_pool::global().outstanding() == 0);
}
