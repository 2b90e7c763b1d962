#include "fabricsim/switch/switch_config.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <sstream>
#include <stdexcept>

namespace fabricsim::sw {

namespace {

std::uint64_t cells_up(std::uint64_t bytes, std::uint32_t cell) {
    return (bytes + cell - 1) / cell;
}

/// "n" -> integer in [lo, hi] or a key error.
unsigned parse_index(const config_node& n, const std::string& key, const std::string& text,
                     unsigned lo, unsigned hi) {
    std::size_t used = 0;
    long v = -1;
    try {
        v = std::stol(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != text.size() || v < long(lo) || v > long(hi))
        n.fail(key, "'" + text + "' is not an integer in " + std::to_string(lo) + ".." +
                        std::to_string(hi));
    return static_cast<unsigned>(v);
}

/// A list of 8 small integers (one per PCP or traffic class), or empty for the default.
void load_map8(const config_node& n, const std::string& key, unsigned max,
               std::array<std::uint8_t, 8>& out) {
    const auto items = n.str_list(key);
    if (items.empty()) return;
    if (items.size() != 8)
        n.fail(key, "needs 8 entries (one per value 0..7), got " + std::to_string(items.size()));
    for (unsigned i = 0; i < 8; ++i)
        out[i] = static_cast<std::uint8_t>(parse_index(n, key, items[i], 0, max));
}

}  // namespace

ps_t switch_config::clock_period() const {
    return static_cast<ps_t>(std::llround(1e12 / core_clock_hz));
}

namespace {

using index_setter = param_table<switch_config>::index_setter;

/// The number of queues in use (per-queue keys: a list or map index beyond it is an error).
unsigned queue_count(const switch_config& c) {
    return c.queues;
}

/// Stores PG g's (queue q's) value into its mmu_config entry, with the cell size.
template <class F>
index_setter per_pg(F f) {
    return [f](switch_config& c, unsigned g, const config_value& v) {
        f(c.mmu.pg[g], v, c.mmu.cell_bytes);
    };
}
template <class F>
index_setter per_queue(F f) {
    return [f](switch_config& c, unsigned q, const config_value& v) {
        f(c.mmu.queue[q], v, c.mmu.cell_bytes);
    };
}

/// Per-queue token bucket (`queue_shapers` list element).
struct queue_shaper_entry {
    std::uint32_t queue = 0;
    shaper_config shaper;
};

const param_table<queue_shaper_entry>& queue_shaper_params() {
    static const param_table<queue_shaper_entry> table = [] {
        param_table<queue_shaper_entry> t;
        auto& sq = t.add("queue", value_kind::INT, "", "Queue index", &queue_shaper_entry::queue);
        sq.min = 0;
        sq.max = 7;
        t.add("rate", value_kind::BIT_RATE, "", "Rate in wire bits/s",
              [](queue_shaper_entry& e, const config_value& v) { e.shaper.rate_bps = v.rate(); })
            .min = 1e3;
        t.add("burst", value_kind::BYTES, "3000B", "Depth in wire bytes (>= largest frame)",
              [](queue_shaper_entry& e, const config_value& v) {
                  e.shaper.burst_bytes = v.bytes();
                  if (e.shaper.burst_bytes < 1542)
                      v.fail("must hold one maximum frame on the wire (1542B)");
              });
        return t;
    }();
    return table;
}

/// Chip presets (docs/models/switch.md "Chip presets" cites each figure): switch.* keys laid
/// under the user's section by expand_chip().
struct chip_preset {
    const char* name;
    const char* yaml;
};
constexpr chip_preset CHIP_PRESETS[] = {
    // Trident3-X7 (BCM56870): TD3 config.bcm core clock; 256 B cells, 129,024 usable.
    {"trident3_32x100g",
     "core_clock: 1525MHz\n"
     "pipeline: {count: 2, depth: 915, packets_per_cycle: 1, egress_packets_per_cycle: 1}\n"
     "buffer: 33030144B\n"
     "cell: 256B\n"},
    // Tomahawk (BCM56960): 4 pipes of 8x100G, 4 XPEs of 20,165 usable 208 B cells each; pipe
    // pair (i, e) uses the XPE that both pipes' masks name.
    {"tomahawk_32x100g",
     "core_clock: 850MHz\n"
     "pipeline: {count: 4, depth: 383, packets_per_cycle: 1, egress_packets_per_cycle: 1}\n"
     "buffer: 16777280B\n"
     "cell: 208B\n"
     "cell_overhead: 64B\n"
     "mmu: {partitions: 4, partition_map: ['0 0 1 1', '2 2 3 3', '2 2 3 3', '0 0 1 1']}\n"},
    // Tomahawk4-class 25.6 Tb/s: TH3's architecture (8 pipes per 12.8 Tb/s, 254 B cells, 40 B
    // header) doubled.
    {"tomahawk4_64x400g",
     "core_clock: 1325MHz\n"
     "pipeline: {count: 16, depth: 596, packets_per_cycle: 1, egress_packets_per_cycle: 1}\n"
     "buffer: 113MB\n"
     "cell: 254B\n"
     "cell_overhead: 40B\n"},
};

void add_pipeline(param_table<switch_config>& t) {
    auto& chip = t.add("chip", value_kind::CHOICE, "generic",
                       "Chip preset whose clock, pipelines, buffer and cells the other "
                       "switch.* keys start from (generic: the defaults listed here)",
                       [](switch_config& c, const config_value& v) { c.chip = v.str(); });
    chip.choices = {"generic"};
    for (const chip_preset& p : CHIP_PRESETS) chip.choices.push_back(p.name);
    t.add("core_clock", value_kind::FREQUENCY, "1GHz",
          "Switch core clock; pipeline exit times are rounded up to its edges",
          &switch_config::core_clock_hz)
        .min = 1e6;
    t.add("pipeline_latency", value_kind::TIME, "300ns",
          "Ingress-to-egress pipeline latency (parsing, lookup, MMU), excluding serialisation",
          &switch_config::pipeline_latency)
        .max = 1e9;  // 1 ms
    t.choice<forwarding_mode>(
        "mode", "store_and_forward",
        "store_and_forward: act on the last bit; cut_through: act after cut_through_bytes "
        "when the egress is idle and not faster than the ingress",
        {{"store_and_forward", forwarding_mode::STORE_AND_FORWARD},
         {"cut_through", forwarding_mode::CUT_THROUGH}},
        &switch_config::mode);
    auto& ct = t.add("cut_through_bytes", value_kind::BYTES, "64B",
                     "Bytes of a frame a cut-through switch needs before forwarding it",
                     &switch_config::cut_through_bytes);
    ct.min = 34;  // Ethernet + IPv4 header: the route lookup needs the destination address
    ct.max = 1518;
    t.add("buffer", value_kind::BYTES, "4MiB", "Shared packet buffer of the chip",
          &switch_config::buffer_bytes)
        .min = 1;
    auto& q =
        t.add("queues", value_kind::INT, "8", "Egress queues per port", &switch_config::queues);
    q.min = 1;
    q.max = 8;
    // Cycle-approximate pipelines (docs/models/switch.md "Pipelines"); all absent: one pipeline
    // with no rate limit, the flat pipeline_latency.
    auto& pc = t.add("pipeline.count", value_kind::INT, "1",
                     "Ingress pipelines of the chip; each serves a block of ports",
                     [](switch_config& c, const config_value& v) {
                         c.pipeline.count = static_cast<unsigned>(v.integer());
                     });
    pc.min = 1;
    pc.max = 64;
    t.add("pipeline.port_map", value_kind::STRING_LIST, "",
          "Pipeline of each port (element p: port p's); absent: contiguous blocks, "
          "port * count / ports",
          [](switch_config& c, const config_value& v) {
              if (!v.present()) return;
              for (const std::string& s : v.section().str_list(v.key()))
                  c.pipeline.port_map.push_back(static_cast<std::uint16_t>(
                      parse_index(v.section(), v.key(), s, 0, c.pipeline.count - 1)));
          })
        .optional = true;
    auto& depth = t.add("pipeline.depth", value_kind::INT, "",
                        "Pipeline depth in core cycles: the latency is depth x clock period "
                        "(replaces pipeline_latency)",
                        [](switch_config& c, const config_value& v) {
                            if (v.present())
                                c.pipeline.depth_cycles = static_cast<std::uint32_t>(v.integer());
                        });
    depth.optional = true;
    depth.min = 1;
    depth.max = 1e6;
    auto& ppc = t.add(
        "pipeline.packets_per_cycle", value_kind::REAL, "0",
        "Frames one pipeline takes per core cycle (0: no packet-rate limit)",
        [](switch_config& c, const config_value& v) { c.pipeline.packets_per_cycle = v.real(); });
    ppc.min = 0;
    ppc.max = 64;
    auto& bpc = t.add("pipeline.bytes_per_cycle", value_kind::INT, "0",
                      "Frame bytes one pipeline takes per core cycle (0: no byte-rate limit)",
                      [](switch_config& c, const config_value& v) {
                          c.pipeline.bytes_per_cycle = static_cast<std::uint32_t>(v.integer());
                      });
    bpc.min = 0;
    bpc.max = 1 << 20;
    auto& eppc = t.add("pipeline.egress_packets_per_cycle", value_kind::REAL, "0",
                       "Frames one egress pipeline (same count and port map) starts per core "
                       "cycle; its ports take turns round robin (0: no egress limit)",
                       [](switch_config& c, const config_value& v) {
                           c.pipeline.egress_packets_per_cycle = v.real();
                       });
    eppc.min = 0;
    eppc.max = 64;
    auto& ebpc = t.add("pipeline.egress_bytes_per_cycle", value_kind::INT, "0",
                       "Frame bytes one egress pipeline starts per core cycle (0: no limit)",
                       [](switch_config& c, const config_value& v) {
                           c.pipeline.egress_bytes_per_cycle =
                               static_cast<std::uint32_t>(v.integer());
                       });
    ebpc.min = 0;
    ebpc.max = 1 << 20;
    t.add(
        "pipeline.input_buffer", value_kind::BYTES, "16KiB",
        "Frames a port holds while its pipeline is busy (per port; the pipeline's arbiter takes "
        "its ports round robin); an arrival that does not fit is dropped (pipeline_overflow)",
        [](switch_config& c, const config_value& v) { c.pipeline.input_buffer_bytes = v.bytes(); });
}

}  // namespace

const char* switch_config::chip_yaml(const std::string& chip) {
    for (const chip_preset& p : CHIP_PRESETS)
        if (chip == p.name) return p.yaml;
    return nullptr;
}

YAML::Node switch_config::expand_chip(const YAML::Node& section) {
    if (!section || !section.IsMap() || !section["chip"] || !section["chip"].IsScalar())
        return section;
    const char* preset = chip_yaml(section["chip"].Scalar());
    return preset ? overlay(load_yaml_string(preset), section) : section;
}

namespace {

void add_mmu(param_table<switch_config>& t) {
    auto& cell = t.add("cell", value_kind::BYTES, "208B",
                       "MMU cell size; a frame takes ceil((bytes + cell_overhead) / cell) cells "
                       "(Broadcom XGS: 208 B)",
                       [](switch_config& c, const config_value& v) {
                           c.mmu.cell_bytes = static_cast<std::uint32_t>(v.bytes());
                       });
    cell.min = 16;
    cell.max = 4096;
    t.add("cell_overhead", value_kind::BYTES, "0B",
          "Per-frame MMU header stored with each frame (Tomahawk: 64 B)",
          [](switch_config& c, const config_value& v) {
              c.mmu.cell_overhead_bytes = static_cast<std::uint32_t>(v.bytes());
          })
        .max = 256;
    t.add("port_cap", value_kind::SIZE, "600KB",
          "Static limit on one egress port's buffer use (bytes, or frames with 'pkt'); 0B turns it "
          "off",
          [](switch_config& c, const config_value& v) { c.mmu.port_cap = v.size(); });
    // Tomahawk-style XPEs (docs/models/mmu.md "Buffer partitions").
    auto& parts = t.add("mmu.partitions", value_kind::INT, "1",
                        "Buffer partitions (Tomahawk XPEs): each holds buffer / partitions and "
                        "admits the frames of the pipeline pairs mapped to it",
                        [](switch_config& c, const config_value& v) {
                            c.mmu.partitions = static_cast<unsigned>(v.integer());
                        });
    parts.min = 1;
    parts.max = 64;
    t.add("mmu.partition_map", value_kind::STRING_LIST, "",
          "Partition of each (ingress pipeline, egress pipeline) pair: one row per ingress "
          "pipeline, each a string of switch.pipeline.count partition numbers "
          "(\"0 0 1 1\"); required with more than one partition, unused with one",
          [](switch_config& c, const config_value& v) {
              const unsigned pipes = c.pipeline.count;
              if (!v.present()) {
                  if (c.mmu.partitions > 1)
                      v.section().fail("partitions", "is " + std::to_string(c.mmu.partitions) +
                                                         " but switch.mmu.partition_map is "
                                                         "not given: say which partition each "
                                                         "pipeline pair uses");
                  return;
              }
              // One partition: the map is unused (a preset's map may stay when a user sets
              // partitions: 1).
              if (c.mmu.partitions == 1) return;
              const auto rows = v.str_list();
              if (rows.size() != pipes)
                  v.fail("has " + std::to_string(rows.size()) + " rows; switch.pipeline.count is " +
                         std::to_string(pipes) + ": one row per ingress pipeline");
              for (std::size_t r = 0; r < rows.size(); ++r) {
                  std::string row = rows[r];
                  std::replace(row.begin(), row.end(), ',', ' ');
                  std::istringstream in(row);
                  unsigned cols = 0;
                  for (std::string item; in >> item; ++cols)
                      c.mmu.partition_map.push_back(static_cast<std::uint8_t>(
                          parse_index(v.section(), v.key(), item, 0, c.mmu.partitions - 1)));
                  if (cols != pipes)
                      v.fail("row " + std::to_string(r) + " ('" + rows[r] + "') has " +
                             std::to_string(cols) + " entries; switch.pipeline.count is " +
                             std::to_string(pipes) + ": one per egress pipeline");
              }
          })
        .optional = true;

    // The MMU's cell bandwidth per partition (docs/models/switch.md "MMU cell bandwidth").
    for (const bool write : {true, false}) {
        auto& cpc = t.add(
            write ? "mmu.write_cells_per_cycle" : "mmu.read_cells_per_cycle", value_kind::REAL, "0",
            write ? "Cells each buffer partition can write per core cycle, shared by the ingress "
                    "pipelines writing to it (a frame waits for it at its pipeline's end); 0: "
                    "unlimited"
                  : "Cells each buffer partition can read per core cycle, shared by the egress "
                    "ports it holds frames for (a port waits its turn); 0: unlimited",
            [write](switch_config& c, const config_value& v) {
                (write ? c.mmu.write_cells_per_cycle : c.mmu.read_cells_per_cycle) = v.real();
            });
        cpc.min = 0;
        cpc.max = 1024;
    }

    t.choice<bool>("mmu.threshold_test", "fit",
                   "fit: admit if shared + frame <= threshold (ns-2/ns-3 models); cross: admit "
                   "while shared "
                   "< "
                   "threshold, so the crossing frame enters (Choudhury-Hahne, 'last packet "
                   "accept')",
                   {{"fit", false}, {"cross", true}},
                   [](switch_config& c, bool v) { c.mmu.accept_crossing = v; });
    t.add("mmu.lossless_pool", value_kind::BYTES, "0B",
          "Shared size of the lossless service pool (pool 1)",
          [](switch_config& c, const config_value& v) {
              c.mmu.pool_cells[LOSSLESS_POOL] = cells_up(v.bytes(), c.mmu.cell_bytes);
          });
    auto& ps = t.indexed(
        "mmu.pool_size", value_kind::BYTES, "",
        "Shared sizes of service pools 1..3 (e.g. {2: 1MiB}; a pool not given has none); pool "
        "0 gets what the reserves, these pools and the headroom pool leave; pool 1 may be given "
        "as lossless_pool instead",
        SERVICE_POOLS, "pool", nullptr, [](switch_config& c, unsigned p, const config_value& v) {
            if (!v.present()) return;
            const std::uint64_t cells = cells_up(v.bytes(), c.mmu.cell_bytes);
            if (p == LOSSY_POOL) {
                if (cells)
                    v.fail(
                        "pool 0 gets what the reserves, pools 1..3 and the headroom pool "
                        "leave; its size cannot be set");
                return;
            }
            if (p == LOSSLESS_POOL && v.section().has("lossless_pool"))
                v.fail("pool 1's size is also given as switch.mmu.lossless_pool; give it once");
            c.mmu.pool_cells[p] = cells;
        });
    ps.optional = true;
    t.add("mmu.headroom_pool", value_kind::BYTES, "0B",
          "Headroom pool shared by the lossless PGs' headroom",
          [](switch_config& c, const config_value& v) {
              c.mmu.headroom_pool_cells = cells_up(v.bytes(), c.mmu.cell_bytes);
          });
    t.add("mmu.lossless_pgs", value_kind::STRING_LIST, "[]",
          "Priority groups that are lossless (0..7)", [](switch_config& c, const config_value& v) {
              const std::uint8_t mask = load_index_mask(v.section(), v.key(), 7);
              for (unsigned g = 0; g < PRIORITY_GROUPS; ++g) c.mmu.pg[g].lossless = mask >> g & 1;
          });
    auto& pp = t.indexed(
        "mmu.pg_pool", value_kind::INT, "",
        "Service pool (0..3) of each ingress PG; default: 1 if lossless, else 0", PRIORITY_GROUPS,
        "PG", nullptr, per_pg([](mmu_config::pg_params& pg, const config_value& v, std::uint32_t) {
            if (v.present()) pg.pool = static_cast<std::uint8_t>(v.integer());
        }));
    pp.optional = true;
    pp.min = 0;
    pp.max = SERVICE_POOLS - 1;
    t.indexed("mmu.pg_min", value_kind::BYTES, "0B", "Reserved cells per ingress (port, PG)",
              PRIORITY_GROUPS, "PG", nullptr,
              per_pg([](mmu_config::pg_params& pg, const config_value& v, std::uint32_t cell) {
                  pg.min_cells = cells_up(v.bytes(), cell);
              }));
    t.indexed_choice<bool>(
        "mmu.pg_threshold", "dynamic",
        "Limit on a PG's shared cells: dynamic (pg_alpha x free pool cells) or static (pg_static)",
        PRIORITY_GROUPS, "PG", nullptr, {{"dynamic", true}, {"static", false}},
        [](switch_config& c, unsigned g, bool dynamic) { c.mmu.pg[g].shared.dynamic = dynamic; });
    auto& pa = t.indexed("mmu.pg_alpha", value_kind::REAL, "8",
                         "Dynamic-threshold alpha of ingress PGs (SONiC lossy profile: 8)",
                         PRIORITY_GROUPS, "PG", nullptr,
                         per_pg([](mmu_config::pg_params& pg, const config_value& v,
                                   std::uint32_t) { pg.shared.alpha = v.real(); }));
    pa.min = 1.0 / 1024;
    pa.max = 1024;
    t.indexed("mmu.pg_static", value_kind::BYTES, "4MiB", "Static shared limit of an ingress PG",
              PRIORITY_GROUPS, "PG", nullptr,
              per_pg([](mmu_config::pg_params& pg, const config_value& v, std::uint32_t cell) {
                  pg.shared.static_cells = v.bytes() / cell;
              }));
    t.indexed("mmu.pg_headroom", value_kind::BYTES, "0B", "Headroom per lossless (port, PG)",
              PRIORITY_GROUPS, "PG", nullptr,
              per_pg([](mmu_config::pg_params& pg, const config_value& v, std::uint32_t cell) {
                  pg.headroom_cells = pg.lossless ? cells_up(v.bytes(), cell) : 0;
              }));
    t.add("mmu.lossless_queues", value_kind::STRING_LIST, "[]",
          "Egress queues in the lossless pool; they skip egress thresholds (held back by PFC "
          "instead)",
          [](switch_config& c, const config_value& v) {
              const std::uint8_t mask = load_index_mask(v.section(), v.key(), 7);
              for (unsigned q = 0; q < MAX_QUEUES; ++q) c.mmu.queue[q].lossless = mask >> q & 1;
          });
    auto& qp =
        t.indexed("mmu.queue_pool", value_kind::INT, "",
                  "Service pool (0..3) of each egress queue; default: 1 if lossless, else 0",
                  MAX_QUEUES, "queue", queue_count,
                  per_queue([](mmu_config::queue_params& q, const config_value& v, std::uint32_t) {
                      if (v.present()) q.pool = static_cast<std::uint8_t>(v.integer());
                  }));
    qp.optional = true;
    qp.min = 0;
    qp.max = SERVICE_POOLS - 1;
    t.indexed("mmu.queue_min", value_kind::BYTES, "0B", "Reserved cells per egress (port, queue)",
              MAX_QUEUES, "queue", queue_count,
              per_queue([](mmu_config::queue_params& q, const config_value& v, std::uint32_t cell) {
                  q.min_cells = cells_up(v.bytes(), cell);
              }));
    t.indexed_choice<bool>("mmu.queue_threshold", "dynamic",
                           "Limit on a queue's shared cells: dynamic (queue_alpha x free pool "
                           "cells) or static (queue_static)",
                           MAX_QUEUES, "queue", queue_count, {{"dynamic", true}, {"static", false}},
                           [](switch_config& c, unsigned q, bool dynamic) {
                               c.mmu.queue[q].shared.dynamic = dynamic;
                           });
    auto& qa = t.indexed("mmu.queue_alpha", value_kind::REAL, "8",
                         "Dynamic-threshold alpha of egress queues (SONiC lossy profile: 8)",
                         MAX_QUEUES, "queue", queue_count,
                         per_queue([](mmu_config::queue_params& q, const config_value& v,
                                      std::uint32_t) { q.shared.alpha = v.real(); }));
    qa.min = 1.0 / 1024;
    qa.max = 1024;
    t.indexed("mmu.queue_static", value_kind::BYTES, "4MiB",
              "Static shared limit of an egress queue", MAX_QUEUES, "queue", queue_count,
              per_queue([](mmu_config::queue_params& q, const config_value& v, std::uint32_t cell) {
                  q.shared.static_cells = v.bytes() / cell;
              }));
}

void add_qos(param_table<switch_config>& t) {
    t.choice<bool>(
        "qos.trust", "dscp",
        "Classify by DSCP, or by PCP for VLAN-tagged frames (untagged ones still by DSCP)",
        {{"dscp", false}, {"pcp", true}}, [](switch_config& c, bool v) { c.qos.trust_pcp = v; });
    t.add("qos.dscp_to_tc", value_kind::STRING_LIST, "[]",
          "Entries 'dscp:tc' or 'lo-hi:tc' over the default DSCP/8 (IP precedence)",
          [](switch_config& c, const config_value& v) {
              const config_node& qn = v.section();
              for (unsigned d = 0; d < 64; ++d)
                  c.qos.dscp_to_tc[d] = static_cast<std::uint8_t>(d / 8);
              for (const auto& e : v.str_list()) {
                  const auto colon = e.find(':');
                  if (colon == std::string::npos)
                      v.fail("entry '" + e + "' is not 'dscp:tc' or 'lo-hi:tc'");
                  const std::string range = e.substr(0, colon);
                  const auto dash = range.find('-');
                  const unsigned lo = parse_index(qn, v.key(), range.substr(0, dash), 0, 63);
                  const unsigned hi =
                      dash == std::string::npos
                          ? lo
                          : parse_index(qn, v.key(), range.substr(dash + 1), lo, 63);
                  const unsigned tc = parse_index(qn, v.key(), e.substr(colon + 1), 0, 7);
                  for (unsigned d = lo; d <= hi; ++d)
                      c.qos.dscp_to_tc[d] = static_cast<std::uint8_t>(tc);
              }
          });
    t.add("qos.pcp_to_tc", value_kind::STRING_LIST, "[]",
          "8 traffic classes, one per PCP (default: identity)",
          [](switch_config& c, const config_value& v) {
              load_map8(v.section(), v.key(), 7, c.qos.pcp_to_tc);
          });
    t.add("qos.tc_to_queue", value_kind::STRING_LIST, "[]",
          "8 egress queues, one per traffic class (default: tc x queues / 8)",
          [](switch_config& c, const config_value& v) {
              for (unsigned tc = 0; tc < 8; ++tc)
                  c.qos.tc_to_queue[tc] = static_cast<std::uint8_t>(tc * c.queues / 8);
              load_map8(v.section(), v.key(), c.queues - 1, c.qos.tc_to_queue);
          });
    t.add("qos.tc_to_pg", value_kind::STRING_LIST, "[]",
          "8 priority groups, one per traffic class (default: identity)",
          [](switch_config& c, const config_value& v) {
              for (unsigned tc = 0; tc < 8; ++tc)
                  c.qos.tc_to_pg[tc] = static_cast<std::uint8_t>(tc);
              load_map8(v.section(), v.key(), 7, c.qos.tc_to_pg);
          });
}

void add_credit_queue_keys(param_table<switch_config>& t);

void add_scheduling(param_table<switch_config>& t) {
    t.choice<sched_discipline>(
        "scheduler.kind", "dwrr",
        "sp: strict priority (higher queue first); wrr or dwrr among the non-strict queues",
        {{"sp", sched_discipline::SP},
         {"wrr", sched_discipline::WRR},
         {"dwrr", sched_discipline::DWRR}},
        &switch_config::discipline);
    t.add("scheduler.strict_queues", value_kind::STRING_LIST, "[]",
          "Queues served by strict priority above the WRR/DWRR group",
          [](switch_config& c, const config_value& v) {
              const std::uint8_t strict = load_index_mask(v.section(), v.key(), c.queues - 1);
              c.sched.assign(c.queues, queue_sched_params{});
              for (unsigned q = 0; q < c.queues; ++q)
                  c.sched[q].strict = c.discipline == sched_discipline::SP || (strict >> q & 1);
          });
    auto& qu = t.indexed("scheduler.quantum", value_kind::BYTES, "1538B",
                         "WRR/DWRR quantum per round, in wire bytes (frame + preamble + IFG; "
                         "1538B = one 1500 B IP packet)",
                         MAX_QUEUES, "queue", queue_count,
                         [](switch_config& c, unsigned q, const config_value& v) {
                             if (q < c.sched.size())
                                 c.sched[q].quantum_bytes = static_cast<std::uint32_t>(v.bytes());
                         });
    qu.min = 64;
    qu.max = 16 << 20;
    t.add("scheduler.quanta", value_kind::STRING_LIST, "[]",
          "Per-queue quanta overriding `quantum`, one per queue, each 64B..16MiB (e.g. "
          "['1538B', '3076B']; the older spelling of a `quantum` list)",
          [](switch_config& c, const config_value& v) {
              const auto quanta = v.str_list();
              if (quanta.empty()) return;
              if (quanta.size() != c.queues)
                  v.fail("needs one quantum per queue (" + std::to_string(c.queues) + "), got " +
                         std::to_string(quanta.size()));
              for (unsigned q = 0; q < c.queues; ++q) {
                  std::string why;
                  const auto b = parse_bytes(quanta[q], why);
                  if (!b) v.fail("entry '" + quanta[q] + "': " + why);
                  // `quantum` has these bounds in the schema; `quanta` entries are checked here.
                  if (*b < 64 || *b > queue_scheduler::MAX_QUANTUM)
                      v.fail("entry " + std::to_string(q) + " must be 64B to 16MiB, got " +
                             std::to_string(*b) + "B");
                  c.sched[q].quantum_bytes = static_cast<std::uint32_t>(*b);
              }
          });
    t.add("shaper.rate", value_kind::BIT_RATE, "0bps",
          "Port token-bucket rate in wire bits/s; 0 = off",
          [](switch_config& c, const config_value& v) { c.port_shaper.rate_bps = v.rate(); });
    t.add("shaper.burst", value_kind::BYTES, "3000B",
          "Port token-bucket depth (wire bytes, >= largest frame)",
          [](switch_config& c, const config_value& v) { c.port_shaper.burst_bytes = v.bytes(); });
    t.list<queue_shaper_entry>(
        "queue_shapers", "[]", "Per-queue token buckets", queue_shaper_params(),
        [](switch_config& c, queue_shaper_entry&& e, const config_node& n) {
            if (e.queue >= c.queues)
                n.fail("queue", "is not below switch.queues (" + std::to_string(c.queues) + ")");
            c.queue_shaper[e.queue] = e.shaper;
        });
    add_credit_queue_keys(t);
}

/// The credit queue (facts-mmu-credit-workload §2.2, docs/models/credit.md).
void add_credit_queue_keys(param_table<switch_config>& t) {
    // Optional with the ns2-xpass values when absent: a key given without credit_queue.queue
    // is refused, and the config echo of a run without a credit queue must load again.
    auto& q = t.add("credit_queue.queue", value_kind::INT, "",
                    "The egress queue of credits (ExpressPass) or emulation packets (FlashPass): "
                    "strict, token-bucket limited to credit_queue.ratio of the port rate, "
                    "credit_queue.buffer deep (absent: no credit queue)",
                    [](switch_config& c, const config_value& v) {
                        if (v.present()) c.credit_queue.queue = static_cast<int>(v.integer());
                    });
    q.optional = true;
    q.min = 0;
    q.max = 7;
    auto& r = t.add("credit_queue.ratio", value_kind::REAL, "",
                    "Bucket rate over the port rate (absent: 84/(84+1538), one 84 B credit per "
                    "1538 B data frame)",
                    [](switch_config& c, const config_value& v) {
                        if (v.present()) c.credit_queue.ratio = v.real();
                    });
    r.optional = true;
    r.min = 1e-6;
    r.max = 1;
    auto& b = t.add("credit_queue.buffer", value_kind::BYTES, "",
                    "Wire bytes the credit queue holds; an arrival above it is dropped as "
                    "credit_dropped (absent: 672B, ns2-xpass credit_limit_: 8 credits of 84 B)",
                    [](switch_config& c, const config_value& v) {
                        if (v.present()) c.credit_queue.buffer_bytes = v.bytes();
                    });
    b.optional = true;
    b.min = 84;
    auto& bu = t.add("credit_queue.burst", value_kind::BYTES, "",
                     "Bucket depth in wire bytes, empty at start (absent: 168B, ns2-xpass "
                     "max_tokens_: 2 credits)",
                     [](switch_config& c, const config_value& v) {
                         if (v.present()) c.credit_queue.burst_bytes = v.bytes();
                     });
    bu.optional = true;
    bu.min = 84;
    auto& sd = t.add("credit_queue.selective_drop", value_kind::INT, "",
                     "FlashPass over-provisioning: a non-ECT arrival that makes the credit queue "
                     "hold more than this many frames is dropped (credit_dropped); ECT ones use "
                     "the whole buffer (absent: off; the thesis: 2)",
                     [](switch_config& c, const config_value& v) {
                         if (v.present())
                             c.credit_queue.selective_drop =
                                 static_cast<std::uint32_t>(v.integer());
                     });
    sd.optional = true;
    sd.min = 1;
    auto& j = t.add("credit_queue.jitter", value_kind::REAL, "",
                    "Each credit takes its wire bytes x (1 + U(-jitter, +jitter)) of the "
                    "bucket's tokens, so a saturated queue's gaps vary by that share (ns2-xpass's "
                    "76-92 B credits in its large-scale runs: about 0.1), so periodic credit "
                    "streams meet it at varying phases (absent: 0, off)",
                    [](switch_config& c, const config_value& v) {
                        if (v.present()) c.credit_queue.jitter = v.real();
                    });
    j.optional = true;
    j.min = 0;
    j.max = 0.5;
}

/// Queue q's threshold `v` in bytes or frames; min_th and max_th of one queue use one unit.
size_spec ecn_threshold(switch_config& c, unsigned q, const config_value& v) {
    const size_spec th = v.size();
    c.ecn.packets[q] = th.packets;
    return th;
}

void add_qcn_keys(param_table<switch_config>& t);
void add_bcn_keys(param_table<switch_config>& t);
void add_fera_keys(param_table<switch_config>& t);
void add_rcp_keys(param_table<switch_config>& t);

void add_ecn(param_table<switch_config>& t) {
    t.indexed_choice<ecn_mode>(
        "ecn.mode", "off",
        "off; red (min_th/max_th/max_p/weight); step (DCTCP: mark above k on the instantaneous "
        "queue)",
        MAX_QUEUES, "queue", queue_count,
        {{"off", ecn_mode::OFF}, {"red", ecn_mode::RED}, {"step", ecn_mode::STEP}},
        [](switch_config& c, unsigned q, ecn_mode m) { c.ecn.mode[q] = m; });
    t.choice<ecn_scope>(
        "ecn.scope", "queue",
        "Occupancy compared with the threshold: the frame's queue, its egress port, or its "
        "service pool",
        {{"queue", ecn_scope::QUEUE}, {"port", ecn_scope::PORT}, {"pool", ecn_scope::POOL}},
        [](switch_config& c, ecn_scope s) { c.ecn.scope = s; });
    t.choice<queue_threshold>(
        "ecn.queue_threshold", "standard",
        "Per-queue thresholds (scope queue): standard (every queue k), minimum (k x W_i / sum W), "
        "mq_ecn (k x min(quantum_i / (T_round C), 1); strict queues keep k)",
        {{"standard", queue_threshold::STANDARD},
         {"minimum", queue_threshold::MINIMUM},
         {"mq_ecn", queue_threshold::MQ_ECN}},
        [](switch_config& c, queue_threshold q) { c.ecn.per_queue = q; });
    // A step has min = max = K; RED reads min_th/max_th/max_p/weight (the other set is unused).
    t.indexed("ecn.k", value_kind::SIZE, "65pkt", "Step threshold K (bytes, or frames with 'pkt')",
              MAX_QUEUES, "queue", queue_count,
              [](switch_config& c, unsigned q, const config_value& v) {
                  if (c.ecn.mode[q] != ecn_mode::STEP) return;
                  const double k = double(ecn_threshold(c, q, v).value);
                  c.ecn.red[q] = {k, k, 1.0, 1.0};
              });
    t.indexed("ecn.min_th", value_kind::SIZE, "30KB", "RED minimum threshold", MAX_QUEUES, "queue",
              queue_count, [](switch_config& c, unsigned q, const config_value& v) {
                  if (c.ecn.mode[q] == ecn_mode::STEP) return;
                  c.ecn.red[q].min_th = double(ecn_threshold(c, q, v).value);
              });
    t.indexed("ecn.max_th", value_kind::SIZE, "90KB", "RED maximum threshold (same unit as min_th)",
              MAX_QUEUES, "queue", queue_count,
              [](switch_config& c, unsigned q, const config_value& v) {
                  if (c.ecn.mode[q] == ecn_mode::STEP) return;
                  const size_spec hi = v.size();
                  if (hi.packets != c.ecn.packets[q])
                      v.fail("must use the same unit as min_th (bytes or pkt)");
                  if (double(hi.value) < c.ecn.red[q].min_th) v.fail("is below min_th");
                  c.ecn.red[q].max_th = double(hi.value);
              });
    auto& mp = t.indexed("ecn.max_p", value_kind::REAL, "0.1", "RED marking probability at max_th",
                         MAX_QUEUES, "queue", queue_count,
                         [](switch_config& c, unsigned q, const config_value& v) {
                             if (c.ecn.mode[q] != ecn_mode::STEP) c.ecn.red[q].max_p = v.real();
                         });
    mp.min = 1e-6;
    mp.max = 1;
    // One weight: a port- or pool-scope average is one for all queues.
    auto& w = t.add("ecn.weight", value_kind::REAL, "1", "RED EWMA weight; 1 = instantaneous queue",
                    [](switch_config& c, const config_value& v) {
                        for (unsigned q = 0; q < MAX_QUEUES; ++q)
                            if (c.ecn.mode[q] != ecn_mode::STEP) c.ecn.red[q].weight = v.real();
                    });
    w.min = 1e-6;
    w.max = 1;
    t.choice<bool>("ecn.mark_on", "enqueue",
                   "Decide at enqueue (RED hardware) or at dequeue (against the queue the frame "
                   "leaves "
                   "behind)",
                   {{"enqueue", false}, {"dequeue", true}},
                   [](switch_config& c, bool v) { c.ecn.mark_on_dequeue = v; });
    t.choice<bool>(
        "ecn.non_ect", "drop",
        "A non-ECT frame that would be marked is dropped (RED, counted as aqm_drop) or passed",
        {{"drop", true}, {"pass", false}},
        [](switch_config& c, bool v) { c.ecn.drop_non_ect = v; });
    t.add("ecn.queues", value_kind::STRING_LIST, "[]", "Queues with ECN/RED (default: all)",
          [](switch_config& c, const config_value& v) {
              const std::uint8_t mask = load_index_mask(v.section(), v.key(), c.queues - 1);
              c.ecn.queue_mask = mask ? mask : 0xff;
          });
    auto& mb = t.add("ecn.mq_ecn.beta", value_kind::REAL, "0.75", "MQ-ECN T_round EWMA weight beta",
                     [](switch_config& c, const config_value& v) { c.ecn.mq_beta = v.real(); });
    mb.min = 0.01;
    mb.max = 0.99;
    t.add("ecn.mq_ecn.t_idle", value_kind::TIME, "0s",
          "MQ-ECN idle decay slot; 0 = one 1500 B MTU at the port rate (the paper's choice)",
          [](switch_config& c, const config_value& v) { c.ecn.mq_t_idle = v.time(); });

    t.add("phantom_queue.enabled", value_kind::BOOL, "false",
          "HULL phantom queue in series with every egress port",
          [](switch_config& c, const config_value& v) { c.phantom.enabled = v.boolean(); });
    auto& g = t.add("phantom_queue.gamma", value_kind::REAL, "0.95",
                    "Drain rate as a fraction of the port rate",
                    [](switch_config& c, const config_value& v) { c.phantom.gamma = v.real(); });
    g.min = 0.01;
    g.max = 1;
    t.add("phantom_queue.interval", value_kind::TIME, "800ns",
          "Drain update interval (NetFPGA: 800 ns)",
          [](switch_config& c, const config_value& v) { c.phantom.interval = v.time(); })
        .min = 1000;
    t.add("phantom_queue.threshold", value_kind::BYTES, "1000B",
          "Marking threshold of the counter (HULL: 1 KB)",
          [](switch_config& c, const config_value& v) { c.phantom.threshold_bytes = v.bytes(); })
        .min = 1;
    add_qcn_keys(t);
    add_bcn_keys(t);
    add_fera_keys(t);
    add_rcp_keys(t);
    add_flow_control_keys(t, &switch_config::flow_control);
}

/// FERA congestion points: a preset and optional overrides of every fera_params field.
void add_fera_keys(param_table<switch_config>& t) {
    using preset = fera_config::preset;
    t.choice<preset>(
        "fera.mode", "none",
        "FERA congestion point on every egress port (docs/models/fera_bcn.md): none, thesis "
        "(Jiang §8.1: hyperbolic f a 1.1 b 1.002 c 0.1, Q_eq 16 and Q_sc 80 x 1500B, T 1ms, "
        "gamma 0.99, N_0 20), analysis (§5/§6.1: linear f, k 0.002, gamma 1), rcp (the RCP "
        "rate law on the same tag path, keys in switch.rcp)",
        {{"none", preset::NONE},
         {"thesis", preset::THESIS},
         {"analysis", preset::ANALYSIS},
         {"rcp", preset::RCP}},
        [](switch_config& c, preset m) { c.fera.mode = m; });
    auto opt =
        [&t](const std::string& key, value_kind kind, const std::string& help,
             const std::function<void(fera_config&, const config_value&)>& store) -> param_spec& {
        auto& s = t.add("fera." + key, kind, "", help + " (absent: the preset's)",
                        [store](switch_config& c, const config_value& v) {
                            if (v.present()) store(c.fera, v);
                        });
        s.optional = true;
        return s;
    };
    auto pkts = [](const config_value& v) {
        const size_spec s = v.size();
        return s.packets ? s.value * 1500 : s.value;
    };
    opt("n0", value_kind::REAL, "N_0, the initial estimate of the flow count: r_0 = C/N_0",
        [](fera_config& f, const config_value& v) { f.n0 = v.real(); });
    opt("interval", value_kind::TIME, "Measurement interval T",
        [](fera_config& f, const config_value& v) { f.interval = v.time(); });
    opt("q_eq", value_kind::SIZE, "Equilibrium queue Q_eq (bytes, or 1500 B packets with 'pkt')",
        [pkts](fera_config& f, const config_value& v) { f.q_eq = pkts(v); });
    opt("q_sc", value_kind::SIZE, "Severe congestion threshold Q_sc (limited increase)",
        [pkts](fera_config& f, const config_value& v) { f.q_sc = pkts(v); });
    auto& ctl = opt("control", value_kind::CHOICE,
                    "Queue control function f(q): linear, hyperbolic, multistage",
                    [](fera_config& f, const config_value& v) {
                        const std::string m = v.str();
                        f.control = m == "linear"       ? fera_queue_control::LINEAR
                                    : m == "multistage" ? fera_queue_control::MULTISTAGE
                                                        : fera_queue_control::HYPERBOLIC;
                    });
    ctl.choices = {"linear", "hyperbolic", "multistage"};
    opt("k", value_kind::REAL, "Linear slope k (multistage: the first stage's)",
        [](fera_config& f, const config_value& v) { f.k = v.real(); });
    opt("a", value_kind::REAL, "Hyperbolic a (q > Q_eq)",
        [](fera_config& f, const config_value& v) { f.a = v.real(); });
    opt("b", value_kind::REAL, "Hyperbolic b (q <= Q_eq)",
        [](fera_config& f, const config_value& v) { f.b = v.real(); });
    opt("c", value_kind::REAL, "Floor c of f",
        [](fera_config& f, const config_value& v) { f.c = v.real(); });
    opt("stages", value_kind::INT, "Multistage: the number of stages n (slope k.s on stage s)",
        [](fera_config& f, const config_value& v) {
            f.stages = static_cast<std::uint32_t>(v.integer());
        })
        .min = 1;
    opt("multistage_continuous", value_kind::BOOL,
        "Multistage f continuous across stage boundaries (false: the jump form)",
        [](fera_config& f, const config_value& v) { f.multistage_continuous = v.boolean(); });
    opt("lambda", value_kind::REAL, "EMA weight lambda in (0, 1]; 1 = no EMA",
        [](fera_config& f, const config_value& v) { f.lambda = v.real(); });
    opt("ema_uses_current_rate", value_kind::BOOL,
        "EMA history term r_i (true) instead of r_(i-1) as printed (eq. 14)",
        [](fera_config& f, const config_value& v) { f.ema_uses_current_rate = v.boolean(); });
    opt("gamma", value_kind::REAL, "Target utilisation gamma above Q_eq (sec 7.4)",
        [](fera_config& f, const config_value& v) { f.gamma = v.real(); });
    opt("delta0", value_kind::BIT_RATE, "Limited increase delta_0; 0 = off",
        [](fera_config& f, const config_value& v) { f.delta0 = v.rate(); });
    opt("eta", value_kind::REAL, "Limited increase growth factor eta > 1",
        [](fera_config& f, const config_value& v) { f.eta = v.real(); });
    opt("delta_min", value_kind::BIT_RATE, "Floor of delta",
        [](fera_config& f, const config_value& v) { f.delta_min = v.rate(); });
    opt("min_rate", value_kind::BIT_RATE, "Floor of the advertised rate; 0 = none",
        [](fera_config& f, const config_value& v) { f.min_rate = v.rate(); });
    opt("max_rate", value_kind::BIT_RATE, "Cap of the advertised rate; 0 = the port rate",
        [](fera_config& f, const config_value& v) { f.max_rate = v.rate(); });
    opt("hold_while_paused", value_kind::BOOL,
        "No rate increase in an interval in which the port paused its inputs (an extension)",
        [](fera_config& f, const config_value& v) { f.hold_while_paused = v.boolean(); });
    opt("strict_stability", value_kind::BOOL,
        "Refuse parameters that fail the stability test alpha.k/Q_eq < 1 (else a warning)",
        [](fera_config& f, const config_value& v) { f.strict_stability = v.boolean(); });
}

/// The RCP law of switch.fera.mode rcp (Alizadeh §5.5.3): gains, T, d0 and the AP variants.
void add_rcp_keys(param_table<switch_config>& t) {
    auto opt =
        [&t](const std::string& key, value_kind kind, const std::string& help,
             const std::function<void(rcp_config&, const config_value&)>& store) -> param_spec& {
        auto& s =
            t.add("rcp." + key, kind, "", help, [store](switch_config& c, const config_value& v) {
                if (v.present()) store(c.rcp, v);
            });
        s.optional = true;
        return s;
    };
    opt("alpha", value_kind::REAL, "RCP gain alpha of the spare capacity C - y (absent: 0.1)",
        [](rcp_config& r, const config_value& v) { r.alpha = v.real(); })
        .min = 0;
    opt("beta", value_kind::REAL, "RCP gain beta of the queue drain q/d0, q in bits (absent: 1)",
        [](rcp_config& r, const config_value& v) { r.beta = v.real(); })
        .min = 0;
    opt("interval", value_kind::TIME, "RCP update interval T (absent: 50ms)",
        [](rcp_config& r, const config_value& v) { r.interval = v.time(); });
    opt("d0", value_kind::TIME, "RCP average RTT d0, held fixed (absent: 20ms)",
        [](rcp_config& r, const config_value& v) { r.d0 = v.time(); });
    auto& var = opt("variant", value_kind::CHOICE,
                    "none (plain RCP), ap (averaging T/2 after each update), ap2 (at T/3 and "
                    "2T/3), pd (R(1 + T/d0 (Fb/2 + (Fb - Fb_prev)/4))) (absent: none)",
                    [](rcp_config& r, const config_value& v) {
                        const std::string m = v.str();
                        r.variant = m == "ap"    ? rcp_variant::AP
                                    : m == "ap2" ? rcp_variant::AP2
                                    : m == "pd"  ? rcp_variant::PD
                                                 : rcp_variant::NONE;
                    });
    var.choices = {"none", "ap", "ap2", "pd"};
    auto& af = opt("averaging_factor", value_kind::REAL,
                   "AP/AP2 averaging factor a in (0, 1]: R <- (1 - a) R + a R_T (absent: 0.5)",
                   [](rcp_config& r, const config_value& v) { r.averaging_factor = v.real(); });
    af.min = 0;
    af.max = 1;
    opt("initial_rate", value_kind::BIT_RATE, "RCP rate at the start (absent: the port rate)",
        [](rcp_config& r, const config_value& v) { r.initial_rate = v.rate(); });
    opt("min_rate", value_kind::BIT_RATE,
        "Floor of the RCP rate, which must stay > 0 (absent: the port rate / 1000)",
        [](rcp_config& r, const config_value& v) { r.min_rate = v.rate(); });
}

/// 802.1Qau congestion points: a preset and optional overrides of its fields.
void add_qcn_keys(param_table<switch_config>& t) {
    using preset = qcn_config::preset;
    t.choice<preset>(
        "qcn.mode", "none",
        "802.1Qau congestion point on the queues of the CNPV priorities: none, "
        "standard (IEEE8021-CN-MIB defaults: Qeq 26000B, w 2, sampling table from "
        "150000B, +-15% jitter), thesis (Alizadeh Fig 5.6: Qeq 22 x 1500B, w 2, "
        "p_s 1%, Fb in 1500 B packets)",
        {{"none", preset::NONE}, {"standard", preset::STANDARD}, {"thesis", preset::THESIS}},
        [](switch_config& c, preset m) { c.qcn.mode = m; });
    t.add("qcn.priorities", value_kind::STRING_LIST, "",
          "CNPV priorities (0..7): the queues they map to (qos) get a congestion point "
          "(absent: every priority)",
          [](switch_config& c, const config_value& v) {
              if (v.present()) c.qcn.priorities = load_index_mask(v.section(), v.key(), 7);
          })
        .optional = true;
    t.add("qcn.lossless", value_kind::BOOL, "false",
          "Require every CNPV queue to be lossless (switch.mmu.lossless_queues), as a CN domain "
          "with PFC or PAUSE as its backstop is run; false: drop-tail queues, as the thesis runs "
          "QCN",
          [](switch_config& c, const config_value& v) { c.qcn.lossless = v.boolean(); });
    auto opt =
        [&t](const std::string& key, value_kind kind, const std::string& help,
             const std::function<void(switch_config&, const config_value&)>& store) -> param_spec& {
        auto& s = t.add("qcn." + key, kind, "", help + " (absent: the preset's)",
                        [store](switch_config& c, const config_value& v) {
                            if (v.present()) store(c, v);
                        });
        s.optional = true;
        return s;
    };
    opt("q_eq", value_kind::BYTES, "Queue set point Q_eq (cpQueueSizeSetPoint)",
        [](switch_config& c, const config_value& v) { c.qcn.q_eq = v.bytes(); })
        .min = 100;
    auto& w = opt("w", value_kind::REAL, "Feedback weight w (the MIB's cpFeedbackWeight is log2 w)",
                  [](switch_config& c, const config_value& v) { c.qcn.w = v.real(); });
    w.min = 1.0 / 1024;
    w.max = 1024;
    opt("sample_base", value_kind::BYTES,
        "Bytes between samples at qFb < 8 (cpMinSampleBase); the table divides it by 1..8",
        [](switch_config& c, const config_value& v) { c.qcn.sample_base = v.bytes(); })
        .min = 10000;
    auto& j = opt("jitter", value_kind::REAL,
                  "Each sample interval x U[1 - jitter, 1 + jitter); 0 = the exact table",
                  [](switch_config& c, const config_value& v) { c.qcn.jitter = v.real(); });
    j.min = 0;
    j.max = 0.99;
    auto& ps =
        opt("sample_probability", value_kind::REAL,
            "> 0: sample each frame with this probability (the thesis' p_s) instead of "
            "the byte table; 0 = the table",
            [](switch_config& c, const config_value& v) { c.qcn.sample_probability = v.real(); });
    ps.min = 0;
    ps.max = 1;
    opt("quantum", value_kind::BYTES,
        "> 0: qFb = min(63, |Fb| / quantum) (the thesis: Fb in 1500 B packets); 0 = the "
        "standard's 63 |Fb| / ((2w + 1) Q_eq)",
        [](switch_config& c, const config_value& v) {
            c.qcn.quantum = static_cast<std::uint32_t>(v.bytes());
        })
        .max = 1e9;
    auto& pr = t.add("qcn.cnm_priority", value_kind::INT, "6",
                     "cnmTransmitPriority: a CNM's PCP when the sampled frame was tagged",
                     [](switch_config& c, const config_value& v) {
                         c.qcn.cnm_priority = static_cast<std::uint8_t>(v.integer());
                     });
    pr.min = 0;
    pr.max = 7;
    auto& mo = t.add("qcn.msdu_octets", value_kind::INT, "64",
                     "Leading octets of the sampled frame's MSDU a CNM carries (0..64)",
                     [](switch_config& c, const config_value& v) {
                         c.qcn.msdu_octets = static_cast<std::uint8_t>(v.integer());
                     });
    mo.min = 0;
    mo.max = 64;
}

/// BCN congestion points: a preset and optional overrides of every bcn_cp_params field.
void add_bcn_keys(param_table<switch_config>& t) {
    using preset = bcn_config::preset;
    t.choice<preset>("bcn.mode", "none",
                     "BCN congestion point (Cisco 802.1Qau proposal) on the queues of the BCN "
                     "priorities: none, thesis (Jiang/facts-l2 §5: Q_eq 16 x 1500B, w 2, each "
                     "frame sampled with probability 1/100, Fb in 1500 B packets, no STOP) "
                     "(docs/models/bcn.md)",
                     {{"none", preset::NONE}, {"thesis", preset::THESIS}},
                     [](switch_config& c, preset m) { c.bcn.mode = m; });
    t.add("bcn.priorities", value_kind::STRING_LIST, "",
          "BCN priorities (0..7): the queues they map to (qos) get a congestion point; none of "
          "them may be a QCN queue (absent: every priority)",
          [](switch_config& c, const config_value& v) {
              if (v.present()) c.bcn.priorities = load_index_mask(v.section(), v.key(), 7);
          })
        .optional = true;
    auto opt =
        [&t](const std::string& key, value_kind kind, const std::string& help,
             const std::function<void(switch_config&, const config_value&)>& store) -> param_spec& {
        auto& s = t.add("bcn." + key, kind, "", help + " (absent: the preset's)",
                        [store](switch_config& c, const config_value& v) {
                            if (v.present()) store(c, v);
                        });
        s.optional = true;
        return s;
    };
    opt("q_eq", value_kind::BYTES, "Queue set point Q_eq",
        [](switch_config& c, const config_value& v) { c.bcn.q_eq = v.bytes(); })
        .min = 1;
    opt("q_sc", value_kind::BYTES,
        "Severe congestion Q_sc: above it a sample sends STOP (BCN(0,0)); 0 = no STOP",
        [](switch_config& c, const config_value& v) { c.bcn.q_sc = v.bytes(); });
    auto& w = opt("w", value_kind::REAL, "Weight w of Q_delta in Fb = -(Q_off + w Q_delta)",
                  [](switch_config& c, const config_value& v) { c.bcn.w = v.real(); });
    w.min = 0;
    w.max = 1024;
    opt("fb_unit", value_kind::BYTES, "Unit of Q_off, Q_delta and Fb (the thesis: a 1500 B packet)",
        [](switch_config& c, const config_value& v) { c.bcn.fb_unit = v.bytes(); })
        .min = 1;
    opt("sampling", value_kind::CHOICE,
        "random (each frame with probability 1/n) or every_n (the n-th, 2n-th .. frame)",
        [](switch_config& c, const config_value& v) {
            c.bcn.sampling = v.str() == "random" ? bcn_sampling::RANDOM : bcn_sampling::EVERY_N;
        })
        .choices = {"every_n", "random"};
    auto& se = opt("sample_every", value_kind::INT, "n: one sample per n frames, 1..1000000",
                   [](switch_config& c, const config_value& v) {
                       c.bcn.sample_every = static_cast<std::uint32_t>(v.integer());
                   });
    se.min = 1;
    se.max = 1e6;
    auto& qb = opt("quantise_bits", value_kind::INT,
                   "0: Fb as computed; 1..16: |Fb| clipped to (2w+1) Q_eq in that many bits",
                   [](switch_config& c, const config_value& v) {
                       c.bcn.quantise_bits = static_cast<std::uint32_t>(v.integer());
                   });
    qb.min = 0;
    qb.max = 16;
    auto& pr = t.add("bcn.message_priority", value_kind::INT, "6",
                     "A BCN message's PCP when the sampled frame was tagged",
                     [](switch_config& c, const config_value& v) {
                         c.bcn.message_priority = static_cast<std::uint8_t>(v.integer());
                     });
    pr.min = 0;
    pr.max = 7;
    auto& mo = t.add("bcn.msdu_octets", value_kind::INT, "64",
                     "Leading octets of the sampled frame's MSDU a BCN message carries (0..64)",
                     [](switch_config& c, const config_value& v) {
                         c.bcn.msdu_octets = static_cast<std::uint8_t>(v.integer());
                     });
    mo.min = 0;
    mo.max = 64;
}

/// PAUSE/PFC generation: every key optional, so a scenario without them echoes as before.
void add_flow_control_generation(param_table<switch_config>& t) {
    auto& gen = t.add(
        "flow_control.generate", value_kind::CHOICE, "",
        "Send PAUSE/PFC: pfc (per priority, from each lossless PG's XOFF/XON point), pause "
        "(802.3x, port level: while any lossless PG of the port is XOFF), queue_pause (802.3x "
        "ON/OFF on every other port while an egress queue is above q_on, until below q_off; "
        "seed-003 1.9); none or absent: no generation",
        [](switch_config& c, const config_value& v) {
            if (!v.present()) return;
            const std::string m = v.str();
            c.flow_control_generation.mode = m == "pfc"           ? pause_generation::PFC
                                             : m == "pause"       ? pause_generation::PAUSE
                                             : m == "queue_pause" ? pause_generation::QUEUE_PAUSE
                                                                  : pause_generation::OFF;
        });
    gen.optional = true;
    gen.choices = {"none", "pfc", "pause", "queue_pause"};
    auto& pq = t.add("flow_control.pause_quanta", value_kind::INT, "",
                     "Quanta (512 bit times) in every XOFF sent (absent: 65535)",
                     [](switch_config& c, const config_value& v) {
                         if (v.present())
                             c.flow_control_generation.pause_quanta =
                                 static_cast<std::uint16_t>(v.integer());
                     });
    pq.optional = true;
    pq.min = 1;
    pq.max = 65535;
    auto& rq = t.add("flow_control.refresh_quanta", value_kind::INT, "",
                     "While XOFF, the XOFF is re-sent every this many quanta; 0 = never "
                     "(absent: 32767)",
                     [](switch_config& c, const config_value& v) {
                         if (v.present())
                             c.flow_control_generation.refresh_quanta =
                                 static_cast<std::uint16_t>(v.integer());
                     });
    rq.optional = true;
    rq.min = 0;
    rq.max = 65535;
    auto& xon = t.indexed(
        "flow_control.xon", value_kind::BYTES, "",
        "XON_TH per lossless PG: XON is sent when the PG's headroom is empty and its cells "
        "(reserve included) are at most max(xon, pg_min + threshold - xon_offset) (absent: 0)",
        PRIORITY_GROUPS, "PG", nullptr,
        per_pg([](mmu_config::pg_params& pg, const config_value& v, std::uint32_t cell) {
            if (v.present()) pg.xon_cells = v.bytes() / cell;
        }));
    xon.optional = true;
    auto& off = t.indexed(
        "flow_control.xon_offset", value_kind::BYTES, "",
        "XON_OFFSET_TH per lossless PG: hysteresis below the XOFF threshold (absent: 2496B, "
        "SONiC's Tomahawk-2 profile)",
        PRIORITY_GROUPS, "PG", nullptr,
        per_pg([](mmu_config::pg_params& pg, const config_value& v, std::uint32_t cell) {
            pg.xon_offset_cells = cells_up(v.present() ? v.bytes() : 2496, cell);
        }));
    off.optional = true;
    auto size_key = [&t](const char* key, const char* help,
                         std::uint64_t& (*field)(switch_config&)) {
        auto& k = t.add(key, value_kind::SIZE, "", help,
                        [field](switch_config& c, const config_value& v) {
                            if (!v.present()) return;
                            const size_spec s = v.size();
                            field(c) = s.value;
                            c.flow_control_generation.q_in_frames = s.packets;
                        });
        k.optional = true;
    };
    auto& hs = t.add("flow_control.headroom", value_kind::CHOICE, "",
                     "configured: mmu.pg_headroom as given; calculated: each port's lossless PG "
                     "headroom from the headroom calculator for its link (speed, latency), "
                     "headroom_mtu, the peer's response delay and the cell size (absent: "
                     "configured)",
                     [](switch_config& c, const config_value& v) {
                         if (v.present()) c.headroom.calculated = v.str() == "calculated";
                     });
    hs.optional = true;
    hs.choices = {"configured", "calculated"};
    t.add("flow_control.headroom_check", value_kind::BOOL, "",
          "Refuse a configured mmu.pg_headroom below the calculator's minimum for any port "
          "(absent: false)",
          [](switch_config& c, const config_value& v) {
              if (v.present()) c.headroom.check = v.boolean();
          })
        .optional = true;
    auto& hm = t.add("flow_control.headroom_mtu", value_kind::BYTES, "",
                     "Largest frame (FCS included) of any class on the links, for the headroom "
                     "calculator (absent: 1518B)",
                     [](switch_config& c, const config_value& v) {
                         if (v.present()) c.headroom.mtu = static_cast<std::uint32_t>(v.bytes());
                     });
    hm.optional = true;
    hm.min = 64;
    hm.max = 16384;
    size_key("flow_control.q_on",
             "queue_pause: a queue above this (frames with 'pkt', or bytes) sends PAUSE ON",
             [](switch_config& c) -> std::uint64_t& { return c.flow_control_generation.q_on; });
    size_key("flow_control.q_off",
             "queue_pause: PAUSE OFF once the congested queue is below this (same unit as q_on)",
             [](switch_config& c) -> std::uint64_t& { return c.flow_control_generation.q_off; });
}

/// SONiC PFC watchdog: every key optional; `enabled` turns it on.
void add_pfc_watchdog(param_table<switch_config>& t) {
    t.add("pfc_watchdog.enabled", value_kind::BOOL, "",
          "PFC watchdog on every port that honours PFC (SONiC semantics; absent: off)",
          [](switch_config& c, const config_value& v) {
              if (v.present()) c.pfc_watchdog.enabled = v.boolean();
          })
        .optional = true;
    auto time_key = [&t](const char* key, const char* help, ps_t pfc_watchdog_config::*field) {
        auto& k = t.add(key, value_kind::TIME, "", help,
                        [field](switch_config& c, const config_value& v) {
                            if (v.present()) c.pfc_watchdog.*field = v.time();
                        });
        k.optional = true;
        k.min = 1e6;   // 1 us
        k.max = 6e13;  // 60 s, SONiC's largest restoration time
    };
    time_key("pfc_watchdog.detection_time",
             "A watched priority paused this long without a break is stormed (absent: 200ms, "
             "SONiC's default; SONiC's CLI allows 100ms..5s)",
             &pfc_watchdog_config::detection);
    time_key("pfc_watchdog.restoration_time",
             "A stormed priority is restored this long after its last XOFF (absent: 200ms)",
             &pfc_watchdog_config::restoration);
    auto& a = t.add("pfc_watchdog.action", value_kind::CHOICE, "",
                    "drop: ignore PFC, empty the queue and drop its arrivals and the ingress "
                    "PG's; forward: ignore PFC; alert: count only (absent: drop)",
                    [](switch_config& c, const config_value& v) {
                        if (!v.present()) return;
                        const std::string s = v.str();
                        c.pfc_watchdog.action = s == "drop"      ? pfc_watchdog_action::DROP
                                                : s == "forward" ? pfc_watchdog_action::FORWARD
                                                                 : pfc_watchdog_action::ALERT;
                    });
    a.optional = true;
    a.choices = {"drop", "forward", "alert"};
    t.add("pfc_watchdog.priorities", value_kind::STRING_LIST, "",
          "Watched priorities (0..7; absent: 3 and 4, SONiC's lossless ones)",
          [](switch_config& c, const config_value& v) {
              if (v.present()) c.pfc_watchdog.priorities = load_index_mask(v.section(), v.key(), 7);
          })
        .optional = true;
}

}  // namespace

const param_table<switch_config>& switch_config::params() {
    // Declaration order is load order: cell sizes before byte sizes converted to cells, queues
    // before per-queue maps, the scheduler kind before strict queues and quanta, ECN mode first.
    static const param_table<switch_config> table = [] {
        param_table<switch_config> t;
        add_pipeline(t);
        add_mmu(t);
        add_qos(t);
        add_scheduling(t);
        add_ecn(t);
        add_flow_control_generation(t);
        add_pfc_watchdog(t);
        return t;
    }();
    return table;
}

mmu_config switch_config::mmu_for(unsigned n_ports) const {
    mmu_config m = mmu;
    m.total_cells = buffer_bytes / m.cell_bytes;
    m.ports = n_ports;
    m.queues = queues;
    // A port map of the wrong length leaves port_pipe short: pipeline.check_ports() names it.
    if (m.partitions > 1 && pipeline.check_ports(n_ports).empty()) {
        m.pipes = pipeline.count;
        m.port_pipe.resize(n_ports);
        for (unsigned p = 0; p < n_ports; ++p)
            m.port_pipe[p] = pipeline.port_map.empty()
                                 ? static_cast<std::uint16_t>(p * pipeline.count / n_ports)
                                 : pipeline.port_map[p];
    }
    return m;
}

namespace {

/// The key naming index i of a per-index key: "key[i]" when given as a list or map, else "key".
std::string element_key(const config_node& n, const std::string& key, unsigned i) {
    std::vector<unsigned> given;
    return n.indexed_form(key, given) == config_node::index_form::ALL
               ? key
               : key + "[" + std::to_string(i) + "]";
}

/// Fails naming the first of `keys` given in `n`: they do not apply (`why`).
void refuse_given(const config_node& n, std::initializer_list<const char*> keys,
                  const std::string& why) {
    for (const char* k : keys)
        if (n.has(k)) n.fail(k, why);
}

const char* unit_name(bool packets) {
    return packets ? "pkt" : "bytes";
}

}  // namespace

void switch_config::validate_pools(const config_node& n) const {
    const config_node mn = n.child("mmu");
    // Every PG (any traffic class may map to it) and every queue in use needs a pool with cells.
    auto check = [&](unsigned pool, std::uint8_t given, const char* what, unsigned i,
                     const char* pool_key, const char* lossless_key) {
        if (pool == LOSSY_POOL || mmu.pool_cells[pool]) return;
        if (given == POOL_BY_LOSSLESS)
            mn.fail("lossless_pool",
                    std::string("is 0 but ") + lossless_key + " lists " + what + "s that need it");
        mn.fail(element_key(mn, pool_key, i),
                std::string(what) + " " + std::to_string(i) + " is in pool " +
                    std::to_string(pool) + ", which has no cells (switch.mmu.pool_size[" +
                    std::to_string(pool) + "]" +
                    (pool == LOSSLESS_POOL ? " or lossless_pool" : "") + " is 0)");
    };
    for (unsigned g = 0; g < PRIORITY_GROUPS; ++g)
        check(mmu.pg[g].service_pool(), mmu.pg[g].pool, "priority group", g, "pg_pool",
              "lossless_pgs");
    for (unsigned q = 0; q < queues; ++q)
        check(mmu.queue[q].service_pool(), mmu.queue[q].pool, "queue", q, "queue_pool",
              "lossless_queues");
    // Without the reserves (they depend on the port count: mmu_config::validate()).
    std::uint64_t sized = mmu.headroom_pool_cells;
    for (unsigned p = 1; p < SERVICE_POOLS; ++p) sized += mmu.pool_cells[p];
    const std::uint64_t total = buffer_bytes / mmu.cell_bytes;
    if (sized >= total) {
        const char* key = mn.has("pool_size")       ? "pool_size"
                          : mn.has("lossless_pool") ? "lossless_pool"
                                                    : "headroom_pool";
        mn.fail(key, "pools 1..3 and the headroom pool take " + std::to_string(sized) +
                         " cells, leaving none of the " + std::to_string(total) +
                         "-cell buffer for pool 0");
    }
}

void switch_config::validate_ecn(const config_node& n) const {
    const config_node en = n.child("ecn");
    if (ecn.per_queue != queue_threshold::STANDARD && ecn.scope != ecn_scope::QUEUE)
        en.fail("queue_threshold", "'" + en.str("queue_threshold") + "' needs scope 'queue'");
    // One policy decides the step queues and one the others, each in one unit; MQ-ECN scales
    // one K.
    const std::uint8_t marking = ecn.marking(queues);
    int first_step = -1, first_red = -1;
    bool step_mode = false, red_mode = false;
    for (unsigned q = 0; q < queues; ++q) {
        if (!(marking >> q & 1)) continue;
        (ecn.mode[q] == ecn_mode::STEP ? step_mode : red_mode) = true;
        const bool step = ecn.is_step(q);
        int& first = step ? first_step : first_red;
        const std::string key = element_key(en, ecn.mode[q] == ecn_mode::STEP ? "k" : "min_th", q);
        if (first < 0) {
            first = int(q);
            continue;
        }
        const auto f = static_cast<unsigned>(first);
        if (ecn.packets[q] != ecn.packets[f])
            en.fail(key, std::string("is in ") + unit_name(ecn.packets[q]) + " but queue " +
                             std::to_string(f) + "'s threshold is in " + unit_name(ecn.packets[f]) +
                             ": queues decided by one policy (" +
                             (step ? "steps at queue scope" : "RED, or any at port or pool scope") +
                             ") use one unit");
        if (step && ecn.per_queue == queue_threshold::MQ_ECN &&
            ecn.red[q].min_th != ecn.red[f].min_th)
            en.fail(key,
                    "mq_ecn derives every queue's threshold from one K; it must equal "
                    "queue " +
                        std::to_string(f) + "'s");
    }
    if (ecn.scope != ecn_scope::QUEUE && step_mode && red_mode && en.real("weight") != 1.0)
        en.fail("weight",
                "with scope port or pool one average serves every queue: step and red queues "
                "together need weight 1");
}

void switch_config::validate(const config_node& n) const {
    const std::uint32_t cell = mmu.cell_bytes;
    if (buffer_bytes < 16ull * cell)
        n.fail("buffer", "holds fewer than 16 cells of " + format_bytes(cell));
    if (!mmu.port_cap.packets && mmu.port_cap.value > buffer_bytes)
        n.fail("port_cap", "is larger than switch.buffer (" + format_bytes(buffer_bytes) + ")");
    if (!mmu.port_cap.packets && mmu.port_cap.value != 0 && mmu.port_cap.value < 64)
        n.fail("port_cap", "must hold at least one minimum-size frame (64B), or be 0B (off)");
    validate_pools(n);
    // WRR discards what is left of a quantum, so a smaller one would starve large frames.
    if (discipline == sched_discipline::WRR)
        for (unsigned q = 0; q < sched.size(); ++q)
            if (sched[q].quantum_bytes < 1542) {
                const config_node sn = n.child("scheduler");
                sn.fail(sn.has("quanta") ? "quanta" : element_key(sn, "quantum", q),
                        "must be at least one maximum frame on the wire for wrr (1542B: 1522 B + "
                        "preamble + IFG)");
            }
    if (port_shaper.rate_bps && port_shaper.burst_bytes < 1542)
        n.child("shaper").fail("burst", "must hold one maximum frame on the wire (1542B)");
    validate_ecn(n);
    validate_flow_control(n);
    validate_qcn(n);
    const config_node fn = n.child("fera");
    if (!fera.rcp())
        refuse_given(n.child("rcp"),
                     {"alpha", "beta", "interval", "d0", "variant", "averaging_factor",
                      "initial_rate", "min_rate"},
                     "is set but fera.mode is not rcp");
    if ((!fera.enabled() && !fn.has("mode")) || fera.rcp())
        refuse_given(fn,
                     {"n0",
                      "interval",
                      "q_eq",
                      "q_sc",
                      "control",
                      "k",
                      "a",
                      "b",
                      "c",
                      "stages",
                      "multistage_continuous",
                      "lambda",
                      "ema_uses_current_rate",
                      "gamma",
                      "delta0",
                      "eta",
                      "delta_min",
                      "min_rate",
                      "max_rate",
                      "hold_while_paused",
                      "strict_stability"},
                     fera.rcp() ? "is a FERA-law key: fera.mode rcp takes switch.rcp.*"
                                : "is set but fera.mode is not");
    // The fields against each port's rate: scenario.cpp (check_fera), where the rates are known.
    validate_bcn(n);
    validate_credit_queue(n);
}

void switch_config::validate_credit_queue(const config_node& n) const {
    const config_node cn = n.child("credit_queue");
    if (!credit_queue.enabled()) {
        refuse_given(cn, {"ratio", "buffer", "burst", "selective_drop", "jitter"},
                     "is set but credit_queue.queue is not");
        return;
    }
    const auto q = static_cast<unsigned>(credit_queue.queue);
    if (q >= queues)
        cn.fail("queue", "is not below switch.queues (" + std::to_string(queues) + ")");
    if (mmu.queue[q].lossless)
        cn.fail("queue", "is a lossless queue: credits are dropped, never paused (ExpressPass)");
    if (queue_shaper[q].rate_bps)
        cn.fail("queue", "has a queue_shapers entry: the credit queue's bucket is its shaper");
    // Served first whenever its bucket allows (XPassDropTail): no strict queue above it.
    for (unsigned above = q + 1; above < queues; ++above)
        if (discipline == sched_discipline::SP || (above < sched.size() && sched[above].strict))
            cn.fail("queue", "has strict queue " + std::to_string(above) +
                                 " above it: credits must be served first (use the highest "
                                 "strict queue)");
    if (credit_queue.burst_bytes > credit_queue.buffer_bytes)
        cn.fail("burst", "is larger than credit_queue.buffer (" +
                             format_bytes(credit_queue.buffer_bytes) + ")");
}

bcn_cp_params bcn_config::params() const {
    bcn_cp_params p = bcn_cp_params::thesis_default();
    // The thesis: "sampling is random at the congested switch" (every n-th frame phase-locks
    // with paced sources: one flow's frames meet the same queue phase at every sample).
    p.sampling = bcn_sampling::RANDOM;
    if (q_eq) p.q_eq_bytes = *q_eq;
    if (q_sc) p.q_sc_bytes = *q_sc;
    if (w) p.w = *w;
    if (fb_unit) p.fb_unit_bytes = static_cast<std::uint32_t>(*fb_unit);
    if (sampling) p.sampling = *sampling;
    if (sample_every) p.sample_every = *sample_every;
    if (quantise_bits) p.quantise_bits = *quantise_bits;
    return p;
}

void switch_config::validate_bcn(const config_node& n) const {
    const config_node bn = n.child("bcn");
    if (!bcn.enabled()) {
        if (!bn.has("mode"))
            refuse_given(bn,
                         {"priorities", "q_eq", "q_sc", "w", "fb_unit", "sampling", "sample_every",
                          "quantise_bits", "message_priority", "msdu_octets"},
                         "is set but bcn.mode is not");
        return;
    }
    if (bcn.priorities == 0) bn.fail("priorities", "lists no priority");
    if (bcn.fb_unit && *bcn.fb_unit > 0xFFFFFFFFull) bn.fail("fb_unit", "must be below 4 GB");
    const bcn_cp_params p = bcn.params();
    if (const auto e = p.validate()) {
        const std::string key = e->field == "q_eq_bytes"      ? "q_eq"
                                : e->field == "q_sc_bytes"    ? "q_sc"
                                : e->field == "fb_unit_bytes" ? "fb_unit"
                                                              : e->field;
        bn.fail(bn.has(key) ? key : "mode", e->reason);
    }
    if (p.q_eq_bytes >= buffer_bytes)
        bn.fail(bn.has("q_eq") ? "q_eq" : "mode",
                "Q_eq " + format_bytes(p.q_eq_bytes) + " is not below switch.buffer (" +
                    format_bytes(buffer_bytes) + "): the queue could never reach it");
    if (qcn.enabled()) {
        // One congestion point per queue: the queues of both priority sets must not meet.
        auto queues_of = [this](std::uint8_t prios) {
            unsigned m = 0;
            for (unsigned prio = 0; prio < 8; ++prio)
                if (prios >> prio & 1) m |= 1u << qos.tc_to_queue[qos.pcp_to_tc[prio]];
            return m;
        };
        const unsigned both = queues_of(bcn.priorities) & queues_of(qcn.priorities);
        if (both) {
            unsigned q = 0;
            while (!(both >> q & 1)) ++q;
            bn.fail(bn.has("priorities") ? "priorities" : "mode",
                    "queue " + std::to_string(q) +
                        " would run both QCN and BCN (a queue has one congestion point): give "
                        "qcn.priorities and bcn.priorities disjoint queues");
        }
    }
}

qcn_cp_params qcn_config::params() const {
    qcn_cp_params p = mode == preset::THESIS ? qcn_cp_params::thesis() : qcn_cp_params::standard();
    if (q_eq) p.q_eq_bytes = *q_eq;
    if (w) p.w = *w;
    if (sample_base) p.sample_base_bytes = *sample_base;
    if (jitter) p.jitter = *jitter;
    if (sample_probability) p.sample_probability = *sample_probability;
    if (quantum) p.quantum_bytes = *quantum;
    return p;
}

fera_params fera_config::params(std::uint64_t capacity_bps) const {
    fera_params p = mode == preset::ANALYSIS ? fera_params::analysis(capacity_bps)
                                             : fera_params::thesis_default(capacity_bps);
    if (n0) p.initial_flows = *n0;
    if (interval) p.interval = *interval;
    if (q_eq) p.q_eq_bytes = *q_eq;
    if (q_sc) p.q_sc_bytes = *q_sc;
    if (control) p.control = *control;
    if (k) p.k = *k;
    if (a) p.a = *a;
    if (b) p.b = *b;
    if (c) p.c = *c;
    if (stages) p.stages = *stages;
    if (multistage_continuous) p.multistage_continuous = *multistage_continuous;
    if (lambda) p.lambda = *lambda;
    if (ema_uses_current_rate) p.ema_uses_current_rate = *ema_uses_current_rate;
    if (gamma) p.gamma = *gamma;
    if (delta0) p.delta0_bps = *delta0;
    if (eta) p.eta = *eta;
    if (delta_min) p.delta_min_bps = *delta_min;
    if (min_rate) p.min_rate_bps = *min_rate;
    if (max_rate) p.max_rate_bps = *max_rate;
    if (hold_while_paused) p.hold_while_paused = *hold_while_paused;
    if (strict_stability) p.strict_stability = *strict_stability;
    return p;
}

rcp_params rcp_config::params(std::uint64_t capacity_bps) const {
    rcp_params p;
    p.capacity_bps = capacity_bps;
    if (alpha) p.alpha = *alpha;
    if (beta) p.beta = *beta;
    if (interval) p.interval = *interval;
    if (d0) p.d0 = *d0;
    if (variant) p.variant = *variant;
    if (averaging_factor) p.averaging_factor = *averaging_factor;
    if (initial_rate) p.initial_rate_bps = *initial_rate;
    if (min_rate) p.min_rate_bps = *min_rate;
    return p;
}

std::string rcp_config::key_of(const std::string& field) {
    if (field == "initial_rate_bps") return "initial_rate";
    if (field == "min_rate_bps") return "min_rate";
    return field;
}

std::string fera_config::key_of(const std::string& field) {
    if (field == "initial_flows") return "n0";
    for (const char* suffix : {"_bytes", "_bps"}) {
        const std::string s = suffix;
        if (field.size() > s.size() && field.compare(field.size() - s.size(), s.size(), s) == 0)
            return field.substr(0, field.size() - s.size());
    }
    return field;
}

void switch_config::validate_qcn(const config_node& n) const {
    const config_node qn = n.child("qcn");
    if (!qcn.enabled()) {
        if (!qn.has("mode"))
            refuse_given(qn,
                         {"priorities", "q_eq", "w", "sample_base", "jitter", "sample_probability",
                          "quantum", "cnm_priority", "msdu_octets", "lossless"},
                         "is set but qcn.mode is not");
        return;
    }
    if (qcn.priorities == 0) qn.fail("priorities", "lists no priority");
    if (qcn.lossless)
        for (unsigned prio = 0; prio < 8; ++prio) {
            if (!(qcn.priorities >> prio & 1)) continue;
            const unsigned q = qos.tc_to_queue[qos.pcp_to_tc[prio]];
            if (q < queues && !mmu.queue[q].lossless)
                qn.fail(qn.has("priorities") ? "priorities" : "lossless",
                        "CNPV priority " + std::to_string(prio) + " maps to queue " +
                            std::to_string(q) +
                            ", which is not lossless (switch.mmu.lossless_queues); qcn.lossless "
                            "requires every CNPV queue to be");
        }
    const qcn_cp_params p = qcn.params();
    if (const auto e = p.validate()) {
        // The params' field names to the keys.
        const std::string key = e->field == "q_eq_bytes"          ? "q_eq"
                                : e->field == "sample_base_bytes" ? "sample_base"
                                : e->field == "quantum_bytes"     ? "quantum"
                                                                  : e->field;
        qn.fail(qn.has(key) ? key : "mode", e->reason);
    }
    if (p.q_eq_bytes >= buffer_bytes)
        qn.fail(qn.has("q_eq") ? "q_eq" : "mode",
                "Q_eq " + format_bytes(p.q_eq_bytes) + " is not below switch.buffer (" +
                    format_bytes(buffer_bytes) + "): the queue could never reach it");
}

void switch_config::validate_flow_control(const config_node& n) const {
    const config_node wn = n.child("pfc_watchdog");
    if (!pfc_watchdog.enabled) {
        // Turned off explicitly (a sweep's --set), the other keys may stay.
        if (!wn.has("enabled"))
            refuse_given(wn, {"detection_time", "restoration_time", "action", "priorities"},
                         "is set but pfc_watchdog.enabled is not");
    } else {
        if (!flow_control.honour_pfc.value_or(false))
            wn.fail("enabled",
                    "watches PFC pauses, but switch.flow_control.honour_pfc is not true");
        if (pfc_watchdog.priorities == 0) wn.fail("priorities", "lists no priority");
    }
    const config_node fn = n.child("flow_control");
    const pause_generation_config& g = flow_control_generation;
    if (!g.enabled()) {
        // `generate: none` turns it off explicitly (a sweep's --set): the other keys may stay.
        if (!fn.has("generate"))
            refuse_given(fn,
                         {"pause_quanta", "refresh_quanta", "xon", "xon_offset", "q_on", "q_off",
                          "headroom", "headroom_check", "headroom_mtu"},
                         "is set but flow_control.generate is not");
        return;
    }
    if (g.refresh_quanta >= g.pause_quanta)
        fn.fail(fn.has("refresh_quanta") ? "refresh_quanta" : "pause_quanta",
                "the refresh (" + std::to_string(g.refresh_quanta) +
                    " quanta) must come before the advertised pause ends (" +
                    std::to_string(g.pause_quanta) + " quanta)");
    if (g.mode == pause_generation::QUEUE_PAUSE) {
        for (const char* k : {"q_on", "q_off"})
            if (!fn.has(k)) fn.fail(k, "is required with generate: queue_pause");
        const size_spec on = fn.size("q_on"), off = fn.size("q_off");
        if (on.packets != off.packets)
            fn.fail("q_off", "must be in the same unit as q_on (frames with 'pkt', or bytes)");
        if (off.value >= on.value)
            fn.fail("q_off", "must be below q_on (the PAUSE OFF point is under the ON point)");
        refuse_given(fn, {"xon", "xon_offset", "headroom", "headroom_check", "headroom_mtu"},
                     "applies to PG-triggered generation (pfc, pause), not queue_pause");
        return;
    }
    refuse_given(fn, {"q_on", "q_off"}, "applies to generate: queue_pause only");
    std::uint8_t lossless = 0;
    for (unsigned g2 = 0; g2 < PRIORITY_GROUPS; ++g2)
        if (mmu.pg[g2].lossless) lossless = static_cast<std::uint8_t>(lossless | 1u << g2);
    if (!lossless)
        fn.fail("generate",
                "'" + fn.str("generate") +
                    "' is triggered by lossless priority groups, but switch.mmu.lossless_pgs "
                    "lists none");
    const std::uint32_t cell = mmu.cell_bytes;
    for (unsigned pg = 0; pg < PRIORITY_GROUPS; ++pg) {
        const auto& p = mmu.pg[pg];
        if (!p.lossless) continue;
        // With a static threshold the XOFF point is fixed: the XON point must be below it.
        const std::uint64_t xoff = p.min_cells + p.shared.static_cells;
        if (!p.shared.dynamic && p.xon_cells >= xoff)
            fn.fail(element_key(fn, "xon", pg),
                    "PG " + std::to_string(pg) + "'s XON point (" +
                        format_bytes(p.xon_cells * cell) +
                        ") must be below its XOFF point (pg_min + pg_static = " +
                        format_bytes(xoff * cell) + ")");
        if (!p.shared.dynamic && p.xon_offset_cells > xoff)
            fn.fail(element_key(fn, "xon_offset", pg),
                    "PG " + std::to_string(pg) + "'s XON offset (" +
                        format_bytes(p.xon_offset_cells * cell) +
                        ") is larger than its XOFF point (pg_min + pg_static = " +
                        format_bytes(xoff * cell) + ")");
    }
}

switch_config switch_config::load(const config_node& n) {
    switch_config c = params().load(n);
    if (c.pipeline.depth_cycles) {
        if (n.has("pipeline_latency"))
            n.fail("pipeline_latency",
                   "is set together with pipeline.depth; give the latency one way (depth: "
                   "cycles of the core clock)");
        c.pipeline_latency = ps_t(c.pipeline.depth_cycles) * c.clock_period();
    }
    c.validate(n);
    return c;
}

}  // namespace fabricsim::sw
