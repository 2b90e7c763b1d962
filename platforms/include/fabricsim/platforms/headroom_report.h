#pragma once
/// `fabricsim-sim headroom` and fabricsim.headroom(): the PFC headroom calculator
/// (switch/algo/headroom.h) driven by named options given as text with units, so the C++ CLI,
/// the Python function and the Python CLI parse and report alike.
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fabricsim/core/config.h"

namespace fabricsim::platforms {

/// One option: `name` is the Python keyword; the CLIs spell it --name with '-' for '_'.
struct headroom_option {
    const char* name;
    value_kind kind;            ///< BIT_RATE, TIME, BYTES (a plain integer is bytes), REAL, CHOICE
    const char* model_default;  ///< "" = none (or not used by the method)
    const char* sonic_default;  ///< "-" = not used by the SONiC method
    const char* help;
};
const std::vector<headroom_option>& headroom_options();

/// Computes the headroom from `options` ({"rate": "100Gbps", "cable_length": "5"}); absent
/// options take the method's default. Throws config_error naming the option on an unknown
/// option, a bad value, an option the method does not use, or out-of-range inputs.
nlohmann::json headroom_report(const std::map<std::string, std::string>& options);

/// The report as a readable table of terms and totals.
void print_headroom(const nlohmann::json& report, std::ostream& os);

}  // namespace fabricsim::platforms
