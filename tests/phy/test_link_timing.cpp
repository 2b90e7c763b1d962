#include <catch2/catch.hpp>

#include "fabricsim/core/config.h"
#include "fabricsim/phy/link_timing.h"

using namespace fabricsim;
using namespace fabricsim::phy;

namespace {
frame ip_frame(std::uint32_t ip_bytes) {
    frame f;
    f.set_ipv4(frame_kind::IPV4_UDP, ip_bytes - 28);
    return f;
}
}  // namespace

TEST_CASE("a 1500 B IP packet occupies a 10G wire for 1.2304 us", "[phy]") {
    link_config c;
    c.rate_bps = 10'000'000'000ull;
    c.propagation = 1 * PS_PER_US;
    link_timing t(c, 1, "l");
    frame f = ip_frame(1500);
    const auto r = t.transmit(f, 5000);
    CHECK(r.wire_free - 5000 == 1'230'400u);
    CHECK(r.last_bit - 5000 == 1'220'800u + 1'000'000u);  // preamble + frame, then propagation
    CHECK(r.deliver == r.last_bit);
    CHECK_FALSE(r.lost);
    // The helpers the analytic idle-path model uses give the same times.
    CHECK(t.wire_time(f) == 1'230'400u);
    CHECK(t.last_bit_delay(f) == 1'220'800u + 1'000'000u);
}

TEST_CASE("minimum frames, PHY latency and cut-through delivery", "[phy]") {
    link_config c;
    c.rate_bps = 100'000'000'000ull;
    c.propagation = 10 * 5000;  // 10 m of cable
    c.fec = fec_mode::RS_528_514;
    c.encoding_latency = default_encoding_latency(c.rate_bps);
    c.fec_latency = default_fec_latency(c.fec, c.rate_bps);
    link_timing t(c, 1, "l");
    t.deliver_after(64);
    frame small = ip_frame(28);
    auto r = t.transmit(small, 0);
    CHECK(r.wire_free == 6'720u);  // 84 B at 100G
    const ps_t latency = 50'000 + 40'000 + 100'000;
    CHECK(r.last_bit == 72 * 80 + latency);
    frame big = ip_frame(1500);
    r = t.transmit(big, 0);
    CHECK(r.deliver == (8 + 64) * 80 + latency);  // header only
    CHECK(r.last_bit == (8 + 1518) * 80 + latency);
}

TEST_CASE("FEC defaults follow the rate", "[phy]") {
    CHECK(default_fec(10'000'000'000ull) == fec_mode::NONE);
    CHECK(default_fec(40'000'000'000ull) == fec_mode::NONE);
    CHECK(default_fec(25'000'000'000ull) == fec_mode::RS_528_514);
    CHECK(default_fec(100'000'000'000ull) == fec_mode::RS_528_514);
    CHECK(default_fec(400'000'000'000ull) == fec_mode::RS_544_514);
}

TEST_CASE("bit errors corrupt frames at the expected rate, reproducibly", "[phy]") {
    link_config c;
    c.ber = 1e-5;  // 1518 B frame: p = 1 - (1-1e-5)^12144 = 0.1143
    link_timing a(c, 42, "l"), b(c, 42, "l");
    int bad_a = 0, bad_b = 0;
    for (int i = 0; i < 20000; ++i) {
        frame fa = ip_frame(1500), fb = ip_frame(1500);
        a.transmit(fa, 0);
        b.transmit(fb, 0);
        bad_a += fa.fcs_error;
        bad_b += fb.fcs_error;
    }
    CHECK(bad_a == bad_b);
    CHECK(bad_a / 20000.0 == Approx(0.1143).epsilon(0.05));
}

TEST_CASE("frames overlapping a down interval are lost", "[phy]") {
    link_config c;
    c.down = {{2 * PS_PER_US, 3 * PS_PER_US}};
    link_timing t(c, 1, "l");
    frame f = ip_frame(1500);
    CHECK_FALSE(t.transmit(f, 0).lost);        // ends at 1.2304 us
    CHECK(t.transmit(f, 1 * PS_PER_US).lost);  // runs into the interval
    CHECK(t.transmit(f, 2'500'000).lost);
    CHECK_FALSE(t.transmit(f, 3 * PS_PER_US).lost);
    link_config bad = c;
    bad.down = {{3, 2}};
    CHECK_THROWS_AS(bad.validate("phy.faults"), config_error);
}

TEST_CASE("a rate step serialises the frames that start at or after it at the new rate", "[phy]") {
    link_config c;
    c.rate_bps = 10'000'000'000ull;
    // 10G -> 1G at 2 us on a->b only (a LAG member lost), back to 10G at 10 us.
    c.rate_steps = {{2 * PS_PER_US, 1'000'000'000ull, 1}, {10 * PS_PER_US, 10'000'000'000ull, 3}};
    link_timing ab(c, 1, "ab", 0), ba(c, 1, "ba", 1);
    frame f = ip_frame(1500);
    CHECK(ab.stepped_rate_at(0) == 10'000'000'000ull);
    // A frame starting before the step finishes at 10G even though it ends after it.
    CHECK(ab.transmit(f, 1 * PS_PER_US).wire_free == 1 * PS_PER_US + 1'230'400u);
    CHECK(ab.transmit(f, 2 * PS_PER_US).wire_free == 2 * PS_PER_US + 12'304'000u);
    CHECK(ab.stepped_rate_at(5 * PS_PER_US) == 1'000'000'000ull);
    CHECK(ab.transmit(f, 12 * PS_PER_US).wire_free == 12 * PS_PER_US + 1'230'400u);
    // b->a only has the second step (back to the rate it already runs at).
    CHECK(ba.transmit(f, 3 * PS_PER_US).wire_free == 3 * PS_PER_US + 1'230'400u);
    CHECK(ba.has_rate_steps());
    link_config plain;
    CHECK_FALSE(link_timing(plain, 1, "p").has_rate_steps());
    CHECK(link_timing(plain, 1, "p").stepped_rate_at(0) == 0);
    link_config bad = c;
    bad.rate_steps = {{5, 1, 3}, {4, 1, 3}};
    CHECK_THROWS_WITH(bad.validate("links[0]"), Catch::Contains("rate_steps[1].at"));
    bad.rate_steps = {{5, 0, 3}};
    CHECK_THROWS_WITH(bad.validate("links[0]"), Catch::Contains("rate_steps[0].rate"));
}
