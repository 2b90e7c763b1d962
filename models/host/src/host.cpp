#include "fabricsim/host/host.h"

#include <algorithm>
#include <functional>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "fabricsim/core/kernel.h"
#include "fabricsim/nic/nic_registers.h"

namespace fabricsim::host {

host::host(const sc_core::sc_module_name& name, const host_identity& id, nic::nic_device& nic,
           flow_table& flows, std::uint64_t seed, ps_t lookahead)
    : sc_core::sc_module(name),
      m_id(id),
      m_nic(nic),
      m_flows(flows),
      m_seed(seed),
      m_lookahead(lookahead),
      m_data_reserve(std::min<std::size_t>(32, nic.tx_queue_capacity() / 4)),
      m_transports(make_transports(*this)) {
    if (m_transports.size() != TRANSPORT_KINDS)
        throw std::logic_error("make_transports: one transport per transport_kind");
    for (std::size_t k = 0; k < TRANSPORT_KINDS; ++k) {
        if (static_cast<std::size_t>(m_transports[k]->kind()) != k)
            throw std::logic_error("make_transports: transports out of transport_kind order");
        m_by_kind[k] = m_transports[k].get();
    }
    nic.attach_host(*this);
    if (nic::nic_registers* csr = nic.csr()) csr->set_identity(id.mac, id.ip);
}

void host::add_source(std::uint32_t flow_id, const flow_path& to) {
    transport_of(flow_id).add_source(flow_id, to);
}

void host::add_sink(std::uint32_t flow_id, const flow_path& from) {
    transport_of(flow_id).add_sink(flow_id, from);
}

void host::end_of_elaboration() {
    std::size_t timers = 0;
    for (const auto& t : m_transports) {
        if (t->needs_ordered_posts()) m_lookahead = 0;  // NIC posts must stay in time order
        timers += t->timer_hint();
    }
    m_heap.reserve(timers);
    for (const auto& t : m_transports) t->start();
    rearm();
}

void host::rearm() {
    ps_t next = ~ps_t(0);
    if (!m_heap.empty()) next = m_heap.front().at;
    if (!m_rx_fifo.empty()) next = std::min(next, m_rx_fifo.front().at);
    if (next != ~ps_t(0)) m_wake.arm_at(std::max(next, now_ps()));
}

void host::on_timer() {
    const ps_t now = now_ps();
    const ps_t horizon = now + m_lookahead;
    for (;;) {
        const bool rx_due = !m_rx_fifo.empty() && m_rx_fifo.front().at <= now;
        const bool heap_due = !m_heap.empty() && m_heap.front().at <= horizon;
        if (!rx_due && !heap_due) break;
        // Received frames first among equal times, then timers in (time, order, slot) order.
        if (rx_due && (!heap_due || m_rx_fifo.front().at <= m_heap.front().at)) {
            rx_entry e = m_rx_fifo.pop_front();
            e.t->on_frame(*e.f, e.at);
            m_pool.release(*e.f);
            continue;
        }
        std::pop_heap(m_heap.begin(), m_heap.end(), std::greater<timer>());
        const timer t = m_heap.back();
        m_heap.pop_back();
        m_by_kind[t.order >> 8]->on_timer(static_cast<std::uint8_t>(t.order & 0xFF), t.slot, t.at,
                                          now);
    }
    rearm();
}

void host::app_write(std::uint32_t flow, std::uint64_t bytes, ps_t at) {
    transport_of(flow).app_write(flow, bytes, at);
    rearm();
}

void host::wait_for_tx(transport& t, std::size_t at_most) {
    m_nic.request_tx_ready(at_most);
    if (!t.m_waiting_tx) {
        t.m_waiting_tx = true;
        m_waiting.push_back(&t);
    }
}

void host::nic_tx_ready() {
    const ps_t now = now_ps();
    std::vector<transport*> ready;
    ready.swap(m_waiting);
    for (transport* t : ready) t->m_waiting_tx = false;
    for (transport* t : ready) t->on_tx_ready(now);
    ready.clear();
    if (m_waiting.empty() && m_waiting.capacity() < ready.capacity()) m_waiting.swap(ready);
    rearm();
}

void host::nic_rx(frame& f, ps_t at) {
    m_stats.received_frames++;
    m_stats.received_bytes += f.frame_bytes();
    if (f.is_data() && f.flow_id < m_flows.size()) {
        transport& t = transport_of(f.flow_id);
        if (t.holds_rx()) {
            // The transport acts when the frame is in host memory.
            const bool was_empty = m_rx_fifo.empty();
            m_rx_fifo.push_back({&f, at, &t});
            if (was_empty) m_wake.arm_at(at);
            return;
        }
        t.on_frame(f, at);
    }
    m_pool.release(f);
}

void host::export_flow_results() const {
    for (const auto& t : m_transports) t->export_flow_results();
}

void host::report_stats(nlohmann::json& out) const {
    out = {{"sent_frames", m_stats.sent_frames},
           {"received_frames", m_stats.received_frames},
           {"received_bytes", m_stats.received_bytes},
           {"tx_blocked", m_stats.tx_blocked}};
    for (const auto& t : m_transports) t->report_stats(out);
}

}  // namespace fabricsim::host
