#pragma once
/// The run-time side of a workload over persistent connections (connection_pool.h): at each
/// message's arrival it picks a connection, has the destination write the request (if any) and
/// the source write the message when the request has arrived, and records when the message's
/// last byte reached the destination.
///
/// Timing model: one model_timer wakes at each arrival; requests and messages are written at the
/// arrival, or when a busy connection frees up, or when the request has arrived; processing
/// takes no time. A message's completion time runs from its arrival (so it includes any wait
/// for a connection and the request) to the host-memory time of its last byte. Connections
/// stay open for the whole run (TCP windows, DCTCP's alpha and RTT estimates carry over; tcp.*
/// idle_restart applies between messages).
#include <cstdint>
#include <string>
#include <vector>

#include "fabricsim/core/scheduler.h"
#include "fabricsim/host/flow_table.h"
#include "fabricsim/platforms/connection_pool.h"

namespace fabricsim::host {
class host;
}

namespace fabricsim::platforms {

class message_workload : public host::message_listener
{
public:
    struct record {
        ps_t end = 0;                                      ///< 0: not delivered in the run
        std::uint32_t connection = connection_pool::NONE;  ///< index within the pair
        ps_t dispatched = 0;                               ///< when a connection took it
        std::uint64_t timeouts_before = 0;  ///< RTOs of the data flow when it took the message
        std::uint64_t timeouts_after = 0;   ///< ... when the message was delivered
    };

    /// `hosts[n]` is the host model of topology node n (null for switches).
    message_workload(const message_workload_spec& spec, std::vector<host::host*> hosts,
                     host::flow_table& flows, std::uint64_t seed);

    /// Arms the first arrival; call once before the simulation starts.
    void start();
    void on_message(std::uint32_t flow, ps_t at) override;

    const message_workload_spec& spec() const { return m_spec; }
    /// Per message, in the order of spec().messages.
    const std::vector<record>& records() const { return m_records; }
    /// RTOs of message `m`'s connection while it carried the message (until now if it has not
    /// been delivered; 0 if no connection took it).
    std::uint64_t timeouts(std::size_t m) const;
    /// Messages that waited for a busy connection.
    std::uint64_t queued() const { return m_pool.queued(); }

private:
    void on_arrival();
    void dispatch(std::uint32_t m, std::uint32_t c, ps_t at);
    void write_message(std::uint32_t m, ps_t at);

    struct flow_role {
        std::uint32_t pair = 0;
        std::uint32_t connection = 0;
        bool request = false;
    };

    message_workload_spec m_spec;
    std::vector<host::host*> m_hosts;
    host::flow_table& m_flows;
    connection_pool m_pool;
    std::vector<record> m_records;
    std::vector<flow_role> m_role;  ///< flow id -> its connection (flows of this workload only)
    /// pair -> connection -> message it carries (connection_pool::NONE when idle)
    std::vector<std::vector<std::uint32_t>> m_carrying;
    std::size_t m_next = 0;  ///< next message to arrive
    model_timer m_timer = model_timer::bind<message_workload, &message_workload::on_arrival>(this);
};

}  // namespace fabricsim::platforms
