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
#include <stdexcept>
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
class queue_view
{
public:
    virtual ~queue_view() = default;
    /// q may send at `now` (non-empty, its head frame is out of the pipeline, its shaper has
    /// tokens).
    virtual bool eligible(unsigned q, ps_t now) const = 0;
    /// Size of q's head frame as counted against quanta (only called when eligible(q)).
    virtual std::uint32_t head_bytes(unsigned q) const = 0;
};

/// Per-port scheduler: strict queues first (highest index first), then one WRR or DWRR group
/// kept as a circular active list of backlogged queues. Fixed state for up to 8 queues; pick()
/// and served() never allocate.
///
/// `OBSERVER` is told about round boundaries: round_observer (any implementation, through
/// virtual calls: `queue_scheduler`) or a final class with the same two calls, such as
/// mq_ecn_estimator, which are then inlined (the egress port's per-frame path). Each queue
/// carries an `OBSERVER::queue_slot` next to its deficit and links, for the observer's own
/// per-queue state (MQ-ECN's T_start), so a round boundary touches one line of queue state.
template <class OBSERVER>
class basic_queue_scheduler
{
public:
    static constexpr unsigned MAX_QUEUES = 8;
    /// Largest quantum (16 MiB): deficits stay far inside 32 bits.
    static constexpr std::uint32_t MAX_QUANTUM = 16u << 20;
    using slot_type = typename OBSERVER::queue_slot;

    /// `discipline` applies to the non-strict queues (SP makes every queue strict). 1 to 8 queues
    /// (throws std::invalid_argument otherwise, or if a WRR/DWRR quantum is 0 or above
    /// MAX_QUANTUM).
    basic_queue_scheduler(sched_discipline discipline,
                          const std::vector<queue_sched_params>& queues);
    /// nullptr (the default) = nobody is told.
    void set_observer(OBSERVER* o) { m_observer = o; }
    unsigned queues() const { return m_n; }
    sched_discipline discipline() const { return m_discipline; }

    /// Queue q went from empty to non-empty at `now` (call once per such transition; a second
    /// call while q is still backlogged throws std::logic_error).
    void backlogged(unsigned q, ps_t now);
    /// The queue to serve next, or -1 if no queue is eligible. Strict queues first, highest index
    /// first (802.1Q: higher traffic class = higher priority); then the WRR/DWRR group.
    /// Repeated calls without served() return the same queue (if the view is unchanged).
    /// `VIEW` is a queue_view or any type with the same two const members; a final class lets
    /// the compiler inline them (the egress port's per-frame path).
    template <class VIEW>
    int pick(const VIEW& view, ps_t now);
    /// The frame chosen by the last pick() (bytes as counted against the quantum) was dequeued
    /// from q at `now`; `now_empty` tells whether q is empty now; `tx_end` = when its last bit
    /// leaves (MQ-ECN takes the round sample at tx_end when a queue empties, as the authors'
    /// ns-2 code does).
    void served(unsigned q, std::uint32_t bytes, bool now_empty, ps_t now, ps_t tx_end);

    /// q was emptied without being served (its frames were dropped): out of the active list,
    /// as an emptying served() leaves it, with no round counted.
    void flushed(unsigned q) {
        queue_state& s = m_q.at(q);
        if (s.in_list) unlink(q);
        s.deficit = 0;
        s.visited = false;
    }
    /// With every queue empty, a frame of `bytes` arriving in q would be picked at once (q is
    /// strict or the frame fits one quantum): serve_alone() may then stand for backlogged(),
    /// pick() and served(now_empty = true).
    bool serves_alone(unsigned q, std::uint32_t bytes) const {
        return m_active == 0 && ((m_strict_mask >> q & 1) || bytes <= m_q[q].quantum);
    }
    /// backlogged(q, now), pick() == q and served(q, bytes, true, now, tx_end) in one step, when
    /// serves_alone(q, bytes): the same state afterwards and the same observer calls, without
    /// touching the active list (the idle-port path of the egress port, once per such frame).
    void serve_alone(unsigned q, std::uint32_t bytes, ps_t now, ps_t tx_end);
    /// serve_alone() for a caller that knows serves_alone(q, bytes) holds and q is not strict,
    /// and passes the observer it set: the same effect, reading and writing q's entry only
    /// (the egress port's idle path, where the rest of the scheduler's state is cold).
    void serve_alone_known(unsigned q, ps_t now, ps_t tx_end, OBSERVER* observer) {
        // served() leaves an emptied queue with no deficit and no visit, one round further on.
        // A queue out of the active list has both already (backlogged() and the emptying
        // served() reset them), and q is out of it (m_active == 0): only the round is counted.
        queue_state& s = m_q[q];
        ++s.rounds;
        if (observer) {
            observer->queue_activated(q, now, s.slot);
            observer->queue_finished_round(q, tx_end, s.slot);
        }
    }

    /// Deficit counter of q in bytes (0 for strict queues), for tests and statistics.
    std::int64_t deficit(unsigned q) const { return m_q.at(q).deficit; }
    /// Rounds completed by q (times queue_finished_round fired for it), for statistics.
    std::uint64_t rounds(unsigned q) const { return m_q.at(q).rounds; }
    bool strict(unsigned q) const { return m_q.at(q).strict; }
    std::uint32_t quantum(unsigned q) const { return m_q.at(q).quantum; }
    /// The observer's state of queue q.
    const slot_type& observer_slot(unsigned q) const { return m_q.at(q).slot; }
    /// q is in the WRR/DWRR active list (backlogged since its last emptying).
    bool active(unsigned q) const { return m_q.at(q).in_list; }
    /// Number of queues in the active list.
    unsigned active_count() const { return m_active; }
    /// Queue at position `pos` of the active list, counted from its head (-1 if pos >= count).
    int active_at(unsigned pos) const;

private:
    // One queue's links, deficit, quantum, round count and observer slot: 32 bytes with
    // MQ-ECN's slot, two queues per cache line. Deficits fit in 32 bits: at most a quantum
    // plus a frame (quantum <= MAX_QUANTUM).
    struct alignas(32) queue_state {
        std::int32_t deficit = 0;
        std::uint32_t quantum = 0;
        std::uint8_t next = 0;  ///< intrusive circular active list
        std::uint8_t prev = 0;
        bool strict : 1;
        bool in_list : 1;
        bool visited : 1;          ///< the quantum of the current visit has been granted
        std::uint64_t rounds = 0;  ///< statistic: times q finished a round
        [[no_unique_address]] slot_type slot{};
        queue_state() : strict(false), in_list(false), visited(false) {}
    };

    void check_index(unsigned q) const {
        if (q >= m_n) throw std::out_of_range("queue_scheduler: queue index out of range");
    }
    void unlink(unsigned q);
    void append(unsigned q);  ///< insert at the tail (just before the head)
    void finish_round(unsigned q, ps_t at);

    // What every call reads first, in one line; then the per-queue state.
    OBSERVER* m_observer = nullptr;
    std::int8_t m_head = -1;  ///< head of the active list, -1 if empty
    std::uint8_t m_active = 0;
    sched_discipline m_discipline;
    std::uint8_t m_n = 0;
    std::uint8_t m_strict_count = 0;
    std::uint8_t m_strict_mask = 0;                         ///< bit q: q is strict
    std::array<std::uint8_t, MAX_QUEUES> m_strict_order{};  ///< strict queues, highest index first
    alignas(64) std::array<queue_state, MAX_QUEUES> m_q{};
};

/// The scheduler with any round_observer (virtual calls).
using queue_scheduler = basic_queue_scheduler<round_observer>;

template <class OBSERVER>
basic_queue_scheduler<OBSERVER>::basic_queue_scheduler(
    sched_discipline discipline, const std::vector<queue_sched_params>& queues)
    : m_discipline(discipline) {
    if (queues.empty() || queues.size() > MAX_QUEUES)
        throw std::invalid_argument("queue_scheduler: 1 to 8 queues per port");
    m_n = static_cast<std::uint8_t>(queues.size());
    for (unsigned q = 0; q < m_n; ++q) {
        queue_state& s = m_q[q];
        s.strict = discipline == sched_discipline::SP || queues[q].strict;
        s.quantum = queues[q].quantum_bytes;
        if (s.strict)
            m_strict_mask = static_cast<std::uint8_t>(m_strict_mask | 1u << q);
        else if (s.quantum == 0 || s.quantum > MAX_QUANTUM)
            throw std::invalid_argument(
                "queue_scheduler: WRR/DWRR quantum must be 1 byte to 16 MiB");
    }
    for (unsigned q = m_n; q-- > 0;)
        if (m_q[q].strict) m_strict_order[m_strict_count++] = static_cast<std::uint8_t>(q);
}

template <class OBSERVER>
int basic_queue_scheduler<OBSERVER>::active_at(unsigned pos) const {
    if (pos >= m_active) return -1;
    unsigned q = static_cast<unsigned>(m_head);
    while (pos-- > 0) q = m_q[q].next;
    return static_cast<int>(q);
}

template <class OBSERVER>
void basic_queue_scheduler<OBSERVER>::unlink(unsigned q) {
    queue_state& s = m_q[q];
    if (--m_active == 0) {
        m_head = -1;
    } else {
        m_q[s.prev].next = s.next;
        m_q[s.next].prev = s.prev;
        if (m_head == static_cast<int>(q)) m_head = static_cast<std::int8_t>(s.next);
    }
    s.in_list = false;
}

template <class OBSERVER>
void basic_queue_scheduler<OBSERVER>::append(unsigned q) {
    queue_state& s = m_q[q];
    const auto self = static_cast<std::uint8_t>(q);
    if (m_active++ == 0) {
        m_head = static_cast<std::int8_t>(q);
        s.next = s.prev = self;
    } else {
        queue_state& head = m_q[static_cast<unsigned>(m_head)];
        s.next = static_cast<std::uint8_t>(m_head);
        s.prev = head.prev;
        m_q[head.prev].next = self;
        head.prev = self;
    }
    s.in_list = true;
}

template <class OBSERVER>
void basic_queue_scheduler<OBSERVER>::backlogged(unsigned q, ps_t now) {
    check_index(q);
    queue_state& s = m_q[q];
    if (s.strict) return;
    if (s.in_list) throw std::logic_error("queue_scheduler: backlogged() on a backlogged queue");
    s.deficit = 0;
    s.visited = false;
    append(q);
    if (m_observer) m_observer->queue_activated(q, now, s.slot);
}

template <class OBSERVER>
void basic_queue_scheduler<OBSERVER>::serve_alone(unsigned q, std::uint32_t bytes, ps_t now,
                                                  ps_t tx_end) {
    check_index(q);
    if (!serves_alone(q, bytes))
        throw std::logic_error("queue_scheduler: serve_alone() while it would not serve alone");
    if (!(m_strict_mask >> q & 1)) serve_alone_known(q, now, tx_end, m_observer);
}

// The queue has used its turn with backlog left: to the tail, the next visit grants a quantum.
template <class OBSERVER>
void basic_queue_scheduler<OBSERVER>::finish_round(unsigned q, ps_t at) {
    queue_state& s = m_q[q];
    s.visited = false;
    if (m_discipline == sched_discipline::WRR) s.deficit = 0;  // chips: no carry-over
    if (m_head == static_cast<int>(q)) {
        m_head = static_cast<std::int8_t>(
            s.next);  // circular list: advancing the head puts q at the tail
    } else {
        unlink(q);
        append(q);
    }
    ++s.rounds;
    if (m_observer) m_observer->queue_finished_round(q, at, s.slot);
}

template <class OBSERVER>
void basic_queue_scheduler<OBSERVER>::served(unsigned q, std::uint32_t bytes, bool now_empty,
                                             ps_t /*now*/, ps_t tx_end) {
    check_index(q);
    queue_state& s = m_q[q];
    if (s.strict) return;
    if (!s.in_list) throw std::logic_error("queue_scheduler: served() on an idle queue");
    s.deficit -= static_cast<std::int32_t>(bytes);
    if (!now_empty) return;
    // Emptied: leaves the list and forfeits its deficit (no credit for idle time).
    unlink(q);
    s.deficit = 0;
    s.visited = false;
    ++s.rounds;
    if (m_observer) m_observer->queue_finished_round(q, tx_end, s.slot);
}

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
template <class OBSERVER>
template <class VIEW>
inline int basic_queue_scheduler<OBSERVER>::pick(const VIEW& view, ps_t now) {
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
                if (head > s.quantum) {  // would never fit: starve it, keep pick() finite
                    if (++passed == m_active) return -1;
                    q = next;
                    continue;
                }
                s.deficit = static_cast<std::int32_t>(s.quantum);
            } else {
                s.deficit += static_cast<std::int32_t>(s.quantum);
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
