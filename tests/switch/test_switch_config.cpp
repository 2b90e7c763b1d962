// The `switch:` keys that take one value per queue, PG or pool (param_table::indexed), and the
// relations switch_config::validate() checks between them: what reaches the structs, and the
// errors, each naming its key.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "fabricsim/core/config.h"
#include "fabricsim/switch/switch_config.h"

using namespace fabricsim;
using namespace fabricsim::sw;

namespace {

struct loaded {
    switch_config c;
    std::string error;  ///< empty if it loaded
};

/// The `switch:` section of `yaml` validated and loaded as a scenario would.
loaded load(const std::string& yaml) {
    config_schema schema;
    switch_config::params().describe(schema, "switch");
    loaded out;
    try {
        auto root = load_yaml_string(yaml);
        schema.validate(root);
        root["switch"] = switch_config::expand_chip(root["switch"]);  // as load_scenario
        out.c = switch_config::load(config_node(schema, root, "", "").child("switch"));
    } catch (const config_error& e) {
        out.error = e.what();
    }
    return out;
}

}  // namespace

TEST_CASE("switch config: per-queue and per-PG MMU keys as a scalar, a list or a map",
          "[switch][config]") {
    const auto l = load(R"(switch:
  queues: 4
  mmu:
    queue_alpha: [1, 2]
    queue_threshold: {3: static}
    queue_static: {3: 2080B}
    queue_min: 416B
    pg_alpha: {7: 0.5}
    pg_min: [208B, 209B]
    lossless_pgs: [3]
    lossless_pool: 100KB
    pg_headroom: {3: 10KB, 4: 10KB}
)");
    REQUIRE(l.error.empty());
    const mmu_config& m = l.c.mmu;
    CHECK(m.queue[0].shared.alpha == 1);
    CHECK(m.queue[1].shared.alpha == 2);
    CHECK(m.queue[2].shared.alpha == 8);  // the default
    CHECK(m.queue[2].shared.dynamic);
    CHECK_FALSE(m.queue[3].shared.dynamic);
    CHECK(m.queue[3].shared.static_cells == 10);
    CHECK(m.queue[2].shared.static_cells == (4u << 20) / 208);
    for (unsigned q = 0; q < 4; ++q) CHECK(m.queue[q].min_cells == 2);
    CHECK(m.pg[7].shared.alpha == 0.5);
    CHECK(m.pg[6].shared.alpha == 8);
    CHECK(m.pg[0].min_cells == 1);
    CHECK(m.pg[1].min_cells == 2);
    CHECK(m.pg[2].min_cells == 0);
    CHECK(m.pg[3].headroom_cells == 49);  // 10 KB up to whole cells
    CHECK(m.pg[4].headroom_cells == 0);   // lossy: no headroom
    // Pools by the default rule: lossless PG 3 in pool 1, the rest in pool 0.
    CHECK(m.pg[3].service_pool() == LOSSLESS_POOL);
    CHECK(m.pg[2].service_pool() == LOSSY_POOL);
    CHECK(m.pool_cells[LOSSLESS_POOL] == 481);
}

TEST_CASE("switch config: service pools 1..3, pool indices and their errors", "[switch][config]") {
    SECTION("pool_size as a map and as a list; pools per PG and queue") {
        const auto l = load(R"(switch:
  queues: 4
  mmu:
    pool_size: {2: 208KB, 3: 416KB}
    lossless_pool: 104KB
    pg_pool: {0: 2, 5: 3}
    queue_pool: [0, 1, 2, 3]
)");
        REQUIRE(l.error.empty());
        CHECK(l.c.mmu.pool_cells == std::array<std::uint64_t, 4>{0, 500, 1000, 2000});
        CHECK(l.c.mmu.pg[0].service_pool() == 2);
        CHECK(l.c.mmu.pg[5].service_pool() == 3);
        CHECK(l.c.mmu.pg[1].service_pool() == 0);
        for (unsigned q = 0; q < 4; ++q) CHECK(l.c.mmu.queue[q].service_pool() == q);
        const auto list = load("switch: {mmu: {pool_size: [0B, 104KB, 208KB]}}");
        REQUIRE(list.error.empty());
        CHECK(list.c.mmu.pool_cells == std::array<std::uint64_t, 4>{0, 500, 1000, 0});
        // An explicit pool overrides the lossless rule.
        const auto ll = load("switch: {mmu: {lossless_pgs: [2], pg_pool: {2: 0}}}");
        REQUIRE(ll.error.empty());
        CHECK(ll.c.mmu.pg[2].service_pool() == LOSSY_POOL);
    }
    SECTION("errors name the key") {
        CHECK(load("switch: {mmu: {queue_pool: {2: 2}}}").error ==
              "switch.mmu.queue_pool[2]: queue 2 is in pool 2, which has no cells "
              "(switch.mmu.pool_size[2] is 0)");
        CHECK(load("switch: {mmu: {pg_pool: 1}}").error ==
              "switch.mmu.pg_pool: priority group 0 is in pool 1, which has no cells "
              "(switch.mmu.pool_size[1] or lossless_pool is 0)");
        CHECK(load("switch: {mmu: {pg_pool: {1: 4}}}").error ==
              "switch.mmu.pg_pool[1]: '4' is above the maximum 3");
        CHECK(load("switch: {mmu: {lossless_pgs: [3]}}").error ==
              "switch.mmu.lossless_pool: is 0 but lossless_pgs lists priority groups that need "
              "it");
        CHECK(load("switch: {mmu: {lossless_queues: [1]}}").error ==
              "switch.mmu.lossless_pool: is 0 but lossless_queues lists queues that need it");
        CHECK(load("switch: {mmu: {pool_size: {0: 1MiB}}}").error ==
              "switch.mmu.pool_size[0]: pool 0 gets what the reserves, pools 1..3 and the "
              "headroom pool leave; its size cannot be set");
        CHECK(load("switch: {mmu: {lossless_pool: 1MiB, pool_size: {1: 1MiB}}}").error ==
              "switch.mmu.pool_size[1]: pool 1's size is also given as "
              "switch.mmu.lossless_pool; give it once");
        CHECK(load("switch: {buffer: 2MiB, mmu: {pool_size: {2: 1MiB, 3: 1MiB}}}").error ==
              "switch.mmu.pool_size: pools 1..3 and the headroom pool take 10084 cells, leaving "
              "none of the 10082-cell buffer for pool 0");
        CHECK(load("switch: {mmu: {pool_size: [0B, 0B, 0B, 0B, 1MiB]}}").error ==
              "switch.mmu.pool_size: has 5 entries, more than the 4 pools");
        // Per-queue keys are checked against switch.queues.
        CHECK(load("switch: {queues: 2, mmu: {queue_alpha: [1, 2, 3]}}").error ==
              "switch.mmu.queue_alpha: has 3 entries, more than the 2 queues");
        CHECK(load("switch: {queues: 2, mmu: {queue_min: {2: 1KB}}}").error ==
              "switch.mmu.queue_min[2]: index out of range: there are 2 queues");
        CHECK(load("switch: {mmu: {queue_alpha: {3: 0}}}").error ==
              "switch.mmu.queue_alpha[3]: '0' is below the minimum 0.000976562");
        CHECK(load("switch: {mmu: {queue_threshold: [dynamic, fixed]}}").error ==
              "switch.mmu.queue_threshold[1]: 'fixed' is not one of: dynamic, static");
    }
}

TEST_CASE("switch config: per-queue ECN mode and thresholds", "[switch][config][ecn]") {
    SECTION("a mode and K per queue; RED thresholds per queue") {
        const auto l = load(R"(switch:
  queues: 4
  ecn: {mode: [step, step, red, 'off'], k: [20pkt, 40pkt], min_th: {2: 10KB}, max_th: {2: 50KB},
        max_p: {2: 0.5}, weight: 0.25}
)");
        REQUIRE(l.error.empty());
        const ecn_config& e = l.c.ecn;
        CHECK(e.mode[0] == ecn_mode::STEP);
        CHECK(e.mode[2] == ecn_mode::RED);
        CHECK(e.mode[3] == ecn_mode::OFF);
        CHECK(e.red[0].min_th == 20);
        CHECK(e.red[1].max_th == 40);
        CHECK(e.packets[0]);
        CHECK(e.red[2].min_th == 10000);
        CHECK(e.red[2].max_th == 50000);
        CHECK(e.red[2].max_p == 0.5);
        CHECK(e.red[2].weight == 0.25);
        CHECK(e.red[0].weight == 1);
        CHECK_FALSE(e.packets[2]);
        CHECK(e.marking(4) == 0b0111);
        CHECK(e.is_step(1));
        CHECK_FALSE(e.is_step(2));
    }
    SECTION("errors name the key with the queue") {
        CHECK(load("switch: {ecn: {mode: step, k: [30KB, 20pkt]}}").error ==
              "switch.ecn.k[1]: is in pkt but queue 0's threshold is in bytes: queues decided by "
              "one policy (steps at queue scope) use one unit");
        CHECK(load("switch: {ecn: {mode: step, queue_threshold: mq_ecn, k: {1: 30pkt}}}").error ==
              "switch.ecn.k[1]: mq_ecn derives every queue's threshold from one K; it must "
              "equal queue 0's");
        CHECK(load("switch: {ecn: {mode: red, min_th: [30KB, 40KB], max_th: {1: 30KB}}}").error ==
              "switch.ecn.max_th[1]: is below min_th");
        CHECK(load("switch: {ecn: {mode: {3: blue}}}").error ==
              "switch.ecn.mode[3]: 'blue' is not one of: off, red, step");
        CHECK(load("switch: {ecn: {mode: [step, red], k: 30KB, scope: port, weight: 0.5}}").error ==
              "switch.ecn.weight: with scope port or pool one average serves every queue: step "
              "and red queues together need weight 1");
        CHECK(load("switch: {ecn: {mode: [step, red], k: 30KB}}").error.empty());
        // At port scope one policy decides both queues: one unit.
        CHECK(load("switch: {ecn: {mode: [step, red], scope: port}}").error ==
              "switch.ecn.min_th: is in bytes but queue 0's threshold is in pkt: queues decided "
              "by one policy (RED, or any at port or pool scope) use one unit");
    }
}

TEST_CASE("switch config: scheduler.quantum per queue and the older quanta list",
          "[switch][config][scheduler]") {
    const auto l = load("switch: {queues: 3, scheduler: {quantum: {1: 3076B, 2: 4614B}}}");
    REQUIRE(l.error.empty());
    REQUIRE(l.c.sched.size() == 3);
    CHECK(l.c.sched[0].quantum_bytes == 1538);
    CHECK(l.c.sched[1].quantum_bytes == 3076);
    CHECK(l.c.sched[2].quantum_bytes == 4614);
    const auto old = load("switch: {queues: 2, scheduler: {quanta: [2000B, 3000B]}}");
    REQUIRE(old.error.empty());
    CHECK(old.c.sched[1].quantum_bytes == 3000);
    CHECK(load("switch: {queues: 2, scheduler: {quantum: [1538B, 10B]}}").error ==
          "switch.scheduler.quantum[1]: '10B' is below the minimum 64B");
    CHECK(
        load("switch: {queues: 2, scheduler: {kind: wrr, quantum: {0: 1600B, 1: 1500B}}}").error ==
        "switch.scheduler.quantum[1]: must be at least one maximum frame on the wire for wrr "
        "(1542B: 1522 B + preamble + IFG)");
    CHECK(load("switch: {queues: 2, scheduler: {kind: wrr, quantum: 1500B}}").error ==
          "switch.scheduler.quantum: must be at least one maximum frame on the wire for wrr "
          "(1542B: 1522 B + preamble + IFG)");
}

TEST_CASE(
    "switch config: flow_control keys load, are optional, and stay out of the echo when "
    "absent",
    "[switch][config][pfc]") {
    const auto off = load("switch: {}\n");
    REQUIRE(off.error.empty());
    CHECK_FALSE(off.c.flow_control.enabled());
    CHECK_FALSE(off.c.flow_control.response_delay.has_value());
    const auto on = load(R"(switch:
  flow_control: {honour_pfc: true, response_delay: 1.5us}
)");
    REQUIRE(on.error.empty());
    CHECK(on.c.flow_control.enabled());
    CHECK_FALSE(on.c.flow_control.honour_pause.value_or(false));
    CHECK(*on.c.flow_control.response_delay == 1'500'000u);
    CHECK(load("switch:\n  flow_control: {honour_pfc: maybe}\n")
              .error.find("switch.flow_control.honour_pfc") != std::string::npos);
    CHECK(load("switch:\n  flow_control: {response_delay: 2ms}\n")
              .error.find("switch.flow_control.response_delay") != std::string::npos);

    config_schema schema;
    switch_config::params().describe(schema, "switch");
    const auto echo = with_defaults(schema, load_yaml_string("switch: {}\n"));
    CHECK_FALSE(echo["switch"]["flow_control"]);
    CHECK(echo["switch"]["phantom_queue"]);  // sections with defaults stay
    const auto given =
        with_defaults(schema, load_yaml_string("switch: {flow_control: {honour_pause: true}}\n"));
    CHECK(given["switch"]["flow_control"]["honour_pause"].as<bool>());
}

TEST_CASE("switch config: PAUSE/PFC generation keys load and bad values name the key",
          "[switch][config][pfc]") {
    const std::string lossless =
        "  mmu: {lossless_pgs: ['3'], lossless_pool: 1MB, pg_headroom: 100KB, "
        "headroom_pool: 200KB, pg_threshold: static, pg_static: 50KB}\n";
    const auto on = load("switch:\n" + lossless +
                         "  flow_control: {generate: pfc, pause_quanta: 4000, refresh_quanta: "
                         "2000, xon_offset: {3: 4160B}, xon: 2080B}\n");
    REQUIRE(on.error.empty());
    const auto& g = on.c.flow_control_generation;
    CHECK(g.mode == pause_generation::PFC);
    CHECK(g.pause_quanta == 4000);
    CHECK(g.refresh_quanta == 2000);
    CHECK(on.c.mmu.pg[3].xon_offset_cells == 20);
    CHECK(on.c.mmu.pg[0].xon_offset_cells == 12);  // 2496 B by default
    CHECK(on.c.mmu.pg[3].xon_cells == 10);
    CHECK_FALSE(on.c.flow_control.enabled());  // generating is not honouring
    const auto dflt = load("switch:\n" + lossless + "  flow_control: {generate: pause}\n");
    REQUIRE(dflt.error.empty());
    CHECK(dflt.c.flow_control_generation.pause_quanta == 0xffff);
    CHECK(dflt.c.flow_control_generation.refresh_quanta == 0x7fff);

    auto error = [&](const std::string& fc, const std::string& mmu_line) {
        return load("switch:\n" + mmu_line + "  flow_control: " + fc + "\n").error;
    };
    auto names = [](const std::string& err, const std::string& key, const std::string& why) {
        INFO(err);
        CHECK(err.find(key) != std::string::npos);
        CHECK(err.find(why) != std::string::npos);
    };
    names(error("{generate: pfc, pause_quanta: 0}", lossless), "switch.flow_control.pause_quanta",
          "below the minimum 1");
    names(error("{generate: pfc, pause_quanta: 65536}", lossless),
          "switch.flow_control.pause_quanta", "above the maximum 65535");
    names(error("{generate: pfc, pause_quanta: 1000}", lossless),
          "switch.flow_control.pause_quanta", "refresh");
    names(error("{generate: pfc, refresh_quanta: 65535}", lossless),
          "switch.flow_control.refresh_quanta", "must come before");
    names(error("{generate: pfc, xon: 60KB}", lossless), "switch.flow_control.xon",
          "must be below its XOFF point");
    names(error("{generate: pfc, xon_offset: {3: 60KB}}", lossless),
          "switch.flow_control.xon_offset[3]", "larger than its XOFF point");
    names(error("{generate: pfc}", ""), "switch.flow_control.generate", "lists none");
    names(error("{generate: ppp}", lossless), "switch.flow_control.generate", "ppp");
    names(error("{pause_quanta: 100}", lossless), "switch.flow_control.pause_quanta",
          "flow_control.generate is not");
    names(error("{generate: queue_pause, q_on: 90pkt}", ""), "switch.flow_control.q_off",
          "required");
    names(error("{generate: queue_pause, q_on: 80pkt, q_off: 90pkt}", ""),
          "switch.flow_control.q_off", "below q_on");
    names(error("{generate: queue_pause, q_on: 90pkt, q_off: 8000B}", ""),
          "switch.flow_control.q_off", "same unit");
    names(error("{generate: pfc, q_on: 90pkt, q_off: 80pkt}", lossless), "switch.flow_control.q_on",
          "queue_pause only");
    const auto q =
        load("switch:\n  flow_control: {generate: queue_pause, q_on: 90pkt, q_off: 80pkt}\n");
    REQUIRE(q.error.empty());
    CHECK(q.c.flow_control_generation.q_on == 90);
    CHECK(q.c.flow_control_generation.q_off == 80);
    CHECK(q.c.flow_control_generation.q_in_frames);
}

TEST_CASE("switch config: PFC watchdog keys and explicit off switches", "[switch][config][pfc]") {
    const auto on = load(
        "switch:\n  flow_control: {honour_pfc: true}\n  pfc_watchdog: {enabled: true, "
        "detection_time: 5ms, restoration_time: 10ms, action: forward, priorities: ['3', '5']}\n");
    REQUIRE(on.error.empty());
    CHECK(on.c.pfc_watchdog.enabled);
    CHECK(on.c.pfc_watchdog.detection == 5 * PS_PER_MS);
    CHECK(on.c.pfc_watchdog.restoration == 10 * PS_PER_MS);
    CHECK(on.c.pfc_watchdog.action == pfc_watchdog_action::FORWARD);
    CHECK(on.c.pfc_watchdog.priorities == 0x28);
    const auto dflt =
        load("switch:\n  flow_control: {honour_pfc: true}\n  pfc_watchdog: {enabled: true}\n");
    REQUIRE(dflt.error.empty());
    CHECK(dflt.c.pfc_watchdog.detection == 200 * PS_PER_MS);
    CHECK(dflt.c.pfc_watchdog.action == pfc_watchdog_action::DROP);
    CHECK(dflt.c.pfc_watchdog.priorities == 0x18);
    auto err = [](const std::string& y) { return load("switch:\n" + y).error; };
    CHECK(err("  pfc_watchdog: {enabled: true}\n").find("switch.pfc_watchdog.enabled") !=
          std::string::npos);  // needs honour_pfc
    CHECK(
        err("  pfc_watchdog: {detection_time: 5ms}\n").find("switch.pfc_watchdog.detection_time") !=
        std::string::npos);
    CHECK(err("  flow_control: {honour_pfc: true}\n  pfc_watchdog: {enabled: true, priorities: "
              "['8']}\n")
              .find("switch.pfc_watchdog.priorities") != std::string::npos);
    CHECK(err("  pfc_watchdog: {enabled: true, detection_time: 0s}\n")
              .find("switch.pfc_watchdog.detection_time") != std::string::npos);
    // Turned off explicitly, the other keys may stay (a sweep sets enabled/generate only).
    CHECK(err("  pfc_watchdog: {enabled: false, detection_time: 5ms}\n").empty());
    CHECK(err("  flow_control: {generate: none, pause_quanta: 100}\n").empty());
    CHECK(load("switch:\n  flow_control: {generate: none}\n").c.flow_control_generation.mode ==
          pause_generation::OFF);
}

TEST_CASE("switch.pipeline keys: depth sets the latency in cycles, errors name the key",
          "[switch][pipeline][config]") {
    const loaded def = load("switch: {}\n");
    REQUIRE(def.error.empty());
    CHECK_FALSE(def.c.pipeline.limited());
    CHECK(def.c.pipeline_latency == 300'000);
    const loaded d = load(
        "switch: {core_clock: 1.25GHz, pipeline: {count: 4, depth: 375, packets_per_cycle: 1.5, "
        "bytes_per_cycle: 96, input_buffer: 16KiB, port_map: [3, 2, 1, 0]}}\n");
    REQUIRE(d.error.empty());
    CHECK(d.c.pipeline_latency == 375 * 800);
    CHECK(d.c.pipeline.limited());
    CHECK(d.c.pipeline.count == 4);
    CHECK(d.c.pipeline.packets_per_cycle == 1.5);
    CHECK(d.c.pipeline.bytes_per_cycle == 96);
    CHECK(d.c.pipeline.input_buffer_bytes == 16384);
    CHECK(d.c.pipeline.port_map == std::vector<std::uint16_t>{3, 2, 1, 0});
    CHECK(load("switch: {pipeline_latency: 200ns, pipeline: {depth: 10}}\n").error ==
          "switch.pipeline_latency: is set together with pipeline.depth; give the latency one "
          "way (depth: cycles of the core clock)");
    CHECK(load("switch: {pipeline: {count: 2, port_map: [0, 2]}}\n").error ==
          "switch.pipeline.port_map: '2' is not an integer in 0..1");
    CHECK(load("switch: {pipeline: {packets_per_cycle: -1}}\n")
              .error.rfind("switch.pipeline.packets_per_cycle", 0) == 0);
    CHECK(load("switch: {pipeline: {count: 0}}\n").error.rfind("switch.pipeline.count", 0) == 0);
}

TEST_CASE("chip presets fill the switch keys and the user keys win", "[switch][pipeline][config]") {
    const loaded th = load("switch: {chip: tomahawk_32x100g}\n");
    REQUIRE(th.error.empty());
    CHECK(th.c.chip == "tomahawk_32x100g");
    CHECK(th.c.core_clock_hz == 850e6);
    CHECK(th.c.clock_period() == 1176);
    CHECK(th.c.pipeline.count == 4);
    CHECK(th.c.pipeline.packets_per_cycle == 1);
    CHECK(th.c.pipeline_latency == 383 * 1176);
    CHECK(th.c.buffer_bytes == 16777280);
    CHECK(th.c.mmu.cell_bytes == 208);
    CHECK(th.c.mmu.cell_overhead_bytes == 64);
    // Tomahawk's XPE map (facts-mmu §1.3): row = ingress pipe, column = egress pipe.
    CHECK(th.c.mmu.partitions == 4);
    CHECK(th.c.mmu.partition_map ==
          std::vector<std::uint8_t>{0, 0, 1, 1, 2, 2, 3, 3, 2, 2, 3, 3, 0, 0, 1, 1});
    const mmu_config m = th.c.mmu_for(32);
    CHECK(m.pipes == 4);
    CHECK(m.port_pipe[7] == 0);
    CHECK(m.port_pipe[8] == 1);
    CHECK(m.port_pipe[31] == 3);
    CHECK(m.validate().empty());
    // One partition: the preset's map stays, unused.
    const loaded one = load("switch: {chip: tomahawk_32x100g, mmu: {partitions: 1}}\n");
    REQUIRE(one.error.empty());
    CHECK(one.c.mmu.partitions == 1);
    CHECK(one.c.mmu.partition_map.empty());
    CHECK(one.c.mmu_for(32).port_pipe.empty());
    // Overrides: a scalar and one key of the pipeline map (the rest of the map stays).
    const loaded o =
        load("switch: {chip: tomahawk_32x100g, buffer: 8MiB, pipeline: {depth: 10}}\n");
    REQUIRE(o.error.empty());
    CHECK(o.c.buffer_bytes == 8u << 20);
    CHECK(o.c.pipeline_latency == 10 * 1176);
    CHECK(o.c.pipeline.count == 4);
    for (const char* chip : {"trident3_32x100g", "tomahawk4_64x400g"}) {
        const loaded c = load(std::string("switch: {chip: ") + chip + "}\n");
        INFO(chip);
        CHECK(c.error.empty());
        CHECK(c.c.pipeline.limited());
    }
    CHECK(load("switch: {chip: trident9}\n").error.rfind("switch.chip", 0) == 0);
}

TEST_CASE(
    "switch.mmu.partitions keys: the map needs a row per ingress pipeline, errors name "
    "the key",
    "[switch][mmu][partition][config]") {
    const loaded two = load(
        "switch: {pipeline: {count: 2}, mmu: {partitions: 2, partition_map: ['0 1', '1, 0']}}\n");
    REQUIRE(two.error.empty());
    CHECK(two.c.mmu.partition_map == std::vector<std::uint8_t>{0, 1, 1, 0});
    CHECK(load("switch: {pipeline: {count: 2}, mmu: {partitions: 2}}\n").error ==
          "switch.mmu.partitions: is 2 but switch.mmu.partition_map is not given: say which "
          "partition each pipeline pair uses");
    CHECK(load("switch: {pipeline: {count: 2}, mmu: {partitions: 2, partition_map: ['0 1']}}\n")
              .error ==
          "switch.mmu.partition_map: has 1 rows; switch.pipeline.count is 2: one "
          "row per ingress pipeline");
    CHECK(load("switch: {pipeline: {count: 2}, mmu: {partitions: 2, partition_map: ['0 1', "
               "'1']}}\n")
              .error ==
          "switch.mmu.partition_map: row 1 ('1') has 1 entries; "
          "switch.pipeline.count is 2: one per egress pipeline");
    CHECK(load("switch: {pipeline: {count: 2}, mmu: {partitions: 2, partition_map: ['0 1', "
               "'2 0']}}\n")
              .error == "switch.mmu.partition_map: '2' is not an integer in 0..1");
    CHECK(load("switch: {mmu: {partitions: 0}}\n").error.rfind("switch.mmu.partitions", 0) == 0);
}

TEST_CASE("switch.mmu cell bandwidth keys: off by default, a real per partition, range named",
          "[switch][mmu][cells][config]") {
    const loaded plain = load("switch: {}\n");
    CHECK(plain.c.mmu.write_cells_per_cycle == 0);
    CHECK(plain.c.mmu.read_cells_per_cycle == 0);
    const loaded set =
        load("switch: {mmu: {write_cells_per_cycle: 1.5, read_cells_per_cycle: 2}}\n");
    CHECK(set.c.mmu.write_cells_per_cycle == 1.5);
    CHECK(set.c.mmu.read_cells_per_cycle == 2);
    // The presets leave them off (no public figure).
    CHECK(load("switch: {chip: tomahawk_32x100g}\n").c.mmu.write_cells_per_cycle == 0);
    const std::string neg = load("switch: {mmu: {read_cells_per_cycle: -1}}\n").error;
    CHECK(neg.rfind("switch.mmu.read_cells_per_cycle", 0) == 0);
    CHECK(load("switch: {mmu: {write_cells_per_cycle: 'fast'}}\n")
              .error.rfind("switch.mmu.write_cells_per_cycle", 0) == 0);
}
