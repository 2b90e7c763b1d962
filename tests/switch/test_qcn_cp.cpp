// QCN congestion point (plain C++): sampling intervals, Fb and qFb, CNM fields, validation.
#include <catch2/catch.hpp>
#include <cstdint>
#include <stdexcept>

#include "fabricsim/switch/algo/qcn_cp.h"

using namespace fabricsim;
using namespace fabricsim::sw;

namespace {
constexpr std::uint64_t HALF = qcn_cp::HALF_DRAW;
constexpr std::uint64_t MAX_DRAW = ~std::uint64_t(0);

qcn_cp_params exact_standard() {
    qcn_cp_params p = qcn_cp_params::standard();
    p.jitter = 0.0;
    return p;
}

/// Feeds 1500-B frames at a fixed queue length until one is sampled; returns how many.
unsigned frames_to_sample(qcn_cp& cp, std::uint64_t queue_bytes) {
    const std::uint64_t before = cp.stats().samples;
    for (unsigned n = 1;; ++n) {
        cp.on_enqueue(queue_bytes, 1500, HALF);
        if (cp.stats().samples != before) return n;
    }
}
}  // namespace

TEST_CASE("qcn cp: the standard preset is the MIB's, with the LXQCN table scaled to the base",
          "[switch][qcn]") {
    const qcn_cp_params p = qcn_cp_params::standard();
    CHECK(p.q_eq_bytes == 26'000);
    CHECK(p.w == 2.0);
    CHECK(qcn_cp_params::from_mib_weight(1) == 2.0);
    CHECK(qcn_cp_params::from_mib_weight(-10) == 1.0 / 1024);
    CHECK(p.sample_base_bytes == 150'000);
    CHECK(p.jitter == 0.15);
    CHECK(p.sample_probability == 0.0);
    CHECK(p.quantum_bytes == 0);
    qcn_cp cp(p);
    const std::uint64_t table[8] = {150000, 75000, 50000, 37500, 30000, 25000, 21500, 18500};
    for (unsigned k = 0; k < 8; ++k) CHECK(cp.table_bytes(k) == table[k]);
    CHECK(cp.bytes_to_sample() == 150'000);  // HALF_DRAW: no jitter on the first interval

    qcn_cp_params big = exact_standard();
    big.sample_base_bytes = 300'000;
    qcn_cp cp2(big);
    const std::uint64_t table2[8] = {300000, 150000, 100000, 75000, 60000, 50000, 43000, 37000};
    for (unsigned k = 0; k < 8; ++k) CHECK(cp2.table_bytes(k) == table2[k]);
}

TEST_CASE("qcn cp: sampling intervals in bytes follow the table by qFb >> 3", "[switch][qcn]") {
    qcn_cp cp(exact_standard());
    // Every 150000 B (the 100th 1500-B frame) while qFb < 8. Q 10000 after Qold 0: Qoff -16000,
    // Qd 10000, Fb = -(-16000 + 20000) = -4000, qFb = floor(63 x 4000 / 130000) = 1: a CNM.
    CHECK(frames_to_sample(cp, 10'000) == 100);
    CHECK(cp.q_old() == 10'000);
    CHECK(cp.stats().cnms == 1);
    // Q 10000 again: Fb = +16000, no CNM.
    CHECK(frames_to_sample(cp, 10'000) == 100);
    CHECK(cp.stats().uncongested == 1);
    // Q 30000 after Qold 10000: Qoff 4000, Qd 20000, Fb = -(4000 + 40000) = -44000,
    // qFb = floor(63 x 44000 / 130000) = 21 -> entry 2 (50000 B, 34 frames: 33 x 1500 < 50000).
    CHECK(frames_to_sample(cp, 30'000) == 100);
    CHECK(cp.stats().cnms == 2);
    CHECK(cp.stats().qfb[21] == 1);
    CHECK(cp.bytes_to_sample() == 50'000);
    CHECK(frames_to_sample(cp, 30'000) == 34);
    // Q 30000 again: Qoff 4000, Qd 0, Fb = -4000, qFb = floor(252000 / 130000) = 1 -> entry 0.
    CHECK(cp.stats().qfb[1] == 2);
    CHECK(cp.bytes_to_sample() == 150'000);
    // A frame longer than what is left is sampled and the excess is dropped by the reload.
    qcn_cp cp2(exact_standard());
    cp2.on_enqueue(0, 149'000, HALF);
    CHECK(cp2.bytes_to_sample() == 1'000);
    cp2.on_enqueue(0, 9'000, HALF);
    CHECK(cp2.stats().samples == 1);
    CHECK(cp2.bytes_to_sample() == 150'000);
    // Exactly reaching 0 samples too: 150 frames of 1000 B.
    unsigned n = 0;
    while (cp2.stats().samples == 1) {
        cp2.on_enqueue(0, 1000, HALF);
        ++n;
    }
    CHECK(n == 150);
}

TEST_CASE("qcn cp: Fb, qFb and the CNM fields with the standard quantisation", "[switch][qcn]") {
    qcn_cp_params p = exact_standard();
    p.sample_base_bytes = 10'000;  // table 10000, 5000, 3333, 2500, 2000, 1666, 1433, 1233
    qcn_cp cp(p);
    // One frame of >= the interval is always sampled: the queue history is Q at each sample.
    // Q 30000, Qold 0: Qoff 4000, Qd 30000, Fb = -(4000 + 60000) = -64000;
    // qFb = floor(63 x 64000 / 130000) = floor(31.015) = 31 -> entry 3 (2500 B).
    auto fb = cp.on_enqueue(30'000, 10'000, HALF);
    REQUIRE(fb);
    CHECK(fb->fb == -64'000.0);
    CHECK(fb->qfb == 31);
    CHECK(fb->qoff == 4'000);
    CHECK(fb->qdelta == 30'000);
    CHECK(fb->cnm_qoff == 62);     // 4000 / 64 = 62.5
    CHECK(fb->cnm_qdelta == 468);  // 30000 / 64 = 468.75
    CHECK(cp.bytes_to_sample() == 2'500);
    // Q 31000: Qoff 5000, Qd 1000, Fb = -7000, qFb = floor(441000 / 130000) = 3 -> entry 0.
    fb = cp.on_enqueue(31'000, 10'000, HALF);
    REQUIRE(fb);
    CHECK(fb->fb == -7'000.0);
    CHECK(fb->qfb == 3);
    CHECK(cp.bytes_to_sample() == 10'000);
    // Q 20000: Qoff -6000, Qd -11000, Fb = +28000: no CNM, Qold still updated.
    CHECK_FALSE(cp.on_enqueue(20'000, 10'000, HALF));
    CHECK(cp.q_old() == 20'000);
    CHECK(cp.stats().uncongested == 1);
    // Q 26500 after 20000: Fb = -(500 + 13000), qFb = floor(63 x 13500 / 130000) = 6.
    fb = cp.on_enqueue(26'500, 10'000, HALF);
    REQUIRE(fb);
    CHECK(fb->qfb == 6);
    // Q 26500 after 26500: Fb = -500, qFb = floor(31500 / 130000) = 0: no CNM.
    CHECK_FALSE(cp.on_enqueue(26'500, 10'000, HALF));
    CHECK(cp.stats().below_quantum == 1);
    // Q 100000 after 26500: Fb = -(74000 + 147000) = -221000, clipped to Fbmax 130000: qFb 63,
    // entry 7 (1233 B = floor(10000 x 37 / 300)).
    fb = cp.on_enqueue(100'000, 10'000, HALF);
    REQUIRE(fb);
    CHECK(fb->fb == -221'000.0);
    CHECK(fb->qfb == 63);
    CHECK(cp.bytes_to_sample() == 1'233);
    // Saturation of the 16-bit fields: Qoff 3 MB = 46875 units -> 32767; Qd negative truncates.
    fb = cp.on_enqueue(3'026'000, 10'000, HALF);
    REQUIRE(fb);
    CHECK(fb->cnm_qoff == 32767);
    // Q 2600000 after 3026000: Qd -426000 (-6656.25 units, toward zero), Fb = -1722000.
    fb = cp.on_enqueue(2'600'000, 10'000, HALF);
    REQUIRE(fb);
    CHECK(fb->qdelta == -426'000);
    CHECK(fb->cnm_qdelta == -6656);
    CHECK(cp.stats().samples == 8);
    CHECK(cp.stats().cnms == 6);
    CHECK(cp.stats().qfb[63] == 3);
    CHECK(cp.quantize(0.0) == 0);
    CHECK(cp.quantize(1.0) == 0);
    CHECK(cp.quantize(-130'000.0) == 63);
    CHECK(cp.quantize(-2'063.0) == 0);  // 63 x 2063 = 129969 < 130000
    CHECK(cp.quantize(-2'064.0) == 1);
}

TEST_CASE("qcn cp: thesis mode samples with p_s and counts Fb in packets", "[switch][qcn]") {
    const qcn_cp_params p = qcn_cp_params::thesis();
    CHECK(p.q_eq_bytes == 33'000);
    CHECK(p.sample_probability == 0.01);
    CHECK(p.quantum_bytes == 1500);
    qcn_cp cp(p);
    // u = draw / 2^64 < 0.01 samples: draw 0 does, 1/2 does not.
    CHECK_FALSE(cp.on_enqueue(90'000, 1500, HALF));
    CHECK(cp.stats().samples == 0);
    // Q 36000 (24 pkt), Qold 0: Fb = -(3000 + 72000) = -75000 B = -50 pkt: qFb 50.
    auto fb = cp.on_enqueue(36'000, 1500, 0);
    REQUIRE(fb);
    CHECK(fb->qfb == 50);
    // Q 37500: Qoff 4500, Qd 1500: Fb = -7500 B = 5 pkt.
    fb = cp.on_enqueue(37'500, 1500, 0);
    REQUIRE(fb);
    CHECK(fb->qfb == 5);
    // Q 37000: Qoff 4000, Qd -500: Fb = -3000 B = 2 pkt.
    fb = cp.on_enqueue(37'000, 1500, 0);
    REQUIRE(fb);
    CHECK(fb->qfb == 2);
    CHECK(cp.quantize(-2'999.0) == 1);
    CHECK(cp.quantize(-1'499.0) == 0);
    CHECK(cp.quantize(-96'000.0) == 63);  // 64 pkt saturates at 63
    // The probability boundary: u = 0.01 exactly is not sampled, just below is.
    const auto at = static_cast<std::uint64_t>(0.01 * 0x1.0p53) << 11;  // u <= 0.01
    qcn_cp cp2(p);
    cp2.on_enqueue(0, 1500, at + (std::uint64_t(1) << 11));
    CHECK(cp2.stats().samples == 0);
    cp2.on_enqueue(0, 1500, at - (std::uint64_t(1) << 11));
    CHECK(cp2.stats().samples == 1);
}

TEST_CASE("qcn cp: jittered intervals stay within [1 - j, 1 + j] of the table entry",
          "[switch][qcn]") {
    qcn_cp_params p = qcn_cp_params::standard();
    p.jitter = 0.25;  // Broadcom Petra
    CHECK(qcn_cp(p, 0).bytes_to_sample() == 112'500);
    CHECK(qcn_cp(p, HALF).bytes_to_sample() == 150'000);
    CHECK(qcn_cp(p, MAX_DRAW).bytes_to_sample() == 187'500);
    qcn_cp cp(p, 0);
    // A congested sample with draw 0 reloads entry 7 x 0.75 = 13875 B.
    const auto fb = cp.on_enqueue(200'000, 112'500, 0);
    REQUIRE(fb);
    CHECK(fb->qfb == 63);
    CHECK(cp.bytes_to_sample() == 13'875);
    std::uint64_t draw = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 1000; ++i) {
        draw = draw * 6364136223846793005ull + 1442695040888963407ull;
        const qcn_cp c(p, draw);
        CHECK(c.bytes_to_sample() >= 112'500);
        CHECK(c.bytes_to_sample() <= 187'500);
    }
}

TEST_CASE("qcn cp: validate names the offending field", "[switch][qcn]") {
    auto field = [](const qcn_cp_params& p) {
        const auto e = p.validate();
        return e ? e->field : std::string();
    };
    CHECK(field(qcn_cp_params::standard()).empty());
    CHECK(field(qcn_cp_params::thesis()).empty());
    qcn_cp_params p = qcn_cp_params::standard();
    p.q_eq_bytes = 0;
    CHECK(field(p) == "q_eq_bytes");
    CHECK_THROWS_WITH(qcn_cp(p), Catch::Contains("qcn_cp_params.q_eq_bytes"));
    p = qcn_cp_params::standard();
    p.w = 0.0;
    CHECK(field(p) == "w");
    p.w = 2048.0;
    CHECK(field(p) == "w");
    p = qcn_cp_params::standard();
    p.sample_base_bytes = 5'000;
    CHECK(field(p) == "sample_base_bytes");
    p = qcn_cp_params::standard();
    p.jitter = 1.0;
    CHECK(field(p) == "jitter");
    p = qcn_cp_params::standard();
    p.sample_probability = 1.5;
    CHECK(field(p) == "sample_probability");
}
