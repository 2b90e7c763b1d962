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

void scheduler::insert_far(model_timer& t) {
    m_far.push_back({t.m_at, &t});
    std::push_heap(m_far.begin(), m_far.end());
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
    return m_slot[m_cursor & MASK];
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
