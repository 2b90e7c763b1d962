#pragma once
/// One calendar for all timed model work in a simulation, woken by one sc_event.
/// Why: with a few hundred pending sc_events at scattered times, SystemC's timed-event heap
/// (allocated sc_event_timed objects, compares through a function pointer) took ~40% of the
/// wall time of a leaf-spine run. Model blocks instead own `model_timer`s (one pending expiry
/// each, sc_event::notify semantics: the earlier time wins). The scheduler keeps them in a
/// timing wheel (4.096 ns slots, 16.8 us span, intrusive lists, an occupancy bitmap; later
/// expiries wait in a heap) and its one SC_METHOD runs every timer that is due, then re-arms
/// its sc_event for the next one. Same-time timers fire in an order that depends only on the
/// sequence of arm calls, so runs are deterministic. Each firing counts as one model
/// activation (kernel.h). Arming, cancelling and firing are O(1) without allocation; their
/// common cases (a wheel slot, the cursor's slot) are inline here, since every frame-hop arms
/// and fires timers in several libraries.
///
/// Timing model (firing order): timers fire by expiry; equal expiries fire the most recently
/// linked first (an arm links at the head of its slot; a re-arm is cancel + arm; a heap timer
/// is linked when the cursor's advance brings it into the span, in expiry order). That is the
/// order of the cursor's slot read from the head and stably sorted by expiry. Popping the
/// earliest timer searches the cursor's slot linearly while it holds up to SCAN (8) timers,
/// the cheapest for the one to four a slot usually holds; a slot with more is sorted once
/// (stable, ~O(k): insertion sort, 64 buckets by expiry past 16 timers) and then pops take its
/// head, so a pop is O(1) amortised however many timers share the 4 ns slot (a 1024-host
/// fabric puts ~100 there). An arm into a sorted slot is inserted before its first timer of
/// the same or a later expiry, which gives the order a push at the head gives.
///
/// One scheduler per platform: a timer belongs to the scheduler that was current when it was
/// built (scheduler::scope; else the process's default one), so two platforms in one process
/// keep their own timers, firing order and counts, as each would alone.
#include <cstdint>
#include <string>
#include <vector>

#include <systemc>

#include "fabricsim/core/kernel.h"
#include "fabricsim/core/units.h"

namespace fabricsim {

class scheduler;

/// A timed wake-up for one member function of a model block.
class model_timer
{
public:
    template <class T, void (T::*METHOD)()>
    static model_timer bind(T* obj) {
        return model_timer(obj, [](void* o) { (static_cast<T*>(o)->*METHOD)(); });
    }
    model_timer(const model_timer&) = delete;
    model_timer& operator=(const model_timer&) = delete;
    model_timer(model_timer&&) = delete;

    /// Fire at absolute time `at` (>= now). If already pending for an earlier time, no change.
    /// Always inlined: an out-of-line copy spends a third of its instructions saving registers.
    [[gnu::always_inline]] inline void arm_at(ps_t at);
    /// Forget the pending expiry, if any.
    inline void cancel();
    bool pending() const { return m_pending; }
    ps_t expiry() const { return m_at; }

private:
    friend class scheduler;
    inline model_timer(void* obj, void (*fn)(void*));
    void* m_obj;
    void (*m_fn)(void*);
    scheduler* m_sched;  // the scheduler current when the timer was built
    ps_t m_at = 0;
    model_timer* m_next = nullptr;    // wheel slot list (stale once unlinked)
    model_timer** m_pprev = nullptr;  // null unless linked into the wheel
    bool m_pending = false;
};

class scheduler : public sc_core::sc_module
{
public:
    /// The process's default scheduler; created on first use (init_kernel_time creates it at
    /// top level). Timers built outside any scope() use it.
    static scheduler& instance() { return s_instance ? *s_instance : create(); }
    /// The scheduler timers built now belong to: the innermost scope's, else instance().
    static scheduler& current() { return s_current ? *s_current : instance(); }
    /// Makes `s` current while it lives (a platform builds its blocks under one).
    class scope
    {
    public:
        explicit scope(scheduler& s) : m_prev(s_current) { s_current = &s; }
        ~scope() { s_current = m_prev; }
        scope(const scope&) = delete;
        scope& operator=(const scope&) = delete;

    private:
        scheduler* m_prev;
    };
    /// A scheduler of its own (a platform's). Refuses a SystemC time resolution other than 1 ps
    /// (require_ps_time_resolution, kernel.h).
    explicit scheduler(const sc_core::sc_module_name& name);

    /// Let the scheduler run timers ahead of the kernel, up to (not including) `end`, while no
    /// other SystemC process has anything due earlier (TLM-2.0 temporal decoupling with
    /// synchronisation on demand: no timestamp changes, only fewer kernel wake-ups). The window
    /// is fixed when the kernel wakes the scheduler, so timer callbacks must not notify
    /// sc_events or write signals, and all model code must read time through now_ps(). The
    /// platform top level, whose blocks all follow this, turns it on; 0 turns it off (default).
    void run_ahead_until(ps_t end) { m_run_ahead_end = end; }
    /// Stop running ahead at `t` until the kernel gets there (the platform simulates in slices
    /// and looks at signals and progress in between). Timers fire at the same times and in the
    /// same order; a wake-up that only resumes a window the pause cut short is not counted, so
    /// kernel_wakeups() stays that of an unpaused run. 0 = no pause.
    void pause_at(ps_t t) { m_pause_at = t; }

    /// Calls `fn(obj)` at `first`, `first + interval`, ... (now_ps() = that time), each after
    /// every timer due before that time has fired and before any due at it: the state the
    /// platform's SC_METHOD sampler saw (timeseries.csv stays byte-identical). Not a timer (no
    /// activation counted) and no sc_event: it cuts no run-ahead window (the kernel wakes the
    /// scheduler for it only when nothing else is due by then). Call at elaboration, once; off (the
    /// default) costs one test per kernel wake-up.
    void observe_every(ps_t first, ps_t interval, void (*fn)(void*), void* obj);

    /// Times the SystemC kernel woke the scheduler.
    std::uint64_t kernel_wakeups() const { return m_wakeups; }
    /// Timers this scheduler has fired (counters() counts those of all schedulers).
    std::uint64_t activations() const { return m_activations; }
    /// Timers pending now.
    std::size_t pending_timers() const { return m_pending; }
    /// Between kernel runs: every pending timer expires at or after now and sits where pop_due()
    /// will find it in time; the counts agree. Empty if so, else what disagrees (invariants.h).
    std::string audit() const;

private:
    friend class model_timer;
    static scheduler& create();
    static scheduler* s_instance;
    static scheduler* s_current;  // set by scope, during elaboration only
    void run();
    /// The observation due now (run() has fired every timer due before it), and the next one.
    [[gnu::cold, gnu::noinline]] void observe_now();

    static constexpr unsigned TICK_BITS = 12;  // one slot = 4.096 ns
    static constexpr unsigned SLOT_BITS = 12;  // 4096 slots = 16.8 us
    static constexpr std::uint64_t SLOTS = std::uint64_t(1) << SLOT_BITS;
    static constexpr std::uint64_t MASK = SLOTS - 1;
    static constexpr std::uint64_t WORDS = SLOTS / 64;
    static constexpr std::uint64_t NO_TICK = ~std::uint64_t(0);
    static constexpr unsigned SCAN = 8;  // pop_due's linear search covers this many timers

    // Always inlined: every frame-hop arms ~1.7 timers; left to the inliner, a call site in the
    // link's delivery lost it when other blocks added arm calls (issue 13, +1.3% instructions).
    [[gnu::always_inline]] void insert(model_timer& t) {
        ++m_pending;
        // A later tick within the span (the common case) is pushed at its slot's head; the
        // cursor's own tick (0 ahead, wrapping to the maximum) and beyond the span go slow.
        const std::uint64_t ahead = (t.m_at >> TICK_BITS) - m_cursor;
        if (ahead - 1 < SLOTS - 1)
            link(t);
        else
            insert_slow(t);
        if (!m_running) wake_for(t);
    }
    /// Into the cursor's slot (in order if it is sorted), or into m_far.
    void insert_slow(model_timer& t);
    /// Outside run(), makes sure the kernel wakes the scheduler in time for `t` (inside, run()
    /// re-arms its wake-up at the end).
    void wake_for(const model_timer& t);
    /// Pushes `t` at the head of its slot (a slot other than the cursor's: it is sorted when
    /// the cursor reaches it).
    void link(model_timer& t) {
        const std::uint64_t slot = (t.m_at >> TICK_BITS) & MASK;
        model_timer*& head = m_slot[slot];
        t.m_next = head;
        if (head) head->m_pprev = &t.m_next;
        t.m_pprev = &head;
        head = &t;
        m_occupied[slot >> 6] |= std::uint64_t(1) << (slot & 63);
        ++m_in_wheel;
    }
    void remove(model_timer& t) {
        --m_pending;
        t.m_pending = false;
        if (!t.m_pprev) return;  // waits in m_far: that entry is now stale
        *t.m_pprev = t.m_next;
        if (t.m_next) t.m_next->m_pprev = t.m_pprev;
        const std::uint64_t slot = (t.m_at >> TICK_BITS) & MASK;
        if (!m_slot[slot]) m_occupied[slot >> 6] &= ~(std::uint64_t(1) << (slot & 63));
        t.m_pprev = nullptr;
        --m_in_wheel;
    }
    /// Unlinks and returns the earliest timer if it is due before `horizon`, else null.
    model_timer* pop_due(ps_t horizon) {
        // Wheel timers lie in [m_cursor, m_cursor + SLOTS) and m_far holds only later ones, so
        // an occupied cursor slot holds the earliest timer: no bitmap or heap look-up.
        model_timer* best = m_slot[m_cursor & MASK];
        if (!best && !(best = advance(horizon))) return nullptr;
        // The earliest, the head's side among equals: a linear search up to SCAN timers (the
        // cheapest for the few a slot usually holds); a longer slot is sorted once, and then
        // its head is the earliest (O(1) per pop however many share the slot).
        if (search<SCAN - 1>(best, best->m_next)) best = crowded_head();
        if (best->m_at >= horizon) return nullptr;
        remove(*best);
        return best;
    }
    /// The earliest of `best` and the first N timers from `p` on, as a chain of compares (a
    /// loop's counter cost 3 instructions per timer); returns the timer after them (null if
    /// the list ended).
    template <unsigned N>
    [[gnu::always_inline]] static model_timer* search(model_timer*& best, model_timer* p) {
        if constexpr (N == 0) {
            return p;
        } else {
            if (!p) return nullptr;
            if (p->m_at < best->m_at) best = p;
            return search<N - 1>(best, p->m_next);
        }
    }
    /// Moves the cursor to the next occupied tick if it is before `horizon` (pulling timers
    /// from m_far that come within the wheel's span) and returns that slot's list, else null.
    model_timer* advance(ps_t horizon);
    /// The head of the cursor's slot of more than SCAN timers, sorting it first if not yet.
    [[gnu::noinline]] model_timer* crowded_head();
    /// Stable sort of a slot's list of two or more timers by expiry (list order kept among
    /// equal expiries).
    static void sort_slot(model_timer*& head);
    static void bucket_sort(model_timer*& list);  // m_next only
    /// Tick of the first occupied slot at or after the cursor (NO_TICK if the wheel is empty).
    std::uint64_t next_wheel_tick() const;
    /// Lower bound of the next expiry, for the kernel wake-up (NO_TICK if nothing is pending).
    ps_t next_expiry();
    /// Drops stale entries at the top of m_far (inline check: m_far is usually empty).
    void drop_stale_far() {
        if (!m_far.empty()) drop_stale_far_slow();
    }
    void drop_stale_far_slow();

    // Every timer in the wheel expires in ticks [m_cursor, m_cursor + SLOTS); later ones wait
    // in m_far (a min-heap with lazy deletion) and move into the wheel as the cursor nears them.
    // Slots are in link order (head = last) but a crowded cursor's slot, once sorted.
    std::vector<model_timer*> m_slot;
    std::vector<std::uint64_t> m_occupied;
    std::uint64_t m_cursor = 0;
    bool m_cursor_sorted = false;  // the cursor's slot is sorted (kept so by insert_slow)
    std::size_t m_in_wheel = 0;
    struct far_entry {
        ps_t at;
        model_timer* timer;
        bool operator<(const far_entry& o) const { return at > o.at; }  // min-heap via std heap
    };
    std::vector<far_entry> m_far;

    std::size_t m_pending = 0;
    std::uint64_t m_wakeups = 0;
    std::uint64_t m_activations = 0;
    ps_t m_run_ahead_end = 0;
    ps_t m_pause_at = 0;
    ps_t m_resume_before = 0;  ///< a wake-up before this resumes a paused window
    bool m_running = false;
    sc_core::sc_event m_wake{"wake"};
    ps_t m_observe_at = NO_TICK;  ///< the next observation (NO_TICK: none)
    ps_t m_observe_every = 0;
    void (*m_observe_fn)(void*) = nullptr;
    void* m_observe_obj = nullptr;
};

}  // namespace fabricsim

namespace fabricsim {

inline model_timer::model_timer(void* obj, void (*fn)(void*))
    : m_obj(obj), m_fn(fn), m_sched(&scheduler::current()) {}

inline void model_timer::arm_at(ps_t at) {
    sc_assert(at >= now_ps());
    scheduler& s = *m_sched;
    if (m_pending) {
        if (m_at <= at) return;
        s.remove(*this);
    }
    m_at = at;
    m_pending = true;
    s.insert(*this);
}

inline void model_timer::cancel() {
    if (m_pending) m_sched->remove(*this);
}

}  // namespace fabricsim
