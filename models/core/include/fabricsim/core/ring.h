#pragma once
/// FIFO ring buffer that grows by doubling and never shrinks, so steady-state push/pop do not
/// allocate (std::deque allocates and frees blocks as it moves). An emptied ring restarts at
/// its first slot. 24 bytes (pointer and three
/// 32-bit indices), so a switch queue's ring and its counters share one cache line.
#include <cstdint>
#include <memory>
#include <utility>

namespace fabricsim {

template <typename T>
class ring
{
public:
    explicit ring(std::uint32_t initial = 16)
        : m_mask(round_up(initial) - 1), m_buf(new T[m_mask + 1]) {}

    bool empty() const { return m_size == 0; }
    std::uint32_t size() const { return m_size; }
    T& front() { return m_buf[m_head]; }
    const T& front() const { return m_buf[m_head]; }
    T& back() { return m_buf[(m_head + m_size - 1) & m_mask]; }
    T& operator[](std::uint32_t i) { return m_buf[(m_head + i) & m_mask]; }
    const T& operator[](std::uint32_t i) const { return m_buf[(m_head + i) & m_mask]; }

    void push_back(T v) {
        if (m_size == m_mask + 1) grow();
        m_buf[(m_head + m_size) & m_mask] = std::move(v);
        ++m_size;
    }
    T pop_front() {
        T v = std::move(m_buf[m_head]);
        // Emptied: start again at slot 0, so a ring that once grew keeps using its first cache
        // lines while it holds a few entries, instead of cycling through all of them.
        m_head = --m_size ? (m_head + 1) & m_mask : 0;
        return v;
    }

private:
    static std::uint32_t round_up(std::uint32_t n) {
        std::uint32_t p = 1;
        while (p < n) p <<= 1;
        return p;
    }
    void grow() {
        const std::uint32_t n = m_mask + 1;
        std::unique_ptr<T[]> next(new T[2 * std::uint64_t(n)]);
        for (std::uint32_t i = 0; i < m_size; ++i) next[i] = std::move((*this)[i]);
        m_buf = std::move(next);
        m_head = 0;
        m_mask = 2 * n - 1;
    }

    std::uint32_t m_mask;
    std::uint32_t m_head = 0;
    std::uint32_t m_size = 0;
    std::unique_ptr<T[]> m_buf;
};

}  // namespace fabricsim
