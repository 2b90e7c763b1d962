#include "fabricsim/core/scheduler.h"

#include <algorithm>

#include "fabricsim/core/kernel.h"

namespace fabricsim {

scheduler* scheduler::s_instance = nullptr;

scheduler& scheduler::create() {
    s_instance = new scheduler("fabricsim_scheduler");  // lives as long as the kernel
    return *s_instance;
}

scheduler::scheduler(const sc_core::sc_module_name& name)
    : sc_core::sc_module(name), m_slot(SLOTS, nullptr), m_occupied(WORDS, 0) {
    SC_HAS_PROCESS(scheduler);
    SC_METHOD(run);
    sensitive << m_wake;
    dont_initialize();
    m_far.reserve(256);
}

void scheduler::insert_slow(model_timer& t) {
    const std::uint64_t tick = t.m_at >> TICK_BITS;
    if (tick != m_cursor) {
        sc_assert(tick >= m_cursor + SLOTS);  // arms are at >= now, never before the cursor
        m_far.push_back({t.m_at, &t});
        std::push_heap(m_far.begin(), m_far.end());
        return;
    }
    // Before the first timer of the same or a later expiry: the latest link fires first
    // among equals, as if pushed at the head of an unsorted slot.
    const std::uint64_t slot = m_cursor & MASK;
    model_timer** pos = &m_slot[slot];
    while (*pos && (*pos)->m_at < t.m_at) pos = &(*pos)->m_next;
    t.m_next = *pos;
    if (t.m_next) t.m_next->m_pprev = &t.m_next;
    t.m_pprev = pos;
    *pos = &t;
    m_occupied[slot >> 6] |= std::uint64_t(1) << (slot & 63);
    ++m_in_wheel;
}

void scheduler::sort_slot(model_timer*& head) {
    if (!head || !head->m_next) return;
    constexpr std::size_t SHORT = 16;
    std::size_t n = 0;
    for (const model_timer* p = head; p && n <= SHORT; p = p->m_next) ++n;
    model_timer* list = head;
    if (n <= SHORT) {
        // Insertion sort, each timer after the equal ones before it in list order. An arm
        // order that follows time (the usual one) leaves the slot reversed: O(1) per timer.
        model_timer* out = nullptr;
        for (model_timer* p = list; p;) {
            model_timer* const next = p->m_next;
            model_timer** pos = &out;
            while (*pos && (*pos)->m_at <= p->m_at) pos = &(*pos)->m_next;
            p->m_next = *pos;
            *pos = p;
            p = next;
        }
        list = out;
    } else {
        // LSD radix sort on the expiry's offset within the tick (all share the tick), two
        // digits; each pass appends to its bucket in list order, so it is stable.
        constexpr unsigned DIGIT = TICK_BITS / 2;
        constexpr std::size_t BUCKETS = std::size_t(1) << DIGIT;
        static_assert(2 * DIGIT == TICK_BITS);
        model_timer* first[BUCKETS];
        model_timer** last[BUCKETS];
        for (unsigned shift = 0; shift < TICK_BITS; shift += DIGIT) {
            for (std::size_t b = 0; b < BUCKETS; ++b) last[b] = &first[b];
            for (model_timer* p = list; p; p = p->m_next) {
                const std::size_t b = (p->m_at >> shift) & (BUCKETS - 1);
                *last[b] = p;
                last[b] = &p->m_next;
            }
            model_timer** out = &list;
            for (std::size_t b = 0; b < BUCKETS; ++b)
                if (last[b] != &first[b]) {
                    *out = first[b];
                    out = last[b];
                }
            *out = nullptr;
        }
    }
    head = list;
    model_timer** pprev = &head;
    for (model_timer* p = list; p; p = p->m_next) {
        p->m_pprev = pprev;
        pprev = &p->m_next;
    }
}

void scheduler::wake_for(const model_timer& t) {
    sc_assert(t.m_at >= now_ps());
    // sc_event::notify keeps the earlier of two pending notifications.
    m_wake.notify(to_sc_time(t.m_at - now_ps()));
}

std::uint64_t scheduler::next_wheel_tick() const {
    if (m_in_wheel == 0) return NO_TICK;
    const std::uint64_t start = m_cursor & MASK;
    std::uint64_t word = start >> 6;
    std::uint64_t bits = m_occupied[word] & (~std::uint64_t(0) << (start & 63));
    for (std::uint64_t i = 0; i <= WORDS; ++i) {
        if (bits) {
            const std::uint64_t slot =
                (word << 6) | static_cast<std::uint64_t>(__builtin_ctzll(bits));
            return m_cursor + ((slot - start) & MASK);
        }
        word = (word + 1) % WORDS;
        bits = m_occupied[word];
    }
    return NO_TICK;  // unreachable while m_in_wheel > 0
}

void scheduler::drop_stale_far_slow() {
    while (!m_far.empty()) {
        const far_entry& e = m_far.front();
        if (e.timer->m_pending && e.timer->m_at == e.at && !e.timer->m_pprev) return;
        std::pop_heap(m_far.begin(), m_far.end());
        m_far.pop_back();
    }
}

model_timer* scheduler::advance(ps_t horizon) {
    std::uint64_t tick = next_wheel_tick();
    drop_stale_far();
    if (!m_far.empty()) tick = std::min(tick, m_far.front().at >> TICK_BITS);
    if (tick == NO_TICK || (tick << TICK_BITS) >= horizon) return nullptr;
    // Safe to advance: nothing can be armed before `horizon` any more (callers arm at >= now).
    m_cursor = tick;
    while (!m_far.empty() && (m_far.front().at >> TICK_BITS) < m_cursor + SLOTS) {
        model_timer& t = *m_far.front().timer;
        std::pop_heap(m_far.begin(), m_far.end());
        m_far.pop_back();
        link(t);
        drop_stale_far();
    }
    // Sorted after the pulls: timers pulled into this slot were pushed at its head.
    sort_slot(m_slot[m_cursor & MASK]);
    return m_slot[m_cursor & MASK];
}

ps_t scheduler::next_expiry() {
    ps_t at = NO_TICK;
    const std::uint64_t tick = next_wheel_tick();
    if (tick == m_cursor)
        at = m_slot[tick & MASK]->m_at;  // sorted
    else if (tick != NO_TICK)
        for (const model_timer* p = m_slot[tick & MASK]; p; p = p->m_next)
            at = std::min(at, p->m_at);
    drop_stale_far();
    if (!m_far.empty()) at = std::min(at, m_far.front().at);
    return at;
}

void scheduler::run() {
    const ps_t kernel_now = sc_core::sc_time_stamp().value();
    if (kernel_now >= m_resume_before) ++m_wakeups;
    m_resume_before = 0;
    m_running = true;
    // Timers strictly before `horizon` may run now: the end of the run-ahead window, or the
    // next thing anything else in the kernel has due (another process, a delta cycle), or a
    // pause. `reach` is the horizon without the pause.
    ps_t horizon = kernel_now + 1;
    ps_t reach = horizon;
    if (m_run_ahead_end > kernel_now) {
        reach = std::max(
            horizon,
            std::min(m_run_ahead_end, kernel_now + to_ps(sc_core::sc_time_to_pending_activity())));
        horizon = m_pause_at > kernel_now ? std::max(horizon, std::min(reach, m_pause_at)) : reach;
    }
    detail::g_model_now = kernel_now;
    detail::g_model_time_ahead = true;
    while (model_timer* t = pop_due(horizon)) {
        detail::g_model_now = t->m_at;
        count_activation();
        t->m_fn(t->m_obj);
    }
    detail::g_model_time_ahead = false;
    m_running = false;
    const ps_t next = next_expiry();
    if (next == NO_TICK) return;
    if (next < reach) m_resume_before = reach;  // only the pause stopped this window short
    m_wake.notify(to_sc_time(next - kernel_now));
}

}  // namespace fabricsim
