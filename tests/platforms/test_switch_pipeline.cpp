// The switch's cycle-approximate pipelines end to end (docs/models/switch.md "Pipelines"): one
// Tomahawk-class chip (tomahawk_32x100g: 4 pipelines of 8 x 100G ports, one frame per cycle of
// an 850 MHz clock, period 1176 ps) with 32 hosts, each sending CBR UDP to the host 16 ports on,
// so no egress port is ever oversubscribed and every loss is the pipelines'.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fabricsim/core/config.h"
#include "fabricsim/platforms/platform.h"
#include "fabricsim/platforms/scenario.h"
#include "scenario_run.h"

using namespace fabricsim;
using namespace fabricsim::platforms;
using json = nlohmann::json;

namespace {

constexpr double PERIOD_PS = 1176;             // round(1e12 / 850e6)
constexpr double PIPE_PPS = 1e12 / PERIOD_PS;  // one frame per cycle: 850.34 Mpps
constexpr double PORTS_PER_PIPE = 8;
constexpr double LINE_BPS = 100e9;

/// Frames per second of one port at line rate with frames of `frame_bytes` (+ 20 B on the wire).
double line_pps(double frame_bytes) {
    return LINE_BPS / ((frame_bytes + 20) * 8);
}

json run(const std::string& yaml, const std::string& name) {
    return run_conserved(yaml, name);
}

/// 32 hosts, host i sends to host i + 16 (mod 32) at `load` of line rate with IP packets of
/// `packet` bytes (frame = packet + 18).
json permutation(double load, unsigned packet, const std::string& duration,
                 const std::string& pipeline = "") {
    std::string flows;
    char rate[32];
    std::snprintf(rate, sizeof rate, "%.6fGbps", load * 100);
    for (unsigned i = 0; i < 32; ++i)
        flows += "    - {src: h" + std::to_string(i) + ", dst: h" + std::to_string((i + 16) % 32) +
                 ", rate: " + rate + ", packet_size: " + std::to_string(packet) + "B}\n";
    return run("duration: " + duration +
                   "\ntopology: {kind: incast, host_rate: 100Gbps, incast: {hosts: 32}}\n"
                   "switch: {chip: tomahawk_32x100g" +
                   (pipeline.empty() ? "" : ", pipeline: {" + pipeline + "}") +
                   "}\ntraffic:\n  flows:\n" + flows,
               "pipeline");
}

std::uint64_t u64(const json& j) {
    return j.get<std::uint64_t>();
}

std::uint64_t cause(const json& s, const char* c) {
    return u64(s["frames"]["dropped_by_cause"][c]);
}

}  // namespace

// Each TEST_CASE runs one platform (ctest runs each in its own process).

TEST_CASE("64 B frames 1% below the packet-rate ceiling are all forwarded", "[switch_pipeline]") {
    // 8 ports x 148.81 Mpps offered against 850.34 Mpps: the ceiling is at 71.43 % load.
    const double ceiling = PIPE_PPS / (PORTS_PER_PIPE * line_pps(64));
    REQUIRE(ceiling == Approx(0.714286).epsilon(1e-4));
    const json s = permutation(0.99 * ceiling, 46, "100us", "input_buffer: 1KiB");
    CHECK(u64(s["frames"]["dropped"]) == 0);
    CHECK(u64(s["frames"]["delivered"]) > 32 * 10000);
    for (const json& p : s["switches"]["tor"]["pipelines"])
        CHECK(u64(p["input_buffer_peak_bytes"]) < 8192 / 2);
}

TEST_CASE("64 B frames 1% above the packet-rate ceiling overflow the pipelines",
          "[switch_pipeline]") {
    // 1 KiB of input buffer per port (8 x 16 frames) fills within ~15 us at 1% over.
    const double ceiling = PIPE_PPS / (PORTS_PER_PIPE * line_pps(64));
    const json s = permutation(1.01 * ceiling, 46, "100us", "input_buffer: 1KiB");
    CHECK(cause(s, "pipeline_overflow") > 0);
    CHECK(cause(s, "pipeline_overflow") == u64(s["frames"]["dropped"]));
    for (const json& p : s["switches"]["tor"]["pipelines"]) {
        CHECK(u64(p["overflow_drops"]) > 0);
        CHECK(u64(p["input_buffer_peak_bytes"]) > 8 * (1024 - 64));
    }
}

TEST_CASE("at 64 B line rate each pipeline forwards one frame per cycle", "[switch_pipeline]") {
    // Every pipeline is busy from its first frame (about 1 us in) on; frames then reach their
    // sinks ~3.75 us after they were sent. Delivered over 200 us less that start-up:
    // 4 pipelines x 850.34 Mpps.
    const json s = permutation(1.0, 46, "200us");
    const double rate = double(u64(s["frames"]["delivered"])) / (200e-6 - 3.75e-6);
    CHECK(rate == Approx(4 * PIPE_PPS).epsilon(0.01));
    // Offered 4 x 8 x 148.81 Mpps: the rest overflows the input buffers.
    CHECK(cause(s, "pipeline_overflow") > 0);
    CHECK(cause(s, "pipeline_overflow") == u64(s["frames"]["dropped"]));
    for (const json& p : s["switches"]["tor"]["pipelines"])
        CHECK(p["utilisation"].get<double>() > 0.98);
    // The arbiter shares each pipeline equally: every flow gets 1/8 of its pipeline.
    for (const json& f : s["flows"])
        CHECK(double(u64(f["delivered_frames"])) ==
              Approx(rate / 32 * (200e-6 - 3.75e-6)).epsilon(0.005));
}

TEST_CASE("1500 B frames at line rate on every port stay under the ceiling", "[switch_pipeline]") {
    const json s = permutation(1.0, 1500, "100us");
    CHECK(u64(s["frames"]["dropped"]) == 0);
    // 8.127 frames per us per port, less the ~4 us before the first arrives.
    CHECK(double(u64(s["frames"]["delivered"])) > 0.95 * 32 * line_pps(1518) * 100e-6);
    // Each pipeline is busy 8 x 8.127 Mpps x 1176 ps = 7.6 % of the time.
    const double expected = PORTS_PER_PIPE * line_pps(1518) * PERIOD_PS * 1e-12;
    for (const json& p : s["switches"]["tor"]["pipelines"]) {
        CHECK(u64(p["overflow_drops"]) == 0);
        CHECK(p["utilisation"].get<double>() == Approx(expected).epsilon(0.02));
    }
}

TEST_CASE("latency through the chip is depth x period, to the cycle", "[switch_pipeline]") {
    // Three one-switch paths built alike (the hub only connects them), one frame each at the
    // same time: the flows' latencies
    // differ only by ceil_P(last bit + depth x P) - last bit at their switch. Switch c has a
    // 1 ps clock and no pipeline latency (everything but the pipeline).
    const json s = run(
        "duration: 20us\n"
        "topology:\n  kind: custom\n  host_rate: 100Gbps\n"
        "  hosts: [{name: a1}, {name: a2}, {name: b1}, {name: b2}, {name: c1}, {name: c2}]\n"
        "  switches: [{name: a, ports: 3}, {name: b, ports: 3}, {name: c, ports: 3},\n"
        "             {name: hub, ports: 3}]\n"
        "  links: [{a: a1, b: 'a:0'}, {a: a2, b: 'a:1'}, {a: b1, b: 'b:0'}, {a: b2, b: 'b:1'},\n"
        "          {a: c1, b: 'c:0'}, {a: c2, b: 'c:1'},\n"
        "          {a: 'a:2', b: 'hub:0'}, {a: 'b:2', b: 'hub:1'}, {a: 'c:2', b: 'hub:2'}]\n"
        "switch: {chip: tomahawk_32x100g}\n"
        "switch_profiles:\n"
        "  - {name: shallow, nodes: [b], pipeline: {depth: 10}}\n"
        "  - {name: ideal, nodes: [c], chip: generic, core_clock: 1000GHz, pipeline_latency: 0ns}\n"
        "traffic:\n  flows:\n"
        "    - {src: a1, dst: a2, rate: 10Gbps, frames: 1}\n"
        "    - {src: b1, dst: b2, rate: 10Gbps, frames: 1}\n"
        "    - {src: c1, dst: c2, rate: 10Gbps, frames: 1}\n",
        "latency");
    auto latency_ps = [&s](unsigned flow) {
        REQUIRE(u64(s["flows"][flow]["delivered_frames"]) == 1);
        return std::llround(s["flows"][flow]["latency_max_us"].get<double>() * 1e6);
    };
    const long long preset = latency_ps(0), shallow = latency_ps(1), base = latency_ps(2);
    CHECK(preset - base >= 383 * 1176);  // depth 383 at 1176 ps
    CHECK(preset - base < 384 * 1176);
    // The same arrival time, so the same rounding: exactly 373 cycles apart.
    CHECK(preset - shallow == 373 * 1176);
}

namespace {

/// Line-rate 1500 B UDP from `senders` to h8 (port 8, pipeline 1) for 600 us: the egress
/// queue fills to its dynamic threshold (alpha 8; no port cap). Returns port 8's buffer peak.
json incast(const std::vector<unsigned>& senders, const std::string& mmu) {
    std::string flows;
    for (unsigned h : senders)
        flows +=
            "    - {src: h" + std::to_string(h) + ", dst: h8, rate: 100Gbps, packet_size: 1482B}\n";
    return run(
        "duration: 600us\n"
        "topology: {kind: incast, host_rate: 100Gbps, incast: {hosts: 32}}\n"
        "switch: {chip: tomahawk_32x100g, port_cap: 0B" +
            (mmu.empty() ? "" : ", mmu: {" + mmu + "}") + "}\ntraffic:\n  flows:\n" + flows,
        "partitions");
}

/// Cells an alpha-8 queue alone in `cells` of buffer settles at with 8-cell frames
/// (1500 B + 64 B header): q + 8 <= 8 (cells - q).
double dt_limit(double cells) {
    return (8 * cells - 8) / 9;
}

constexpr double XPE_CELLS = 20165;  // a quarter of the preset's 16,777,280 B in 208 B cells

double port8_peak(const json& s) {
    return double(u64(s["switches"]["tor"]["ports"][8]["peak_cells"]));
}

}  // namespace

TEST_CASE("an incast from one pipeline holds one XPE's share of the buffer",
          "[switch_pipeline][partition]") {
    // Senders on ports 0-3 (pipeline 0) to port 8 (pipeline 1): XPE 0 only.
    const json s = incast({0, 1, 2, 3}, "");
    const json& parts = s["switches"]["tor"]["partitions"];
    REQUIRE(parts.size() == 4);
    CHECK(u64(parts[0]["total_cells"]) == XPE_CELLS);
    CHECK(double(u64(parts[0]["peak_cells"])) == Approx(dt_limit(XPE_CELLS)).margin(8));
    for (unsigned k = 1; k < 4; ++k) CHECK(u64(parts[k]["peak_cells"]) == 0);
    CHECK(port8_peak(s) == Approx(dt_limit(XPE_CELLS)).margin(8));
    CHECK(cause(s, "egress_queue_limit") > 0);
}

TEST_CASE("an incast from two pipelines on different XPEs holds two shares",
          "[switch_pipeline][partition]") {
    // Ports 0-1 (pipeline 0 -> XPE 0) and 16-17 (pipeline 2 -> XPE 2) to port 8.
    const json s = incast({0, 1, 16, 17}, "");
    const json& parts = s["switches"]["tor"]["partitions"];
    CHECK(double(u64(parts[0]["peak_cells"])) == Approx(dt_limit(XPE_CELLS)).margin(8));
    CHECK(double(u64(parts[2]["peak_cells"])) == Approx(dt_limit(XPE_CELLS)).margin(8));
    CHECK(port8_peak(s) == Approx(2 * dt_limit(XPE_CELLS)).margin(16));
}

TEST_CASE("the same incast in one unpartitioned buffer holds four times one share",
          "[switch_pipeline][partition]") {
    const json s = incast({0, 1, 2, 3}, "partitions: 1");
    CHECK_FALSE(s["switches"]["tor"].contains("partitions"));
    CHECK(port8_peak(s) == Approx(dt_limit(4 * XPE_CELLS)).margin(8));
}

// Egress pipelines: the ingress limit off, one frame per cycle per egress pipeline (the same
// 4 x 8 ports). Host i sends to host i + 16, so egress pipeline e carries the 8 flows from
// ingress pipeline e + 2.

namespace {

/// Frames queued at the switch's egress ports at the end.
double queued_frames(const json& s) {
    std::uint64_t n = 0;
    for (const json& p : s["switches"]["tor"]["ports"]) n += u64(p["queued_frames"]);
    return double(n);
}

/// Frames in the 383-cycle pipeline at a time (queued, not yet ready) with 32 ports at `load`.
double in_pipeline(double load) {
    return 32 * load * line_pps(64) * 383 * PERIOD_PS * 1e-12;
}

}  // namespace

TEST_CASE("64 B frames 1% below the egress ceiling all leave the chip", "[switch_pipeline]") {
    const double ceiling = PIPE_PPS / (PORTS_PER_PIPE * line_pps(64));
    const json s = permutation(0.99 * ceiling, 46, "100us",
                               "packets_per_cycle: 0, egress_packets_per_cycle: 1");
    CHECK(u64(s["frames"]["dropped"]) == 0);
    CHECK_FALSE(s["switches"]["tor"].contains("pipelines"));
    const json& eg = s["switches"]["tor"]["egress_pipelines"];
    REQUIRE(eg.size() == 4);
    // Busy 99 % of the time from the first frames' arrival on (~2.1 us in: NIC, links and
    // the 450 ns pipeline): 0.99 x 0.979 of the run.
    for (const json& p : eg)
        CHECK(p["utilisation"].get<double>() == Approx(0.99 * 0.979).epsilon(0.005));
    // Nothing piles up: the queues hold the frames still in the pipeline.
    CHECK(queued_frames(s) == Approx(in_pipeline(0.99 * ceiling)).epsilon(0.1));
}

TEST_CASE("64 B frames 1% above the egress ceiling queue up in the MMU", "[switch_pipeline]") {
    const double ceiling = PIPE_PPS / (PORTS_PER_PIPE * line_pps(64));
    const json s = permutation(1.01 * ceiling, 46, "100us",
                               "packets_per_cycle: 0, egress_packets_per_cycle: 1");
    CHECK(u64(s["frames"]["dropped"]) == 0);  // 1 % over for 100 us fills no threshold
    // Each pipeline gets 1 % more than it starts for ~99 us: ~8.5 frames per us pile up.
    const double excess = 4 * 0.01 * PIPE_PPS * 99e-6;
    CHECK(queued_frames(s) - in_pipeline(1.01 * ceiling) == Approx(excess).epsilon(0.1));
    for (const json& p : s["switches"]["tor"]["egress_pipelines"])
        CHECK(p["utilisation"].get<double>() == Approx(0.979).epsilon(0.005));
}

TEST_CASE("at 64 B line rate each egress pipeline starts one frame per cycle, ports in turn",
          "[switch_pipeline]") {
    const json s =
        permutation(1.0, 46, "200us", "packets_per_cycle: 0, egress_packets_per_cycle: 1");
    const double rate = double(u64(s["frames"]["delivered"])) / (200e-6 - 3.75e-6);
    CHECK(rate == Approx(4 * PIPE_PPS).epsilon(0.01));
    for (const json& p : s["switches"]["tor"]["egress_pipelines"])
        CHECK(p["utilisation"].get<double>() > 0.98);
    // The excess fills the MMU to the dynamic thresholds (each sender's PG and its egress
    // queue alike: 8 of each per XPE) and is dropped at admission, first by the PG's.
    CHECK(cause(s, "ingress_pg_limit") > 0);
    CHECK(cause(s, "ingress_pg_limit") + cause(s, "egress_queue_limit") ==
          u64(s["frames"]["dropped"]));
    // Round-robin turns: every flow gets 1/8 of its egress pipeline.
    for (const json& f : s["flows"])
        CHECK(double(u64(f["delivered_frames"])) ==
              Approx(rate / 32 * (200e-6 - 3.75e-6)).epsilon(0.005));
}

// MMU cell bandwidth (docs/models/switch.md "MMU cell bandwidth"): the pipelines unlimited, one
// cell per cycle written (or read) per XPE. Host i sends to host i + 16, so each XPE holds the
// 8 flows of one ingress pipeline (pipeline 0 to 2 in XPE 1, 1 to 3 in XPE 3, 2 to 0 in XPE 2,
// 3 to 1 in XPE 0). A 164 B frame with the preset's 64 B header takes 2 cells of 208 B: each
// XPE passes half a frame per cycle, 425.17 Mpps, below its 8 ports' 543.48 Mpps at line rate.

namespace {

constexpr unsigned TWO_CELL_PACKET = 146;  // 164 B frames
constexpr double XPE_PPS = PIPE_PPS / 2;

double cell_ceiling() {
    return XPE_PPS / (PORTS_PER_PIPE * line_pps(TWO_CELL_PACKET + 18));
}

const char* const WRITES =
    "packets_per_cycle: 0, egress_packets_per_cycle: 0}, "
    "mmu: {write_cells_per_cycle: 1";
const char* const READS =
    "packets_per_cycle: 0, egress_packets_per_cycle: 0}, "
    "mmu: {read_cells_per_cycle: 1";

}  // namespace

TEST_CASE("2-cell frames 1% below the cell write ceiling all pass", "[switch_pipeline][cells]") {
    REQUIRE(cell_ceiling() == Approx(0.782311).epsilon(1e-4));
    const json s = permutation(0.99 * cell_ceiling(), TWO_CELL_PACKET, "100us", WRITES);
    CHECK(u64(s["frames"]["dropped"]) == 0);
    const json& parts = s["switches"]["tor"]["cell_bandwidth"];
    REQUIRE(parts.size() == 4);
    for (const json& k : parts) {
        CHECK(u64(k["write"]["cells"]) == 2 * u64(k["write"]["frames"]));
        CHECK_FALSE(k.contains("read"));
    }
}

TEST_CASE("at line rate each XPE writes one cell per cycle, its pipeline's ports in turn",
          "[switch_pipeline][cells]") {
    const json s = permutation(1.0, TWO_CELL_PACKET, "200us", WRITES);
    const double rate = double(u64(s["frames"]["delivered"])) / (200e-6 - 3.75e-6);
    CHECK(rate == Approx(4 * XPE_PPS).epsilon(0.01));
    // The writes back frames up into the input buffers, which overflow.
    CHECK(cause(s, "pipeline_overflow") > 0);
    CHECK(cause(s, "pipeline_overflow") == u64(s["frames"]["dropped"]));
    for (const json& k : s["switches"]["tor"]["cell_bandwidth"])
        CHECK(k["write"]["utilisation"].get<double>() > 0.98);
    for (const json& f : s["flows"])
        CHECK(double(u64(f["delivered_frames"])) ==
              Approx(rate / 32 * (200e-6 - 3.75e-6)).epsilon(0.005));
}

TEST_CASE("at line rate each XPE reads one cell per cycle, its ports in turn",
          "[switch_pipeline][cells]") {
    const json s = permutation(1.0, TWO_CELL_PACKET, "200us", READS);
    const double rate = double(u64(s["frames"]["delivered"])) / (200e-6 - 3.75e-6);
    CHECK(rate == Approx(4 * XPE_PPS).epsilon(0.01));
    // The frames wait in the MMU: its thresholds drop the excess.
    CHECK(cause(s, "ingress_pg_limit") + cause(s, "egress_queue_limit") ==
          u64(s["frames"]["dropped"]));
    CHECK(u64(s["frames"]["dropped"]) > 0);
    for (const json& k : s["switches"]["tor"]["cell_bandwidth"]) {
        CHECK(k["read"]["utilisation"].get<double>() > 0.98);
        CHECK_FALSE(k.contains("write"));
    }
    for (const json& f : s["flows"])
        CHECK(double(u64(f["delivered_frames"])) ==
              Approx(rate / 32 * (200e-6 - 3.75e-6)).epsilon(0.005));
}

TEST_CASE("1500 B frames at line rate stay under one cell per cycle written and read",
          "[switch_pipeline][cells]") {
    // 8 ports x 8.13 Mpps x 8 cells = 520 M cells/s per XPE against 850.
    const json s = permutation(1.0, 1482, "100us",
                               "packets_per_cycle: 0, egress_packets_per_cycle: 0}, "
                               "mmu: {write_cells_per_cycle: 1, read_cells_per_cycle: 1");
    CHECK(u64(s["frames"]["dropped"]) == 0);
    for (const json& k : s["switches"]["tor"]["cell_bandwidth"]) {
        CHECK(k["write"]["utilisation"].get<double>() == Approx(0.612).epsilon(0.02));
        CHECK(k["read"]["utilisation"].get<double>() == Approx(0.612).epsilon(0.02));
    }
}
