#include "fabricsim/nic/algo/interrupt_coalescer.h"

#include <stdexcept>
#include <utility>

namespace fabricsim::nic {

namespace {

/// Both the ConnectX CQ moderation period and count are 16-bit fields (mlx4/mlx5 cq_period,
/// cq_max_count), the period in microseconds.
constexpr ps_t MAX_USECS = 65535 * PS_PER_US;
constexpr std::uint32_t MAX_FRAMES = 65535;

std::uint64_t div_round_up(std::uint64_t a, std::uint64_t b) {
    return (a + b - 1) / b;
}

/// IS_SIGNIFICANT_DIFF: more than 10 % away from a non-zero reference (integer percent).
bool significant(std::uint64_t val, std::uint64_t ref) {
    if (ref == 0) return false;
    const std::uint64_t diff = val > ref ? val - ref : ref - val;
    return 100 * diff / ref > 10;
}

unsigned bucket_of(std::uint32_t frames) {
    unsigned b = 0;
    while (frames > 1 && b + 1 < interrupt_coalescer::HIST_BUCKETS) {
        frames >>= 1;
        ++b;
    }
    return b;
}

}  // namespace

std::optional<coalesce_params::error> coalesce_params::validate() const {
    auto bad = [](std::string field, const char* reason) {
        return std::optional<error>(error{std::move(field), reason});
    };
    if (rx_usecs > MAX_USECS) return bad("rx_usecs", "must be <= 65535 us");
    if (rx_usecs % PS_PER_US != 0) return bad("rx_usecs", "must be a whole number of us");
    if (rx_frames > MAX_FRAMES) return bad("rx_frames", "must be <= 65535");
    for (unsigned i = 0; i < DIM_PROFILES; ++i) {
        const std::string f = "profiles[" + std::to_string(i) + "]";
        if (profiles[i].usecs > MAX_USECS || profiles[i].usecs % PS_PER_US != 0)
            return bad(f + ".usecs", "must be a whole number of us <= 65535 us");
        if (profiles[i].frames > MAX_FRAMES) return bad(f + ".frames", "must be <= 65535");
    }
    if (start_profile >= DIM_PROFILES) return bad("start_profile", "must be < 5");
    if (dim_events == 0) return bad("dim_events", "must be >= 1");
    return std::nullopt;
}

// ---- net_dim --------------------------------------------------------------------------------

net_dim::compare_result net_dim::compare(const rates& curr, const rates& prev) {
    // Throughput first, then packet rate, then fewer interrupts (lib/dim/net_dim.c).
    if (prev.bpms == 0) return curr.bpms ? compare_result::BETTER : compare_result::SAME;
    if (significant(curr.bpms, prev.bpms))
        return curr.bpms > prev.bpms ? compare_result::BETTER : compare_result::WORSE;
    if (prev.ppms == 0) return curr.ppms ? compare_result::BETTER : compare_result::SAME;
    if (significant(curr.ppms, prev.ppms))
        return curr.ppms > prev.ppms ? compare_result::BETTER : compare_result::WORSE;
    if (prev.epms == 0) return compare_result::SAME;
    if (significant(curr.epms, prev.epms))
        return curr.epms < prev.epms ? compare_result::BETTER : compare_result::WORSE;
    return compare_result::SAME;
}

net_dim::step_result net_dim::step() {
    if (m_tired == 2 * DIM_PROFILES) return step_result::TOO_TIRED;
    switch (m_tune) {
        case tune_state::PARKING_ON_TOP:
        case tune_state::PARKING_TIRED:
            break;
        case tune_state::GOING_RIGHT:
            if (m_ix == DIM_PROFILES - 1) return step_result::ON_EDGE;
            ++m_ix;
            ++m_steps_right;
            break;
        case tune_state::GOING_LEFT:
            if (m_ix == 0) return step_result::ON_EDGE;
            --m_ix;
            ++m_steps_left;
            break;
    }
    ++m_tired;
    return step_result::STEPPED;
}

void net_dim::exit_parking() {
    m_tune = m_ix ? tune_state::GOING_LEFT : tune_state::GOING_RIGHT;
    step();
}

bool net_dim::on_top() const {
    switch (m_tune) {
        case tune_state::PARKING_ON_TOP:
        case tune_state::PARKING_TIRED:
            return true;
        case tune_state::GOING_RIGHT:
            return m_steps_left > 1 && m_steps_right == 1;
        case tune_state::GOING_LEFT:
            return m_steps_right > 1 && m_steps_left == 1;
    }
    return false;
}

void net_dim::turn() {
    if (m_tune == tune_state::GOING_RIGHT) {
        m_tune = tune_state::GOING_LEFT;
        m_steps_left = 0;
    } else if (m_tune == tune_state::GOING_LEFT) {
        m_tune = tune_state::GOING_RIGHT;
        m_steps_right = 0;
    }
}

void net_dim::park_on_top() {
    m_steps_right = 0;
    m_steps_left = 0;
    m_tired = 0;
    m_tune = tune_state::PARKING_ON_TOP;
}

void net_dim::park_tired() {
    m_steps_right = 0;
    m_steps_left = 0;
    m_tune = tune_state::PARKING_TIRED;
}

bool net_dim::decide(const rates& curr) {
    const tune_state prev_state = m_tune;
    const unsigned prev_ix = m_ix;
    ++m_decisions;
    switch (m_tune) {
        case tune_state::PARKING_ON_TOP:
            if (compare(curr, m_prev) != compare_result::SAME) exit_parking();
            break;
        case tune_state::PARKING_TIRED:
            if (--m_tired == 0) exit_parking();
            break;
        case tune_state::GOING_RIGHT:
        case tune_state::GOING_LEFT:
            if (compare(curr, m_prev) != compare_result::BETTER) turn();
            if (on_top()) {
                park_on_top();
                break;
            }
            switch (step()) {
                case step_result::ON_EDGE:
                    park_on_top();
                    break;
                case step_result::TOO_TIRED:
                    park_tired();
                    break;
                case step_result::STEPPED:
                    break;
            }
            break;
    }
    // While parked on top the reference stays the rates that led there.
    if (prev_state != tune_state::PARKING_ON_TOP || m_tune != tune_state::PARKING_ON_TOP)
        m_prev = curr;
    return m_ix != prev_ix;
}

bool net_dim::on_sample(ps_t now, std::uint64_t events, std::uint64_t packets,
                        std::uint64_t bytes) {
    if (m_measuring) {
        if (events - m_start.events < m_nevents) return false;
        const std::uint64_t delta_us = (now - m_start.time) / PS_PER_US;
        if (delta_us == 0) return false;  // no rates yet: keep measuring from the same start
        rates curr;
        curr.ppms = div_round_up((packets - m_start.packets) * 1000, delta_us);
        curr.bpms = div_round_up((bytes - m_start.bytes) * 1000, delta_us);
        // Linux divides DIM_NEVENTS, not the events actually counted, by the interval.
        curr.epms = div_round_up(std::uint64_t(m_nevents) * 1000, delta_us);
        if (decide(curr)) {
            // The new profile applies at once; the next sample starts a new measurement.
            m_measuring = false;
            return true;
        }
    }
    m_start = sample{now, events, packets, bytes};
    m_measuring = true;
    return false;
}

// ---- interrupt_coalescer --------------------------------------------------------------------

interrupt_coalescer::interrupt_coalescer(const coalesce_params& p) : m_p(p), m_dim(p.dim_events) {
    if (auto e = p.validate())
        throw std::invalid_argument("coalesce_params." + e->field + ": " + e->reason);
    if (p.adaptive) {
        m_profile = p.start_profile;
        m_moder = p.profiles[m_profile];
    } else {
        m_moder = dim_profile{p.rx_usecs, p.rx_frames};
    }
}

void interrupt_coalescer::set_params(const coalesce_params& p) {
    if (auto e = p.validate())
        throw std::invalid_argument("coalesce_params." + e->field + ": " + e->reason);
    const bool was_adaptive = m_p.adaptive;
    m_p = p;
    if (!p.adaptive) {
        m_moder = dim_profile{p.rx_usecs, p.rx_frames};
        return;
    }
    if (!was_adaptive) m_profile = p.start_profile;
    m_moder = p.profiles[m_profile];
}

interrupt_coalescer::decision interrupt_coalescer::fire(bool by_frames, bool by_timer) {
    m_stats.interrupts++;
    if (by_frames) {
        m_stats.by_frames++;
    } else if (by_timer) {
        m_stats.by_timer++;
    } else {
        m_stats.immediate++;
    }
    m_stats.frames_signalled += m_pending;
    if (m_pending > m_stats.max_frames) m_stats.max_frames = m_pending;
    m_stats.frames_hist[bucket_of(m_pending)]++;
    m_pending = 0;
    m_deadline = NEVER;
    m_masked = true;
    return decision{true, NEVER};
}

interrupt_coalescer::decision interrupt_coalescer::check_count() {
    if (m_moder.usecs == 0 && m_moder.frames == 0) return fire(false, false);
    if (m_moder.frames != 0 && m_pending >= m_moder.frames) return fire(true, false);
    return current();
}

interrupt_coalescer::decision interrupt_coalescer::on_completion(ps_t now, std::uint32_t bytes) {
    m_stats.completions++;
    m_stats.bytes += bytes;
    if (m_masked) {
        m_stats.completions_masked++;
        return current();
    }
    if (++m_pending == 1 && m_moder.usecs != 0) m_deadline = now + m_moder.usecs;
    return check_count();
}

bool interrupt_coalescer::on_timer(ps_t now) {
    if (m_masked || m_pending == 0 || m_deadline == NEVER || now < m_deadline) return false;
    return fire(false, true).fire;
}

void interrupt_coalescer::mask() {
    m_masked = true;
    m_pending = 0;
    m_deadline = NEVER;
}

interrupt_coalescer::decision interrupt_coalescer::unmask(ps_t now, std::uint32_t unprocessed) {
    m_masked = false;
    m_pending = 0;
    m_deadline = NEVER;
    if (m_p.adaptive &&
        m_dim.on_sample(now, m_stats.interrupts, m_stats.completions, m_stats.bytes) &&
        m_dim.profile() != m_profile) {
        m_profile = m_dim.profile();
        apply(m_p.profiles[m_profile]);
        m_stats.profile_changes++;
    }
    if (unprocessed == 0) return current();
    m_pending = unprocessed;
    if (m_moder.usecs != 0) m_deadline = now + m_moder.usecs;
    return check_count();
}

std::optional<rx_cpu_params::error> rx_cpu_params::validate() const {
    auto bad = [](const char* field, const char* reason) {
        return std::optional<error>(error{field, reason});
    };
    if (cores == 0 || cores > 1024) return bad("cores", "must be in 1 .. 1024");
    if (budget == 0) return bad("budget", "must be >= 1");
    if (ring == 0 || ring > (1u << 20)) return bad("ring", "must be in 1 .. 1048576");
    constexpr ps_t MAX_COST = PS_PER_S;
    if (irq_cost > MAX_COST) return bad("irq_cost", "must be <= 1 s");
    if (poll_cost > MAX_COST) return bad("poll_cost", "must be <= 1 s");
    if (packet_cost > MAX_COST) return bad("packet_cost", "must be <= 1 s");
    if (byte_cost > PS_PER_US) return bad("byte_cost", "must be <= 1 us per byte");
    if (app_byte_cost > PS_PER_US) return bad("app_byte_cost", "must be <= 1 us per byte");
    return std::nullopt;
}

}  // namespace fabricsim::nic
