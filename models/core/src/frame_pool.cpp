#include "fabricsim/core/frame_pool.h"

namespace fabricsim {

frame_pool* frame_pool::s_current = nullptr;

void frame_pool::grow() {
    m_chunks.emplace_back(new frame[m_chunk]);
    frame* c = m_chunks.back().get();
    for (std::size_t i = m_chunk; i-- > 0;) {
        c[i].pool_next = m_free;
        m_free = &c[i];
    }
}

frame_pool& frame_pool::global() {
    static frame_pool pool;  // blocks built outside any platform
    return pool;
}

}  // namespace fabricsim
