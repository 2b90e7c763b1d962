#pragma once
/// Generic receive offload as far as ACK batching needs it (plain C++, no SystemC): in-order TCP
/// segments of one flow processed in one poll are merged into one delivery of up to 64 KB, so
/// the transport sees (and acknowledges) one aggregate instead of each segment.
/// docs/models/nic.md, "RX interrupt coalescing and host CPU".
///
/// Timing model. gro_merger is an rx_sink placed between rx_cpu and the transport. Per queue it
/// holds at most max_flows open aggregates (Linux: MAX_GRO_SKBS = 8). A processed segment
///  - extends its flow's aggregate if it starts where the aggregate ends, has the same CE bit
///    (Linux's inet_gro_receive flushes on any TOS difference) and the payload stays within
///    max_payload;
///  - otherwise flushes that aggregate (at the segment's time) and opens a new one; with no
///    free slot the oldest aggregate of the queue is flushed first;
///  - with no payload (pure ACKs, control) flushes its flow's aggregate and passes on alone.
/// Every poll end (budget used up or NAPI complete) flushes the queue's aggregates, oldest
/// first, at the poll end's time. An aggregate is handed on at the time of the flush that ends
/// it, which is never earlier than its last segment's processing. No CPU cost is charged here
/// (rx_cpu's poll_cost stands for the per-batch stack work). Ignored: IP/TCP header checks
/// beyond flow and sequence (flags, options, timestamps), GRO's timeout-based flush of old
/// aggregates, hardware LRO.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fabricsim/core/param_error.h"
#include "fabricsim/host/algo/rx_cpu.h"

namespace fabricsim::host {

struct gro_params {
    std::uint32_t max_payload = 65536;  ///< payload bytes per aggregate (GRO_MAX_SIZE, 64 KB)
    std::uint32_t max_flows = 8;        ///< open aggregates per queue (MAX_GRO_SKBS)

    using error = param_error;
    std::optional<error> validate() const;
};

/// Merged segments of one flow, as handed to the transport.
struct gro_aggregate {
    std::uint32_t flow = 0;
    std::uint32_t seq = 0;       ///< first payload byte
    std::uint32_t payload = 0;   ///< payload bytes in total
    std::uint32_t segments = 0;  ///< frames merged
    std::uint64_t bytes = 0;     ///< frame bytes in total
    std::uint64_t first_cookie = 0;
    std::uint64_t last_cookie = 0;
    ps_t at = 0;      ///< handed to the transport
    bool ce = false;  ///< every segment's CE bit
};

class gro_output
{
public:
    virtual ~gro_output() = default;
    virtual void on_aggregate(unsigned queue, const gro_aggregate& a) = 0;
    /// Segment `cookie` extended the aggregate whose last segment was `prev` (a caller that
    /// hands on the segments themselves chains them here).
    virtual void on_merge(std::uint64_t prev, std::uint64_t cookie) {
        (void)prev;
        (void)cookie;
    }
};

/// GRO for every queue of one host. No allocation after construction.
class gro_merger : public rx_sink
{
public:
    /// Throws std::invalid_argument ("gro_params.<field>: <reason>").
    gro_merger(unsigned queues, const gro_params& p, gro_output& out);

    void on_delivery(unsigned queue, const rx_packet& p, ps_t at) override;
    void on_poll_end(unsigned queue, ps_t at, bool complete) override;

    /// Open aggregates of `queue`.
    std::uint32_t held(unsigned queue) const;

    struct counters {
        std::uint64_t segments = 0;       ///< frames in
        std::uint64_t aggregates = 0;     ///< deliveries out (a lone frame is one too)
        std::uint64_t merged = 0;         ///< frames that extended an aggregate
        std::uint64_t flush_poll = 0;     ///< aggregates ended by a poll end
        std::uint64_t flush_gap = 0;      ///< ended by an out-of-order segment of the flow
        std::uint64_t flush_tos = 0;      ///< ended by a segment with the other CE bit
        std::uint64_t flush_full = 0;     ///< ended because the next segment did not fit
        std::uint64_t flush_evict = 0;    ///< ended to free a slot for another flow
        std::uint64_t flush_control = 0;  ///< ended by a frame without payload
        double mean_segments() const {
            return aggregates ? double(segments) / double(aggregates) : 0.0;
        }
    };
    const counters& stats() const { return m_stats; }

private:
    struct open_agg {
        gro_aggregate a;
        std::uint64_t order = 0;  ///< when it was opened (oldest flushes first)
        bool used = false;
    };
    open_agg* slots(unsigned queue) { return &m_open[std::size_t(queue) * m_p.max_flows]; }
    void flush(unsigned queue, open_agg& o, ps_t at);

    gro_params m_p;
    gro_output* m_out;
    std::vector<open_agg> m_open;
    std::uint64_t m_next_order = 0;
    counters m_stats;
};

}  // namespace fabricsim::host
