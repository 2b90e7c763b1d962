#pragma once
/// Deterministic per-component random numbers: a std::mt19937_64 seeded from (seed, name).
/// Distributions are written out here (not std::*_distribution, whose results differ between
/// standard libraries) so that the same seed gives the same run on any machine.
#include <cmath>
#include <cstdint>
#include <random>
#include <string_view>

namespace fabricsim {

std::uint64_t hash_name(std::string_view name);
std::uint64_t splitmix64(std::uint64_t x);
/// Uniform in [0, 1) from the top 53 bits of a random 64-bit word.
inline double unit_interval(std::uint64_t bits) {
    return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

class rng
{
public:
    rng(std::uint64_t seed, std::string_view name) : m_gen(splitmix64(seed ^ hash_name(name))) {}

    std::uint64_t next() { return m_gen(); }
    /// Uniform in [0, 1) with 53 random bits.
    double uniform() { return unit_interval(m_gen()); }
    /// Uniform integer in [0, n) (n > 0), without modulo bias.
    std::uint64_t below(std::uint64_t n);
    /// Exponential with the given mean.
    double exponential(double mean) { return -mean * std::log1p(-uniform()); }
    /// Pareto with shape a and the given mean (a > 1).
    double pareto(double shape, double mean) {
        const double xm = mean * (shape - 1.0) / shape;
        return xm / std::pow(1.0 - uniform(), 1.0 / shape);
    }
    bool bernoulli(double p) { return uniform() < p; }

private:
    std::mt19937_64 m_gen;
};

}  // namespace fabricsim
