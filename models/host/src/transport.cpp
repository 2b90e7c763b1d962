#include "fabricsim/host/transport.h"

#include <memory>
#include <stdexcept>
#include <vector>

#include "fabricsim/host/host.h"
#include "fabricsim/host/roce_transport.h"
#include "fabricsim/host/tcp_transport.h"
#include "fabricsim/host/udp_transport.h"
#include "fabricsim/host/xpass_transport.h"

namespace fabricsim::host {

void transport::app_write(std::uint32_t flow, std::uint64_t, ps_t) {
    throw std::logic_error("flow " + std::to_string(flow) +
                           ": its transport does not carry application messages");
}

// The registry. A new transport is one class, its transport_kind value (which also ranks its
// timers among those due at the same time) and one line here.

std::vector<std::unique_ptr<transport>> make_transports(host& h) {
    std::vector<std::unique_ptr<transport>> t;
    t.push_back(std::make_unique<udp_transport>(h, h.flows()));
    t.push_back(std::make_unique<tcp_transport>(h, h.flows()));
    t.push_back(std::make_unique<roce_transport>(h, h.flows()));
    t.push_back(std::make_unique<xpass_transport>(h, h.flows()));
    static_assert(TRANSPORT_KINDS == 4, "one transport per transport_kind");
    return t;
}

}  // namespace fabricsim::host
