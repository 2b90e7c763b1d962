#pragma once
/// Server NIC with one Ethernet port: a TX queue in front of the MAC and an RX path to the host.
/// Timing model: a frame the host posts at t (t may lie up to the host's lookahead ahead of
/// now) reaches the MAC at t + tx_latency (descriptor fetch + DMA, fixed) and goes on the wire
/// as soon as the wire is free, FIFO; one kernel event per frame that has to wait. On receive,
/// the MAC checks the FCS (store-and-forward) and hands the frame to the host at
/// now + rx_latency (annotated, no event); that is the ideal PCIe model (below for the real
/// one). The RX ring, interrupt coalescing, NAPI polls on the host's cores and GRO are the
/// host's receive path behind `rx.napi` (algo/interrupt_coalescer.h, host/algo/rx_cpu.h). Ignored:
/// the NIC clock (no rounding to its cycles).
/// MAC control: received PAUSE/PFC frames go to the TX's pause_reaction (when honoured) and
/// never to the host; send_control() puts a control frame on the wire at the next frame
/// boundary, ahead of queued data. With flow control honoured, frames the host posts ahead are
/// not committed to the wire before their time (they wait in the TX queue, one event each), so
/// a pause can hold them; the TX queue is then one FIFO per priority (PCP, else DSCP / 8, the
/// switch's default map), served oldest head first among the priorities not paused.
/// Rate limiters: with DCQCN on (`dcqcn.mode`), the NIC owns a bank of `rate_limiters` pacers
/// (plain C++, algo/rate_limiter.h) and the DCQCN parameters at its rate; the RoCE transport's
/// QP scheduler paces each bound flow through it (host/roce_transport.h).
/// QCN reaction points (`qcn.mode`, algo/qcn_limiters.h): a CNM received ends at the NIC and
/// binds its flow to one of `qcn.rate_limiters` limiters, whose 802.1Qau RP sets its rate;
/// frames enter the QCN stage at their ready time (one event each, as the pacer's), those of
/// bound flows wait in their limiter's FIFO and leave at its next-send time (one event per
/// departure and per RP timer), the others pass at once. The stage hands a frame on only while
/// the MAC holds none waiting (back-pressure: under PAUSE the frames wait here, per limiter,
/// and leave at the rates in force when the MAC frees), serving the limiters with a frame due
/// round robin, alternating with a waiting frame of an unbound flow. Off, a CNM goes to the host.
/// BCN reaction points (`bcn.mode`, algo/bcn_limiters.h; a NIC runs QCN or BCN): the same
/// stage with BCN's per-flow AIMD regulators; a BCN message ends at the NIC, and frames of a
/// flow whose regulator is installed carry its rate-regulator tag (docs/models/bcn.md).
/// PCIe and DMA (`pcie.model` other than ideal): the fixed latencies give way to the TX DMA
/// engine (algo/tx_dma.h: rings, doorbell, descriptor fetch, payload reads, LSO, TX buffer) and
/// RX DMA writes (frame, then its 16 B completion) on one PCIe link (algo/pcie_link.h). The
/// engine runs at its own timer: one event per descriptor fetch, none per frame; frames it
/// makes ready join the MAC queue as posts do.
/// HULL pacer (`pacer.mode`, algo/hull_pacer.h): frames the host posts (after tx_latency, or
/// out of the DMA engine, i.e. after LSO) enter the pacer at their ready time (one event each),
/// ECN-Echo ACKs received associate their flows, and paced frames join the MAC queue when the
/// token bucket lets them (one event per departure, plus one per rate update while frames
/// wait).
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <systemc>

#include "fabricsim/core/config.h"
#include "fabricsim/core/eth_protocol.h"
#include "fabricsim/core/frame_pool.h"
#include "fabricsim/core/pause_reaction.h"
#include "fabricsim/core/ring.h"
#include "fabricsim/core/scheduler.h"
#include "fabricsim/core/stats.h"
#include "fabricsim/nic/algo/bcn_limiters.h"
#include "fabricsim/nic/algo/dcqcn.h"
#include "fabricsim/nic/algo/fera_limiters.h"
#include "fabricsim/nic/algo/hull_pacer.h"
#include "fabricsim/nic/algo/interrupt_coalescer.h"
#include "fabricsim/nic/algo/lso.h"
#include "fabricsim/nic/algo/pcie_link.h"
#include "fabricsim/nic/algo/qcn_limiters.h"
#include "fabricsim/nic/algo/rate_limiter.h"
#include "fabricsim/nic/algo/tx_dma.h"

namespace fabricsim::nic {

class nic_registers;

struct nic_config {
    ps_t tx_latency = 500 * PS_PER_NS;
    ps_t rx_latency = 500 * PS_PER_NS;
    std::uint32_t tx_queue_frames = 1024;
    /// The host's credit-class frames use the credit queue of the link's switch end at this
    /// end too (host::credit_queue_params); false: none here.
    bool credit_queue = true;
    pause_reaction_config flow_control;  ///< PAUSE/PFC honoured by the TX
    /// A PFC storm (a fault: a NIC that keeps sending XOFF, e.g. a stuck receive path): from
    /// `start` until `stop` the MAC sends PFC XOFF (quanta 0xFFFF) on `priorities`, re-sent
    /// every 0x7FFF quanta. priorities 0 = none.
    struct pfc_storm_config {
        std::uint8_t priorities = 0;
        ps_t start = 0;
        ps_t stop = ~ps_t(0);
    } pfc_storm;
    /// DCQCN on this NIC's RoCE queue pairs: reaction point on the rate-limiter bank for the
    /// QPs it sends, notification point (CNPs) for those it receives. Overrides are applied to
    /// the preset; absent ones keep the preset's value.
    struct dcqcn_config {
        enum class preset : std::uint8_t { NONE, PAPER, MELLANOX, SCALED } mode = preset::NONE;
        std::optional<double> g;
        std::optional<ps_t> alpha_period, increase_period, decrease_period;
        std::optional<std::uint64_t> byte_counter, ai_rate, hai_rate, min_rate;
        std::optional<std::uint32_t> fast_recovery;
        std::optional<ps_t> cnp_interval;  ///< NP: at most one CNP per flow per interval
        std::uint8_t cnp_dscp = 48;        ///< Mellanox cnp_dscp
        bool enabled() const { return mode != preset::NONE; }
        /// The preset at `line_rate_bps` with the overrides (not validated).
        dcqcn_params params(std::uint64_t line_rate_bps) const;
        /// The notification point's CNP interval: given, else 50 us for paper (NS3RDMA,
        /// HTDCQCN), else 4 us (mellanox and scaled: the min_time_between_cnps of a ConnectX
        /// default table, 2 us in a ConnectX dump; their 1-us alpha timer decays alpha between
        /// CNPs, so it expects them that often).
        ps_t cnp_gap() const {
            return cnp_interval ? *cnp_interval : (mode == preset::PAPER ? 50 : 4) * PS_PER_US;
        }
    } dcqcn;
    /// Hardware rate limiters the reaction points share (flows are bound on their first CNP).
    std::uint32_t rate_limiters = 1024;
    /// QCN reaction points (802.1Qau RP, algo/qcn_rp.h) on a bank of their own after LSO, before
    /// the HULL pacer and the MAC: a preset with overrides, at the NIC's line rate.
    struct qcn_config {
        enum class preset : std::uint8_t {
            NONE,
            STANDARD,
            THESIS,
            THESIS_AIMD
        } mode = preset::NONE;
        std::optional<double> gd, min_decrease_factor, averaging_factor;
        std::optional<ps_t> time_reset;
        std::optional<std::uint64_t> byte_reset, ai_rate, hai_rate, min_rate;
        std::optional<std::uint32_t> threshold;
        std::optional<qcn_stage_rule> stage_rule;
        std::optional<bool> byte_counter_only, aimd, halve_in_hai, target_reduction,
            keep_target_in_first_cycle;
        /// Reaction points (rate limiters) of the NIC: the MIB's rpPortPriMaxRps default, 1.
        std::uint32_t rate_limiters = 1;
        /// Every limiter in use: SHARE limiter flow % rate_limiters, or NONE (ignore the CNM).
        bank_policy limiters_full = bank_policy::SHARE;
        bool enabled() const { return mode != preset::NONE; }
        /// The preset at `line_rate_bps` with the overrides (not validated).
        qcn_rp_params params(std::uint64_t line_rate_bps) const;
    } qcn;
    /// BCN reaction points (per-flow AIMD regulators, algo/bcn_rp.h) in the QCN stage's place
    /// (a NIC runs one of them): a preset with overrides, at the NIC's line rate.
    struct bcn_config {
        enum class preset : std::uint8_t { NONE, THESIS } mode = preset::NONE;
        std::optional<double> g_i, g_d, min_decrease_factor;
        std::optional<std::uint64_t> r_u, min_rate, initial_rate;
        /// Mean silence after a STOP (uniform in [0.5, 1.5) x this): one message interval of
        /// the thesis at 10 Gb/s (100 frames of 1500 B).
        ps_t stop_silence = 120 * PS_PER_US;
        std::uint32_t rate_limiters = 1;
        bank_policy limiters_full = bank_policy::SHARE;
        bool enabled() const { return mode != preset::NONE; }
        /// The preset at `line_rate_bps` with the overrides (not validated).
        bcn_rp_params params(std::uint64_t line_rate_bps) const;
    } bcn;
    /// FERA reaction points (one rate regulator per flow, algo/fera_limiters.h) after LSO,
    /// before the pacer and the MAC, and the reflection point for tagged frames received
    /// (docs/models/fera_bcn.md). Not with QCN.
    struct fera_config {
        enum class preset : std::uint8_t { NONE, THESIS } mode = preset::NONE;
        std::optional<double> n0;
        std::optional<ps_t> interval, tau;
        std::optional<bool> reset_only_when_idle;
        bool enabled() const { return mode != preset::NONE; }
        /// The preset at `line_rate_bps` with the overrides (not validated).
        fera_source_params params(std::uint64_t line_rate_bps) const;
    } fera;
    /// PCIe link and DMA engines; off (ideal) keeps tx_latency and rx_latency.
    struct dma_config {
        bool enabled = false;
        pcie_config pcie;
        tx_dma_config tx;                        ///< ring_size is tx_queue
        ps_t rx_pipeline = 50 * PS_PER_NS;       ///< RX DMA write done to the host seeing it
        std::uint32_t rx_completion_bytes = 16;  ///< RX completion written after the frame
    } dma;
    /// HULL's hardware pacer after LSO (docs/models/hull.md): a preset with overrides, at the
    /// NIC's line rate.
    struct pacer_config {
        enum class preset : std::uint8_t { NONE, TESTBED, NS2 } mode = preset::NONE;
        std::optional<ps_t> update_period, idle_timeout, token_period;
        std::optional<double> eta, beta, p_a;
        std::optional<std::uint32_t> table_entries;
        std::optional<bank_policy> table_full;
        std::optional<std::uint64_t> depth, fifo, granularity, initial_rate;
        bool enabled() const { return mode != preset::NONE; }
        /// The preset at `line_rate_bps` with the overrides (not validated).
        hull_pacer_params params(std::uint64_t line_rate_bps) const;
    } pacer;
    /// The host's receive path (host/algo/rx_cpu.h, gro.h), part of the node's profile: with
    /// `napi`, received frames take a slot of an RX ring, the NIC's interrupt moderation
    /// signals them and the host's cores poll them (NAPI) at a CPU cost, optionally merging a
    /// flow's in-order segments (GRO); off, each frame reaches the transport at its DMA time.
    struct rx_path_config {
        bool napi = false;
        coalesce_params coalesce;
        bool gro = true;
        rx_cpu_params cpu;
    } rx;
    /// LSO (with a DMA model only): the host hands sends of up to max_bytes.
    bool lso_enabled = false;
    lso_params lso;
    /// The register block on a TLM-2.0 target socket (nic_registers.h), for virtual platforms
    /// with a CPU model; off, the NIC has no socket to bind. Not a scenario key: the JSON
    /// platforms have no initiator to bind it to.
    struct csr_config {
        bool enabled = false;
        ps_t read_latency = 100 * PS_PER_NS;  ///< MMIO read round trip (the CPU stalls)
        ps_t write_latency = 50 * PS_PER_NS;  ///< posted MMIO write to the NIC seeing it
    } csr;

    /// Host post to the frame's first bit at an idle MAC, for an `l2_bytes` frame on an idle
    /// link (the idle-path model and the RoCE QP scheduler's look-ahead).
    ps_t idle_tx_latency(std::uint32_t l2_bytes) const;
    /// Last bit at the MAC to host memory for an `l2_bytes` frame on an idle link.
    ps_t idle_rx_latency(std::uint32_t l2_bytes) const;

    /// The `nic:` keys: schema and loading (config.h).
    static const param_table<nic_config>& params();
};

/// What the NIC calls on its host.
class nic_host_if
{
public:
    virtual ~nic_host_if() = default;
    /// Frame `f` reaches host memory at absolute time `at` (>= now). The host owns `f`.
    virtual void nic_rx(frame& f, ps_t at) = 0;
    /// The TX queue has room again after request_tx_ready() (called at the time it frees).
    virtual void nic_tx_ready() {}
    /// The host's receive ring `queue` (its indices mod 2^32 in the NIC's registers).
    struct rx_ring_status {
        std::uint32_t size = 0;
        std::uint64_t written = 0;    ///< frames the NIC wrote (tail)
        std::uint64_t processed = 0;  ///< frames the host has processed (head)
        std::uint32_t peak = 0;
    };
    /// False when the host has no receive ring model (nic_config::rx.napi off) or no `queue`.
    virtual bool nic_rx_ring(unsigned queue, rx_ring_status& out) const {
        (void)queue;
        (void)out;
        return false;
    }
    /// Interrupt moderation of every receive queue, as the NIC's registers set it; false when
    /// the host has none (rx.napi off). `interrupts`: raised so far.
    virtual bool nic_coalescing(coalesce_params& out, std::uint64_t& interrupts) const {
        (void)out;
        (void)interrupts;
        return false;
    }
    virtual bool nic_set_coalescing(const coalesce_params& p) {
        (void)p;
        return false;
    }
};

class nic_device : public sc_core::sc_module, public frame_receiver, public stats_provider
{
public:
    /// `seed`: the run seed (the pacer's association draws derive from it and the name).
    nic_device(const sc_core::sc_module_name& name, const nic_config& cfg, std::uint64_t rate_bps,
               std::uint64_t seed = 0);
    ~nic_device() override;

    eth_tx_port tx{"tx"};
    eth_rx_port rx{"rx", *this, 0};

    void attach_host(nic_host_if& host) { m_host = &host; }
    nic_host_if* host() const { return m_host; }
    /// Host posts `f` for transmission at absolute time `at` (>= now). Takes ownership.
    /// Posts must come in non-decreasing `at` order.
    void post(frame& f, ps_t at);
    /// LSO (config().lso_enabled only): `big` is a TCP send of up to lso.max_bytes payload that
    /// the NIC cuts into `mss` segments.
    void post_lso(frame& big, ps_t at, std::uint32_t mss) { post_dma(big, at, mss); }
    /// LSO sends up to this payload; 0 when the NIC does no LSO.
    std::uint32_t lso_max_bytes() const { return m_cfg.lso_enabled ? m_cfg.lso.max_bytes : 0; }
    std::uint64_t rate_bps() const { return m_rate_bps; }
    /// Frames the TX queue can still take (with DMA: also no more than the fullest ring's free
    /// descriptors).
    std::size_t tx_queue_free() const {
        return m_slow_tx ? tx_free_slow() : m_cfg.tx_queue_frames - m_queue.size();
    }
    std::size_t tx_queue_capacity() const { return m_cfg.tx_queue_frames; }
    /// Call the host's nic_tx_ready() once the TX queue holds at most `at_most` frames (when
    /// several ask, the largest bound wins; a caller whose bound is not met asks again).
    void request_tx_ready(std::size_t at_most) {
        m_notify_at_most = m_notify_host ? std::max(m_notify_at_most, at_most) : at_most;
        m_notify_host = true;
    }
    /// Frames in the TX queue (posted, not yet on the wire).
    std::size_t tx_queued() const { return queued(); }
    /// The PCIe link, nullptr without a DMA model.
    const pcie_link* pcie() const { return m_pcie.get(); }
    const tx_dma* dma() const { return m_dma.get(); }
    const nic_config& config() const { return m_cfg; }
    /// The register block (child module `csr`, its socket `csr.socket`); nullptr unless
    /// csr.enabled.
    nic_registers* csr() { return m_csr.get(); }
    /// DCQCN reaction-point parameters at this NIC's rate; nullptr when DCQCN is off.
    const dcqcn_params* dcqcn() const { return m_dcqcn ? &*m_dcqcn : nullptr; }
    /// The rate-limiter bank; nullptr when nothing uses it (DCQCN off, no paced GEMINI flow).
    rate_limiter_bank* limiters() { return m_limiters.get(); }
    /// The bank of `rate_limiters` limiters, made on first use by a transport that paces on it
    /// (GEMINI) when DCQCN has not made it. Call at elaboration.
    rate_limiter_bank& limiter_bank();
    const rate_limiter_bank* limiters() const { return m_limiters.get(); }
    /// The HULL pacer; nullptr when pacer.mode is none.
    const hull_pacer* pacer() const { return m_pacer.get(); }
    /// The QCN reaction points; nullptr when qcn.mode is none.
    const qcn_limiters* qcn() const { return m_qcn.get(); }
    /// The BCN reaction points; nullptr when bcn.mode is none.
    const bcn_limiters* bcn() const { return m_bcn.get(); }
    /// The FERA reaction points; nullptr when fera.mode is none.
    const fera_limiters* fera() const { return m_fera.get(); }

    void receive(unsigned port, frame& f) override;
    /// Sends control frame `f` at max(now, wire free), before queued data, also while paused.
    [[gnu::cold]] void send_control(frame& f);
    /// The pause reaction, nullptr when the NIC honours neither PAUSE nor PFC.
    const pause_reaction* pause() const { return m_reaction.get(); }
    /// PFC priority of a data frame: its PCP when tagged, else DSCP / 8 (the switch default).
    static unsigned priority_of(const frame& f) { return f.vlan_tagged ? f.pcp : f.dscp >> 3u; }

    struct stats {
        std::uint64_t tx_frames = 0;
        std::uint64_t tx_bytes = 0;
        std::uint64_t rx_frames = 0;
        std::uint64_t rx_bytes = 0;
        std::uint64_t tx_queue_peak = 0;
        std::uint64_t rx_control_frames = 0;  ///< MAC-control frames received (not data)
        std::uint64_t tx_control_frames = 0;  ///< control frames sent
        std::uint64_t rx_cnms = 0;            ///< CNMs consumed by the QCN reaction points
        std::uint64_t rx_bcn_messages = 0;    ///< BCN messages consumed by the BCN RPs
        std::uint64_t fera_reflected = 0;     ///< returning FERA tags sent (reflection point)
        drop_counters drops;
    };
    const stats& get_stats() const { return m_stats; }
    void report_stats(nlohmann::json& out) const override;
    void add_drops(drop_counters& d) const override { d += m_stats.drops; }
    std::uint64_t frames_held() const override { return queued(); }
    /// Time-series columns of what this NIC has on, none otherwise: the pacer (rate, FIFO
    /// backlog, associated flows) and the rate-limiter bank (limiters in use, associated flows,
    /// lowest and mean rate of the limiters in use, an unlimited one at the line rate).
    std::vector<std::string> series_columns() const;
    /// Their values at now, each as ",value", in series_columns() order.
    void append_series(std::string& row) const;

private:
    frame_pool& m_pool = frame_pool::current();  // the platform's (frame_pool::scope)
    [[gnu::cold, gnu::noinline]] void post_slow(frame& f, ps_t at);
    void on_wire_free();
    /// Starts the FIFO's head when it may go; DMA: the TX buffer frees and the engine runs.
    /// Always inlined (as start()): the pacer's paths call them too, and an out-of-line copy
    /// costs the plain FIFO's per-frame path instructions.
    template <bool DMA>
    [[gnu::always_inline]] inline void serve_fifo(ps_t now);
    template <bool DMA = false>
    [[gnu::always_inline]] inline void start(frame& f, ps_t at, ps_t now);
    // The control and pause paths are cold and out of line: the data path stays as it was.
    [[gnu::cold, gnu::noinline]] void receive_control(frame& f);
    /// A received data frame (or a CNM without QCN) to the host.
    [[gnu::always_inline]] inline void deliver(frame& f);
    [[gnu::cold, gnu::noinline]] void on_pause_due();
    [[gnu::cold, gnu::noinline]] void on_storm();
    /// With flow control: per-priority TX queues (below).
    [[gnu::cold, gnu::noinline]] void post_class(frame& f, ps_t ready);
    [[gnu::cold, gnu::noinline]] void serve_classes(ps_t now);
    /// Frames posted and not yet on the wire (with DMA: in the rings, as LSO segments to come,
    /// and at the MAC).
    std::size_t queued() const { return m_slow_tx ? queued_slow() : m_queue.size(); }
    std::size_t queued_slow() const {
        return mac_queued() + (m_dma ? m_dma->frames_pending() : 0) + m_pacer_in.size() +
               m_paced.size() + m_qcn_in.size() + m_qcn_held + m_fera_in.size() + m_fera_held;
    }
    std::size_t tx_free_slow() const {
        if (m_dma) return dma_ring_free();
        const std::size_t held = queued_slow();
        return held < m_cfg.tx_queue_frames ? m_cfg.tx_queue_frames - held : 0;
    }
    /// MAC frames waiting for the wire (the TX queue without DMA).
    std::size_t mac_queued() const { return m_reaction ? m_class_frames : m_queue.size(); }
    // The DMA model (cold: a NIC without it never calls these).
    [[gnu::cold, gnu::noinline]] void post_dma(frame& f, ps_t at, std::uint32_t mss);
    [[gnu::cold, gnu::noinline]] void run_dma();
    [[gnu::cold, gnu::noinline]] void mac_enqueue(frame& f, ps_t ready);
    /// Off the slow paths (DMA, pacer) into the MAC queue, to leave at `ready` or later.
    [[gnu::cold, gnu::noinline]] void to_mac(frame& f, ps_t ready);
    // The pacer (cold: a NIC without it never calls these).
    [[gnu::cold, gnu::noinline]] void pace(frame& f, ps_t ready);
    [[gnu::cold, gnu::noinline]] void on_pacer();
    [[gnu::cold, gnu::noinline]] void pacer_ack(const frame& f);
    void arm_pacer(ps_t now);
    void report_pacer(nlohmann::json& out) const;
    /// After LSO (and the DMA engine): into the QCN stage, else the pacer, else the MAC.
    [[gnu::cold, gnu::noinline]] void tx_stage(frame& f, ps_t ready);
    // The QCN reaction points (cold: a NIC without them never calls these).
    [[gnu::cold, gnu::noinline]] void receive_cnm(frame& f);
    [[gnu::cold, gnu::noinline]] void on_qcn();
    /// Out of the QCN/BCN stage at `now`: into the pacer, else the MAC.
    void limited_forward(frame& f, ps_t now);
    /// The QCN/BCN stage may hand a frame on: the MAC holds none waiting (back-pressure: under
    /// PAUSE frames wait in the stage, not behind the PAUSE); always with a pacer after it.
    bool stage_may_send() const { return m_pacer || mac_queued() == 0; }
    /// One pass of the QCN/BCN stage at `now` over `bank` (qcn_limiters or bcn_limiters):
    /// `limiter_of(frame)` is the frame's limiter or NONE, `tag(frame, l)` runs before a frame
    /// of limiter l leaves.
    template <class BANK, class LIMITER_OF, class TAG>
    void run_limiter_stage(BANK& bank, ps_t now, LIMITER_OF&& limiter_of, TAG&& tag);
    /// Arms the stage's `timer` at the earliest of `next` (the bank's own timers) and what the
    /// stage waits for.
    template <class BANK>
    void arm_limiter_stage(BANK& bank, model_timer& timer, ps_t now, ps_t next);
    void arm_qcn(ps_t now);
    void report_qcn(nlohmann::json& out) const;
    // The BCN reaction points (cold), in the QCN stage's place: its rings and FIFOs.
    [[gnu::cold, gnu::noinline]] void receive_bcn(frame& f);
    [[gnu::cold, gnu::noinline]] void on_bcn();
    /// A frame of limiter `l` leaving the BCN stage gets the limiter's RRT (if installed).
    void bcn_tag(frame& f, unsigned l);
    void arm_bcn(ps_t now);
    void report_bcn(nlohmann::json& out) const;
    // The FERA reaction and reflection points (cold: a NIC without them never calls these).
    [[gnu::cold, gnu::noinline]] void receive_fera_tag(frame& f);
    [[gnu::cold, gnu::noinline]] void reflect_fera(const frame& f);
    [[gnu::cold, gnu::noinline]] void on_fera();
    void fera_send(unsigned i, frame& f, ps_t now);
    void arm_fera(ps_t now);
    void report_fera(nlohmann::json& out) const;
    [[gnu::cold, gnu::noinline]] ps_t rx_dma(const frame& f, ps_t now);
    /// The receive path with DMA or a pacer: when the host sees `f`.
    [[gnu::cold, gnu::noinline]] ps_t rx_slow(const frame& f, ps_t now);
    std::size_t dma_ring_free() const;
    void report_dma(nlohmann::json& out) const;
    void push_class(frame& f, ps_t ready);
    void tell_host_if_drained();
    /// The head cannot start before `t` (a control frame holds the wire, or a pause).
    [[gnu::cold, gnu::noinline]] void wait_until(ps_t t) { m_wire_free.arm_at(t); }

    struct entry {
        frame* f;
        ps_t ready;
    };
    struct class_entry {
        frame* f;
        ps_t ready;
        std::uint64_t seq;  ///< post order across the classes
    };
    nic_config m_cfg;
    std::uint64_t m_rate_bps;
    nic_host_if* m_host = nullptr;
    ring<entry> m_queue;  ///< without flow control: one FIFO
    /// With flow control: one FIFO per priority; the oldest head whose priority is not paused
    /// goes first, so a paused priority does not block the others.
    /// Allocated only with flow control (a NIC without it pays no memory for it).
    std::unique_ptr<std::array<ring<class_entry>, 8>> m_class;
    std::size_t m_class_frames = 0;
    std::uint64_t m_class_seq = 0;
    ps_t m_busy_until = 0;
    bool m_notify_host = false;
    std::size_t m_notify_at_most = 0;
    model_timer m_wire_free = model_timer::bind<nic_device, &nic_device::on_wire_free>(this);
    stats m_stats;
    std::unique_ptr<pause_reaction> m_reaction;
    model_timer m_pause_due = model_timer::bind<nic_device, &nic_device::on_pause_due>(this);
    model_timer m_storm = model_timer::bind<nic_device, &nic_device::on_storm>(this);
    std::uint64_t m_storm_frames = 0;
    // Cold: read by the RoCE transport, never on the NIC's own frame path.
    std::optional<dcqcn_params> m_dcqcn;
    std::unique_ptr<rate_limiter_bank> m_limiters;  ///< only with a reaction point
    // The DMA model, only with pcie.model set.
    struct dma_sink final : tx_dma_sink {
        explicit dma_sink(nic_device& n) : nic(n) {}
        frame& dma_new_frame() override;
        void dma_release(frame& f) override;
        void dma_ready(frame& f, ps_t ready) override { nic.mac_enqueue(f, ready); }
        void dma_ring_freed() override { nic.tell_host_if_drained(); }
        nic_device& nic;
    };
    std::unique_ptr<pcie_link> m_pcie;
    std::unique_ptr<tx_dma> m_dma;
    dma_sink m_sink{*this};
    model_timer m_dma_timer = model_timer::bind<nic_device, &nic_device::run_dma>(this);
    bool m_dma_running = false;
    bool m_slow_tx = false;  ///< flow control or DMA: the TX paths off the plain FIFO
    bool m_slow_rx = false;  ///< DMA or pacer: the receive path off the plain latency
    bool m_dma_again = false;
    std::unique_ptr<nic_registers> m_csr;  ///< only with csr.enabled
    // The pacer, only with pacer.mode set.
    struct pacer_entry {
        frame* f;
        ps_t ready;
    };
    std::unique_ptr<hull_pacer> m_pacer;
    ring<pacer_entry> m_pacer_in{1};  ///< posted, not yet at the pacer (ready later)
    ring<frame*> m_paced{1};          ///< the pacer FIFO's frames, oldest first
    model_timer m_pacer_timer = model_timer::bind<nic_device, &nic_device::on_pacer>(this);
    // The QCN reaction points, only with qcn.mode set; the rings and FIFOs serve BCN's too.
    std::unique_ptr<qcn_limiters> m_qcn;
    ring<pacer_entry> m_qcn_in{1};         ///< posted, not yet at the QCN (or BCN) stage
    std::vector<ring<frame*>> m_qcn_fifo;  ///< per limiter: its frames, oldest first
    std::size_t m_qcn_held = 0;            ///< frames in every m_qcn_fifo
    unsigned m_stage_last = ~0u;           ///< the limiter the stage served last (round robin)
    bool m_stage_input_turn = false;       ///< an unbound frame goes before the next limiter's
    std::unique_ptr<bcn_limiters> m_bcn;   ///< only with bcn.mode set
    model_timer m_bcn_timer = model_timer::bind<nic_device, &nic_device::on_bcn>(this);
    std::vector<unsigned> m_qcn_scratch;  ///< the limiters in use, copied per event
    model_timer m_qcn_timer = model_timer::bind<nic_device, &nic_device::on_qcn>(this);
    // The FERA reaction points, only with fera.mode set.
    std::unique_ptr<fera_limiters> m_fera;
    ring<pacer_entry> m_fera_in{1};           ///< posted, not yet at the FERA stage
    std::vector<ring<frame*>> m_fera_fifo;    ///< per regulator: its held frames, oldest first
    std::vector<unsigned> m_fera_backlogged;  ///< regulators holding frames, in index order
    std::size_t m_fera_held = 0;              ///< frames in every m_fera_fifo
    unsigned m_fera_last = 0;                 ///< the regulator that sent last (round robin)
    model_timer m_fera_timer = model_timer::bind<nic_device, &nic_device::on_fera>(this);
    /// Banks of at most this many QCN limiters get a time-series column per limiter.
    static constexpr unsigned QCN_SERIES_PER_LIMITER = 8;
};

}  // namespace fabricsim::nic
