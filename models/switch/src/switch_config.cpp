#include "fabricsim/switch/switch_config.h"

#include <cmath>
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

/// A set of indices ("0", "3") as a bit mask.
std::uint8_t load_mask(const config_node& n, const std::string& key, unsigned max) {
    std::uint8_t m = 0;
    for (const auto& s : n.str_list(key))
        m = static_cast<std::uint8_t>(m | 1u << parse_index(n, key, s, 0, max));
    return m;
}

}  // namespace

ps_t switch_config::clock_period() const {
    return static_cast<ps_t>(std::llround(1e12 / core_clock_hz));
}

void switch_config::describe(config_schema& s, const std::string& p) {
    s.add(p + ".core_clock", value_kind::FREQUENCY, "1GHz",
          "Switch core clock; pipeline exit times are rounded up to its edges")
        .min = 1e6;
    s.add(p + ".pipeline_latency", value_kind::TIME, "300ns",
          "Ingress-to-egress pipeline latency (parsing, lookup, MMU), excluding serialisation")
        .max = 1e9;  // 1 ms
    auto& m =
        s.add(p + ".mode", value_kind::CHOICE, "store_and_forward",
              "store_and_forward: act on the last bit; cut_through: act after cut_through_bytes "
              "when the egress is idle and not faster than the ingress");
    m.choices = {"store_and_forward", "cut_through"};
    auto& ct = s.add(p + ".cut_through_bytes", value_kind::BYTES, "64B",
                     "Bytes of a frame a cut-through switch needs before forwarding it");
    ct.min = 34;  // Ethernet + IPv4 header: the route lookup needs the destination address
    ct.max = 1518;
    s.add(p + ".buffer", value_kind::BYTES, "4MiB", "Shared packet buffer of the chip").min = 1;
    auto& cell = s.add(p + ".cell", value_kind::BYTES, "208B",
                       "MMU cell size; a frame takes ceil((bytes + cell_overhead) / cell) cells "
                       "(Broadcom XGS: 208 B)");
    cell.min = 16;
    cell.max = 4096;
    s.add(p + ".cell_overhead", value_kind::BYTES, "0B",
          "Per-frame MMU header stored with each frame (Tomahawk: 64 B)")
        .max = 256;
    s.add(p + ".port_cap", value_kind::SIZE, "600KB",
          "Static limit on one egress port's buffer use (bytes, or frames with 'pkt'); 0B turns it "
          "off");
    auto& q = s.add(p + ".queues", value_kind::INT, "8", "Egress queues per port");
    q.min = 1;
    q.max = 8;

    const std::string mm = p + ".mmu";
    s.add(mm + ".threshold_test", value_kind::CHOICE, "fit",
          "fit: admit if shared + frame <= threshold (ns-2/ns-3 models); cross: admit while shared "
          "< "
          "threshold, so the crossing frame enters (Choudhury-Hahne, 'last packet accept')")
        .choices = {"fit", "cross"};
    s.add(mm + ".lossless_pool", value_kind::BYTES, "0B",
          "Shared size of the lossless service pool");
    s.add(mm + ".headroom_pool", value_kind::BYTES, "0B",
          "Headroom pool shared by the lossless PGs' headroom");
    s.add(mm + ".pg_min", value_kind::BYTES, "0B", "Reserved cells per ingress (port, PG)");
    s.add(
         mm + ".pg_threshold", value_kind::CHOICE, "dynamic",
         "Limit on a PG's shared cells: dynamic (pg_alpha x free pool cells) or static (pg_static)")
        .choices = {"dynamic", "static"};
    auto& pa = s.add(mm + ".pg_alpha", value_kind::REAL, "8",
                     "Dynamic-threshold alpha of ingress PGs (SONiC lossy profile: 8)");
    pa.min = 1.0 / 1024;
    pa.max = 1024;
    s.add(mm + ".pg_static", value_kind::BYTES, "4MiB", "Static shared limit of an ingress PG");
    s.add(mm + ".pg_headroom", value_kind::BYTES, "0B", "Headroom per lossless (port, PG)");
    s.add(mm + ".lossless_pgs", value_kind::STRING_LIST, "[]",
          "Priority groups that are lossless (0..7)");
    s.add(mm + ".queue_min", value_kind::BYTES, "0B", "Reserved cells per egress (port, queue)");
    s.add(mm + ".queue_threshold", value_kind::CHOICE, "dynamic",
          "Limit on a queue's shared cells: dynamic (queue_alpha x free pool cells) or static "
          "(queue_static)")
        .choices = {"dynamic", "static"};
    auto& qa = s.add(mm + ".queue_alpha", value_kind::REAL, "8",
                     "Dynamic-threshold alpha of egress queues (SONiC lossy profile: 8)");
    qa.min = 1.0 / 1024;
    qa.max = 1024;
    s.add(mm + ".queue_static", value_kind::BYTES, "4MiB",
          "Static shared limit of an egress queue");
    s.add(mm + ".lossless_queues", value_kind::STRING_LIST, "[]",
          "Egress queues in the lossless pool; they skip egress thresholds (held back by PFC "
          "instead)");

    const std::string qp = p + ".qos";
    s.add(qp + ".trust", value_kind::CHOICE, "dscp",
          "Classify by DSCP, or by PCP for VLAN-tagged frames (untagged ones still by DSCP)")
        .choices = {"dscp", "pcp"};
    s.add(qp + ".dscp_to_tc", value_kind::STRING_LIST, "[]",
          "Entries 'dscp:tc' or 'lo-hi:tc' over the default DSCP/8 (IP precedence)");
    s.add(qp + ".pcp_to_tc", value_kind::STRING_LIST, "[]",
          "8 traffic classes, one per PCP (default: identity)");
    s.add(qp + ".tc_to_queue", value_kind::STRING_LIST, "[]",
          "8 egress queues, one per traffic class (default: tc x queues / 8)");
    s.add(qp + ".tc_to_pg", value_kind::STRING_LIST, "[]",
          "8 priority groups, one per traffic class (default: identity)");

    const std::string sp = p + ".scheduler";
    s.add(sp + ".kind", value_kind::CHOICE, "dwrr",
          "sp: strict priority (higher queue first); wrr or dwrr among the non-strict queues")
        .choices = {"sp", "wrr", "dwrr"};
    s.add(sp + ".strict_queues", value_kind::STRING_LIST, "[]",
          "Queues served by strict priority above the WRR/DWRR group");
    auto& qu = s.add(sp + ".quantum", value_kind::BYTES, "1538B",
                     "WRR/DWRR quantum per round, in wire bytes (frame + preamble + IFG; 1538B = "
                     "one 1500 B IP packet)");
    qu.min = 64;
    qu.max = 16 << 20;
    s.add(sp + ".quanta", value_kind::STRING_LIST, "[]",
          "Per-queue quanta overriding `quantum`, each 64B..16MiB (e.g. ['1538B', '3076B'])");

    s.add(p + ".shaper.rate", value_kind::BIT_RATE, "0bps",
          "Port token-bucket rate in wire bits/s; 0 = off");
    s.add(p + ".shaper.burst", value_kind::BYTES, "3000B",
          "Port token-bucket depth (wire bytes, >= largest frame)");
    s.add(p + ".queue_shapers", value_kind::MAP_LIST, "[]", "Per-queue token buckets");
    auto& sq = s.add(p + ".queue_shapers[].queue", value_kind::INT, "", "Queue index");
    sq.min = 0;
    sq.max = 7;
    s.add(p + ".queue_shapers[].rate", value_kind::BIT_RATE, "", "Rate in wire bits/s").min = 1e3;
    s.add(p + ".queue_shapers[].burst", value_kind::BYTES, "3000B",
          "Depth in wire bytes (>= largest frame)");

    const std::string ep = p + ".ecn";
    s.add(ep + ".mode", value_kind::CHOICE, "off",
          "off; red (min_th/max_th/max_p/weight); step (DCTCP: mark above k on the instantaneous "
          "queue)")
        .choices = {"off", "red", "step"};
    s.add(ep + ".scope", value_kind::CHOICE, "queue",
          "Occupancy compared with the threshold: the frame's queue, its egress port, or its "
          "service pool")
        .choices = {"queue", "port", "pool"};
    s.add(
         ep + ".queue_threshold", value_kind::CHOICE, "standard",
         "Per-queue thresholds (scope queue): standard (every queue k), minimum (k x W_i / sum W), "
         "mq_ecn (k x min(quantum_i / (T_round C), 1); strict queues keep k)")
        .choices = {"standard", "minimum", "mq_ecn"};
    s.add(ep + ".k", value_kind::SIZE, "65pkt", "Step threshold K (bytes, or frames with 'pkt')");
    s.add(ep + ".min_th", value_kind::SIZE, "30KB", "RED minimum threshold");
    s.add(ep + ".max_th", value_kind::SIZE, "90KB", "RED maximum threshold (same unit as min_th)");
    auto& mp = s.add(ep + ".max_p", value_kind::REAL, "0.1", "RED marking probability at max_th");
    mp.min = 1e-6;
    mp.max = 1;
    auto& w =
        s.add(ep + ".weight", value_kind::REAL, "1", "RED EWMA weight; 1 = instantaneous queue");
    w.min = 1e-6;
    w.max = 1;
    s.add(ep + ".mark_on", value_kind::CHOICE, "enqueue",
          "Decide at enqueue (RED hardware) or at dequeue (against the queue the frame leaves "
          "behind)")
        .choices = {"enqueue", "dequeue"};
    s.add(ep + ".non_ect", value_kind::CHOICE, "drop",
          "A non-ECT frame that would be marked is dropped (RED, counted as aqm_drop) or passed")
        .choices = {"drop", "pass"};
    s.add(ep + ".queues", value_kind::STRING_LIST, "[]", "Queues with ECN/RED (default: all)");
    auto& mb =
        s.add(ep + ".mq_ecn.beta", value_kind::REAL, "0.75", "MQ-ECN T_round EWMA weight beta");
    mb.min = 0.01;
    mb.max = 0.99;
    s.add(ep + ".mq_ecn.t_idle", value_kind::TIME, "0s",
          "MQ-ECN idle decay slot; 0 = one 1500 B MTU at the port rate (the paper's choice)");

    const std::string pq = p + ".phantom_queue";
    s.add(pq + ".enabled", value_kind::BOOL, "false",
          "HULL phantom queue in series with every egress port");
    auto& g =
        s.add(pq + ".gamma", value_kind::REAL, "0.95", "Drain rate as a fraction of the port rate");
    g.min = 0.01;
    g.max = 1;
    s.add(pq + ".interval", value_kind::TIME, "800ns", "Drain update interval (NetFPGA: 800 ns)")
        .min = 1000;
    s.add(pq + ".threshold", value_kind::BYTES, "1000B",
          "Marking threshold of the counter (HULL: 1 KB)")
        .min = 1;
}

mmu_config switch_config::mmu_for(unsigned n_ports) const {
    mmu_config m = mmu;
    m.total_cells = buffer_bytes / m.cell_bytes;
    m.ports = n_ports;
    m.queues = queues;
    return m;
}

switch_config switch_config::load(const config_node& n) {
    switch_config c;
    c.core_clock_hz = n.frequency("core_clock");
    c.pipeline_latency = n.time("pipeline_latency");
    c.mode = n.str("mode") == "cut_through" ? forwarding_mode::CUT_THROUGH
                                            : forwarding_mode::STORE_AND_FORWARD;
    c.cut_through_bytes = static_cast<std::uint32_t>(n.bytes("cut_through_bytes"));
    c.buffer_bytes = n.bytes("buffer");
    c.queues = static_cast<unsigned>(n.integer("queues"));
    const std::uint32_t cell = static_cast<std::uint32_t>(n.bytes("cell"));
    if (c.buffer_bytes < 16ull * cell)
        n.fail("buffer", "holds fewer than 16 cells of " + format_bytes(cell));

    // MMU profile.
    mmu_config& m = c.mmu;
    m.cell_bytes = cell;
    m.cell_overhead_bytes = static_cast<std::uint32_t>(n.bytes("cell_overhead"));
    m.port_cap = n.size("port_cap");
    if (!m.port_cap.packets && m.port_cap.value > c.buffer_bytes)
        n.fail("port_cap", "is larger than switch.buffer (" + format_bytes(c.buffer_bytes) + ")");
    if (!m.port_cap.packets && m.port_cap.value != 0 && m.port_cap.value < 64)
        n.fail("port_cap", "must hold at least one minimum-size frame (64B), or be 0B (off)");
    const config_node mm = n.child("mmu");
    m.accept_crossing = mm.str("threshold_test") == "cross";
    m.lossless_pool_cells = cells_up(mm.bytes("lossless_pool"), cell);
    m.headroom_pool_cells = cells_up(mm.bytes("headroom_pool"), cell);
    const std::uint8_t lossless_pgs = load_mask(mm, "lossless_pgs", 7);
    const threshold_spec pg_thr{mm.str("pg_threshold") == "dynamic", mm.real("pg_alpha"),
                                mm.bytes("pg_static") / cell};
    for (unsigned g = 0; g < PRIORITY_GROUPS; ++g) {
        m.pg[g].min_cells = cells_up(mm.bytes("pg_min"), cell);
        m.pg[g].shared = pg_thr;
        m.pg[g].lossless = lossless_pgs >> g & 1;
        m.pg[g].headroom_cells = m.pg[g].lossless ? cells_up(mm.bytes("pg_headroom"), cell) : 0;
    }
    if (lossless_pgs && m.lossless_pool_cells == 0)
        mm.fail("lossless_pool", "is 0 but lossless_pgs lists priority groups that need it");
    const std::uint8_t lossless_queues = load_mask(mm, "lossless_queues", 7);
    const threshold_spec q_thr{mm.str("queue_threshold") == "dynamic", mm.real("queue_alpha"),
                               mm.bytes("queue_static") / cell};
    for (unsigned q = 0; q < MAX_QUEUES; ++q) {
        m.queue[q].min_cells = cells_up(mm.bytes("queue_min"), cell);
        m.queue[q].shared = q_thr;
        m.queue[q].lossless = lossless_queues >> q & 1;
    }

    // Classification.
    const config_node qn = n.child("qos");
    c.qos.trust_pcp = qn.str("trust") == "pcp";
    for (unsigned d = 0; d < 64; ++d) c.qos.dscp_to_tc[d] = static_cast<std::uint8_t>(d / 8);
    for (const auto& e : qn.str_list("dscp_to_tc")) {
        const auto colon = e.find(':');
        if (colon == std::string::npos)
            qn.fail("dscp_to_tc", "entry '" + e + "' is not 'dscp:tc' or 'lo-hi:tc'");
        const std::string range = e.substr(0, colon);
        const auto dash = range.find('-');
        const unsigned lo = parse_index(qn, "dscp_to_tc", range.substr(0, dash), 0, 63);
        const unsigned hi = dash == std::string::npos
                                ? lo
                                : parse_index(qn, "dscp_to_tc", range.substr(dash + 1), lo, 63);
        const unsigned tc = parse_index(qn, "dscp_to_tc", e.substr(colon + 1), 0, 7);
        for (unsigned d = lo; d <= hi; ++d) c.qos.dscp_to_tc[d] = static_cast<std::uint8_t>(tc);
    }
    load_map8(qn, "pcp_to_tc", 7, c.qos.pcp_to_tc);
    for (unsigned tc = 0; tc < 8; ++tc) {
        c.qos.tc_to_queue[tc] = static_cast<std::uint8_t>(tc * c.queues / 8);
        c.qos.tc_to_pg[tc] = static_cast<std::uint8_t>(tc);
    }
    load_map8(qn, "tc_to_queue", c.queues - 1, c.qos.tc_to_queue);
    load_map8(qn, "tc_to_pg", 7, c.qos.tc_to_pg);

    // Scheduling and shaping.
    const config_node sn = n.child("scheduler");
    const std::string kind = sn.str("kind");
    c.discipline = kind == "sp"    ? sched_discipline::SP
                   : kind == "wrr" ? sched_discipline::WRR
                                   : sched_discipline::DWRR;
    const std::uint8_t strict = load_mask(sn, "strict_queues", c.queues - 1);
    c.sched.assign(c.queues, queue_sched_params{});
    const auto quanta = sn.str_list("quanta");
    if (!quanta.empty() && quanta.size() != c.queues)
        sn.fail("quanta", "needs one quantum per queue (" + std::to_string(c.queues) + "), got " +
                              std::to_string(quanta.size()));
    for (unsigned q = 0; q < c.queues; ++q) {
        c.sched[q].strict = c.discipline == sched_discipline::SP || (strict >> q & 1);
        std::uint64_t quantum = sn.bytes("quantum");
        if (!quanta.empty()) {
            std::string why;
            const auto b = parse_bytes(quanta[q], why);
            if (!b) sn.fail("quanta", "entry '" + quanta[q] + "': " + why);
            quantum = *b;
        }
        // WRR discards what is left of a quantum, so a smaller one would starve large frames.
        if (quantum < 1542 && c.discipline == sched_discipline::WRR)
            sn.fail(quanta.empty() ? "quantum" : "quanta",
                    "must be at least one maximum frame on the wire for wrr (1542B: 1522 B + "
                    "preamble + IFG)");
        // `quantum` has these bounds in the schema; `quanta` entries are checked here.
        if (quantum < 64 || quantum > queue_scheduler::MAX_QUANTUM)
            sn.fail(quanta.empty() ? "quantum" : "quanta", "entry " + std::to_string(q) +
                                                               " must be 64B to 16MiB, got " +
                                                               std::to_string(quantum) + "B");
        c.sched[q].quantum_bytes = static_cast<std::uint32_t>(quantum);
    }
    const config_node shn = n.child("shaper");
    c.port_shaper.rate_bps = shn.rate("rate");
    c.port_shaper.burst_bytes = shn.bytes("burst");
    if (c.port_shaper.rate_bps && c.port_shaper.burst_bytes < 1542)
        shn.fail("burst", "must hold one maximum frame on the wire (1542B)");
    for (const auto& e : n.list("queue_shapers")) {
        const auto q = static_cast<unsigned>(e.integer("queue"));
        if (q >= c.queues)
            e.fail("queue", "is not below switch.queues (" + std::to_string(c.queues) + ")");
        c.queue_shaper[q] = {e.rate("rate"), e.bytes("burst")};
        if (c.queue_shaper[q].burst_bytes < 1542)
            e.fail("burst", "must hold one maximum frame on the wire (1542B)");
    }

    // ECN/RED.
    const config_node en = n.child("ecn");
    ecn_config& ecn = c.ecn;
    const std::string mode = en.str("mode");
    ecn.mode = mode == "red" ? ecn_mode::RED : mode == "step" ? ecn_mode::STEP : ecn_mode::OFF;
    const std::string scope = en.str("scope");
    ecn.scope = scope == "port"   ? ecn_scope::PORT
                : scope == "pool" ? ecn_scope::POOL
                                  : ecn_scope::QUEUE;
    const std::string qt = en.str("queue_threshold");
    ecn.per_queue = qt == "minimum"  ? queue_threshold::MINIMUM
                    : qt == "mq_ecn" ? queue_threshold::MQ_ECN
                                     : queue_threshold::STANDARD;
    if (ecn.per_queue != queue_threshold::STANDARD && ecn.scope != ecn_scope::QUEUE)
        en.fail("queue_threshold", "'" + qt + "' needs scope 'queue'");
    if (ecn.mode == ecn_mode::STEP) {
        const size_spec k = en.size("k");
        ecn.packets = k.packets;
        ecn.red = {double(k.value), double(k.value), 1.0, 1.0};
    } else {
        const size_spec lo = en.size("min_th"), hi = en.size("max_th");
        if (lo.packets != hi.packets)
            en.fail("max_th", "must use the same unit as min_th (bytes or pkt)");
        if (hi.value < lo.value) en.fail("max_th", "is below min_th");
        ecn.packets = lo.packets;
        ecn.red = {double(lo.value), double(hi.value), en.real("max_p"), en.real("weight")};
    }
    ecn.mark_on_dequeue = en.str("mark_on") == "dequeue";
    ecn.drop_non_ect = en.str("non_ect") == "drop";
    const std::uint8_t ecn_queues = load_mask(en, "queues", c.queues - 1);
    ecn.queue_mask = ecn_queues ? ecn_queues : 0xff;
    const config_node mqn = en.child("mq_ecn");
    ecn.mq_beta = mqn.real("beta");
    ecn.mq_t_idle = mqn.time("t_idle");

    const config_node pn = n.child("phantom_queue");
    c.phantom = {pn.boolean("enabled"), pn.real("gamma"), pn.time("interval"),
                 pn.bytes("threshold")};
    return c;
}

}  // namespace fabricsim::sw
