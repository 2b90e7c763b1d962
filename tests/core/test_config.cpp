#include <catch2/catch.hpp>

#include <sstream>

#include "fabricsim/core/config.h"

using namespace fabricsim;

namespace {
config_schema schema() {
    config_schema s;
    s.add("duration", value_kind::TIME, "1ms", "run time").min = 1000;
    auto& b = s.add("switch.buffer", value_kind::BYTES, "4MiB", "shared buffer");
    b.min = 1;
    b.max = 1ull << 30;
    auto& m = s.add("switch.mode", value_kind::CHOICE, "store_and_forward", "mode");
    m.choices = {"store_and_forward", "cut_through"};
    s.add("flows", value_kind::MAP_LIST, "", "flows");
    s.add("flows[].src", value_kind::STRING, "", "source");
    s.add("flows[].rate", value_kind::BIT_RATE, "1Gbps", "rate");
    return s;
}

std::string error_of(const std::string& yaml) {
    try {
        schema().validate(load_yaml_string(yaml));
    } catch (const config_error& e) {
        return e.what();
    }
    return "";
}
}  // namespace

TEST_CASE("valid trees pass and typed reads apply defaults", "[config]") {
    const auto root = load_yaml_string("switch: {buffer: 2MiB}\nflows: [{src: h0, rate: 5Gbps}, {src: h1}]");
    const auto s = schema();
    REQUIRE_NOTHROW(s.validate(root));
    config_node top(s, root, "", "");
    CHECK(top.child("switch").bytes("buffer") == 2u << 20);
    CHECK(top.child("switch").str("mode") == "store_and_forward");
    CHECK(top.time("duration") == 1'000'000'000u);
    const auto flows = top.list("flows");
    REQUIRE(flows.size() == 2);
    CHECK(flows[0].rate("rate") == 5'000'000'000ull);
    CHECK(flows[1].rate("rate") == 1'000'000'000ull);
    CHECK(flows[1].path("rate") == "flows[1].rate");
}

TEST_CASE("errors name the full key path and the reason", "[config]") {
    CHECK(error_of("switch: {bufer: 1MiB}").find("switch.bufer: unknown key") == 0);
    CHECK(error_of("switch: {buffer: 2}").find("switch.buffer: '2' needs a byte unit") == 0);
    CHECK(error_of("switch: {buffer: 2GiB}").find("switch.buffer: '2GiB' is above the maximum 1024MiB") == 0);
    CHECK(error_of("switch: {mode: magic}").find("switch.mode: 'magic' is not one of") == 0);
    CHECK(error_of("flows: [{src: a}, {src: b, rate: fast}]").find("flows[1].rate:") == 0);
    CHECK(error_of("flows: [{rate: 1Gbps}]") == "flows[0].src: required key is missing");
    CHECK(error_of("duration: 1ps") == "duration: '1ps' is below the minimum 1ns");
    CHECK(error_of("switch: 5") == "switch: expected a mapping of settings");
}

TEST_CASE("key=value overrides walk and create key paths", "[config]") {
    auto root = load_yaml_string("flows: [{src: h0}]");
    apply_override(root, "switch.buffer=8MiB");
    apply_override(root, "flows[0].rate=3Gbps");
    CHECK(root["switch"]["buffer"].Scalar() == "8MiB");
    CHECK(root["flows"][0]["rate"].Scalar() == "3Gbps");
    CHECK_THROWS_AS(apply_override(root, "flows[3].rate=1Gbps"), config_error);
    CHECK_THROWS_AS(apply_override(root, "novalue"), config_error);
}

TEST_CASE("explain prints defaults, ranges and choices", "[config]") {
    std::ostringstream os;
    CHECK(schema().explain(os, "switch"));
    const auto text = os.str();
    CHECK(text.find("switch.buffer") != std::string::npos);
    CHECK(text.find("default: 4MiB") != std::string::npos);
    CHECK(text.find("choices: store_and_forward cut_through") != std::string::npos);
    CHECK(text.find("duration") == std::string::npos);
    std::ostringstream none;
    CHECK_FALSE(schema().explain(none, "nope"));
}
