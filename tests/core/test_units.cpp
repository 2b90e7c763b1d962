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
    CHECK(serialization_ps(1, 3'000'000'000ull) == 2'667u);           // 2666.67 ps rounded up
    CHECK(ceil_to_period(2'520'800, 1000) == 2'521'000u);
    CHECK(ceil_to_period(2'521'000, 1000) == 2'521'000u);
}
