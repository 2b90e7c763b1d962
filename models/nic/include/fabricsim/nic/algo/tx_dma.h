#pragma once
/// The NIC's TX DMA engine (plain C++, no SystemC): descriptor rings the host posts into, the
/// descriptor fetch, the payload reads over the PCIe link (algo/pcie_link.h), LSO segmentation
/// (algo/lso.h) and the on-NIC TX packet buffer that bounds how far reads run ahead of the wire.
///
/// Timing model (all times in ps, every PCIe call made at the engine's `now`, so the link sees
/// them in time order):
///  - post(ring, send, at): the host writes a descriptor and rings the doorbell at `at`; the NIC
///    sees it at at + doorbell_latency (an MMIO write; its link time is ignored).
///  - Fetch: a ring with no fetch outstanding reads all its visible, unfetched descriptors (at
///    most fetch_burst) in one DMA read of n x descriptor_bytes; they are usable when it ends.
///    One fetch per ring at a time (Intel's prefetch with PTHRESH/HTHRESH reduced to one).
///  - Payload: fetched descriptors are read in ring order, the rings served round robin one
///    frame at a time, while the frame fits in the TX buffer (a frame always goes when the
///    buffer is empty). A plain send reads its frame (L2 header and payload); an LSO send reads
///    the header once with its first segment and then each segment's payload, and the engine
///    makes the segment frames (lso_make_segment). A frame is at the MAC `tx_pipeline` after
///    its read ends. The descriptor's ring slot frees when its last byte has been read (its
///    write-back: Intel's DD bit once the data is in the packet buffer).
///  - The MAC frees a frame's buffer bytes when it commits the frame to the wire (mac_took).
/// Ignores: descriptor write-back and doorbell link time, head write-back, context descriptors,
/// scatter-gather (a send is one buffer) and the NIC clock.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fabricsim/core/frame.h"
#include "fabricsim/core/param_error.h"
#include "fabricsim/core/ring.h"
#include "fabricsim/nic/algo/pcie_link.h"

namespace fabricsim::nic {

struct tx_dma_config {
    std::uint32_t rings = 1;                  ///< TX rings; a frame uses ring priority % rings
    std::uint32_t ring_size = 1024;           ///< descriptors per ring
    std::uint32_t descriptor_bytes = 16;      ///< one TX descriptor (Intel advanced, mlx5 WQE 64)
    std::uint32_t fetch_burst = 32;           ///< descriptors one fetch reads at most
    std::uint64_t tx_buffer = 160 * 1024;     ///< on-NIC TX packet buffer (82599 TXPBSIZE default)
    ps_t doorbell_latency = 150 * PS_PER_NS;  ///< host MMIO write to the NIC seeing it
    ps_t tx_pipeline = 50 * PS_PER_NS;        ///< payload in the NIC to the MAC

    using error = param_error;
    std::optional<error> validate() const;
};

/// Where the engine's frames go (the NIC adapter).
class tx_dma_sink
{
public:
    virtual ~tx_dma_sink() = default;
    /// A frame for an LSO segment (from the pool).
    virtual frame& dma_new_frame() = 0;
    /// The LSO send `f` has been segmented: return it to the pool.
    virtual void dma_release(frame& f) = 0;
    /// `f` is at the MAC at `ready` (>= now; non-decreasing over calls).
    virtual void dma_ready(frame& f, ps_t ready) = 0;
    /// Descriptors left the rings (the host may post again).
    virtual void dma_ring_freed() {}
};

class tx_dma
{
public:
    static constexpr ps_t NEVER = ~ps_t(0);
    /// `link` is shared with the RX path (it must outlive the engine).
    tx_dma(const tx_dma_config& cfg, pcie_link& link);

    /// The host posts `f` on `ring` with its doorbell at `at`; `mss` > 0 makes it an LSO send
    /// (f.payload_bytes split into mss segments). False when the ring is full (f not taken).
    bool post(unsigned ring, frame& f, std::uint32_t mss, ps_t at);
    /// Does everything due at `now`: ends fetches, reads payloads while the buffer has room,
    /// starts fetches. Returns when it must run again (NEVER: only after a post or mac_took).
    ps_t run(ps_t now, tx_dma_sink& sink);
    /// The MAC committed a frame of `bytes` (frame_bytes) the engine produced: buffer space.
    void mac_took(std::uint32_t bytes) { m_buffered -= bytes; }
    /// A frame in the buffer grew by `bytes` after the engine made it (a BCN rate-regulator tag
    /// added on the way to the MAC): mac_took() will free them too.
    void frame_grew(std::uint32_t bytes) { m_buffered += bytes; }

    /// Descriptors posted and not yet read, on all rings (what the host sees as ring use).
    std::uint32_t descriptors() const { return m_descriptors; }
    /// Frames the posted descriptors still hold (an LSO send: its segments not yet read).
    std::uint64_t frames_pending() const { return m_frames_pending; }
    std::uint32_t free_slots(unsigned ring) const {
        return m_cfg.ring_size - m_rings[ring].q.size();
    }
    std::uint64_t buffered() const { return m_buffered; }
    const tx_dma_config& config() const { return m_cfg; }

    struct counters {
        std::uint64_t posts = 0;
        std::uint64_t lso_posts = 0;
        std::uint64_t lso_segments = 0;
        std::uint64_t fetches = 0;             ///< descriptor fetch reads
        std::uint64_t fetched = 0;             ///< descriptors they read
        std::uint64_t frames = 0;              ///< frames handed to the MAC
        std::uint64_t payload_bytes_read = 0;  ///< bytes of payload reads
        std::uint64_t buffer_stalls = 0;       ///< reads that waited for buffer space
        std::uint64_t buffer_peak = 0;         ///< bytes
        std::uint32_t ring_peak = 0;           ///< descriptors in one ring
        ps_t ready_delay_sum = 0;              ///< doorbell to MAC-ready, summed over frames
        ps_t ready_delay_max = 0;
    };
    const counters& stats() const { return m_stats; }

    /// One ring's indices (mod 2^32 in the registers): descriptors posted (tail) and fully
    /// read (head), and the most in use at once.
    struct ring_indices {
        std::uint64_t posted = 0;
        std::uint64_t done = 0;
        std::uint32_t peak = 0;
    };
    const ring_indices& indices(unsigned ring) const { return m_rings[ring].idx; }

private:
    struct descriptor {
        frame* f = nullptr;
        ps_t visible = 0;        ///< doorbell seen
        std::uint32_t mss = 0;   ///< 0: not LSO
        std::uint32_t next = 0;  ///< LSO: next segment to read
    };
    struct tx_ring {
        ring<descriptor> q;          ///< posted, not yet fully read; the first `fetched` usable
        std::uint32_t fetched = 0;   ///< descriptors at the head that have been fetched
        std::uint32_t fetching = 0;  ///< descriptors of the outstanding fetch (after fetched)
        ps_t fetch_done = 0;
        ring_indices idx;
    };
    /// Reads the next frame of ring r's head descriptor if the buffer has room.
    bool read_one(tx_ring& r, ps_t now, tx_dma_sink& sink);

    tx_dma_config m_cfg;
    pcie_link& m_link;
    std::vector<tx_ring> m_rings;
    unsigned m_next_ring = 0;  ///< round robin among rings for payload reads
    std::uint32_t m_descriptors = 0;
    std::uint64_t m_frames_pending = 0;
    std::uint64_t m_buffered = 0;
    counters m_stats;
};

}  // namespace fabricsim::nic
