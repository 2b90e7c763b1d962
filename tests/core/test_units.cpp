#include <catch2/catch.hpp>

#include "fabricsim/core/units.h"

using namespace fabricsim;

TEST_CASE("unit strings parse to base units", "[units]") {
    std::string why;
    CHECK(*parse_bit_rate("10Gbps", why) == 10'000'000'000ull);
    CHECK(*parse_bit_rate("2.5Gbps", why) == 2'500'000'000ull);
    CHECK(*parse_bit_rate("100 Mbps", why) == 100'000'000ull);
    CHECK(*parse_bytes("4MiB", why) == 4u << 20);
    CHECK(*parse_bytes("96KB", why) == 96000u);
    CHECK(*parse_time("1.5us", why) == 1'500'000u);
    CHECK(*parse_time("800ns", why) == 800'000u);
    CHECK(*parse_time("2ms", why) == 2'000'000'000u);
    CHECK(*parse_frequency_hz("1.525GHz", why) == Approx(1.525e9));
    const auto s = parse_size("65pkt", why);
    REQUIRE(s);
    CHECK(s->packets);
    CHECK(s->value == 65);
}

TEST_CASE("bad unit strings are rejected with a reason", "[units]") {
    std::string why;
    CHECK_FALSE(parse_bit_rate("10", why));
    CHECK(why.find("bit-rate unit") != std::string::npos);
    CHECK_FALSE(parse_bit_rate("10GB", why));
    CHECK_FALSE(parse_time("5 parsecs", why));
    CHECK_FALSE(parse_bytes("-3B", why));
    CHECK(why.find("negative") != std::string::npos);
    CHECK_FALSE(parse_bytes("1.5B", why));
    CHECK(why.find("whole number") != std::string::npos);
    CHECK_FALSE(parse_time("fast", why));
}

TEST_CASE("serialization time is exact and rounds up", "[units]") {
    CHECK(serialization_ps(1538, 10'000'000'000ull) == 1'230'400u);  // 1500 B IP packet on the wire
    CHECK(serialization_ps(84, 100'000'000'000ull) == 6'720u);       // 64 B frame at 100G
    CHECK(serialization_ps(1538, 400'000'000'000ull) == 30'760u);
    CHECK(serialization_ps(1, 3'000'000'000ull) == 2'667u);  // 2666.67 ps rounded up
    CHECK(ceil_to_period(2'520'800, 1000) == 2'521'000u);
    CHECK(ceil_to_period(2'521'000, 1000) == 2'521'000u);
}

TEST_CASE("period_rounder matches ceil_to_period", "[units]") {
    // The multiply-based rounding must be exact for any time and period, including near 2^64.
    std::uint64_t x = 0x9E3779B97F4A7C15ull;  // splitmix-style sequence, deterministic
    for (const ps_t period : {ps_t(0), ps_t(1), ps_t(3), ps_t(800), ps_t(1000), ps_t(1024),
                              ps_t(3333), ps_t(999'999'937), (ps_t(1) << 40) + 7}) {
        const period_rounder r(period);
        for (ps_t t = 0; t < 3000; ++t) REQUIRE(r(t) == ceil_to_period(t, period));
        for (int i = 0; i < 20000; ++i) {
            x += 0x9E3779B97F4A7C15ull;
            const ps_t t = (x ^ (x >> 31)) >> (i % 60 + 4);
            REQUIRE(r(t) == ceil_to_period(t, period));
        }
        const ps_t top = ~ps_t(0) - period;
        CHECK(r(top) == ceil_to_period(top, period));
    }
}

TEST_CASE("numbers are decimal: scientific notation and '+' pass but hex, inf and nan do not",
          "[units]") {
    std::string why;
    CHECK(*parse_time("1e3us", why) == 1'000'000'000u);
    CHECK(*parse_time("+1.5us", why) == 1'500'000u);
    CHECK(*parse_time(".5us", why) == 500'000u);
    CHECK_FALSE(parse_bit_rate("0x10Gbps", why));
    CHECK(why == "'0x10Gbps' is hexadecimal; write a decimal number");
    CHECK_FALSE(parse_time("infs", why));
    CHECK(why == "'infs' does not start with a decimal number");
    CHECK_FALSE(parse_time("nanms", why));
    CHECK_FALSE(parse_time("1,5ms", why));  // the ',' is not a decimal point in any locale
    CHECK(why == "'1,5ms' needs a time unit (ps, ns, us, ms, s)");
    CHECK_FALSE(parse_time("1e999s", why));
    CHECK(why == "'1e999s' is out of range");
}

TEST_CASE("integers and reals are strict decimal", "[units]") {
    std::string why;
    CHECK(*parse_integer("42", why) == 42);
    CHECK(*parse_integer("-7", why) == -7);
    CHECK(*parse_integer("+7", why) == 7);
    CHECK(*parse_integer("0", why) == 0);
    CHECK(*parse_integer("9223372036854775807", why) == INT64_MAX);
    CHECK_FALSE(parse_integer("0x10", why));
    CHECK(why == "'0x10' is not a decimal integer");
    CHECK_FALSE(parse_integer("010", why));  // yaml-cpp reads 8 (octal), YAML 1.2 10
    CHECK(why == "'010' has a leading zero (octal is not accepted)");
    CHECK_FALSE(parse_integer("9223372036854775808", why));
    CHECK(why == "'9223372036854775808' is out of range");
    for (const char* bad : {"", "+", "-", "1.0", "1e3", " 1", "+-1", "1_000"})
        CHECK_FALSE(parse_integer(bad, why));
    CHECK(*parse_real("0.0625", why) == 0.0625);
    CHECK(*parse_real("1e-6", why) == 1e-6);
    CHECK(*parse_real("8", why) == 8.0);
    CHECK(*parse_real("-.5", why) == -0.5);
    for (const char* bad : {"", "1,5", "0x1p3", "inf", "nan", ".inf", "1.5x", "--1", "+-1", "."})
        CHECK_FALSE(parse_real(bad, why));
}
