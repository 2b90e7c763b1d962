#pragma once
/// The NIC's bank of hardware rate limiters (plain C++, no SystemC): a fixed number of pacers,
/// each at its own rate, that flows are bound to on demand. One mechanism for every reaction
/// point that needs one (DCQCN, QCN, FERA, GEMINI, the HULL pacer).
///
/// Timing model: next-send-time pacing (as the HPCC and NS3RDMA NIC models do, facts-l2 §4.5):
/// a frame of w wire bytes (frame + preamble + IFG) may start at max(now, next_free), and then
/// next_free = start + w x 8 / rate. The fraction of a ps is carried, so the long-run rate is
/// exact. A limiter at the line rate or above never delays a frame the wire would not.
///
/// Binding: bind(flow) gives the flow a free limiter (lowest index first) and remembers it;
/// release(flow) frees it (a reaction point releases a flow back at the line rate). With every
/// limiter taken, a new flow shares limiter flow % size() with the flows already on it (they
/// then have one rate and one reaction point between them: what NICs that group queue pairs on
/// a rate limiter do); counted as `shared_bindings`. The facts file does not say what a NIC
/// does when it runs out; this choice keeps the flow paced rather than unlimited.
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "fabricsim/core/units.h"

namespace fabricsim::nic {

class rate_limiter
{
public:
    /// Bit/s; 0 = unlimited.
    void set_rate(std::uint64_t rate_bps) { m_rate_bps = rate_bps; }
    std::uint64_t rate_bps() const { return m_rate_bps; }
    /// When a frame may start, at `now` or later.
    ps_t earliest_start(ps_t now) const { return now > m_next_free ? now : m_next_free; }
    /// A frame of `wire_bytes` started at `start` (>= earliest_start).
    void sent(std::uint32_t wire_bytes, ps_t start);
    ps_t next_free() const { return m_next_free; }

private:
    std::uint64_t m_rate_bps = 0;
    ps_t m_next_free = 0;
    std::uint64_t m_carry = 0;  ///< bit-ps not yet a whole ps (x 1 / rate)
};

class rate_limiter_bank
{
public:
    static constexpr int NONE = -1;
    explicit rate_limiter_bank(unsigned limiters) : m_limiters(limiters), m_users(limiters, 0) {}

    unsigned size() const { return static_cast<unsigned>(m_limiters.size()); }
    /// The limiter of `flow`, binding one if it has none (see the top of the file). NONE only for
    /// a bank of size 0.
    int bind(std::uint32_t flow);
    /// The limiter `flow` is bound to, or NONE.
    int limiter_of(std::uint32_t flow) const {
        const auto it = m_bound.find(flow);
        return it == m_bound.end() ? NONE : it->second;
    }
    /// Unbinds `flow`; its limiter is free again when no other flow uses it.
    void release(std::uint32_t flow);
    rate_limiter& at(unsigned i) { return m_limiters[i]; }
    const rate_limiter& at(unsigned i) const { return m_limiters[i]; }
    /// Flows bound to limiter i.
    std::uint32_t users(unsigned i) const { return m_users[i]; }

    struct counters {
        std::uint64_t bindings = 0;         ///< flows given a limiter of their own
        std::uint64_t shared_bindings = 0;  ///< flows that had to share one (bank full)
        std::uint64_t releases = 0;
        std::uint32_t peak_in_use = 0;  ///< limiters in use at once
    };
    const counters& stats() const { return m_stats; }
    std::uint32_t in_use() const { return m_in_use; }

private:
    std::vector<rate_limiter> m_limiters;
    std::vector<std::uint32_t> m_users;
    std::unordered_map<std::uint32_t, int> m_bound;  ///< flow -> limiter; only flows a CP reached
    std::uint32_t m_in_use = 0;
    counters m_stats;
};

}  // namespace fabricsim::nic
