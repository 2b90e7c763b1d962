#pragma once
// The config_error text a scenario YAML gets from load_scenario ("" if it loads).
#include <string>

#include "fabricsim/platforms/scenario.h"

inline std::string scenario_error_of(const std::string& yaml) {
    try {
        fabricsim::platforms::load_scenario(fabricsim::load_yaml_string(yaml), "t");
    } catch (const fabricsim::config_error& e) {
        return e.what();
    }
    return "";
}
