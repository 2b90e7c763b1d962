#include "fabricsim/nic/nic_device.h"

#include <nlohmann/json.hpp>

#include "fabricsim/core/frame_pool.h"
#include "fabricsim/core/kernel.h"

namespace fabricsim::nic {

const param_table<nic_config>& nic_config::params() {
    static const param_table<nic_config> table = [] {
        param_table<nic_config> t;
        t.add("tx_latency", value_kind::TIME, "500ns",
              "Host post to MAC: descriptor fetch and DMA read, fixed", &nic_config::tx_latency)
            .max = 1e9;
        t.add("rx_latency", value_kind::TIME, "500ns",
              "MAC to host memory: DMA write and completion, fixed", &nic_config::rx_latency)
            .max = 1e9;
        auto& q =
            t.add("tx_queue", value_kind::INT, "1024",
                  "Frames the TX queue holds; a post beyond it is dropped (nic_tx_queue_full)",
                  &nic_config::tx_queue_frames);
        q.min = 1;
        q.max = 1 << 20;
        return t;
    }();
    return table;
}

nic_device::nic_device(const sc_core::sc_module_name& name, const nic_config& cfg,
                       std::uint64_t rate_bps)
    : sc_core::sc_module(name), m_cfg(cfg), m_rate_bps(rate_bps) {}

void nic_device::post(frame& f, ps_t at) {
    const ps_t now = now_ps();
    const ps_t ready = at + m_cfg.tx_latency;
    if (m_queue.empty() && m_busy_until <= ready) {
        start(f, ready, now);
        return;
    }
    if (m_queue.size() >= m_cfg.tx_queue_frames) {
        m_stats.drops.add(drop_cause::NIC_TX_QUEUE_FULL);
        frame_pool::global().release(f);
        return;
    }
    if (m_queue.empty()) m_wire_free.arm_at(std::max(m_busy_until, ready));
    m_queue.push_back({&f, ready});
    if (m_queue.size() > m_stats.tx_queue_peak) m_stats.tx_queue_peak = m_queue.size();
}

void nic_device::on_wire_free() {
    const ps_t now = now_ps();
    entry e = m_queue.pop_front();
    start(*e.f, std::max(now, e.ready), now);
    if (!m_queue.empty()) m_wire_free.arm_at(std::max(m_busy_until, m_queue.front().ready));
    if (m_notify_host && m_queue.size() <= m_cfg.tx_queue_frames / 2) {
        m_notify_host = false;
        if (m_host) m_host->nic_tx_ready();
    }
}

void nic_device::start(frame& f, ps_t at, ps_t now) {
    m_stats.tx_frames++;
    m_stats.tx_bytes += f.frame_bytes();
    m_busy_until = tx.send_at(f, at, now);
}

void nic_device::receive(unsigned, frame& f) {
    if (f.fcs_error) {
        m_stats.drops.add(drop_cause::FCS_ERROR);
        frame_pool::global().release(f);
        return;
    }
    m_stats.rx_frames++;
    m_stats.rx_bytes += f.frame_bytes();
    const ps_t at = now_ps() + m_cfg.rx_latency;
    if (m_host)
        m_host->nic_rx(f, at);
    else
        frame_pool::global().release(f);
}

void nic_device::report_stats(nlohmann::json& out) const {
    out = {{"tx_frames", m_stats.tx_frames},       {"tx_bytes", m_stats.tx_bytes},
           {"rx_frames", m_stats.rx_frames},       {"rx_bytes", m_stats.rx_bytes},
           {"tx_queue_frames", m_queue.size()},    {"tx_queue_peak", m_stats.tx_queue_peak},
           {"drops", drops_to_json(m_stats.drops)}};
}

}  // namespace fabricsim::nic
