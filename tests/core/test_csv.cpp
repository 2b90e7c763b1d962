#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

#include "fabricsim/core/csv.h"
#include "fabricsim/core/output_file.h"

using namespace fabricsim;

namespace {
std::string real(double v) {
    std::string s;
    csv::append_real(s, v);
    return s;
}
std::string us(ps_t t) {
    std::string s;
    csv::append_us(s, t);
    return s;
}
}  // namespace

TEST_CASE("CSV reals are the shortest text that reads back exactly", "[csv]") {
    for (const double v :
         {0.1, 1.0 / 3, 2297644800.0, 141.07343423044398, 1e-300, 6.02e23, -2.5, 1199999.999999})
        CHECK(std::strtod(real(v).c_str(), nullptr) == v);
    CHECK(real(0) == "0");
    CHECK(real(0.1) == "0.1");
    CHECK(real(1234567) == "1234567");  // fixed notation, not 1.234567e+06
    CHECK(real(1e-300) == "1e-300");
    CHECK(real(-2.5) == "-2.5");
}

TEST_CASE("CSV times are exact decimal microseconds of the integer ps", "[csv]") {
    CHECK(us(0) == "0");
    CHECK(us(3'000'000) == "3");
    CHECK(us(1'200'000'000'003) == "1200000.000003");  // 13 significant digits
    CHECK(us(1'500'000) == "1.5");
    CHECK(us(18'446'744'073'709'551'615ull) == "18446744073709.551615");
    std::string s;
    csv::append_uint(s, 18'446'744'073'709'551'615ull);
    CHECK(s == "18446744073709551615");
}

TEST_CASE("CSV fields are quoted per RFC 4180 only when needed", "[csv]") {
    CHECK(csv::field("sw0") == "sw0");
    CHECK(csv::field("") == "");
    CHECK(csv::field("a,b") == "\"a,b\"");
    CHECK(csv::field("say \"hi\"") == "\"say \"\"hi\"\"\"");
    CHECK(csv::field("two\nlines") == "\"two\nlines\"");
    CHECK(csv::field("cr\r") == "\"cr\r\"");
    CHECK(csv::field(" padded") == "\" padded\"");
}

TEST_CASE("a failed write is an error naming the file", "[csv]") {
    output_file f("/dev/full");  // every write fails with ENOSPC once flushed
    f.write(std::string(100000, 'x'));
    CHECK_THROWS_WITH(f.close(), "cannot write /dev/full: No space left on device");
    CHECK_THROWS_WITH(write_file("/dev/full", "{}\n"),
                      "cannot write /dev/full: No space left on device");
    CHECK_THROWS_WITH(output_file("/nonexistent/dir/x.csv"),
                      "cannot write /nonexistent/dir/x.csv: No such file or directory");
}
