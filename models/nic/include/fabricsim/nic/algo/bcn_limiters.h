#pragma once
/// BCN reaction points on the NIC's rate-limiter bank (plain C++, no SystemC): a
/// rate_limiter_bank whose limiters each run one bcn_rp (algo/bcn_rp.h), and the flows bound
/// to them; the BCN counterpart of qcn_limiters. The nic_device adapter holds the frames; this
/// class decides which limiter a flow's frames use, when the next one may leave and which
/// rate-regulator tag (RRT) they carry, and turns BCN messages into limiter rates.
///
/// Timing model. Times in ps, rates in bit/s; calls come in non-decreasing time.
///  - Binding (facts-l2 §5.2: the regulator is installed by the first negative message): a
///    negative or STOP message for a flow without a limiter binds it to the lowest free one,
///    whose RP starts fresh and then takes the message; a positive message for such a flow is
///    ignored. With an initial rate (bcn_rp_params::initial_rate_bps, §2 E's flow joining at
///    1.1 Gb/s) a flow is bound at its first frame instead (limited from the start, its RP not
///    installed and its frames untagged until the first negative message), and its limiter is
///    never freed: freeing it would restart the flow at the initial rate.
///  - Every limiter in use: SHARE (default) binds the flow to limiter flow % limiters, whose RP
///    then takes the messages of all its flows (counted `shared_bindings`); NONE ignores the
///    message (the flow stays unlimited; counted `ignored_messages`), as qcn_limiters.
///  - Spacing: next-send-time on wire bytes (frame + preamble + IFG), the RP's rate rounded
///    down to whole bit/s; a message applies from the next frame sent.
///  - STOP (BCN(0,0)): the RP restarts at the minimum rate after a silence drawn uniformly in
///    [0.5, 1.5) x `stop_silence` (the proposal: "a random time"; no rule was published): the
///    limiter's next frame starts no earlier than then.
///  - RRT: frames sent through a limiter whose RP is installed carry its CPID (tag(l)).
///  - Release: when an increase brings the rate back to the line rate the RP is removed
///    (bcn_rp::active() false); once its FIFO is empty, its flows are unbound and the limiter is
///    free (not with an initial rate, above). Costs O(1) per frame and per message.
#include <cstdint>
#include <vector>

#include "fabricsim/core/rng.h"
#include "fabricsim/nic/algo/bcn_rp.h"
#include "fabricsim/nic/algo/rate_limiter.h"

namespace fabricsim::nic {

class bcn_limiters
{
public:
    static constexpr int NONE = rate_limiter_bank::NONE;
    static constexpr ps_t NEVER = ~ps_t(0);

    /// `limiters_full`: bank_policy::SHARE or NONE. Throws std::invalid_argument if p does not
    /// validate ("bcn_rp_params.<field>: ..."), `limiters` is 0 or stop_silence is 0.
    bcn_limiters(const bcn_rp_params& p, unsigned limiters, bank_policy limiters_full,
                 ps_t stop_silence, std::uint64_t seed);

    /// A BCN message with feedback `fb` (in the CP's unit; != 0) from `cpid` for `flow` at
    /// `now`. Returns the limiter that took it, or NONE (ignored).
    int on_message(ps_t now, std::uint32_t flow, std::uint32_t cpid, double fb);
    /// A STOP message (BCN(0,0)). Returns the limiter that took it, or NONE (ignored).
    int on_stop(ps_t now, std::uint32_t flow, std::uint32_t cpid);
    /// The limiter of `flow`'s frames, or NONE (not limited). O(1).
    int limiter_of(std::uint32_t flow) const { return m_bank.limiter_of(flow); }
    /// The limiter of a frame of `flow` reaching the stage at `now`: binds an unbound flow when
    /// there is an initial rate. NONE: not limited.
    int limiter_for_frame(ps_t now, std::uint32_t flow);
    /// When the next frame of limiter `l` may start, at `now` or later.
    ps_t earliest_start(unsigned l, ps_t now) const {
        const ps_t t = m_bank.at(l).earliest_start(now);
        return t > m_resume[l] ? t : m_resume[l];
    }
    /// A frame of limiter `l` waits in its FIFO (the caller's).
    void hold(unsigned l) { ++m_held[l]; }
    std::uint32_t held(unsigned l) const { return m_held[l]; }
    /// The RRT the next frame of limiter `l` carries: the CPID, 0 = none (RP not installed).
    std::uint32_t tag(unsigned l) const { return m_rp[l].active() ? m_rp[l].tag_cpid() : 0; }
    /// A frame of limiter `l` starts at `now` (>= earliest_start); `from_fifo`: it was held.
    void sent(unsigned l, ps_t now, std::uint32_t wire_bytes, std::uint32_t frame_bytes,
              bool from_fifo);

    /// Limiters in use (bound to a flow), lowest index first.
    const std::vector<unsigned>& active() const { return m_active; }
    unsigned size() const { return m_bank.size(); }
    const bcn_rp& rp(unsigned l) const { return m_rp[l]; }
    /// The flows bound to limiter `l`, in binding order.
    const std::vector<std::uint32_t>& flows(unsigned l) const { return m_flows[l]; }
    /// The limiter's rate in bit/s (the RP's rate rounded down; the line rate when free).
    std::uint64_t rate_bps(unsigned l) const;
    const rate_limiter_bank& bank() const { return m_bank; }
    std::uint64_t line_rate_bps() const { return m_line; }

    struct counters {
        std::uint64_t messages = 0;          ///< given to an RP (negative, positive, STOP)
        std::uint64_t ignored_messages = 0;  ///< positive for an unbound flow, or bank full
        std::uint64_t bindings = 0;          ///< flows given a free limiter
        std::uint64_t shared_bindings = 0;
        std::uint64_t unbindings = 0;        ///< flows unbound when their RP was removed
        std::uint64_t limiter_releases = 0;  ///< limiters freed
        std::uint32_t peak_in_use = 0;
        std::uint64_t limited_frames = 0;  ///< frames sent through a limiter
        std::uint64_t limited_bytes = 0;   ///< their frame bytes
        std::uint64_t held_frames = 0;     ///< of them, frames that waited in the FIFO
        std::uint64_t tagged_frames = 0;   ///< of them, frames that carried an RRT
    };
    const counters& stats() const { return m_stats; }
    /// The RP counters summed over every limiter, freed ones' included.
    bcn_rp::counters rp_totals() const;

private:
    int bind(ps_t now, std::uint32_t flow, bool positive);
    void update(unsigned l);  ///< RP rate -> limiter rate; frees a removed, drained limiter
    void free_limiter(unsigned l);

    bcn_rp_params m_p;
    std::uint64_t m_line;
    ps_t m_stop_silence;
    rng m_rng;
    rate_limiter_bank m_bank;
    std::vector<bcn_rp> m_rp;
    std::vector<ps_t> m_resume;  ///< after a STOP: no frame before this
    std::vector<std::uint32_t> m_held;
    std::vector<std::vector<std::uint32_t>> m_flows;
    std::vector<unsigned> m_active;
    bcn_rp::counters m_retired;  ///< counters of RPs whose limiter was freed
    counters m_stats;
};

}  // namespace fabricsim::nic
