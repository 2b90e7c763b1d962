#include "fabricsim/switch/algo/queue_scheduler.h"

namespace fabricsim::sw {

// The scheduler is a template (header only); this checks the generic instantiation compiles
// in full, whether or not a test uses every member.
template class basic_queue_scheduler<round_observer>;

}  // namespace fabricsim::sw
