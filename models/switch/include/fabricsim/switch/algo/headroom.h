#pragma once
/// PFC headroom (XOFF_TH) of one lossless (port, priority group): plain C++, no SystemC.
/// Two methods: headroom_needed(), the worst case of FabricSim's own PAUSE/PFC physics, and
/// sonic_headroom(), the Mellanox formula SONiC uses (facts-l2 §2.4, for comparison).
///
/// Timing note (headroom_needed). The frame that crosses the XOFF point is charged at our MMU
/// when its last bit arrives (store-and-forward; a cut-through charge only shortens the loop),
/// at t0, and the XOFF is handed to our egress toward the peer at t0. The peer's wire had that
/// last bit at t0 - L (L = one_way_latency: cable + PCS + FEC). Then, at worst:
///   - our egress sends the XOFF at its next frame boundary (egress_port::send_control): behind
///     a frame of max_frame_bytes of any class that starts at t0, or local_commit_ahead later
///     when an idle port had already committed it: (max_frame + 8 + 12) B + local_commit_ahead;
///   - the PFC frame's last bit reaches the peer (8 + 64) B + L after it starts;
///   - the peer starts no frame more than response_delay after that last bit
///     (pause_reaction); it started frames back to back at line rate from t0 - L until then,
///     and finishes the lossless frame it started last: lossless_frame + 8 + 12 B;
///   - a switch peer may also have committed one more frame ahead (peer_commit_ahead): it starts
///     after the stop, min(peer_commit_ahead at line rate, lossless_frame + 20) B later.
/// Arriving wire bytes W = (max_frame + 20) + local_commit_ahead + 72 + 2L + response_delay
/// + (lossless_frame + 20) + peer term, the times at the line rate, each rounded up to a byte.
/// This is an upper bound; it is attained when every term is at its worst phase (a max frame
/// starts on our egress at t0, the peer sends lossless frames back to back and starts one just as
/// it stops); in other phases up to one lossless frame fewer arrives.
/// Cells as the MMU charges them: share small_packet_percent of W comes as 64-B frames
/// (ceil((64 + overhead) / cell) cells per 84 wire bytes), the rest as lossless_frame frames
/// (ceil((f + overhead) / cell) cells per f + 20 wire bytes). With lossless frames only, their
/// count is floor(W / (f + 20)): they come over this one link at least a frame time apart and
/// the crossing frame completed at t0 (so the bound is attained, not one frame above it); mixed
/// with small frames each count is rounded up.
/// Other frame sizes are not searched for a worse cell fill (use small_packet_percent).
/// Assumes the XOFF is generated at the crossing frame's admission with no further delay. When
/// it is generated as that frame does not fit (so the frame itself is in headroom, as
/// FabricSim's MMU does unless the threshold is a whole number of frames),
/// crossing_frame_in_headroom adds it (D-Crossing-Frame: lossless_frame + 20).
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "fabricsim/core/units.h"

namespace fabricsim::sw {

/// A headroom input out of range; field() is the input's name (e.g. "cell_bytes").
class headroom_error : public std::invalid_argument
{
public:
    headroom_error(const std::string& field, const std::string& reason)
        : std::invalid_argument(field + ": " + reason), m_field(field), m_reason(reason) {}
    const std::string& field() const { return m_field; }
    const std::string& reason() const { return m_reason; }

private:
    std::string m_field;
    std::string m_reason;
};

/// Inputs of headroom_needed(); frame sizes are frame bytes including the FCS.
struct headroom_inputs {
    std::uint64_t rate_bps = 0;
    /// Cable propagation + PCS encoding + FEC, one way (phy::link_config::one_way_latency()).
    ps_t one_way_latency = 0;
    /// Largest frame of any class on our egress toward the peer (the XOFF waits behind it).
    std::uint32_t max_frame_bytes = 9216;
    /// Largest lossless frame the peer may have just started.
    std::uint32_t lossless_frame_bytes = 1518;
    /// The peer's reaction; absent = 802.3 Annex 31B for the speed (annex31b_response_ps).
    std::optional<ps_t> response_delay;
    std::uint32_t cell_bytes = 208;
    std::uint32_t cell_overhead_bytes = 0;
    /// Share of arriving bytes in 64-B frames (SONiC small_packet_percentage), 0..100.
    double small_packet_percent = 0;
    /// How far ahead an idle port commits a frame to its wire (a FabricSim switch port: its
    /// pipeline_latency + one core clock; a NIC with flow control: 0), our side and the peer's.
    ps_t local_commit_ahead = 0;
    ps_t peer_commit_ahead = 0;
    /// The frame whose admission sends the XOFF is in headroom itself (above).
    bool crossing_frame_in_headroom = false;
};

/// Each term in wire bytes arriving at the congested port, and the total in bytes and cells.
struct headroom_result {
    std::uint64_t max_frame = 0;           ///< D-Max-Frame-Len: max_frame + 20
    std::uint64_t local_commit_ahead = 0;  ///< that frame committed ahead on an idle port
    std::uint64_t pause_frame = 0;         ///< D-Pause: 8 + 64
    std::uint64_t propagation = 0;         ///< 2 x one_way_latency at the line rate
    std::uint64_t response = 0;            ///< D-Resp: response_delay at the line rate
    std::uint64_t lossless_frame = 0;      ///< D-Max-No-Drop-Frame: lossless_frame + 20
    std::uint64_t peer_commit_ahead = 0;   ///< one more frame a switch peer committed ahead
    std::uint64_t crossing_frame = 0;      ///< the crossing frame, when in headroom
    std::uint64_t wire_bytes = 0;          ///< sum of the terms
    std::uint64_t lossless_frames = 0;     ///< frames of lossless_frame_bytes in wire_bytes
    std::uint64_t small_frames = 0;        ///< 64-B frames in wire_bytes
    std::uint64_t cells_per_frame = 0;     ///< cells of one lossless frame
    std::uint64_t cells_per_small_frame = 0;
    std::uint64_t cells = 0;
    std::uint64_t bytes = 0;  ///< cells x cell_bytes: the XOFF_TH to configure
    ps_t response_delay = 0;  ///< the response delay used
};

/// One term of a result, for tables: `key` (JSON), `name` (the literature's), wire bytes.
struct headroom_term {
    const char* key;
    const char* name;
    const char* meaning;
    std::uint64_t bytes;
};
/// The terms of `r` in the order of the derivation (commit-ahead terms only when non-zero).
std::vector<headroom_term> headroom_terms(const headroom_result& r);

/// Validates the inputs (throws headroom_error naming the field) and computes the headroom.
headroom_result headroom_needed(const headroom_inputs& in);

/// Bytes `t` takes at `rate_bps`, rounded up.
std::uint64_t bytes_in(ps_t t, std::uint64_t rate_bps);

/// Inputs of the Mellanox/SONiC formula (sonic-swss buffer_headroom_mellanox.lua). Defaults:
/// Spectrum ASIC_TABLE constants and the LOSSLESS_TRAFFIC_PATTERN of facts-l2 §2.4's examples.
struct sonic_headroom_inputs {
    std::uint64_t rate_bps = 0;  ///< the port speed; the quanta table is keyed by exact Mb/s
    double cable_length_m = 0;
    std::uint32_t port_mtu = 9100;
    std::uint32_t lossless_mtu = 1024;
    std::uint32_t cell_bytes = 96;       ///< Spectrum-1 96, Spectrum-2/3 144
    double small_packet_percent = 100;   ///< 0..100
    double gearbox_delay_ns = 0;         ///< one way, per gearbox side
    double mac_phy_delay_bytes = 819.2;  ///< 0.8 KiB
    double pipeline_latency_bytes = 18432;
    /// Peer response when the speed is not in the quanta table: 3.8 KiB.
    double peer_response_fallback_bytes = 3891.2;
    bool eight_lanes = false;           ///< 8-lane port: doubled pipeline latency, + port_mtu
    bool shared_headroom_pool = false;  ///< size = xon only
};

struct sonic_headroom_result {
    std::uint32_t pause_quanta = 0;  ///< 0: speed not in the table, fallback response used
    double peer_response = 0;        ///< bytes
    double bytes_on_cable = 0;       ///< round trip, with the formula's 1000/1024
    double bytes_on_gearbox = 0;     ///< one side; counted twice
    double propagation = 0;          ///< port_mtu + cable + 2 gearbox + mac_phy + response
    double worst_case_factor = 0;
    double cell_occupancy = 0;
    std::uint64_t xoff = 0;  ///< all three rounded up to 1 KiB
    std::uint64_t xon = 0;
    std::uint64_t size = 0;
};

/// Pause quanta of the Mellanox table for an exact speed (10G: 67; it differs from the model's
/// Annex 31B default of 60), 0 when the speed is not listed.
std::uint32_t mellanox_pause_quanta(std::uint64_t rate_bps);

/// Validates the inputs (throws headroom_error naming the field) and applies the formula.
sonic_headroom_result sonic_headroom(const sonic_headroom_inputs& in);

}  // namespace fabricsim::sw
