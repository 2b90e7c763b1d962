// PAUSE / PFC generation by a switch: XOFF/XON from a lossless PG's ingress accounting, refresh,
// headroom and headroom_exhausted, 802.3x port level and the queue-triggered ON/OFF variant.
// The output is held by a PAUSE from its far end, so the PG's cells follow the arrivals exactly.
#include <catch2/catch.hpp>

#include <memory>

#include <nlohmann/json.hpp>

#include "switch_pair_bench.h"

using namespace fabricsim;

namespace {

constexpr ps_t US = PS_PER_US;
constexpr ps_t FRAME_1500 = 1'230'400;  // 1538 wire bytes at 10G
constexpr ps_t LAST_BIT = 1'220'800;    // first to last bit of a 1518 B frame (+ preamble)
constexpr ps_t CTL = 57'600 + US;       // a control frame's first bit to its last at the peer
constexpr ps_t START = 5 * US;          // the source's first frame
constexpr ps_t XON_AT = 200 * US;       // the far end releases the output

/// Arrival (last bit) at the switch of the source's frame k.
/// Frames dropped, every cause.
std::uint64_t dropped(const nlohmann::json& drops) {
    std::uint64_t n = 0;
    for (const auto& [cause, count] : drops.items()) n += count.get<std::uint64_t>();
    return n;
}

constexpr ps_t arrival(unsigned k) {
    return START + k * FRAME_1500 + LAST_BIT + US;
}

/// The two-port bench with `frames` frames from the source at START, and the output held by its
/// far end from 0 until XON_AT.
struct bench : test::switch_pair_bench {
    bench(const sw::switch_config& cfg, unsigned frames) : switch_pair_bench(cfg) {
        for (unsigned k = 0; k < frames; ++k)
            src.items.push_back({START, &test::make_frame(1500, DST)});
        frame& hold = frame_pool::global().acquire();
        hold.set_pause(0xffff);
        frame& release = frame_pool::global().acquire();
        release.set_pause(0);
        far.items = {{0, &hold}, {XON_AT, &release}};
    }
    /// First bit of the j-th frame the released output sends.
    static ps_t departure(unsigned j) { return XON_AT + CTL + j * FRAME_1500; }
};

/// PG 0 lossless: static limit 80 cells (10 frames of 1518 B, 8 cells each), headroom 40 cells
/// (5 frames), XON offset 12 cells; the output honours PAUSE at once.
sw::switch_config lossless_pg0(sw::pause_generation mode) {
    sw::switch_config cfg;
    for (unsigned tc = 0; tc < 8; ++tc) cfg.qos.tc_to_pg[tc] = static_cast<std::uint8_t>(tc);
    cfg.mmu.pg[0].lossless = true;
    cfg.mmu.queue[0].lossless = true;
    cfg.mmu.pool_cells[sw::LOSSLESS_POOL] = 2000;
    cfg.mmu.headroom_pool_cells = 1000;
    cfg.mmu.pg[0].shared = {false, 0, 80};
    cfg.mmu.pg[0].headroom_cells = 40;
    cfg.mmu.pg[0].xon_offset_cells = 12;
    cfg.flow_control.honour_pause = true;
    cfg.flow_control.response_delay = 0;
    cfg.flow_control_generation.mode = mode;
    return cfg;
}

}  // namespace

TEST_CASE("PFC: XOFF at the PG threshold then headroom then XON below threshold - offset",
          "[pfc][switch][tb]") {
    bench b(lossless_pg0(sw::pause_generation::PFC), 60);
    sc_core::sc_start(to_sc_time(400 * US));
    REQUIRE(b.back.got.size() == 2);
    // Frame 9 brings the PG's shared cells to 80 = its limit: XOFF at its arrival, on the idle
    // reverse wire at once.
    const auto& xoff = b.back.got[0];
    CHECK(xoff.at == arrival(9) + CTL);
    CHECK(xoff.kind == frame_kind::PFC);
    CHECK(xoff.enable == 0x01);
    CHECK(xoff.quanta == std::array<std::uint16_t, 8>{0xffff, 0, 0, 0, 0, 0, 0, 0});
    // Frames 10..14 fill the 40-cell headroom; the other 45 are headroom_exhausted.
    const nlohmann::json out = b.port_stats(1);
    CHECK(out["drops"]["headroom_exhausted"] == 45);
    CHECK(dropped(out["drops"]) == 45);
    const nlohmann::json in = b.port_stats(0);
    CHECK(in["ingress_pgs"][0]["headroom_peak_cells"] == 40);
    CHECK(in["ingress_pgs"][0]["peak_cells"] == 80);
    // Released, the output drains 15 frames: the first 5 empty the headroom, after the 7th
    // start the PG holds 64 <= 80 - 12 cells: XON then.
    const auto& xon = b.back.got[1];
    CHECK(xon.at == bench::departure(6) + CTL);
    CHECK(xon.kind == frame_kind::PFC);
    CHECK(xon.enable == 0x01);
    CHECK(xon.quanta[0] == 0);
    REQUIRE(b.out.got.size() == 15);
    CHECK(b.out.got[0].at == bench::departure(0) + LAST_BIT + US);
    const nlohmann::json& fc = in["flow_control"];
    CHECK(fc["pause_frames_sent"] == 2);
    CHECK(fc["control_frames_sent"] == 2);
    CHECK(fc["xoff_sent"][0] == 1);
    CHECK(fc["xon_sent"][0] == 1);
    CHECK(fc["xoff_time_us"][0] == Approx(double(bench::departure(6) - arrival(9)) / 1e6));
    CHECK(fc["xoff_now"].empty());
    CHECK(in["ingress_pgs"][0]["xoff"] == false);
    // The output side: paused by the far end for XON_AT + CTL - (CTL) of time.
    CHECK(b.port_stats(1)["flow_control"]["paused_time_us"][0] ==
          Approx(double(XON_AT + CTL - CTL) / 1e6));
    CHECK(frame_pool::global().outstanding() == 0);
}

TEST_CASE("PFC: the XOFF is refreshed every refresh_quanta while the PG stays congested",
          "[pfc][switch][tb]") {
    sw::switch_config cfg = lossless_pg0(sw::pause_generation::PFC);
    cfg.flow_control_generation.pause_quanta = 2000;
    cfg.flow_control_generation.refresh_quanta = 1000;  // 51.2 us at 10G
    bench b(cfg, 20);
    sc_core::sc_start(to_sc_time(400 * US));
    // XOFF, three refreshes 51.2 us apart (the fourth would be after the XON), XON.
    REQUIRE(b.back.got.size() == 5);
    const ps_t refresh = 1000 * 51'200;
    for (unsigned i = 0; i < 4; ++i) {
        CHECK(b.back.got[i].at == arrival(9) + i * refresh + CTL);
        CHECK(b.back.got[i].quanta[0] == 2000);
        CHECK(b.back.got[i].enable == 0x01);
    }
    CHECK(b.back.got[4].at == bench::departure(6) + CTL);
    CHECK(b.back.got[4].quanta[0] == 0);
    const nlohmann::json fc = b.port_stats(0)["flow_control"];
    CHECK(fc["refreshes_sent"] == 3);
    CHECK(fc["xoff_sent"][0] == 1);
}

TEST_CASE("802.3x PAUSE generation: port level from the lossless PG", "[pfc][switch][tb]") {
    bench b(lossless_pg0(sw::pause_generation::PAUSE), 15);
    sc_core::sc_start(to_sc_time(400 * US));
    REQUIRE(b.back.got.size() == 2);
    CHECK(b.back.got[0].at == arrival(9) + CTL);
    CHECK(b.back.got[0].kind == frame_kind::PAUSE);
    CHECK(b.back.got[0].quanta[0] == 0xffff);
    CHECK(b.back.got[1].at == bench::departure(6) + CTL);
    CHECK(b.back.got[1].kind == frame_kind::PAUSE);
    CHECK(b.back.got[1].quanta[0] == 0);
    CHECK(b.port_stats(0)["flow_control"]["xoff_sent"][5] == 1);  // all priorities
}

TEST_CASE("queue PAUSE: ON above q_on on the other ports and OFF below q_off (seed-003 1.9)",
          "[pfc][switch][tb]") {
    sw::switch_config cfg;
    cfg.flow_control.honour_pause = true;
    cfg.flow_control.response_delay = 0;
    cfg.flow_control_generation.mode = sw::pause_generation::QUEUE_PAUSE;
    cfg.flow_control_generation.q_on = 5;
    cfg.flow_control_generation.q_off = 3;
    bench b(cfg, 20);
    sc_core::sc_start(to_sc_time(400 * US));
    // Frame 5 makes the held queue 6 > 5 frames: PAUSE ON on port 0 (not on port 1, the
    // congested one). The departure that leaves 2 < 3 behind (the 18th) sends OFF.
    REQUIRE(b.back.got.size() == 2);
    CHECK(b.back.got[0].at == arrival(5) + CTL);
    CHECK(b.back.got[0].kind == frame_kind::PAUSE);
    CHECK(b.back.got[0].quanta[0] == 0xffff);
    CHECK(b.back.got[1].at == bench::departure(17) + CTL);
    CHECK(b.back.got[1].quanta[0] == 0);
    REQUIRE(b.out.got.size() == 20);
    for (const auto& g : b.out.got) CHECK(g.kind == frame_kind::IPV4_UDP);
    CHECK(b.port_stats(1)["flow_control"]["pause_frames_sent"] == 0);
    CHECK(dropped(b.port_stats(0)["drops"]) == 0);
    CHECK(dropped(b.port_stats(1)["drops"]) == 0);
}
