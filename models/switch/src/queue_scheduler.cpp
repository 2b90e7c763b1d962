#include "fabricsim/switch/algo/queue_scheduler.h"

#include <stdexcept>

namespace fabricsim::sw {

queue_scheduler::queue_scheduler(sched_discipline discipline,
                                 const std::vector<queue_sched_params>& queues)
    : m_discipline(discipline) {
    if (queues.empty() || queues.size() > MAX_QUEUES)
        throw std::invalid_argument("queue_scheduler: 1 to 8 queues per port");
    m_n = static_cast<std::uint8_t>(queues.size());
    for (unsigned q = 0; q < m_n; ++q) {
        queue_state& s = m_q[q];
        s.strict = discipline == sched_discipline::SP || queues[q].strict;
        m_quantum[q] = queues[q].quantum_bytes;
        if (s.strict) m_strict_mask = static_cast<std::uint8_t>(m_strict_mask | 1u << q);
        else if (m_quantum[q] == 0 || m_quantum[q] > MAX_QUANTUM)
            throw std::invalid_argument("queue_scheduler: WRR/DWRR quantum must be 1 byte to 16 MiB");
    }
    for (unsigned q = m_n; q-- > 0;)
        if (m_q[q].strict) m_strict_order[m_strict_count++] = static_cast<std::uint8_t>(q);
}

void queue_scheduler::check_index(unsigned q) const {
    if (q >= m_n) throw std::out_of_range("queue_scheduler: queue index out of range");
}

int queue_scheduler::active_at(unsigned pos) const {
    if (pos >= m_active) return -1;
    unsigned q = static_cast<unsigned>(m_head);
    while (pos-- > 0) q = m_q[q].next;
    return static_cast<int>(q);
}

void queue_scheduler::unlink(unsigned q) {
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

void queue_scheduler::append(unsigned q) {
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

void queue_scheduler::backlogged(unsigned q, ps_t now) {
    check_index(q);
    queue_state& s = m_q[q];
    if (s.strict) return;
    if (s.in_list) throw std::logic_error("queue_scheduler: backlogged() on a backlogged queue");
    s.deficit = 0;
    s.visited = false;
    append(q);
    if (m_observer) m_observer->queue_activated(q, now);
}

void queue_scheduler::serve_alone(unsigned q, std::uint32_t bytes, ps_t now, ps_t tx_end) {
    check_index(q);
    if (!serves_alone(q, bytes))
        throw std::logic_error("queue_scheduler: serve_alone() while it would not serve alone");
    if (m_strict_mask >> q & 1) return;
    // served() leaves an emptied queue with no deficit and no visit, one round further on. A
    // queue out of the active list has both already (backlogged() and the emptying served()
    // reset them), and q is out of it (m_active == 0), so only the round is counted.
    ++m_q[q].rounds;
    if (m_observer) {
        m_observer->queue_activated(q, now);
        m_observer->queue_finished_round(q, tx_end);
    }
}

// The queue has used its turn with backlog left: to the tail, the next visit grants a quantum.
void queue_scheduler::finish_round(unsigned q, ps_t at) {
    queue_state& s = m_q[q];
    s.visited = false;
    if (m_discipline == sched_discipline::WRR) s.deficit = 0;  // chips: no carry-over
    if (m_head == static_cast<int>(q)) {
        m_head = static_cast<std::int8_t>(s.next);  // circular list: advancing the head puts q at the tail
    } else {
        unlink(q);
        append(q);
    }
    ++s.rounds;
    if (m_observer) m_observer->queue_finished_round(q, at);
}

void queue_scheduler::served(unsigned q, std::uint32_t bytes, bool now_empty, ps_t /*now*/,
                             ps_t tx_end) {
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
    if (m_observer) m_observer->queue_finished_round(q, tx_end);
}

}  // namespace fabricsim::sw
