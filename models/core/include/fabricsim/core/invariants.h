#pragma once
/// Run-time invariant checks (issue 18): what a correct model keeps true at every instant, checked
/// by the platform between simulation slices, never on the per-frame path, so a checked run fires
/// the same timers in the same order and gives the same results as an unchecked one.
/// A broken invariant stops the run with an invariant_violation naming the component, the model
/// time and the values that disagree.
#include <stdexcept>
#include <string>

#include "fabricsim/core/units.h"

namespace fabricsim {

class invariant_violation : public std::runtime_error
{
public:
    invariant_violation(std::string component, ps_t at, const std::string& values)
        : std::runtime_error("invariant violated in " + component + " at " + std::to_string(at) +
                             " ps: " + values),
          m_component(std::move(component)),
          m_at(at) {}
    const std::string& component() const { return m_component; }
    ps_t at() const { return m_at; }

private:
    std::string m_component;
    ps_t m_at;
};

/// Whether runs check invariants unless told otherwise: on in builds with assertions (Debug), and
/// wherever FABRICSIM_CHECK_INVARIANTS is set to 1 (the test suites set it); 0 turns it off.
bool invariant_checks_by_default();

}  // namespace fabricsim
