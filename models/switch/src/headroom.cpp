#include "fabricsim/switch/algo/headroom.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "fabricsim/core/frame.h"
#include "fabricsim/core/pause_reaction.h"

namespace fabricsim::sw {

namespace {

__extension__ typedef unsigned __int128 u128;

constexpr std::uint32_t MAX_FRAME_LIMIT = 65535;
constexpr std::uint32_t SMALL_FRAME = MIN_FRAME_WITH_FCS;
constexpr std::uint32_t FRAME_EXTRA = PREAMBLE_SFD + IFG_BYTES;
/// small_packet_percent in units of 1e-6 percent, so integer percentages give exact counts.
constexpr std::uint64_t PERCENT_SCALE = 1'000'000;

void check_frame(const char* field, std::uint32_t bytes) {
    if (bytes < MIN_FRAME_WITH_FCS || bytes > MAX_FRAME_LIMIT)
        throw headroom_error(
            field, "must be 64..65535 bytes (frame with FCS), got " + std::to_string(bytes));
}

void check_percent(double p) {
    if (!std::isfinite(p) || p < 0 || p > 100)
        throw headroom_error("small_packet_percent", "must be 0..100");
}

std::uint64_t ceil_div(u128 a, u128 b) {
    return static_cast<std::uint64_t>((a + b - 1) / b);
}

std::uint64_t cells_of(std::uint32_t frame, std::uint32_t overhead, std::uint32_t cell) {
    return ceil_div(std::uint64_t(frame) + overhead, cell);
}

}  // namespace

std::uint64_t bytes_in(ps_t t, std::uint64_t rate_bps) {
    return ceil_div(u128(t) * rate_bps, u128(8) * PS_PER_S);
}

headroom_result headroom_needed(const headroom_inputs& in) {
    if (in.rate_bps == 0) throw headroom_error("rate_bps", "must be positive");
    if (in.rate_bps > 1'600'000'000'000ull) throw headroom_error("rate_bps", "must be <= 1.6Tbps");
    if (in.one_way_latency > PS_PER_S) throw headroom_error("one_way_latency", "must be <= 1s");
    check_frame("max_frame_bytes", in.max_frame_bytes);
    check_frame("lossless_frame_bytes", in.lossless_frame_bytes);
    if (in.response_delay && *in.response_delay > PS_PER_S)
        throw headroom_error("response_delay", "must be <= 1s");
    if (in.cell_bytes == 0) throw headroom_error("cell_bytes", "must be positive");
    if (in.cell_overhead_bytes > MAX_FRAME_LIMIT)
        throw headroom_error("cell_overhead_bytes", "must be <= 65535");
    check_percent(in.small_packet_percent);
    if (in.local_commit_ahead > PS_PER_S)
        throw headroom_error("local_commit_ahead", "must be <= 1s");
    if (in.peer_commit_ahead > PS_PER_S) throw headroom_error("peer_commit_ahead", "must be <= 1s");

    headroom_result r;
    r.response_delay = in.response_delay.value_or(annex31b_response_ps(in.rate_bps));
    const std::uint64_t lossless_wire = in.lossless_frame_bytes + FRAME_EXTRA;
    r.max_frame = in.max_frame_bytes + FRAME_EXTRA;
    r.local_commit_ahead = bytes_in(in.local_commit_ahead, in.rate_bps);
    r.pause_frame = PREAMBLE_SFD + MIN_FRAME_WITH_FCS;  // the peer acts on the last bit
    r.propagation = bytes_in(2 * in.one_way_latency, in.rate_bps);
    r.response = bytes_in(r.response_delay, in.rate_bps);
    r.lossless_frame = lossless_wire;
    r.peer_commit_ahead = std::min(bytes_in(in.peer_commit_ahead, in.rate_bps), lossless_wire);
    r.crossing_frame = in.crossing_frame_in_headroom ? lossless_wire : 0;
    r.wire_bytes = r.max_frame + r.local_commit_ahead + r.pause_frame + r.propagation + r.response +
                   r.lossless_frame + r.peer_commit_ahead + r.crossing_frame;

    const auto small = static_cast<std::uint64_t>(std::llround(in.small_packet_percent * 1e6));
    const std::uint64_t whole = 100 * PERCENT_SCALE;
    // All lossless frames: they come over this one link, at least a frame time apart, and the
    // frame that crossed the XOFF point completed at t0, so at most floor(W / frame) more
    // complete in the window. Mixed with small frames the phases are free: round up.
    r.lossless_frames =
        small == 0 ? r.wire_bytes / lossless_wire
                   : ceil_div(u128(r.wire_bytes) * (whole - small), u128(whole) * lossless_wire);
    r.small_frames =
        ceil_div(u128(r.wire_bytes) * small, u128(whole) * (SMALL_FRAME + FRAME_EXTRA));
    r.cells_per_frame = cells_of(in.lossless_frame_bytes, in.cell_overhead_bytes, in.cell_bytes);
    r.cells_per_small_frame = cells_of(SMALL_FRAME, in.cell_overhead_bytes, in.cell_bytes);
    r.cells = r.lossless_frames * r.cells_per_frame + r.small_frames * r.cells_per_small_frame;
    r.bytes = r.cells * in.cell_bytes;
    return r;
}

std::vector<headroom_term> headroom_terms(const headroom_result& r) {
    std::vector<headroom_term> t;
    t.push_back({"max_frame", "D-Max-Frame-Len",
                 "the XOFF waits behind a max frame on our egress (frame + 20)", r.max_frame});
    if (r.local_commit_ahead)
        t.push_back({"local_commit_ahead", "D-Commit-Local",
                     "that frame was committed ahead on an idle port", r.local_commit_ahead});
    t.push_back({"pause_frame", "D-Pause", "PFC frame to its last bit (8 + 64)", r.pause_frame});
    t.push_back({"propagation", "2 x D-Cable+PHY", "one-way latency, round trip", r.propagation});
    t.push_back({"response", "D-Resp", "peer response delay", r.response});
    t.push_back({"lossless_frame", "D-Max-No-Drop-Frame",
                 "the peer finishes its lossless frame (frame + 20)", r.lossless_frame});
    if (r.peer_commit_ahead)
        t.push_back({"peer_commit_ahead", "D-Commit-Peer",
                     "a frame the peer committed ahead starts after its stop",
                     r.peer_commit_ahead});
    if (r.crossing_frame)
        t.push_back({"crossing_frame", "D-Crossing-Frame",
                     "the frame that sent the XOFF went to headroom itself", r.crossing_frame});
    return t;
}

std::uint32_t mellanox_pause_quanta(std::uint64_t rate_bps) {
    // sonic-swss buffer_headroom_mellanox.lua, "IEEE 802.3 31B.3.7", keyed by exact Mb/s.
    struct row {
        std::uint64_t rate;
        std::uint32_t quanta;
    };
    static constexpr std::array<row, 10> TABLE{{{100'000'000, 1},
                                                {1'000'000'000, 2},
                                                {10'000'000'000, 67},
                                                {25'000'000'000, 80},
                                                {40'000'000'000, 118},
                                                {50'000'000'000, 147},
                                                {100'000'000'000, 394},
                                                {200'000'000'000, 453},
                                                {400'000'000'000, 905},
                                                {800'000'000'000, 905}}};
    for (const row& r : TABLE)
        if (r.rate == rate_bps) return r.quanta;
    return 0;
}

sonic_headroom_result sonic_headroom(const sonic_headroom_inputs& in) {
    auto non_negative = [](const char* field, double v) {
        if (!std::isfinite(v) || v < 0) throw headroom_error(field, "must be a finite value >= 0");
    };
    if (in.rate_bps == 0) throw headroom_error("rate_bps", "must be positive");
    non_negative("cable_length_m", in.cable_length_m);
    if (in.cable_length_m > 1e6) throw headroom_error("cable_length_m", "must be <= 1000 km");
    check_frame("port_mtu", in.port_mtu);
    check_frame("lossless_mtu", in.lossless_mtu);
    if (in.cell_bytes == 0) throw headroom_error("cell_bytes", "must be positive");
    check_percent(in.small_packet_percent);
    non_negative("gearbox_delay_ns", in.gearbox_delay_ns);
    non_negative("mac_phy_delay_bytes", in.mac_phy_delay_bytes);
    non_negative("pipeline_latency_bytes", in.pipeline_latency_bytes);
    non_negative("peer_response_fallback_bytes", in.peer_response_fallback_bytes);

    // The Lua script's arithmetic, in its order, with the speed in Mb/s; its 1000/1024 factors
    // (cable, gearbox) are kept so the profiles match SONiC's.
    const double speed_mbps = static_cast<double>(in.rate_bps) / 1e6;
    constexpr double SPEED_OF_LIGHT = 198'000'000;
    constexpr double MIN_PACKET = 64;
    sonic_headroom_result r;
    r.pause_quanta = mellanox_pause_quanta(in.rate_bps);
    r.peer_response = r.pause_quanta ? r.pause_quanta * 512.0 / 8 : in.peer_response_fallback_bytes;
    const double cell = in.cell_bytes;
    r.worst_case_factor = cell > 2 * MIN_PACKET ? cell / MIN_PACKET : 2 * cell / (1 + cell);
    const double spp = in.small_packet_percent;
    r.cell_occupancy = (100 - spp + spp * r.worst_case_factor) / 100;
    r.bytes_on_gearbox = in.gearbox_delay_ns == 0 ? 0 : speed_mbps * in.gearbox_delay_ns / 8192;
    r.bytes_on_cable = 2 * in.cable_length_m * speed_mbps * 1e9 / SPEED_OF_LIGHT / 8192;
    r.propagation = in.port_mtu + r.bytes_on_cable + 2 * r.bytes_on_gearbox +
                    in.mac_phy_delay_bytes + r.peer_response;
    auto ceil_1k = [](double v) { return static_cast<std::uint64_t>(std::ceil(v / 1024) * 1024); };
    r.xoff = ceil_1k(in.lossless_mtu + r.propagation * r.cell_occupancy);
    const double pipeline =
        in.eight_lanes ? in.pipeline_latency_bytes * 2 - 1024 : in.pipeline_latency_bytes;
    r.xon = ceil_1k(pipeline);
    const std::uint64_t overhead = in.eight_lanes ? in.port_mtu : 0;
    r.size = in.shared_headroom_pool ? r.xon : ceil_1k(double(r.xoff + r.xon + overhead));
    return r;
}

}  // namespace fabricsim::sw
