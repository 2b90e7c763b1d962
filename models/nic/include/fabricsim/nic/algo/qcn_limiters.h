#pragma once
/// QCN reaction points on the NIC's rate-limiter bank (plain C++, no SystemC): a
/// rate_limiter_bank whose limiters each run one qcn_rp (algo/qcn_rp.h), and the flows bound
/// to them. The nic_device adapter holds the frames; this class decides which limiter a flow's
/// frames use, when the next one may leave, and turns CNMs, sent bytes and RP timers into
/// limiter rates.
///
/// Timing model. Times in ps, rates in bit/s; calls come in non-decreasing time.
///  - Binding (facts-l2 §3.6 [EXT]: an RP is created when a CNM arrives for a flow that has
///    none, up to rppp_max_rps): a CNM for a flow without a limiter binds it to the lowest free
///    limiter, whose RP starts released (CR = TR = line rate) and then takes the CNM. A flow
///    without a limiter is not limited (line rate).
///  - Every limiter in use (`limiters_full`): SHARE (default) binds the flow to limiter
///    flow % limiters, whose RP then reacts to the CNMs of all its flows and sets one rate for
///    them (QCN "lumps flows into one/few rate limiters", seed-000; the MIB's rpPortPriMaxRps
///    = 1 means all CN traffic of the port-priority shares one); counted `shared_bindings`.
///    NONE ignores the CNM (the flow stays at line rate); counted `ignored_cnms`.
///  - Spacing: next-send-time (rate_limiter's default mode), on wire bytes (frame + preamble
///    + IFG), so a limiter at the line rate never delays a frame the wire would not; a frame
///    may leave at max(now, next_free), next_free = start + wire x 8 / CR, the ps fraction
///    carried. CR (double) is rounded down to whole bit/s. The gap after a frame is at the
///    rate once the byte counter has counted it (an increase that frame triggers applies to
///    its gap); a CNM or a timer between frames applies from the next frame sent (the gap
///    after the last one keeps the rate it left at).
///  - Byte counter: the RP counts the frame bytes (L2 + FCS, the octets 802.1Qau counts) of
///    each frame its limiter sends.
///  - Release: when an increase brings CR back to the line rate the RP is released
///    (qcn_rp::released); once the limiter holds no frame (its FIFO drained, so a flow never
///    overtakes its own frames), its flows are unbound and the limiter is free.
///  - Timers: next_timer() is the earliest RP timer of the limiters in use; on_timer(now) runs
///    the due ones. Costs O(limiters in use) per timer and per CNM, O(1) per frame.
#include <cstdint>
#include <vector>

#include "fabricsim/nic/algo/qcn_rp.h"
#include "fabricsim/nic/algo/rate_limiter.h"

namespace fabricsim::nic {

class qcn_limiters
{
public:
    static constexpr int NONE = rate_limiter_bank::NONE;
    static constexpr ps_t NEVER = qcn_rp::NEVER;

    /// `limiters_full`: bank_policy::SHARE or NONE. Throws std::invalid_argument if p does not
    /// validate ("qcn_rp_params.<field>: ...") or `limiters` is 0.
    qcn_limiters(const qcn_rp_params& p, unsigned limiters, bank_policy limiters_full);

    /// A CNM with feedback `qfb` for `flow` arrived at `now`. Returns the limiter that took it,
    /// or NONE (bank full under NONE: ignored).
    int on_cnm(ps_t now, std::uint32_t flow, unsigned qfb);
    /// The limiter of `flow`'s frames, or NONE (not limited). O(1).
    int limiter_of(std::uint32_t flow) const { return m_bank.limiter_of(flow); }
    /// When the next frame of limiter `l` may start, at `now` or later.
    ps_t earliest_start(unsigned l, ps_t now) const { return m_bank.at(l).earliest_start(now); }
    /// A frame of limiter `l` waits in its FIFO (the caller's).
    void hold(unsigned l) { ++m_held[l]; }
    std::uint32_t held(unsigned l) const { return m_held[l]; }
    /// A frame of limiter `l` starts at `now` (>= earliest_start); `from_fifo`: it was held.
    void sent(unsigned l, ps_t now, std::uint32_t wire_bytes, std::uint32_t frame_bytes,
              bool from_fifo);
    /// Runs the RP timers due at or before `now`.
    void on_timer(ps_t now);
    /// The earliest RP timer of the limiters in use (NEVER: none).
    ps_t next_timer() const;

    /// Limiters in use (bound to a flow), lowest index first.
    const std::vector<unsigned>& active() const { return m_active; }
    unsigned size() const { return m_bank.size(); }
    const qcn_rp& rp(unsigned l) const { return m_rp[l]; }
    /// The flows bound to limiter `l`, in binding order.
    const std::vector<std::uint32_t>& flows(unsigned l) const { return m_flows[l]; }
    /// The limiter's rate in bit/s (the RP's CR rounded down; the line rate when free).
    std::uint64_t rate_bps(unsigned l) const;
    const rate_limiter_bank& bank() const { return m_bank; }
    std::uint64_t line_rate_bps() const { return m_line; }

    struct counters {
        std::uint64_t cnms = 0;          ///< CNMs given to an RP
        std::uint64_t ignored_cnms = 0;  ///< bank full under NONE
        std::uint64_t bindings = 0;      ///< flows given a free limiter
        std::uint64_t shared_bindings = 0;
        std::uint64_t unbindings = 0;        ///< flows unbound when their RP was released
        std::uint64_t limiter_releases = 0;  ///< limiters freed
        std::uint32_t peak_in_use = 0;
        std::uint64_t limited_frames = 0;  ///< frames sent through a limiter
        std::uint64_t limited_bytes = 0;   ///< their frame bytes
        std::uint64_t held_frames = 0;     ///< of them, frames that waited in the FIFO
    };
    const counters& stats() const { return m_stats; }
    /// The RP counters summed over every limiter.
    qcn_rp::counters rp_totals() const;

private:
    void update(unsigned l);  ///< CR -> limiter rate; frees a released, drained limiter
    void free_limiter(unsigned l);

    std::uint64_t m_line;
    rate_limiter_bank m_bank;
    std::vector<qcn_rp> m_rp;
    std::vector<std::uint32_t> m_held;
    std::vector<std::vector<std::uint32_t>> m_flows;
    std::vector<unsigned> m_active;
    std::vector<unsigned> m_scratch;
    counters m_stats;
};

}  // namespace fabricsim::nic
