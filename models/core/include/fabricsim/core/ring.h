#pragma once
/// FIFO ring buffer that grows by doubling and never shrinks, so steady-state push/pop do not
/// allocate (std::deque allocates and frees blocks as it moves). An emptied ring restarts at
/// its first slot. 24 bytes (pointer and three
/// 32-bit indices), so a switch queue's ring and its counters share one cache line.
/// With INLINE > 0 the first INLINE slots live in the ring itself (a power of two; the ring
/// can then be neither copied nor moved): a FIFO that mostly holds a few entries, such as a
/// link direction's frames in flight, then costs no second cache line (and no allocation)
/// until it first grows.
#include <cstdint>
#include <memory>
#include <utility>

namespace fabricsim {

namespace detail {
/// The ring's slots: inline first (N > 0), else on the heap from the start.
template <typename T, std::uint32_t N>
struct ring_slots {
    static_assert((N & (N - 1)) == 0, "inline slots: a power of two");
    explicit ring_slots(std::uint32_t) {}
    ring_slots(const ring_slots&) = delete;
    ring_slots& operator=(const ring_slots&) = delete;
    static std::uint32_t capacity(std::uint32_t) { return N; }
    T* get() const { return buf; }
    void reset(T* p) {
        heap.reset(p);
        buf = p;
    }
    T* buf = inline_slots;
    std::unique_ptr<T[]> heap;
    T inline_slots[N];
};
template <typename T>
struct ring_slots<T, 0> {
    explicit ring_slots(std::uint32_t n) : heap(new T[n]) {}
    static std::uint32_t capacity(std::uint32_t initial) { return initial; }
    T* get() const { return heap.get(); }
    void reset(T* p) { heap.reset(p); }
    std::unique_ptr<T[]> heap;
};
}  // namespace detail

template <typename T, std::uint32_t INLINE = 0>
class ring
{
public:
    /// `initial`: the first capacity (rounded up to a power of two); INLINE > 0 ignores it.
    explicit ring(std::uint32_t initial = 16)
        : m_mask(round_up(detail::ring_slots<T, INLINE>::capacity(initial)) - 1),
          m_buf(m_mask + 1) {}

    bool empty() const { return m_size == 0; }
    std::uint32_t size() const { return m_size; }
    T& front() { return m_buf.get()[m_head]; }
    const T& front() const { return m_buf.get()[m_head]; }
    T& back() { return m_buf.get()[(m_head + m_size - 1) & m_mask]; }
    T& operator[](std::uint32_t i) { return m_buf.get()[(m_head + i) & m_mask]; }
    const T& operator[](std::uint32_t i) const { return m_buf.get()[(m_head + i) & m_mask]; }

    void push_back(T v) {
        if (m_size == m_mask + 1) grow();
        m_buf.get()[(m_head + m_size) & m_mask] = std::move(v);
        ++m_size;
    }
    T pop_front() {
        T v = std::move(m_buf.get()[m_head]);
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
        m_buf.reset(next.release());
        m_head = 0;
        m_mask = 2 * n - 1;
    }

    std::uint32_t m_mask;
    std::uint32_t m_head = 0;
    std::uint32_t m_size = 0;
    detail::ring_slots<T, INLINE> m_buf;
};

}  // namespace fabricsim
