#include <catch2/catch.hpp>

#include <array>
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

/// What validating `yaml` against `s` throws ("" if it passes).
std::string validation_error(const config_schema& s, const std::string& yaml) {
    try {
        s.validate(load_yaml_string(yaml));
    } catch (const config_error& e) {
        return e.what();
    }
    return "";
}

std::string error_of(const std::string& yaml) {
    return validation_error(schema(), yaml);
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
    auto err = [&](const std::string& yaml) { return validation_error(s, yaml); };
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

TEST_CASE("a number too large for its type names the range, not a parse failure", "[config]") {
    config_schema s;
    auto& n = s.add("n", value_kind::INT, "1", "count");
    n.min = 1;
    n.max = 1024;
    s.add("seed", value_kind::INT, "1", "seed").min = 0;
    s.add("t", value_kind::TIME, "1us", "latency").max = 1e9;
    s.add("d", value_kind::TIME, "1ms", "duration");
    auto err = [&](const std::string& yaml) { return validation_error(s, yaml); };
    CHECK(err("n: 99999999999999999999") ==
          "n: '99999999999999999999' is out of range: must be <= 1024");
    CHECK(err("n: -99999999999999999999") ==
          "n: '-99999999999999999999' is out of range: must be >= 1");
    CHECK(err("seed: 99999999999999999999") ==
          "seed: '99999999999999999999' is out of range: must be <= 9223372036854775807");
    CHECK(err("t: 1e30s") == "t: '1e30s' is out of range: must be <= 1ms");
    CHECK(err("d: 1e300s") ==
          "d: '1e300s' is too large: the model counts at most 2^64 - 1 of the base unit");
    // Other parse failures keep their reason; in-range values their minimum/maximum message.
    CHECK(err("n: abc") == "n: 'abc' is not a decimal integer");
    CHECK(err("n: 2000") == "n: '2000' is above the maximum 1024");
    CHECK(err("t: -1ns") == "t: '-1ns' is negative");
}

TEST_CASE("explain shows unit parameters ranging from 0, not -inf", "[config]") {
    config_schema s;
    s.add("t", value_kind::TIME, "1us", "latency").max = 1e9;
    s.add("n", value_kind::INT, "1", "count").max = 8;
    std::ostringstream os;
    REQUIRE(s.explain(os, ""));
    const auto text = os.str();
    CHECK(text.find("range: 0ns .. 1ms") != std::string::npos);
    CHECK(text.find("range: -inf .. 8") != std::string::npos);  // an int may be negative
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

// ---------------------------------------------------------------- per-index parameters

namespace {
/// A section with 4 queues, `used` of them configured, one value per queue.
struct queue_section {
    unsigned used = 4;
    std::array<double, 4> alpha{};
    std::array<std::uint64_t, 4> min_bytes{};
    std::array<bool, 4> strict{};
    std::array<int, 4> pool{-1, -1, -1, -1};  ///< -1: not given (optional key)
};

const param_table<queue_section>& queue_params() {
    static const param_table<queue_section> t = [] {
        param_table<queue_section> t;
        auto& u = t.add("queues", value_kind::INT, "4", "queues in use", &queue_section::used);
        u.min = 1;
        u.max = 4;
        auto count = [](const queue_section& s) { return s.used; };
        auto& a = t.indexed(
            "alpha", value_kind::REAL, "8", "alpha", 4, "queue", count,
            [](queue_section& s, unsigned q, const config_value& v) { s.alpha[q] = v.real(); });
        a.min = 0.5;
        t.indexed("min", value_kind::BYTES, "0B", "reserve", 4, "queue", count,
                  [](queue_section& s, unsigned q, const config_value& v) {
                      s.min_bytes[q] = v.bytes();
                      if (s.min_bytes[q] > 1000000) v.fail("is more than 1MB");  // a load check
                  });
        t.indexed_choice<bool>("kind", "dwrr", "scheduling", 4, "queue", count,
                               {{"dwrr", false}, {"sp", true}},
                               [](queue_section& s, unsigned q, bool sp) { s.strict[q] = sp; });
        t.indexed("pool", value_kind::INT, "", "pool", 4, "queue", count,
                  [](queue_section& s, unsigned q, const config_value& v) {
                      if (v.present()) s.pool[q] = int(v.integer());
                  })
            .optional = true;
        return t;
    }();
    return t;
}

struct loaded {
    queue_section s;
    std::string error;  ///< empty if it loaded
};

loaded load_queues(const std::string& yaml) {
    config_schema schema;
    queue_params().describe(schema, "port");
    loaded out;
    try {
        const auto root = load_yaml_string(yaml);
        schema.validate(root);
        out.s = queue_params().load(config_node(schema, root, "", "").child("port"));
    } catch (const config_error& e) {
        out.error = e.what();
    }
    return out;
}
}  // namespace

TEST_CASE("per-index keys: a scalar for all, a list in index order, a map {index: value}",
          "[config][indexed]") {
    SECTION("absent: the default for every index") {
        const auto l = load_queues("port: {}");
        REQUIRE(l.error.empty());
        CHECK(l.s.alpha == std::array<double, 4>{8, 8, 8, 8});
        CHECK(l.s.strict == std::array<bool, 4>{false, false, false, false});
        CHECK(l.s.pool == std::array<int, 4>{-1, -1, -1, -1});
    }
    SECTION("a scalar: every index") {
        const auto l = load_queues("port: {alpha: 2, min: 1KB, kind: sp, pool: 3}");
        REQUIRE(l.error.empty());
        CHECK(l.s.alpha == std::array<double, 4>{2, 2, 2, 2});
        CHECK(l.s.min_bytes == std::array<std::uint64_t, 4>{1000, 1000, 1000, 1000});
        CHECK(l.s.strict == std::array<bool, 4>{true, true, true, true});
        CHECK(l.s.pool == std::array<int, 4>{3, 3, 3, 3});
    }
    SECTION("a list: index order, the rest default") {
        const auto l = load_queues("port: {alpha: [1, 2], min: [1KB, 2KB, 3KB], pool: [0]}");
        REQUIRE(l.error.empty());
        CHECK(l.s.alpha == std::array<double, 4>{1, 2, 8, 8});
        CHECK(l.s.min_bytes == std::array<std::uint64_t, 4>{1000, 2000, 3000, 0});
        CHECK(l.s.pool == std::array<int, 4>{0, -1, -1, -1});
    }
    SECTION("a map: the named indices, the rest default") {
        const auto l = load_queues("port: {alpha: {3: 0.5, 1: 4}, kind: {2: sp}, pool: {1: 2}}");
        REQUIRE(l.error.empty());
        CHECK(l.s.alpha == std::array<double, 4>{8, 4, 8, 0.5});
        CHECK(l.s.strict == std::array<bool, 4>{false, false, true, false});
        CHECK(l.s.pool == std::array<int, 4>{-1, 2, -1, -1});
    }
}

TEST_CASE("per-index keys: errors name the key with the index and the reason",
          "[config][indexed]") {
    // Schema checks: the element's kind and range, the index and the list length.
    CHECK(load_queues("port: {alpha: [1, 0.25]}").error ==
          "port.alpha[1]: '0.25' is below the minimum 0.5");
    CHECK(load_queues("port: {alpha: {2: 0.25}}").error ==
          "port.alpha[2]: '0.25' is below the minimum 0.5");
    CHECK(load_queues("port: {alpha: {4: 1}}").error ==
          "port.alpha[4]: index out of range: there are 4 queues");
    CHECK(load_queues("port: {alpha: {-1: 1}}").error ==
          "port.alpha[-1]: index out of range: there are 4 queues");
    CHECK(load_queues("port: {alpha: {a: 1}}").error ==
          "port.alpha: 'a' is not a queue index (0..3)");
    CHECK(load_queues("port: {alpha: [1, 2, 3, 4, 5]}").error ==
          "port.alpha: has 5 entries, more than the 4 queues");
    CHECK(load_queues("port: {alpha: [1, [2]]}").error == "port.alpha[1]: expected a real value");
    CHECK(load_queues("port: {alpha: {1: {x: 2}}}").error ==
          "port.alpha[1]: expected a real value");
    CHECK(load_queues("port: {min: [1KB, 2]}").error.find("port.min[1]: '2' needs a byte unit") ==
          0);
    CHECK(load_queues("port: {kind: {0: fifo}}").error ==
          "port.kind[0]: 'fifo' is not one of: dwrr, sp");
    // Load checks: against the indices in use (`queues`).
    CHECK(load_queues("port: {queues: 2, alpha: [1, 2, 3]}").error ==
          "port.alpha: has 3 entries, more than the 2 queues");
    CHECK(load_queues("port: {queues: 2, alpha: {3: 1}}").error ==
          "port.alpha[3]: index out of range: there are 2 queues");
    CHECK(load_queues("port: {queues: 2, alpha: [1, 2], min: {1: 5KB}}").error.empty());
    // A setter's error names the element when given per index, the key when given for all.
    CHECK(load_queues("port: {min: [0B, 2MB]}").error == "port.min[1]: is more than 1MB");
    CHECK(load_queues("port: {min: {3: 2MB}}").error == "port.min[3]: is more than 1MB");
    CHECK(load_queues("port: {min: 2MB}").error == "port.min: is more than 1MB");
}

TEST_CASE("per-index keys: explain and the echo show the form", "[config][indexed]") {
    config_schema s;
    queue_params().describe(s, "port");
    const param_spec* p = s.find("port.alpha");
    REQUIRE(p);
    CHECK(p->indices == 4);
    CHECK(p->index_noun == "queue");
    std::ostringstream os;
    REQUIRE(s.explain(os, "port.alpha"));
    CHECK(os.str() ==
          "port.alpha  (real, per queue)\n    alpha\n    one value for every queue, a list in "
          "queue order or a map {queue: value} (queues 0..3; the default where not given)\n"
          "    default: 8\n    range: 0.5 .. inf\n");
    const auto root = load_yaml_string("port: {alpha: {1: 2, 3: 4.5}, min: [1KB], kind: sp}");
    s.validate(root);
    const nlohmann::json j = echo_json(s, with_defaults(s, root));
    CHECK(j["port"]["alpha"] == nlohmann::json::parse(R"({"1": 2.0, "3": 4.5})"));
    CHECK(j["port"]["alpha"]["1"].is_number_float());
    CHECK(j["port"]["min"] == nlohmann::json::parse(R"(["1KB"])"));
    CHECK(j["port"]["kind"] == "sp");
    CHECK(j["port"]["queues"] == 4);
    CHECK_FALSE(j["port"].contains("pool"));  // optional, not given: not echoed
}
