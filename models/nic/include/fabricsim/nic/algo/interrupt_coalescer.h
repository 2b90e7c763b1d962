#pragma once
/// RX interrupt coalescing of one NIC receive queue (plain C++, no SystemC): static ethtool
/// rx-usecs / rx-frames moderation and an adaptive mode that re-implements Linux net_dim
/// (lib/dim/net_dim.c) with the mlx5 RX profile table. docs/models/nic.md, "RX interrupt
/// coalescing and host CPU".
///
/// Timing model. Event driven: the caller reports each completion (a frame written to host
/// memory and its completion entry posted) with its time, arms a timer at the deadline it gets
/// back, calls on_timer() when it expires, and calls unmask() when the host re-enables the
/// interrupt after its poll (NAPI complete). Calls come in non-decreasing time. Nothing polls.
///  - rx-usecs: the interrupt fires rx_usecs after the first completion not yet signalled
///    (CQE-based period, as ethtool documents rx-usecs and mlx5 does in its default
///    START_FROM_CQE mode). rx-frames: it fires at once on the rx_frames-th such completion.
///    Whichever comes first fires; either criterion is off when 0.
///  - Both 0: an interrupt at every completion, the same as rx_usecs 0 / rx_frames 1, which is
///    how Linux drivers spell "coalescing off" (the ethtool core itself rejects both-0, since
///    a device would then never interrupt). The seed's Table 4.2 "rx-frames=0" row is modelled
///    with this setting: its receiver CPU at 99% is that of an interrupt per packet, not of
///    the timer alone that the ethtool reading (frames off, rx-usecs left at the driver
///    default) would give.
///  - rx_usecs 0 with rx_frames > 1 counts only: a tail of fewer than rx_frames completions
///    is not signalled until more arrive (ethtool semantics, kept as they are).
///  - An interrupt masks the queue (the event is one-shot until the host re-arms it). While
///    masked, completions are counted but arm nothing: the host finds them by polling. unmask()
///    re-arms; completions the host leaves unprocessed may be passed to it and start a new
///    window at once.
///  - Adaptive (net_dim): at every unmask the driver hands net_dim its cumulative counters
///    (interrupts, completions, bytes). Once 64 interrupts have passed since the start sample,
///    it computes per-ms rates over the interval (whole microseconds, truncated like
///    ktime_us_delta; rates rounded up) and compares them with the previous decision's: bytes/ms,
///    then packets/ms, then interrupts/ms (fewer is better), each only if it differs by more
///    than 10 %. A better result keeps the direction, anything else turns; it walks a 5-entry
///    profile table left/right, parks on top after a peak (left then right once) or at an
///    edge, and parks "tired" after 10 steps (for 10 decisions). A new profile applies at once
///    (the driver's work item is not delayed) and the next unmask starts a new measurement.
///    Profiles are mlx5's CQE-based RX table {2us,256} {8us,128} {16us,64} {32us,64}
///    {64us,64}; the queue starts at profile 1 (NET_DIM_DEF_PROFILE_CQE) while net_dim's own
///    state starts zeroed (index 0, parked on top), as mlx5 allocates it: the first decision
///    therefore moves 0 -> 1 and confirms the starting profile.
/// Ignored: EQE-based periods (timer from the last interrupt), the interrupt's own latency,
/// several queues sharing one vector, TX moderation, 16/32-bit counter wrap.
#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "fabricsim/core/param_error.h"
#include "fabricsim/core/units.h"

namespace fabricsim::nic {

/// One moderation setting: the period from the first unsignalled completion and the count.
struct dim_profile {
    ps_t usecs = 0;
    std::uint32_t frames = 0;
};

constexpr unsigned DIM_PROFILES = 5;

/// mlx5 / Linux net_dim RX profiles for CQE-based periods (NET_DIM_RX_CQE_PROFILES).
constexpr std::array<dim_profile, DIM_PROFILES> MLX5_RX_CQE_PROFILES{{
    {2 * PS_PER_US, 256},
    {8 * PS_PER_US, 128},
    {16 * PS_PER_US, 64},
    {32 * PS_PER_US, 64},
    {64 * PS_PER_US, 64},
}};

/// Parameters of one queue's interrupt moderation (ethtool -C).
struct coalesce_params {
    /// rx-usecs (a time, in ps like every time here): from the first unsignalled completion to
    /// the interrupt; 0 = off. Default 16 us: mlx4_en's MLX4_EN_RX_COAL_TIME, the driver of
    /// the seed's ConnectX-2.
    ps_t rx_usecs = 16 * PS_PER_US;
    /// rx-frames: completions that fire the interrupt at once; 0 = off. Default 44: mlx4_en's
    /// MLX4_EN_RX_COAL_TARGET.
    std::uint32_t rx_frames = 44;
    /// adaptive-rx: net_dim chooses rx_usecs / rx_frames from `profiles` (the two fields
    /// above are then unused).
    bool adaptive = false;
    std::array<dim_profile, DIM_PROFILES> profiles = MLX5_RX_CQE_PROFILES;
    unsigned start_profile = 1;     ///< NET_DIM_DEF_PROFILE_CQE
    std::uint32_t dim_events = 64;  ///< DIM_NEVENTS: interrupts per measurement

    using error = param_error;
    /// The first field that is out of range, or nothing if the set is usable.
    std::optional<error> validate() const;
};

/// Linux net_dim's decision engine (lib/dim/net_dim.c, lib/dim/dim.c), re-implemented: a hill
/// climber over a table of DIM_PROFILES profiles driven by samples taken at NAPI completions.
class net_dim
{
public:
    enum class tune_state : std::uint8_t { PARKING_ON_TOP, PARKING_TIRED, GOING_RIGHT, GOING_LEFT };
    enum class compare_result : std::uint8_t { WORSE, SAME, BETTER };

    /// Per-ms rates of one measurement (dim_stats: ppms, bpms, epms).
    struct rates {
        std::uint64_t ppms = 0;
        std::uint64_t bpms = 0;
        std::uint64_t epms = 0;
        bool operator==(const rates& o) const {
            return ppms == o.ppms && bpms == o.bpms && epms == o.epms;
        }
    };

    explicit net_dim(std::uint32_t events_per_sample = 64) : m_nevents(events_per_sample) {}

    /// A NAPI completion at `now` with the queue's cumulative counters (interrupts, packets,
    /// bytes). True if the profile index changed (apply profile() now).
    bool on_sample(ps_t now, std::uint64_t events, std::uint64_t packets, std::uint64_t bytes);

    unsigned profile() const { return m_ix; }
    tune_state state() const { return m_tune; }
    std::uint32_t tired() const { return m_tired; }
    /// Rates of the last decision (net_dim's prev_stats).
    const rates& last_rates() const { return m_prev; }
    std::uint64_t decisions() const { return m_decisions; }

    /// net_dim_stats_compare: curr against prev.
    static compare_result compare(const rates& curr, const rates& prev);

private:
    enum class step_result : std::uint8_t { STEPPED, TOO_TIRED, ON_EDGE };
    struct sample {
        ps_t time = 0;
        std::uint64_t events = 0;
        std::uint64_t packets = 0;
        std::uint64_t bytes = 0;
    };

    bool decide(const rates& curr);
    step_result step();
    void exit_parking();
    bool on_top() const;
    void turn();
    void park_on_top();
    void park_tired();

    std::uint32_t m_nevents;
    bool m_measuring = false;  ///< false: DIM_START_MEASURE, true: DIM_MEASURE_IN_PROGRESS
    sample m_start;
    rates m_prev;
    unsigned m_ix = 0;
    tune_state m_tune = tune_state::PARKING_ON_TOP;
    std::uint32_t m_steps_right = 0;
    std::uint32_t m_steps_left = 0;
    std::uint32_t m_tired = 0;
    std::uint64_t m_decisions = 0;
};

/// Static or adaptive RX interrupt moderation of one receive queue. No allocation after
/// construction; every call is O(1).
class interrupt_coalescer
{
public:
    static constexpr ps_t NEVER = ~ps_t(0);
    static constexpr unsigned HIST_BUCKETS = 10;

    /// What the caller does after an input.
    struct decision {
        bool fire = false;      ///< raise the interrupt now (the queue is then masked)
        ps_t deadline = NEVER;  ///< the pending timer (arm / keep it); NEVER = none
    };

    /// Throws std::invalid_argument ("coalesce_params.<field>: <reason>") if p does not validate.
    explicit interrupt_coalescer(const coalesce_params& p = coalesce_params{});

    /// A completion of `bytes` at `now`.
    decision on_completion(ps_t now, std::uint32_t bytes = 0);
    /// The timer armed for deadline() expired at `now`; true: raise the interrupt. A stale
    /// call (the deadline moved or the interrupt already fired) returns false.
    bool on_timer(ps_t now);
    /// The host takes over (polls): no interrupt until unmask(); pending completions become the
    /// host's and the timer is cancelled.
    void mask();
    /// The host re-enables the interrupt after its poll. `unprocessed` completions still in the
    /// ring open a new window at `now` (fire at once if they reach rx_frames). In adaptive mode
    /// this is where net_dim samples and may change the profile.
    decision unmask(ps_t now, std::uint32_t unprocessed = 0);

    /// New moderation settings (ethtool -C at run time, or the NIC's registers): static
    /// values apply from the next completion (a window already timing keeps its deadline);
    /// turning adaptive on starts net_dim at start_profile, its state kept from before.
    /// Throws std::invalid_argument if p does not validate.
    void set_params(const coalesce_params& p);

    bool interrupt_enabled() const { return !m_masked; }
    ps_t deadline() const { return m_deadline; }
    std::uint32_t pending() const { return m_pending; }
    /// The moderation in force (the static one, or the current adaptive profile).
    const dim_profile& moderation() const { return m_moder; }
    unsigned profile() const { return m_profile; }
    const net_dim& dim() const { return m_dim; }
    const coalesce_params& params() const { return m_p; }

    struct counters {
        std::uint64_t completions = 0;
        std::uint64_t completions_masked = 0;  ///< arrived while masked (found by polling)
        std::uint64_t bytes = 0;
        std::uint64_t interrupts = 0;
        std::uint64_t by_frames = 0;         ///< fired by the rx-frames count
        std::uint64_t by_timer = 0;          ///< fired by the rx-usecs timer
        std::uint64_t immediate = 0;         ///< both criteria off: one per completion
        std::uint64_t frames_signalled = 0;  ///< completions pending when an interrupt fired
        std::uint32_t max_frames = 0;        ///< most completions signalled by one interrupt
        /// Interrupts by signalled completions: bucket i holds [2^i, 2^(i+1)), the last >= 512.
        std::array<std::uint64_t, HIST_BUCKETS> frames_hist{};
        std::uint64_t profile_changes = 0;
        double mean_frames() const {
            return interrupts ? double(frames_signalled) / double(interrupts) : 0.0;
        }
    };
    const counters& stats() const { return m_stats; }

private:
    decision current() const { return decision{false, m_deadline}; }
    decision fire(bool by_frames, bool by_timer);
    decision check_count();
    void apply(const dim_profile& m) { m_moder = m; }

    coalesce_params m_p;
    dim_profile m_moder;
    unsigned m_profile = 0;
    net_dim m_dim;
    bool m_masked = false;
    std::uint32_t m_pending = 0;
    ps_t m_deadline = NEVER;
    counters m_stats;
};

/// Host RX CPU parameters (host/algo/rx_cpu.h uses them; they live here because the node's
/// NIC profile, `nic.rx.*`, carries them with the coalescing settings). Defaults are calibrated to
/// seed-000 Table 4.2 (10G, 1500 B frames, one receive core); the arithmetic is in
/// docs/models/nic.md.
struct rx_cpu_params {
    std::uint32_t cores = 1;             ///< RX queues = cores serving them
    ps_t irq_cost = 4 * PS_PER_US;       ///< hard IRQ + softirq entry, per interrupt
    ps_t poll_cost = 4 * PS_PER_US;      ///< per poll call: NAPI, GRO flush, stack per batch
    ps_t packet_cost = 300 * PS_PER_NS;  ///< per frame: driver, GRO, protocol
    ps_t byte_cost = 0;                  ///< per frame byte (ps/B), e.g. a copy
    std::uint32_t budget = 64;           ///< NAPI weight: frames per poll call
    std::uint32_t ring = 1024;           ///< RX descriptors per queue (mlx4_en/mlx5 default)
    /// The receiving application's copy per payload byte (ps/B), on the queue's core at lower
    /// priority than the softirq; 0 = no application model (data is read at once).
    ps_t app_byte_cost = 0;

    using error = param_error;
    std::optional<error> validate() const;
};

}  // namespace fabricsim::nic
