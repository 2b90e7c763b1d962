#pragma once
// Runs one scenario (no results folder, no time series) and checks frame conservation; returns
// its summary. One platform per process: call it once per TEST_CASE.
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "fabricsim/core/config.h"
#include "fabricsim/platforms/platform.h"
#include "fabricsim/platforms/scenario.h"

inline nlohmann::json run_conserved(const std::string& yaml, const std::string& name) {
    using namespace fabricsim;
    const auto sc = platforms::load_scenario(
        load_yaml_string(yaml + "\nresults: {sample_interval: 0s}\n"), name);
    const auto r = platforms::run_scenario(sc, "");
    const nlohmann::json& fr = r.summary["frames"];
    INFO(fr.dump());
    CHECK(fr["conserved"].get<bool>());
    CHECK(fr["sent"].get<std::uint64_t>() == fr["delivered"].get<std::uint64_t>() +
                                                 fr["dropped"].get<std::uint64_t>() +
                                                 fr["in_flight"].get<std::uint64_t>());
    return r.summary;
}
