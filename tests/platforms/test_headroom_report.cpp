#include <catch2/catch.hpp>

#include <map>
#include <sstream>
#include <string>

#include "fabricsim/platforms/headroom_report.h"
#include "fabricsim/platforms/scenario.h"

using namespace fabricsim;
using namespace fabricsim::platforms;

namespace {
using options = std::map<std::string, std::string>;

/// "option: reason" of the config_error headroom_report throws ("" if none).
std::string error_of(const options& o) {
    try {
        headroom_report(o);
    } catch (const config_error& e) {
        return e.key() + ": " + e.reason();
    }
    return "";
}
}  // namespace

TEST_CASE("headroom options: cable length gives the scenario loader's link latency", "[headroom]") {
    const auto sc =
        load_scenario(load_yaml_string("topology: {host_rate: 100Gbps, cable_length: 5}"), "t");
    const ps_t link = sc.topo.links.at(0).cfg.one_way_latency();
    CHECK(link == 165'000u);  // 25 ns + 40 ns PCS + 100 ns RS(528,514)
    const auto r = headroom_report({{"rate", "100Gbps"}, {"cable_length", "5"}});
    CHECK(r["inputs"]["one_way_latency_ps"] == link);
    CHECK(r["bytes"] == 43264u);
    CHECK(headroom_report({{"rate", "100Gbps"}, {"cable_length", "5m"}}) == r);
    CHECK(headroom_report({{"rate", "100Gbps"}, {"one_way_latency", "165ns"}})["bytes"] == 43264u);
}

TEST_CASE("headroom options: units, defaults per method, table", "[headroom]") {
    const options base{{"rate", "10Gbps"}, {"one_way_latency", "1us"}};
    options o = base;
    o["mtu"] = "9KiB";  // 9216
    o["lossless_mtu"] = "1518B";
    o["cell"] = "208";
    CHECK(headroom_report(o) == headroom_report(base));
    CHECK(headroom_report(base)["wire_bytes"] == 17186u);
    const auto s =
        headroom_report({{"method", "sonic"}, {"rate", "100Gbps"}, {"cable_length", "5m"}});
    CHECK(s["xoff"] == 72704u);
    CHECK(s["size"] == 91136u);
    std::ostringstream table;
    print_headroom(headroom_report(base), table);
    CHECK(table.str().find("headroom (XOFF_TH): 88 cells = 18304 B") != std::string::npos);
}

TEST_CASE("headroom options: the scenario's calculated headroom from the command line",
          "[headroom]") {
    // headroom_incast.yaml at 10G/100 m (560 ns one way): 1518-B frames both ways, the switch
    // commits 301 ns ahead, the crossing frame in headroom. W = 1538 + 377 + 72 + 1400 + 3840 +
    // 1538 + 1538 = 10303 -> floor(6.7) = 6 frames x 8 cells = 9984 B, the scenario's
    // headroom_limit_cells (48) x 208.
    std::map<std::string, std::string> o{{"rate", "10Gbps"},
                                         {"one_way_latency", "560ns"},
                                         {"mtu", "1518"},
                                         {"lossless_mtu", "1518"},
                                         {"local_commit_ahead", "301ns"},
                                         {"crossing_frame", "in_headroom"}};
    const auto r = headroom_report(o);
    CHECK(r["terms"]["crossing_frame"] == 1538u);
    CHECK(r["bytes"] == 9984u);
    o["crossing_frame"] = "fits";
    CHECK(headroom_report(o)["bytes"] == 8320u);
    o["crossing_frame"] = "maybe";
    try {
        headroom_report(o);
        FAIL("accepted");
    } catch (const config_error& e) {
        CHECK(std::string(e.what()).find("crossing_frame") != std::string::npos);
    }
}

TEST_CASE("headroom options: bad values name the option", "[headroom]") {
    const options base{{"rate", "100Gbps"}, {"cable_length", "5"}};
    auto with = [&](const std::string& k, const std::string& v) {
        options o = base;
        o[k] = v;
        return error_of(o);
    };
    CHECK(error_of({{"cable_length", "5"}}) == "rate: is required (e.g. 100Gbps)");
    CHECK(with("rate", "100G") ==
          "rate: '100G' needs a bit-rate unit (bps, Kbps, Mbps, Gbps, Tbps)");
    CHECK(with("cell", "0") == "cell: must be positive");
    CHECK(with("mtu", "63") == "mtu: must be 64..65535 bytes (frame with FCS), got 63");
    CHECK(with("small_packets", "101") == "small_packets: must be 0..100");
    CHECK(with("response_delay", "3") ==
          "response_delay: '3' needs a time unit (ps, ns, us, ms, s)");
    CHECK(with("cable_length", "five") ==
          "cable_length: 'five' is not a length in metres (e.g. 5 or 5m)");
    CHECK(with("one_way_latency", "1us") ==
          "cable_length: give cable_length or one_way_latency, not both");
    CHECK(with("gearbox_delay", "1ns") == "gearbox_delay: is not an input of method model");
    CHECK(with("method", "mellanox") == "method: 'mellanox' is not one of model, sonic");
    CHECK(with("celll", "96") == "celll: unknown option");
    options sonic = base;
    sonic["method"] = "sonic";
    sonic["response_delay"] = "3us";
    CHECK(error_of(sonic) == "response_delay: is not an input of method sonic");
}
