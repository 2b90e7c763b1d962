// The model scheduler: timers fire at their exact time in time order, re-arm/cancel follow
// sc_event::notify semantics, far timers (beyond the wheel) are exact, and running ahead of the
// kernel changes nothing but the number of kernel wake-ups.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <memory>
#include <vector>

#include <systemc>

#include "fabricsim/core/kernel.h"
#include "fabricsim/core/scheduler.h"

using namespace fabricsim;

namespace {

struct fire {
    ps_t at;
    int id;
};
std::vector<fire> g_fired;

/// Re-arms itself at pseudo-random delays drawn from its own LCG: its fire times depend only
/// on its id, so the expected sequence is known without a simulator.
struct client {
    int id;
    std::uint64_t state;
    ps_t max_delay;
    int left;
    model_timer timer = model_timer::bind<client, &client::on_timer>(this);
    client(int i, ps_t max_d, int n)
        : id(i), state(0x9E3779B97F4A7C15ull * std::uint64_t(i + 1)), max_delay(max_d), left(n) {}
    ps_t next_delay() {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return (state >> 33) % max_delay;  // 0 is allowed: a zero-delay re-arm
    }
    void on_timer() {
        CHECK(now_ps() == timer.expiry());
        g_fired.push_back({now_ps(), id});
        if (--left > 0) timer.arm_at(now_ps() + next_delay());
    }
};

std::vector<ps_t> expected_times(int id, ps_t max_delay, int n) {
    client c(id, max_delay, n);
    std::vector<ps_t> t;
    ps_t at = c.next_delay();
    for (int k = 0; k < n; ++k) {
        t.push_back(at);
        at += c.next_delay();
    }
    return t;
}

/// A SystemC process that looks at the timers' progress at fixed times.
struct observer : sc_core::sc_module {
    sc_core::sc_event tick;
    ps_t period;
    int looks = 0;
    explicit observer(const sc_core::sc_module_name& n, ps_t p) : sc_core::sc_module(n), period(p) {
        SC_HAS_PROCESS(observer);
        SC_METHOD(look);
        sensitive << tick;
    }
    void look() {
        const ps_t now = sc_core::sc_time_stamp().value();
        CHECK(now_ps() == now);
        if (!g_fired.empty()) CHECK(g_fired.back().at <= now);  // no timer ran past this process
        ++looks;
        tick.notify(to_sc_time(period));
    }
};

void run_random_workload(bool run_ahead) {
    const int clients = 50, per_client = 400;
    std::vector<std::unique_ptr<client>> cs;
    // Delays up to 40 us: many land beyond the wheel's span and take the far path.
    for (int i = 0; i < clients; ++i)
        cs.push_back(std::make_unique<client>(i, i % 5 == 0 ? 40'000'000 : 3'000'000, per_client));
    observer obs("obs", 7'777'777);
    for (auto& c : cs) c->timer.arm_at(c->next_delay());
    if (run_ahead) scheduler::instance().run_ahead_until(1'000'000'000'000);
    sc_core::sc_start(sc_core::sc_time(20, sc_core::SC_MS));  // the slowest client ends by ~8 ms
    REQUIRE(g_fired.size() == std::size_t(clients * per_client));
    for (std::size_t k = 1; k < g_fired.size(); ++k) REQUIRE(g_fired[k - 1].at <= g_fired[k].at);
    std::map<int, std::vector<ps_t>> per;
    for (const fire& f : g_fired) per[f.id].push_back(f.at);
    for (int i = 0; i < clients; ++i)
        CHECK(per[i] == expected_times(i, i % 5 == 0 ? 40'000'000 : 3'000'000, per_client));
    CHECK(obs.looks > 10);
    CHECK(counters().activations == std::uint64_t(clients * per_client));
    if (run_ahead)
        CHECK(scheduler::instance().kernel_wakeups() <= std::uint64_t(obs.looks) + 2);
    else
        CHECK(scheduler::instance().kernel_wakeups() > std::uint64_t(clients * per_client) / 2);
}

/// The random workload with run-ahead, but simulated in uneven slices with a pause at each
/// slice end (how the platform runs): same firings, and with no other process in the kernel
/// the whole run is still one wake-up.
void run_sliced_workload() {
    const int clients = 50, per_client = 400;
    std::vector<std::unique_ptr<client>> cs;
    for (int i = 0; i < clients; ++i)
        cs.push_back(std::make_unique<client>(i, i % 5 == 0 ? 40'000'000 : 3'000'000, per_client));
    for (auto& c : cs) c->timer.arm_at(c->next_delay());
    scheduler& s = scheduler::instance();
    s.run_ahead_until(20'000'000'000);
    int slices = 0;
    for (ps_t t = 0, step = 1'234'567; t < 20'000'000'000; ++slices, step = step * 3 / 2 + 777) {
        const ps_t next = std::min<ps_t>(20'000'000'000, t + step);
        s.pause_at(next);
        sc_core::sc_start(to_sc_time(next - t));
        t = next;
        if (!g_fired.empty()) REQUIRE(g_fired.back().at < next);  // nothing ran past the pause
        REQUIRE(s.audit().empty());  // the invariant check between slices (platform.h)
    }
    CHECK(slices > 10);
    REQUIRE(g_fired.size() == std::size_t(clients * per_client));
    std::map<int, std::vector<ps_t>> per;
    for (const fire& f : g_fired) per[f.id].push_back(f.at);
    for (int i = 0; i < clients; ++i)
        CHECK(per[i] == expected_times(i, i % 5 == 0 ? 40'000'000 : 3'000'000, per_client));
    CHECK(s.kernel_wakeups() == 1);
}

/// The scheduler's firing order as a plain model (what a linear search of the cursor's slot
/// gives; a crowded slot is sorted instead): the earliest expiry fires first, and equal expiries
/// the most recently linked first. An arm within the wheel's span (4096 ticks of 4096 ps from
/// the cursor's tick) links at once; a later one links when the cursor's move brings it into
/// the span, in expiry order (the test gives such timers distinct expiries, so the heap's order
/// among equal ones does not matter); the cursor moves, to the earliest tick pending, only when
/// its own tick has nothing left.
struct order_model {
    static constexpr ps_t TICK = 4096;
    static constexpr std::uint64_t SPAN = 4096;
    struct entry {
        bool pending = false;
        ps_t at = 0;
        std::uint64_t link = 0;  // 0 while beyond the span
        bool pulled = false;     // linked by a pull from beyond the span
    };
    std::vector<entry> timers;  // by id
    std::uint64_t cursor = 0, links = 0;
    std::size_t most_in_slot = 0;  // the most timers the cursor's tick held at a pop
    int ties = 0, far_ties = 0;    // pops that chose among equal expiries (one from the heap)

    explicit order_model(std::size_t n) : timers(n) {}
    std::uint64_t tick(const entry& e) const { return std::uint64_t(e.at / TICK); }
    bool in_wheel(int id) const {
        const entry& e = timers[std::size_t(id)];
        return e.pending && e.link != 0;
    }
    void arm(int id, ps_t at) {
        entry& e = timers[std::size_t(id)];
        if (e.pending && e.at <= at) return;
        e = {true, at, 0, false};
        if (tick(e) < cursor + SPAN) e.link = ++links;
    }
    void cancel(int id) { timers[std::size_t(id)].pending = false; }
    int pop() {
        const auto in_cursor = [this](const entry& e) {
            return e.pending && e.link != 0 && tick(e) == cursor;
        };
        if (std::none_of(timers.begin(), timers.end(), in_cursor)) {
            cursor = ~std::uint64_t(0);
            for (const entry& e : timers)
                if (e.pending) cursor = std::min(cursor, tick(e));
            std::vector<entry*> pulled;
            for (entry& e : timers)
                if (e.pending && e.link == 0 && tick(e) < cursor + SPAN) pulled.push_back(&e);
            std::sort(pulled.begin(), pulled.end(),
                      [](const entry* x, const entry* y) { return x->at < y->at; });
            for (entry* e : pulled) {
                e->link = ++links;
                e->pulled = true;
            }
        }
        entry* best = nullptr;
        std::size_t in_slot = 0;
        bool tie = false, far_tie = false;
        for (entry& e : timers) {
            if (!in_cursor(e)) continue;
            ++in_slot;
            if (!best || e.at < best->at) {
                best = &e;
                tie = far_tie = false;
            } else if (e.at == best->at) {
                tie = true;
                far_tie = far_tie || e.pulled || best->pulled;
                if (e.link > best->link) best = &e;
            }
        }
        most_in_slot = std::max(most_in_slot, in_slot);
        ties += tie;
        far_ties += far_tie;
        best->pending = false;
        return int(best - timers.data());
    }
};

struct tie_rig;
struct tie_timer {
    tie_rig* rig;
    int id;
    model_timer timer = model_timer::bind<tie_timer, &tie_timer::on_timer>(this);
    tie_timer(tie_rig* r, int i) : rig(r), id(i) {}
    void on_timer();
};

/// Timers whose callbacks arm (many into the slot being drained, many at equal times, some at
/// another pending timer's exact expiry), re-arm earlier, cancel and arm beyond the wheel,
/// driven by an LCG, for a while, most of them gathering on every 64th tick; every call goes to the
/// scheduler and to order_model alike. The first quarter of the timers are only ever armed beyond
/// the wheel (a near arm would soon pull them back), so near ones can tie with them once they are
/// pulled; after that only they are left, and the cursor jumps onto ticks that several of them
/// share.
struct tie_rig {
    static constexpr ps_t BEAT = 64 * order_model::TICK;
    order_model model;
    std::vector<std::unique_ptr<tie_timer>> timers;
    std::vector<int> fired, expected;
    std::uint64_t state = 0x2545F4914F6CDD1Dull;
    ps_t far_seq = 0;
    bool exact = true;

    ps_t active;

    tie_rig(int n, ps_t active_for) : model(std::size_t(n)), active(active_for) {
        for (int i = 0; i < n; ++i) timers.push_back(std::make_unique<tie_timer>(this, i));
    }
    std::uint64_t draw(std::uint64_t n) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return (state >> 33) % n;
    }
    int any() { return int(draw(timers.size())); }
    int far_only() const { return int(timers.size() / 4); }
    int any_near() { return far_only() + int(draw(timers.size() - std::size_t(far_only()))); }
    void arm(int id, ps_t at) {
        timers[std::size_t(id)]->timer.arm_at(at);
        model.arm(id, at);
    }
    void cancel(int id) {
        timers[std::size_t(id)]->timer.cancel();
        model.cancel(id);
    }
    /// Just beyond the wheel's span, each at its own time (3 ps apart: many share a tick).
    void arm_far(int id, ps_t now) { arm(id, now + 16'790'000 + 3 * ++far_seq); }
    /// The expiry of a timer (from the heap if one is due within 3 ticks) to tie with.
    ps_t tie_target(ps_t now) {
        for (int k = 0; k < far_only(); ++k) {
            const model_timer& t = timers[std::size_t(k)]->timer;
            if (model.in_wheel(k) && t.expiry() < now + 3 * order_model::TICK) return t.expiry();
        }
        const int k = any();
        if (model.in_wheel(k)) return timers[std::size_t(k)]->timer.expiry();
        return now + ps_t(draw(4096));
    }
    void arm_near(int id, ps_t now) {
        const ps_t tick_end = now / order_model::TICK * order_model::TICK + order_model::TICK - 1;
        const ps_t beat = (now / BEAT + 1) * BEAT;  // most timers gather on every 64th tick
        const std::uint64_t kind = draw(8);
        if (kind == 0) arm(id, now);
        if (kind == 1) arm(id, now + ps_t(draw(64)));
        if (kind == 2) arm(id, std::max(now, tick_end - ps_t(draw(8))));
        if (kind == 3) arm(id, now + ps_t(draw(3)) * order_model::TICK + ps_t(draw(16)) * 7);
        if (kind == 4) arm(id, tie_target(now));
        if (kind == 5) arm(id, beat + ps_t(draw(64)));
        if (kind == 6) arm(id, beat + ps_t(draw(4096)));
        if (kind == 7) arm(id, beat + ps_t(draw(32)) * 128);
    }
    /// Timer `self` fired at `now`: it re-arms, then makes up to two more calls.
    void act(int self, ps_t now) {
        if (now >= active) return;
        if (self < far_only() || draw(32) == 0)
            arm_far(self, now);
        else
            arm_near(self, now);
        for (int n = int(draw(3)); n > 0; --n) {
            const std::uint64_t r = draw(20);
            if (r < 5)
                cancel(any_near());
            else if (r < 6)
                arm_far(any(), now);
            else
                arm_near(any_near(), now);
        }
    }
    void seed() {
        for (std::size_t i = 0; i < timers.size(); ++i)
            if (int(i) < far_only())
                arm_far(int(i), 0);
            else
                arm(int(i), ps_t(draw(3 * 4096)));
    }
};

void tie_timer::on_timer() {
    if (now_ps() != timer.expiry()) rig->exact = false;
    rig->fired.push_back(id);
    rig->expected.push_back(rig->model.pop());
    rig->act(id, now_ps());
}

/// Runs the rig to its end; the scheduler's firing order must equal the model's.
void run_tie_rig(int timers, ps_t active, bool run_ahead, std::size_t crowd, int ties,
                 int far_ties) {
    tie_rig rig(timers, active);
    rig.seed();
    if (run_ahead) scheduler::instance().run_ahead_until(1'000'000'000'000);
    sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_SEC));
    CHECK(rig.exact);
    CHECK(scheduler::instance().pending_timers() == 0);
    CHECK(std::none_of(rig.model.timers.begin(), rig.model.timers.end(),
                       [](const order_model::entry& e) { return e.pending; }));
    REQUIRE(rig.fired.size() == rig.expected.size());
    std::size_t same = 0;
    while (same < rig.fired.size() && rig.fired[same] == rig.expected[same]) ++same;
    INFO("first difference at firing " << same << " of " << rig.fired.size());
    CHECK(same == rig.fired.size());
    // The rig made what it is for: crowded slots, ties, ties with timers from the heap.
    INFO("most timers in the cursor's tick " << rig.model.most_in_slot << ", ties "
                                             << rig.model.ties << ", with heap timers "
                                             << rig.model.far_ties);
    CHECK(rig.model.most_in_slot >= crowd);
    CHECK(rig.model.ties >= ties);
    CHECK(rig.model.far_ties >= far_ties);
}

struct recorder {
    std::vector<ps_t> at;
    model_timer timer = model_timer::bind<recorder, &recorder::on_timer>(this);
    void on_timer() { at.push_back(now_ps()); }
};

}  // namespace

TEST_CASE("scheduler: timers fire exactly, in time order, with the kernel waking per expiry",
          "[core][scheduler]") {
    run_random_workload(false);
}

TEST_CASE("scheduler: running ahead of the kernel fires the same timers at the same times",
          "[core][scheduler]") {
    run_random_workload(true);
}

TEST_CASE("scheduler: pausing at slice ends changes neither the firings nor the wake-up count",
          "[core][scheduler]") {
    run_sliced_workload();
}

TEST_CASE("scheduler: an earlier arm wins, a later one is ignored, cancel forgets",
          "[core][scheduler]") {
    recorder a, b, c, far;
    a.timer.arm_at(5'000);
    a.timer.arm_at(3'000);  // earlier wins
    a.timer.arm_at(9'000);  // later: ignored while pending
    b.timer.arm_at(4'000);
    b.timer.cancel();
    c.timer.arm_at(100'000'000);  // 100 us: beyond the wheel
    c.timer.arm_at(2'000);        // re-armed earlier out of the far heap
    far.timer.arm_at(123'456'789'012);
    far.timer.cancel();
    far.timer.arm_at(123'456'789'013);
    sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_SEC));
    CHECK(a.at == std::vector<ps_t>{3'000});
    CHECK(b.at.empty());
    CHECK(c.at == std::vector<ps_t>{2'000});
    CHECK(far.at == std::vector<ps_t>{123'456'789'013});
    CHECK(scheduler::instance().pending_timers() == 0);
}

TEST_CASE("scheduler: run-ahead stops at the end of its window and at sc_start boundaries",
          "[core][scheduler]") {
    recorder r;
    struct stepper {
        recorder* rec;
        model_timer timer = model_timer::bind<stepper, &stepper::on_timer>(this);
        void on_timer() {
            rec->at.push_back(now_ps());
            timer.arm_at(now_ps() + 1'000'000);  // every 1 us
        }
    } s{&r};
    s.timer.arm_at(0);
    scheduler::instance().run_ahead_until(10'500'000);
    sc_core::sc_start(sc_core::sc_time(5'500'000, sc_core::SC_PS));
    // The window runs past this sc_start's end (the scheduler cannot see it) but not past 10.5 us.
    CHECK(r.at.size() <= 11u);
    sc_core::sc_start(sc_core::sc_time(20'000'000, sc_core::SC_PS));
    REQUIRE(r.at.size() == 26u);  // 0..25 us
    for (std::size_t k = 0; k < r.at.size(); ++k) CHECK(r.at[k] == k * 1'000'000);
}

TEST_CASE("scheduler: audit finds a timer armed in the past, which would fire late",
          "[core][scheduler][invariants]") {
    recorder near, far, past;
    near.timer.arm_at(5'000);
    far.timer.arm_at(90'000'000);  // beyond the wheel: waits in the far heap
    sc_core::sc_start(sc_core::sc_time(3'000'000, sc_core::SC_PS));
    scheduler& s = scheduler::instance();
    CHECK(s.audit().empty());
    CHECK(near.at == std::vector<ps_t>{5'000});
    near.timer.arm_at(3'000'000);  // due now: allowed
    CHECK(s.audit().empty());
#ifdef NDEBUG
    // With assertions (Debug) arm_at() refuses this at once; without, the wheel would keep it a
    // whole turn (16.8 us) too long, and the audit between slices says so.
    past.timer.arm_at(1'000'000);
    const std::string why = s.audit();
    CHECK(why.find("a timer due at 1000000 ps") == 0);
#endif
}

TEST_CASE("scheduler: a crowded slot fires by expiry, equal expiries the latest linked first",
          "[core][scheduler]") {
    run_tie_rig(400, 20'000'000, false, 100, 10'000, 100);
}

TEST_CASE("scheduler: a few timers per slot fire by expiry, ties to the latest linked",
          "[core][scheduler]") {
    run_tie_rig(12, 400'000'000, false, 4, 1'000, 20);
}

TEST_CASE("scheduler: crowded slots fire in the same order when running ahead",
          "[core][scheduler]") {
    run_tie_rig(400, 20'000'000, true, 100, 10'000, 100);
}

namespace {

/// A timer every 2.5 us from 0 that, at multiples of 5 us, also arms `echo` at the same time
/// (a zero-delay arm from inside a firing), and an observer every 5 us that records how many
/// firings it saw. Each observation must see every timer due before its time and none due at
/// it or later (the echo armed at its time neither).
struct observed_rig {
    int fired = 0;
    std::vector<std::pair<ps_t, int>> seen;
    model_timer step = model_timer::bind<observed_rig, &observed_rig::on_step>(this);
    model_timer echo = model_timer::bind<observed_rig, &observed_rig::on_echo>(this);
    void on_step() {
        ++fired;
        if (now_ps() % 5'000'000 == 0) echo.arm_at(now_ps());
        step.arm_at(now_ps() + 2'500'000);
    }
    void on_echo() { ++fired; }
    static void observe(void* p) {
        auto* r = static_cast<observed_rig*>(p);
        r->seen.push_back({now_ps(), r->fired});
    }
};

void run_observed(bool run_ahead, bool paused) {
    observed_rig r;
    r.step.arm_at(0);
    scheduler& s = scheduler::instance();
    s.observe_every(5'000'000, 5'000'000, &observed_rig::observe, &r);
    if (run_ahead) s.run_ahead_until(21'000'000);
    for (ps_t t = 0; t < 21'000'000;) {
        const ps_t next = paused ? std::min<ps_t>(21'000'000, t + 1'700'000) : 21'000'000;
        s.pause_at(next);
        sc_core::sc_start(to_sc_time(next - t));
        t = next;
    }
    // At 5 us: the steps at 0 and 2.5 and the echo at 0 (3 firings); then 3 more per 5 us.
    CHECK(r.seen == std::vector<std::pair<ps_t, int>>{
                        {5'000'000, 3}, {10'000'000, 6}, {15'000'000, 9}, {20'000'000, 12}});
    CHECK(counters().activations == 14u);  // the firings to 21 us; observations not counted
    // Run ahead, the observations cut no window: one kernel wake-up for the whole run.
    if (run_ahead) CHECK(s.kernel_wakeups() == 1u);
}

}  // namespace

TEST_CASE("scheduler: observations follow every timer due by their time, lock-step",
          "[core][scheduler]") {
    run_observed(false, false);
}

TEST_CASE("scheduler: observations follow every timer due by their time, run ahead",
          "[core][scheduler]") {
    run_observed(true, false);
}

TEST_CASE("scheduler: observations follow every timer due by their time, paused slices",
          "[core][scheduler]") {
    run_observed(true, true);
}

TEST_CASE("scheduler: observations go on with no timer pending", "[core][scheduler]") {
    std::vector<ps_t> seen;
    scheduler::instance().observe_every(
        3'000'000, 4'000'000,
        [](void* p) { static_cast<std::vector<ps_t>*>(p)->push_back(now_ps()); }, &seen);
    sc_core::sc_start(sc_core::sc_time(16'000'000, sc_core::SC_PS));
    CHECK(seen == std::vector<ps_t>{3'000'000, 7'000'000, 11'000'000, 15'000'000});
    CHECK(counters().activations == 0u);
}
