#pragma once
/// Physical units used everywhere: time in integer picoseconds, rates in bit/s, sizes in bytes.
/// Parsing of unit strings ("10Gbps", "4MiB", "1.5us", "65pkt", "1GHz") lives here so that
/// config files, the CLI and Python all accept the same spellings.
#include <cstdint>
#include <optional>
#include <string>

namespace fabricsim {

using ps_t = std::uint64_t;  ///< simulation time / duration in picoseconds

constexpr ps_t PS_PER_NS = 1000;
constexpr ps_t PS_PER_US = 1000 * PS_PER_NS;
constexpr ps_t PS_PER_MS = 1000 * PS_PER_US;
constexpr ps_t PS_PER_S = 1000 * PS_PER_MS;

/// Time to serialise `bytes` at `rate_bps`, rounded up to a whole picosecond.
ps_t serialization_ps(std::uint64_t bytes, std::uint64_t rate_bps);

/// serialization_ps at one fixed rate, without the 128-bit division on the hot path: every
/// Ethernet rate (1..400G) divides 8e12, so a byte takes a whole number of ps.
class serializer
{
public:
    explicit serializer(std::uint64_t rate_bps = 0)
        : m_rate(rate_bps),
          m_ps_per_byte(rate_bps && (8 * PS_PER_S) % rate_bps == 0 ? 8 * PS_PER_S / rate_bps : 0) {}
    ps_t operator()(std::uint64_t bytes) const {
        return m_ps_per_byte ? bytes * m_ps_per_byte : serialization_ps(bytes, m_rate);
    }
    std::uint64_t rate_bps() const { return m_rate; }
    /// Whole ps per byte, or 0 if the rate does not divide 8e12 (then the general formula).
    ps_t ps_per_byte() const { return m_ps_per_byte; }

private:
    std::uint64_t m_rate;
    std::uint64_t m_ps_per_byte;
};

/// Smallest multiple of `period` that is >= t (period 0 = no rounding).
inline ps_t ceil_to_period(ps_t t, ps_t period) {
    if (period == 0) return t;
    return (t + period - 1) / period * period;
}

/// ceil_to_period for a period fixed at set-up, by a multiply instead of a 64-bit division
/// (tens of cycles on every switch hop). Exact: with m = floor((2^64 - 1) / period) the
/// estimate mulhi(n, m) is at most 2 below n / period, and the remainder fixes it.
class period_rounder
{
public:
    explicit period_rounder(ps_t period = 0)
        : m_period(period), m_inv(period ? ~std::uint64_t(0) / period : 0) {}
    ps_t period() const { return m_period; }
    ps_t operator()(ps_t t) const {
        if (m_period == 0) return t;
        __extension__ using u128 = unsigned __int128;
        const std::uint64_t n = t + m_period - 1;
        std::uint64_t q = static_cast<std::uint64_t>((u128(n) * m_inv) >> 64);
        std::uint64_t r = n - q * m_period;
        while (r >= m_period) {
            ++q;
            r -= m_period;
        }
        return q * m_period;
    }

private:
    ps_t m_period;
    std::uint64_t m_inv;
};

/// A size given either in bytes or as a count of MTU packets ("65pkt").
struct size_spec {
    std::uint64_t value = 0;
    bool packets = false;
    bool operator==(const size_spec& o) const { return value == o.value && packets == o.packets; }
};

/// Parsers return std::nullopt with `why` filled on error. Numbers are decimal in every locale
/// (std::from_chars): optional sign, digits with an optional '.', optional exponent ("1e3us").
/// Hexadecimal, inf and nan are refused; a unit may follow after optional spaces.
std::optional<std::int64_t> parse_integer(const std::string& s,
                                          std::string& why);               ///< no leading zeros
std::optional<double> parse_real(const std::string& s, std::string& why);  ///< finite
std::optional<std::uint64_t> parse_bit_rate(const std::string& s, std::string& why);
std::optional<std::uint64_t> parse_bytes(const std::string& s, std::string& why);
std::optional<size_spec> parse_size(const std::string& s, std::string& why);
std::optional<ps_t> parse_time(const std::string& s, std::string& why);
std::optional<double> parse_frequency_hz(const std::string& s, std::string& why);

std::string format_rate(std::uint64_t bps);
std::string format_bytes(std::uint64_t bytes);
std::string format_time(ps_t t);

}  // namespace fabricsim
