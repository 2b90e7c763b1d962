#pragma once
/// Free-list pool of frames. Grows in chunks; in steady state acquire/release never allocate.
/// Each platform has its own (its blocks take frame_pool::current() when built, under the
/// platform's scope), so its outstanding() counts only its frames; blocks built outside any
/// platform (testbenches, a virtual platform's own sc_main) share global().
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

    /// The process's default pool.
    static frame_pool& global();
    /// The pool blocks built now take: the innermost scope's, else global().
    static frame_pool& current() { return s_current ? *s_current : global(); }
    /// Makes `p` current while it lives (a platform builds its blocks under one).
    class scope
    {
    public:
        explicit scope(frame_pool& p) : m_prev(s_current) { s_current = &p; }
        ~scope() { s_current = m_prev; }
        scope(const scope&) = delete;
        scope& operator=(const scope&) = delete;

    private:
        frame_pool* m_prev;
    };

private:
    void grow();

    static frame_pool* s_current;  // set by scope, during elaboration only
    std::size_t m_chunk;
    std::vector<std::unique_ptr<frame[]>> m_chunks;
    frame* m_free = nullptr;
    std::size_t m_outstanding = 0;
};

}  // namespace fabricsim
