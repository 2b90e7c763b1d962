#pragma once
/// HULL's hardware pacer (Alizadeh thesis §4.3.2, §4.4.1; seed-000 §1.6) as plain C++ (no
/// SystemC), on the NIC's rate-limiter bank: one token-bucket limiter behind a flow
/// association table. It sits after LSO and sees the segmented frames.
///
/// Timing model. Times are integer ps and calls come in non-decreasing time. Each call first
/// runs every rate update due at or before its time (so bytes handed over at the very ps of an
/// update belong to the next interval), then handles its input.
///  - Rate estimation, every T_r on a grid of whole periods from t = 0 (eq 4.4):
///      R_tb <- (1 - eta) R_tb + eta M_r / T_r + beta Q_tb
///    R_tb in bytes/s (double, unrounded), M_r the bytes given to on_host_bytes in the interval,
///    T_r in s, Q_tb the FIFO backlog in bytes at the update, beta in 1/s; then R_tb is clamped
///    to [rate granularity, line rate] and the token bucket runs at R_tb x 8 bit/s rounded to
///    whole bit/s and down to the granularity. Read literally, beta = 16 (testbed) or 375 (ns-2)
///    per second [AMBIG in the seed: it may be a scaled fixed-point constant]; the backlog term
///    then drains a standing backlog at a rate of about beta / eta (128/s, 3000/s).
///  - M_r: the seed reads it as every byte the host hands the NIC, associated or not (the
///    host's aggregate rate). on_host_bytes counts whatever it is given; an adapter that wants
///    the other reading calls it only for paced frames.
///  - Association: each ECN-Echo ACK of a flow not yet associated associates it with
///    probability p_a: draw < p_a x 2^64 for a uniform 64-bit draw (the caller's, or the raw
///    output of the pacer's std::mt19937_64; no std distribution). An association times out
///    after T_i without a frame of the flow. A full table refuses new flows (table_full = none,
///    counted) or evicts the least recently used one (lru); every associated flow shares the
///    one token bucket. Frames of other flows bypass the pacer.
///  - Token bucket: tokens every token_period, depth_bytes deep, FIFO of fifo_bytes; a frame
///    that does not fit is refused (pacer_fifo_full, counted) [NOT GIVEN in the seed].
///  - Initial R_tb: the line rate unless set [NOT GIVEN in the seed].
/// Ignored: several limiters with flows hashed to them (Remark 4.3; the seed defines no
/// per-limiter estimate), the hardware's fixed-point arithmetic, and reordering: a flow whose
/// association ends while frames of it wait in the FIFO sends its next frames past them.
#include <cstdint>
#include <optional>
#include <random>
#include <string>

#include "fabricsim/core/log_histogram.h"
#include "fabricsim/core/param_error.h"
#include "fabricsim/core/units.h"
#include "fabricsim/nic/algo/rate_limiter.h"

namespace fabricsim::nic {

/// Rates in bit/s, times in ps, sizes in bytes; beta in 1/s.
struct hull_pacer_params {
    std::uint64_t line_rate_bps = 1'000'000'000;
    ps_t update_period = 64 * PS_PER_US;         ///< T_r
    double eta = 0.125;                          ///< low-pass gain, (0, 1]
    double beta = 16;                            ///< backlog gain in 1/s, >= 0
    double p_a = 0.125;                          ///< association probability per ECE ACK, [0, 1]
    ps_t idle_timeout = 10 * PS_PER_MS;          ///< T_i; 0 = never
    std::uint32_t table_entries = 64;            ///< flow association table; 0 = unbounded
    bank_policy table_full = bank_policy::NONE;  ///< NONE or LRU
    std::uint64_t depth_bytes = 3 * 1024;        ///< most outstanding tokens
    std::uint64_t fifo_bytes = 128 * 1024;
    ps_t token_period = 16 * PS_PER_US;
    std::uint64_t rate_granularity_bps = 500'000;  ///< also the lowest rate
    std::uint64_t initial_rate_bps = 0;            ///< R_tb at t = 0; 0 = line rate

    /// NetFPGA testbed, 1 Gb/s (Table 4.3, §4.4.1): T_r 64 us, eta 0.125, beta 16, p_a 0.125,
    /// T_i 10 ms, 64 entries, depth 3 KB, FIFO 128 KB, tokens every 16 us, 0.5 Mb/s steps (KB
    /// read as 1024 B).
    static hull_pacer_params testbed();
    /// ns-2 fat tree, 10 Gb/s (§4.5.3): T_r 7.2 us, eta 0.125, beta 375, p_a 0.125, T_i 1 ms.
    /// Not given for ns-2 and taken from the NetFPGA scaled to 10G so tokens stay 1..2000 B:
    /// tokens every 1.6 us in 5 Mb/s steps; depth 3 KB, FIFO 128 KB, 64 entries as the NetFPGA.
    static hull_pacer_params ns2();

    using error = param_error;
    /// The first field that is out of range, or nothing if the set is usable.
    std::optional<error> validate() const;
};

enum class pacer_verdict : std::uint8_t {
    BYPASS,     ///< flow not associated: send now
    PACED,      ///< in the FIFO: send at next_departure()
    FIFO_FULL,  ///< refused (drop cause pacer_fifo_full)
};

/// The pacer of one NIC. No allocation per frame (the FIFO ring grows to its peak once).
class hull_pacer
{
public:
    static constexpr ps_t NEVER = ~ps_t(0);
    /// Throws std::invalid_argument ("hull_pacer_params.<field>: <reason>") if p does not
    /// validate. `seed` seeds the generator on_ece_ack(now, flow) draws from.
    explicit hull_pacer(const hull_pacer_params& p, std::uint64_t seed = 0);

    /// The host handed the NIC `bytes` at `now` (counted into M_r).
    void on_host_bytes(ps_t now, std::uint64_t bytes);
    /// An ACK with ECN-Echo of `flow` arrived: a flow not associated is associated if
    /// draw < p_a x 2^64. True if the flow is associated afterwards.
    bool on_ece_ack(ps_t now, std::uint32_t flow, std::uint64_t draw);
    /// As above with the next output of the pacer's std::mt19937_64 (drawn only for a flow that
    /// is not associated).
    bool on_ece_ack(ps_t now, std::uint32_t flow);
    /// A frame of `flow` (after LSO) reaches the pacer. Does not count M_r.
    pacer_verdict on_frame(ps_t now, std::uint32_t flow, std::uint32_t bytes);
    /// When the FIFO head may leave (>= now), NEVER if the FIFO is empty. Valid until
    /// next_update(): a rate update may move it, so wake at the earlier of the two.
    ps_t next_departure(ps_t now);
    /// The FIFO head leaves at `now` (>= next_departure(now); the FIFO must not be empty);
    /// returns its bytes.
    std::uint32_t depart(ps_t now);
    /// Runs every rate update due at or before `now`.
    void update(ps_t now) { advance(now); }
    ps_t next_update() const { return m_next_update; }

    double rate_bytes_per_s() const { return m_rate; }  ///< R_tb
    std::uint64_t limiter_rate_bps() const { return m_bank.at(0).rate_bps(); }
    std::uint64_t backlog_bytes() const { return m_bank.at(0).backlog_bytes(); }  ///< Q_tb
    /// M_r so far in the current interval.
    std::uint64_t interval_bytes() const { return m_bytes; }
    /// Whether `flow` is associated at `now` (drops it if idle for T_i).
    bool associated(ps_t now, std::uint32_t flow);
    const hull_pacer_params& params() const { return m_p; }
    const rate_limiter_bank& bank() const { return m_bank; }

    struct counters {
        std::uint64_t updates = 0;     ///< rate updates (periods) run
        std::uint64_t host_bytes = 0;  ///< M_r summed over the run
        std::uint64_t ece_acks = 0;
        std::uint64_t draws = 0;         ///< ECE ACKs of flows not associated
        std::uint64_t associations = 0;  ///< flows associated (draw below p_a, room found)
        std::uint32_t associated = 0;    ///< flows associated now (as of the last call)
        std::uint32_t peak_associated = 0;
        std::uint64_t evictions = 0;            ///< entries evicted (lru)
        std::uint64_t timeouts = 0;             ///< entries dropped after T_i
        std::uint64_t rejected_table_full = 0;  ///< associations refused (none)
        std::uint64_t paced_frames = 0;         ///< frames put in the FIFO
        std::uint64_t paced_bytes = 0;
        std::uint64_t bypass_frames = 0;
        std::uint64_t bypass_bytes = 0;
        std::uint64_t fifo_full_frames = 0;  ///< pacer_fifo_full
        std::uint64_t fifo_full_bytes = 0;
        std::uint64_t departed_frames = 0;  ///< paced frames that left the FIFO
        std::uint64_t backlog_peak_bytes = 0;
        ps_t delay_sum = 0;  ///< pacer delay (FIFO entry to departure) of departed frames
        ps_t delay_max = 0;
    };
    /// A snapshot (bank counters included).
    counters stats() const;
    /// Pacer delays of departed frames in ps (10 ns .. 1 s, ~2% bins; zeros exact).
    const log_histogram& delay_histogram() const { return m_delays; }

private:
    void advance(ps_t now);
    void step(ps_t at);

    hull_pacer_params m_p;
    rate_limiter_bank m_bank;
    std::mt19937_64 m_gen;
    std::uint64_t m_threshold = 0;  ///< draws below it associate (p_a x 2^64)
    bool m_always = false;          ///< p_a = 1
    double m_rate = 0;              ///< R_tb, bytes/s
    double m_min_rate = 0;          ///< bytes/s
    double m_max_rate = 0;
    std::uint64_t m_bytes = 0;  ///< M_r of the current interval
    ps_t m_next_update = 0;
    counters m_stats;
    log_histogram m_delays = log_histogram::ps_10ns_to_1s();
};

}  // namespace fabricsim::nic
