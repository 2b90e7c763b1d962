#pragma once
/// Timing and error model of one direction of an Ethernet link, as plain C++.
/// Timing model: a frame whose first bit leaves at t occupies the wire for
/// (max(frame+FCS, 64) + 8 preamble/SFD + 12 IFG) * 8 / rate. Its last bit reaches the far
/// receiver at t + (preamble + frame) * 8 / rate + propagation + PHY latency (PCS encoding +
/// FEC); a cut-through receiver acts after the bytes it asks for (deliver_after) instead. Bit
/// errors corrupt a frame with probability 1 - (1 - BER)^bits; frames overlapping a scheduled down
/// interval are lost. Ignores: autonegotiation, PCS alignment markers, FEC error correction (a BER
/// is the post-FEC rate), per-lane skew. A scheduled rate step (a LAG member lost or restored)
/// changes the serialisation rate of the frames that start at or after it; a frame on the wire
/// at the step finishes at the rate it started with.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "fabricsim/core/frame.h"
#include "fabricsim/core/rng.h"
#include "fabricsim/core/units.h"

namespace fabricsim::phy {

enum class fec_mode { NONE, RS_528_514, RS_544_514 };

fec_mode default_fec(std::uint64_t rate_bps);
ps_t default_encoding_latency(std::uint64_t rate_bps);
ps_t default_fec_latency(fec_mode fec, std::uint64_t rate_bps);
/// Propagation over `metres` of cable at 5 ns/m (a scenario's cable_length), rounded to a ps.
ps_t cable_propagation(double metres);
const char* fec_name(fec_mode f);

/// From `at` on, the directions in `directions` (bit 0: a->b, bit 1: b->a) run at `rate_bps`.
struct rate_step {
    ps_t at = 0;
    std::uint64_t rate_bps = 0;
    std::uint8_t directions = 3;
    friend bool operator<(const rate_step& x, const rate_step& y) { return x.at < y.at; }
};

struct link_config {
    std::uint64_t rate_bps = 10'000'000'000ull;
    ps_t propagation = 0;       ///< cable delay (5 ns/m when given as a length)
    ps_t encoding_latency = 0;  ///< PCS/PMA encode+decode, one way
    fec_mode fec = fec_mode::NONE;
    ps_t fec_latency = 0;                     ///< FEC encode+decode, one way
    double ber = 0.0;                         ///< post-FEC bit error rate
    std::vector<std::pair<ps_t, ps_t>> down;  ///< [from, to) intervals with the link down
    std::vector<rate_step> rate_steps;        ///< ordered by time

    /// Throws config_error (under `key`) on bad values. Per-rate latency defaults are filled by
    /// the scenario loader (default_encoding_latency / default_fec_latency).
    void validate(const std::string& key) const;
    ps_t one_way_latency() const { return propagation + encoding_latency + fec_latency; }
};

/// Result of putting one frame on one direction.
struct tx_result {
    ps_t wire_free = 0;  ///< absolute time the transmitter may start the next frame
    ps_t deliver = 0;    ///< absolute time the receiver acts on the frame
    ps_t last_bit = 0;   ///< absolute time the last bit reaches the receiver
    bool lost = false;   ///< link down: the frame never arrives
};

class link_timing
{
public:
    /// `direction`: 0 = a->b, 1 = b->a (which of cfg.rate_steps apply).
    link_timing(const link_config& cfg, std::uint64_t seed, const std::string& name,
                unsigned direction = 0);

    /// Bytes (after the preamble) the receiver needs before it acts on a frame; 0 (the default)
    /// = the whole frame, as a store-and-forward MAC. The receiver says it (frame_receiver).
    void deliver_after(std::uint32_t bytes) { m_deliver_after = bytes; }

    /// Frame `f` with its first bit at `start`. May set f.fcs_error.
    tx_result transmit(frame& f, ps_t start) {
        if (__builtin_expect(start >= m_next_step_at, 0)) step_rate(start);
        return transmit_at_rate(f, start);
    }
    /// The rate of a frame starting at `t` (steps only: 0 if this direction has none).
    std::uint64_t stepped_rate_at(ps_t t) const;
    bool has_rate_steps() const { return !m_steps.empty(); }

    /// Wire occupancy of `f`: preamble/SFD, frame and IFG serialised.
    ps_t wire_time(const frame& f) const { return m_serialize(f.wire_bytes()); }
    /// From `f`'s first bit to its last bit at the far receiver: preamble/SFD and frame
    /// serialised, plus propagation, encoding and FEC latency.
    ps_t last_bit_delay(const frame& f) const {
        return m_serialize(PREAMBLE_SFD + f.frame_bytes()) + m_cfg.one_way_latency();
    }
    const link_config& config() const { return m_cfg; }

private:
    tx_result transmit_at_rate(frame& f, ps_t start);
    [[gnu::cold]] void step_rate(ps_t start);

    link_config m_cfg;
    serializer m_serialize;
    std::vector<rate_step> m_steps;  ///< this direction's steps, in time order
    std::size_t m_step = 0;          ///< the next one
    ps_t m_next_step_at = ~ps_t(0);  // never
    std::uint32_t m_deliver_after = 0;
    /// Only with a bit error rate: an mt19937_64 is 2.5 KB, per direction of every link.
    std::unique_ptr<rng> m_rng;
    double m_log1m_ber = 0;
};

}  // namespace fabricsim::phy
