#include "fabricsim/nic/algo/rate_limiter.h"

#include <limits>
#include <stdexcept>

namespace fabricsim::nic {

namespace {
__extension__ typedef unsigned __int128 u128;
__extension__ typedef __int128 i128;
constexpr ps_t PS_MAX = std::numeric_limits<ps_t>::max();
constexpr std::uint64_t UNITS_PER_BYTE = 8 * PS_PER_S;  ///< 1e-12 bit
constexpr std::uint64_t MAX_DEPTH = std::uint64_t(1) << 40;
}  // namespace

std::optional<rate_limiter_config::error> rate_limiter_config::validate() const {
    auto bad = [](const char* field, const char* reason) {
        return std::optional<error>(error{field, reason});
    };
    if (mode == limiter_mode::TOKEN_BUCKET && depth_bytes == 0)
        return bad("depth_bytes", "must be > 0 in token-bucket mode");
    if (depth_bytes > MAX_DEPTH) return bad("depth_bytes", "must be <= 2^40");
    if (fifo_bytes > MAX_DEPTH) return bad("fifo_bytes", "must be <= 2^40");
    return std::nullopt;
}

std::optional<rate_limiter_bank_config::error> rate_limiter_bank_config::validate() const {
    if (table_full == bank_policy::SHARE)
        return error{"table_full", "must be none or lru (a flow without an entry has no limiter)"};
    if (auto e = limiter.validate()) return error{"limiter." + e->field, e->reason};
    return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// rate_limiter

namespace {
bool is_default(const rate_limiter_config& c) {
    return c.mode == limiter_mode::NEXT_SEND_TIME && c.rate_granularity_bps == 0 &&
           c.depth_bytes == 0 && c.token_period == 0 && c.fifo_bytes == 0;
}
const rate_limiter_config DEFAULT_CONFIG{};
const rate_limiter::counters NO_COUNTS{};
}  // namespace

rate_limiter::rate_limiter(const rate_limiter_config& cfg) : m_mode(cfg.mode) {
    if (auto e = cfg.validate())
        throw std::invalid_argument("rate_limiter_config." + e->field + ": " + e->reason);
    if (is_default(cfg)) return;
    m_x = std::make_unique<options_state>();
    m_x->cfg = cfg;
    m_x->cap = static_cast<i128>(cfg.depth_bytes) * UNITS_PER_BYTE;
    m_x->tokens = m_x->cap;
}

rate_limiter::rate_limiter(const rate_limiter& o)
    : m_rate_bps(o.m_rate_bps),
      m_next_free(o.m_next_free),
      m_carry(o.m_carry),
      m_mode(o.m_mode),
      m_x(o.m_x ? std::make_unique<options_state>(*o.m_x) : nullptr) {}

rate_limiter& rate_limiter::operator=(const rate_limiter& o) {
    if (this != &o) *this = rate_limiter(o);
    return *this;
}

const rate_limiter_config& rate_limiter::config() const {
    return m_x ? m_x->cfg : DEFAULT_CONFIG;
}

const rate_limiter::counters& rate_limiter::stats() const {
    return m_x ? m_x->stats : NO_COUNTS;
}

std::uint64_t rate_limiter::quantise(std::uint64_t rate_bps) const {
    const std::uint64_t g = m_x ? m_x->cfg.rate_granularity_bps : 0;
    if (g == 0 || rate_bps == 0) return rate_bps;
    const std::uint64_t q = rate_bps / g * g;
    return q != 0 ? q : g;
}

void rate_limiter::set_rate(std::uint64_t rate_bps) {
    m_rate_bps = quantise(rate_bps);
    if (m_mode == limiter_mode::TOKEN_BUCKET)
        m_x->per_tick = static_cast<i128>(u128(m_rate_bps) * period());
}

void rate_limiter::set_rate(std::uint64_t rate_bps, ps_t now) {
    if (m_mode == limiter_mode::TOKEN_BUCKET) tb_advance(now);
    set_rate(rate_bps);
}

void rate_limiter::sent(std::uint32_t wire_bytes, ps_t start) {
    if (m_mode == limiter_mode::TOKEN_BUCKET) {
        tb_advance(start);
        if (m_rate_bps != 0) m_x->tokens -= static_cast<i128>(wire_bytes) * UNITS_PER_BYTE;
        return;
    }
    if (m_rate_bps == 0) {  // unlimited: no spacing
        m_next_free = start;
        return;
    }
    // The remainder of each division is carried to the next frame: the long-run rate is exact.
    const u128 num = u128(wire_bytes) * 8u * PS_PER_S + m_carry;
    m_next_free = start + static_cast<ps_t>(num / m_rate_bps);
    m_carry = static_cast<std::uint64_t>(num % m_rate_bps);
}

// Tokens only grow between calls, so capping once after n periods equals capping per period.
// The product n x per_tick is formed only below the room left (< 2^108): no overflow.
rate_limiter::i128 rate_limiter::tb_tokens_at(ps_t now) const {
    const options_state& x = *m_x;
    if (m_rate_bps == 0) return x.cap;  // unlimited: always full
    const std::uint64_t tick = now / period();
    if (tick <= x.tick || x.tokens >= x.cap) return x.tokens;
    const u128 n = tick - x.tick;
    const auto room = static_cast<u128>(x.cap - x.tokens);
    const auto per = static_cast<u128>(x.per_tick);
    if (n >= (room + per - 1) / per) return x.cap;
    return x.tokens + static_cast<i128>(n * per);
}

void rate_limiter::tb_advance(ps_t now) {
    m_x->tokens = tb_tokens_at(now);
    const std::uint64_t tick = now / period();
    if (tick > m_x->tick) m_x->tick = tick;
}

ps_t rate_limiter::tb_ready(std::uint32_t bytes, ps_t now) const {
    if (m_rate_bps == 0) return now;
    const options_state& x = *m_x;
    const i128 need = static_cast<i128>(bytes) * UNITS_PER_BYTE;
    const i128 want = need < x.cap ? need : x.cap;  // above the depth: wait for a full bucket
    const i128 have = tb_tokens_at(now);
    if (have >= want) return now;
    // Tokens arrive at period boundaries after the one `have` includes; the k-th brings enough.
    const auto missing = static_cast<u128>(want - have);
    const auto per = static_cast<u128>(x.per_tick);
    const u128 k = (missing + per - 1) / per;
    const std::uint64_t tick = now / period() > x.tick ? now / period() : x.tick;
    const u128 at = (u128(tick) + k) * period();
    return at > PS_MAX ? PS_MAX : static_cast<ps_t>(at);
}

std::int64_t rate_limiter::tokens_bytes(ps_t now) const {
    if (m_mode != limiter_mode::TOKEN_BUCKET) return 0;
    const i128 t = tb_tokens_at(now);
    const i128 u = UNITS_PER_BYTE;
    // Rounded towards -infinity, so a debt of part of a byte reads -1.
    const i128 q = t >= 0 ? t / u : -((-t + u - 1) / u);
    return static_cast<std::int64_t>(q);
}

bool rate_limiter::enqueue(std::uint32_t bytes, ps_t now) {
    if (!m_x) m_x = std::make_unique<options_state>();  // no FIFO: only to count the refusal
    options_state& x = *m_x;
    if (x.backlog + bytes > x.cfg.fifo_bytes) {
        x.stats.fifo_full_frames++;
        x.stats.fifo_full_bytes += bytes;
        return false;
    }
    if (x.count == x.fifo.size()) grow_fifo();
    x.fifo[(x.head + x.count) % x.fifo.size()] = fifo_entry{bytes, now};
    x.count++;
    x.backlog += bytes;
    x.stats.enqueued++;
    if (x.backlog > x.stats.peak_backlog_bytes) x.stats.peak_backlog_bytes = x.backlog;
    return true;
}

void rate_limiter::grow_fifo() {
    options_state& x = *m_x;
    std::vector<fifo_entry> next(x.fifo.empty() ? 16 : 2 * x.fifo.size());
    for (std::uint32_t i = 0; i < x.count; ++i) next[i] = x.fifo[(x.head + i) % x.fifo.size()];
    x.fifo.swap(next);
    x.head = 0;
}

rate_limiter::fifo_entry rate_limiter::send_head(ps_t start) {
    options_state& x = *m_x;
    const fifo_entry e = x.fifo[x.head];
    x.head = --x.count == 0 ? 0 : (x.head + 1) % static_cast<std::uint32_t>(x.fifo.size());
    x.backlog -= e.bytes;
    sent(e.bytes, start);
    return e;
}

void rate_limiter::reset() {
    m_rate_bps = 0;
    m_next_free = 0;
    m_carry = 0;
    if (!m_x) return;
    m_x->tokens = m_x->cap;
    m_x->per_tick = 0;
    m_x->tick = 0;
}

// ---------------------------------------------------------------------------------------------
// rate_limiter_bank

namespace {
std::uint32_t pow2_at_least(std::uint64_t n) {
    std::uint32_t p = 16;
    while (p < n) p <<= 1;
    return p;
}
std::uint32_t log2_of(std::uint32_t p) {
    std::uint32_t l = 0;
    while ((std::uint32_t(1) << l) < p) ++l;
    return l;
}
}  // namespace

rate_limiter_bank::rate_limiter_bank(unsigned limiters, const rate_limiter_bank_config& cfg)
    : m_cfg(cfg), m_users(limiters, 0) {
    if (auto e = cfg.validate())
        throw std::invalid_argument("rate_limiter_bank_config." + e->field + ": " + e->reason);
    m_limiters.assign(limiters, rate_limiter(cfg.limiter));
    // Load factor at most 1/2; a bounded table never grows after this.
    const std::uint64_t entries = cfg.table_entries ? cfg.table_entries : 8;
    m_entries.reserve(entries);
    rehash(pow2_at_least(2 * entries));
}

std::uint32_t rate_limiter_bank::home(std::uint32_t flow) const {
    // Fibonacci hashing: flow ids are often consecutive; the top bits of the product spread them.
    return static_cast<std::uint32_t>((flow * 0x9E3779B97F4A7C15ull) >> m_shift);
}

std::uint32_t rate_limiter_bank::slot_of(std::uint32_t flow) const {
    const auto mask = static_cast<std::uint32_t>(m_index.size() - 1);
    for (std::uint32_t i = home(flow);; i = (i + 1) & mask) {
        const std::uint32_t e = m_index[i];
        if (e == NIL) return NIL;
        if (m_entries[e].flow == flow) return i;
    }
}

void rate_limiter_bank::rehash(std::uint32_t slots) {
    m_index.assign(slots, NIL);
    m_shift = 64 - log2_of(slots);
    const std::uint32_t mask = slots - 1;
    for (std::uint32_t e = m_oldest; e != NIL; e = m_entries[e].newer) {
        std::uint32_t i = home(m_entries[e].flow);
        while (m_index[i] != NIL) i = (i + 1) & mask;
        m_index[i] = e;
    }
}

void rate_limiter_bank::unlink(std::uint32_t e) {
    entry& x = m_entries[e];
    (x.newer != NIL ? m_entries[x.newer].older : m_newest) = x.older;
    (x.older != NIL ? m_entries[x.older].newer : m_oldest) = x.newer;
}

void rate_limiter_bank::link_newest(std::uint32_t e) {
    entry& x = m_entries[e];
    x.newer = NIL;
    x.older = m_newest;
    (m_newest != NIL ? m_entries[m_newest].newer : m_oldest) = e;
    m_newest = e;
}

void rate_limiter_bank::touch(std::uint32_t e, ps_t now) {
    m_entries[e].last_used = now;
    if (m_newest == e) return;
    unlink(e);
    link_newest(e);
}

void rate_limiter_bank::remove_at(std::uint32_t pos) {
    const std::uint32_t e = m_index[pos];
    const auto l = unsigned(m_entries[e].limiter);
    unlink(e);
    m_entries[e].newer = m_free;
    m_free = e;
    m_associated--;
    if (--m_users[l] == 0) m_in_use--;
    // Backward-shift deletion: pull later members of the probe run into the hole, so lookups
    // need no tombstones.
    const auto mask = static_cast<std::uint32_t>(m_index.size() - 1);
    std::uint32_t hole = pos;
    for (std::uint32_t i = (pos + 1) & mask; m_index[i] != NIL; i = (i + 1) & mask) {
        const std::uint32_t h = home(m_entries[m_index[i]].flow);
        // Movable if its home is not in the cyclic range (hole, i].
        const bool in_range = hole <= i ? (h > hole && h <= i) : (h > hole || h <= i);
        if (in_range) continue;
        m_index[hole] = m_index[i];
        hole = i;
    }
    m_index[hole] = NIL;
}

int rate_limiter_bank::limiter_of(std::uint32_t flow) const {
    const std::uint32_t pos = slot_of(flow);
    return pos == NIL ? NONE : m_entries[m_index[pos]].limiter;
}

int rate_limiter_bank::find(std::uint32_t flow, ps_t now) {
    if (now > m_now) m_now = now;
    const std::uint32_t pos = slot_of(flow);
    if (pos == NIL) return NONE;
    if (expired(m_entries[m_index[pos]], now)) {
        remove_at(pos);
        m_stats.timeouts++;
        return NONE;
    }
    return m_entries[m_index[pos]].limiter;
}

int rate_limiter_bank::lookup(std::uint32_t flow, ps_t now) {
    const int l = find(flow, now);
    if (l != NONE) touch(m_index[slot_of(flow)], now);
    return l;
}

void rate_limiter_bank::expire(ps_t now) {
    if (now > m_now) m_now = now;
    while (m_oldest != NIL && expired(m_entries[m_oldest], now)) {
        remove_at(slot_of(m_entries[m_oldest].flow));
        m_stats.timeouts++;
    }
}

void rate_limiter_bank::release(std::uint32_t flow) {
    const std::uint32_t pos = slot_of(flow);
    if (pos == NIL) return;
    remove_at(pos);
    m_stats.releases++;
}

int rate_limiter_bank::take_limiter(std::uint32_t flow) {
    for (;;) {
        for (unsigned i = 0; i < m_limiters.size(); ++i)
            if (m_users[i] == 0) {
                m_stats.bindings++;
                m_in_use++;
                if (m_in_use > m_stats.peak_in_use) m_stats.peak_in_use = m_in_use;
                if (m_cfg.reset_on_bind) m_limiters[i].reset();  // a fresh pacer
                return int(i);
            }
        switch (m_cfg.limiters_full) {
            case bank_policy::SHARE:
                m_stats.shared_bindings++;
                return int(flow % m_limiters.size());
            case bank_policy::NONE:
                m_stats.rejected_no_limiter++;
                return NONE;
            case bank_policy::LRU:
                // Nothing is shared under LRU: evicting one association frees its limiter.
                if (m_oldest == NIL) return NONE;
                remove_at(slot_of(m_entries[m_oldest].flow));
                m_stats.evictions++;
                break;
        }
    }
}

std::uint32_t rate_limiter_bank::insert(std::uint32_t flow, int limiter, ps_t now) {
    if (m_cfg.table_entries == 0 && 2 * (std::uint64_t(m_associated) + 1) > m_index.size())
        rehash(static_cast<std::uint32_t>(2 * m_index.size()));
    std::uint32_t e = m_free;
    if (e != NIL) {
        m_free = m_entries[e].newer;
    } else {
        e = static_cast<std::uint32_t>(m_entries.size());
        m_entries.emplace_back();
    }
    m_entries[e].flow = flow;
    m_entries[e].limiter = limiter;
    m_entries[e].last_used = now;
    link_newest(e);
    const auto mask = static_cast<std::uint32_t>(m_index.size() - 1);
    std::uint32_t i = home(flow);
    while (m_index[i] != NIL) i = (i + 1) & mask;
    m_index[i] = e;
    m_users[unsigned(limiter)]++;
    m_associated++;
    if (m_associated > m_stats.peak_associated) m_stats.peak_associated = m_associated;
    return e;
}

int rate_limiter_bank::bind(std::uint32_t flow, ps_t now) {
    if (now > m_now) m_now = now;
    if (const int l = find(flow, now); l != NONE) {
        touch(m_index[slot_of(flow)], now);
        return l;
    }
    if (m_limiters.empty()) return NONE;
    expire(now);
    if (m_cfg.table_entries != 0 && m_associated >= m_cfg.table_entries) {
        if (m_cfg.table_full != bank_policy::LRU) {
            m_stats.rejected_table_full++;
            return NONE;
        }
        remove_at(slot_of(m_entries[m_oldest].flow));
        m_stats.evictions++;
    }
    const int l = take_limiter(flow);
    if (l != NONE) insert(flow, l, now);
    return l;
}

}  // namespace fabricsim::nic
