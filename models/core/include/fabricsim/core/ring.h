#pragma once
/// FIFO ring buffer that grows by doubling and never shrinks, so steady-state push/pop do not
/// allocate (std::deque allocates and frees blocks as it moves).
#include <cstddef>
#include <utility>
#include <vector>

namespace fabricsim {

template <typename T>
class ring {
public:
    explicit ring(std::size_t initial = 16) : m_buf(round_up(initial)) {}

    bool empty() const { return m_size == 0; }
    std::size_t size() const { return m_size; }
    T& front() { return m_buf[m_head]; }
    const T& front() const { return m_buf[m_head]; }
    T& back() { return m_buf[(m_head + m_size - 1) & (m_buf.size() - 1)]; }
    T& operator[](std::size_t i) { return m_buf[(m_head + i) & (m_buf.size() - 1)]; }
    const T& operator[](std::size_t i) const { return m_buf[(m_head + i) & (m_buf.size() - 1)]; }

    void push_back(T v) {
        if (m_size == m_buf.size()) grow();
        m_buf[(m_head + m_size) & (m_buf.size() - 1)] = std::move(v);
        ++m_size;
    }
    T pop_front() {
        T v = std::move(m_buf[m_head]);
        m_head = (m_head + 1) & (m_buf.size() - 1);
        --m_size;
        return v;
    }

private:
    static std::size_t round_up(std::size_t n) {
        std::size_t p = 1;
        while (p < n) p <<= 1;
        return p;
    }
    void grow() {
        std::vector<T> next(m_buf.size() * 2);
        for (std::size_t i = 0; i < m_size; ++i) next[i] = std::move((*this)[i]);
        m_buf.swap(next);
        m_head = 0;
    }

    std::vector<T> m_buf;
    std::size_t m_head = 0;
    std::size_t m_size = 0;
};

}  // namespace fabricsim
