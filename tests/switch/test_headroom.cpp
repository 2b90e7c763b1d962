#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "fabricsim/switch/algo/headroom.h"

using namespace fabricsim;
using namespace fabricsim::sw;

namespace {
constexpr std::uint64_t G10 = 10'000'000'000ull;
constexpr std::uint64_t G25 = 25'000'000'000ull;
constexpr std::uint64_t G100 = 100'000'000'000ull;

headroom_inputs at(std::uint64_t rate, ps_t one_way) {
    headroom_inputs in;  // defaults: 9216-B max frame, 1518-B lossless, 208-B cells, spp 0
    in.rate_bps = rate;
    in.one_way_latency = one_way;
    return in;
}

/// The field named by the headroom_error that `f` throws ("" if none).
template <class F>
std::string rejected_field(F&& f) {
    try {
        f();
    } catch (const headroom_error& e) {
        CHECK(std::string(e.what()).rfind(e.field() + ": ", 0) == 0);
        return e.field();
    }
    return "";
}
}  // namespace

TEST_CASE("headroom terms at 10G: Annex 31B response, 1 us and 5 us one way", "[headroom]") {
    // 10G: 1.25 B/ns. Response 60 quanta = 3.072 us = 3840 B; max 9216+20; PFC 8+64;
    // lossless 1518+20. 1 us one way: 2 us round trip = 2500 B.
    // W = 9236 + 72 + 2500 + 3840 + 1538 = 17186 B -> floor(17186 / 1538) = 11 frames (the
    // crossing frame completed at t0, the next ones come a frame time apart) of
    // ceil(1518 / 208) = 8 cells = 88 cells = 18304 B.
    headroom_result r = headroom_needed(at(G10, 1 * PS_PER_US));
    CHECK(r.response_delay == 3'072'000u);
    CHECK(r.max_frame == 9236u);
    CHECK(r.local_commit_ahead == 0u);
    CHECK(r.pause_frame == 72u);
    CHECK(r.propagation == 2500u);
    CHECK(r.response == 3840u);
    CHECK(r.lossless_frame == 1538u);
    CHECK(r.peer_commit_ahead == 0u);
    CHECK(r.wire_bytes == 17186u);
    CHECK(r.lossless_frames == 11u);
    CHECK(r.small_frames == 0u);
    CHECK(r.cells_per_frame == 8u);
    CHECK(r.cells == 88u);
    CHECK(r.bytes == 18304u);
    // 5 us: 12500 B round trip; W = 27186 -> floor(17.68) = 17 frames = 136 cells = 28288 B.
    r = headroom_needed(at(G10, 5 * PS_PER_US));
    CHECK(r.propagation == 12500u);
    CHECK(r.wire_bytes == 27186u);
    CHECK(r.lossless_frames == 17u);
    CHECK(r.cells == 136u);
    CHECK(r.bytes == 28288u);
}

TEST_CASE("headroom terms at 100G: Annex 31B response, 1 us and 5 us one way", "[headroom]") {
    // 100G: 12.5 B/ns. Response 394 quanta = 2.01728 us = 394 x 64 = 25216 B.
    // 1 us: 25000 B round trip; W = 9236 + 72 + 25000 + 25216 + 1538 = 61062 ->
    // floor(39.70) = 39 frames = 312 cells = 64896 B.
    headroom_result r = headroom_needed(at(G100, 1 * PS_PER_US));
    CHECK(r.response_delay == 2'017'280u);
    CHECK(r.response == 25216u);
    CHECK(r.propagation == 25000u);
    CHECK(r.wire_bytes == 61062u);
    CHECK(r.lossless_frames == 39u);
    CHECK(r.cells == 312u);
    CHECK(r.bytes == 64896u);
    // 5 us: 125000 B; W = 161062 -> floor(104.72) = 104 frames = 832 cells = 173056 B.
    r = headroom_needed(at(G100, 5 * PS_PER_US));
    CHECK(r.propagation == 125000u);
    CHECK(r.wire_bytes == 161062u);
    CHECK(r.lossless_frames == 104u);
    CHECK(r.cells == 832u);
    CHECK(r.bytes == 173056u);
}

TEST_CASE("headroom: a given response delay replaces Annex 31B", "[headroom]") {
    headroom_inputs in = at(G100, 1 * PS_PER_US);
    in.response_delay = 3 * PS_PER_US;  // 37500 B at 100G
    const headroom_result r = headroom_needed(in);
    CHECK(r.response_delay == 3'000'000u);
    CHECK(r.response == 37500u);
    CHECK(r.wire_bytes == 9236u + 72 + 25000 + 37500 + 1538);
    in.response_delay = 0;
    CHECK(headroom_needed(in).response == 0u);
}

TEST_CASE("headroom: times become whole bytes, rounded up", "[headroom]") {
    CHECK(bytes_in(0, G10) == 0u);
    CHECK(bytes_in(1, G10) == 1u);
    CHECK(bytes_in(800, G10) == 1u);  // one byte time at 10G
    CHECK(bytes_in(801, G10) == 2u);
    // 165 ns (5 m + 40 ns PCS + 100 ns RS-FEC at 100G) one way: 330 ns = 4125 B round trip.
    CHECK(headroom_needed(at(G100, 165 * PS_PER_NS)).propagation == 4125u);
}

TEST_CASE("headroom: commit-ahead terms of FabricSim switch ports", "[headroom]") {
    headroom_inputs in = at(G100, 1 * PS_PER_US);
    in.local_commit_ahead = 300 * PS_PER_NS;  // 3750 B at 100G
    in.peer_commit_ahead = 300 * PS_PER_NS;   // capped at one lossless frame: 1538 B
    headroom_result r = headroom_needed(in);
    CHECK(r.local_commit_ahead == 3750u);
    CHECK(r.peer_commit_ahead == 1538u);
    CHECK(r.wire_bytes == 61062u + 3750 + 1538);
    CHECK(headroom_terms(r).size() == 7u);
    in.peer_commit_ahead = 100 * PS_PER_NS;  // 1250 B, under one frame
    CHECK(headroom_needed(in).peer_commit_ahead == 1250u);
    CHECK(headroom_terms(headroom_needed(at(G10, 0))).size() == 5u);
}

TEST_CASE("headroom: cells as the MMU charges them", "[headroom]") {
    headroom_inputs in = at(G10, 1 * PS_PER_US);
    SECTION("1456-B frames fill 7 cells exactly; one byte of overhead makes them 8") {
        // W = 9236 + 72 + 2500 + 3840 + 1476 = 17124 -> floor(17124 / 1476) = 11 frames.
        in.lossless_frame_bytes = 1456;
        headroom_result r = headroom_needed(in);
        CHECK(r.wire_bytes == 17124u);
        CHECK(r.lossless_frames == 11u);
        CHECK(r.cells_per_frame == 7u);
        CHECK(r.cells == 77u);
        CHECK(r.bytes == 77u * 208);
        in.cell_overhead_bytes = 1;
        r = headroom_needed(in);
        CHECK(r.cells_per_frame == 8u);
        CHECK(r.cells == 88u);
    }
    SECTION("96-B cells") {
        in.cell_bytes = 96;  // ceil(1518 / 96) = 16 cells; 11 frames -> 176 cells = 16896 B
        const headroom_result r = headroom_needed(in);
        CHECK(r.cells_per_frame == 16u);
        CHECK(r.cells == 176u);
        CHECK(r.bytes == 16896u);
    }
    SECTION("small_packet_percent 100: every byte in 64-B frames") {
        // 17186 / 84 = 204.6 -> 205 frames of 1 cell = 42640 B
        in.small_packet_percent = 100;
        const headroom_result r = headroom_needed(in);
        CHECK(r.lossless_frames == 0u);
        CHECK(r.small_frames == 205u);
        CHECK(r.cells_per_small_frame == 1u);
        CHECK(r.cells == 205u);
        CHECK(r.bytes == 42640u);
    }
    SECTION("small_packet_percent 50: half the bytes each way, counts rounded up") {
        // 8593 B: ceil(8593 / 1538) = 6 frames x 8 cells + ceil(8593 / 84) = 103 x 1 cell
        in.small_packet_percent = 50;
        const headroom_result r = headroom_needed(in);
        CHECK(r.lossless_frames == 6u);
        CHECK(r.small_frames == 103u);
        CHECK(r.cells == 151u);
    }
}

TEST_CASE("headroom: bad inputs are rejected naming the field", "[headroom]") {
    CHECK(rejected_field([] { headroom_needed(at(0, 0)); }) == "rate_bps");
    CHECK(rejected_field([] {
              headroom_inputs in = at(G10, 0);
              in.cell_bytes = 0;
              headroom_needed(in);
          }) == "cell_bytes");
    CHECK(rejected_field([] {
              headroom_inputs in = at(G10, 0);
              in.max_frame_bytes = 63;
              headroom_needed(in);
          }) == "max_frame_bytes");
    CHECK(rejected_field([] {
              headroom_inputs in = at(G10, 0);
              in.lossless_frame_bytes = 63;
              headroom_needed(in);
          }) == "lossless_frame_bytes");
    CHECK(rejected_field([] {
              headroom_inputs in = at(G10, 0);
              in.small_packet_percent = 100.5;
              headroom_needed(in);
          }) == "small_packet_percent");
    CHECK(rejected_field([] {
              headroom_inputs in = at(G10, 0);
              in.small_packet_percent = std::nan("");
              headroom_needed(in);
          }) == "small_packet_percent");
    CHECK(rejected_field([] {
              headroom_inputs in = at(G10, 0);
              in.small_packet_percent = -1;
              headroom_needed(in);
          }) == "small_packet_percent");
    CHECK(rejected_field([] { headroom_needed(at(G10, 2 * PS_PER_S)); }) == "one_way_latency");
    CHECK(rejected_field([] { headroom_needed(at(G10, PS_PER_S)); }).empty());
    CHECK_THROWS_AS(headroom_needed(at(0, 0)), std::invalid_argument);
}

TEST_CASE("SONiC/Mellanox headroom: the worked examples of facts-l2 §2.4", "[headroom][sonic]") {
    // Port mtu 9100, lossless mtu 1024, small packets 100 %, no gearbox, mac_phy 819.2 B,
    // pipeline 18 KiB. Cell 96: worst-case factor 2 x 96 / 97; cell 144: 144 / 64.
    sonic_headroom_inputs in;
    in.rate_bps = G100;
    in.cable_length_m = 5;
    in.cell_bytes = 96;
    // 100G/5m: cable 2 x 5 x 1e5 x 1e9 / 1.98e8 / 8192 = 616.52; response 394 x 64 = 25216;
    // 1024 + (9100 + 616.52 + 819.2 + 25216) x 1.97938 = 71790.3 -> 72704.
    sonic_headroom_result r = sonic_headroom(in);
    CHECK(r.pause_quanta == 394u);
    CHECK(r.peer_response == 25216.0);
    CHECK(r.bytes_on_cable == Approx(616.51673).epsilon(1e-6));
    CHECK(r.cell_occupancy == Approx(192.0 / 97));
    CHECK(r.xoff == 72704u);
    CHECK(r.xon == 18432u);
    CHECK(r.size == 91136u);
    // 100G/40m/144: 1024 + (9100 + 4932.13 + 819.2 + 25216) x 2.25 = 91175.5 -> 92160.
    in.cable_length_m = 40;
    in.cell_bytes = 144;
    r = sonic_headroom(in);
    CHECK(r.worst_case_factor == 2.25);
    CHECK(r.xoff == 92160u);
    CHECK(r.xon == 18432u);
    CHECK(r.size == 110592u);
    // 25G/5m/96: 80 quanta = 5120 B; 1024 + (9100 + 154.13 + 819.2 + 5120) x 1.97938 = 31097.4
    // -> 31744.
    in.rate_bps = G25;
    in.cable_length_m = 5;
    in.cell_bytes = 96;
    r = sonic_headroom(in);
    CHECK(r.pause_quanta == 80u);
    CHECK(r.xoff == 31744u);
    CHECK(r.xon == 18432u);
    CHECK(r.size == 50176u);
}

TEST_CASE("SONiC/Mellanox headroom: quanta table, lanes, shared pool", "[headroom][sonic]") {
    sonic_headroom_inputs in;
    in.rate_bps = G10;
    in.cable_length_m = 5;
    // Mellanox keys 10G to 67 quanta (4288 B; the model's Annex 31B default is 60):
    // 1024 + (9100 + 61.65 + 819.2 + 4288) x 1.97938 = 29267.5 -> 29696, the MSN2700
    // 10G/5m profile's xoff. With 60 quanta it would be 28380.7 -> 28672.
    sonic_headroom_result r = sonic_headroom(in);
    CHECK(mellanox_pause_quanta(G10) == 67u);
    CHECK(r.peer_response == 4288.0);
    CHECK(r.xoff == 29696u);
    // A speed missing from the table takes the 3.8 KiB fallback.
    in.rate_bps = 20'000'000'000ull;
    r = sonic_headroom(in);
    CHECK(r.pause_quanta == 0u);
    CHECK(r.peer_response == Approx(3891.2));
    // 8 lanes: xon = 2 x 18432 - 1024 = 35840; size = ceil1K(72704 + 35840 + 9100) = 117760.
    in.rate_bps = G100;
    in.eight_lanes = true;
    r = sonic_headroom(in);
    CHECK(r.xoff == 72704u);
    CHECK(r.xon == 35840u);
    CHECK(r.size == 117760u);
    // Shared headroom pool: the profile's size is xon only.
    in.eight_lanes = false;
    in.shared_headroom_pool = true;
    CHECK(sonic_headroom(in).size == 18432u);
    // No small packets: occupancy 1; 1024 + 35751.78 = 36775.8 -> 36864.
    in.shared_headroom_pool = false;
    in.small_packet_percent = 0;
    CHECK(sonic_headroom(in).xoff == 36864u);
}

TEST_CASE("SONiC/Mellanox headroom: bad inputs name the field", "[headroom][sonic]") {
    auto with = [](auto set) {
        return rejected_field([&] {
            sonic_headroom_inputs in;
            in.rate_bps = G100;
            in.cable_length_m = 5;
            set(in);
            sonic_headroom(in);
        });
    };
    CHECK(with([](sonic_headroom_inputs& in) { in.rate_bps = 0; }) == "rate_bps");
    CHECK(with([](sonic_headroom_inputs& in) { in.cable_length_m = -1; }) == "cable_length_m");
    CHECK(with([](sonic_headroom_inputs& in) { in.cell_bytes = 0; }) == "cell_bytes");
    CHECK(with([](sonic_headroom_inputs& in) { in.lossless_mtu = 10; }) == "lossless_mtu");
    CHECK(with([](sonic_headroom_inputs& in) { in.small_packet_percent = 101; }) ==
          "small_packet_percent");
    CHECK(with([](sonic_headroom_inputs&) {}).empty());
}
