#include "fabricsim/core/scheduler.h"

#include <algorithm>

#include "fabricsim/core/kernel.h"

namespace fabricsim {

// Process-wide on purpose: the default scheduler for blocks built outside any platform, and
// the scope a platform's constructor sets (elaboration is single-threaded).
scheduler* scheduler::s_instance = nullptr;
scheduler* scheduler::s_current = nullptr;

scheduler& scheduler::create() {
    s_instance = new scheduler("fabricsim_scheduler");  // lives as long as the kernel
    return *s_instance;
}

scheduler::scheduler(const sc_core::sc_module_name& name)
    : sc_core::sc_module(name), m_slot(SLOTS, nullptr), m_occupied(WORDS, 0) {
    require_ps_time_resolution();
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
    if (!m_cursor_sorted) {
        link(t);
        return;
    }
    // Before the first timer of the same or a later expiry: the order a push at the head
    // gives (the latest link first among equals), and the slot stays sorted.
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
    // Insertion sort, each timer after the equal ones before it in list order; a timer not
    // before the last one sorted is appended, so a slot in or against time order (arms
    // usually follow time) costs O(1) per timer. Past SHORT timers, a bucket sort takes the
    // sorted part and the rest, in list order still among equal expiries.
    constexpr std::size_t SHORT = 16;
    model_timer* list = head;
    model_timer* last = head;
    model_timer* p = head->m_next;
    for (std::size_t n = 1; p; ++n) {
        if (n == SHORT) {
            last->m_next = p;
            bucket_sort(list);
            break;
        }
        model_timer* const next = p->m_next;
        if (p->m_at >= last->m_at) {
            last->m_next = p;
            last = p;
        } else {
            model_timer** pos = &list;
            while ((*pos)->m_at <= p->m_at) pos = &(*pos)->m_next;
            p->m_next = *pos;
            *pos = p;
        }
        p = next;
    }
    if (!p) last->m_next = nullptr;
    head = list;
    model_timer** pprev = &head;
    for (model_timer* q = list; q; q = q->m_next) {
        q->m_pprev = pprev;
        pprev = &q->m_next;
    }
}

void scheduler::bucket_sort(model_timer*& list) {
    // All share the tick: 64 buckets by the top bits of the offset within it (64 ps each),
    // each sorted by insertion as above (in list order, so stable), then joined in order.
    constexpr unsigned BUCKET_BITS = 6;
    constexpr unsigned SHIFT = TICK_BITS - BUCKET_BITS;
    constexpr std::size_t BUCKETS = std::size_t(1) << BUCKET_BITS;
    static_assert(BUCKETS == 64);  // `used` is one word
    model_timer* first[BUCKETS];
    model_timer* last[BUCKETS];
    std::uint64_t used = 0;
    for (model_timer *p = list, *next; p; p = next) {
        next = p->m_next;
        const std::size_t b = (p->m_at >> SHIFT) & (BUCKETS - 1);
        if (!(used & (std::uint64_t(1) << b))) {
            used |= std::uint64_t(1) << b;
            first[b] = last[b] = p;
        } else if (p->m_at >= last[b]->m_at) {
            last[b]->m_next = p;
            last[b] = p;
        } else {
            model_timer** pos = &first[b];
            while ((*pos)->m_at <= p->m_at) pos = &(*pos)->m_next;
            p->m_next = *pos;
            *pos = p;
        }
    }
    model_timer** out = &list;
    for (; used; used &= used - 1) {
        const auto b = static_cast<std::size_t>(__builtin_ctzll(used));
        *out = first[b];
        out = &last[b]->m_next;
    }
    *out = nullptr;
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
    m_cursor_sorted = false;
    return m_slot[m_cursor & MASK];
}

model_timer* scheduler::crowded_head() {
    model_timer*& head = m_slot[m_cursor & MASK];
    if (!m_cursor_sorted) {
        sort_slot(head);
        m_cursor_sorted = true;
    }
    return head;
}

ps_t scheduler::next_expiry() {
    ps_t at = NO_TICK;
    const std::uint64_t tick = next_wheel_tick();
    if (tick != NO_TICK)
        for (const model_timer* p = m_slot[tick & MASK]; p; p = p->m_next)
            at = std::min(at, p->m_at);
    drop_stale_far();
    if (!m_far.empty()) at = std::min(at, m_far.front().at);
    return at;
}

std::string scheduler::audit() const {
    const ps_t now = sc_core::sc_time_stamp().value();
    auto at_str = [](const model_timer& t) {
        return "a timer due at " + std::to_string(t.m_at) + " ps";
    };
    std::size_t in_wheel = 0;
    for (std::uint64_t slot = 0; slot < SLOTS; ++slot) {
        const bool marked = m_occupied[slot >> 6] >> (slot & 63) & 1;
        if (marked != (m_slot[slot] != nullptr))
            return "wheel slot " + std::to_string(slot) +
                   (marked ? " is marked occupied and is empty"
                           : " holds timers and is not marked occupied");
        model_timer* const* link = &m_slot[slot];
        for (const model_timer* t = m_slot[slot]; t; link = &t->m_next, t = t->m_next) {
            ++in_wheel;
            if (!t->m_pending || t->m_pprev != link)
                return at_str(*t) + " is linked in wheel slot " + std::to_string(slot) +
                       " but not pending there";
            if (t->m_at < now)
                return at_str(*t) + " is pending in the past (now " + std::to_string(now) + " ps)";
            const std::uint64_t tick = t->m_at >> TICK_BITS;
            if (tick < m_cursor || tick >= m_cursor + SLOTS || (tick & MASK) != slot)
                return at_str(*t) + " sits in wheel slot " + std::to_string(slot) +
                       ", outside the wheel's span from tick " + std::to_string(m_cursor) +
                       ": it would fire late";
        }
    }
    if (in_wheel != m_in_wheel)
        return std::to_string(in_wheel) + " timers in the wheel, " + std::to_string(m_in_wheel) +
               " counted";
    // A timer cancelled and re-armed for the same time has two live-looking entries: count it once.
    std::vector<const model_timer*> far;
    for (const far_entry& e : m_far) {
        const model_timer& t = *e.timer;
        if (!t.m_pending || t.m_at != e.at || t.m_pprev) continue;  // stale entry
        far.push_back(&t);
        if (t.m_at < now)
            return at_str(t) + " waits in the far heap in the past (now " + std::to_string(now) +
                   " ps)";
    }
    std::sort(far.begin(), far.end(), std::less<>());
    const std::size_t far_timers =
        static_cast<std::size_t>(std::unique(far.begin(), far.end()) - far.begin());
    if (in_wheel + far_timers != m_pending)
        return std::to_string(in_wheel + far_timers) +
               " timers pending in the wheel and the far heap, " + std::to_string(m_pending) +
               " counted";
    return {};
}

void scheduler::observe_every(ps_t first, ps_t interval, void (*fn)(void*), void* obj) {
    sc_assert(interval > 0 && first >= now_ps() && !m_observe_fn);
    m_observe_at = first;
    m_observe_every = interval;
    m_observe_fn = fn;
    m_observe_obj = obj;
    m_wake.notify(to_sc_time(first - now_ps()));
}

void scheduler::observe_now() {
    detail::g_model_now = m_observe_at;
    m_observe_fn(m_observe_obj);
    m_observe_at += m_observe_every;
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
    // One loop (a second copy of it kept the compiler from inlining advance(): +13 instructions
    // per frame-hop): up to the next observation in the window and it, else to the horizon.
    for (;;) {
        const bool observe = m_observe_at < horizon;
        const ps_t until = observe ? m_observe_at : horizon;
        while (model_timer* t = pop_due(until)) {
            detail::g_model_now = t->m_at;
            count_activation();
            ++m_activations;
            t->m_fn(t->m_obj);
        }
        if (!observe) break;
        observe_now();
    }
    detail::g_model_time_ahead = false;
    m_running = false;
    const ps_t next = std::min(next_expiry(), m_observe_at);
    if (next == NO_TICK) return;
    if (next < reach) m_resume_before = reach;  // only the pause stopped this window short
    m_wake.notify(to_sc_time(next - kernel_now));
}

}  // namespace fabricsim
