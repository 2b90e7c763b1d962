// FERA reaction point (plain C++): initial rate, tagging, rate from returned tags, idle reset,
// and the closed loop with fera_cp (seed-003 §2 B and the max-min rule through the tags).
#include <algorithm>
#include <catch2/catch.hpp>
#include <stdexcept>
#include <vector>

#include "fabricsim/nic/algo/fera_source.h"
#include "fabricsim/switch/algo/fera.h"

using namespace fabricsim;
using namespace fabricsim::nic;

namespace {
constexpr std::uint64_t G1 = 1'000'000'000ull;
constexpr std::uint64_t G10 = 10'000'000'000ull;
constexpr ps_t US = PS_PER_US;
constexpr ps_t MS = PS_PER_MS;
}  // namespace

TEST_CASE("fera source: starts at C/N_0, tags the first frame and then one per tau",
          "[nic][fera]") {
    fera_source_params p = fera_source_params::thesis_default(G10);
    p.tag_interval = 500 * US;
    fera_source s(p, 2 * MS);
    CHECK(s.rate_bps() == 500e6);
    CHECK(s.initial_rate_bps() == 500e6);
    CHECK(s.next_tag_due() == 2 * MS);
    CHECK_FALSE(s.discovered());
    CHECK(s.next_timer() == fera_source::NEVER);
    CHECK(s.on_send(2 * MS + 3 * US));  // the first frame discovers the rate
    CHECK(s.tag_init_bps() == G10);
    CHECK(s.next_tag_due() == 2 * MS + 503 * US);
    CHECK_FALSE(s.on_send(2 * MS + 502 * US));
    CHECK(s.on_send(2 * MS + 503 * US));
    s.on_probe_sent(2 * MS + 1100 * US);  // no frame was due: a separate probe
    CHECK(s.next_tag_due() == 2 * MS + 1600 * US);
    CHECK(s.stats().tags_sent == 3);
}

TEST_CASE("fera source: with reset_only_when_idle a frame sent also defers the reset",
          "[nic][fera]") {
    fera_source_params p = fera_source_params::thesis_default(G10);
    p.reset_only_when_idle = true;
    fera_source s(p);
    s.on_send(0);
    s.on_tag_returned(G1, 10 * US);
    CHECK(s.next_timer() == 2010 * US);
    CHECK(s.on_send(1500 * US));         // a frame, tagged (tau after the first), at 1.5 ms
    CHECK(s.next_timer() == 3500 * US);  // 2T after it
    s.on_timer(3000 * US);
    CHECK(s.rate_bps() == 1e9);  // no tag for 2T, but frames went: no reset
    s.on_timer(3500 * US);
    CHECK(s.rate_bps() == 500e6);  // neither for 2T: C/N_0
    CHECK(s.stats().idle_resets == 1);
}

TEST_CASE("fera source: a returned tag sets the rate as it is, 2T without one resets it",
          "[nic][fera]") {
    fera_source s(fera_source_params::thesis_default(G10));
    s.on_send(0);
    s.on_tag_returned(1'234'567'891, 10 * US);
    CHECK(s.rate_bps() == 1'234'567'891.0);  // no smoothing
    CHECK(s.discovered());
    CHECK(s.next_timer() == 2010 * US);    // 2T after the tag
    s.on_tag_returned(20 * G10, 20 * US);  // never above the link rate
    CHECK(s.rate_bps() == 1e10);
    CHECK(s.next_timer() == 2020 * US);
    s.on_timer(2019 * US);
    CHECK(s.rate_bps() == 1e10);
    s.on_timer(2020 * US);  // idle: back to C/N_0
    CHECK(s.rate_bps() == 500e6);
    CHECK(s.next_timer() == fera_source::NEVER);
    CHECK_FALSE(s.discovered());
    CHECK(s.stats().idle_resets == 1);
    // At the deadline's ps the reset runs first and the tag then counts.
    s.on_tag_returned(G1, 3 * MS);
    s.on_tag_returned(2 * G1, 5 * MS);
    CHECK(s.rate_bps() == 2e9);
    CHECK(s.stats().idle_resets == 2);
    CHECK(s.stats().tags_returned == 4);
    CHECK(s.stats().rate_changes == 6);
}

TEST_CASE("fera source validation names the field", "[nic][fera]") {
    auto field_of = [](fera_source_params p) {
        auto e = p.validate();
        return e ? e->field : std::string();
    };
    const fera_source_params ok = fera_source_params::thesis_default(G10);
    CHECK(field_of(ok).empty());
    fera_source_params p = ok;
    p.link_rate_bps = 0;
    CHECK(field_of(p) == "link_rate_bps");
    p = ok;
    p.tag_interval = 2 * MS;  // tau > T
    CHECK(field_of(p) == "tag_interval");
    p = ok;
    p.initial_flows = 0;
    CHECK(field_of(p) == "initial_flows");
    p = ok;
    p.interval = 0;
    CHECK(field_of(p) == "interval");
    CHECK_THROWS_WITH(fera_source(p), Catch::StartsWith("fera_source_params.interval: "));
}

namespace {
/// Sources tag one frame at the start of every interval; the tag crosses one switch port and
/// returns at once; the fluid queue of §2 A takes the sum of the rates for T. Returns the
/// intervals after the first close until the queue is within ±10 % of Q_eq.
int closed_loop(std::vector<fera_source>& srcs, sw::fera_cp& cp, int closes, double* final_queue) {
    const double qeq = 16.0 * 1500;
    double q = 0;
    int entry = -1;
    for (int i = 1; i <= closes; ++i) {
        const ps_t start = static_cast<ps_t>(i - 1) * MS;
        double load = 0;
        for (auto& s : srcs) {
            if (s.on_send(start)) s.on_tag_returned(cp.mark(s.tag_init_bps()), start);
            load += s.rate_bps();
        }
        cp.on_arrival(static_cast<std::uint64_t>(load / 8 / 1000));
        q = std::max(0.0, q + (load - cp.capacity_bps()) / 8 / 1000);
        cp.on_interval(static_cast<ps_t>(i) * MS, static_cast<std::uint64_t>(q));
        const double qb = static_cast<double>(static_cast<std::uint64_t>(q));
        if (entry < 0 && qb >= 0.9 * qeq && qb <= 1.1 * qeq) entry = i - 1;
    }
    *final_queue = q;
    return entry;
}
}  // namespace

TEST_CASE("fera closed loop: sources on the tags reproduce §2 B (21 intervals at k 0.002)",
          "[nic][fera][oracle]") {
    std::vector<fera_source> srcs(10, fera_source(fera_source_params::thesis_default(G10)));
    sw::fera_cp cp(sw::fera_params::analysis(G10, 0.002));
    double q = 0;
    CHECK(closed_loop(srcs, cp, 200, &q) == 21);
    CHECK(q == Approx(16.0 * 1500).margin(12.0));
    for (const auto& s : srcs) CHECK(s.rate_bps() == Approx(1e9).epsilon(1e-4));
}

TEST_CASE("fera closed loop: a flow held by its own 1G link leaves 3G each to three others",
          "[nic][fera][oracle]") {
    // Max-min through the tag rule: the tag of the 1G source starts at 1G and the switch's
    // advertised rate (about 3G) does not lower it; the three 10G sources take the 3G.
    std::vector<fera_source> srcs(3, fera_source(fera_source_params::thesis_default(G10)));
    srcs.emplace_back(fera_source_params::thesis_default(G1));
    sw::fera_cp cp(sw::fera_params::analysis(G10, 0.002));
    double q = 0;
    closed_loop(srcs, cp, 300, &q);
    for (int i = 0; i < 3; ++i) CHECK(srcs[i].rate_bps() == Approx(3e9).epsilon(1e-4));
    CHECK(srcs[3].rate_bps() == 1e9);
    CHECK(cp.advertised_bps() == Approx(3e9).epsilon(1e-4));
}
