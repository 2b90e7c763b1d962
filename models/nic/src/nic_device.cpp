#include "fabricsim/nic/nic_device.h"

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

#include "fabricsim/core/csv.h"
#include "fabricsim/core/frame_pool.h"
#include "fabricsim/core/kernel.h"
#include "fabricsim/core/log_histogram.h"
#include "fabricsim/core/rng.h"
#include "fabricsim/nic/nic_registers.h"

namespace fabricsim::nic {

namespace {

constexpr const char* NOT_WITH_PCIE =
    "does not apply with a pcie.model (only its default 500ns is taken, and ignored): the PCIe "
    "and DMA model gives the latency (see dma.tx_pipeline, dma.rx_pipeline)";
constexpr const char* NEEDS_PCIE = "applies only with a pcie.model (not ideal)";

/// Fails on `v` if `e` is about its key.
template <class E>
void fail_if_about(const config_value& v, const std::optional<E>& e) {
    if (e && e->field == v.key()) v.fail(e->reason);
}

/// nic.pcie.*, nic.dma.*, nic.lso.*: the PCIe link, the DMA engines and LSO.
void add_dma_keys(param_table<nic_config>& t) {
    t.choice<int>("pcie.model", "ideal",
                  "PCIe link and DMA: ideal (fixed tx_latency/rx_latency, no link), or a "
                  "preset (pcie-bench figures, docs/models/nic.md): gen3_x8, gen3_x16, gen4_x16",
                  {{"ideal", 0}, {"gen3_x8", 1}, {"gen3_x16", 2}, {"gen4_x16", 3}},
                  [](nic_config& c, int m) {
                      c.dma.enabled = m != 0;
                      c.dma.pcie = m == 1   ? pcie_config::gen3_x8()
                                   : m == 3 ? pcie_config::gen4_x16()
                                            : pcie_config::gen3_x16();
                  });
    using pcie_store = std::function<void(pcie_config&, const config_value&)>;
    auto pcie_key = [&t](const std::string& key, value_kind kind, const std::string& help,
                         const pcie_store& store) -> param_spec& {
        auto& s = t.add("pcie." + key, kind, "", help + " (absent: the model's)",
                        [store](nic_config& c, const config_value& v) {
                            if (!v.present()) return;
                            if (!c.dma.enabled) v.fail(NEEDS_PCIE);
                            store(c.dma.pcie, v);
                            fail_if_about(v, c.dma.pcie.validate());
                        });
        s.optional = true;
        return s;
    };
    auto u32 = [](const config_value& v) { return static_cast<std::uint32_t>(v.integer()); };
    auto& gen = pcie_key("generation", value_kind::INT, "PCIe generation 1..5",
                         [u32](pcie_config& p, const config_value& v) { p.generation = u32(v); });
    gen.min = 1;
    gen.max = 5;
    auto& lanes = pcie_key("lanes", value_kind::INT, "Lanes: 1, 2, 4, 8 or 16",
                           [u32](pcie_config& p, const config_value& v) { p.lanes = u32(v); });
    lanes.min = 1;
    lanes.max = 16;
    pcie_key("max_payload", value_kind::BYTES, "Max payload size MPS, 128..4096 B, a power of 2",
             [](pcie_config& p, const config_value& v) {
                 p.max_payload =
                     static_cast<std::uint32_t>(std::min<std::uint64_t>(v.bytes(), 1u << 30));
             });
    pcie_key("max_read_request", value_kind::BYTES,
             "Max read request size MRRS, 128..4096 B, a power of 2",
             [](pcie_config& p, const config_value& v) {
                 p.max_read_request =
                     static_cast<std::uint32_t>(std::min<std::uint64_t>(v.bytes(), 1u << 30));
             });
    pcie_key("read_latency", value_kind::TIME,
             "Host read round trip: request at the root complex to the first completion out",
             [](pcie_config& p, const config_value& v) { p.read_latency = v.time(); })
        .max = 1e9;
    pcie_key("write_latency", value_kind::TIME, "Last write byte at the root complex to memory",
             [](pcie_config& p, const config_value& v) { p.write_latency = v.time(); })
        .max = 1e9;
    auto& tags = pcie_key(
        "max_outstanding_reads", value_kind::INT, "DMA read tags: reads in flight at once, 1..1024",
        [u32](pcie_config& p, const config_value& v) { p.max_outstanding_reads = u32(v); });
    tags.min = 1;
    tags.max = 1024;

    using dma_store = std::function<void(nic_config&, const config_value&)>;
    // Optional (absent: the default in the help), so a run's config echo, which leaves absent
    // optional keys out, loads again with the ideal model.
    auto dma_key = [&t](const std::string& key, value_kind kind, const std::string& dflt,
                        const std::string& help, const dma_store& store) -> param_spec& {
        auto& s = t.add("dma." + key, kind, "", help + " (absent: " + dflt + ")",
                        [store](nic_config& c, const config_value& v) {
                            if (!v.present()) return;
                            if (!c.dma.enabled) v.fail(NEEDS_PCIE);
                            store(c, v);
                            fail_if_about(v, c.dma.tx.validate());
                        });
        s.optional = true;
        return s;
    };
    auto& rings = dma_key("rings", value_kind::INT, "1",
                          "TX rings (a frame uses ring priority % rings), 1..8",
                          [u32](nic_config& c, const config_value& v) { c.dma.tx.rings = u32(v); });
    rings.min = 1;
    rings.max = 8;
    auto& db = dma_key("descriptor_bytes", value_kind::BYTES, "16B",
                       "TX descriptor size (Intel advanced 16 B, mlx5 WQE 64 B)",
                       [](nic_config& c, const config_value& v) {
                           c.dma.tx.descriptor_bytes = static_cast<std::uint32_t>(
                               std::min<std::uint64_t>(v.bytes(), 1u << 30));
                       });
    db.max = 256;
    auto& fb = dma_key(
        "fetch_burst", value_kind::INT, "32", "Descriptors one fetch reads at most, 1..1024",
        [u32](nic_config& c, const config_value& v) { c.dma.tx.fetch_burst = u32(v); });
    fb.min = 1;
    fb.max = 1024;
    dma_key("tx_buffer", value_kind::BYTES, "160KiB",
            "On-NIC TX packet buffer: payload reads wait for room (Intel 82599 TXPBSIZE)",
            [](nic_config& c, const config_value& v) { c.dma.tx.tx_buffer = v.bytes(); });
    dma_key("doorbell_latency", value_kind::TIME, "150ns",
            "Host doorbell (MMIO write) to the NIC seeing the descriptor",
            [](nic_config& c, const config_value& v) { c.dma.tx.doorbell_latency = v.time(); })
        .max = 1e9;
    dma_key("tx_pipeline", value_kind::TIME, "50ns", "Payload in the NIC to the MAC",
            [](nic_config& c, const config_value& v) { c.dma.tx.tx_pipeline = v.time(); })
        .max = 1e9;
    dma_key("rx_pipeline", value_kind::TIME, "50ns",
            "RX: frame and completion written to the host seeing the frame",
            [](nic_config& c, const config_value& v) { c.dma.rx_pipeline = v.time(); })
        .max = 1e9;

    t.add("lso.enabled", value_kind::BOOL, "false",
          "Large send offload: the host's TCP hands sends of up to lso.max_bytes, the NIC cuts "
          "them into MSS segments (needs a pcie.model)",
          [](nic_config& c, const config_value& v) {
              c.lso_enabled = v.boolean();
              if (c.lso_enabled && !c.dma.enabled)
                  v.fail("needs a pcie.model: LSO is a stage of the DMA engine");
          });
    auto& lm = t.add("lso.max_bytes", value_kind::BYTES, "",
                     "Largest LSO send (payload), 1 B .. 256 KiB (absent: 64KiB)",
                     [](nic_config& c, const config_value& v) {
                         if (!v.present()) return;
                         if (!c.lso_enabled) v.fail("applies only with lso.enabled");
                         c.lso.max_bytes = static_cast<std::uint32_t>(
                             std::min<std::uint64_t>(v.bytes(), 1u << 30));
                         fail_if_about(v, c.lso.validate());
                     });
    lm.min = 1;
    lm.max = 262144;
    lm.optional = true;
}

/// nic.pacer.*: HULL's pacer, a preset and overrides.
void add_pacer_keys(param_table<nic_config>& t) {
    using preset = nic_config::pacer_config::preset;
    t.choice<preset>("pacer.mode", "none",
                     "HULL hardware pacer after LSO: none, testbed (NetFPGA, Table 4.3: T_r 64us, "
                     "eta 0.125, beta 16, p_a 0.125, T_i 10ms, tokens every 16us, depth 3KiB, "
                     "FIFO 128KiB, 64 flows) or ns2 (the 10G fat tree: T_r 7.2us, beta 375, T_i "
                     "1ms, tokens every 1.6us); at the NIC's line rate (docs/models/hull.md)",
                     {{"none", preset::NONE}, {"testbed", preset::TESTBED}, {"ns2", preset::NS2}},
                     [](nic_config& c, preset p) { c.pacer.mode = p; });
    using store_fn = std::function<void(nic_config::pacer_config&, const config_value&)>;
    auto opt = [&t](const std::string& key, value_kind kind, const std::string& help,
                    const store_fn& store) -> param_spec& {
        auto& s = t.add("pacer." + key, kind, "", help + " (absent: the preset's)",
                        [store](nic_config& c, const config_value& v) {
                            if (!v.present()) return;
                            if (!c.pacer.enabled()) v.fail("applies only with a pacer.mode");
                            store(c.pacer, v);
                        });
        s.optional = true;
        return s;
    };
    opt("update_period", value_kind::TIME, "Rate update period T_r",
        [](auto& p, const config_value& v) { p.update_period = v.time(); })
        .min = 1;
    auto& eta = opt("eta", value_kind::REAL, "Low-pass gain eta, (0, 1]",
                    [](auto& p, const config_value& v) { p.eta = v.real(); });
    eta.min = 1e-9;
    eta.max = 1;
    opt("beta", value_kind::REAL, "Backlog gain beta in 1/s (eq 4.4), >= 0",
        [](auto& p, const config_value& v) { p.beta = v.real(); })
        .min = 0;
    auto& pa = opt("p_a", value_kind::REAL, "Association probability per ECN-Echo ACK, [0, 1]",
                   [](auto& p, const config_value& v) { p.p_a = v.real(); });
    pa.min = 0;
    pa.max = 1;
    opt("idle_timeout", value_kind::TIME, "Association idle timeout T_i (0: never)",
        [](auto& p, const config_value& v) { p.idle_timeout = v.time(); });
    auto& te = opt("table_entries", value_kind::INT, "Flow association table entries (0: no limit)",
                   [](auto& p, const config_value& v) {
                       p.table_entries = static_cast<std::uint32_t>(v.integer());
                   });
    te.min = 0;
    te.max = 1 << 20;
    opt("table_full", value_kind::CHOICE, "A full table: none (the flow stays unpaced) or lru",
        [](auto& p, const config_value& v) {
            p.table_full = v.str() == "lru" ? bank_policy::LRU : bank_policy::NONE;
        })
        .choices = {"none", "lru"};
    opt("depth", value_kind::BYTES, "Token bucket depth (must hold a token at the line rate)",
        [](auto& p, const config_value& v) { p.depth = v.bytes(); })
        .min = 1;
    opt("fifo", value_kind::BYTES,
        "Pacer FIFO; a frame that does not fit is dropped "
        "(pacer_fifo_full)",
        [](auto& p, const config_value& v) { p.fifo = v.bytes(); })
        .min = 1;
    opt("token_period", value_kind::TIME, "Tokens every token_period",
        [](auto& p, const config_value& v) { p.token_period = v.time(); })
        .min = 1;
    opt("granularity", value_kind::BIT_RATE, "Rate granularity, also the lowest rate",
        [](auto& p, const config_value& v) { p.granularity = v.rate(); })
        .min = 1;
    opt("initial_rate", value_kind::BIT_RATE, "R_tb at the start (absent: the line rate)",
        [](auto& p, const config_value& v) { p.initial_rate = v.rate(); })
        .min = 1;
}

/// nic.fera.*: the FERA reaction points (per flow) and reflection point.
void add_fera_keys(param_table<nic_config>& t) {
    using preset = nic_config::fera_config::preset;
    t.choice<preset>(
        "fera.mode", "none",
        "FERA reaction point (one rate regulator per flow, starting at C/N_0, set to the rate "
        "of each returned tag) and reflection point (tagged frames received are answered with a "
        "returning tag): none, thesis (Jiang §8.1: N_0 20, T = tau = 1ms; "
        "docs/models/fera_bcn.md). Not with qcn.mode",
        {{"none", preset::NONE}, {"thesis", preset::THESIS}},
        [](nic_config& c, preset p) { c.fera.mode = p; });
    using store_fn = std::function<void(nic_config::fera_config&, const config_value&)>;
    auto opt = [&t](const std::string& key, value_kind kind, const std::string& help,
                    const store_fn& store) -> param_spec& {
        auto& s = t.add("fera." + key, kind, "", help + " (absent: the preset's)",
                        [store](nic_config& c, const config_value& v) {
                            if (!v.present()) return;
                            if (!c.fera.enabled()) v.fail("applies only with a fera.mode");
                            store(c.fera, v);
                        });
        s.optional = true;
        return s;
    };
    opt("n0", value_kind::REAL, "N_0: a flow starts at r_0 = C/N_0 (the switches' value)",
        [](auto& f, const config_value& v) { f.n0 = v.real(); });
    opt("interval", value_kind::TIME, "The switches' T: idle reset after 2T without a tag",
        [](auto& f, const config_value& v) { f.interval = v.time(); });
    opt("tau", value_kind::TIME, "Tagging interval tau (<= interval)",
        [](auto& f, const config_value& v) { f.tau = v.time(); });
    opt("reset_only_when_idle", value_kind::BOOL,
        "Idle reset to C/N_0 after 2T without a returned tag and without a frame sent (the "
        "thesis' words; thesis preset: true); false: 2T without a returned tag alone",
        [](auto& f, const config_value& v) { f.reset_only_when_idle = v.boolean(); });
}

/// nic.qcn.*: the QCN reaction points, a preset and overrides (names of the 802.1Qau MIB's rpg*).
void add_qcn_keys(param_table<nic_config>& t) {
    using preset = nic_config::qcn_config::preset;
    t.choice<preset>(
        "qcn.mode", "none",
        "802.1Qau QCN reaction points (a CNM received binds its flow to a rate limiter): none, "
        "standard (MIB defaults: Gd 1/128, time_reset 15ms, byte_reset 150000B, threshold 5, "
        "R_AI 5Mbps, R_HAI 50Mbps, min_rate 5Mbps, min_decrease_factor 0.5), thesis (Alizadeh: "
        "byte counter only, 150KB, 5 FR cycles, no HAI) or thesis_aimd (QCN-AIMD); at the NIC's "
        "line rate (docs/models/qcn.md)",
        {{"none", preset::NONE},
         {"standard", preset::STANDARD},
         {"thesis", preset::THESIS},
         {"thesis_aimd", preset::THESIS_AIMD}},
        [](nic_config& c, preset p) { c.qcn.mode = p; });
    using store_fn = std::function<void(nic_config::qcn_config&, const config_value&)>;
    auto opt = [&t](const std::string& key, value_kind kind, const std::string& help,
                    const store_fn& store) -> param_spec& {
        auto& s = t.add("qcn." + key, kind, "", help + " (absent: the preset's)",
                        [store](nic_config& c, const config_value& v) {
                            if (!v.present()) return;
                            if (!c.qcn.enabled()) v.fail("applies only with a qcn.mode");
                            store(c.qcn, v);
                        });
        s.optional = true;
        return s;
    };
    auto& gd = opt("gd", value_kind::REAL, "Decrease gain Gd, (0, 1] (rpgGd 7 = 1/128)",
                   [](auto& q, const config_value& v) { q.gd = v.real(); });
    gd.min = 1e-9;
    gd.max = 1;
    opt("time_reset", value_kind::TIME, "rpgTimeReset: RP timer period (halved in HAI)",
        [](auto& q, const config_value& v) { q.time_reset = v.time(); })
        .min = 1;
    opt("byte_reset", value_kind::BYTES, "rpgByteReset: byte counter period (halved in HAI)",
        [](auto& q, const config_value& v) { q.byte_reset = v.bytes(); })
        .min = 1;
    auto& th = opt("threshold", value_kind::INT,
                   "rpgThreshold: byte/timer cycles before leaving fast recovery, 1..1000",
                   [](auto& q, const config_value& v) {
                       q.threshold = static_cast<std::uint32_t>(v.integer());
                   });
    th.min = 1;
    th.max = 1000;
    opt("ai_rate", value_kind::BIT_RATE, "rpgAiRate: active increase R_AI",
        [](auto& q, const config_value& v) { q.ai_rate = v.rate(); });
    opt("hai_rate", value_kind::BIT_RATE, "rpgHaiRate: hyper-active increase R_HAI",
        [](auto& q, const config_value& v) { q.hai_rate = v.rate(); });
    opt("min_rate", value_kind::BIT_RATE, "rpgMinRate: lowest rate (at most the line rate)",
        [](auto& q, const config_value& v) { q.min_rate = v.rate(); })
        .min = 1;
    auto& md = opt("min_decrease_factor", value_kind::REAL,
                   "rpgMinDecFac / 100: a cut keeps at least this share of the rate, [0, 1]",
                   [](auto& q, const config_value& v) { q.min_decrease_factor = v.real(); });
    md.min = 0;
    md.max = 1;
    auto& af = opt("averaging_factor", value_kind::REAL,
                   "a in CR <- (1 - a) CR + a TR at each increase, (0, 1] (0.5)",
                   [](auto& q, const config_value& v) { q.averaging_factor = v.real(); });
    af.min = 1e-9;
    af.max = 1;
    opt("stage_rule", value_kind::CHOICE,
        "How an increase picks FR/AI/HAI: both (QCN paper: none / one / both stages at the "
        "threshold) or per_counter (NS3RDMA)",
        [](auto& q, const config_value& v) {
            q.stage_rule = v.str() == "per_counter" ? qcn_stage_rule::PER_COUNTER
                                                    : qcn_stage_rule::BOTH_COUNTERS;
        })
        .choices = {"both", "per_counter"};
    opt("byte_counter_only", value_kind::BOOL, "No RP timer (the thesis' analysis)",
        [](auto& q, const config_value& v) { q.byte_counter_only = v.boolean(); });
    opt("aimd", value_kind::BOOL, "QCN-AIMD: no fast recovery, CR += R_AI per increase event",
        [](auto& q, const config_value& v) { q.aimd = v.boolean(); });
    opt("halve_in_hai", value_kind::BOOL, "Byte counter and timer reload at half in HAI",
        [](auto& q, const config_value& v) { q.halve_in_hai = v.boolean(); });
    opt("target_reduction", value_kind::BOOL, "TR <- TR/8 when TR > 10 CR at the first event",
        [](auto& q, const config_value& v) { q.target_reduction = v.boolean(); });
    opt("keep_target_in_first_cycle", value_kind::BOOL,
        "A CNM in the first fast-recovery cycle keeps TR (NS3RDMA)",
        [](auto& q, const config_value& v) { q.keep_target_in_first_cycle = v.boolean(); });
    auto& rl = t.add("qcn.rate_limiters", value_kind::INT, "",
                     "Reaction points (rate limiters) for QCN, 1..65536 (absent: 1, the MIB's "
                     "rpPortPriMaxRps default); a flow is bound to a free one at its first CNM",
                     [](nic_config& c, const config_value& v) {
                         if (!v.present()) return;
                         if (!c.qcn.enabled()) v.fail("applies only with a qcn.mode");
                         c.qcn.rate_limiters = static_cast<std::uint32_t>(v.integer());
                     });
    rl.min = 1;
    rl.max = 1 << 16;
    rl.optional = true;
    auto& lf = t.add("qcn.limiters_full", value_kind::CHOICE, "",
                     "A CNM for a new flow when every QCN limiter is in use: share (the flow "
                     "joins limiter flow % rate_limiters and its RP, counted shared_bindings) or "
                     "ignore (the flow stays at line rate, counted cnms_ignored) (absent: share)",
                     [](nic_config& c, const config_value& v) {
                         if (!v.present()) return;
                         if (!c.qcn.enabled()) v.fail("applies only with a qcn.mode");
                         c.qcn.limiters_full =
                             v.str() == "ignore" ? bank_policy::NONE : bank_policy::SHARE;
                     });
    lf.choices = {"share", "ignore"};
    lf.optional = true;
}

/// nic.bcn.*: the BCN reaction points, a preset and overrides of every bcn_rp_params field.
void add_bcn_keys(param_table<nic_config>& t) {
    using preset = nic_config::bcn_config::preset;
    auto& m = t.add(
        "bcn.mode", value_kind::CHOICE, "none",
        "BCN reaction points (per-flow AIMD rate regulators, installed by a flow's first "
        "negative BCN message; not with qcn.mode): none or thesis (G_i 0.53, G_d 2.6e-4, R_u "
        "1Mbps, min_rate 100Mbps: fixed point G_i R_u / G_d = 2.04 Gb/s) (docs/models/bcn.md)",
        [](nic_config& c, const config_value& v) {
            c.bcn.mode = v.str() == "thesis" ? preset::THESIS : preset::NONE;
            if (c.bcn.enabled() && c.qcn.enabled())
                v.fail("a NIC runs QCN or BCN reaction points, not both (qcn.mode is set)");
        });
    m.choices = {"none", "thesis"};
    using store_fn = std::function<void(nic_config::bcn_config&, const config_value&)>;
    auto opt = [&t](const std::string& key, value_kind kind, const std::string& dflt,
                    const std::string& help, const store_fn& store) -> param_spec& {
        auto& s = t.add("bcn." + key, kind, "", help + " (absent: " + dflt + ")",
                        [store](nic_config& c, const config_value& v) {
                            if (!v.present()) return;
                            if (!c.bcn.enabled()) v.fail("applies only with a bcn.mode");
                            store(c.bcn, v);
                        });
        s.optional = true;
        return s;
    };
    auto& gi = opt("g_i", value_kind::REAL, "the preset's", "Additive-increase gain G_i",
                   [](auto& b, const config_value& v) { b.g_i = v.real(); });
    gi.min = 1e-12;
    gi.max = 1e6;
    auto& gd =
        opt("g_d", value_kind::REAL, "the preset's", "Multiplicative-decrease gain G_d, (0, 1)",
            [](auto& b, const config_value& v) { b.g_d = v.real(); });
    gd.min = 1e-12;
    gd.max = 0.999999;
    opt("r_u", value_kind::BIT_RATE, "the preset's", "Rate unit R_u of an increase",
        [](auto& b, const config_value& v) { b.r_u = v.rate(); })
        .min = 1;
    opt("min_rate", value_kind::BIT_RATE, "the preset's",
        "Lowest rate, and the rate after a STOP (at most the line rate)",
        [](auto& b, const config_value& v) { b.min_rate = v.rate(); })
        .min = 1;
    auto& md = opt("min_decrease_factor", value_kind::REAL, "the preset's",
                   "A decrease keeps at least this share of the rate, (0, 1)",
                   [](auto& b, const config_value& v) { b.min_decrease_factor = v.real(); });
    md.min = 1e-9;
    md.max = 0.999999;
    opt("initial_rate", value_kind::BIT_RATE, "the line rate",
        "A flow's rate before any message (its limiter is taken at its first frame)",
        [](auto& b, const config_value& v) { b.initial_rate = v.rate(); })
        .min = 1;
    opt("stop_silence", value_kind::TIME, "120us",
        "Mean silence after a STOP message, uniform in [0.5, 1.5) x this; then the minimum rate",
        [](auto& b, const config_value& v) { b.stop_silence = v.time(); })
        .min = 1;
    auto& rl = opt("rate_limiters", value_kind::INT, "1",
                   "Rate regulators (limiters) for BCN, 1..65536; a flow is bound to a free one "
                   "at its first negative message",
                   [](auto& b, const config_value& v) {
                       b.rate_limiters = static_cast<std::uint32_t>(v.integer());
                   });
    rl.min = 1;
    rl.max = 1 << 16;
    opt("limiters_full", value_kind::CHOICE, "share",
        "A negative message for a new flow when every BCN limiter is in use: share (the flow "
        "joins limiter flow % rate_limiters and its regulator, counted shared_bindings) or "
        "ignore (the flow stays unlimited, counted messages_ignored)",
        [](auto& b, const config_value& v) {
            b.limiters_full = v.str() == "ignore" ? bank_policy::NONE : bank_policy::SHARE;
        })
        .choices = {"share", "ignore"};
}

/// nic.rx.*: the host receive path (ring, interrupt coalescing, NAPI and its CPU cost, GRO).
void add_rx_keys(param_table<nic_config>& t) {
    t.add("rx.napi", value_kind::BOOL, "false",
          "Host receive path: RX ring, interrupt coalescing and NAPI polls on the host's cores "
          "at a CPU cost, GRO (false: each frame reaches the transport at its DMA time)",
          [](nic_config& c, const config_value& v) { c.rx.napi = v.boolean(); });
    using store_fn = std::function<void(nic_config::rx_path_config&, const config_value&)>;
    auto opt = [&t](const std::string& key, value_kind kind, const std::string& dflt,
                    const std::string& help, const store_fn& store) -> param_spec& {
        auto& s = t.add("rx." + key, kind, "", help + " (absent: " + dflt + ")",
                        [store](nic_config& c, const config_value& v) {
                            if (!v.present()) return;
                            if (!c.rx.napi) v.fail("applies only with rx.napi");
                            store(c.rx, v);
                            fail_if_about(v, c.rx.coalesce.validate());
                            fail_if_about(v, c.rx.cpu.validate());
                        });
        s.optional = true;
        return s;
    };
    auto u32 = [](const config_value& v) { return static_cast<std::uint32_t>(v.integer()); };
    opt("coalescing", value_kind::CHOICE, "static",
        "Interrupt moderation: static (rx_usecs / rx_frames, ethtool -C) or adaptive (Linux "
        "net_dim with the mlx5 RX CQE profiles)",
        [](auto& r, const config_value& v) { r.coalesce.adaptive = v.str() == "adaptive"; })
        .choices = {"static", "adaptive"};
    opt("rx_usecs", value_kind::TIME, "16us",
        "rx-usecs: the interrupt fires this long after the first unsignalled completion (0: "
        "off; both 0: an interrupt per frame)",
        [](auto& r, const config_value& v) { r.coalesce.rx_usecs = v.time(); })
        .max = 1e12;
    auto& rf = opt("rx_frames", value_kind::INT, "44",
                   "rx-frames: the interrupt fires at this many unsignalled completions (0: off)",
                   [u32](auto& r, const config_value& v) { r.coalesce.rx_frames = u32(v); });
    rf.min = 0;
    rf.max = 65535;
    opt("gro", value_kind::BOOL, "true",
        "GRO: a poll merges a flow's in-order segments into one delivery (one ACK) of up to 64 KB",
        [](auto& r, const config_value& v) { r.gro = v.boolean(); });
    auto& ring = opt("ring", value_kind::INT, "1024",
                     "RX descriptors per queue; a frame finding none is dropped (rx_ring_full)",
                     [u32](auto& r, const config_value& v) { r.cpu.ring = u32(v); });
    ring.min = 1;
    ring.max = 1 << 20;
    auto& cores = opt("cores", value_kind::INT, "1",
                      "Host cores, one RX queue each (flows spread over them by flow id)",
                      [u32](auto& r, const config_value& v) { r.cpu.cores = u32(v); });
    cores.min = 1;
    cores.max = 1024;
    opt("irq_cost", value_kind::TIME, "4us", "CPU per interrupt (hard IRQ and softirq entry)",
        [](auto& r, const config_value& v) { r.cpu.irq_cost = v.time(); })
        .max = 1e12;
    opt("poll_cost", value_kind::TIME, "4us",
        "CPU per poll call (NAPI, GRO flush, stack per batch)",
        [](auto& r, const config_value& v) { r.cpu.poll_cost = v.time(); })
        .max = 1e12;
    opt("packet_cost", value_kind::TIME, "300ns", "CPU per frame (driver, GRO, protocol)",
        [](auto& r, const config_value& v) { r.cpu.packet_cost = v.time(); })
        .max = 1e12;
    opt("byte_cost", value_kind::TIME, "0s", "CPU per frame byte (e.g. a copy), a time per byte",
        [](auto& r, const config_value& v) { r.cpu.byte_cost = v.time(); })
        .max = 1e6;
    opt("app_byte_cost", value_kind::TIME, "0s",
        "The receiving application's copy per payload byte, on the flow's core below the "
        "softirq; its unread bytes close the flow's TCP receive window (0: read at once)",
        [](auto& r, const config_value& v) { r.cpu.app_byte_cost = v.time(); })
        .max = 1e6;
    auto& budget = opt("budget", value_kind::INT, "64", "NAPI weight: frames per poll call",
                       [u32](auto& r, const config_value& v) { r.cpu.budget = u32(v); });
    budget.min = 1;
    budget.max = 1 << 20;
}

}  // namespace

hull_pacer_params nic_config::pacer_config::params(std::uint64_t line_rate_bps) const {
    hull_pacer_params p =
        mode == preset::NS2 ? hull_pacer_params::ns2() : hull_pacer_params::testbed();
    p.line_rate_bps = line_rate_bps;
    if (update_period) p.update_period = *update_period;
    if (idle_timeout) p.idle_timeout = *idle_timeout;
    if (token_period) p.token_period = *token_period;
    if (eta) p.eta = *eta;
    if (beta) p.beta = *beta;
    if (p_a) p.p_a = *p_a;
    if (table_entries) p.table_entries = *table_entries;
    if (table_full) p.table_full = *table_full;
    if (depth) p.depth_bytes = *depth;
    if (fifo) p.fifo_bytes = *fifo;
    if (granularity) p.rate_granularity_bps = *granularity;
    if (initial_rate) p.initial_rate_bps = *initial_rate;
    return p;
}

fera_source_params nic_config::fera_config::params(std::uint64_t line_rate_bps) const {
    fera_source_params p = fera_source_params::thesis_default(line_rate_bps);
    if (n0) p.initial_flows = *n0;
    if (interval) p.interval = *interval;
    if (tau) p.tag_interval = *tau;
    p.reset_only_when_idle = reset_only_when_idle.value_or(true);
    return p;
}

qcn_rp_params nic_config::qcn_config::params(std::uint64_t line_rate_bps) const {
    qcn_rp_params p = mode == preset::THESIS        ? qcn_rp_params::thesis(line_rate_bps)
                      : mode == preset::THESIS_AIMD ? qcn_rp_params::thesis_aimd(line_rate_bps)
                                                    : qcn_rp_params::standard(line_rate_bps);
    if (gd) p.gd = *gd;
    if (time_reset) p.time_reset = *time_reset;
    if (byte_reset) p.byte_reset = *byte_reset;
    if (threshold) p.threshold = *threshold;
    if (ai_rate) p.ai_rate_bps = *ai_rate;
    if (hai_rate) p.hai_rate_bps = *hai_rate;
    if (min_rate) p.min_rate_bps = *min_rate;
    if (min_decrease_factor) p.min_decrease_factor = *min_decrease_factor;
    if (averaging_factor) p.averaging_factor = *averaging_factor;
    if (stage_rule) p.stage_rule = *stage_rule;
    if (byte_counter_only) p.byte_counter_only = *byte_counter_only;
    if (aimd) p.aimd = *aimd;
    if (halve_in_hai) p.halve_in_hai = *halve_in_hai;
    if (target_reduction) p.target_reduction = *target_reduction;
    if (keep_target_in_first_cycle) p.keep_target_in_first_cycle = *keep_target_in_first_cycle;
    return p;
}

bcn_rp_params nic_config::bcn_config::params(std::uint64_t line_rate_bps) const {
    bcn_rp_params p = bcn_rp_params::thesis_default(line_rate_bps);
    if (g_i) p.g_i = *g_i;
    if (g_d) p.g_d = *g_d;
    if (r_u) p.r_u_bps = static_cast<double>(*r_u);
    if (min_rate) p.min_rate_bps = *min_rate;
    if (min_decrease_factor) p.min_decrease_factor = *min_decrease_factor;
    if (initial_rate) p.initial_rate_bps = *initial_rate;
    return p;
}

const param_table<nic_config>& nic_config::params() {
    static const param_table<nic_config> table = [] {
        param_table<nic_config> t;
        add_dma_keys(t);
        add_pacer_keys(t);
        add_qcn_keys(t);
        add_bcn_keys(t);
        add_fera_keys(t);
        add_rx_keys(t);
        auto& txl = t.add("tx_latency", value_kind::TIME, "500ns",
                          "Host post to MAC: descriptor fetch and DMA read, fixed (ideal PCIe)",
                          [](nic_config& c, const config_value& v) {
                              c.tx_latency = v.time();
                              if (c.dma.enabled && c.tx_latency != nic_config{}.tx_latency)
                                  v.fail(NOT_WITH_PCIE);
                          });
        txl.max = 1e9;
        auto& rxl = t.add("rx_latency", value_kind::TIME, "500ns",
                          "MAC to host memory: DMA write and completion, fixed (ideal PCIe)",
                          [](nic_config& c, const config_value& v) {
                              c.rx_latency = v.time();
                              if (c.dma.enabled && c.rx_latency != nic_config{}.rx_latency)
                                  v.fail(NOT_WITH_PCIE);
                          });
        rxl.max = 1e9;
        auto& q = t.add("tx_queue", value_kind::INT, "1024",
                        "Frames the TX queue holds (with a pcie.model: descriptors per TX ring); a "
                        "post beyond it is dropped (nic_tx_queue_full)",
                        [](nic_config& c, const config_value& v) {
                            c.tx_queue_frames = static_cast<std::uint32_t>(v.integer());
                            if (c.dma.enabled && c.tx_queue_frames > (1u << 16))
                                v.fail("must be <= 65536 with a pcie.model (descriptors per ring)");
                        });
        q.min = 1;
        q.max = 1 << 20;
        t.choice<bool>("credit_queue", "link",
                       "link: the credit-class frames the host sends (ExpressPass credits, "
                       "FlashPass emulation packets and credits) leave through the credit queue of "
                       "the switch at the other end of the NIC's link, at this end (ns2-xpass: "
                       "every link end); off: none at this end",
                       {{"link", true}, {"off", false}}, &nic_config::credit_queue);
        add_flow_control_keys(t, &nic_config::flow_control);
        t.add("pfc_storm.priorities", value_kind::STRING_LIST, "",
              "Fault: the NIC keeps sending PFC XOFF (0xFFFF, re-sent every 0x7FFF quanta) on "
              "these priorities (0..7) from pfc_storm.start until pfc_storm.stop (absent: none)",
              [](nic_config& c, const config_value& v) {
                  if (!v.present()) return;
                  c.pfc_storm.priorities = load_index_mask(v.section(), v.key(), 7);
                  if (!c.pfc_storm.priorities) v.fail("lists no priority");
              })
            .optional = true;
        t.add("pfc_storm.start", value_kind::TIME, "", "Storm start (absent: 0)",
              [](nic_config& c, const config_value& v) {
                  if (v.present()) c.pfc_storm.start = v.time();
              })
            .optional = true;
        t.add("pfc_storm.stop", value_kind::TIME, "",
              "Storm end, after start (absent: the end of the run)",
              [](nic_config& c, const config_value& v) {
                  if (!v.present()) return;
                  c.pfc_storm.stop = v.time();
                  if (c.pfc_storm.stop <= c.pfc_storm.start)
                      v.fail("must be after pfc_storm.start");
              })
            .optional = true;
        using preset = nic_config::dcqcn_config::preset;
        t.choice<preset>("dcqcn.mode", "none",
                         "DCQCN for RoCE flows: none, paper (Zhu et al. 2015: g 1/256, K = T = "
                         "55us, B 10MB, F 5, R_AI 40Mbps, R_HAI 200Mbps), mellanox (ConnectX "
                         "firmware defaults), scaled (HPCC's dcqcn: mellanox-like, rates "
                         "scaled to the line rate)",
                         {{"none", preset::NONE},
                          {"paper", preset::PAPER},
                          {"mellanox", preset::MELLANOX},
                          {"scaled", preset::SCALED}},
                         [](nic_config& c, preset p) { c.dcqcn.mode = p; });
        auto opt =
            [&t](
                const std::string& key, value_kind kind, const std::string& help,
                const std::function<void(nic_config&, const config_value&)>& store) -> param_spec& {
            auto& s = t.add("dcqcn." + key, kind, "", help + " (absent: the preset's)",
                            [store](nic_config& c, const config_value& v) {
                                if (v.present()) store(c, v);
                            });
            s.optional = true;
            return s;
        };
        auto& g = opt("g", value_kind::REAL, "Alpha gain g, (0, 1]",
                      [](nic_config& c, const config_value& v) { c.dcqcn.g = v.real(); });
        g.min = 1e-9;
        g.max = 1;
        opt("alpha_period", value_kind::TIME, "Alpha update period K",
            [](nic_config& c, const config_value& v) { c.dcqcn.alpha_period = v.time(); })
            .min = 1;
        opt("increase_period", value_kind::TIME, "Rate-increase timer T",
            [](nic_config& c, const config_value& v) { c.dcqcn.increase_period = v.time(); })
            .min = 1;
        opt("decrease_period", value_kind::TIME,
            "Rate-decrease check period (0: cut at every CNP, the paper)",
            [](nic_config& c, const config_value& v) { c.dcqcn.decrease_period = v.time(); });
        opt("byte_counter", value_kind::BYTES, "Byte counter B (0: none)",
            [](nic_config& c, const config_value& v) { c.dcqcn.byte_counter = v.bytes(); });
        auto& fr = opt("fast_recovery", value_kind::INT, "Fast-recovery steps F",
                       [](nic_config& c, const config_value& v) {
                           c.dcqcn.fast_recovery = static_cast<std::uint32_t>(v.integer());
                       });
        fr.min = 0;
        fr.max = 1000;
        opt("ai_rate", value_kind::BIT_RATE, "Additive increase R_AI",
            [](nic_config& c, const config_value& v) { c.dcqcn.ai_rate = v.rate(); });
        opt("hai_rate", value_kind::BIT_RATE, "Hyper increase R_HAI",
            [](nic_config& c, const config_value& v) { c.dcqcn.hai_rate = v.rate(); });
        opt("min_rate", value_kind::BIT_RATE, "Floor of every rate cut (at most the line rate)",
            [](nic_config& c, const config_value& v) { c.dcqcn.min_rate = v.rate(); })
            .min = 1;
        opt("cnp_interval", value_kind::TIME,
            "Notification point: at most one CNP per flow per interval; a mark inside it sends "
            "one CNP when it ends (HTDCQCN). Presets: 50us (paper: NS3RDMA, HTDCQCN), 4us "
            "(mellanox, scaled: ConnectX min_time_between_cnps)",
            [](nic_config& c, const config_value& v) { c.dcqcn.cnp_interval = v.time(); })
            .min = 1;
        auto& cd = t.add("dcqcn.cnp_dscp", value_kind::INT, "48", "DSCP of the CNPs (Mellanox 48)",
                         [](nic_config& c, const config_value& v) {
                             c.dcqcn.cnp_dscp = static_cast<std::uint8_t>(v.integer());
                         });
        cd.min = 0;
        cd.max = 63;
        auto& rl = t.add("rate_limiters", value_kind::INT, "1024",
                         "Hardware rate limiters of the reaction points; a flow is bound to one "
                         "at its first CNP, and shares limiter flow % rate_limiters when all "
                         "are taken (counted as shared_bindings)",
                         [](nic_config& c, const config_value& v) {
                             c.rate_limiters = static_cast<std::uint32_t>(v.integer());
                         });
        rl.min = 1;
        rl.max = 1 << 20;
        return t;
    }();
    return table;
}

rate_limiter_bank& nic_device::limiter_bank() {
    if (!m_limiters) m_limiters = std::make_unique<rate_limiter_bank>(m_cfg.rate_limiters);
    return *m_limiters;
}

nic_device::nic_device(const sc_core::sc_module_name& name, const nic_config& cfg,
                       std::uint64_t rate_bps, std::uint64_t seed)
    : sc_core::sc_module(name), m_cfg(cfg), m_rate_bps(rate_bps) {
    if (cfg.flow_control.enabled()) {
        m_reaction = std::make_unique<pause_reaction>(cfg.flow_control, rate_bps);
        m_class = std::make_unique<std::array<ring<class_entry>, 8>>();
    }
    if (cfg.pfc_storm.priorities) m_storm.arm_at(cfg.pfc_storm.start);
    if (cfg.dcqcn.enabled()) {
        m_dcqcn = cfg.dcqcn.params(rate_bps);
        if (auto e = m_dcqcn->validate())
            throw std::invalid_argument(std::string(name) + ": nic.dcqcn: " + e->field + " " +
                                        e->reason);
        m_limiters = std::make_unique<rate_limiter_bank>(cfg.rate_limiters);
    }
    if (cfg.dma.enabled) {
        m_pcie = std::make_unique<pcie_link>(cfg.dma.pcie);
        tx_dma_config t = cfg.dma.tx;
        t.ring_size = cfg.tx_queue_frames;
        m_dma = std::make_unique<tx_dma>(t, *m_pcie);
    }
    if (cfg.pacer.enabled()) {
        const hull_pacer_params p = cfg.pacer.params(rate_bps);
        if (auto e = p.validate())
            throw std::invalid_argument(std::string(name) + ": nic.pacer: " + e->field + " " +
                                        e->reason);
        m_pacer = std::make_unique<hull_pacer>(
            p, splitmix64(seed ^ hash_name(std::string(this->name()) + ".pacer")));
    }
    if (cfg.qcn.enabled()) {
        const qcn_rp_params p = cfg.qcn.params(rate_bps);
        if (auto e = p.validate()) {  // the field's key: min_rate_bps -> nic.qcn.min_rate
            std::string key = e->field;
            if (key.size() > 4 && key.compare(key.size() - 4, 4, "_bps") == 0)
                key.resize(key.size() - 4);
            throw std::invalid_argument(std::string(name) + ": nic.qcn." + key + ": " + e->reason);
        }
        m_qcn = std::make_unique<qcn_limiters>(p, cfg.qcn.rate_limiters, cfg.qcn.limiters_full);
        m_qcn_fifo.reserve(cfg.qcn.rate_limiters);
        for (unsigned l = 0; l < cfg.qcn.rate_limiters; ++l) m_qcn_fifo.emplace_back(1);
    }
    if (cfg.bcn.enabled()) {
        const bcn_rp_params p = cfg.bcn.params(rate_bps);
        if (auto e = p.validate()) {  // the field's key: min_rate_bps -> nic.bcn.min_rate
            std::string key = e->field;
            if (key.size() > 4 && key.compare(key.size() - 4, 4, "_bps") == 0)
                key.resize(key.size() - 4);
            throw std::invalid_argument(std::string(name) + ": nic.bcn." + key + ": " + e->reason);
        }
        m_bcn = std::make_unique<bcn_limiters>(
            p, cfg.bcn.rate_limiters, cfg.bcn.limiters_full, cfg.bcn.stop_silence,
            splitmix64(seed ^ hash_name(std::string(this->name()) + ".bcn")));
        m_qcn_fifo.reserve(cfg.bcn.rate_limiters);
        for (unsigned l = 0; l < cfg.bcn.rate_limiters; ++l) m_qcn_fifo.emplace_back(1);
    }
    if (cfg.fera.enabled()) {
        if (m_qcn || m_bcn)
            throw std::invalid_argument(std::string(name) +
                                        ": nic.fera.mode: not with nic.qcn.mode or nic.bcn.mode "
                                        "(one reaction point per NIC)");
        const fera_source_params p = cfg.fera.params(rate_bps);
        if (auto e = p.validate())
            throw std::invalid_argument(std::string(name) + ": nic.fera." + e->field + ": " +
                                        e->reason);
        m_fera = std::make_unique<fera_limiters>(p);
    }
    m_slow_tx = m_reaction || m_dma || m_pacer || m_qcn || m_bcn || m_fera;
    m_slow_rx = m_pcie || m_pacer || m_fera;
    if (cfg.csr.enabled) m_csr = std::make_unique<nic_registers>("csr", *this);
}

nic_device::~nic_device() = default;

template <bool DMA>
void nic_device::start(frame& f, ps_t at, ps_t now) {
    m_stats.tx_frames++;
    m_stats.tx_bytes += f.frame_bytes();
    if constexpr (DMA) m_dma->mac_took(f.frame_bytes());  // before the link owns f
    m_busy_until = tx.send_at(f, at, now);
    if constexpr (DMA) run_dma();
}

// ---- The DMA model ----

void nic_device::post_dma(frame& f, ps_t at, std::uint32_t mss) {
    const unsigned r = priority_of(f) % m_dma->config().rings;
    if (!m_dma->post(r, f, mss, at)) {
        m_stats.drops.add(drop_cause::NIC_TX_QUEUE_FULL);
        m_pool.release(f);
        return;
    }
    if (m_dma->descriptors() > m_stats.tx_queue_peak) m_stats.tx_queue_peak = m_dma->descriptors();
    run_dma();
}

void nic_device::run_dma() {
    // The engine hands frames to the MAC, whose start() frees buffer space and asks again:
    // that nested call only marks another pass.
    if (m_dma_running) {
        m_dma_again = true;
        return;
    }
    m_dma_running = true;
    const ps_t now = now_ps();
    ps_t next;
    do {
        m_dma_again = false;
        next = m_dma->run(now, m_sink);
    } while (m_dma_again);
    m_dma_running = false;
    if (next != tx_dma::NEVER) m_dma_timer.arm_at(next);
}

void nic_device::mac_enqueue(frame& f, ps_t ready) {
    if (m_qcn || m_bcn || m_pacer || m_fera) return tx_stage(f, ready);
    to_mac(f, ready);
}

void nic_device::tx_stage(frame& f, ps_t ready) {
    if (m_fera) {
        m_fera_in.push_back({&f, ready});
        if (m_fera_in.size() == 1) m_fera_timer.arm_at(std::max(ready, now_ps()));
        return;
    }
    if (!m_qcn && !m_bcn) return pace(f, ready);
    m_qcn_in.push_back({&f, ready});
    if (m_qcn_in.size() == 1) (m_bcn ? m_bcn_timer : m_qcn_timer).arm_at(std::max(ready, now_ps()));
}

void nic_device::to_mac(frame& f, ps_t ready) {
    if (m_reaction) return push_class(f, ready);
    if (m_queue.empty() && m_busy_until <= ready) {
        if (m_dma) return start<true>(f, ready, now_ps());
        return start(f, ready, now_ps());
    }
    if (m_queue.empty()) m_wire_free.arm_at(std::max(m_busy_until, ready));
    m_queue.push_back({&f, ready});
    if (queued() > m_stats.tx_queue_peak) m_stats.tx_queue_peak = queued();
}

// ---- The pacer ----

void nic_device::pace(frame& f, ps_t ready) {
    m_pacer_in.push_back({&f, ready});
    if (m_pacer_in.size() == 1) m_pacer_timer.arm_at(std::max(ready, now_ps()));
}

void nic_device::arm_pacer(ps_t now) {
    ps_t next = m_pacer_in.empty() ? hull_pacer::NEVER : m_pacer_in.front().ready;
    // A rate update may move the head's departure: wake at the earlier of the two.
    if (!m_paced.empty())
        next = std::min({next, m_pacer->next_departure(now), m_pacer->next_update()});
    if (next != hull_pacer::NEVER) m_pacer_timer.arm_at(std::max(next, now));
}

void nic_device::on_pacer() {
    const ps_t now = now_ps();
    while (!m_pacer_in.empty() && m_pacer_in.front().ready <= now) {
        frame& f = *m_pacer_in.pop_front().f;
        const std::uint32_t bytes = f.frame_bytes();
        m_pacer->on_host_bytes(now, bytes);
        switch (m_pacer->on_frame(now, f.flow_id, bytes)) {
            case pacer_verdict::BYPASS:
                to_mac(f, now);
                break;
            case pacer_verdict::PACED:
                m_paced.push_back(&f);
                break;
            case pacer_verdict::FIFO_FULL:
                if (m_dma) m_dma->mac_took(bytes);  // its TX buffer space is free again
                m_stats.drops.add(drop_cause::PACER_FIFO_FULL);
                m_pool.release(f);
                break;
        }
    }
    while (!m_paced.empty() && m_pacer->next_departure(now) <= now) {
        m_pacer->depart(now);
        to_mac(*m_paced.pop_front(), now);
    }
    arm_pacer(now);
    tell_host_if_drained();
}

// ---- The QCN reaction points ----

void nic_device::receive_cnm(frame& f) {
    const ps_t now = now_ps();
    m_stats.rx_cnms++;
    m_stats.rx_control_frames++;  // a control frame taken in (the run's frame balance)
    m_qcn->on_cnm(now, f.flow_id, f.cnm_fb);
    m_pool.release(f);
    arm_qcn(now);
}

void nic_device::limited_forward(frame& f, ps_t now) {
    if (m_pacer) return pace(f, now);
    to_mac(f, now);
}

template <class BANK, class LIMITER_OF, class TAG>
void nic_device::run_limiter_stage(BANK& bank, ps_t now, LIMITER_OF&& limiter_of, TAG&& tag) {
    auto send = [&](unsigned l, frame& f, bool from_fifo) {
        tag(f, l);  // before sent(): the wire size the limiter spaces by includes a tag
        bank.sent(l, now, f.wire_bytes(), f.frame_bytes(), from_fifo);
        limited_forward(f, now);
    };
    for (;;) {
        // Frames reaching the stage, in order: a bound flow's frame goes at once if its limiter
        // lets it, holds none and the MAC may take it, else it waits in the limiter's FIFO; a
        // frame of an unbound flow waits at the stage's head until the MAC may take it.
        bool input_waits = false;
        while (!m_qcn_in.empty() && m_qcn_in.front().ready <= now) {
            frame& f = *m_qcn_in.front().f;
            const int l = limiter_of(f);
            if (l == BANK::NONE) {
                if (!stage_may_send()) {
                    input_waits = true;
                    break;
                }
                m_qcn_in.pop_front();
                limited_forward(f, now);
                continue;
            }
            m_qcn_in.pop_front();
            const auto u = unsigned(l);
            if (m_qcn_fifo[u].empty() && stage_may_send() && bank.earliest_start(u, now) <= now) {
                send(u, f, false);
                continue;
            }
            m_qcn_fifo[u].push_back(&f);
            bank.hold(u);
            ++m_qcn_held;
        }
        if (!stage_may_send()) break;
        // The MAC may take one: the next limiter with a frame due after the one served last,
        // alternating with a waiting unbound frame (neither starves the other).
        int pick = -1;
        const std::vector<unsigned>& act = bank.active();
        const auto first =
            std::size_t(std::upper_bound(act.begin(), act.end(), m_stage_last) - act.begin());
        for (std::size_t c = 0; c < act.size() && pick < 0; ++c) {
            const unsigned l = act[(first + c) % act.size()];
            if (!m_qcn_fifo[l].empty() && bank.earliest_start(l, now) <= now) pick = int(l);
        }
        if (pick < 0 && !input_waits) break;
        if (input_waits && (pick < 0 || m_stage_input_turn)) {
            m_stage_input_turn = false;
            limited_forward(*m_qcn_in.pop_front().f, now);
            continue;
        }
        m_stage_input_turn = true;
        m_stage_last = unsigned(pick);
        frame& f = *m_qcn_fifo[unsigned(pick)].pop_front();
        --m_qcn_held;
        send(unsigned(pick), f, true);
    }
}

template <class BANK>
void nic_device::arm_limiter_stage(BANK& bank, model_timer& timer, ps_t now, ps_t next) {
    // With a frame waiting at the MAC, on_wire_free() wakes the stage once the MAC takes it.
    if (stage_may_send()) {
        if (!m_qcn_in.empty()) next = std::min(next, m_qcn_in.front().ready);
        for (const unsigned l : bank.active())
            if (!m_qcn_fifo[l].empty()) next = std::min(next, bank.earliest_start(l, now));
    }
    if (next != BANK::NEVER) timer.arm_at(std::max(next, now));
}

void nic_device::on_qcn() {
    const ps_t now = now_ps();
    m_qcn->on_timer(now);
    run_limiter_stage(
        *m_qcn, now, [this](const frame& f) { return m_qcn->limiter_of(f.flow_id); },
        [](frame&, unsigned) {});
    arm_qcn(now);
    tell_host_if_drained();
}

void nic_device::arm_qcn(ps_t now) {
    arm_limiter_stage(*m_qcn, m_qcn_timer, now, m_qcn->next_timer());
}

void nic_device::report_qcn(nlohmann::json& out) const {
    const qcn_limiters& q = *m_qcn;
    const qcn_limiters::counters& s = q.stats();
    const qcn_rp::counters r = q.rp_totals();
    nlohmann::json limiters = nlohmann::json::array();
    for (const unsigned l : q.active())
        limiters.push_back({{"limiter", l},
                            {"rate_bps", q.rate_bps(l)},
                            {"target_bps", q.rp(l).target_bps()},
                            {"held_frames", q.held(l)},
                            {"flows", q.flows(l)}});
    out["qcn"] = {{"cnms_received", m_stats.rx_cnms},
                  {"cnms_ignored", s.ignored_cnms},
                  {"decreases", r.decreases},
                  {"fast_recovery_events", r.fast_recovery},
                  {"active_increase_events", r.active_increase},
                  {"hyper_increase_events", r.hyper_increase},
                  {"byte_events", r.byte_events},
                  {"timer_events", r.timer_events},
                  {"target_reductions", r.target_reductions},
                  {"rp_releases", r.releases},
                  {"bindings", s.bindings},
                  {"shared_bindings", s.shared_bindings},
                  {"bank_full_events", s.shared_bindings + s.ignored_cnms},
                  {"limiter_releases", s.limiter_releases},
                  {"flows_unbound", s.unbindings},
                  {"rate_limiters", q.size()},
                  {"limiters_in_use", q.active().size()},
                  {"limiters_peak", s.peak_in_use},
                  {"limited_frames", s.limited_frames},
                  {"limited_bytes", s.limited_bytes},
                  {"held_frames", s.held_frames},
                  {"limiters", std::move(limiters)}};
    // The RP's gains (every limiter runs the same), e.g. for the fluid model's delay margin.
    const qcn_rp_params& p = q.rp(0).params();
    out["qcn"]["params"] = {{"gd", p.gd},
                            {"ai_rate_bps", p.ai_rate_bps},
                            {"hai_rate_bps", p.hai_rate_bps},
                            {"byte_reset", p.byte_reset},
                            {"time_reset_us", double(p.time_reset) / double(PS_PER_US)},
                            {"threshold", p.threshold},
                            {"min_rate_bps", p.min_rate_bps},
                            {"averaging_factor", p.averaging_factor},
                            {"byte_counter_only", p.byte_counter_only},
                            {"aimd", p.aimd}};
}

// ---- The BCN reaction points (the QCN stage's rings and FIFOs) ----

void nic_device::receive_bcn(frame& f) {
    const ps_t now = now_ps();
    m_stats.rx_bcn_messages++;
    m_stats.rx_control_frames++;  // a control frame taken in (the run's frame balance)
    const auto cpid = static_cast<std::uint32_t>(f.cnm_cpid);
    if (f.bcn_stop)
        m_bcn->on_stop(now, f.flow_id, cpid);
    else if (f.bcn_fb != 0)
        m_bcn->on_message(now, f.flow_id, cpid, f.bcn_feedback());
    m_pool.release(f);
    arm_bcn(now);
}

void nic_device::bcn_tag(frame& f, unsigned l) {
    // The RRT of the regulator that limits the flow (none while it is not installed); frames
    // come untagged from the host. Its octets occupy the DMA engine's TX buffer too.
    const std::uint32_t before = f.frame_bytes();
    f.set_rrt(m_bcn->tag(l));
    if (m_dma && f.frame_bytes() > before) m_dma->frame_grew(f.frame_bytes() - before);
}

// ---- The FERA reaction and reflection points ----

void nic_device::receive_fera_tag(frame& f) {
    const ps_t now = now_ps();
    m_stats.rx_control_frames++;  // a control frame taken in (the run's frame balance)
    m_fera->on_tag_returned(f.flow_id, f.fera_rate_bps, now);
    m_pool.release(f);
    if (m_fera_held) arm_fera(now);  // the held frames' gaps follow the new rate
}

void nic_device::reflect_fera(const frame& f) {
    frame& t = m_pool.acquire();
    t.set_fera_return(f, f.dst_mac);
    t.created = now_ps();
    m_stats.fera_reflected++;
    send_control(t);
}

void nic_device::fera_send(unsigned i, frame& f, ps_t now) {
    if (m_fera->sent(i, now, f.wire_bytes())) f.add_fera_tag(m_fera->params().link_rate_bps);
    if (m_pacer) return pace(f, now);
    to_mac(f, now);
}

void nic_device::on_bcn() {
    const ps_t now = now_ps();
    run_limiter_stage(
        *m_bcn, now,
        [this, now](const frame& f) { return m_bcn->limiter_for_frame(now, f.flow_id); },
        [this](frame& f, unsigned l) { bcn_tag(f, l); });
    arm_bcn(now);
    tell_host_if_drained();
}

void nic_device::arm_bcn(ps_t now) {
    arm_limiter_stage(*m_bcn, m_bcn_timer, now, bcn_limiters::NEVER);
}

void nic_device::report_bcn(nlohmann::json& out) const {
    const bcn_limiters& b = *m_bcn;
    const bcn_limiters::counters& s = b.stats();
    const bcn_rp::counters r = b.rp_totals();
    nlohmann::json limiters = nlohmann::json::array();
    for (const unsigned l : b.active())
        limiters.push_back({{"limiter", l},
                            {"rate_bps", b.rate_bps(l)},
                            {"installed", b.rp(l).active()},
                            {"rrt_cpid", b.tag(l)},
                            {"increases", b.rp(l).stats().increases},
                            {"decreases", b.rp(l).stats().decreases},
                            {"held_frames", b.held(l)},
                            {"flows", b.flows(l)}});
    out["bcn"] = {{"messages_received", m_stats.rx_bcn_messages},
                  {"messages_ignored", s.ignored_messages},
                  {"increases", r.increases},
                  {"decreases", r.decreases},
                  {"stops", r.stops},
                  {"rp_ignored", r.ignored},
                  {"installs", r.installs},
                  {"removals", r.releases},
                  {"bindings", s.bindings},
                  {"shared_bindings", s.shared_bindings},
                  {"limiter_releases", s.limiter_releases},
                  {"flows_unbound", s.unbindings},
                  {"rate_limiters", b.size()},
                  {"limiters_in_use", b.active().size()},
                  {"limiters_peak", s.peak_in_use},
                  {"limited_frames", s.limited_frames},
                  {"limited_bytes", s.limited_bytes},
                  {"held_frames", s.held_frames},
                  {"tagged_frames", s.tagged_frames},
                  {"limiters", std::move(limiters)}};
}

void nic_device::on_fera() {
    const ps_t now = now_ps();
    // Held frames whose regulator lets them go, one per regulator per round, the rounds
    // starting after the regulator served last (the MAC may take only one: round robin).
    for (bool sent = true; sent && mac_queued() == 0;) {
        sent = false;
        const std::size_t n = m_fera_backlogged.size();
        const auto first = std::size_t(
            std::upper_bound(m_fera_backlogged.begin(), m_fera_backlogged.end(), m_fera_last) -
            m_fera_backlogged.begin());
        for (std::size_t c = 0; c < n && mac_queued() == 0; ++c) {
            const unsigned i = m_fera_backlogged[(first + c) % n];
            ring<frame*>& q = m_fera_fifo[i];
            if (q.empty() || m_fera->earliest_start(i, now) > now) continue;
            frame& f = *q.pop_front();
            --m_fera_held;
            m_fera_last = i;
            fera_send(i, f, now);
            sent = true;
        }
        m_fera_backlogged.erase(
            std::remove_if(m_fera_backlogged.begin(), m_fera_backlogged.end(),
                           [this](unsigned i) { return m_fera_fifo[i].empty(); }),
            m_fera_backlogged.end());
    }
    // Frames reaching the stage: at once if the flow holds none and its gap has passed.
    while (!m_fera_in.empty() && m_fera_in.front().ready <= now) {
        frame& f = *m_fera_in.pop_front().f;
        const unsigned i = m_fera->flow(f.flow_id, now);
        if (i >= m_fera_fifo.size()) m_fera_fifo.emplace_back(1);
        ring<frame*>& q = m_fera_fifo[i];
        if (q.empty() && mac_queued() == 0 && m_fera->earliest_start(i, now) <= now) {
            fera_send(i, f, now);
            continue;
        }
        if (q.empty())
            m_fera_backlogged.insert(
                std::lower_bound(m_fera_backlogged.begin(), m_fera_backlogged.end(), i), i);
        q.push_back(&f);
        ++m_fera_held;
    }
    arm_fera(now);
    tell_host_if_drained();
}

void nic_device::arm_fera(ps_t now) {
    ps_t next = m_fera_in.empty() ? fera_limiters::NEVER : m_fera_in.front().ready;
    // With frames at the MAC, on_wire_free() wakes the stage once the MAC takes them.
    if (mac_queued() == 0)
        for (const unsigned i : m_fera_backlogged)
            next = std::min({next, m_fera->earliest_start(i, now), m_fera->source(i).next_timer()});
    if (next != fera_limiters::NEVER) m_fera_timer.arm_at(std::max(next, now));
}

void nic_device::report_fera(nlohmann::json& out) const {
    const fera_limiters& l = *m_fera;
    const fera_limiters::counters& s = l.stats();
    nlohmann::json flows = nlohmann::json::array();
    std::uint64_t resets = 0;
    for (unsigned i = 0; i < l.size(); ++i) {
        const fera_source& src = l.source(i);
        resets += src.stats().idle_resets;
        flows.push_back({{"flow", l.flow_id(i)},
                         {"rate_bps", src.rate_bps()},
                         {"tags_sent", src.stats().tags_sent},
                         {"tags_returned", src.stats().tags_returned},
                         {"rate_changes", src.stats().rate_changes},
                         {"idle_resets", src.stats().idle_resets},
                         {"held_frames", i < m_fera_fifo.size() ? m_fera_fifo[i].size() : 0}});
    }
    out["fera"] = {
        {"flows", l.size()},
        {"frames", s.frames},
        {"tags_sent", s.tags_sent},
        {"tags_returned", s.tags_returned},
        {"tags_unknown", s.tags_unknown},
        {"tags_reflected", m_stats.fera_reflected},
        {"idle_resets", resets},
        {"held_frames", m_fera_held},
        {"initial_rate_bps", double(l.params().link_rate_bps) / l.params().initial_flows},
        {"per_flow", std::move(flows)}};
}

void nic_device::pacer_ack(const frame& f) {
    if (f.kind != frame_kind::IPV4_TCP || !(f.tcp_flags & tcp_flag::ECE)) return;
    m_pacer->on_ece_ack(now_ps(), f.flow_id);
}

void nic_device::report_pacer(nlohmann::json& out) const {
    const hull_pacer::counters s = m_pacer->stats();
    auto us = [](ps_t t) { return double(t) / double(PS_PER_US); };
    out["pacer"] = {
        {"rate_bps", m_pacer->limiter_rate_bps()},
        {"updates", s.updates},
        {"host_bytes", s.host_bytes},
        {"ece_acks", s.ece_acks},
        {"associations", s.associations},
        {"associated_flows", s.associated},
        {"associated_peak", s.peak_associated},
        {"evictions", s.evictions},
        {"timeouts", s.timeouts},
        {"rejected_table_full", s.rejected_table_full},
        {"paced_frames", s.paced_frames},
        {"paced_bytes", s.paced_bytes},
        {"departed_frames", s.departed_frames},
        {"bypass_frames", s.bypass_frames},
        {"bypass_bytes", s.bypass_bytes},
        {"fifo_full_frames", s.fifo_full_frames},
        {"backlog_bytes", m_pacer->backlog_bytes()},
        {"backlog_peak_bytes", s.backlog_peak_bytes},
        {"delay_mean_us", s.departed_frames ? us(s.delay_sum) / double(s.departed_frames) : 0.0},
        {"delay_max_us", us(s.delay_max)}};
    // The delay distribution of paced frames: percentiles (~2% bins) and counts per octave.
    const log_histogram& d = m_pacer->delay_histogram();
    for (const auto& [key, q] :
         {std::pair{"delay_p50_us", 0.5}, std::pair{"delay_p90_us", 0.9},
          std::pair{"delay_p99_us", 0.99}, std::pair{"delay_p999_us", 0.999}})
        out["pacer"][key] = d.quantile(q) / double(PS_PER_US);
    nlohmann::json& hist = out["pacer"]["delay_histogram_us"] = nlohmann::json::array();
    for (const auto& [upper, n] : d.octaves(double(PS_PER_US)))
        hist.push_back({upper / double(PS_PER_US), n});
}

std::vector<std::string> nic_device::series_columns() const {
    std::vector<std::string> c;
    if (m_pacer) c.insert(c.end(), {"pacer_rate_bps", "pacer_backlog_bytes", "pacer_flows"});
    if (m_limiters)
        c.insert(c.end(), {"limiters_in_use", "limiter_flows", "limiter_rate_min_bps",
                           "limiter_rate_mean_bps"});
    if (m_fera)
        c.insert(c.end(),
                 {"fera_flows", "fera_rate_min_bps", "fera_rate_mean_bps", "fera_held_frames"});
    if (m_qcn) {
        c.insert(c.end(),
                 {"qcn_limiters_in_use", "qcn_flows", "qcn_rate_min_bps", "qcn_rate_mean_bps"});
        if (m_qcn->size() <= QCN_SERIES_PER_LIMITER)
            for (unsigned l = 0; l < m_qcn->size(); ++l)
                c.push_back("qcn_rate" + std::to_string(l) + "_bps");
    }
    if (m_bcn)
        c.insert(c.end(),
                 {"bcn_rate_min_bps", "bcn_rate_mean_bps", "bcn_limiters_in_use", "bcn_messages"});
    return c;
}

void nic_device::append_series(std::string& row) const {
    auto value = [&row](std::uint64_t v) {
        row += ',';
        csv::append_uint(row, v);
    };
    if (m_pacer) {
        value(m_pacer->limiter_rate_bps());
        value(m_pacer->backlog_bytes());
        value(m_pacer->bank().associated());
    }
    if (m_limiters) {
        const rate_limiter_bank& b = *m_limiters;
        std::uint64_t lowest = 0, sum = 0;
        unsigned used = 0;
        for (unsigned i = 0; i < b.size() && used < b.in_use(); ++i) {
            if (!b.users(i)) continue;
            const std::uint64_t r = b.at(i).rate_bps() ? b.at(i).rate_bps() : m_rate_bps;
            lowest = used ? std::min(lowest, r) : r;
            sum += r;
            ++used;
        }
        value(b.in_use());
        value(b.associated());
        value(lowest);
        value(used ? sum / used : 0);
    }
    if (m_fera) {  // no flow yet: both at the line rate (nothing is limited)
        const fera_limiters& l = *m_fera;
        double lowest = double(m_rate_bps), sum = 0;
        for (unsigned i = 0; i < l.size(); ++i) {
            lowest = std::min(lowest, l.source(i).rate_bps());
            sum += l.source(i).rate_bps();
        }
        value(l.size());
        value(static_cast<std::uint64_t>(lowest));
        value(l.size() ? static_cast<std::uint64_t>(sum / double(l.size())) : m_rate_bps);
        value(m_fera_held);
    }
    if (m_qcn) {  // no limiter in use: both at the line rate (nothing is limited)
        const qcn_limiters& q = *m_qcn;
        std::uint64_t lowest = m_rate_bps, sum = 0;
        for (const unsigned l : q.active()) {
            lowest = std::min(lowest, q.rate_bps(l));
            sum += q.rate_bps(l);
        }
        value(q.active().size());
        value(q.bank().associated());
        value(lowest);
        value(q.active().empty() ? m_rate_bps : sum / q.active().size());
        if (q.size() <= QCN_SERIES_PER_LIMITER)
            for (unsigned l = 0; l < q.size(); ++l) value(q.rate_bps(l));
    }
    if (m_bcn) {  // no limiter in use: both at the line rate (nothing is limited)
        const bcn_limiters& b = *m_bcn;
        std::uint64_t lowest = m_rate_bps, sum = 0;
        for (const unsigned l : b.active()) {
            lowest = std::min(lowest, b.rate_bps(l));
            sum += b.rate_bps(l);
        }
        value(lowest);
        value(b.active().empty() ? m_rate_bps : sum / b.active().size());
        value(b.active().size());
        value(m_stats.rx_bcn_messages);
    }
}

std::size_t nic_device::dma_ring_free() const {
    const std::size_t held = queued();
    std::size_t free = held < m_cfg.tx_queue_frames ? m_cfg.tx_queue_frames - held : 0;
    for (unsigned r = 0; r < m_dma->config().rings; ++r)
        free = std::min<std::size_t>(free, m_dma->free_slots(r));
    return free;
}

ps_t nic_device::rx_dma(const frame& f, ps_t now) {
    m_pcie->dma_write(now, f.length);
    return m_pcie->dma_write(now, m_cfg.dma.rx_completion_bytes) + m_cfg.dma.rx_pipeline;
}

ps_t nic_device::rx_slow(const frame& f, ps_t now) {
    if (m_pacer) pacer_ack(f);
    if (m_fera && f.fera_forward) reflect_fera(f);
    return m_pcie ? rx_dma(f, now) : now + m_cfg.rx_latency;
}

frame& nic_device::dma_sink::dma_new_frame() {
    return nic.m_pool.acquire();
}

void nic_device::dma_sink::dma_release(frame& f) {
    nic.m_pool.release(f);
}

ps_t nic_config::idle_tx_latency(std::uint32_t l2_bytes) const {
    if (!dma.enabled) return tx_latency;
    pcie_link link(dma.pcie);
    const ps_t fetched = link.dma_read(0, dma.tx.descriptor_bytes);
    return link.dma_read(fetched, l2_bytes) + dma.tx.doorbell_latency + dma.tx.tx_pipeline;
}

ps_t nic_config::idle_rx_latency(std::uint32_t l2_bytes) const {
    if (!dma.enabled) return rx_latency;
    pcie_link link(dma.pcie);
    link.dma_write(0, l2_bytes);
    return link.dma_write(0, dma.rx_completion_bytes) + dma.rx_pipeline;
}

dcqcn_params nic_config::dcqcn_config::params(std::uint64_t line_rate_bps) const {
    dcqcn_params p;
    switch (mode) {
        case preset::MELLANOX:
            p = dcqcn_params::mellanox(line_rate_bps);
            break;
        case preset::SCALED:
            p = dcqcn_params::scaled(line_rate_bps);
            break;
        default:
            p = dcqcn_params::paper(line_rate_bps);
            break;
    }
    if (g) p.g = *g;
    if (alpha_period) p.alpha_period = *alpha_period;
    if (increase_period) p.increase_period = *increase_period;
    if (decrease_period) p.decrease_period = *decrease_period;
    if (byte_counter) p.byte_counter = *byte_counter;
    if (ai_rate) p.ai_rate_bps = *ai_rate;
    if (hai_rate) p.hai_rate_bps = *hai_rate;
    if (min_rate) p.min_rate_bps = *min_rate;
    if (fast_recovery) p.fast_recovery_steps = *fast_recovery;
    return p;
}

void nic_device::on_storm() {
    const ps_t now = now_ps();
    if (now >= m_cfg.pfc_storm.stop) return;
    frame& f = m_pool.acquire();
    std::array<std::uint16_t, 8> quanta{};
    for (unsigned p = 0; p < 8; ++p)
        if (m_cfg.pfc_storm.priorities >> p & 1) quanta[p] = 0xffff;
    f.set_pfc(m_cfg.pfc_storm.priorities, quanta);
    m_storm_frames++;
    send_control(f);
    m_storm.arm_at(now + pause_quanta_ps(0x7fff, m_rate_bps));
}

void nic_device::send_control(frame& f) {
    const ps_t now = now_ps();
    m_stats.tx_control_frames++;
    m_busy_until = tx.send_at(f, std::max(now, m_busy_until), now);
}

void nic_device::post(frame& f, ps_t at) {
    if (m_slow_tx) return post_slow(f, at);
    const ps_t now = now_ps();
    const ps_t ready = at + m_cfg.tx_latency;
    if (m_queue.empty() && m_busy_until <= ready) {
        start(f, ready, now);
        return;
    }
    if (m_queue.size() >= m_cfg.tx_queue_frames) {
        m_stats.drops.add(drop_cause::NIC_TX_QUEUE_FULL);
        m_pool.release(f);
        return;
    }
    if (m_queue.empty()) m_wire_free.arm_at(std::max(m_busy_until, ready));
    m_queue.push_back({&f, ready});
    if (m_queue.size() > m_stats.tx_queue_peak) m_stats.tx_queue_peak = m_queue.size();
}

void nic_device::post_slow(frame& f, ps_t at) {
    if (m_dma) return post_dma(f, at, 0);
    if (m_pacer || m_qcn || m_bcn || m_fera) {
        if (queued() >= m_cfg.tx_queue_frames) {
            m_stats.drops.add(drop_cause::NIC_TX_QUEUE_FULL);
            m_pool.release(f);
            return;
        }
        tx_stage(f, at + m_cfg.tx_latency);
        if (queued() > m_stats.tx_queue_peak) m_stats.tx_queue_peak = queued();
        return;
    }
    // Honouring pauses, nothing is committed ahead of its time (a pause may come first).
    post_class(f, at + m_cfg.tx_latency);
}

void nic_device::on_wire_free() {
    const ps_t now = now_ps();
    if (!m_slow_tx) return serve_fifo<false>(now);
    if (m_reaction)
        serve_classes(now);
    else if (m_dma)
        serve_fifo<true>(now);
    else
        serve_fifo<false>(now);
    // The MAC took a frame: the FERA regulators or the QCN/BCN stage may hand it the next.
    if (mac_queued() == 0) {
        if (m_fera_held) m_fera_timer.arm_at(now);
        if (m_qcn_held || !m_qcn_in.empty()) (m_bcn ? m_bcn_timer : m_qcn_timer).arm_at(now);
    }
}

template <bool DMA>
void nic_device::serve_fifo(ps_t now) {
    if (m_queue.empty()) return;
    // A control frame may have taken the wire.
    const ps_t next = std::max(m_busy_until, m_queue.front().ready);
    if (next > now) return wait_until(next);
    entry e = m_queue.pop_front();
    start<DMA>(*e.f, std::max(now, e.ready), now);
    if (!m_queue.empty()) m_wire_free.arm_at(std::max(m_busy_until, m_queue.front().ready));
    tell_host_if_drained();
}

void nic_device::tell_host_if_drained() {
    if (m_notify_host && queued() <= m_notify_at_most) {
        m_notify_host = false;
        if (m_host) m_host->nic_tx_ready();
    }
}

void nic_device::post_class(frame& f, ps_t ready) {
    if (m_class_frames >= m_cfg.tx_queue_frames) {
        m_stats.drops.add(drop_cause::NIC_TX_QUEUE_FULL);
        m_pool.release(f);
        return;
    }
    push_class(f, ready);
}

void nic_device::push_class(frame& f, ps_t ready) {
    (*m_class)[priority_of(f)].push_back({&f, ready, m_class_seq++});
    if (++m_class_frames > m_stats.tx_queue_peak) m_stats.tx_queue_peak = m_class_frames;
    m_wire_free.arm_at(std::max(m_busy_until, ready));  // the earliest wake-up stays
}

void nic_device::serve_classes(ps_t now) {
    if (m_class_frames == 0) return;
    if (m_busy_until > now) return wait_until(m_busy_until);  // a control frame took the wire
    int best = -1;
    std::uint64_t best_seq = 0;
    ps_t next = pause_reaction::NEVER;
    for (unsigned p = 0; p < 8; ++p) {
        if ((*m_class)[p].empty()) continue;
        const class_entry& head = (*m_class)[p].front();
        const ps_t at = std::max(head.ready, m_reaction->paused_until(p));
        if (at > now) {
            next = std::min(next, at);
        } else if (best < 0 || head.seq < best_seq) {
            best = int(p);
            best_seq = head.seq;
        }
    }
    if (best < 0) return wait_until(next);
    const class_entry e = (*m_class)[unsigned(best)].pop_front();
    --m_class_frames;
    if (m_dma)
        start<true>(*e.f, now, now);
    else
        start(*e.f, now, now);
    if (m_class_frames) m_wire_free.arm_at(m_busy_until);
    tell_host_if_drained();
}

void nic_device::deliver(frame& f) {
    const ps_t now = now_ps();
    const ps_t at = m_slow_rx ? rx_slow(f, now) : now + m_cfg.rx_latency;
    if (m_host)
        m_host->nic_rx(f, at);
    else
        m_pool.release(f);
}

void nic_device::receive_control(frame& f) {
    if (f.kind == frame_kind::CNM && m_qcn) return receive_cnm(f);
    if (f.kind == frame_kind::BCN && m_bcn) return receive_bcn(f);
    if (f.kind == frame_kind::FERA_TAG && m_fera) return receive_fera_tag(f);
    m_stats.rx_control_frames++;
    if (f.kind != frame_kind::PAUSE && f.kind != frame_kind::PFC) return deliver(f);
    if (m_reaction) {
        const ps_t now = now_ps();
        m_reaction->receive(f, now);
        if (m_reaction->next_apply() <= now) m_reaction->apply(now, m_busy_until);
        if (m_reaction->next_apply() != pause_reaction::NEVER)
            m_pause_due.arm_at(m_reaction->next_apply());
        if (queued()) m_wire_free.arm_at(now);  // re-plan the heads (XON: at once)
    }
    m_pool.release(f);
}

void nic_device::on_pause_due() {
    const ps_t now = now_ps();
    m_reaction->apply(now, m_busy_until);
    if (m_reaction->next_apply() != pause_reaction::NEVER)
        m_pause_due.arm_at(m_reaction->next_apply());
    if (queued()) m_wire_free.arm_at(now);
}

void nic_device::receive(unsigned, frame& f) {
    if (f.fcs_error) {
        m_stats.drops.add(drop_cause::FCS_ERROR);
        m_pool.release(f);
        return;
    }
    // The control path: MAC control (EtherType 0x8808) ends at the MAC, and so does a CNM with
    // QCN on (the reaction points). Without QCN a CNM is counted as control taken in (the run's
    // frame balance) and goes to the host. Credits are a transport's frames: the data path.
    if (!f.is_data() && f.kind != frame_kind::CREDIT) return receive_control(f);
    m_stats.rx_frames++;
    m_stats.rx_bytes += f.frame_bytes();
    deliver(f);
}

void nic_device::report_stats(nlohmann::json& out) const {
    out = {{"tx_frames", m_stats.tx_frames},       {"tx_bytes", m_stats.tx_bytes},
           {"rx_frames", m_stats.rx_frames},       {"rx_bytes", m_stats.rx_bytes},
           {"tx_queue_frames", queued()},          {"tx_queue_peak", m_stats.tx_queue_peak},
           {"drops", drops_to_json(m_stats.drops)}};
    if (m_reaction || m_stats.rx_control_frames || m_stats.tx_control_frames ||
        m_cfg.pfc_storm.priorities) {  // else as before
        nlohmann::json fc = {{"control_frames_received", m_stats.rx_control_frames},
                             {"control_frames_sent", m_stats.tx_control_frames}};
        if (m_reaction) m_reaction->report(fc, now_ps());
        if (m_cfg.pfc_storm.priorities) fc["storm_frames_sent"] = m_storm_frames;
        out["flow_control"] = std::move(fc);
    }
    if (m_dma) report_dma(out);
    if (m_pacer) report_pacer(out);
    if (m_qcn) report_qcn(out);
    if (m_bcn) report_bcn(out);
    if (m_fera) report_fera(out);
    if (m_csr) {
        const auto& c = m_csr->get_stats();
        out["csr"] = {{"mmio_posts", c.mmio_posts},
                      {"bad_descriptors", c.bad_descriptors},
                      {"ignored_writes", c.ignored_writes},
                      {"error_responses", c.error_responses}};
    }
}

void nic_device::report_dma(nlohmann::json& out) const {
    const ps_t now = now_ps();
    const auto& d = m_dma->stats();
    const auto& p = m_pcie->stats();
    auto us = [](ps_t t) { return double(t) / double(PS_PER_US); };
    auto share = [now](ps_t busy) { return now ? double(busy) / double(now) : 0.0; };
    out["dma"] = {{"posts", d.posts},
                  {"lso_posts", d.lso_posts},
                  {"lso_segments", d.lso_segments},
                  {"descriptor_fetches", d.fetches},
                  {"descriptors_fetched", d.fetched},
                  {"tx_ring_peak", d.ring_peak},
                  {"tx_buffer_peak_bytes", d.buffer_peak},
                  {"tx_buffer_stalls", d.buffer_stalls},
                  {"tx_delay_mean_us", d.frames ? us(d.ready_delay_sum) / double(d.frames) : 0.0},
                  {"tx_delay_max_us", us(d.ready_delay_max)}};
    out["pcie"] = {{"bytes_read", p.bytes_read},
                   {"bytes_written", p.bytes_written},
                   {"read_requests", p.read_requests},
                   {"write_tlps", p.write_tlps},
                   {"completions", p.completions},
                   {"upstream_utilisation", share(p.upstream_busy)},
                   {"downstream_utilisation", share(p.downstream_busy)},
                   {"peak_outstanding_reads", p.peak_outstanding_reads},
                   {"tag_stalls", p.tag_stalls}};
}

}  // namespace fabricsim::nic
