#include <catch2/catch.hpp>

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
