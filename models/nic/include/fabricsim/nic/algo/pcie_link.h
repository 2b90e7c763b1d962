#pragma once
/// The NIC's PCIe link and DMA timing (plain C++, no SystemC): how long a descriptor fetch, a
/// payload read or a write-back takes on a link of a given generation and width, and how the DMA
/// reads and writes of every ring share that link. docs/models/nic.md, "PCIe and DMA timing".
///
/// Timing model. The link is full duplex: two serialised directions, each a FIFO in call order.
///  - upstream (device -> host) carries memory-read requests (MRd, mrd_tlp_bytes each) and
///    memory writes (MWr, mwr_overhead_bytes + payload);
///  - downstream (host -> device) carries completions with data (CplD, cpld_overhead_bytes +
///    payload).
/// A TLP of w bytes occupies its direction for w x 8 x enc / (GT/s x lanes) / (1 - overhead)
/// (enc 10/8 for gen 1-2, 130/128 from gen 3; overhead = link_overhead_ppm / 1e6, the share of
/// link time that ACK and UpdateFC DLLPs and SKP ordered sets take, as in the pcie-bench model).
/// It starts at max(ready, direction free); the end is rounded down to a whole ps and the
/// fraction carried to the next TLP of a busy period, so back-to-back TLPs run at the exact rate.
///  - dma_read: requests of <= max_read_request bytes (addresses taken as aligned). Each request
///    first needs a tag (at most max_outstanding_reads in flight; a tag frees when the request's
///    last completion has arrived, and a request without one waits for the oldest), then goes
///    upstream. read_latency after its last byte reached the root complex the host starts
///    answering: completions of max_payload bytes (or read_completion_boundary bytes with
///    completions_at_rcb), queued downstream back to back. The read ends with its last
///    completion.
///  - dma_write: posted MWr TLPs of <= max_payload bytes upstream; the data is in host memory
///    write_latency after the last TLP's last byte.
/// Calls come in non-decreasing `now`; a call with an earlier `now` is taken as made at the
/// latest `now` seen (counted in late_calls). FIFO in call order means a request that waits for
/// a tag also holds back later upstream TLPs (one DMA request queue).
/// Ignored: propagation and PHY/controller pipeline latency (folded into read_latency), replay
/// (no bit errors), ACK/NAK and credit round trips (flow-control credits never run out), the
/// DLLPs' placement in time (only their share of bandwidth), unaligned addresses, IOMMU/ATS,
/// host memory bandwidth and NUMA, MMIO from the host (doorbells) and the device's own DMA
/// engine limits. No allocation after construction.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fabricsim/core/param_error.h"
#include "fabricsim/core/units.h"

namespace fabricsim::nic {

/// A PCIe link between the NIC and its root port. Sizes in bytes, times in ps. The member
/// defaults are gen3_x16().
struct pcie_config {
    std::uint32_t generation = 3;                 ///< 1..5 (2.5, 5, 8, 16, 32 GT/s per lane)
    std::uint32_t lanes = 16;                     ///< 1, 2, 4, 8 or 16
    std::uint32_t max_payload = 256;              ///< MPS, 128..4096, a power of 2
    std::uint32_t max_read_request = 512;         ///< MRRS, 128..4096, a power of 2
    std::uint32_t read_completion_boundary = 64;  ///< RCB, 64 or 128
    bool completions_at_rcb = false;   ///< completions of RCB bytes instead of MPS (older hosts)
    std::uint32_t mrd_tlp_bytes = 24;  ///< MRd on the wire (4DW header, 64-bit address)
    std::uint32_t mwr_overhead_bytes = 24;     ///< MWr bytes besides the payload (4DW header)
    std::uint32_t cpld_overhead_bytes = 20;    ///< CplD bytes besides the payload (3DW header)
    std::uint32_t link_overhead_ppm = 97'839;  ///< DLLP + SKP share of each direction, < 1e6
    ps_t read_latency = 540 * PS_PER_NS;   ///< request at the root complex -> first completion out
    ps_t write_latency = 200 * PS_PER_NS;  ///< last MWr byte at the root complex -> in memory
    std::uint32_t max_outstanding_reads = 256;  ///< tags, 1..1024

    /// Every figure from the pcie-bench model and data (Neugebauer et al., SIGCOMM 2018) unless
    /// said otherwise. The three share: MPS 256, MRRS 512, RCB 64 with completions at MPS (the
    /// defaults of the model's pcie_bw.py and nic_bw.py); TLP overhead 8 B of framing,
    /// sequence number and LCRC plus a 16 B (MRd, MWr, 64-bit address) or 12 B (CplD) header,
    /// no ECRC (model/pcie.py; Intel AN 690: 5-6 DW per TLP); 256 tags (8-bit Extended Tag);
    /// read_latency 540 ns: median 546 ns of an 8 B DMA read on an NFP-6000 (gen3 x8) in a Xeon
    /// E5-2630v4, IOMMU off (pcie-bench/data), less ~7 ns of wire; write_latency 200 ns: the
    /// same system's 8 B write-then-read takes 214 ns more than the read alone (the read waits
    /// for the posted write to reach memory).
    /// link_overhead_ppm: the model's ACK + UpdateFC DLLPs (8 B per the spec's Ack latency limit
    /// for the width and MPS, twice) + SKP (4 B per 1538): x8 81 419 ppm (57.88 Gb/s of TLPs at
    /// gen3 x8, as the model computes), x16 97 839 ppm.
    static pcie_config gen3_x8();
    static pcie_config gen3_x16();  ///< the usual slot of a 100G NIC
    /// Gen4 uses the gen3 DLLP table (as the model does). The host part of a read does not scale
    /// with the link rate, and no gen4 measurement was at hand: read and write latency are the
    /// gen3 figures [assumption].
    static pcie_config gen4_x16();

    /// Raw bit rate per direction after line encoding, rounded down to a whole bit/s (gen3 x16:
    /// 8 GT/s x 16 x 128/130 = 126 030 769 230). Ignores link_overhead_ppm.
    std::uint64_t raw_bps() const;

    using error = param_error;
    /// The first field that is out of range, or nothing if the set is usable.
    std::optional<error> validate() const;
};

/// One PCIe link with its DMA engine's tags. Each call schedules all the TLPs of one DMA
/// operation, advances the link and returns absolute times.
class pcie_link
{
public:
    /// Throws std::invalid_argument ("pcie_config.<field>: <reason>") if cfg does not validate.
    explicit pcie_link(const pcie_config& cfg);

    /// Reads `bytes` of host memory, asked at `now`: when the last byte is at the device (`now`
    /// for 0 bytes).
    ps_t dma_read(ps_t now, std::uint64_t bytes);
    /// Writes `bytes` to host memory, started at `now`: when the last byte is in host memory
    /// (`now` for 0 bytes).
    ps_t dma_write(ps_t now, std::uint64_t bytes);

    /// Time `bytes` take on one direction at the effective rate, rounded down (no carry).
    ps_t wire_time(std::uint64_t bytes) const;
    /// When each direction has sent everything scheduled so far.
    ps_t upstream_free() const { return m_up.free; }
    ps_t downstream_free() const { return m_down.free; }
    /// Tags held by reads whose last completion ends after `t` (t >= the last call's now).
    std::uint32_t outstanding_reads(ps_t t) const;
    const pcie_config& config() const { return m_cfg; }

    struct counters {
        std::uint64_t reads = 0;  ///< dma_read calls
        std::uint64_t writes = 0;
        std::uint64_t bytes_read = 0;
        std::uint64_t bytes_written = 0;
        std::uint64_t read_requests = 0;  ///< MRd TLPs (upstream)
        std::uint64_t write_tlps = 0;     ///< MWr TLPs (upstream)
        std::uint64_t completions = 0;    ///< CplD TLPs (downstream)
        ps_t upstream_busy = 0;           ///< time upstream sent TLPs; utilisation = busy / elapsed
        ps_t downstream_busy = 0;
        std::uint32_t peak_outstanding_reads = 0;
        std::uint64_t tag_stalls = 0;  ///< requests that waited for a free tag
        ps_t tag_wait = 0;             ///< their total wait
        std::uint64_t late_calls = 0;  ///< calls with `now` before an earlier call's
        std::uint64_t upstream_tlps() const { return read_requests + write_tlps; }
        std::uint64_t downstream_tlps() const { return completions; }
    };
    const counters& stats() const { return m_stats; }

private:
    struct direction {
        ps_t free = 0;            ///< end of the last TLP (rounded down)
        std::uint64_t carry = 0;  ///< its fraction of a ps, x 1 / m_den
    };
    ps_t admit(ps_t now);
    ps_t send(direction& d, ps_t& busy, ps_t ready, std::uint64_t wire_bytes);
    ps_t acquire_tag(ps_t ready);
    void release_before(ps_t t);
    void hold_tag(ps_t release);

    pcie_config m_cfg;
    std::uint64_t m_num = 0;  ///< ps per byte = m_num / m_den
    std::uint64_t m_den = 1;
    direction m_up;
    direction m_down;
    std::vector<ps_t> m_tag_release;  ///< ring of release times, non-decreasing from the head
    std::uint32_t m_tag_head = 0;
    std::uint32_t m_tags_held = 0;
    ps_t m_last_now = 0;
    counters m_stats;
};

}  // namespace fabricsim::nic
