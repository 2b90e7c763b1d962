// BCN reaction points in the NIC (issue 15): the NIC's BCN stage (in the QCN stage's place),
// with frame start times checked to the ps and the rate-regulator tag on the wire.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fabricsim/core/config.h"
#include "fabricsim/nic/algo/bcn_limiters.h"
#include "fabricsim/nic/nic_device.h"
#include "fabricsim/phy/link.h"
#include "tb.h"

using namespace fabricsim;
using nic::bank_policy;
using nic::bcn_limiters;

namespace {

constexpr std::uint64_t G10 = 10'000'000'000ull;
constexpr ps_t US = PS_PER_US;
constexpr ps_t FRAME_1500 = 1'230'400;  // 1538 wire bytes at 10G
constexpr std::uint32_t CPID = 0xABCD0401u;

struct post_item {
    ps_t at;
    std::uint32_t flow;
};

/// Posts its items (non-decreasing times) at time 0.
struct poster : sc_core::sc_module {
    nic::nic_device* nic = nullptr;
    std::vector<post_item> items;
    explicit poster(const sc_core::sc_module_name& n) : sc_core::sc_module(n) {
        SC_HAS_PROCESS(poster);
        SC_METHOD(run);
    }
    void run() {
        for (const post_item& it : items)
            nic->post(test::make_frame(1500, 0x0a000002, it.flow), it.at);
    }
};

/// The NIC's host: records what reaches it.
struct recorder : nic::nic_host_if {
    std::vector<frame_kind> got;
    void nic_rx(frame& f, ps_t) override {
        got.push_back(f.kind);
        frame_pool::global().release(f);
    }
};

/// The far end: each frame's start on the wire (from its last bit), flow and tag.
struct sink : sc_core::sc_module, frame_receiver {
    eth_rx_port rx{"rx", *this, 0};
    struct arrival {
        ps_t start;
        std::uint32_t flow;
        std::uint32_t rrt;
        std::uint32_t length;
    };
    std::vector<arrival> got;
    explicit sink(const sc_core::sc_module_name& n) : sc_core::sc_module(n) {}
    void receive(unsigned, frame& f) override {
        // The last bit: 1 us propagation after the frame and its preamble, 0.8 ns a byte at 10G.
        got.push_back({now_ps() - US - ps_t(f.frame_bytes() + PREAMBLE_SFD) * 800, f.flow_id,
                       f.rrt_cpid, f.length});
        frame_pool::global().release(f);
    }
};

/// NIC -> link -> sink; `ctl` sends BCN messages back into the NIC.
struct bench {
    nic::nic_device dut;
    phy::link link;
    sink out{"out"};
    test::tb_source ctl{"ctl"};
    poster host{"host"};
    recorder rec;

    static phy::link_config lc() {
        phy::link_config c;
        c.rate_bps = G10;
        c.propagation = US;
        return c;
    }
    explicit bench(const nic::nic_config& cfg) : dut("dut", cfg, G10, 1), link("l", lc(), 1) {
        dut.tx.socket.bind(link.ab.in);
        link.ab.out.bind(out.rx.socket);
        ctl.tx.socket.bind(link.ba.in);
        link.ba.out.bind(dut.rx.socket);
        host.nic = &dut;
        dut.attach_host(rec);
    }
    std::vector<sink::arrival> of(std::uint32_t flow) const {
        std::vector<sink::arrival> s;
        for (const auto& a : out.got)
            if (a.flow == flow) s.push_back(a);
        return s;
    }
};

/// A BCN message about a frame of `flow` with feedback `fb` (packets; 0 with stop: STOP).
frame& message(std::uint32_t flow, double fb, bool stop = false) {
    frame& sampled = test::make_frame(1500, 0x0a000002, flow);
    frame& m = frame_pool::global().acquire();
    m.set_bcn(sampled, mac_addr{6, 0, 0, 0, 0, 9}, CPID, 0, 0, fb, stop, 6, 0);
    frame_pool::global().release(sampled);
    return m;
}

nic::nic_config bcn_on() {
    nic::nic_config c;
    c.bcn.mode = nic::nic_config::bcn_config::preset::THESIS;
    return c;
}

void line_rate(std::vector<post_item>& items, ps_t from, unsigned n, std::uint32_t flow) {
    for (unsigned k = 0; k < n; ++k) items.push_back({from + k * FRAME_1500, flow});
}

}  // namespace

TEST_CASE("NIC BCN: a negative message halves the flow and tags its frames, to the ps",
          "[nic][bcn][tb]") {
    bench b(bcn_on());
    line_rate(b.host.items, 0, 10, 1);
    // Fb -5000: 1 - G_d |Fb| < 0.5, the decrease floor: 5 Gb/s. It reaches the NIC at ~3.57
    // us, before frame 3 reaches the stage.
    b.ctl.items = {{2'500'000, &message(1, -5000)}};
    sc_core::sc_start(to_sc_time(100 * US));
    const auto s = b.of(1);
    REQUIRE(s.size() == 10);
    for (unsigned k = 0; k < 3; ++k) {
        CHECK(s[k].start == 500'000 + k * FRAME_1500);  // line rate, untagged
        CHECK(s[k].rrt == 0);
        CHECK(s[k].length == 1514);
    }
    // Frame 3 leaves at once (a fresh limiter), tagged; then one every 1544 B x 8 / 5 Gb/s.
    CHECK(s[3].start == 500'000 + 3 * FRAME_1500);
    for (unsigned k = 3; k < 10; ++k) {
        CHECK(s[k].rrt == CPID);
        CHECK(s[k].length == 1514 + 6);
        if (k > 3) CHECK(s[k].start - s[k - 1].start == 2'470'400);
    }
    CHECK(b.dut.get_stats().rx_bcn_messages == 1);
    CHECK(b.dut.get_stats().rx_control_frames == 1);
    CHECK(b.rec.got.empty());  // the message never reaches the host
    const bcn_limiters& l = *b.dut.bcn();
    CHECK(l.rate_bps(0) == 5'000'000'000u);
    CHECK(l.stats().limited_frames == 7);
    CHECK(l.stats().tagged_frames == 7);
    CHECK(l.stats().held_frames == 6);
    nlohmann::json j;
    b.dut.report_stats(j);
    CHECK(j["bcn"]["messages_received"] == 1);
    CHECK(j["bcn"]["decreases"] == 1);
    CHECK(j["bcn"]["installs"] == 1);
    CHECK(j["bcn"]["limiters"][0]["rrt_cpid"] == CPID);
    CHECK(j["bcn"]["limiters"][0]["rate_bps"] == 5'000'000'000u);
    CHECK(frame_pool::global().outstanding() == 0);
}

TEST_CASE("NIC BCN: an initial rate paces a flow from its first frame, untagged",
          "[nic][bcn][tb]") {
    nic::nic_config c = bcn_on();
    c.bcn.initial_rate = 2'000'000'000u;
    bench b(c);
    line_rate(b.host.items, 0, 4, 1);
    sc_core::sc_start(to_sc_time(100 * US));
    const auto s = b.of(1);
    REQUIRE(s.size() == 4);
    // 1538 B x 8 / 2 Gb/s = 6152 ns apart, from the first frame's ready time.
    for (unsigned k = 0; k < 4; ++k) {
        CHECK(s[k].start == 500'000 + k * 6'152'000);
        CHECK(s[k].rrt == 0);
    }
    CHECK(b.dut.bcn()->rp_totals().installs == 0);
}

TEST_CASE("NIC BCN: STOP silences the flow, then the minimum rate", "[nic][bcn][tb]") {
    bench b(bcn_on());
    line_rate(b.host.items, 0, 3, 1);
    b.ctl.items = {{0, &message(1, 0, true)}};  // reaches the NIC at 1.0672 us
    sc_core::sc_start(to_sc_time(2000 * US));
    const auto s = b.of(1);
    REQUIRE(s.size() == 3);
    CHECK(s[0].start == 500'000);  // left before the STOP
    // Silent for U[0.5, 1.5) x 120 us, then 1544 B x 8 / 100 Mb/s = 123.52 us apart.
    CHECK(s[1].start >= 1'067'200 + 60 * US);
    CHECK(s[1].start < 1'067'200 + 180 * US);
    CHECK(s[2].start - s[1].start == 123'520'000);
    CHECK(s[1].rrt == CPID);
    CHECK(b.dut.bcn()->rp_totals().stops == 1);
}

TEST_CASE("NIC BCN: the time series has the BCN columns", "[nic][bcn][tb]") {
    nic::nic_config c = bcn_on();
    c.bcn.rate_limiters = 2;
    bench b(c);
    b.ctl.items = {{0, &message(1, -5000)}};
    CHECK(b.dut.series_columns() ==
          std::vector<std::string>{"bcn_rate_min_bps", "bcn_rate_mean_bps", "bcn_limiters_in_use",
                                   "bcn_messages"});
    std::string row;
    b.dut.append_series(row);
    CHECK(row == ",10000000000,10000000000,0,0");
    sc_core::sc_start(to_sc_time(10 * US));
    row.clear();
    b.dut.append_series(row);
    CHECK(row == ",5000000000,5000000000,1,1");
}

TEST_CASE("NIC BCN off: a BCN message reaches the host as a control frame", "[nic][bcn][tb]") {
    bench b(nic::nic_config{});
    line_rate(b.host.items, 0, 4, 1);
    b.ctl.items = {{2'500'000, &message(1, -5000)}};
    sc_core::sc_start(to_sc_time(100 * US));
    REQUIRE(b.rec.got.size() == 1);
    CHECK(b.rec.got[0] == frame_kind::BCN);
    CHECK(b.dut.get_stats().rx_control_frames == 1);
    CHECK(b.dut.get_stats().rx_bcn_messages == 0);
    CHECK(b.dut.bcn() == nullptr);
    const auto s = b.of(1);
    REQUIRE(s.size() == 4);
    for (unsigned k = 0; k < 4; ++k) CHECK(s[k].start == 500'000 + k * FRAME_1500);
    nlohmann::json j;
    b.dut.report_stats(j);
    CHECK_FALSE(j.contains("bcn"));
}

// ---- Configuration ----

namespace {

std::string load_error(const std::string& yaml, nic::nic_config* out = nullptr) {
    config_schema schema;
    nic::nic_config::params().describe(schema, "nic");
    try {
        const auto root = load_yaml_string(yaml);
        schema.validate(root);
        const nic::nic_config c =
            nic::nic_config::params().load(config_node(schema, root, "", "").child("nic"));
        if (out) *out = c;
    } catch (const config_error& e) {
        return e.what();
    }
    return "";
}

void names(const std::string& yaml, const std::string& key, const std::string& why) {
    const std::string err = load_error(yaml);
    INFO(yaml << " -> " << err);
    CHECK(err.find(key) != std::string::npos);
    CHECK(err.find(why) != std::string::npos);
}

}  // namespace

TEST_CASE("nic config: bcn keys load, bad values name their key", "[nic][bcn][config]") {
    nic::nic_config c;
    REQUIRE(load_error("nic: {}\n", &c).empty());
    CHECK_FALSE(c.bcn.enabled());
    REQUIRE(load_error("nic: {bcn: {mode: thesis, g_i: 1, g_d: 0.001, r_u: 2Mbps, min_rate: "
                       "10Mbps, min_decrease_factor: 0.25, initial_rate: 1.1Gbps, stop_silence: "
                       "50us, rate_limiters: 4, limiters_full: ignore}}\n",
                       &c)
                .empty());
    const nic::bcn_rp_params p = c.bcn.params(G10);
    CHECK(p.g_i == 1.0);
    CHECK(p.g_d == 0.001);
    CHECK(p.r_u_bps == 2e6);
    CHECK(p.min_rate_bps == 10'000'000u);
    CHECK(p.min_decrease_factor == 0.25);
    CHECK(p.initial_rate_bps == 1'100'000'000u);
    CHECK(c.bcn.stop_silence == 50 * US);
    CHECK(c.bcn.rate_limiters == 4u);
    CHECK(c.bcn.limiters_full == bank_policy::NONE);
    REQUIRE(load_error("nic: {bcn: {mode: thesis}}\n", &c).empty());
    const nic::bcn_rp_params t = c.bcn.params(G10);
    CHECK(t.g_i == 0.53);
    CHECK(t.g_d == 2.6e-4);
    CHECK(t.r_u_bps == 1e6);
    CHECK(t.min_rate_bps == 100'000'000u);
    CHECK(t.initial_rate_bps == 0u);
    CHECK(c.bcn.rate_limiters == 1u);

    names("nic: {bcn: {mode: fast}}\n", "nic.bcn.mode", "fast");
    names("nic: {qcn: {mode: thesis}, bcn: {mode: thesis}}\n", "nic.bcn.mode",
          "a NIC runs QCN or BCN reaction points, not both");
    names("nic: {bcn: {g_d: 0.1}}\n", "nic.bcn.g_d", "applies only with a bcn.mode");
    names("nic: {bcn: {mode: thesis, g_d: 1}}\n", "nic.bcn.g_d", "");
    names("nic: {bcn: {mode: thesis, rate_limiters: 0}}\n", "nic.bcn.rate_limiters", "");
    names("nic: {bcn: {mode: thesis, limiters_full: lru}}\n", "nic.bcn.limiters_full", "lru");
    names("nic: {bcn: {mode: thesis, stop_silence: 0s}}\n", "nic.bcn.stop_silence", "");
}

TEST_CASE("NIC BCN: a min_rate above the line rate is refused naming the key", "[nic][bcn][tb]") {
    nic::nic_config c = bcn_on();
    c.bcn.min_rate = 20 * G10;
    CHECK_THROWS_WITH(nic::nic_device("dut", c, G10),
                      Catch::Contains("nic.bcn.min_rate") && Catch::Contains("line rate"));
}

TEST_CASE("NIC BCN: an initial rate above the line rate is refused naming the key",
          "[nic][bcn][tb]") {
    nic::nic_config c = bcn_on();
    c.bcn.initial_rate = 20 * G10;
    CHECK_THROWS_WITH(nic::nic_device("dut", c, G10), Catch::Contains("nic.bcn.initial_rate"));
}
