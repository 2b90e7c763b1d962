#include "fabricsim/switch/switch_device.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "fabricsim/core/frame_pool.h"
#include "fabricsim/core/invariants.h"
#include "fabricsim/core/kernel.h"
#include "fabricsim/core/rng.h"

namespace fabricsim::sw {

namespace {
/// The chip's MMU parameters, or std::invalid_argument naming the switch and the reason.
mmu_config checked(const switch_config& cfg, unsigned ports, const char* name) {
    // Partitions follow the pipelines: their port map must fit first.
    if (const std::string why = cfg.pipeline.check_ports(ports);
        cfg.mmu.partitions > 1 && !why.empty())
        throw std::invalid_argument(std::string(name) + ": switch.pipeline." + why);
    mmu_config c = cfg.mmu_for(ports);
    if (const std::string why = c.validate(); !why.empty())
        throw std::invalid_argument(std::string(name) + ": switch.mmu: " + why);
    return c;
}
}  // namespace

switch_device::switch_device(const sc_core::sc_module_name& name, const switch_config& cfg,
                             const std::vector<std::uint64_t>& port_rates, std::uint64_t seed)
    : sc_core::sc_module(name),
      m_cfg(cfg),
      m_clock(cfg.clock_period()),
      m_mmu(checked(cfg, static_cast<unsigned>(port_rates.size()), this->name())),
      m_routes(splitmix64(seed ^ hash_name(std::string(this->name()) + ".ecmp"))),
      m_rx_stats(port_rates.size()) {
    m_cfg.ports = static_cast<std::uint32_t>(port_rates.size());
    if (cfg.pipeline.limited() || cfg.mmu.write_cells_per_cycle > 0) {
        try {
            m_pipes = std::make_unique<ingress_pipelines>(
                cfg.pipeline, static_cast<unsigned>(port_rates.size()), cfg.clock_period(),
                m_mmu.partitions(), cfg.mmu.write_cells_per_cycle);
        } catch (const std::invalid_argument& e) {
            throw std::invalid_argument(std::string(this->name()) + ": switch." + e.what());
        }
    }
    for (unsigned p = 0; p < port_rates.size(); ++p) {
        const std::string pn = "p" + std::to_string(p);
        // With rate-limited pipelines the ports deliver to the pipeline step; without, the
        // data path is exactly the flat one (no test per frame).
        frame_receiver& rx = m_pipes ? static_cast<frame_receiver&>(m_pipelined)
                                     : static_cast<frame_receiver&>(*this);
        m_rx.push_back(std::make_unique<eth_rx_port>((pn + "_rx").c_str(), rx, p));
        m_egress.push_back(std::make_unique<egress_port>(pn.c_str(), p, m_cfg, m_mmu, m_pools,
                                                         port_rates[p], seed));
        m_egress.back()->data_path().set_emitter(this);
    }
    if (cfg.pipeline.egress_limited()) {
        try {
            m_egress_pipes = std::make_unique<egress_pipelines>(
                cfg.pipeline, static_cast<unsigned>(port_rates.size()), cfg.clock_period(),
                m_turns);
        } catch (const std::invalid_argument& e) {
            throw std::invalid_argument(std::string(this->name()) + ": switch." + e.what());
        }
    }
    if (cfg.mmu.read_cells_per_cycle > 0)
        m_reads =
            std::make_unique<cell_reads>(m_mmu, static_cast<unsigned>(port_rates.size()),
                                         cfg.clock_period(), cfg.mmu.read_cells_per_cycle, m_turns);
    // Both take turns through one timer (on_turn_due) and tell a port through its port_turn.
    if (m_egress_pipes || m_reads)
        for (unsigned p = 0; p < port_rates.size(); ++p) {
            m_port_turns.push_back(std::make_unique<port_turn>(*m_egress[p]));
            egress_queues& q = m_egress[p]->data_path();
            if (m_egress_pipes) {
                m_egress_pipes->attach(p, *m_port_turns.back());
                q.add_turn_gate(*m_turn_gates.emplace_back(
                    std::make_unique<egress_pipeline_gate>(*m_egress_pipes, p)));
            }
            if (m_reads) {
                m_reads->attach(p, *m_port_turns.back());
                q.add_turn_gate(
                    *m_turn_gates.emplace_back(std::make_unique<cell_read_gate>(*m_reads, q, p)));
            }
        }
    const pause_generation_config& gen = m_cfg.flow_control_generation;
    if (gen.enabled()) {
        // Priorities a PG covers: those whose traffic class maps to it.
        std::array<std::uint8_t, 8> pg_priorities{};
        for (unsigned p = 0; p < 8; ++p) {
            const unsigned g = m_cfg.qos.tc_to_pg[m_cfg.qos.pcp_to_tc[p]];
            pg_priorities[g] = static_cast<std::uint8_t>(pg_priorities[g] | 1u << p);
        }
        for (unsigned p = 0; p < port_rates.size(); ++p)
            m_generators.emplace_back(gen, port_rates[p], pg_priorities);
        m_control_pending.assign(port_rates.size(), 0);
        if (gen.mode == pause_generation::QUEUE_PAUSE) {
            m_congested_queues.assign(port_rates.size(), 0);
            const auto all = static_cast<std::uint8_t>((1u << m_cfg.queues) - 1);
            for (auto& e : m_egress) {
                m_triggers.push_back(std::make_unique<queue_pause_trigger>(
                    all, gen.q_on, gen.q_off, gen.q_in_frames,
                    static_cast<queue_congestion_listener&>(*this)));
                e->data_path().add_policy(*m_triggers.back());
                // FERA's PAUSE backstop is this generation: its intervals know when it paused.
                if (fera_congestion_point* f = e->data_path().fera())
                    f->set_pause_trigger(m_triggers.back().get());
            }
        } else {
            m_mmu.set_flow_listener(this);
        }
    }
}

void switch_device::report_generation(unsigned port, nlohmann::json& fc) const {
    const pause_generator& g = m_generators[port];
    const ps_t now = now_ps();
    nlohmann::json xoff = nlohmann::json::array(), xon = nlohmann::json::array(),
                   time = nlohmann::json::array(), state = nlohmann::json::array();
    for (unsigned p = 0; p < 8; ++p) {
        xoff.push_back(g.stats().xoff_sent[p]);
        xon.push_back(g.stats().xon_sent[p]);
        time.push_back(double(g.xoff_time(p, now)) / double(PS_PER_US));
        if (g.xoff_priorities() >> p & 1) state.push_back(p);
    }
    fc["pause_frames_sent"] = g.stats().frames_sent;
    fc["refreshes_sent"] = g.stats().refreshes;
    fc["xoff_sent"] = std::move(xoff);
    fc["xon_sent"] = std::move(xon);
    fc["xoff_time_us"] = std::move(time);
    fc["xoff_now"] = std::move(state);
}

void switch_device::pg_xoff(unsigned port, unsigned pg) {
    if (m_generators[port].pg_xoff(pg, now_ps())) control_due(port);
}

void switch_device::pg_xon(unsigned port, unsigned pg) {
    if (m_generators[port].pg_xon(pg, now_ps())) control_due(port);
}

void switch_device::queue_congestion(unsigned port, bool congested) {
    m_congested_queues[port] += congested ? 1 : std::uint32_t(-1);
    m_congested_total += congested ? 1 : std::uint32_t(-1);
    // Every port but the congested queues' own is paused (the thesis' "all input ports").
    const ps_t now = now_ps();
    for (unsigned p = 0; p < m_generators.size(); ++p)
        if (m_generators[p].port_state(m_congested_total > m_congested_queues[p], now))
            control_due(p);
}

void switch_device::control_due(unsigned port) {
    m_control_pending[port] = 1;
    m_control_timer.arm_at(now_ps());
}

void switch_device::on_control_due() {
    const ps_t now = now_ps();
    for (unsigned p = 0; p < m_control_pending.size(); ++p) {
        if (!m_control_pending[p]) continue;
        m_control_pending[p] = 0;
        if (!m_generators[p].change_pending()) continue;  // undone in the same instant
        frame& f = m_pool.acquire();
        m_generators[p].fill(f, now);
        m_egress[p]->send_control(f);
    }
    arm_refresh();
}

void switch_device::on_refresh_due() {
    const ps_t now = now_ps();
    for (unsigned p = 0; p < m_generators.size(); ++p) {
        if (m_generators[p].refresh_due() > now) continue;
        frame& f = m_pool.acquire();
        m_generators[p].fill(f, now);
        m_egress[p]->send_control(f);
    }
    arm_refresh();
}

void switch_device::arm_refresh() {
    ps_t next = pause_generator::NEVER;
    for (const pause_generator& g : m_generators) next = std::min(next, g.refresh_due());
    m_refresh_timer.cancel();
    if (next != pause_generator::NEVER) m_refresh_timer.arm_at(next);
}

void switch_device::drop(unsigned in_port, frame& f, drop_cause why) {
    m_rx_stats[in_port].drops.add(why);
    m_pool.release(f);
}

unsigned switch_device::traffic_class(const frame& f) const {
    return m_cfg.qos.trust_pcp && f.vlan_tagged ? m_cfg.qos.pcp_to_tc[f.pcp]
                                                : m_cfg.qos.dscp_to_tc[f.dscp & 63];
}

inline egress_port* switch_device::route(unsigned in_port, frame& f) {
    if (f.ttl <= 1) {
        // Frames without an IPv4 header (MAC control) carry ttl 0, so this test, before the
        // route lookup, is also the control path's: no instruction is added for data frames.
        if (!f.is_data() && receive_control(in_port, f)) return nullptr;
        drop(in_port, f, drop_cause::TTL_EXPIRED);
        return nullptr;
    }
    const int out = m_routes.lookup(f);
    if (out < 0) {
        drop(in_port, f, drop_cause::NO_ROUTE);
        return nullptr;
    }
    f.ttl--;
    f.ingress_port = static_cast<std::uint16_t>(in_port);
    return m_egress[static_cast<unsigned>(out)].get();
}

inline void switch_device::enqueue(egress_port& eg, unsigned in_port, frame& f, ps_t ready) {
    const unsigned tc = traffic_class(f);
    eg.accept(f, in_port, m_cfg.qos.tc_to_pg[tc], m_cfg.qos.tc_to_queue[tc], ready);
}

void switch_device::receive(unsigned in_port, frame& f) {
    const ps_t now = now_ps();  // read before the stores below, which could alias it
    port_rx_stats& rs = m_rx_stats[in_port];
    rs.frames++;
    rs.bytes += f.frame_bytes();
    forward(in_port, f, now);
}

void switch_device::receive_pipelined(unsigned in_port, frame& f) {
    if (m_pipes->writes_limited()) return receive_written(in_port, f);
    port_rx_stats& rs = m_rx_stats[in_port];
    rs.frames++;
    rs.bytes += f.frame_bytes();
    const ps_t now = now_ps();
    switch (m_pipes->offer(f, in_port, now)) {
        case ingress_pipelines::verdict::START:
            return forward_pipelined(in_port, f, now);
        case ingress_pipelines::verdict::WAIT:
            return m_pipe_timer.arm_at(m_pipes->next_start());
        case ingress_pipelines::verdict::OVERFLOW:
            return drop(in_port, f, drop_cause::PIPELINE_OVERFLOW);
    }
}

void switch_device::turn_timer::turn_due(ps_t at) {
    m_sw.m_turn_timer.arm_at(std::max(at, now_ps()));  // keeps an earlier pending expiry
}

void switch_device::on_turn_due() {
    const ps_t now = now_ps();
    if (m_egress_pipes) m_egress_pipes->run_turns(now);
    if (m_reads) m_reads->run_turns(now);
}

void switch_device::on_pipeline_due() {
    const ps_t now = now_ps();
    unsigned in_port = 0;
    if (m_pipes->writes_limited()) {
        unsigned part = 0;
        std::uint32_t cells = 0;
        while (frame* f = m_pipes->pop_write(now, in_port, part, cells))
            forward_written(in_port, *f, now, part, cells);
    } else {
        while (frame* f = m_pipes->pop(now, in_port)) forward_pipelined(in_port, *f, now);
    }
    if (m_pipes->held_frames()) m_pipe_timer.arm_at(m_pipes->next_start());
}

void switch_device::receive_written(unsigned in_port, frame& f) {
    port_rx_stats& rs = m_rx_stats[in_port];
    rs.frames++;
    rs.bytes += f.frame_bytes();
    const ps_t now = now_ps();
    // Only a routed data frame reaches the MMU (route(): control frames carry ttl 0).
    unsigned part = ingress_pipelines::NO_PARTITION;
    std::uint32_t cells = 0;
    if (f.ttl > 1)
        if (const int out = m_routes.lookup_outlined(f); out >= 0) {
            part = m_mmu.partition_of(in_port, static_cast<unsigned>(out));
            cells = m_mmu.cells_for(f.frame_bytes());
        }
    switch (m_pipes->offer_write(f, in_port, now, part, cells)) {
        case ingress_pipelines::verdict::START:
            return forward_written(in_port, f, now, part, cells);
        case ingress_pipelines::verdict::WAIT:
            return m_pipe_timer.arm_at(std::max(m_pipes->next_start(), now));
        case ingress_pipelines::verdict::OVERFLOW:
            return drop(in_port, f, drop_cause::PIPELINE_OVERFLOW);
    }
}

void switch_device::forward_written(unsigned in_port, frame& f, ps_t now, unsigned part,
                                    std::uint32_t cells) {
    // The route may have gone since the arrival (a link failover): forward() drops the frame.
    const int route = part == ingress_pipelines::NO_PARTITION ? -1 : m_routes.lookup_outlined(f);
    if (route < 0) return forward_pipelined(in_port, f, now);
    // Admitted: not dropped here (FCS) nor by its egress port (the route is the one looked up).
    const egress_queues& out = m_egress[static_cast<unsigned>(route)]->data_path();
    const std::uint64_t dropped = out.dropped_frames();
    const std::uint64_t fcs = m_rx_stats[in_port].drops[drop_cause::FCS_ERROR];
    forward_pipelined(in_port, f, now);
    if (out.dropped_frames() == dropped && m_rx_stats[in_port].drops[drop_cause::FCS_ERROR] == fcs)
        m_pipes->wrote(part, cells, now);
}

inline void switch_device::forward(unsigned in_port, frame& f, ps_t now) {
    const bool whole_frame = now >= f.rx_last_bit;
    if (f.fcs_error && whole_frame) return drop(in_port, f, drop_cause::FCS_ERROR);
    egress_port* const out = route(in_port, f);
    if (!out) return;
    egress_port& eg = *out;
    ps_t ready = m_clock(now + m_cfg.pipeline_latency);
    if (!whole_frame) {
        // Cut-through only into an idle port that is not faster than the ingress.
        const bool cut = eg.idle_at(ready) && eg.rate_bps() <= m_egress[in_port]->rate_bps();
        if (!cut) {
            if (f.fcs_error) {
                // The fallback receives the whole frame first, so it sees the bad FCS.
                return drop(in_port, f, drop_cause::FCS_ERROR);
            }
            // The pipeline already ran on the header; the frame leaves once its tail is in.
            ready = std::max(ready, m_clock(f.rx_last_bit));
        }
    }
    enqueue(eg, in_port, f, ready);
}

void switch_device::forward_pipelined(unsigned in_port, frame& f, ps_t now) {
    forward(in_port, f, now);
}

bool switch_device::receive_control(unsigned in_port, frame& f) {
    switch (f.kind) {
        case frame_kind::PAUSE:
        case frame_kind::PFC:
            // MAC control (EtherType 0x8808) is link-local: the port's control logic takes it,
            // never the forwarding path. receive() counted it with the data (and dropped it as
            // fcs_error if corrupted): take it back out of the data counts. Only received
            // frames get here: a block sends MAC control with send_control(), never emit().
            m_rx_stats[in_port].frames--;
            m_rx_stats[in_port].bytes -= f.frame_bytes();
            m_egress[in_port]->receive_control(f);
            return true;
        case frame_kind::CNM:
        case frame_kind::BCN:
        case frame_kind::CREDIT:
            // Dispatch point of congestion notifications and credits (802.1Qau CNM, BCN,
            // FERA, credit transports; reached when they carry ttl <= 1): no switch-side
            // consumer yet, so they are handled like data (TTL drop, else routed).
            return false;
        default:
            return false;
    }
}

void switch_device::emit(frame& f, unsigned from_port, ps_t at) {
    // Handed over later, from the timer: the emitting policy is inside its port's decision.
    m_generated++;
    m_emitted.push_back({&f, from_port, at});
    m_emit_timer.arm_at(m_emitted.front().at);
}

void switch_device::on_emitted() {
    const ps_t now = now_ps();
    while (!m_emitted.empty() && m_emitted.front().at <= now) {
        const emitted e = m_emitted.pop_front();
        if (egress_port* eg = route(e.from_port, *e.f))
            enqueue(*eg, e.from_port, *e.f, m_clock(now + m_cfg.pipeline_latency));
    }
    if (!m_emitted.empty()) m_emit_timer.arm_at(m_emitted.front().at);
}

void switch_device::add_drops(drop_counters& d) const {
    for (const auto& r : m_rx_stats) d += r.drops;
    for (const auto& e : m_egress) d += e->drops();
}

std::uint64_t switch_device::frames_held() const {
    std::uint64_t n = m_emitted.size();  // built, not yet forwarded
    if (m_pipes) n += m_pipes->held_frames();
    for (const auto& e : m_egress) n += e->queued_frames();
    return n;
}

void switch_device::check_invariants() const {
    std::vector<mmu_ticket> held;
    for (const auto& e : m_egress) e->data_path().collect_tickets(held);
    if (std::string why = m_mmu.audit(held); !why.empty())
        throw invariant_violation(std::string(name()) + " MMU", now_ps(), why);
    for (unsigned p = 0; p < m_egress.size(); ++p) {
        const auto& loss = m_egress[p]->data_path().lossless_losses();
        if (!loss.frames) continue;
        std::string v = std::to_string(loss.frames) + " frame(s) of lossless PG " +
                        std::to_string(loss.pg) + " dropped, the first from queue " +
                        std::to_string(loss.queue) + " as " +
                        std::string(drop_cause_name(loss.cause)) +
                        " (only headroom_exhausted, the PFC watchdog's drop action and a link "
                        "going down may drop a lossless class's frames)";
        if (!m_mmu.queue_lossless(loss.queue))
            v += "; queue " + std::to_string(loss.queue) +
                 " is lossy: is it missing from switch.mmu.lossless_queues?";
        throw invariant_violation(std::string(m_egress[p]->name()), loss.first_at, v);
    }
}

void switch_device::report_stats(nlohmann::json& out) const {
    const std::uint64_t cell = m_mmu.cell_bytes();
    auto pool_json = [&](unsigned pool) {
        return nlohmann::json{
            {"size_cells", m_mmu.pool_cells(pool)},
            {"ingress_used_cells", m_mmu.ingress_pool(pool).cells},
            {"ingress_peak_cells", m_mmu.ingress_pool(pool).peak_cells},
            {"egress_used_cells", m_mmu.egress_pool(pool).cells},
            {"egress_peak_cells", m_mmu.egress_pool(pool).peak_cells},
            {"egress_peak_cell_bytes", m_mmu.egress_pool(pool).peak_cells * cell}};
    };
    out = nlohmann::json::object();
    if (m_cfg.chip != "generic") out["chip"] = m_cfg.chip;
    out["buffer_bytes"] = m_cfg.buffer_bytes;
    out["cell_bytes"] = cell;
    out["total_cells"] = m_mmu.total_cells();
    out["used_cells"] = m_mmu.used_cells();
    out["peak_cells"] = m_mmu.peak_cells();
    out["buffer_used_cell_bytes"] = m_mmu.used_cells() * cell;
    out["buffer_peak_cell_bytes"] = m_mmu.peak_cells() * cell;
    out["pools"] = {{"lossy", pool_json(LOSSY_POOL)},
                    {"lossless", pool_json(LOSSLESS_POOL)},
                    {"headroom",
                     {{"size_cells", m_mmu.headroom_pool_cells()},
                      {"used_cells", m_mmu.headroom_pool().cells},
                      {"peak_cells", m_mmu.headroom_pool().peak_cells}}}};
    // Pools 2 and 3 only when configured (a PG or queue in an empty pool is a config error).
    for (unsigned p = 2; p < SERVICE_POOLS; ++p)
        if (m_mmu.pool_cells(p)) out["pools"]["pool" + std::to_string(p)] = pool_json(p);
    if (m_mmu.partitions() > 1) {
        nlohmann::json parts = nlohmann::json::array();
        for (unsigned k = 0; k < m_mmu.partitions(); ++k) {
            const mmu& part = m_mmu.partition(k);
            parts.push_back({{"total_cells", part.total_cells()},
                             {"used_cells", part.used_cells()},
                             {"peak_cells", part.peak_cells()},
                             {"buffer_peak_cell_bytes", part.peak_cells() * cell}});
        }
        out["partitions"] = std::move(parts);
    }
    if (m_pipes) {
        // Utilisation: service time over the run so far (a saturated pipeline reads 1).
        const double elapsed = double(now_ps());
        nlohmann::json pipes = nlohmann::json::array();
        for (unsigned i = 0; i < m_pipes->count(); ++i) {
            const ingress_pipelines::stats& st = m_pipes->lane_stats(i);
            pipes.push_back(
                {{"frames", st.frames},
                 {"bytes", st.bytes},
                 {"waited", st.waited},
                 {"overflow_drops", st.overflow},
                 {"input_buffer_bytes", m_pipes->held_bytes(i)},
                 {"input_buffer_peak_bytes", st.peak_buffer_bytes},
                 {"utilisation",
                  elapsed > 0 ? double(m_pipes->busy_time(i, now_ps())) / elapsed : 0.0}});
        }
        out["pipelines"] = std::move(pipes);
    }
    if (m_egress_pipes) {
        const double elapsed = double(now_ps());
        nlohmann::json pipes = nlohmann::json::array();
        for (unsigned i = 0; i < m_egress_pipes->count(); ++i) {
            const egress_pipelines::stats& st = m_egress_pipes->lane_stats(i);
            pipes.push_back(
                {{"frames", st.frames},
                 {"bytes", st.units},
                 {"turns", st.turns},
                 {"waiting_ports", m_egress_pipes->waiting_ports(i)},
                 {"utilisation",
                  elapsed > 0 ? double(m_egress_pipes->busy_time(i, now_ps())) / elapsed : 0.0}});
        }
        out["egress_pipelines"] = std::move(pipes);
    }
    const bool writes = m_pipes && m_pipes->writes_limited();
    if (writes || m_reads) {
        // Per partition: frames and cells written / read, and the share of time the port was busy.
        const ps_t now = now_ps();
        const double elapsed = double(now);
        const auto share = [&](ps_t busy) { return elapsed > 0 ? double(busy) / elapsed : 0.0; };
        nlohmann::json parts = nlohmann::json::array();
        for (unsigned k = 0; k < m_mmu.partitions(); ++k) {
            nlohmann::json part = nlohmann::json::object();
            if (writes) {
                const ingress_pipelines::write_stats& w = m_pipes->partition_writes(k);
                part["write"] = {{"frames", w.frames},
                                 {"cells", w.cells},
                                 {"utilisation", share(m_pipes->write_busy_time(k, now))}};
            }
            if (m_reads) {
                const cell_reads::stats& r = m_reads->partition_stats(k);
                part["read"] = {{"frames", r.frames},
                                {"cells", r.units},
                                {"turns", r.turns},
                                {"waiting_ports", m_reads->waiting_ports(k)},
                                {"utilisation", share(m_reads->busy_time(k, now))}};
            }
            parts.push_back(std::move(part));
        }
        out["cell_bandwidth"] = std::move(parts);
    }
    nlohmann::json ports = nlohmann::json::array();
    for (unsigned p = 0; p < m_egress.size(); ++p) {
        const egress_port& e = *m_egress[p];
        std::uint64_t tx_frames = 0, tx_bytes = 0, marked = 0;
        for (unsigned q = 0; q < e.queues(); ++q) {
            tx_frames += e.stats_of(q).tx_frames;
            tx_bytes += e.stats_of(q).tx_bytes;
            marked += e.stats_of(q).ce_marked;
        }
        drop_counters d = e.drops();
        d += m_rx_stats[p].drops;
        nlohmann::json pg = nlohmann::json::array();
        for (unsigned g = 0; g < PRIORITY_GROUPS; ++g) {
            const auto& o = m_mmu.pg_occupancy(p, g);
            const auto& h = m_mmu.pg_headroom(p, g);
            if (o.peak_cells == 0 && h.peak_cells == 0) continue;
            pg.push_back({{"pg", g},
                          {"cells", o.cells},
                          {"peak_cells", o.peak_cells},
                          {"headroom_cells", h.cells},
                          {"headroom_peak_cells", h.peak_cells}});
            if (!m_generators.empty()) {
                pg.back()["xoff"] = bool(m_mmu.xoff_pgs(p) >> g & 1);
                pg.back()["headroom_limit_cells"] = m_mmu.pg_headroom_limit(p, g);
            }
        }
        nlohmann::json pj = {{"port", p},
                             {"rate_bps", e.rate_bps()},
                             {"rx_frames", m_rx_stats[p].frames},
                             {"rx_bytes", m_rx_stats[p].bytes},
                             {"tx_frames", tx_frames},
                             {"tx_bytes", tx_bytes},
                             {"ce_marked", marked},
                             {"queued_frames", e.queued_frames()},
                             {"queue_frame_bytes", e.queued_bytes()},
                             {"queue_peak_cell_bytes", m_mmu.port_occupancy(p).peak_cells * cell},
                             {"cells", m_mmu.port_occupancy(p).cells},
                             {"peak_cells", m_mmu.port_occupancy(p).peak_cells},
                             {"ingress_pgs", std::move(pg)},
                             {"drops", drops_to_json(d)}};
        e.report_stats(pj);
        if (!m_generators.empty()) report_generation(p, pj["flow_control"]);
        ports.push_back(std::move(pj));
    }
    out["ports"] = std::move(ports);
}

}  // namespace fabricsim::sw
