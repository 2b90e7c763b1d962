#include "fabricsim/nic/algo/tx_dma.h"

#include <algorithm>

#include "fabricsim/nic/algo/lso.h"

namespace fabricsim::nic {

std::optional<tx_dma_config::error> tx_dma_config::validate() const {
    if (rings < 1 || rings > 8) return error{"rings", "must be 1..8"};
    if (ring_size < 1 || ring_size > (1u << 16)) return error{"ring_size", "must be 1..65536"};
    if (descriptor_bytes < 4 || descriptor_bytes > 256)
        return error{"descriptor_bytes", "must be 4..256 B"};
    if (fetch_burst < 1 || fetch_burst > 1024) return error{"fetch_burst", "must be 1..1024"};
    if (tx_buffer < 2048) return error{"tx_buffer", "must be at least 2 KiB (one frame)"};
    if (doorbell_latency > PS_PER_MS) return error{"doorbell_latency", "must be <= 1 ms"};
    if (tx_pipeline > PS_PER_MS) return error{"tx_pipeline", "must be <= 1 ms"};
    return std::nullopt;
}

tx_dma::tx_dma(const tx_dma_config& cfg, pcie_link& link)
    : m_cfg(cfg), m_link(link), m_rings(cfg.rings) {}

bool tx_dma::post(unsigned ring, frame& f, std::uint32_t mss, ps_t at) {
    tx_ring& r = m_rings[ring];
    if (r.q.size() >= m_cfg.ring_size) return false;
    r.q.push_back({&f, at + m_cfg.doorbell_latency, mss, 0});
    r.idx.posted++;
    r.idx.peak = std::max(r.idx.peak, r.q.size());
    m_descriptors++;
    m_frames_pending += mss ? lso_segments(f, mss) : 1;
    m_stats.posts++;
    if (mss) m_stats.lso_posts++;
    m_stats.ring_peak = std::max(m_stats.ring_peak, r.q.size());
    return true;
}

bool tx_dma::read_one(tx_ring& r, ps_t now, tx_dma_sink& sink) {
    descriptor& d = r.q.front();
    const frame& src = *d.f;
    const bool lso = d.mss != 0;
    const std::uint32_t segments = lso ? lso_segments(src, d.mss) : 1;
    std::uint32_t frame_bytes;  // what the frame will hold in the buffer
    std::uint32_t read_bytes;   // what crosses PCIe
    if (lso) {
        const std::uint32_t header = src.header_bytes();
        const std::uint32_t payload = lso_segment_payload(src, d.mss, d.next);
        frame_bytes = std::max(header + payload, 60u) + FCS_BYTES;
        read_bytes = payload + (d.next == 0 ? header : 0);
    } else {
        frame_bytes = src.frame_bytes();
        read_bytes = src.length;
    }
    if (m_buffered != 0 && m_buffered + frame_bytes > m_cfg.tx_buffer) {
        m_stats.buffer_stalls++;
        return false;
    }
    const ps_t ready = m_link.dma_read(now, read_bytes) + m_cfg.tx_pipeline;
    m_buffered += frame_bytes;
    m_stats.buffer_peak = std::max(m_stats.buffer_peak, m_buffered);
    m_stats.payload_bytes_read += read_bytes;
    m_stats.frames++;
    m_frames_pending--;
    const ps_t delay = ready - (d.visible - m_cfg.doorbell_latency);
    m_stats.ready_delay_sum += delay;
    m_stats.ready_delay_max = std::max(m_stats.ready_delay_max, delay);
    if (!lso) {
        frame& f = *d.f;
        r.q.pop_front();
        r.idx.done++;
        r.fetched--;
        m_descriptors--;
        sink.dma_ready(f, ready);
        return true;
    }
    frame& seg = sink.dma_new_frame();
    lso_make_segment(src, d.mss, d.next, seg);
    m_stats.lso_segments++;
    if (++d.next == segments) {
        frame& big = *d.f;
        r.q.pop_front();
        r.idx.done++;
        r.fetched--;
        m_descriptors--;
        sink.dma_release(big);
    }
    sink.dma_ready(seg, ready);
    return true;
}

ps_t tx_dma::run(ps_t now, tx_dma_sink& sink) {
    for (tx_ring& r : m_rings)
        if (r.fetching && r.fetch_done <= now) {
            r.fetched += r.fetching;
            r.fetching = 0;
        }
    // Payload reads, one frame per ring in turn, until no ring can go.
    const std::uint32_t before = m_descriptors;
    const auto n = static_cast<unsigned>(m_rings.size());
    for (bool read = true; read;) {
        read = false;
        for (unsigned k = 0; k < n; ++k) {
            const unsigned i = (m_next_ring + k) % n;
            if (m_rings[i].fetched == 0) continue;
            // A full buffer stops every ring: the next in turn keeps its turn.
            read = read_one(m_rings[i], now, sink);
            if (read) m_next_ring = (i + 1) % n;
            break;
        }
    }
    if (m_descriptors != before) sink.dma_ring_freed();
    // Fetches, and when to come back.
    ps_t next = NEVER;
    for (tx_ring& r : m_rings) {
        if (r.fetching == 0) {
            const std::uint32_t unfetched = r.q.size() - r.fetched;
            std::uint32_t visible = 0;
            while (visible < unfetched && visible < m_cfg.fetch_burst &&
                   r.q[r.fetched + visible].visible <= now)
                ++visible;
            if (visible) {
                r.fetching = visible;
                r.fetch_done =
                    m_link.dma_read(now, std::uint64_t(visible) * m_cfg.descriptor_bytes);
                m_stats.fetches++;
                m_stats.fetched += visible;
            } else if (unfetched) {
                next = std::min(next, r.q[r.fetched].visible);
            }
        }
        if (r.fetching) next = std::min(next, r.fetch_done);
    }
    return next;
}

}  // namespace fabricsim::nic
