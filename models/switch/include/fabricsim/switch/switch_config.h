#pragma once
/// Parameters of one switch chip (the `switch:` section of a scenario): pipeline, MMU,
/// classification, schedulers, shapers and the ECN/RED family. Every port of a chip uses the
/// same profile; port speeds come from the links.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fabricsim/core/config.h"
#include "fabricsim/core/pause_reaction.h"
#include "fabricsim/core/units.h"
#include "fabricsim/switch/algo/aqm.h"
#include "fabricsim/switch/algo/bcn_cp.h"
#include "fabricsim/switch/algo/credit_queue.h"
#include "fabricsim/switch/algo/egress_policy.h"
#include "fabricsim/switch/algo/fera.h"
#include "fabricsim/switch/algo/ingress_pipeline.h"
#include "fabricsim/switch/algo/mmu.h"
#include "fabricsim/switch/algo/pause_generator.h"
#include "fabricsim/switch/algo/pfc_watchdog.h"
#include "fabricsim/switch/algo/qcn_cp.h"
#include "fabricsim/switch/algo/queue_scheduler.h"
#include "fabricsim/switch/algo/rcp.h"

namespace fabricsim::sw {

enum class forwarding_mode { STORE_AND_FORWARD, CUT_THROUGH };

/// Classification: DSCP or PCP -> traffic class -> egress queue and ingress priority group.
struct qos_config {
    bool trust_pcp = false;  ///< tagged frames classify by PCP, untagged by DSCP
    std::array<std::uint8_t, 64> dscp_to_tc{};
    std::array<std::uint8_t, 8> pcp_to_tc{0, 1, 2, 3, 4, 5, 6, 7};
    std::array<std::uint8_t, 8> tc_to_queue{0, 1, 2, 3, 4, 5, 6, 7};
    std::array<std::uint8_t, 8> tc_to_pg{0, 0, 0, 0, 0, 0, 0, 0};
};

enum class ecn_mode { OFF, RED, STEP };

/// ECN/RED marking of the egress ports (seed-001 §1.1–1.8, seed-000 §1.1), per queue: a queue
/// marks when its mode is not OFF and it is in queue_mask.
struct ecn_config {
    std::array<ecn_mode, MAX_QUEUES> mode{};  ///< per queue (all OFF)
    ecn_scope scope = ecn_scope::QUEUE;
    queue_threshold per_queue = queue_threshold::STANDARD;
    /// Per queue, in bytes or frames (packets[q]); a step has min = max = K, max_p = weight =
    /// 1. One policy decides the step queues (is_step) and one the others, each in one unit.
    std::array<red_params, MAX_QUEUES> red{};
    std::array<bool, MAX_QUEUES> packets{};
    bool mark_on_dequeue = false;
    bool drop_non_ect = true;        ///< non-ECT frames that would be marked are dropped (RED)
    std::uint8_t queue_mask = 0xff;  ///< queues with ECN/RED enabled
    double mq_beta = 0.75;
    ps_t mq_t_idle = 0;  ///< 0: one 1500 B MTU at the port rate

    /// The same mode and thresholds for every queue (tests, scripts).
    void set_all(ecn_mode m, const red_params& r, bool in_packets = false) {
        mode.fill(m);
        red.fill(r);
        packets.fill(in_packets);
    }
    /// Queues (of the first `queues`) that mark.
    std::uint8_t marking(unsigned queues) const {
        std::uint8_t m = 0;
        for (unsigned q = 0; q < queues && q < MAX_QUEUES; ++q)
            if (mode[q] != ecn_mode::OFF && (queue_mask >> q & 1))
                m = static_cast<std::uint8_t>(m | 1u << q);
        return m;
    }
    /// Queue q is decided by a threshold on its own instantaneous occupancy (step_marking):
    /// queue scope, min_th == max_th, weight 1 (a step, or RED that is one).
    bool is_step(unsigned q) const {
        return scope == ecn_scope::QUEUE && red[q].min_th == red[q].max_th && red[q].weight == 1.0;
    }
};

/// HULL phantom queue in series with every egress port (seed-000 §1.5).
struct phantom_queue_config {
    bool enabled = false;
    double gamma = 0.95;
    ps_t interval = 800 * PS_PER_NS;
    std::uint64_t threshold_bytes = 1000;
};

/// 802.1Qau congestion points on the egress queues of the CNPV priorities (docs/models/qcn.md).
struct qcn_config {
    enum class preset : std::uint8_t { NONE, STANDARD, THESIS } mode = preset::NONE;
    std::uint8_t priorities = 0xFF;  ///< CNPV priorities (bit p); their queues get a CP
    std::optional<std::uint64_t> q_eq;
    std::optional<double> w, jitter, sample_probability;
    std::optional<std::uint64_t> sample_base;
    std::optional<std::uint32_t> quantum;
    std::uint8_t cnm_priority = 6;  ///< cnmTransmitPriority
    std::uint8_t msdu_octets = 64;  ///< sampled MSDU octets in a CNM
    bool lossless = false;          ///< every CNPV queue must be lossless (validated)
    bool enabled() const { return mode != preset::NONE; }
    /// The preset with the overrides (not validated).
    qcn_cp_params params() const;
};

/// BCN congestion points on the egress queues of the BCN priorities (docs/models/bcn.md).
struct bcn_config {
    enum class preset : std::uint8_t { NONE, THESIS } mode = preset::NONE;
    std::uint8_t priorities = 0xFF;  ///< priorities (bit p) whose queues get a CP
    std::optional<std::uint64_t> q_eq, q_sc, fb_unit;
    std::optional<double> w;
    std::optional<bcn_sampling> sampling;
    std::optional<std::uint32_t> sample_every, quantise_bits;
    std::uint8_t message_priority = 6;  ///< the message's PCP when the sampled frame was tagged
    std::uint8_t msdu_octets = 64;      ///< sampled MSDU octets in a message
    bool enabled() const { return mode != preset::NONE; }
    /// The preset with the overrides (not validated).
    bcn_cp_params params() const;
};

/// FERA congestion point on every egress port (docs/models/fera_bcn.md): a preset and
/// overrides of every fera_params field.
struct fera_config {
    /// RCP: the RCP rate law (algo/rcp.h) on the same forward-tag path, keys in switch.rcp.
    enum class preset : std::uint8_t { NONE, THESIS, ANALYSIS, RCP } mode = preset::NONE;
    std::optional<double> n0, k, a, b, c, lambda, gamma, eta;
    std::optional<ps_t> interval;
    std::optional<std::uint64_t> q_eq, q_sc, delta0, delta_min, min_rate, max_rate;
    std::optional<fera_queue_control> control;
    std::optional<std::uint32_t> stages;
    std::optional<bool> multistage_continuous, ema_uses_current_rate, hold_while_paused,
        strict_stability;
    bool enabled() const { return mode != preset::NONE; }
    bool rcp() const { return mode == preset::RCP; }
    /// The preset at `capacity_bps` with the overrides (not validated).
    fera_params params(std::uint64_t capacity_bps) const;
    /// The switch.fera key of a fera_params field (validate()'s error field).
    static std::string key_of(const std::string& field);
};

/// The RCP law of switch.fera.mode rcp (docs/models/fera_bcn.md "RCP"): rcp_params' fields
/// except the capacity (each port's rate).
struct rcp_config {
    /// Absent: rcp_params' defaults (alpha 0.1, beta 1, T 50 ms, d0 20 ms, variant none,
    /// averaging factor 0.5, initial rate C, min rate C/1000). Optional, as fera_config's
    /// overrides, so that a configuration without RCP echoes none of them.
    std::optional<double> alpha, beta, averaging_factor;
    std::optional<ps_t> interval, d0;
    std::optional<rcp_variant> variant;
    std::optional<std::uint64_t> initial_rate, min_rate;
    rcp_params params(std::uint64_t capacity_bps) const;
    /// The switch.rcp key of an rcp_params field.
    static std::string key_of(const std::string& field);
};

struct shaper_config {
    std::uint64_t rate_bps = 0;  ///< 0 = no shaping
    std::uint64_t burst_bytes = 0;
};

/// Lossless headroom from the calculator (algo/headroom.h), per port from its link.
struct headroom_sizing {
    bool calculated = false;   ///< pg_headroom of each port from the calculator
    bool check = false;        ///< refuse a configured pg_headroom below the calculator's
    std::uint32_t mtu = 1518;  ///< largest frame (FCS included) on the links, any class
    bool enabled() const { return calculated || check; }
};

struct switch_config {
    std::string chip = "generic";  ///< preset the section started from (expand_chip)
    double core_clock_hz = 1e9;
    ps_t pipeline_latency = 300 * PS_PER_NS;  ///< ingress pipeline + MMU + egress pipeline
    pipeline_config pipeline;  ///< pipelines and their rate limits (depth sets the latency)
    forwarding_mode mode = forwarding_mode::STORE_AND_FORWARD;
    std::uint32_t cut_through_bytes = 64;     ///< header bytes needed before forwarding
    std::uint64_t buffer_bytes = 4ull << 20;  ///< shared buffer
    mmu_config mmu;                           ///< total_cells and ports are filled per chip
    unsigned queues = 8;
    qos_config qos;
    sched_discipline discipline = sched_discipline::DWRR;
    std::vector<queue_sched_params> sched;  ///< per queue
    shaper_config port_shaper;
    std::array<shaper_config, MAX_QUEUES> queue_shaper{};
    credit_queue_config credit_queue;  ///< credits' (or emulation packets') rate-limited queue
    ecn_config ecn;
    phantom_queue_config phantom;
    qcn_config qcn;
    bcn_config bcn;
    fera_config fera;
    rcp_config rcp;                                   ///< used when fera.mode is rcp
    pause_reaction_config flow_control;               ///< PAUSE/PFC honoured by the egress ports
    pause_generation_config flow_control_generation;  ///< PAUSE/PFC the switch sends
    pfc_watchdog_config pfc_watchdog;
    headroom_sizing headroom;
    std::uint32_t ports = 0;  ///< set by the platform

    ps_t clock_period() const;
    /// Absolute time when a frame that arrived at `now` leaves the pipeline (clock-aligned).
    ps_t pipeline_exit(ps_t now) const {
        return ceil_to_period(now + pipeline_latency, clock_period());
    }
    /// The switch.* keys (YAML) of chip preset `chip`; nullptr for "generic" or an unknown name.
    static const char* chip_yaml(const std::string& chip);
    /// `section` (a switch: map) with the keys of its `chip` preset laid under it: the user's
    /// keys win, maps merge. Unchanged without a chip or for generic.
    static YAML::Node expand_chip(const YAML::Node& section);

    /// MMU parameters for a chip with `ports` ports.
    mmu_config mmu_for(unsigned ports) const;

    /// The `switch:` keys: schema and loading (config.h), declared once in switch_config.cpp.
    static const param_table<switch_config>& params();
    /// params().load(n), then validate(n).
    static switch_config load(const config_node& n);
    /// Relations between keys; throws config_error naming a key below `n`.
    void validate(const config_node& n) const;

private:
    void validate_pools(const config_node& n) const;
    void validate_ecn(const config_node& n) const;
    void validate_flow_control(const config_node& n) const;
    void validate_qcn(const config_node& n) const;
    void validate_bcn(const config_node& n) const;
    void validate_credit_queue(const config_node& n) const;
};

}  // namespace fabricsim::sw
