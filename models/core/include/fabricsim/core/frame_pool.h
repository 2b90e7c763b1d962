#pragma once
/// Free-list pool of frames. Grows in chunks; in steady state acquire/release never allocate.
/// One pool per simulation process (the SystemC kernel elaborates once per process).
#include <cstddef>
#include <memory>
#include <vector>

#include "fabricsim/core/frame.h"

namespace fabricsim {

class frame_pool
{
public:
    explicit frame_pool(std::size_t chunk = 1024) : m_chunk(chunk) {}
    frame_pool(const frame_pool&) = delete;
    frame_pool& operator=(const frame_pool&) = delete;

    frame& acquire() {
        if (!m_free) grow();
        frame* f = m_free;
        m_free = f->pool_next;
        f->pool_next = nullptr;
        ++m_outstanding;
        return *f;
    }

    void release(frame& f) {
        f.reset();
        f.pool_next = m_free;
        m_free = &f;
        --m_outstanding;
    }

    std::size_t outstanding() const { return m_outstanding; }
    std::size_t capacity() const { return m_chunks.size() * m_chunk; }

    /// The process-wide pool used by all models.
    static frame_pool& global();

private:
    void grow();

    std::size_t m_chunk;
    std::vector<std::unique_ptr<frame[]>> m_chunks;
    frame* m_free = nullptr;
    std::size_t m_outstanding = 0;
};

}  // namespace fabricsim
