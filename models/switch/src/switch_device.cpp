#include "fabricsim/switch/switch_device.h"

#include <string>

#include <nlohmann/json.hpp>

#include "fabricsim/core/frame_pool.h"
#include "fabricsim/core/kernel.h"
#include "fabricsim/core/rng.h"

namespace fabricsim::sw {

switch_device::switch_device(const sc_core::sc_module_name& name, const switch_config& cfg,
                             const std::vector<std::uint64_t>& port_rates, std::uint64_t seed)
    : sc_core::sc_module(name),
      m_cfg(cfg),
      m_buffer(cfg.buffer_bytes, static_cast<unsigned>(port_rates.size()), cfg.port_cap),
      m_routes(splitmix64(seed ^ hash_name(std::string(this->name()) + ".ecmp"))),
      m_rx_stats(port_rates.size()) {
    m_cfg.ports = static_cast<std::uint32_t>(port_rates.size());
    for (unsigned p = 0; p < port_rates.size(); ++p) {
        const std::string pn = "p" + std::to_string(p);
        m_rx.push_back(std::make_unique<eth_rx_port>((pn + "_rx").c_str(), *this, p));
        m_egress.push_back(std::make_unique<egress_port>(pn.c_str(), p, m_buffer, port_rates[p]));
    }
}

void switch_device::drop(unsigned in_port, frame& f, drop_cause why) {
    m_rx_stats[in_port].drops.add(why);
    frame_pool::global().release(f);
}

void switch_device::receive(unsigned in_port, frame& f) {
    const ps_t now = now_ps();
    port_rx_stats& rs = m_rx_stats[in_port];
    rs.frames++;
    rs.bytes += f.frame_bytes();
    const bool whole_frame = now >= f.rx_last_bit;
    if (f.fcs_error && whole_frame) return drop(in_port, f, drop_cause::FCS_ERROR);
    if (f.ttl <= 1) return drop(in_port, f, drop_cause::TTL_EXPIRED);
    const int out = m_routes.lookup(f);
    if (out < 0) return drop(in_port, f, drop_cause::NO_ROUTE);
    f.ttl--;
    f.ingress_port = static_cast<std::uint16_t>(in_port);
    egress_port& eg = *m_egress[static_cast<unsigned>(out)];
    ps_t ready = m_cfg.pipeline_exit(now);
    if (!whole_frame) {
        // Cut-through only into an idle port that is not faster than the ingress.
        const bool cut = eg.idle_at(ready) && eg.rate_bps() <= m_egress[in_port]->rate_bps();
        if (!cut) {
            if (f.fcs_error) {
                // The fallback receives the whole frame first, so it sees the bad FCS.
                return drop(in_port, f, drop_cause::FCS_ERROR);
            }
            // The pipeline already ran on the header; the frame leaves once its tail is in.
            ready = std::max(ready, ceil_to_period(f.rx_last_bit, m_cfg.clock_period()));
        }
    }
    eg.enqueue(f, ready);
}

void switch_device::add_drops(drop_counters& d) const {
    for (const auto& r : m_rx_stats) d += r.drops;
    for (const auto& e : m_egress) d += e->get_stats().drops;
}

std::uint64_t switch_device::frames_held() const {
    std::uint64_t n = 0;
    for (const auto& e : m_egress) n += e->queued_frames();
    return n;
}

void switch_device::report_stats(nlohmann::json& out) const {
    out = nlohmann::json::object();
    out["buffer_bytes"] = m_buffer.total();
    out["buffer_used_bytes"] = m_buffer.used();
    out["buffer_peak_bytes"] = m_buffer.used_peak();
    nlohmann::json ports = nlohmann::json::array();
    for (unsigned p = 0; p < m_egress.size(); ++p) {
        const auto& es = m_egress[p]->get_stats();
        drop_counters d = es.drops;
        d += m_rx_stats[p].drops;
        ports.push_back({{"port", p},
                         {"rate_bps", m_egress[p]->rate_bps()},
                         {"rx_frames", m_rx_stats[p].frames},
                         {"rx_bytes", m_rx_stats[p].bytes},
                         {"tx_frames", es.tx_frames},
                         {"tx_bytes", es.tx_bytes},
                         {"queued_frames", m_egress[p]->queued_frames()},
                         {"queue_bytes", m_buffer.port_bytes(p)},
                         {"queue_peak_bytes", m_buffer.port_peak_bytes(p)},
                         {"drops", drops_to_json(d)}});
    }
    out["ports"] = std::move(ports);
}

}  // namespace fabricsim::sw
