#include "fabricsim/core/frame_pool.h"

namespace fabricsim {

void frame_pool::grow() {
    m_chunks.emplace_back(new frame[m_chunk]);
    frame* c = m_chunks.back().get();
    for (std::size_t i = m_chunk; i-- > 0;) {
        c[i].pool_next = m_free;
        m_free = &c[i];
    }
}

frame_pool& frame_pool::global() {
    static frame_pool pool;
    return pool;
}

}  // namespace fabricsim
