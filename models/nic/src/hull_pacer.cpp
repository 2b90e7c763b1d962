#include "fabricsim/nic/algo/hull_pacer.h"

#include <cmath>
#include <stdexcept>

namespace fabricsim::nic {

namespace {
__extension__ typedef unsigned __int128 u128;
constexpr std::uint64_t MAX_BYTES = std::uint64_t(1) << 40;

rate_limiter_bank_config bank_config(const hull_pacer_params& p) {
    rate_limiter_bank_config c;
    c.table_entries = p.table_entries;
    c.idle_timeout = p.idle_timeout;
    c.table_full = p.table_full;
    c.limiters_full = bank_policy::SHARE;  // every associated flow on the one bucket
    c.reset_on_bind = false;               // the bucket's rate is the estimator's, not a flow's
    c.limiter.mode = limiter_mode::TOKEN_BUCKET;
    c.limiter.rate_granularity_bps = p.rate_granularity_bps;
    c.limiter.depth_bytes = p.depth_bytes;
    c.limiter.token_period = p.token_period;
    c.limiter.fifo_bytes = p.fifo_bytes;
    return c;
}

const hull_pacer_params& checked(const hull_pacer_params& p) {
    if (auto e = p.validate())
        throw std::invalid_argument("hull_pacer_params." + e->field + ": " + e->reason);
    return p;
}
}  // namespace

hull_pacer_params hull_pacer_params::testbed() {
    hull_pacer_params p;
    p.line_rate_bps = 1'000'000'000;
    p.update_period = 64 * PS_PER_US;
    p.eta = 0.125;
    p.beta = 16;
    p.p_a = 0.125;
    p.idle_timeout = 10 * PS_PER_MS;
    p.table_entries = 64;
    p.depth_bytes = 3 * 1024;
    p.fifo_bytes = 128 * 1024;
    p.token_period = 16 * PS_PER_US;
    p.rate_granularity_bps = 500'000;
    return p;
}

hull_pacer_params hull_pacer_params::ns2() {
    hull_pacer_params p = testbed();
    p.line_rate_bps = 10'000'000'000;
    p.update_period = 7'200 * PS_PER_NS;
    p.beta = 375;
    p.idle_timeout = 1 * PS_PER_MS;
    p.token_period = 1'600 * PS_PER_NS;
    p.rate_granularity_bps = 5'000'000;
    return p;
}

std::optional<hull_pacer_params::error> hull_pacer_params::validate() const {
    auto bad = [](const char* field, const char* reason) {
        return std::optional<error>(error{field, reason});
    };
    if (line_rate_bps == 0) return bad("line_rate_bps", "must be > 0");
    if (update_period == 0) return bad("update_period", "must be > 0");
    if (!(eta > 0.0 && eta <= 1.0)) return bad("eta", "must be in (0, 1]");
    if (!(beta >= 0.0 && std::isfinite(beta))) return bad("beta", "must be finite and >= 0");
    if (!(p_a >= 0.0 && p_a <= 1.0)) return bad("p_a", "must be in [0, 1]");
    if (table_full != bank_policy::NONE && table_full != bank_policy::LRU)
        return bad("table_full", "must be none or lru");
    if (depth_bytes == 0 || depth_bytes > MAX_BYTES)
        return bad("depth_bytes", "must be in 1 .. 2^40");
    if (fifo_bytes == 0 || fifo_bytes > MAX_BYTES) return bad("fifo_bytes", "must be in 1 .. 2^40");
    if (rate_granularity_bps == 0 || rate_granularity_bps > line_rate_bps)
        return bad("rate_granularity_bps", "must be in 1 .. line rate");
    if (initial_rate_bps != 0 &&
        (initial_rate_bps < rate_granularity_bps || initial_rate_bps > line_rate_bps))
        return bad("initial_rate_bps",
                   "must be 0 (line rate) or between granularity and line rate");
    // A token at the line rate must fit in the bucket, or the pacer could not reach it.
    if (u128(depth_bytes) * 8 * PS_PER_S < u128(line_rate_bps) * token_period)
        return bad("depth_bytes", "must hold a token at the line rate (line rate x token_period)");
    return std::nullopt;
}

hull_pacer::hull_pacer(const hull_pacer_params& p, std::uint64_t seed)
    : m_p(checked(p)),
      m_bank(1, bank_config(p)),
      m_gen(seed),
      m_always(p.p_a >= 1.0),
      m_min_rate(double(p.rate_granularity_bps) / 8),
      m_max_rate(double(p.line_rate_bps) / 8),
      m_next_update(p.update_period) {
    if (!m_always) m_threshold = static_cast<std::uint64_t>(std::ldexp(p.p_a, 64));
    m_rate = double(p.initial_rate_bps ? p.initial_rate_bps : p.line_rate_bps) / 8;
    m_bank.at(0).set_rate(p.initial_rate_bps ? p.initial_rate_bps : p.line_rate_bps, 0);
}

void hull_pacer::step(ps_t at) {
    // M_r / T_r in bytes/s: exact while M_r x 1e12 < 2^53 (a full interval at 10G is 9000 B).
    const double sample = double(m_bytes) * double(PS_PER_S) / double(m_p.update_period);
    const auto q = double(m_bank.at(0).backlog_bytes());
    double r = (1.0 - m_p.eta) * m_rate + m_p.eta * sample + m_p.beta * q;
    if (r < m_min_rate) r = m_min_rate;
    if (r > m_max_rate) r = m_max_rate;
    m_rate = r;
    m_bytes = 0;
    m_stats.updates++;
    m_bank.at(0).set_rate(static_cast<std::uint64_t>(std::llround(r * 8)), at);
    m_bank.expire(at);
}

void hull_pacer::advance(ps_t now) {
    while (m_next_update <= now) {
        const double before = m_rate;
        const bool idle = m_bytes == 0;
        step(m_next_update);
        m_next_update += m_p.update_period;
        // Later periods up to `now` see the same input (no bytes; the backlog only changes in
        // calls): once a step leaves R_tb unchanged, so do they all.
        if (idle && m_rate == before && m_next_update <= now) {
            const std::uint64_t n = (now - m_next_update) / m_p.update_period + 1;
            m_stats.updates += n;
            m_next_update += n * m_p.update_period;
            m_bank.expire(m_next_update - m_p.update_period);  // as the last skipped update
        }
    }
}

void hull_pacer::on_host_bytes(ps_t now, std::uint64_t bytes) {
    advance(now);
    m_bytes += bytes;
    m_stats.host_bytes += bytes;
}

bool hull_pacer::on_ece_ack(ps_t now, std::uint32_t flow, std::uint64_t draw) {
    advance(now);
    m_stats.ece_acks++;
    if (m_bank.find(flow, now) != rate_limiter_bank::NONE) return true;
    m_stats.draws++;
    if (!m_always && draw >= m_threshold) return false;
    if (m_bank.bind(flow, now) == rate_limiter_bank::NONE) return false;
    m_stats.associations++;
    return true;
}

bool hull_pacer::on_ece_ack(ps_t now, std::uint32_t flow) {
    advance(now);
    if (m_bank.find(flow, now) != rate_limiter_bank::NONE) {
        m_stats.ece_acks++;
        return true;
    }
    return on_ece_ack(now, flow, m_gen());
}

bool hull_pacer::associated(ps_t now, std::uint32_t flow) {
    advance(now);
    return m_bank.find(flow, now) != rate_limiter_bank::NONE;
}

pacer_verdict hull_pacer::on_frame(ps_t now, std::uint32_t flow, std::uint32_t bytes) {
    advance(now);
    if (m_bank.lookup(flow, now) == rate_limiter_bank::NONE) {
        m_stats.bypass_frames++;
        m_stats.bypass_bytes += bytes;
        return pacer_verdict::BYPASS;
    }
    rate_limiter& tb = m_bank.at(0);
    if (!tb.enqueue(bytes, now)) {
        m_stats.fifo_full_frames++;
        m_stats.fifo_full_bytes += bytes;
        return pacer_verdict::FIFO_FULL;
    }
    m_stats.paced_frames++;
    m_stats.paced_bytes += bytes;
    if (tb.backlog_bytes() > m_stats.backlog_peak_bytes)
        m_stats.backlog_peak_bytes = tb.backlog_bytes();
    return pacer_verdict::PACED;
}

ps_t hull_pacer::next_departure(ps_t now) {
    advance(now);
    const rate_limiter& tb = m_bank.at(0);
    return tb.fifo_empty() ? NEVER : tb.earliest_start(now);
}

std::uint32_t hull_pacer::depart(ps_t now) {
    advance(now);
    const rate_limiter::fifo_entry e = m_bank.at(0).send_head(now);
    const ps_t delay = now - e.enqueued;
    m_stats.departed_frames++;
    m_stats.delay_sum += delay;
    if (delay > m_stats.delay_max) m_stats.delay_max = delay;
    m_delays.add(double(delay));
    return e.bytes;
}

hull_pacer::counters hull_pacer::stats() const {
    counters c = m_stats;
    const auto& b = m_bank.stats();
    c.associated = m_bank.associated();
    c.peak_associated = b.peak_associated;
    c.evictions = b.evictions;
    c.timeouts = b.timeouts;
    c.rejected_table_full = b.rejected_table_full;
    return c;
}

}  // namespace fabricsim::nic
