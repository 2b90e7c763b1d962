#include <catch2/catch.hpp>

#include <sstream>

#include <nlohmann/json.hpp>

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
    const auto root =
        load_yaml_string("switch: {buffer: 2MiB}\nflows: [{src: h0, rate: 5Gbps}, {src: h1}]");
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
    CHECK(error_of("switch: {buffer: 2GiB}")
              .find("switch.buffer: '2GiB' is above the maximum 1024MiB") == 0);
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

namespace {
std::string error_of_load(const std::string& yaml) {
    try {
        load_yaml_string(yaml);
    } catch (const config_error& e) {
        return e.what();
    }
    return "";
}
}  // namespace

TEST_CASE("a repeated key is refused naming its path and both places", "[config]") {
    CHECK(error_of_load(
              "duration: 1ms\nswitch:\n  buffer: 1MiB\n  mode: cut_through\n  buffer: 2MiB\n") ==
          "switch.buffer: duplicate key (lines 3 and 5)");
    CHECK(error_of_load("flows: [{src: a}, {src: b, rate: 1Gbps, src: c}]") ==
          "flows[1].src: duplicate key (line 1, columns 20 and 41)");
    CHECK(error_of_load("a: 1\nb: 2\n") == "");
    auto root = load_yaml_string("duration: 1ms");
    try {
        apply_override(root, "switch={buffer: 1MiB, buffer: 2MiB}");
        FAIL("no error");
    } catch (const config_error& e) {
        CHECK(std::string(e.what()) ==
              "switch.buffer: duplicate key (line 1, columns 2 and 16 of the value set)");
    }
}

TEST_CASE("int and real parameters are strict decimal", "[config]") {
    config_schema s;
    s.add("n", value_kind::INT, "1", "count");
    s.add("x", value_kind::REAL, "0.5", "fraction");
    auto err = [&](const std::string& yaml) {
        try {
            s.validate(load_yaml_string(yaml));
        } catch (const config_error& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    CHECK(err("n: 0x10") == "n: '0x10' is not a decimal integer");
    CHECK(err("n: 010") == "n: '010' has a leading zero (octal is not accepted)");
    CHECK(err("x: 1,5") == "x: '1,5' is not a decimal number");
    CHECK(err("x: .inf") == "x: '.inf' does not start with a decimal number");
    CHECK(err("n: 16\nx: 1e-3") == "");
    const auto root = load_yaml_string("n: 16\nx: 1e-3");
    config_node top(s, root, "", "");
    CHECK(top.integer("n") == 16);
    CHECK(top.real("x") == 1e-3);
}

TEST_CASE("the echo is typed by the schema, in JSON and in YAML 1.1-safe text", "[config]") {
    config_schema s;
    s.add("name", value_kind::STRING, "", "name").optional = true;
    s.add("flag", value_kind::BOOL, "false", "flag");
    s.add("n", value_kind::INT, "1", "count");
    s.add("x", value_kind::REAL, "8", "alpha");
    s.add("g", value_kind::REAL, "0.000001", "gain");
    auto& mode = s.add("ecn.mode", value_kind::CHOICE, "off", "mode");
    mode.choices = {"off", "on"};
    s.add("pcap", value_kind::STRING_LIST, "", "ports").optional = true;
    s.add("flows", value_kind::MAP_LIST, "", "flows");
    s.add("flows[].src", value_kind::STRING, "", "source");
    s.add("flows[].frames", value_kind::INT, "", "frames").optional = true;
    s.add("flows[].rate", value_kind::BIT_RATE, "1Gbps", "rate");
    const auto root = load_yaml_string(
        "name: '123'\nflag: yes\nflows: [{src: 'no', frames: 5}]\npcap: [y, '0x1']");
    s.validate(root);
    const auto echo = with_defaults(s, root);
    const nlohmann::json j = echo_json(s, echo);
    const auto expected =
        nlohmann::json::parse(R"({"name": "123", "flag": true, "n": 1, "x": 8.0, "g": 1e-06,
        "ecn": {"mode": "off"}, "pcap": ["y", "0x1"], "flows": [{"src": "no", "frames": 5, "rate": "1Gbps"}]})");
    CHECK(j == expected);
    CHECK(j["x"].is_number_float());
    CHECK(j["flows"][0]["frames"].is_number_integer());
    const std::string text = echo_yaml(s, echo);
    INFO(text);
    CHECK(text.find("name: \"123\"") != std::string::npos);
    CHECK(text.find("flag: true") != std::string::npos);
    CHECK(text.find("\nx: 8.0") != std::string::npos);
    CHECK(text.find("\ng: 1.0e-06\n") != std::string::npos);
    CHECK(text.find("mode: \"off\"") != std::string::npos);
    CHECK(text.find("src: \"no\"") != std::string::npos);
    CHECK(echo_json(s, load_yaml_string(text)) == expected);
    CHECK(text.find("name") < text.find("flows"));  // the tree's key order, not sorted
}
