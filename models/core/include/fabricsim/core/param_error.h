#pragma once
/// What a plain C++ parameter set's validate() reports: the offending field and why. The
/// configuration layer names the key from `field` (config.h).
#include <string>

namespace fabricsim {

struct param_error {
    std::string field;   ///< e.g. "lanes"
    std::string reason;  ///< e.g. "must be 1, 2, 4, 8 or 16"
};

}  // namespace fabricsim
