// QCN reaction points in the NIC (issue 15): qcn_limiters (plain C++) and the NIC's QCN stage,
// with frame start times checked to the ps.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fabricsim/core/config.h"
#include "fabricsim/nic/algo/qcn_limiters.h"
#include "fabricsim/nic/nic_device.h"
#include "fabricsim/phy/link.h"
#include "tb.h"

using namespace fabricsim;
using nic::bank_policy;
using nic::qcn_limiters;
using nic::qcn_rp;
using nic::qcn_rp_params;

namespace {

constexpr std::uint64_t G10 = 10'000'000'000ull;
constexpr ps_t US = PS_PER_US;
constexpr ps_t FRAME_1500 = 1'230'400;  // 1538 wire bytes at 10G
constexpr ps_t TO_SINK = 2'220'800;     // first bit to the sink's last bit (1 us propagation)
constexpr std::uint32_t WIRE = 1538;    // make_frame(1500): 1518 B frame + preamble + IFG
constexpr std::uint32_t FRAME = 1518;

/// Next-send-time with the ps fraction carried, as rate_limiter does.
struct spacing {
    ps_t next = 0;
    std::uint64_t carry = 0;
    void sent(ps_t start, std::uint64_t rate) {
        const std::uint64_t num = std::uint64_t(WIRE) * 8u * PS_PER_S + carry;  // < 2^64
        next = start + static_cast<ps_t>(num / rate);
        carry = static_cast<std::uint64_t>(num % rate);
    }
};

// ---- qcn_limiters ----

TEST_CASE("qcn_limiters: a CNM binds its flow, others are not limited", "[nic][qcn]") {
    qcn_limiters q(qcn_rp_params::standard(G10), 2, bank_policy::SHARE);
    CHECK(q.limiter_of(7) == qcn_limiters::NONE);
    CHECK(q.on_cnm(100, 7, 32) == 0);
    CHECK(q.limiter_of(7) == 0);
    CHECK(q.limiter_of(8) == qcn_limiters::NONE);
    CHECK(q.rate_bps(0) == 7'500'000'000u);  // 10G (1 - 32/128)
    CHECK(q.bank().at(0).rate_bps() == 7'500'000'000u);
    CHECK(q.active() == std::vector<unsigned>{0});
    CHECK(q.next_timer() == 100 + 15 * PS_PER_MS);
    CHECK(q.stats().bindings == 1);
    // A second CNM of the same flow stays on its limiter.
    CHECK(q.on_cnm(200, 7, 8) == 0);
    CHECK(q.flows(0) == std::vector<std::uint32_t>{7});
    CHECK(q.stats().cnms == 2);
}

TEST_CASE("qcn_limiters: bank full, share or ignore", "[nic][qcn]") {
    SECTION("share: limiter flow % size, one RP for both flows") {
        qcn_limiters q(qcn_rp_params::standard(G10), 2, bank_policy::SHARE);
        q.on_cnm(0, 10, 8);
        q.on_cnm(0, 11, 8);
        CHECK(q.on_cnm(0, 13, 8) == 1);
        CHECK(q.stats().shared_bindings == 1);
        CHECK(q.stats().bindings == 2);
        CHECK(q.flows(1) == std::vector<std::uint32_t>{11, 13});
        CHECK(q.rp(1).stats().cnms == 2);
        CHECK(q.stats().peak_in_use == 2);
    }
    SECTION("ignore: the CNM is dropped, the flow stays at line rate") {
        qcn_limiters q(qcn_rp_params::standard(G10), 2, bank_policy::NONE);
        q.on_cnm(0, 10, 8);
        q.on_cnm(0, 11, 8);
        CHECK(q.on_cnm(0, 13, 8) == qcn_limiters::NONE);
        CHECK(q.limiter_of(13) == qcn_limiters::NONE);
        CHECK(q.stats().ignored_cnms == 1);
        CHECK(q.stats().cnms == 2);
    }
    CHECK_THROWS_WITH(qcn_limiters(qcn_rp_params::standard(G10), 0, bank_policy::SHARE),
                      Catch::Contains("limiters"));
    CHECK_THROWS_WITH(qcn_limiters(qcn_rp_params::standard(G10), 1, bank_policy::LRU),
                      Catch::Contains("limiters_full"));
}

TEST_CASE("qcn_limiters: byte-counter steps move the rate as qcn_rp says", "[nic][qcn]") {
    qcn_rp_params p = qcn_rp_params::standard(G10);
    p.byte_reset = 2 * FRAME;
    qcn_limiters q(p, 1, bank_policy::SHARE);
    qcn_rp ref(p);
    q.on_cnm(0, 1, 32);
    ref.on_cnm(0, 32);
    for (int k = 1; k <= 8; ++k) {
        q.sent(0, ps_t(k) * US, WIRE, FRAME, false);
        ref.on_sent(ps_t(k) * US, FRAME);
        CHECK(q.rp(0).rate_bps() == ref.rate_bps());
        CHECK(q.rate_bps(0) == static_cast<std::uint64_t>(ref.rate_bps()));
    }
    // Fast recovery towards TR = 10G: 7.5, 8.75, 9.375, 9.6875, 10 - 2.5/16 Gb/s.
    CHECK(q.rate_bps(0) == 9'843'750'000u);
    CHECK(q.rp(0).stats().fast_recovery == 4);
}

TEST_CASE("qcn_limiters: a released RP frees its limiter once its FIFO is empty", "[nic][qcn]") {
    qcn_rp_params p = qcn_rp_params::standard(G10);
    p.byte_reset = FRAME;
    p.averaging_factor = 1;  // CR <- TR = line rate at the first increase
    qcn_limiters q(p, 1, bank_policy::SHARE);
    q.on_cnm(0, 1, 32);
    q.on_cnm(0, 2, 32);  // shares limiter 0
    q.hold(0);
    q.hold(0);
    q.sent(0, US, WIRE, FRAME, true);  // byte event: CR = 10G, released, one frame still held
    CHECK(q.rp(0).released());
    CHECK(q.active() == std::vector<unsigned>{0});
    CHECK(q.limiter_of(1) == 0);
    q.sent(0, 2 * US, WIRE, FRAME, true);  // the FIFO is empty: the limiter is free
    CHECK(q.active().empty());
    CHECK(q.limiter_of(1) == qcn_limiters::NONE);
    CHECK(q.limiter_of(2) == qcn_limiters::NONE);
    CHECK(q.bank().in_use() == 0);
    CHECK(q.stats().limiter_releases == 1);
    CHECK(q.stats().unbindings == 2);
    CHECK(q.next_timer() == qcn_limiters::NEVER);
    // The next CNM binds afresh.
    CHECK(q.on_cnm(3 * US, 2, 16) == 0);
    CHECK(q.stats().bindings == 2);  // flow 1, then flow 2 (it shared before)
}

TEST_CASE("qcn_limiters: the RP timer runs and releases an idle flow", "[nic][qcn]") {
    qcn_rp_params p = qcn_rp_params::standard(G10);
    p.averaging_factor = 1;
    qcn_limiters q(p, 1, bank_policy::SHARE);
    q.on_cnm(0, 1, 63);
    CHECK(q.next_timer() == 15 * PS_PER_MS);
    q.on_timer(15 * PS_PER_MS - 1);
    CHECK(q.active().size() == 1);
    q.on_timer(15 * PS_PER_MS);
    CHECK(q.rp(0).stats().timer_events == 1);
    CHECK(q.active().empty());
    CHECK(q.next_timer() == qcn_limiters::NEVER);
}

// ---- The NIC ----

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

/// NIC -> link -> sink; `ctl` sends CNMs back into the NIC.
struct bench {
    nic::nic_device dut;
    phy::link link;
    test::tb_sink out{"out"};
    test::tb_source ctl{"ctl"};
    poster host{"host"};
    recorder rec;

    static phy::link_config lc() {
        phy::link_config c;
        c.rate_bps = G10;
        c.propagation = US;
        return c;
    }
    explicit bench(const nic::nic_config& cfg) : dut("dut", cfg, G10), link("l", lc(), 1) {
        dut.tx.socket.bind(link.ab.in);
        link.ab.out.bind(out.rx.socket);
        ctl.tx.socket.bind(link.ba.in);
        link.ba.out.bind(dut.rx.socket);
        host.nic = &dut;
        dut.attach_host(rec);
    }
    /// Start times on the wire of the frames of `flow`.
    std::vector<ps_t> starts(std::uint32_t flow) const {
        std::vector<ps_t> s;
        for (const auto& a : out.got)
            if (a.flow == flow) s.push_back(a.at - TO_SINK);
        return s;
    }
};

frame& cnm(std::uint32_t flow, std::uint8_t qfb) {
    frame& sampled = test::make_frame(1500, 0x0a000002, flow);
    frame& c = frame_pool::global().acquire();
    c.set_cnm(sampled, mac_addr{2, 0, 0, 0, 0, 9}, 0x0200000000090001ull, qfb, -100, 5, 0, 0);
    frame_pool::global().release(sampled);
    return c;
}

nic::nic_config qcn_on() {
    nic::nic_config c;
    c.qcn.mode = nic::nic_config::qcn_config::preset::STANDARD;
    return c;
}

/// `n` frames of `flow` posted at line rate from `from`.
void line_rate(std::vector<post_item>& items, ps_t from, unsigned n, std::uint32_t flow) {
    for (unsigned k = 0; k < n; ++k) items.push_back({from + k * FRAME_1500, flow});
}

}  // namespace

TEST_CASE("NIC QCN: a CNM with qFb q cuts its flow to (1 - Gd q) of the line rate, to the ps",
          "[nic][qcn][tb]") {
    bench b(qcn_on());
    line_rate(b.host.items, 0, 10, 1);
    b.ctl.items = {{2'500'000, &cnm(1, 32)}};  // reaches the NIC at ~3.56 us, before frame 3
    sc_core::sc_start(to_sc_time(100 * US));
    const std::vector<ps_t> s = b.starts(1);
    REQUIRE(s.size() == 10);
    for (unsigned k = 0; k < 4; ++k) CHECK(s[k] == 500'000 + k * FRAME_1500);  // line rate
    // Frame 3 reaches the stage after the CNM: it leaves at once (a fresh limiter), the next
    // ones every 1538 B x 8 / 7.5 Gb/s = 1 640 533.33 ps, the fraction carried.
    spacing sp;
    sp.sent(s[3], 7'500'000'000u);
    for (unsigned k = 4; k < 10; ++k) {
        CHECK(s[k] == sp.next);
        sp.sent(s[k], 7'500'000'000u);
    }
    CHECK(s[4] - s[3] == 1'640'533u);
    CHECK(s[6] - s[3] == 4'921'600u);
    CHECK(b.dut.get_stats().rx_cnms == 1);
    CHECK(b.dut.get_stats().rx_frames == 0);
    CHECK(b.rec.got.empty());  // the CNM never reaches the host
    const qcn_limiters& q = *b.dut.qcn();
    CHECK(q.rp(0).stats().decreases == 1);
    CHECK(q.stats().limited_frames == 7);
    CHECK(q.stats().held_frames == 6);
    nlohmann::json j;
    b.dut.report_stats(j);
    CHECK(j["qcn"]["cnms_received"] == 1);
    CHECK(j["qcn"]["decreases"] == 1);
    CHECK(j["qcn"]["limiters_in_use"] == 1);
    CHECK(j["qcn"]["limiters"][0]["rate_bps"] == 7'500'000'000u);
    CHECK(j["qcn"]["limiters"][0]["flows"] == nlohmann::json::array({1}));
    CHECK(frame_pool::global().outstanding() == 0);
}

TEST_CASE("NIC QCN: frames of other flows are not limited", "[nic][qcn][tb]") {
    bench b(qcn_on());
    line_rate(b.host.items, 0, 4, 1);
    line_rate(b.host.items, 20 * US, 10, 2);  // flow 2 alone, after the CNM for flow 1
    line_rate(b.host.items, 40 * US, 3, 1);   // flow 1 again: still limited
    b.ctl.items = {{US, &cnm(1, 63)}};
    sc_core::sc_start(to_sc_time(100 * US));
    const std::vector<ps_t> s2 = b.starts(2);
    REQUIRE(s2.size() == 10);
    for (unsigned k = 0; k < 10; ++k) CHECK(s2[k] == 20 * US + 500'000 + k * FRAME_1500);
    const std::vector<ps_t> s1 = b.starts(1);
    REQUIRE(s1.size() == 7);
    // 10G (1 - 63/128) = 5.078125 Gb/s, above the 50 % floor.
    CHECK(b.dut.qcn()->rate_bps(0) == 5'078'125'000u);
    CHECK(s1[4] == 40 * US + 500'000);  // the limiter is long free again at 40 us
    spacing sp;
    sp.sent(s1[4], 5'078'125'000u);
    CHECK(s1[5] == sp.next);
    sp.sent(s1[5], 5'078'125'000u);
    CHECK(s1[6] == sp.next);
    CHECK(frame_pool::global().outstanding() == 0);
}

TEST_CASE("NIC QCN: the byte counter's fast-recovery steps set the spacing", "[nic][qcn][tb]") {
    nic::nic_config c = qcn_on();
    c.qcn.byte_reset = 2 * FRAME;
    bench b(c);
    line_rate(b.host.items, 0, 14, 1);
    b.ctl.items = {{2'500'000, &cnm(1, 32)}};
    sc_core::sc_start(to_sc_time(100 * US));
    const std::vector<ps_t> s = b.starts(1);
    REQUIRE(s.size() == 14);
    // The reference RP, fed the same frames: its rate after each frame is that frame's gap.
    qcn_rp ref(c.qcn.params(G10));
    ref.on_cnm(3 * US, 32);
    spacing sp;
    std::vector<std::uint64_t> rates;
    for (unsigned k = 3; k < 14; ++k) {
        CHECK(s[k] == (k == 3 ? s[3] : sp.next));
        ref.on_sent(s[k], FRAME);
        rates.push_back(static_cast<std::uint64_t>(ref.rate_bps()));
        sp.sent(s[k], rates.back());
    }
    CHECK(rates[0] == 7'500'000'000u);
    CHECK(rates[1] == 8'750'000'000u);  // (7.5 + 10) / 2 after 2 x 1518 B
    CHECK(rates[3] == 9'375'000'000u);
    // Threshold 5: byte events 1..4 are fast recovery, the 5th the first active increase.
    CHECK(b.dut.qcn()->rp(0).stats().fast_recovery == 4);
    CHECK(b.dut.qcn()->rp(0).stats().active_increase == 1);
    CHECK(b.dut.qcn()->rp(0).stats().byte_events == 5);
}

TEST_CASE("NIC QCN: a released RP frees its limiter and the flow goes at line rate",
          "[nic][qcn][tb]") {
    nic::nic_config c = qcn_on();
    c.qcn.byte_reset = 2 * FRAME;
    c.qcn.averaging_factor = 1.0;  // the first increase brings CR back to the line rate
    bench b(c);
    line_rate(b.host.items, 0, 12, 1);
    b.ctl.items = {{2'500'000, &cnm(1, 32)}};
    sc_core::sc_start(to_sc_time(100 * US));
    const std::vector<ps_t> s = b.starts(1);
    REQUIRE(s.size() == 12);
    CHECK(s[4] - s[3] == 1'640'533u);
    const qcn_limiters& q = *b.dut.qcn();
    CHECK(q.active().empty());
    CHECK(q.stats().limiter_releases == 1);
    CHECK(q.limiter_of(1) == qcn_limiters::NONE);
    // Frame 4 brings the rate back: its gap and all later are at the line rate.
    for (unsigned k = 5; k < 12; ++k) CHECK(s[k] == s[k - 1] + FRAME_1500);
    nlohmann::json j;
    b.dut.report_stats(j);
    CHECK(j["qcn"]["limiter_releases"] == 1);
    CHECK(j["qcn"]["limiters_in_use"] == 0);
    CHECK(j["qcn"]["limiters_peak"] == 1);
}

TEST_CASE("NIC QCN: bank full with ignore counts the CNM and leaves the flow alone",
          "[nic][qcn][tb]") {
    nic::nic_config c = qcn_on();
    c.qcn.limiters_full = bank_policy::NONE;
    bench b(c);
    line_rate(b.host.items, 0, 8, 2);
    b.ctl.items = {{0, &cnm(1, 32)}, {1'000'000, &cnm(2, 32)}};
    sc_core::sc_start(to_sc_time(100 * US));
    const std::vector<ps_t> s = b.starts(2);
    REQUIRE(s.size() == 8);
    for (unsigned k = 0; k < 8; ++k) CHECK(s[k] == 500'000 + k * FRAME_1500);
    nlohmann::json j;
    b.dut.report_stats(j);
    CHECK(j["qcn"]["cnms_received"] == 2);
    CHECK(j["qcn"]["cnms_ignored"] == 1);
    CHECK(j["qcn"]["bank_full_events"] == 1);
    CHECK(j["qcn"]["limiters"][0]["flows"] == nlohmann::json::array({1}));
}

TEST_CASE("NIC QCN: the time series has the QCN limiter columns", "[nic][qcn][tb]") {
    nic::nic_config c = qcn_on();
    c.qcn.rate_limiters = 2;
    bench b(c);
    b.ctl.items = {{0, &cnm(1, 32)}};
    CHECK(b.dut.series_columns() ==
          std::vector<std::string>{"qcn_limiters_in_use", "qcn_flows", "qcn_rate_min_bps",
                                   "qcn_rate_mean_bps", "qcn_rate0_bps", "qcn_rate1_bps"});
    std::string row;
    b.dut.append_series(row);
    CHECK(row == ",0,0,10000000000,10000000000,10000000000,10000000000");
    sc_core::sc_start(to_sc_time(10 * US));
    row.clear();
    b.dut.append_series(row);
    CHECK(row == ",1,1,7500000000,7500000000,7500000000,10000000000");
}

TEST_CASE("NIC QCN off: a CNM reaches the host as before", "[nic][qcn][tb]") {
    bench b(nic::nic_config{});
    line_rate(b.host.items, 0, 6, 1);
    b.ctl.items = {{2'500'000, &cnm(1, 32)}};
    sc_core::sc_start(to_sc_time(100 * US));
    REQUIRE(b.rec.got.size() == 1);
    CHECK(b.rec.got[0] == frame_kind::CNM);
    CHECK(b.dut.get_stats().rx_frames == 0);  // a control frame taken in, not data
    CHECK(b.dut.get_stats().rx_control_frames == 1);
    CHECK(b.dut.get_stats().rx_cnms == 0);
    CHECK(b.dut.qcn() == nullptr);
    CHECK(b.dut.series_columns().empty());
    const std::vector<ps_t> s = b.starts(1);
    REQUIRE(s.size() == 6);
    for (unsigned k = 0; k < 6; ++k) CHECK(s[k] == 500'000 + k * FRAME_1500);
    nlohmann::json j;
    b.dut.report_stats(j);
    CHECK_FALSE(j.contains("qcn"));
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

TEST_CASE("nic config: qcn keys load, bad values name their key", "[nic][qcn][config]") {
    nic::nic_config c;
    REQUIRE(load_error("nic: {}\n", &c).empty());
    CHECK_FALSE(c.qcn.enabled());
    REQUIRE(load_error("nic: {qcn: {mode: thesis, gd: 0.015625, byte_reset: 75000B, threshold: "
                       "3, ai_rate: 10Mbps, min_rate: 1Mbps, rate_limiters: 4, limiters_full: "
                       "ignore, stage_rule: per_counter, aimd: true}}\n",
                       &c)
                .empty());
    const qcn_rp_params p = c.qcn.params(G10);
    CHECK(p.byte_counter_only);  // the thesis preset
    CHECK(p.gd == 1.0 / 64);
    CHECK(p.byte_reset == 75'000u);
    CHECK(p.threshold == 3u);
    CHECK(p.ai_rate_bps == 10'000'000u);
    CHECK(p.min_rate_bps == 1'000'000u);
    CHECK(p.stage_rule == nic::qcn_stage_rule::PER_COUNTER);
    CHECK(p.aimd);
    CHECK(c.qcn.rate_limiters == 4u);
    CHECK(c.qcn.limiters_full == bank_policy::NONE);
    REQUIRE(load_error("nic: {qcn: {mode: standard}}\n", &c).empty());
    CHECK(c.qcn.rate_limiters == 1u);
    CHECK(c.qcn.limiters_full == bank_policy::SHARE);
    CHECK(c.qcn.params(G10).time_reset == 15 * PS_PER_MS);

    names("nic: {qcn: {mode: fast}}\n", "nic.qcn.mode", "fast");
    names("nic: {qcn: {gd: 0.1}}\n", "nic.qcn.gd", "applies only with a qcn.mode");
    names("nic: {qcn: {rate_limiters: 2}}\n", "nic.qcn.rate_limiters",
          "applies only with a qcn.mode");
    names("nic: {qcn: {mode: standard, gd: 2}}\n", "nic.qcn.gd", "");
    names("nic: {qcn: {mode: standard, rate_limiters: 0}}\n", "nic.qcn.rate_limiters", "");
    names("nic: {qcn: {mode: standard, threshold: 0}}\n", "nic.qcn.threshold", "");
    names("nic: {qcn: {mode: standard, min_decrease_factor: 1.5}}\n", "nic.qcn.min_decrease_factor",
          "");
    names("nic: {qcn: {mode: standard, limiters_full: lru}}\n", "nic.qcn.limiters_full", "lru");
    names("nic: {qcn: {mode: standard, time_reset: 0s}}\n", "nic.qcn.time_reset", "");
    names("nic: {qcn: {mode: standard, byte_reset: 0B}}\n", "nic.qcn.byte_reset", "");
}

TEST_CASE("NIC QCN: a min_rate above the line rate is refused naming the key", "[nic][qcn][tb]") {
    nic::nic_config c = qcn_on();
    c.qcn.min_rate = 20 * G10;
    CHECK_THROWS_WITH(nic::nic_device("dut", c, G10),
                      Catch::Contains("nic.qcn.min_rate") && Catch::Contains("line rate"));
}
