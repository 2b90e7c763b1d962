#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "fabricsim/platforms/json_table.h"

using namespace fabricsim::platforms;
using nlohmann::json;

namespace {
std::string read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}
}  // namespace

TEST_CASE("json_table flattens rows under one header, union of columns in first-seen order",
          "[platforms]") {
    json_table t({"switch", "port"});
    t.add({"s0", 0},
          {{"port", 0},
           {"tx", 5},
           {"drops", {{"a", 1}, {"b", 2}}},
           {"xoff", {0, 3}},
           {"queues", {{{"q", 0}}}}},
          {"port", "queues"});
    // A second profile: one column more, one fewer, a real and a text cell.
    t.add({"s1", 7}, {{"tx", 9}, {"drops", {{"a", 4}, {"b", 0}}}, {"util", 0.5}, {"name", "x,y"}});
    REQUIRE(t.rows() == 2);
    const std::string path =
        (std::filesystem::temp_directory_path() / "fabricsim_json_table.csv").string();
    t.write(path);
    CHECK(read(path) ==
          "switch,port,drops.a,drops.b,drops.total,tx,xoff.0,xoff.1,name,util\n"
          "s0,0,1,2,3,5,0,3,,\n"
          "s1,7,4,0,4,9,,,\"x,y\",0.5\n");
    std::filesystem::remove(path);

    const json a = t.aggregate();
    CHECK(a["count"] == 2);
    CHECK(a["sum"]["tx"] == 14);
    CHECK(a["sum"]["drops.total"] == 7);
    CHECK(a["max"]["drops.a"] == 4);
    CHECK(a["sum"]["util"] == 0.5);
    CHECK_FALSE(a["sum"].contains("name"));  // text is not aggregated
}

TEST_CASE("json_table sums integers exactly and ranks the top rows", "[platforms]") {
    json_table t({"link"});
    const std::uint64_t big = (1ull << 62) + 1;  // not representable as a double
    t.add({"l0"}, {{"bytes", big}, {"frames", 0}});
    t.add({"l1"}, {{"bytes", big}, {"frames", 3}});
    t.add({"l2"}, {{"bytes", 1}, {"frames", 3}});
    t.add({"l3"}, {{"bytes", 2}, {"frames", 5}});
    const json a = t.aggregate();
    CHECK(a["sum"]["bytes"].get<std::uint64_t>() == 2 * big + 3);
    CHECK(a["max"]["bytes"].get<std::uint64_t>() == big);

    // Largest first, ties in row order, zeros left out, at most n, exact values.
    const json top = t.top("frames", 10, {"bytes"});
    REQUIRE(top.size() == 3);
    CHECK(top[0] == json{{"link", "l3"}, {"bytes", 2}, {"frames", 5}});
    CHECK(top[1]["link"] == "l1");
    CHECK(top[1]["bytes"].get<std::uint64_t>() == big);
    CHECK(top[2]["link"] == "l2");
    CHECK(t.top("frames", 1).size() == 1);
    CHECK(t.top("bytes", 1)[0]["bytes"].get<std::uint64_t>() == big);
    CHECK(t.top("no_such_column", 5).empty());
}
