#include "fabricsim/host/host.h"

#include <algorithm>
#include <functional>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "fabricsim/core/kernel.h"
#include "fabricsim/host/algo/gro.h"
#include "fabricsim/host/algo/rx_cpu.h"
#include "fabricsim/nic/nic_registers.h"

namespace fabricsim::host {

/// The NAPI receive path: rx_cpu (ring, coalescing, polls, CPU) and optional GRO, handing
/// frames to the host's delivery heap. Frames travel as cookies (their addresses); GRO chains
/// an aggregate's frames through frame::pool_next.
class host::napi_path final : public rx_sink, public gro_output, public nic::nic_host_if
{
public:
    napi_path(host& h, const nic::nic_config::rx_path_config& c)
        : m_host(h), cpu(c.cpu, c.coalesce, *this) {
        if (c.gro) gro.emplace(c.cpu.cores, gro_params{}, *this);
    }

    // What the NIC sees of the host: received frames enter the path, the rest is the host's.
    void nic_rx(frame& f, ps_t at) override { m_host.nic_rx_napi(f, at); }
    void nic_tx_ready() override { m_host.nic_tx_ready(); }
    bool nic_rx_ring(unsigned queue, rx_ring_status& out) const override {
        return m_host.nic_rx_ring(queue, out);
    }
    bool nic_coalescing(nic::coalesce_params& out, std::uint64_t& interrupts) const override {
        return m_host.nic_coalescing(out, interrupts);
    }
    bool nic_set_coalescing(const nic::coalesce_params& p) override {
        return m_host.nic_set_coalescing(p);
    }

    static frame& frame_of(std::uint64_t cookie) {
        return *reinterpret_cast<frame*>(static_cast<std::uintptr_t>(cookie));
    }
    void on_delivery(unsigned queue, const rx_packet& p, ps_t at) override {
        if (gro) return gro->on_delivery(queue, p, at);
        m_host.deliver_napi(frame_of(p.cookie), at, false);
    }
    void on_poll_end(unsigned queue, ps_t at, bool complete) override {
        if (gro) gro->on_poll_end(queue, at, complete);
    }
    void on_app_read(unsigned, const rx_packet& p, ps_t at) override {
        // In time order with the deliveries: the transport hears it at `at`.
        heap.push_back(
            {at, seq++, nullptr,
             m_host.m_by_kind[static_cast<std::size_t>(m_host.m_flows[p.flow].spec.transport)],
             p.flow, p.payload});
        std::push_heap(heap.begin(), heap.end(), std::greater<entry>());
    }
    void on_merge(std::uint64_t prev, std::uint64_t cookie) override {
        frame_of(prev).pool_next = &frame_of(cookie);
    }
    void on_aggregate(unsigned, const gro_aggregate& a) override {
        frame* f = &frame_of(a.first_cookie);
        frame* const last = &frame_of(a.last_cookie);
        for (;;) {
            frame* next = f->pool_next;
            f->pool_next = nullptr;
            m_host.deliver_napi(*f, a.at, f != last);
            if (f == last) return;
            f = next;
        }
    }
    ps_t next() const {
        const ps_t e = cpu.next_event();
        return heap.empty() ? e : std::min(e, heap.front().at);
    }

    struct entry {
        ps_t at;
        std::uint64_t seq;  ///< arrival order: equal times keep it (an aggregate's segments)
        frame* f;           ///< nullptr: the application read `bytes` of `flow`
        transport* t;
        std::uint32_t flow;
        std::uint32_t bytes;
        bool operator>(const entry& o) const { return at != o.at ? at > o.at : seq > o.seq; }
    };
    host& m_host;
    rx_cpu cpu;
    std::optional<gro_merger> gro;
    std::vector<entry> heap;  ///< min-heap via std::push_heap/greater
    std::uint64_t seq = 0;
    std::uint64_t in_path = 0;  ///< frames in the ring, a poll or an open aggregate
    std::uint64_t in_heap = 0;  ///< frames in the heap (its other entries are reads)
    ps_t last_call = 0;         ///< latest time handed to cpu (deliveries run ahead of now)
    drop_counters drops;
};

host::~host() = default;

// Inlined into both receive paths' loops (the plain one is the hot path).
inline void host::run_next_timer(ps_t now) {
    std::pop_heap(m_heap.begin(), m_heap.end(), std::greater<timer>());
    const timer t = m_heap.back();
    m_heap.pop_back();
    m_by_kind[t.order >> 8]->on_timer(static_cast<std::uint8_t>(t.order & 0xFF), t.slot, t.at, now);
}

void host::add_drops(drop_counters& d) const {
    for (const auto& t : m_transports) t->add_drops(d);
    if (m_napi) d += m_napi->drops;
}

std::uint64_t host::napi_held() const {
    return m_napi->in_path + m_napi->in_heap;
}

void host::nic_rx_napi(frame& f, ps_t at) {
    m_stats.received_frames++;
    m_stats.received_bytes += f.frame_bytes();
    if (!(f.is_data() || f.kind == frame_kind::CREDIT) || f.flow_id >= m_flows.size()) {
        m_pool.release(f);
        return;
    }
    napi_path& n = *m_napi;
    rx_packet p;
    p.cookie = reinterpret_cast<std::uintptr_t>(&f);
    p.bytes = f.frame_bytes();
    p.flow = f.flow_id;
    p.seq = static_cast<std::uint32_t>(f.seq_no);
    p.payload = f.kind == frame_kind::IPV4_TCP ? f.payload_bytes : 0;
    p.ce = f.ecn == ecn_codepoint::CE;
    n.last_call = std::max(n.last_call, at);
    if (!n.cpu.on_completion(f.flow_id % n.cpu.cores(), at, p)) {
        n.drops.add(drop_cause::RX_RING_FULL);
        m_pool.release(f);
    } else {
        n.in_path++;
    }
    rearm_napi();
}

void host::deliver_napi(frame& f, ps_t at, bool more) {
    napi_path& n = *m_napi;
    n.in_path--;
    f.rx_more = more;
    transport& t = transport_of(f.flow_id);
    if (t.holds_rx()) {
        n.heap.push_back({at, n.seq++, &f, &t, 0, 0});
        n.in_heap++;
        std::push_heap(n.heap.begin(), n.heap.end(), std::greater<napi_path::entry>());
        return;
    }
    t.on_frame(f, at);
    m_pool.release(f);
}

void host::on_timer_napi() {
    const ps_t now = now_ps();
    napi_path& n = *m_napi;
    n.last_call = std::max(n.last_call, now);
    n.cpu.advance(now);
    const ps_t horizon = now + m_lookahead;
    for (;;) {
        const bool rx_due = !n.heap.empty() && n.heap.front().at <= now;
        const bool heap_due = !m_heap.empty() && m_heap.front().at <= horizon;
        if (!rx_due && !heap_due) break;
        if (rx_due && (!heap_due || n.heap.front().at <= m_heap.front().at)) {
            std::pop_heap(n.heap.begin(), n.heap.end(), std::greater<napi_path::entry>());
            const napi_path::entry e = n.heap.back();
            n.heap.pop_back();
            if (!e.f) {
                e.t->on_app_read(e.flow, e.bytes, e.at);
                continue;
            }
            n.in_heap--;
            e.t->on_frame(*e.f, e.at);
            m_pool.release(*e.f);
            continue;
        }
        run_next_timer(now);
    }
    rearm_napi();
}

void host::rearm_napi() {
    rearm();
    const ps_t next = m_napi->next();
    if (next != ~ps_t(0)) m_wake.arm_at(std::max(next, now_ps()));
}

bool host::nic_rx_ring(unsigned queue, rx_ring_status& out) const {
    if (!m_napi || queue >= m_napi->cpu.cores()) return false;
    const rx_cpu::counters& c = m_napi->cpu.stats(queue);
    out.size = m_napi->cpu.params().ring;
    out.written = c.completions;
    out.processed = c.packets;
    out.peak = c.peak_ring;
    return true;
}

bool host::nic_coalescing(nic::coalesce_params& out, std::uint64_t& interrupts) const {
    if (!m_napi) return false;
    out = m_napi->cpu.coalescer(0).params();
    interrupts = m_napi->cpu.totals().interrupts;
    return true;
}

bool host::nic_set_coalescing(const nic::coalesce_params& p) {
    if (!m_napi || p.validate()) return false;
    m_napi->cpu.set_coalescing(p);
    return true;
}

void host::report_napi(nlohmann::json& out) const {
    const napi_path& n = *m_napi;
    const ps_t now = std::max(now_ps(), n.last_call);
    const rx_cpu::counters c = n.cpu.totals();
    nlohmann::json cores = nlohmann::json::array();
    std::uint64_t by_frames = 0, by_timer = 0, immediate = 0, profile_changes = 0;
    for (unsigned q = 0; q < n.cpu.cores(); ++q) {
        const auto& k = n.cpu.coalescer(q).stats();
        by_frames += k.by_frames;
        by_timer += k.by_timer;
        immediate += k.immediate;
        profile_changes += k.profile_changes;
        cores.push_back({{"utilisation", n.cpu.utilisation(q, now)},
                         {"interrupts", n.cpu.stats(q).interrupts},
                         {"ring_peak", n.cpu.stats(q).peak_ring},
                         {"profile", n.cpu.coalescer(q).profile()}});
    }
    nlohmann::json rx = {{"cpu_utilisation", n.cpu.utilisation(now) + n.cpu.app_utilisation(now)},
                         {"softirq_utilisation", n.cpu.utilisation(now)},
                         {"app_utilisation", n.cpu.app_utilisation(now)},
                         {"interrupts", c.interrupts},
                         {"frames_per_interrupt", c.mean_batch()},
                         {"max_frames_per_interrupt", c.max_batch},
                         {"polls", c.polls},
                         {"repolls", c.repolls},
                         {"frames", c.packets},
                         {"ring_peak", c.peak_ring},
                         {"rx_ring_full", c.rx_ring_full},
                         {"interrupts_by_frames", by_frames},
                         {"interrupts_by_timer", by_timer},
                         {"interrupts_immediate", immediate},
                         {"profile_changes", profile_changes},
                         {"cores", std::move(cores)}};
    if (n.gro) {
        const auto& g = n.gro->stats();
        rx["gro"] = {{"segments", g.segments},
                     {"deliveries", g.aggregates},
                     {"segments_per_delivery", g.mean_segments()},
                     {"flush_poll", g.flush_poll},
                     {"flush_gap", g.flush_gap},
                     {"flush_tos", g.flush_tos},
                     {"flush_full", g.flush_full},
                     {"flush_evict", g.flush_evict},
                     {"flush_control", g.flush_control}};
    }
    out["rx_path"] = std::move(rx);
}

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
    if (nic.config().rx.napi) {
        m_napi = std::make_unique<napi_path>(*this, nic.config().rx);
        m_app_model = nic.config().rx.cpu.app_byte_cost > 0;
        nic.attach_host(*m_napi);
    } else {
        nic.attach_host(*this);
    }
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
    if (m_napi)
        rearm_napi();
    else
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
        run_next_timer(now);
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
    if ((f.is_data() || f.kind == frame_kind::CREDIT) && f.flow_id < m_flows.size()) {
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

std::uint64_t host::transport_frames_held() const {
    std::uint64_t n = 0;
    for (const auto& t : m_transports) n += t->frames_held();
    return n;
}

void host::report_stats(nlohmann::json& out) const {
    out = {{"sent_frames", m_stats.sent_frames},
           {"received_frames", m_stats.received_frames},
           {"received_bytes", m_stats.received_bytes},
           {"tx_blocked", m_stats.tx_blocked}};
    for (const auto& t : m_transports) t->report_stats(out);
    if (m_napi) report_napi(out);
}

}  // namespace fabricsim::host
