#include "fabricsim/core/csv.h"

#include <charconv>
#include <cmath>

namespace fabricsim::csv {

void append_real(std::string& out, double v) {
    char buf[64];
    const double a = std::fabs(v);
    const auto r = a == 0 || (a >= 1e-6 && a < 1e16)
                       ? std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed)
                       : std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, r.ptr);
}

void append_uint(std::string& out, std::uint64_t v) {
    char buf[24];
    out.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

void append_us(std::string& out, ps_t t) {
    append_uint(out, t / PS_PER_US);
    ps_t frac = t % PS_PER_US;
    if (frac == 0) return;
    char digits[7] = {'.'};
    for (int i = 6; i >= 1; --i, frac /= 10) digits[i] = static_cast<char>('0' + frac % 10);
    int n = 7;
    while (digits[n - 1] == '0') --n;
    out.append(digits, static_cast<std::size_t>(n));
}

void append_field(std::string& out, std::string_view f) {
    const bool quote = f.find_first_of(",\"\r\n") != std::string_view::npos ||
                       (!f.empty() && (f.front() == ' ' || f.back() == ' '));
    if (!quote) {
        out.append(f);
        return;
    }
    out.push_back('"');
    for (const char c : f) {
        if (c == '"') out.push_back('"');
        out.push_back(c);
    }
    out.push_back('"');
}

}  // namespace fabricsim::csv
