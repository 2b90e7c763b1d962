#include "fabricsim/core/units.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace fabricsim {

__extension__ typedef unsigned __int128 u128;

ps_t serialization_ps(std::uint64_t bytes, std::uint64_t rate_bps) {
    const u128 num = static_cast<u128>(bytes) * 8u * PS_PER_S;
    return static_cast<ps_t>((num + rate_bps - 1) / rate_bps);
}

namespace {

struct number_and_unit {
    double number = 0;
    std::string unit;
};

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

/// Reads the decimal number at `p` into `v`; returns the end of it, or nullptr with `why` set.
/// std::from_chars ignores LC_NUMERIC (strtod does not: under de_DE it stops at the '.'); it
/// would also read "inf" and "nan", which the first-character test refuses.
const char* decimal_prefix(const char* p, const char* end, double& v, const std::string& s,
                           std::string& why) {
    const char* q = p < end && *p == '+' ? p + 1 : p;  // from_chars takes '-' but not '+'
    const char* d = q < end && *q == '-' && q == p ? q + 1 : q;
    if (!(d < end && (is_digit(*d) || (*d == '.' && d + 1 < end && is_digit(d[1]))))) {
        why = "'" + s + "' does not start with a decimal number";
        return nullptr;
    }
    if (*d == '0' && d + 1 < end && (d[1] == 'x' || d[1] == 'X')) {
        why = "'" + s + "' is hexadecimal; write a decimal number";
        return nullptr;
    }
    const auto r = std::from_chars(q, end, v, std::chars_format::general);
    if (r.ec != std::errc()) {
        why = "'" + s + "' is out of range";
        return nullptr;
    }
    return r.ptr;
}

std::optional<number_and_unit> split(const std::string& s, std::string& why) {
    const char* p = s.data();
    const char* const end = p + s.size();
    while (p < end && std::isspace(static_cast<unsigned char>(*p))) ++p;
    double v = 0;
    p = decimal_prefix(p, end, v, s, why);
    if (!p) return std::nullopt;
    if (v < 0) {
        why = "'" + s + "' is negative";
        return std::nullopt;
    }
    std::string unit(p, end);
    while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.front())))
        unit.erase(0, 1);
    while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.back()))) unit.pop_back();
    return number_and_unit{v, unit};
}

std::optional<std::uint64_t> scaled(double v, double scale, const std::string& s,
                                    std::string& why) {
    const double r = v * scale;
    if (r > 1.8e19) {
        why = "'" + s + "' is too large";
        return std::nullopt;
    }
    const double rounded = std::nearbyint(r);
    if (std::fabs(r - rounded) > 1e-6 * std::max(1.0, r)) {
        why = "'" + s + "' is not a whole number of the base unit";
        return std::nullopt;
    }
    return static_cast<std::uint64_t>(rounded);
}

}  // namespace

std::optional<std::int64_t> parse_integer(const std::string& s, std::string& why) {
    const char* p = s.data();
    const char* const end = p + s.size();
    const char* q = p < end && *p == '+' ? p + 1 : p;
    const char* d = q < end && *q == '-' && q == p ? q + 1 : q;
    if (d == end || !std::all_of(d, end, is_digit)) {
        why = "'" + s + "' is not a decimal integer";
        return std::nullopt;
    }
    if (*d == '0' && end - d > 1) {
        why = "'" + s + "' has a leading zero (octal is not accepted)";
        return std::nullopt;
    }
    std::int64_t v = 0;
    if (std::from_chars(q, end, v).ec != std::errc()) {
        why = "'" + s + "' is out of range";
        return std::nullopt;
    }
    return v;
}

std::optional<double> parse_real(const std::string& s, std::string& why) {
    double v = 0;
    const char* const end = s.data() + s.size();
    const char* p = decimal_prefix(s.data(), end, v, s, why);
    if (!p) return std::nullopt;
    if (p != end) {
        why = "'" + s + "' is not a decimal number";
        return std::nullopt;
    }
    return v;
}

std::optional<std::uint64_t> parse_bit_rate(const std::string& s, std::string& why) {
    auto nu = split(s, why);
    if (!nu) return std::nullopt;
    static const struct {
        const char* u;
        double f;
    } units[] = {{"bps", 1},    {"Kbps", 1e3}, {"kbps", 1e3},
                 {"Mbps", 1e6}, {"Gbps", 1e9}, {"Tbps", 1e12}};
    for (const auto& u : units)
        if (nu->unit == u.u) return scaled(nu->number, u.f, s, why);
    why = "'" + s + "' needs a bit-rate unit (bps, Kbps, Mbps, Gbps, Tbps)";
    return std::nullopt;
}

std::optional<std::uint64_t> parse_bytes(const std::string& s, std::string& why) {
    auto nu = split(s, why);
    if (!nu) return std::nullopt;
    static const struct {
        const char* u;
        double f;
    } units[] = {{"B", 1},        {"KB", 1e3},        {"MB", 1e6},          {"GB", 1e9},
                 {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}};
    for (const auto& u : units)
        if (nu->unit == u.u) return scaled(nu->number, u.f, s, why);
    why = "'" + s + "' needs a byte unit (B, KB, MB, GB, KiB, MiB, GiB)";
    return std::nullopt;
}

std::optional<size_spec> parse_size(const std::string& s, std::string& why) {
    auto nu = split(s, why);
    if (!nu) return std::nullopt;
    if (nu->unit == "pkt" || nu->unit == "pkts") {
        auto v = scaled(nu->number, 1, s, why);
        if (!v) return std::nullopt;
        return size_spec{*v, true};
    }
    std::string why_bytes;
    auto b = parse_bytes(s, why_bytes);
    if (!b) {
        why = "'" + s + "' needs a byte unit (B, KB, MB, KiB, MiB, ...) or 'pkt'";
        return std::nullopt;
    }
    return size_spec{*b, false};
}

std::optional<ps_t> parse_time(const std::string& s, std::string& why) {
    auto nu = split(s, why);
    if (!nu) return std::nullopt;
    static const struct {
        const char* u;
        double f;
    } units[] = {{"ps", 1}, {"ns", 1e3}, {"us", 1e6}, {"\xC2\xB5s", 1e6}, {"ms", 1e9}, {"s", 1e12}};
    for (const auto& u : units)
        if (nu->unit == u.u) return scaled(nu->number, u.f, s, why);
    why = "'" + s + "' needs a time unit (ps, ns, us, ms, s)";
    return std::nullopt;
}

std::optional<double> parse_frequency_hz(const std::string& s, std::string& why) {
    auto nu = split(s, why);
    if (!nu) return std::nullopt;
    static const struct {
        const char* u;
        double f;
    } units[] = {{"Hz", 1}, {"kHz", 1e3}, {"MHz", 1e6}, {"GHz", 1e9}};
    for (const auto& u : units)
        if (nu->unit == u.u) return nu->number * u.f;
    why = "'" + s + "' needs a frequency unit (Hz, kHz, MHz, GHz)";
    return std::nullopt;
}

std::string format_rate(std::uint64_t bps) {
    char buf[64];
    if (bps % 1000000000 == 0)
        std::snprintf(buf, sizeof buf, "%lluGbps", (unsigned long long)(bps / 1000000000));
    else if (bps % 1000000 == 0)
        std::snprintf(buf, sizeof buf, "%lluMbps", (unsigned long long)(bps / 1000000));
    else
        std::snprintf(buf, sizeof buf, "%llubps", (unsigned long long)bps);
    return buf;
}

std::string format_bytes(std::uint64_t b) {
    char buf[64];
    if (b >= 1048576 && b % 1048576 == 0)
        std::snprintf(buf, sizeof buf, "%lluMiB", (unsigned long long)(b / 1048576));
    else if (b >= 1024 && b % 1024 == 0)
        std::snprintf(buf, sizeof buf, "%lluKiB", (unsigned long long)(b / 1024));
    else
        std::snprintf(buf, sizeof buf, "%lluB", (unsigned long long)b);
    return buf;
}

std::string format_time(ps_t t) {
    char buf[64];
    if (t % PS_PER_MS == 0 && t != 0)
        std::snprintf(buf, sizeof buf, "%llums", (unsigned long long)(t / PS_PER_MS));
    else if (t % PS_PER_US == 0 && t != 0)
        std::snprintf(buf, sizeof buf, "%lluus", (unsigned long long)(t / PS_PER_US));
    else if (t % PS_PER_NS == 0)
        std::snprintf(buf, sizeof buf, "%lluns", (unsigned long long)(t / PS_PER_NS));
    else
        std::snprintf(buf, sizeof buf, "%llups", (unsigned long long)t);
    return buf;
}

}  // namespace fabricsim
