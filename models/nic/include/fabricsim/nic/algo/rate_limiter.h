#pragma once
/// The NIC's bank of hardware rate limiters (plain C++, no SystemC): a fixed number of pacers,
/// each at its own rate, and a table that associates flows with them. One mechanism for every
/// reaction point that needs one (DCQCN, QCN, FERA, GEMINI, the HULL pacer): each sets the rate
/// of its limiter through rate_limiter::set_rate.
///
/// Timing model. Times are integer ps, rates bit/s, sizes bytes (whatever the caller counts:
/// DCQCN passes wire bytes, frame + preamble + IFG). Calls come in non-decreasing time.
///  - Next-send-time mode (the default; as the HPCC and NS3RDMA NIC models do, facts-l2 §4.5):
///    a frame of w bytes may start at max(now, next_free), and then next_free = start +
///    w x 8 / rate. The fraction of a ps is carried, so the long-run rate is exact. A limiter at
///    the line rate or above never delays a frame the wire would not.
///  - Token-bucket mode (HULL's NetFPGA pacer, seed-000 §1.6): every `token_period` (on a grid
///    of whole periods from t = 0, like a hardware timer) the bucket gains rate x period of
///    tokens, capped at `depth_bytes`; it starts full. A frame may start when the tokens cover
///    its bytes and takes them; a frame larger than the depth waits for a full bucket and
///    leaves it in debt (the long-run rate still holds). Period 0 = tokens every ps (continuous).
///    Exact integer arithmetic in units of 1e-12 bit, so long runs do not drift.
///  - Either mode: `rate_granularity_bps` rounds a rate down to a multiple of it (at least one;
///    HULL: 0.5 Mbps). Rate 0 = unlimited. A limiter may hold a FIFO of frames of at most
///    `fifo_bytes` (HULL: 128 KB); the limiter tracks sizes and arrival times, the caller holds
///    the frames. A frame that does not fit is refused and counted (`fifo_full_frames`, the
///    adapter's drop cause `pacer_fifo_full`); earliest_start(now) is when the head may leave.
///
/// Association (flow -> limiter): bind(flow) associates a flow and gives it the lowest free
/// limiter; release(flow) ends it (a reaction point releases a flow back at the line rate). The
/// table has `table_entries` entries (0 = one per flow, unbounded: the default). An entry not
/// used for `idle_timeout` (now - last use >= timeout; 0 = never) is dropped lazily: when it is
/// looked up, from the least recently used end when a new flow binds, and by expire(now)
/// (counted `timeouts`).
/// When a new flow finds no room:
///  - table full: `table_full` = NONE, the flow is not associated (bind returns NONE: the
///    caller sends it unpaced; counted `rejected_table_full`), or LRU, the least recently used
///    entry is evicted (counted `evictions`) and the flow takes its place.
///  - every limiter in use: `limiters_full` = SHARE (the default), the flow shares limiter
///    flow % size() with the flows already on it: they then have one rate and one reaction
///    point between them, what NICs that group queue pairs on a limiter do, and what HULL's
///    one token bucket behind a 64-entry table is (counted `shared_bindings`). NONE: not
///    associated, sent unpaced (counted `rejected_no_limiter`). LRU: the least recently used
///    association is evicted to free its limiter (counted `evictions`). The facts file does not
///    say what a NIC does when it runs out; SHARE keeps the flow paced rather than unlimited.
/// A limiter taken from the free ones starts fresh (rate 0, no spacing, full bucket; frames in
/// its FIFO stay) unless `reset_on_bind` is off (a pacer whose rate outlives its flows).
/// Lookups and inserts are O(1) on average (open addressing); with a bounded table nothing is
/// allocated after construction, and a FIFO grows to its peak once and never shrinks.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fabricsim/core/param_error.h"
#include "fabricsim/core/units.h"

namespace fabricsim::nic {

enum class limiter_mode : std::uint8_t {
    NEXT_SEND_TIME,  ///< spacing by the last frame's size (DCQCN)
    TOKEN_BUCKET,    ///< tokens every period, bounded depth (HULL pacer)
};

/// One limiter's hardware. The default is the next-send-time pacer DCQCN uses.
struct rate_limiter_config {
    limiter_mode mode = limiter_mode::NEXT_SEND_TIME;
    std::uint64_t rate_granularity_bps = 0;  ///< rates round down to a multiple; 0 = exact
    std::uint64_t depth_bytes = 0;           ///< token bucket: most tokens held (> 0)
    ps_t token_period = 0;                   ///< token bucket: refill period; 0 = every ps
    std::uint64_t fifo_bytes = 0;            ///< FIFO bound; 0 = no FIFO (the caller queues)

    using error = param_error;
    /// The first field that is out of range, or nothing if the set is usable.
    std::optional<error> validate() const;
};

/// What a bank does with a new flow that finds the table or every limiter taken (see the top).
enum class bank_policy : std::uint8_t {
    SHARE,  ///< limiters only: share limiter flow % size()
    NONE,   ///< not associated: the flow goes unpaced
    LRU,    ///< evict the least recently used association
};

struct rate_limiter_bank_config {
    std::uint32_t table_entries = 0;                 ///< association entries; 0 = unbounded
    ps_t idle_timeout = 0;                           ///< drop entries idle this long; 0 = never
    bank_policy table_full = bank_policy::NONE;      ///< NONE or LRU
    bank_policy limiters_full = bank_policy::SHARE;  ///< SHARE, NONE or LRU
    bool reset_on_bind = true;                       ///< a newly taken limiter starts fresh
    rate_limiter_config limiter;                     ///< every limiter of the bank

    using error = rate_limiter_config::error;
    /// The first field that is out of range ("limiter.depth_bytes" for the limiter's).
    std::optional<error> validate() const;
};

/// One rate limiter: next-send-time or token-bucket pacing, with an optional bounded FIFO.
/// 40 bytes with the default config (a NIC holds 1024 of them); any other config adds one
/// block, allocated at construction, for the token bucket, the FIFO and the counters.
class rate_limiter
{
public:
    /// A frame in the FIFO: its bytes and when it entered.
    struct fifo_entry {
        std::uint32_t bytes = 0;
        ps_t enqueued = 0;
    };
    struct counters {
        std::uint64_t enqueued = 0;          ///< frames that entered the FIFO
        std::uint64_t fifo_full_frames = 0;  ///< frames refused: FIFO full (pacer_fifo_full)
        std::uint64_t fifo_full_bytes = 0;
        std::uint64_t peak_backlog_bytes = 0;
    };

    rate_limiter() = default;  ///< next-send-time, unlimited, no FIFO
    /// Throws std::invalid_argument ("rate_limiter_config.<field>: <reason>") if cfg does not
    /// validate.
    explicit rate_limiter(const rate_limiter_config& cfg);
    rate_limiter(const rate_limiter& o);
    rate_limiter& operator=(const rate_limiter& o);
    rate_limiter(rate_limiter&&) noexcept = default;
    rate_limiter& operator=(rate_limiter&&) noexcept = default;
    ~rate_limiter() = default;

    /// Bit/s (rounded down to the granularity); 0 = unlimited. In token-bucket mode tokens since
    /// the last call are credited at the new rate: use set_rate(rate, now) when it changes.
    void set_rate(std::uint64_t rate_bps);
    /// The rate changes at `now`: token-bucket ticks up to `now` (one at `now` included) count
    /// at the old rate. Same as set_rate(rate) in next-send-time mode.
    void set_rate(std::uint64_t rate_bps, ps_t now);
    std::uint64_t rate_bps() const { return m_rate_bps; }
    /// When the FIFO head may start, at `now` or later (next-send-time mode: any frame; token
    /// bucket with an empty FIFO: `now`).
    ps_t earliest_start(ps_t now) const {
        if (m_mode == limiter_mode::NEXT_SEND_TIME) return now > m_next_free ? now : m_next_free;
        return m_x->count == 0 ? now : tb_ready(m_x->fifo[m_x->head].bytes, now);
    }
    /// When a frame of `bytes` that is not in the FIFO may start.
    ps_t earliest_start(ps_t now, std::uint32_t bytes) const {
        if (m_mode == limiter_mode::NEXT_SEND_TIME) return earliest_start(now);
        return tb_ready(bytes, now);
    }
    /// A frame of `bytes` started at `start` (>= earliest_start). The FIFO is not touched.
    void sent(std::uint32_t bytes, ps_t start);
    /// Next-send-time mode: when the next frame may start.
    ps_t next_free() const { return m_next_free; }
    /// Token-bucket mode: whole bytes of tokens at `now` (rounded down; negative while in debt).
    std::int64_t tokens_bytes(ps_t now) const;

    /// Puts a frame of `bytes` at the FIFO tail; false (counted) if it does not fit.
    bool enqueue(std::uint32_t bytes, ps_t now);
    bool fifo_empty() const { return !m_x || m_x->count == 0; }
    std::uint32_t fifo_frames() const { return m_x ? m_x->count : 0; }
    /// The FIFO head (the FIFO must not be empty).
    const fifo_entry& head() const { return m_x->fifo[m_x->head]; }
    /// The FIFO head (the FIFO must not be empty) starts at `start` (>= earliest_start(start)):
    /// it leaves the FIFO and is sent(). Returns it.
    fifo_entry send_head(ps_t start);
    /// Bytes in the FIFO (HULL's Q_tb; 0 without a FIFO).
    std::uint64_t backlog_bytes() const { return m_x ? m_x->backlog : 0; }

    /// Rate 0, no spacing, a full bucket; the FIFO and the counters are kept.
    void reset();
    const rate_limiter_config& config() const;
    const counters& stats() const;

private:
    __extension__ typedef __int128 i128;

    /// Everything but the next-send-time pacer of the default config.
    struct options_state {
        rate_limiter_config cfg;
        i128 cap = 0;                  ///< token bucket: depth in units of 1e-12 bit
        i128 tokens = 0;               ///< units; negative only after a frame larger than the depth
        i128 per_tick = 0;             ///< units added per period at the current rate
        std::uint64_t tick = 0;        ///< the last period boundary credited (time / period)
        std::vector<fifo_entry> fifo;  ///< ring; grows by doubling
        std::uint32_t head = 0;
        std::uint32_t count = 0;
        std::uint64_t backlog = 0;
        counters stats;
    };

    std::uint64_t quantise(std::uint64_t rate_bps) const;
    ps_t period() const { return m_x->cfg.token_period ? m_x->cfg.token_period : 1; }
    i128 tb_tokens_at(ps_t now) const;
    ps_t tb_ready(std::uint32_t bytes, ps_t now) const;
    void tb_advance(ps_t now);
    void grow_fifo();

    std::uint64_t m_rate_bps = 0;
    ps_t m_next_free = 0;
    std::uint64_t m_carry = 0;  ///< bit-ps not yet a whole ps (x 1 / rate)
    limiter_mode m_mode = limiter_mode::NEXT_SEND_TIME;
    std::unique_ptr<options_state> m_x;  ///< null for the default config
};

/// A fixed number of rate limiters and the table of flows associated with them.
class rate_limiter_bank
{
public:
    static constexpr int NONE = -1;
    /// Throws std::invalid_argument ("rate_limiter_bank_config.<field>: <reason>") if cfg does
    /// not validate.
    explicit rate_limiter_bank(unsigned limiters, const rate_limiter_bank_config& cfg = {});

    unsigned size() const { return static_cast<unsigned>(m_limiters.size()); }
    /// The limiter of `flow`, associating it if it has none (see the top of the file). NONE for
    /// a bank of size 0, or when the flow finds no room under a NONE policy. Time-less form: at
    /// the latest time seen.
    int bind(std::uint32_t flow) { return bind(flow, m_now); }
    int bind(std::uint32_t flow, ps_t now);
    /// The limiter of an associated flow, or NONE; drops the entry if it has been idle for the
    /// timeout. Marks the entry used at `now` (per frame of the flow).
    int lookup(std::uint32_t flow, ps_t now);
    /// As lookup, without marking the entry used.
    int find(std::uint32_t flow, ps_t now);
    /// The limiter `flow` is bound to, or NONE, as stored (no timeout check).
    int limiter_of(std::uint32_t flow) const;
    /// Unbinds `flow`; its limiter is free again when no other flow uses it.
    void release(std::uint32_t flow);
    /// Drops every entry idle for the timeout at `now`.
    void expire(ps_t now);
    rate_limiter& at(unsigned i) { return m_limiters[i]; }
    const rate_limiter& at(unsigned i) const { return m_limiters[i]; }
    /// Flows bound to limiter i.
    std::uint32_t users(unsigned i) const { return m_users[i]; }

    struct counters {
        std::uint64_t bindings = 0;             ///< flows given a limiter of their own
        std::uint64_t shared_bindings = 0;      ///< flows that had to share one (bank full)
        std::uint64_t releases = 0;             ///< release() of an associated flow
        std::uint32_t peak_in_use = 0;          ///< limiters in use at once
        std::uint64_t rejected_table_full = 0;  ///< not associated: table full (NONE)
        std::uint64_t rejected_no_limiter = 0;  ///< not associated: no free limiter (NONE)
        std::uint64_t evictions = 0;            ///< entries evicted (LRU)
        std::uint64_t timeouts = 0;             ///< entries dropped after the idle timeout
        std::uint32_t peak_associated = 0;      ///< table entries in use at once
    };
    const counters& stats() const { return m_stats; }
    std::uint32_t in_use() const { return m_in_use; }
    /// Flows associated now (entries, whether or not they share a limiter).
    std::uint32_t associated() const { return m_associated; }
    const rate_limiter_bank_config& config() const { return m_cfg; }

private:
    static constexpr std::uint32_t NIL = ~std::uint32_t(0);
    struct entry {
        std::uint32_t flow = 0;
        int limiter = NONE;
        ps_t last_used = 0;
        std::uint32_t newer = NIL;  ///< LRU list (towards the most recent) / free list
        std::uint32_t older = NIL;
    };

    std::uint32_t slot_of(std::uint32_t flow) const;  ///< index position, or NIL
    std::uint32_t home(std::uint32_t flow) const;
    bool expired(const entry& e, ps_t now) const {
        return m_cfg.idle_timeout != 0 && now > e.last_used &&
               now - e.last_used >= m_cfg.idle_timeout;
    }
    void touch(std::uint32_t e, ps_t now);
    void unlink(std::uint32_t e);
    void link_newest(std::uint32_t e);
    void remove_at(std::uint32_t pos);  ///< drops the entry at index position `pos`
    void rehash(std::uint32_t slots);
    int take_limiter(std::uint32_t flow);
    std::uint32_t insert(std::uint32_t flow, int limiter, ps_t now);

    rate_limiter_bank_config m_cfg;
    std::vector<rate_limiter> m_limiters;
    std::vector<std::uint32_t> m_users;
    std::vector<entry> m_entries;        ///< pool of entries
    std::vector<std::uint32_t> m_index;  ///< open addressing: entry number or NIL
    std::uint32_t m_shift = 0;           ///< 64 - log2(index size)
    std::uint32_t m_free = NIL;          ///< free entries (linked by `newer`)
    std::uint32_t m_newest = NIL;
    std::uint32_t m_oldest = NIL;
    std::uint32_t m_associated = 0;
    std::uint32_t m_in_use = 0;
    ps_t m_now = 0;  ///< latest time seen
    counters m_stats;
};

}  // namespace fabricsim::nic
