#include "fabricsim/core/invariants.h"

#include <cstdlib>
#include <cstring>

namespace fabricsim {

bool invariant_checks_by_default() {
    if (const char* v = std::getenv("FABRICSIM_CHECK_INVARIANTS"); v && *v)
        return std::strcmp(v, "0") != 0;
#ifdef NDEBUG
    return false;
#else
    return true;
#endif
}

}  // namespace fabricsim
