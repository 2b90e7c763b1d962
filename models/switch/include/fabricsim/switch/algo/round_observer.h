#pragma once
/// Round boundaries of a WRR/DWRR group, as MQ-ECN samples them (seed-001 §1.8): the
/// scheduler (queue_scheduler.h) reports them, the MQ-ECN estimator (aqm.h) listens.
#include "fabricsim/core/units.h"

namespace fabricsim::sw {

/// Told about round boundaries of the WRR/DWRR group, through virtual calls (tests, tools).
/// basic_queue_scheduler calls the three-argument forms; a final observer class (such as
/// mq_ecn_estimator) provides those directly, with its own per-queue slot type.
class round_observer
{
public:
    /// Per-queue state the scheduler keeps for the observer: none here.
    struct queue_slot {
    };

    virtual ~round_observer() = default;
    /// Queue q became backlogged and joined the round robin at `now`.
    virtual void queue_activated(unsigned q, ps_t now) = 0;
    /// Queue q finished its service in a round at `at` (quantum used up with backlog left, or
    /// emptied).
    virtual void queue_finished_round(unsigned q, ps_t at) = 0;

    void queue_activated(unsigned q, ps_t now, queue_slot&) { queue_activated(q, now); }
    void queue_finished_round(unsigned q, ps_t at, queue_slot&) { queue_finished_round(q, at); }
};

}  // namespace fabricsim::sw
