#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fabricsim/core/frame_pool.h"
#include "fabricsim/platforms/platform.h"

using namespace fabricsim;
using namespace fabricsim::platforms;

namespace {
std::vector<std::string> split(const std::string& line) {
    std::vector<std::string> out(1);
    for (const char c : line) {
        if (c == ',')
            out.emplace_back();
        else
            out.back() += c;
    }
    return out;
}
}  // namespace

TEST_CASE("conservation on a congested leaf-spine: sent = delivered + dropped + in flight",
          "[platforms][integration]") {
    // 2:1 oversubscribed fabric at 90% host load, small port caps: drops at the spines and leaves.
    const auto sc = load_scenario(load_yaml_string(R"(
duration: 2ms
topology:
  kind: leaf_spine
  host_rate: 10Gbps
  leaf_spine: {leaves: 4, spines: 2, hosts_per_leaf: 8, fabric_rate: 20Gbps}
switch: {port_cap: 60KB, buffer: 1MiB}
phy: {ber: 1e-7}
traffic:
  generate:
    - {pattern: permutation, process: poisson, load: 0.9}
    - {pattern: many_to_one, target: h0, process: on_off, load: 0.2, on_time: 50us, off_time: 50us}
results: {sample_interval: 0s}
)"),
                                  "congested");
    const auto r = run_scenario(sc, "");
    const auto& fr = r.summary["frames"];
    const auto sent = fr["sent"].get<std::uint64_t>();
    const auto delivered = fr["delivered"].get<std::uint64_t>();
    const auto dropped = fr["dropped"].get<std::uint64_t>();
    const auto in_flight = fr["in_flight"].get<std::uint64_t>();
    INFO(r.summary["frames"].dump());
    CHECK(sent > 10000);
    CHECK(fr["dropped_by_cause"]["port_cap"].get<std::uint64_t>() > 0);
    CHECK(fr["dropped_by_cause"]["fcs_error"].get<std::uint64_t>() > 0);
    CHECK(in_flight > 0);
    CHECK(sent == delivered + dropped + in_flight);
    CHECK(in_flight == fr["pool_outstanding"].get<std::uint64_t>());  // the platform's own pool
}

TEST_CASE("leaf_spine_profiles.yaml: shallow-buffer leaves drop, deep-buffer spines do not",
          "[platforms][integration][profiles]") {
    const std::string dir = std::string(FABRICSIM_SOURCE_DIR) + "/platforms/scenarios";
    const auto sc = load_scenario(load_yaml_file(dir + "/leaf_spine_profiles.yaml"),
                                  "leaf_spine_profiles", dir);
    const auto r = run_scenario(sc, "");
    const auto& sw = r.summary["switches"];
    INFO(r.summary["frames"].dump());
    auto drops = [&](const char* name) {
        std::uint64_t d = 0;
        for (const auto& p : sw[name]["ports"])
            for (const auto& [k, v] : p["drops"].items()) d += v.get<std::uint64_t>();
        return d;
    };
    for (const char* leaf : {"leaf0", "leaf1"}) {
        CHECK(sw[leaf]["profile"] == "shallow_leaf");
        CHECK(sw[leaf]["buffer_bytes"] == 256 * 1024);
    }
    for (const char* spine : {"spine0", "spine1"}) {
        CHECK(sw[spine]["profile"] == "deep_spine");
        CHECK(sw[spine]["buffer_bytes"] == 16 * 1024 * 1024);
        CHECK(drops(spine) == 0);
    }
    // 7 x 5 Gbps into h7's 10G port behind 256 KiB; leaf0: ECMP puts 3 of its 4 flows on one
    // 10G uplink. Both queues peak at 232960 B (1120 cells of the 1260 the buffer has).
    CHECK(drops("leaf0") == 248);
    CHECK(drops("leaf1") == 1487);
    CHECK(sw["leaf1"]["ports"][3]["queue_peak_cell_bytes"] == 232960);
    CHECK(r.summary["nics"]["h0_nic"]["profile"] == "default");
}

TEST_CASE("a TCP flow alone on an idle fabric completes in its ideal FCT",
          "[platforms][integration]") {
    // Flows within the initial window, one at a time, at start times off the 1 GHz clock edges,
    // across one leaf (10G) and across leaf-spine-leaf (10G/40G, 3 switches); one with a PCP
    // (VLAN-tagged frames). The idle-path model (idle_path.h) gives the simulated FCT to the
    // picosecond, except for the middle frames' waits for clock edges, which it leaves out:
    // less than one 1 ns period per switch.
    const auto sc = load_scenario(load_yaml_string(R"(
duration: 1ms
topology:
  kind: leaf_spine
  host_rate: 10Gbps
  leaf_spine: {leaves: 2, spines: 1, hosts_per_leaf: 2, fabric_rate: 40Gbps}
traffic:
  flows:
    - {src: h0, dst: h1, transport: tcp, size: 1579B, start: 1.2345us}
    - {src: h0, dst: h2, transport: tcp, size: 3000B, start: 200.0001us}
    - {src: h3, dst: h1, transport: tcp, size: 14000B, start: 400.0007us, pcp: 3}
    - {src: h2, dst: h0, transport: tcp, size: 418B, start: 600us}
results: {sample_interval: 0s}
)"),
                                  "idle_fct");
    const std::string dir =
        (std::filesystem::temp_directory_path() / "fabricsim_test_idle_fct").string();
    run_options opt;
    opt.overwrite = true;
    run_scenario(sc, dir, opt);
    std::ifstream csv(dir + "/flows.csv");
    std::string line;
    std::getline(csv, line);
    const auto header = split(line);
    const auto col = [&](const char* name) {
        return std::size_t(std::find(header.begin(), header.end(), name) - header.begin());
    };
    std::vector<double> gap_ps;
    while (std::getline(csv, line)) {
        const auto f = split(line);
        REQUIRE(f.at(col("timeouts")) == "0");
        gap_ps.push_back(std::round(
            (std::stod(f.at(col("fct_us"))) - std::stod(f.at(col("ideal_fct_us")))) * 1e6));
    }
    REQUIRE(gap_ps.size() == 4);
    CHECK(gap_ps[0] == 0);  // one switch, two frames
    CHECK(gap_ps[1] >= 0);
    CHECK(gap_ps[1] < 3000);  // three switches
    CHECK(gap_ps[2] >= 0);
    CHECK(gap_ps[2] < 3000);
    CHECK(gap_ps[3] == 0);  // three switches, one frame
}

TEST_CASE("messages on persistent connections: each waits for its connection and completes",
          "[platforms][integration]") {
    // Two senders answer h0's 100 B requests with 20 KB messages over one connection each, at
    // 30% load: some messages find their connection busy and wait for it.
    const auto sc = load_scenario(load_yaml_string(R"(
duration: 60ms
topology: {kind: incast, host_rate: 1Gbps, link_delay: 5us, incast: {hosts: 3}}
tcp: {cc: dctcp}
switch: {queues: 1, ecn: {mode: step, k: 20pkt}}
traffic:
  workload:
    - {pattern: many_to_one, target: h0, load: 0.3, sizes: fixed, size: 20KB, connections: 1,
       request_size: 100B, stop: 50ms}
results: {sample_interval: 0s}
)"),
                                  "messages");
    const std::string dir =
        (std::filesystem::temp_directory_path() / "fabricsim_test_messages").string();
    run_options opt;
    opt.overwrite = true;
    const auto r = run_scenario(sc, dir, opt);
    REQUIRE(r.summary["frames"]["conserved"].get<bool>());
    const auto& m = r.summary["messages"][0];
    const auto n = sc.message_workloads[0].messages.size();
    CHECK(m["messages"].get<std::size_t>() == n);
    CHECK(m["completed"].get<std::size_t>() == n);
    CHECK(m["connections"].get<std::size_t>() == 2);
    CHECK(m["waited_for_connection"].get<std::uint64_t>() > 0);
    CHECK(r.summary["fct"]["all"]["flows"].get<std::size_t>() == n);
    CHECK(r.summary["fct"]["all"]["completed"].get<std::size_t>() == n);
    CHECK(r.summary["flows"].size() == 4);  // two connections, each a data and a request flow

    std::ifstream csv(dir + "/messages.csv");
    std::string line;
    std::getline(csv, line);
    const auto header = split(line);
    const auto col = [&](const char* name) {
        return std::size_t(std::find(header.begin(), header.end(), name) - header.begin());
    };
    REQUIRE(col("slowdown") < header.size());
    std::map<std::string, double> last_end;  // per connection flow
    std::size_t rows = 0, waited = 0;
    while (std::getline(csv, line)) {
        const auto f = split(line);
        ++rows;
        const double start = std::stod(f.at(col("start_us")));
        const double dispatch = std::stod(f.at(col("dispatch_us")));
        const double end = std::stod(f.at(col("end_us")));
        const std::string& conn = f.at(col("connection_flow"));
        CHECK(dispatch >= start);
        if (dispatch > start) ++waited;
        // One message at a time per connection, in arrival order: a message is dispatched when
        // the previous one on its connection has arrived (or at its own arrival).
        if (last_end.count(conn)) CHECK(dispatch >= last_end[conn] - 1e-6);
        if (dispatch > start) CHECK(std::abs(dispatch - last_end[conn]) < 1e-6);
        last_end[conn] = end;
        CHECK(std::stod(f.at(col("fct_us"))) >= std::stod(f.at(col("ideal_fct_us"))) - 1e-3);
        CHECK(f.at(col("size_bytes")) == "20000");
    }
    CHECK(rows == n);
    CHECK(waited == m["waited_for_connection"].get<std::uint64_t>());
}

namespace {
/// An incast on a small leaf-spine, 200 us into the run: frames queued in leaf0 and on the wires.
/// The platform lives for the rest of the process (one elaboration per test process).
platform& incast_at_200us() {
    static const auto sc = load_scenario(load_yaml_string(R"(
duration: 1ms
topology:
  kind: leaf_spine
  host_rate: 10Gbps
  leaf_spine: {leaves: 2, spines: 1, hosts_per_leaf: 4, fabric_rate: 10Gbps}
switch: {buffer: 1MiB}
traffic:
  generate:
    - {pattern: many_to_one, target: h0, process: poisson, load: 0.9}
results: {sample_interval: 0s}
)"),
                                         "invariants");
    init_kernel_time();
    static platform top("top", sc, "");
    sc_core::sc_start(sc_core::sc_time(200, sc_core::SC_US));
    REQUIRE(top.switch_named("leaf0").buffer().used_cells() > 0);
    // A correct model passes at any instant.
    REQUIRE_NOTHROW(top.check_invariants());
    return top;
}
}  // namespace

TEST_CASE("invariant checker: an injected MMU accounting bug stops the run naming the switch",
          "[platforms][integration][invariants]") {
    platform& top = incast_at_200us();
    const sw::switch_device& leaf0 = top.switch_named("leaf0");
    sw::mmu_ticket stray;  // a cell released that no frame held
    stray.cells = 1;
    const_cast<sw::mmu&>(leaf0.buffer()).release(stray);
    try {
        top.check_invariants();
        FAIL("no violation");
    } catch (const invariant_violation& e) {
        CHECK(e.component() == "top.leaf0 MMU");
        CHECK(e.at() == 200 * PS_PER_US);
        const std::uint64_t used = leaf0.buffer().used_cells();
        CHECK(std::string(e.what()) ==
              "invariant violated in top.leaf0 MMU at 200000000 ps: buffer cells: " +
                  std::to_string(used) + " counted, " + std::to_string(used + 1) + " held");
    }
}

TEST_CASE("invariant checker: a frame counted as sent that no block holds stops the run",
          "[platforms][integration][invariants]") {
    platform& top = incast_at_200us();
    const_cast<host::flow_table&>(top.flows())[0].sent_frames++;
    CHECK_THROWS_WITH(top.check_invariants(),
                      Catch::Contains("invariant violated in top at 200000000 ps: frames do not "
                                      "balance: sent "));
}
