#pragma once
/// Custom TLM-2.0 protocol for Ethernet links (ARCHITECTURE.md §3).
/// Timing: the transmitter calls nb_transport_fw(frame, BEGIN_REQ, delay) where now+delay is
/// the first bit on the wire; the link returns TLM_UPDATED with END_REQ and delay set to when
/// the wire is free again. The far end receives BEGIN_REQ (delay 0) when its receiver may act:
/// at the last bit (store-and-forward) or after the header (cut-through). Nothing goes back on
/// the backward path; control frames (PAUSE/PFC/CNM/credits) are frames on the reverse link.
/// Between a device port and a link the per-frame calls take a model-time side door instead
/// (eth_direct_fw_if, eth_rx_port::receive), found behind the sockets at the first frame; any
/// other target (test stubs) gets the TLM calls. Both paths have the same effect.
#include <cstdint>
#include <systemc>
#include <tlm>

#include "fabricsim/core/frame.h"
#include "fabricsim/core/kernel.h"

namespace fabricsim {

struct eth_protocol {
    using tlm_payload_type = frame;
    using tlm_phase_type = tlm::tlm_phase;
};

using eth_fw_if = tlm::tlm_fw_transport_if<eth_protocol>;
using eth_bw_if = tlm::tlm_bw_transport_if<eth_protocol>;
using eth_initiator_socket =
    tlm::tlm_initiator_socket<32, eth_protocol, 1, sc_core::SC_ZERO_OR_MORE_BOUND>;
using eth_target_socket =
    tlm::tlm_target_socket<32, eth_protocol, 1, sc_core::SC_ZERO_OR_MORE_BOUND>;

/// Model-time side door of a link direction, used by eth_tx_port::send_at when the target bound
/// to its socket provides it (as TLM's DMI bypasses transport calls). Same effect as
/// nb_transport_fw(BEGIN_REQ) with the first bit at `start` (>= now); returns the absolute
/// time the wire is free. Why: the per-frame path then builds no sc_time (out of line in
/// libsystemc) and makes one virtual call instead of the socket's two.
class eth_direct_fw_if
{
public:
    virtual ~eth_direct_fw_if() = default;
    virtual ps_t transmit_at(frame& f, ps_t start) = 0;
};

/// Something that receives frames on numbered ports (switch, NIC, test sink).
class frame_receiver
{
public:
    virtual ~frame_receiver() = default;
    /// Called at the time the receiver may act on `f`; the receiver owns `f` afterwards.
    virtual void receive(unsigned port, frame& f) = 0;
    /// Bytes of a frame (after the preamble) `port` needs before it acts; the link delivers
    /// then. 0 = the whole frame (store-and-forward, the default).
    virtual std::uint32_t act_after_bytes(unsigned /*port*/) const { return 0; }
};

/// Target side of a device port: forwards BEGIN_REQ to a frame_receiver.
class eth_rx_port final : public eth_fw_if
{
public:
    eth_rx_port(const char* name, frame_receiver& owner, unsigned index)
        : socket(name), m_owner(owner), m_index(index) {
        socket.bind(*this);
    }
    eth_target_socket socket;

    tlm::tlm_sync_enum nb_transport_fw(frame& f, tlm::tlm_phase& phase,
                                       sc_core::sc_time&) override {
        sc_assert(phase == tlm::BEGIN_REQ);
        receive(f);
        phase = tlm::END_REQ;
        return tlm::TLM_COMPLETED;
    }
    /// What nb_transport_fw(BEGIN_REQ) does, for a link that found this port behind its socket.
    void receive(frame& f) { m_owner.receive(m_index, f); }
    std::uint32_t act_after_bytes() const { return m_owner.act_after_bytes(m_index); }
    void b_transport(frame&, sc_core::sc_time&) override {
        sc_assert(false && "links are non-blocking");
    }
    bool get_direct_mem_ptr(frame&, tlm::tlm_dmi&) override { return false; }
    unsigned transport_dbg(frame&) override { return 0; }

private:
    frame_receiver& m_owner;
    unsigned m_index;
};

/// Initiator side of a device port. send() returns the absolute time the wire is free.
class eth_tx_port final : public eth_bw_if
{
public:
    explicit eth_tx_port(const char* name) : socket(name) { socket.bind(*this); }
    eth_initiator_socket socket;

    /// Put `f` on the wire with its first bit at now + start_delay.
    /// Returns the delay (from now) after which the transmitter may start the next frame.
    sc_core::sc_time send(frame& f, const sc_core::sc_time& start_delay) {
        tlm::tlm_phase phase = tlm::BEGIN_REQ;
        sc_core::sc_time d = start_delay;
        const auto r = socket->nb_transport_fw(f, phase, d);
        sc_assert(r == tlm::TLM_UPDATED && phase == tlm::END_REQ);
        (void)r;
        return d;
    }
    /// send() in model time: first bit at `start` (>= now); returns the absolute time the wire
    /// is free. Goes through eth_direct_fw_if when the bound target has it.
    /// Always inlined (one test and a virtual call): left to the inliner, it went out of line
    /// in every caller once the NIC gained a second caller (issue 14, +0.7% instructions).
    [[gnu::always_inline]] ps_t send_at(frame& f, ps_t start, ps_t now) {
        if (m_direct) return m_direct->transmit_at(f, start);
        return send_at_socket(f, start, now);
    }

    tlm::tlm_sync_enum nb_transport_bw(frame&, tlm::tlm_phase&, sc_core::sc_time&) override {
        return tlm::TLM_COMPLETED;
    }
    void invalidate_direct_mem_ptr(sc_dt::uint64, sc_dt::uint64) override {}

private:
    /// First call: looks for the side door; without one, the socket.
    [[gnu::noinline]] ps_t send_at_socket(frame& f, ps_t start, ps_t now) {
        if (!m_resolved) {
            m_direct = dynamic_cast<eth_direct_fw_if*>(socket.operator->());
            m_resolved = true;
            if (m_direct) return m_direct->transmit_at(f, start);
        }
        return now + to_ps(send(f, to_sc_time(start - now)));
    }
    eth_direct_fw_if* m_direct = nullptr;
    bool m_resolved = false;  ///< looked for m_direct (binding is complete by the first send)
};

}  // namespace fabricsim
