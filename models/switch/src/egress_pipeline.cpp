#include "fabricsim/switch/algo/egress_pipeline.h"

#include "fabricsim/core/frame.h"

namespace fabricsim::sw {

namespace {

std::vector<std::vector<std::uint16_t>> pipeline_members(const std::vector<std::uint16_t>& pipe_of,
                                                         unsigned pipes) {
    std::vector<std::vector<std::uint16_t>> members(pipes);
    for (std::size_t p = 0; p < pipe_of.size(); ++p)
        members[pipe_of[p]].push_back(static_cast<std::uint16_t>(p));
    return members;
}

}  // namespace

egress_pipelines::egress_pipelines(const pipeline_config& cfg, unsigned ports, ps_t period,
                                   turn_timer& timer)
    : m_rate(period, cfg.egress_packets_per_cycle, cfg.egress_bytes_per_cycle),
      m_pipe_of(cfg.pipeline_of_ports(ports)),
      m_turns(pipeline_members(m_pipe_of, cfg.count), ports, timer) {}

void egress_pipeline_gate::on_start(unsigned /*q*/, std::uint32_t wire_bytes, ps_t at) {
    m_pipes.started(m_port, wire_bytes - PREAMBLE_SFD - IFG_BYTES, at);
}

}  // namespace fabricsim::sw
