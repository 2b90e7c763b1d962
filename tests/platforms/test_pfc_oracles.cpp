// Lossless Ethernet oracles (issue 13). Each TEST_CASE is one run in its own process.
#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include <algorithm>
#include <vector>

#include <nlohmann/json.hpp>

#include "fabricsim/core/config.h"
#include "fabricsim/platforms/platform.h"
#include "fabricsim/platforms/scenario.h"

using namespace fabricsim;
using namespace fabricsim::platforms;
using json = nlohmann::json;

namespace {

std::uint64_t switch_drops(const json& summary) {
    std::uint64_t d = 0;
    for (const auto& [name, sw] : summary["switches"].items())
        for (const auto& p : sw["ports"])
            for (const auto& [cause, n] : p["drops"].items()) d += n.get<std::uint64_t>();
    return d;
}

json run_file(const std::string& name, const std::string& set = "",
              const std::string& out_dir = "") {
    const std::string dir = std::string(FABRICSIM_SOURCE_DIR) + "/platforms/scenarios";
    YAML::Node root = load_yaml_file(dir + "/" + name + ".yaml");
    if (!set.empty()) apply_override(root, set);
    const auto r = run_scenario(load_scenario(root, name, dir), out_dir);
    REQUIRE(r.summary["frames"]["conserved"].get<bool>());
    return r.summary;
}

}  // namespace

TEST_CASE("oracle PAUSE cycle: queue-triggered 802.3x at L=100 Q_on=90 Q_off=80 gives t_P = 24 us",
          "[oracle][pfc]") {
    const auto out = std::filesystem::temp_directory_path() /
                     ("fabricsim_pause_cycle_" + std::to_string(::getpid()));
    std::filesystem::remove_all(out);
    const json s = run_file("pause_cycle", "results.sample_interval=1us", out.string());
    INFO(s["switches"]["tor"]["ports"].dump());
    // seed-003 §2 G: t_P = (L - Q_off) P_m / C = 20 x 1500 x 8 / 10e9 = 24 us.
    const double t_p = 20.0 * 1500 * 8 / 10e9 * 1e6;
    for (unsigned port : {1u, 2u}) {
        const json& fc = s["switches"]["tor"]["ports"][port]["flow_control"];
        const auto pauses = fc["xoff_sent"][0].get<std::uint64_t>();
        CHECK(pauses > 50);  // the cycle repeats while the burst lasts
        CHECK(fc["xon_sent"][0].get<std::uint64_t>() == pauses);
        const double interval = fc["xoff_time_us"][0].get<double>() / double(pauses);
        CHECK(interval == Approx(t_p).epsilon(0.10));
        // The senders' MACs honour each ON (their pauses are the interval less the reaction).
        const json& nic = s["nics"]["h" + std::to_string(port) + "_nic"]["flow_control"];
        CHECK(nic["xoff_received"][0] == pauses);
        CHECK(nic["paused_time_us"][0].get<double>() > 0.7 * fc["xoff_time_us"][0].get<double>());
    }
    // No drop anywhere (the queue stays within L) and the port to the receiver sends no PAUSE.
    CHECK(switch_drops(s) == 0);
    CHECK(s["frames"]["dropped"] == 0);
    CHECK(s["switches"]["tor"]["ports"][0]["queue_peak_cell_bytes"].get<std::uint64_t>() <=
          100 * 8 * 208);
    CHECK(s["switches"]["tor"]["ports"][0]["flow_control"]["pause_frames_sent"] == 0);
    // The time series shows the advertised state per port: XOFF (all priorities) on the senders'
    // ports in some rows, never on the receiver's.
    std::ifstream ts(out / "timeseries.csv");
    std::string header, row;
    REQUIRE(std::getline(ts, header));
    std::vector<std::string> cols;
    for (std::size_t a = 0, b; a <= header.size(); a = b + 1) {
        b = std::min(header.find(',', a), header.size());
        cols.push_back(header.substr(a, b - a));
    }
    const auto col = [&](const std::string& name) {
        const auto it = std::find(cols.begin(), cols.end(), name);
        REQUIRE(it != cols.end());
        return std::size_t(it - cols.begin());
    };
    const std::size_t p0 = col("tor.p0_xoff"), p1 = col("tor.p1_xoff");
    unsigned rows = 0, xoff_rows = 0;
    while (std::getline(ts, row)) {
        std::vector<std::string> v;
        for (std::size_t a = 0, b; a <= row.size(); a = b + 1) {
            b = std::min(row.find(',', a), row.size());
            v.push_back(row.substr(a, b - a));
        }
        ++rows;
        CHECK(v[p0] == "0");
        if (v[p1] == "255") ++xoff_rows;
    }
    CHECK(rows > 4000);
    CHECK(xoff_rows > 1000);  // ~57% of the burst is spent in PAUSE intervals
    std::filesystem::remove_all(out);
}

TEST_CASE("oracle PAUSE cycle: senders that ignore PAUSE overflow L", "[oracle][pfc]") {
    const json s = run_file("pause_cycle", "nic.flow_control.honour_pause=false");
    CHECK(switch_drops(s) > 1000);
}

// pfc_storm.yaml: h3's NIC storms XOFF on priority 3 from 5 to 30 ms; h0 sends 2G to h3 and
// 5G to h2, h1 4G to h2. Each run is its own test case (one elaboration per process).
namespace {
double h0_paused_us(const json& s) {
    return s["nics"]["h0_nic"]["flow_control"]["paused_time_us"][3].get<double>();
}
std::uint64_t delivered(const json& s, unsigned flow) {
    return s["flows"][flow]["delivered_frames"].get<std::uint64_t>();
}
}  // namespace

TEST_CASE("PFC storm with the watchdog: stormed after 10 ms and the blocked flow recovers",
          "[oracle][pfc][watchdog]") {
    const json s = run_file("pfc_storm");
    const json& wd = s["switches"]["tor"]["ports"][3]["flow_control"]["watchdog"];
    INFO(wd.dump());
    CHECK(wd["storms"][3] == 1);
    CHECK(wd["restorations"][3] == 1);
    // Stormed 10 ms after the pause began (~5 ms), restored 20 ms after the last XOFF (< 30 ms).
    CHECK(wd["stormed_time_us"][3].get<double>() > 30000);
    CHECK(wd["stormed_time_us"][3].get<double>() < 35000);
    CHECK(s["frames"]["dropped_by_cause"]["pfc_watchdog"].get<std::uint64_t>() > 1000);
    // h0's NIC is paused (its PG sits behind the stormed queue) until the watchdog acts.
    CHECK(h0_paused_us(s) > 9000);
    CHECK(h0_paused_us(s) < 13000);
    // h0's flow to h2, which avoids the stormed port, delivers most of its frames; h1's all.
    CHECK(delivered(s, 1) > 19000);
    CHECK(delivered(s, 2) == 19505);
}

TEST_CASE("PFC storm without the watchdog: the pause spreads to h0 for the whole storm",
          "[oracle][pfc][watchdog]") {
    const json s = run_file("pfc_storm", "switch.pfc_watchdog.enabled=false");
    CHECK(s["frames"]["dropped_by_cause"]["pfc_watchdog"] == 0);
    CHECK(h0_paused_us(s) > 20000);
    CHECK(delivered(s, 1) < 16000);
    CHECK(delivered(s, 2) == 19505);  // h1 shares no paused port
}

// pfc_spreading.yaml: a 3:1 lossless incast onto leaf1's port to h4 pauses the spine and leaf0;
// the victim h3 -> h5 (5 Gbps, same class, never crossing that port) is held behind it.
namespace {
const json& victim(const json& s) {
    return s["flows"][3];
}
}  // namespace

TEST_CASE("oracle congestion spreading: PFC holds a victim flow behind an incast it avoids",
          "[oracle][pfc]") {
    const json s = run_file("pfc_spreading");
    CHECK(s["frames"]["dropped"] == 0);  // lossless
    const auto sent = victim(s)["sent_frames"].get<double>();
    const auto got = victim(s)["delivered_frames"].get<double>();
    CHECK(got < 0.8 * sent);                                  // its throughput falls
    CHECK(victim(s)["latency_mean_us"].get<double>() > 300);  // queued behind the incast
    // The pause spreads hop by hop: leaf1 pauses the spine, the spine pauses leaf0, leaf0 the
    // victim's NIC.
    const json& sw = s["switches"];
    CHECK(sw["leaf1"]["ports"][4]["flow_control"]["xoff_sent"][3].get<int>() > 0);
    CHECK(sw["spine0"]["ports"][0]["flow_control"]["xoff_sent"][3].get<int>() > 0);
    CHECK(s["nics"]["h3_nic"]["flow_control"]["paused_time_us"][3].get<double>() > 1000);
}

TEST_CASE("oracle congestion spreading: in a lossy class the victim is untouched",
          "[oracle][pfc]") {
    const std::string dir = std::string(FABRICSIM_SOURCE_DIR) + "/platforms/scenarios";
    YAML::Node root = load_yaml_file(dir + "/pfc_spreading.yaml");
    for (const char* set : {"switch.flow_control.generate=none", "switch.mmu.lossless_pgs=[]",
                            "switch.mmu.lossless_queues=[]", "switch.mmu.pg_threshold=dynamic"})
        apply_override(root, set);
    const json s = run_scenario(load_scenario(root, "pfc_spreading", dir), "").summary;
    CHECK(s["frames"]["dropped"].get<std::uint64_t>() > 1000);  // the incast drops at leaf1
    CHECK(victim(s)["delivered_frames"].get<double>() >
          0.99 * victim(s)["sent_frames"].get<double>());
    CHECK(victim(s)["latency_mean_us"].get<double>() < 20);
}
