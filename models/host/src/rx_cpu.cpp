#include "fabricsim/host/algo/rx_cpu.h"

#include <stdexcept>
#include <utility>

namespace fabricsim::host {

rx_cpu::counters& rx_cpu::counters::operator+=(const counters& o) {
    completions += o.completions;
    rx_ring_full += o.rx_ring_full;
    packets += o.packets;
    bytes += o.bytes;
    interrupts += o.interrupts;
    polls += o.polls;
    repolls += o.repolls;
    if (o.max_batch > max_batch) max_batch = o.max_batch;
    if (o.peak_ring > peak_ring) peak_ring = o.peak_ring;
    return *this;
}

rx_cpu::rx_cpu(const rx_cpu_params& p, const nic::coalesce_params& c, rx_sink& sink)
    : m_p(p), m_sink(&sink) {
    if (auto e = p.validate())
        throw std::invalid_argument("rx_cpu_params." + e->field + ": " + e->reason);
    if (auto e = c.validate())
        throw std::invalid_argument("coalesce_params." + e->field + ": " + e->reason);
    m_q.reserve(p.cores);
    for (std::uint32_t i = 0; i < p.cores; ++i) m_q.emplace_back(c);
    m_slots.resize(std::size_t(p.cores) * p.ring);
}

ps_t rx_cpu::next_event() const {
    ps_t best = NEVER;
    for (const auto& q : m_q) {
        const ps_t e = event_of(q);
        if (e < best) best = e;
    }
    return best;
}

void rx_cpu::run(ps_t until, bool inclusive) {
    for (;;) {
        unsigned best = 0;
        ps_t e = NEVER;
        for (unsigned i = 0; i < m_q.size(); ++i) {
            const ps_t t = event_of(m_q[i]);
            if (t < e) {
                e = t;
                best = i;
            }
        }
        if (e == NEVER || e > until || (e == until && !inclusive)) return;
        queue_state& q = m_q[best];
        if (q.polling) {
            look(best, e);
        } else if (q.app_size && q.app_since + q.app_left == e) {
            app_done(best, e);
        } else if (q.coal.on_timer(e)) {
            interrupt(best, e);
        } else {
            return;  // unreachable: a due deadline of an unmasked queue always fires
        }
    }
}

void rx_cpu::advance(ps_t now) {
    run(now, true);
}

void rx_cpu::commit(queue_state& q, ps_t from, ps_t to) {
    q.busy += to - from;
    q.busy_end = to;
}

void rx_cpu::interrupt(unsigned queue, ps_t t) {
    queue_state& q = m_q[queue];
    if (q.app_size) {  // the softirq pre-empts the reader
        const ps_t ran = t - q.app_since;
        q.app_left -= ran;
        q.app_busy += ran;
    }
    q.stats.interrupts++;
    q.stats.polls++;
    q.polling = true;
    q.budget_left = m_p.budget;
    q.batch = 0;
    q.next_check = t + m_p.irq_cost + m_p.poll_cost;
    commit(q, t, q.next_check);
}

void rx_cpu::look(unsigned queue, ps_t t) {
    queue_state& q = m_q[queue];
    const bool waiting = q.proc < q.tail && at(queue, q.proc).arrival <= t;
    if (q.budget_left == 0) {
        if (!waiting) {
            complete(queue, t);
            return;
        }
        m_sink->on_poll_end(queue, t, false);
        q.stats.polls++;
        q.stats.repolls++;
        q.budget_left = m_p.budget;
        q.next_check = t + m_p.poll_cost;
        commit(q, t, q.next_check);
        return;
    }
    if (!waiting) {
        complete(queue, t);
        return;
    }
    ps_t s = t;
    std::uint32_t n = 0;
    while (n < q.budget_left && q.proc < q.tail) {
        slot& e = at(queue, q.proc);
        if (e.arrival > t) break;
        s += m_p.packet_cost + ps_t(e.pkt.bytes) * m_p.byte_cost;
        e.finish = s;
        q.stats.bytes += e.pkt.bytes;
        m_sink->on_delivery(queue, e.pkt, s);
        if (m_p.app_byte_cost && e.pkt.payload) app_push(q, e.pkt);
        ++q.proc;
        ++n;
    }
    q.budget_left -= n;
    q.batch += n;
    q.stats.packets += n;
    q.next_check = s;
    commit(q, t, s);
}

void rx_cpu::complete(unsigned queue, ps_t t) {
    queue_state& q = m_q[queue];
    q.polling = false;
    q.app_since = t;  // the reader resumes
    q.next_check = NEVER;
    if (q.batch > q.stats.max_batch) q.stats.max_batch = q.batch;
    m_sink->on_poll_end(queue, t, true);
    const auto unprocessed = static_cast<std::uint32_t>(q.tail - q.proc);
    if (q.coal.unmask(t, unprocessed).fire) interrupt(queue, t);
}

void rx_cpu::app_push(queue_state& q, const rx_packet& p) {
    if (q.app_size == q.app.size()) {  // grow the ring, oldest first
        std::vector<rx_packet> bigger(std::max<std::size_t>(16, 2 * q.app.size()));
        for (std::size_t i = 0; i < q.app_size; ++i)
            bigger[i] = q.app[(q.app_head + i) % q.app.size()];
        q.app.swap(bigger);
        q.app_head = 0;
    }
    q.app[(q.app_head + q.app_size) % q.app.size()] = p;
    if (q.app_size++ == 0) q.app_left = ps_t(p.payload) * m_p.app_byte_cost;
    q.app_bytes += p.payload;
}

void rx_cpu::app_done(unsigned queue, ps_t t) {
    queue_state& q = m_q[queue];
    const rx_packet p = q.app[q.app_head];
    q.app_head = (q.app_head + 1) % q.app.size();
    --q.app_size;
    q.app_busy += t - q.app_since;
    q.app_since = t;
    q.app_bytes -= p.payload;
    q.app_left = q.app_size ? ps_t(q.app[q.app_head].payload) * m_p.app_byte_cost : 0;
    m_sink->on_app_read(queue, p, t);
}

ps_t rx_cpu::app_busy_ps(unsigned queue, ps_t now) const {
    const queue_state& q = m_q[queue];
    if (q.polling || !q.app_size || now <= q.app_since) return q.app_busy;
    return q.app_busy + std::min(now - q.app_since, q.app_left);
}

double rx_cpu::app_utilisation(ps_t now) const {
    if (now == 0) return 0.0;
    ps_t sum = 0;
    for (unsigned i = 0; i < m_q.size(); ++i) sum += app_busy_ps(i, now);
    return double(sum) / (double(now) * double(m_q.size()));
}

bool rx_cpu::on_completion(unsigned queue, ps_t now, const rx_packet& p) {
    run(now, false);
    queue_state& q = m_q[queue];
    while (q.head < q.proc && at(queue, q.head).finish <= now) ++q.head;
    if (q.tail - q.head >= m_p.ring) {
        q.stats.rx_ring_full++;
        return false;
    }
    at(queue, q.tail) = slot{p, now, NEVER};
    ++q.tail;
    q.stats.completions++;
    const auto used = static_cast<std::uint32_t>(q.tail - q.head);
    if (used > q.stats.peak_ring) q.stats.peak_ring = used;
    if (q.coal.on_completion(now, p.bytes).fire) interrupt(queue, now);
    return true;
}

ps_t rx_cpu::busy_ps(unsigned queue, ps_t now) const {
    const queue_state& q = m_q[queue];
    return q.busy_end > now ? q.busy - (q.busy_end - now) : q.busy;
}

double rx_cpu::utilisation(unsigned queue, ps_t now) const {
    return now ? double(busy_ps(queue, now)) / double(now) : 0.0;
}

double rx_cpu::utilisation(ps_t now) const {
    if (now == 0) return 0.0;
    ps_t sum = 0;
    for (unsigned i = 0; i < m_q.size(); ++i) sum += busy_ps(i, now);
    return double(sum) / (double(now) * double(m_q.size()));
}

rx_cpu::counters rx_cpu::totals() const {
    counters t;
    for (const auto& q : m_q) t += q.stats;
    return t;
}

}  // namespace fabricsim::host
