#include "fabricsim/core/rng.h"

namespace fabricsim {

std::uint64_t hash_name(std::string_view name) {
    std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a 64
    for (unsigned char c : name) {
        h ^= c;
        h *= 0x100000001b3ull;
    }
    return h;
}

std::uint64_t splitmix64(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

std::uint64_t rng::below(std::uint64_t n) {
    const std::uint64_t limit = ~0ull - (~0ull % n);
    std::uint64_t x;
    do x = m_gen();
    while (x >= limit);
    return x % n;
}

}  // namespace fabricsim
