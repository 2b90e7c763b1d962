#include <catch2/catch.hpp>

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "fabricsim/core/frame_pool.h"
#include "fabricsim/platforms/platform.h"

using namespace fabricsim;
using namespace fabricsim::platforms;

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
    CHECK(in_flight == frame_pool::global().outstanding());
}

TEST_CASE("leaf_spine_profiles.yaml: shallow-buffer leaves drop, deep-buffer spines do not",
          "[platforms][integration][profiles]") {
    const char* src = std::getenv("FABRICSIM_SOURCE_DIR");
    REQUIRE(src != nullptr);
    const std::string dir = std::string(src) + "/platforms/scenarios";
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
