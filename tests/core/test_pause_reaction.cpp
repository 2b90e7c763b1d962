#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "fabricsim/core/frame_pool.h"
#include "fabricsim/core/pause_reaction.h"
#include "fabricsim/core/pcap_writer.h"
#include "tshark.h"

using namespace fabricsim;

namespace {
constexpr std::uint64_t G10 = 10'000'000'000ull;

frame& pause_frame(std::uint16_t quanta) {
    frame& f = frame_pool::global().acquire();
    f.set_pause(quanta);
    return f;
}

pause_reaction_config honour(bool pause, bool pfc, ps_t delay) {
    pause_reaction_config c;
    c.honour_pause = pause;
    c.honour_pfc = pfc;
    c.response_delay = delay;
    return c;
}
}  // namespace

TEST_CASE("pause quanta are 512 bit times at the port speed", "[pfc][core]") {
    CHECK(pause_quanta_ps(1, G10) == 51'200u);
    CHECK(pause_quanta_ps(65535, G10) == 3'355'392'000u);
    CHECK(pause_quanta_ps(1, 25'000'000'000ull) == 20'480u);
    CHECK(pause_quanta_ps(1, 100'000'000'000ull) == 5'120u);
    CHECK(pause_quanta_ps(0, G10) == 0u);
}

TEST_CASE("the default response delay is 802.3 Annex 31B per speed", "[pfc][core]") {
    CHECK(annex31b_response_quanta(1'000'000'000ull) == 2);
    CHECK(annex31b_response_ps(G10) == 60u * 51'200u);  // 3.072 us
    CHECK(annex31b_response_ps(25'000'000'000ull) == 80u * 20'480u);
    CHECK(annex31b_response_ps(40'000'000'000ull) == 118u * 12'800u);
    CHECK(annex31b_response_ps(100'000'000'000ull) == 394u * 5'120u);
    CHECK(annex31b_response_ps(400'000'000'000ull) == 905u * 1'280u);
    pause_reaction_config c;
    c.honour_pause = true;
    CHECK(pause_reaction(c, G10).response_delay() == 3'072'000u);
    CHECK(pause_reaction(honour(true, false, 1234), G10).response_delay() == 1234u);
}

TEST_CASE("PAUSE: response delay, in-flight frame, timer, refresh and XON", "[pfc][core]") {
    const ps_t d = 3'072'000;
    pause_reaction r(honour(true, false, d), G10);
    frame& f = pause_frame(100);
    CHECK(r.receive(f, 1'000'000) == 0);
    CHECK(r.next_apply() == 1'000'000 + d);
    CHECK_FALSE(r.paused(0, 1'000'000 + d - 1));  // not before the response delay
    // At the stop the wire still carries a frame until +500 ns: the timer starts then.
    CHECK(r.apply(1'000'000 + d, 1'500'000 + d) == 0xff);
    CHECK(r.next_apply() == pause_reaction::NEVER);
    for (unsigned p = 0; p < 8; ++p) CHECK(r.paused_until(p) == 1'500'000 + d + 100 * 51'200);
    // A refresh replaces the timer (it does not add to it); it too waits the response delay.
    f.pause_quanta[0] = 200;
    r.receive(f, 5'000'000);
    CHECK(r.paused_until(0) == 1'500'000 + d + 100 * 51'200);
    r.apply(5'000'000 + d, 0);
    CHECK(r.paused_until(0) == 5'000'000 + d + 200 * 51'200);
    // XON releases at once.
    f.pause_quanta[0] = 0;
    CHECK(r.receive(f, 9'000'000) == 0xff);
    CHECK_FALSE(r.paused(0, 9'000'000));
    CHECK(r.stats().pause_frames == 3);
    CHECK(r.stats().xoff[0] == 2);
    CHECK(r.stats().xon[7] == 1);
    frame_pool::global().release(f);
}

TEST_CASE("XON cancels a pending XOFF", "[pfc][core]") {
    pause_reaction r(honour(true, false, 1'000'000), G10);
    frame& f = pause_frame(100);
    r.receive(f, 0);
    f.pause_quanta[0] = 0;
    r.receive(f, 500'000);
    CHECK(r.next_apply() == pause_reaction::NEVER);
    CHECK(r.apply(1'000'000, 0) == 0);
    CHECK_FALSE(r.paused(0, 1'000'000));
    frame_pool::global().release(f);
}

TEST_CASE("PFC pauses the enabled priorities only and unhonoured kinds are ignored",
          "[pfc][core]") {
    pause_reaction r(honour(false, true, 0), G10);
    frame& f = frame_pool::global().acquire();
    std::array<std::uint16_t, 8> q{};
    q[3] = 10;
    q[5] = 77;  // not enabled: ignored
    f.set_pfc(0x08, q);
    r.receive(f, 1000);
    CHECK(r.last_xoff() == 0x08);  // what a PFC watchdog counts
    r.apply(1000, 0);
    CHECK(r.paused_until(3) == 1000 + 10 * 51'200);
    for (unsigned p : {0u, 1u, 2u, 4u, 5u, 6u, 7u}) CHECK(r.paused_until(p) == 0);
    frame& pause = pause_frame(100);
    r.receive(pause, 2000);
    CHECK(r.last_xoff() == 0);  // not honoured
    CHECK(r.next_apply() == pause_reaction::NEVER);
    CHECK(r.stats().ignored_frames == 1);
    CHECK(r.stats().pfc_frames == 1);
    frame_pool::global().release(f);
    frame_pool::global().release(pause);
}

TEST_CASE("PAUSE and PFC frames in a pcap dissect in tshark without malformed warnings",
          "[pfc][core][pcap]") {
    const char* tmp = std::getenv("TMPDIR");
    const std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/fabricsim_pfc_test.pcap";
    {
        pcap_writer w(path);
        frame& p = pause_frame(0x1234);
        p.src_mac = mac_for_node(1);
        w.write(p, 1000);
        std::array<std::uint16_t, 8> q{};
        q[3] = 0xffff;
        q[5] = 7;
        p.set_pfc(0x28, q);
        w.write(p, 2000);
        frame_pool::global().release(p);
    }
    const auto dissected = tshark_verbose(path);
    if (!dissected) {
        WARN("tshark not installed: dissection not checked");
        return;
    }
    const std::string& out = *dissected;
    INFO(out);
    CHECK(out.find("Malformed") == std::string::npos);
    CHECK(out.find("Expert Info (Error") == std::string::npos);
    CHECK(out.find("Opcode: Pause (0x0001)") != std::string::npos);
    CHECK(out.find("pause_time: 4660") != std::string::npos);
    CHECK(out.find("Opcode: Class Based Flow Control [CBFC] Pause (0x0101)") != std::string::npos);
    CHECK(out.find("CBFC Class Enable Vector: 0x0028, C3, C5") != std::string::npos);
    CHECK(out.find("C3: 65535") != std::string::npos);
    CHECK(out.find("C5: 7") != std::string::npos);
    std::remove(path.c_str());
}
