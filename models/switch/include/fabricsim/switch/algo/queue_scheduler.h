#pragma once
/// Egress-port queue scheduler (plain C++, no SystemC): strict priority (SP), WRR as switch chips
/// implement it, and DWRR (Shreedhar-Varghese with the ns-2/Linux active-list mechanics), alone
/// or as SP + WRR/DWRR (seed-001 §1.7). It also reports the round boundaries MQ-ECN samples
/// T_round from (seed-001 §1.8). Untimed: the caller supplies times and counts the bytes
/// (wire size) charged against quanta. Ignored: WFQ, per-queue minimum/maximum rate guarantees
/// (shaping is the caller's eligibility), and frames larger than a WRR quantum (config
/// validation enforces quantum >= MTU; see pick()).
#include <array>
#include <cstdint>
#include <vector>

#include "fabricsim/core/units.h"
#include "fabricsim/switch/algo/round_observer.h"

namespace fabricsim::sw {

enum class sched_discipline : std::uint8_t { SP, WRR, DWRR };

struct queue_sched_params {
    bool strict = false;  ///< served by strict priority above the WRR/DWRR group
    /// WRR/DWRR quantum (bytes of wire size the caller counts)
    std::uint32_t quantum_bytes = 1538;
};


/// What the scheduler may look at in the queues it schedules.
class queue_view {
public:
    virtual ~queue_view() = default;
    /// q may send at `now` (non-empty, its head frame is out of the pipeline, its shaper has tokens).
    virtual bool eligible(unsigned q, ps_t now) const = 0;
    /// Size of q's head frame as counted against quanta (only called when eligible(q)).
    virtual std::uint32_t head_bytes(unsigned q) const = 0;
};

/// Per-port scheduler: strict queues first (highest index first), then one WRR or DWRR group
/// kept as a circular active list of backlogged queues. Fixed state for up to 8 queues; pick()
/// and served() never allocate.
class queue_scheduler {
public:
    static constexpr unsigned MAX_QUEUES = 8;
    /// Largest quantum (16 MiB): deficits stay far inside 32 bits.
    static constexpr std::uint32_t MAX_QUANTUM = 16u << 20;

    /// `discipline` applies to the non-strict queues (SP makes every queue strict). 1 to 8 queues
    /// (throws std::invalid_argument otherwise, or if a WRR/DWRR quantum is 0 or above
    /// MAX_QUANTUM).
    queue_scheduler(sched_discipline discipline, const std::vector<queue_sched_params>& queues);
    /// nullptr (the default) = nobody is told.
    void set_observer(round_observer* o) { m_observer = o; }
    unsigned queues() const { return m_n; }
    sched_discipline discipline() const { return m_discipline; }

    /// Queue q went from empty to non-empty at `now` (call once per such transition; a second
    /// call while q is still backlogged throws std::logic_error).
    void backlogged(unsigned q, ps_t now);
    /// The queue to serve next, or -1 if no queue is eligible. Strict queues first, highest index
    /// first (802.1Q: higher traffic class = higher priority); then the WRR/DWRR group.
    /// Repeated calls without served() return the same queue (if the view is unchanged).
    /// `View` is a queue_view or any type with the same two const members; a final class lets
    /// the compiler inline them (the egress port's per-frame path).
    template <class View>
    int pick(const View& view, ps_t now);
    /// The frame chosen by the last pick() (bytes as counted against the quantum) was dequeued
    /// from q at `now`; `now_empty` tells whether q is empty now; `tx_end` = when its last bit
    /// leaves (MQ-ECN takes the round sample at tx_end when a queue empties, as the authors'
    /// ns-2 code does).
    void served(unsigned q, std::uint32_t bytes, bool now_empty, ps_t now, ps_t tx_end);

    /// With every queue empty, a frame of `bytes` arriving in q would be picked at once (q is
    /// strict or the frame fits one quantum): serve_alone() may then stand for backlogged(),
    /// pick() and served(now_empty = true).
    bool serves_alone(unsigned q, std::uint32_t bytes) const {
        return m_active == 0 && ((m_strict_mask >> q & 1) || bytes <= m_quantum[q]);
    }
    /// backlogged(q, now), pick() == q and served(q, bytes, true, now, tx_end) in one step, when
    /// serves_alone(q, bytes): the same state afterwards and the same observer calls, without
    /// touching the active list (the idle-port path of the egress port, once per such frame).
    void serve_alone(unsigned q, std::uint32_t bytes, ps_t now, ps_t tx_end);

    /// Deficit counter of q in bytes (0 for strict queues), for tests and statistics.
    std::int64_t deficit(unsigned q) const { return m_q.at(q).deficit; }
    /// Rounds completed by q (times queue_finished_round fired for it), for statistics.
    std::uint64_t rounds(unsigned q) const { return m_q.at(q).rounds; }
    bool strict(unsigned q) const { return m_q.at(q).strict; }
    std::uint32_t quantum(unsigned q) const { return m_quantum.at(q); }
    /// q is in the WRR/DWRR active list (backlogged since its last emptying).
    bool active(unsigned q) const { return m_q.at(q).in_list; }
    /// Number of queues in the active list.
    unsigned active_count() const { return m_active; }
    /// Queue at position `pos` of the active list, counted from its head (-1 if pos >= count).
    int active_at(unsigned pos) const;

private:
    // 16 bytes, four queues per cache line: a queue's links, deficit and round count together.
    // Deficits fit in 32 bits: at most a quantum plus a frame (quantum <= MAX_QUANTUM).
    struct queue_state {
        std::int32_t deficit = 0;
        std::uint8_t next = 0;  ///< intrusive circular active list
        std::uint8_t prev = 0;
        bool strict : 1;
        bool in_list : 1;
        bool visited : 1;  ///< the quantum of the current visit has been granted
        std::uint64_t rounds = 0;  ///< statistic: times q finished a round
        queue_state() : strict(false), in_list(false), visited(false) {}
    };
    static_assert(sizeof(queue_state) == 16, "four queues per cache line");

    void check_index(unsigned q) const;
    void unlink(unsigned q);
    void append(unsigned q);  ///< insert at the tail (just before the head)
    void finish_round(unsigned q, ps_t at);

    // One cache line that every call reads first, with the quanta (all that serves_alone()
    // reads); then the per-queue state, two lines.
    round_observer* m_observer = nullptr;
    std::int8_t m_head = -1;  ///< head of the active list, -1 if empty
    std::uint8_t m_active = 0;
    sched_discipline m_discipline;
    std::uint8_t m_n = 0;
    std::uint8_t m_strict_count = 0;
    std::uint8_t m_strict_mask = 0;  ///< bit q: q is strict
    std::array<std::uint8_t, MAX_QUEUES> m_strict_order{};  ///< strict queues, highest index first
    std::array<std::uint32_t, MAX_QUEUES> m_quantum{};
    alignas(64) std::array<queue_state, MAX_QUEUES> m_q{};
};

// Termination. `view` is const and nothing calls served() during pick(), so eligibility and
// head sizes are fixed for the whole call. Each loop step does one of:
//  (a) passes over a member (ineligible, or a WRR queue whose head exceeds its quantum) without
//      changing any state; `passed` counts these since the last state change, and m_active of
//      them in a row means every member was seen unchanged -> return -1. So at most m_active - 1
//      passes separate two steps of kind (b)/(c), and with no eligible member we return -1
//      before any state change;
//  (b) returns;
//  (c) ends the round of an eligible member whose head does not fit its deficit.
// (c) is bounded: the member's next visit starts a new one. WRR sets the counter to the
// quantum, and a head above the quantum is a pass, so the head fits and we return; each member
// ends a round at most once per call. DWRR adds quantum >= 1, so q's deficit grows on every
// visit and q fits after at most ceil(head/quantum) visits (one visit with quantum >= MTU, the
// configured case: then at most m_active (c) steps and ~2·m_active steps in all).
template <class View>
inline int queue_scheduler::pick(const View& view, ps_t now) {
    for (unsigned i = 0; i < m_strict_count; ++i)
        if (view.eligible(m_strict_order[i], now)) return m_strict_order[i];
    if (m_head < 0) return -1;
    unsigned q = static_cast<unsigned>(m_head);
    unsigned passed = 0;
    for (;;) {
        queue_state& s = m_q[q];
        const unsigned next = s.next;  // read before finish_round() relinks q
        if (!view.eligible(q, now)) {
            if (++passed == m_active) return -1;
            q = next;
            continue;
        }
        const std::uint32_t head = view.head_bytes(q);
        if (!s.visited) {
            if (m_discipline == sched_discipline::WRR) {
                if (head > m_quantum[q]) {  // would never fit: starve it, keep pick() finite
                    if (++passed == m_active) return -1;
                    q = next;
                    continue;
                }
                s.deficit = static_cast<std::int32_t>(m_quantum[q]);
            } else {
                s.deficit += static_cast<std::int32_t>(m_quantum[q]);
            }
            s.visited = true;
        }
        if (static_cast<std::int64_t>(head) <= s.deficit) return static_cast<int>(q);
        finish_round(q, now);
        passed = 0;
        q = next;
    }
}


}  // namespace fabricsim::sw
