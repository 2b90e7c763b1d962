#pragma once
/// Statistics: named drop causes, per-block counters, and the interface through which the
/// results collector walks the module hierarchy. Models only bump counters; each block reports
/// them as nested JSON at the end (`switches.s0.ports[3].drops.port_cap`, design.md 19).
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace fabricsim {

enum class drop_cause : std::uint8_t {
    FCS_ERROR,           ///< corrupted on the wire, discarded by a store-and-forward MAC
    LINK_DOWN,           ///< transmitted while the link was down
    NO_ROUTE,            ///< no forwarding entry for the destination
    TTL_EXPIRED,         ///< IPv4 TTL reached zero
    SHARED_BUFFER_FULL,  ///< switch buffer (every cell) exhausted
    PORT_CAP,            ///< egress port's static limit exceeded
    NIC_TX_QUEUE_FULL,   ///< host offered more than the NIC TX queue holds
    INGRESS_PG_LIMIT,    ///< ingress (port, PG) shared threshold exceeded (lossy)
    INGRESS_POOL_FULL,   ///< ingress service pool's shared cells exhausted (lossy)
    HEADROOM_EXHAUSTED,  ///< lossless PG: its headroom or the headroom pool is full
    EGRESS_QUEUE_LIMIT,  ///< egress (port, queue) shared threshold exceeded
    EGRESS_POOL_FULL,    ///< egress service pool's shared cells exhausted
    AQM_DROP,            ///< RED/ECN decision on a non-ECT frame configured to drop
    PFC_WATCHDOG,        ///< PFC watchdog (drop action) on a stormed priority
    OUT_OF_SEQUENCE,     ///< go-back-N receiver (RoCE): discarded after a missing packet
    DUPLICATE,           ///< go-back-N receiver (RoCE): discarded, it had arrived before
    RX_RING_FULL,        ///< host RX ring had no free descriptor (the NIC's out-of-buffer)
    PACER_FIFO_FULL,     ///< NIC pacer's FIFO had no room for the frame
    CREDIT_DROPPED,      ///< switch credit queue full (credit-based transports)
    PIPELINE_OVERFLOW,   ///< switch ingress pipeline busy and its input buffer full
    COUNT
};

constexpr std::size_t DROP_CAUSES = static_cast<std::size_t>(drop_cause::COUNT);
std::string_view drop_cause_name(drop_cause c);

struct drop_counters {
    std::array<std::uint64_t, DROP_CAUSES> by_cause{};
    void add(drop_cause c, std::uint64_t n = 1) { by_cause[static_cast<std::size_t>(c)] += n; }
    std::uint64_t operator[](drop_cause c) const { return by_cause[static_cast<std::size_t>(c)]; }
    std::uint64_t total() const;
    drop_counters& operator+=(const drop_counters& o);
};

/// Implemented by modules that keep statistics or hold frames.
class stats_provider
{
public:
    virtual ~stats_provider() = default;
    /// Writes this block's counters (a JSON object) into `out`.
    virtual void report_stats(nlohmann::json& out) const = 0;
    /// Adds this block's drops into `drops` (for the run-wide totals).
    virtual void add_drops(drop_counters& drops) const { (void)drops; }
    /// Data frames currently held (queued, in a pipeline, on a wire).
    virtual std::uint64_t frames_held() const { return 0; }
};

nlohmann::json drops_to_json(const drop_counters& d);

}  // namespace fabricsim
