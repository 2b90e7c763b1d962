// BCN congestion point (plain C++): sampling, Fb = -(Q_off + w·Q_delta), message kinds,
// quantisation, validation.
#include <catch2/catch.hpp>
#include <stdexcept>

#include "fabricsim/core/units.h"
#include "fabricsim/switch/algo/bcn_cp.h"

using namespace fabricsim;
using namespace fabricsim::sw;

namespace {
constexpr std::uint64_t PKT = 1500;

/// 99 frames that are not samples, then the 100th with the queue at `q_pkts` packets.
bcn_feedback hundredth(bcn_cp& cp, std::uint64_t q_pkts, bool tagged) {
    for (int i = 0; i < 99; ++i) REQUIRE_FALSE(cp.on_arrival(q_pkts * PKT, tagged).sampled);
    return cp.on_arrival(q_pkts * PKT, tagged);
}
}  // namespace

TEST_CASE("bcn cp: one sample per 100 frames, Fb = -(Q_off + w Q_delta) in packets",
          "[switch][bcn]") {
    bcn_cp cp(bcn_cp_params::thesis_default());
    // q = 20: Q_off = 4, Q_delta = 20 - 0: Fb = -(4 + 2·20) = -44, negative.
    bcn_feedback f = hundredth(cp, 20, false);
    CHECK(f.sampled);
    CHECK(f.message == bcn_message::NEGATIVE);
    CHECK(f.q_off == 4.0);
    CHECK(f.q_delta == 20.0);
    CHECK(f.fb == -44.0);
    // q = 18: Q_off = 2, Q_delta = -2: Fb = +2; the frame has no tag of this CP: no message.
    f = hundredth(cp, 18, false);
    CHECK(f.fb == 2.0);
    CHECK(f.message == bcn_message::NONE);
    // q = 10 with the tag: Q_off = -6, Q_delta = -8: Fb = 22, positive.
    f = hundredth(cp, 10, true);
    CHECK(f.fb == 22.0);
    CHECK(f.message == bcn_message::POSITIVE);
    // q = 16 -> Q_off = 6 ... q_old 10: Fb = -(0 + 12) = -12; then q = 16 again: Fb = 0.
    CHECK(hundredth(cp, 16, true).fb == -12.0);
    f = hundredth(cp, 16, true);
    CHECK(f.fb == 0.0);
    CHECK(f.message == bcn_message::NONE);
    CHECK(cp.stats().frames == 500);
    CHECK(cp.stats().samples == 5);
    CHECK(cp.stats().negative == 2);
    CHECK(cp.stats().positive == 1);
    CHECK(cp.stats().positive_untagged == 1);
    CHECK(cp.stats().zero == 1);
    // Erratum 1: one sample per 100 frames of 1500 B at 10 Gb/s is T' = 120 us, not 1.2 ms.
    CHECK(100 * serialization_ps(1500, 10'000'000'000ull) == 120 * PS_PER_US);
}

TEST_CASE("bcn cp: STOP above Q_sc, quantisation to (2w+1)Q_eq", "[switch][bcn]") {
    bcn_cp_params p = bcn_cp_params::thesis_default();
    p.q_sc_bytes = 80 * PKT;
    p.sample_every = 1;
    bcn_cp cp(p);
    bcn_feedback f = cp.on_arrival(81 * PKT, false);
    CHECK(f.message == bcn_message::STOP);
    CHECK(f.fb == 0.0);
    CHECK(cp.on_arrival(80 * PKT, false).message == bcn_message::NEGATIVE);  // 80 is not above
    CHECK(cp.stats().stop == 1);

    p = bcn_cp_params::thesis_default();
    p.sample_every = 1;
    p.quantise_bits = 6;
    bcn_cp qcp(p);
    CHECK(qcp.fb_max() == 80.0);  // (2·2 + 1)·16 packets
    // Fb = -44: 63 levels of 80/63: floor(44·63/80) = 34 levels.
    CHECK(qcp.on_arrival(20 * PKT, false).fb == Approx(-34 * 80.0 / 63).epsilon(1e-14));
    // q = 100 (q_old 20): Fb = -(84 + 160) = -244, clipped to -80.
    CHECK(qcp.on_arrival(100 * PKT, false).fb == Approx(-80.0).epsilon(1e-14));
    // |Fb| below one level (80/63 packets) quantises to 0: no message. q = 16 after 16: Fb = 0;
    // q = 16 after 16.5 packets: Fb = -(0 - 2·0.5) = 1 < 1.27: 0.
    qcp.on_arrival(16 * PKT, false);
    CHECK(qcp.on_arrival(16 * PKT, false).message == bcn_message::NONE);
    qcp.on_arrival(33 * PKT / 2, false);
    const bcn_feedback small = qcp.on_arrival(16 * PKT, false);
    CHECK(small.fb == 0.0);
    CHECK(small.message == bcn_message::NONE);
}

TEST_CASE("bcn cp: random sampling is about 1/n and repeatable per (seed, name)", "[switch][bcn]") {
    bcn_cp_params p = bcn_cp_params::thesis_default();
    p.sampling = bcn_sampling::RANDOM;
    bcn_cp a(p, 7, "sw0.port3.bcn");
    bcn_cp b(p, 7, "sw0.port3.bcn");
    bcn_cp c(p, 7, "sw0.port4.bcn");
    for (int i = 0; i < 100'000; ++i) {
        a.on_arrival(20 * PKT, false);
        b.on_arrival(20 * PKT, false);
        c.on_arrival(20 * PKT, false);
    }
    CHECK(a.stats().samples == b.stats().samples);
    CHECK(a.stats().samples != c.stats().samples);
    CHECK(static_cast<double>(a.stats().samples) == Approx(1000).margin(100));  // ±3 sigma
}

TEST_CASE("bcn cp validation names the field", "[switch][bcn]") {
    auto field_of = [](bcn_cp_params p) {
        auto e = p.validate();
        return e ? e->field : std::string();
    };
    const bcn_cp_params ok = bcn_cp_params::thesis_default();
    CHECK(field_of(ok).empty());
    bcn_cp_params p = ok;
    p.q_eq_bytes = 0;
    CHECK(field_of(p) == "q_eq_bytes");
    p = ok;
    p.q_sc_bytes = ok.q_eq_bytes;
    CHECK(field_of(p) == "q_sc_bytes");
    p = ok;
    p.w = -1;
    CHECK(field_of(p) == "w");
    p = ok;
    p.sample_every = 0;
    CHECK(field_of(p) == "sample_every");
    p = ok;
    p.quantise_bits = 17;
    CHECK(field_of(p) == "quantise_bits");
    p = ok;
    p.fb_unit_bytes = 0;
    CHECK_THROWS_WITH(bcn_cp(p), Catch::StartsWith("bcn_cp_params.fb_unit_bytes: "));
}
