#pragma once
/// Text of the results' CSV files. Numbers are written exactly: reals as the shortest decimal
/// that reads back as the same double (std::to_chars), times (integer ps) as exact decimal
/// microseconds, so two distinct values never print alike. Fields that could shift columns are
/// quoted per RFC 4180.
#include <cstdint>
#include <string>
#include <string_view>

#include "fabricsim/core/units.h"

namespace fabricsim::csv {

/// Shortest round-trip text of `v`: fixed notation from 1e-6 to 1e16, exponent notation beyond
/// (where fixed would need hundreds of digits).
void append_real(std::string& out, double v);
void append_uint(std::string& out, std::uint64_t v);
/// `t` as microseconds, exactly: 1200000000003 ps -> "1200000.000003".
void append_us(std::string& out, ps_t t);
/// `field` as one CSV field: quoted (with quotes doubled) when it holds a comma, a quote, CR or
/// LF, or starts or ends with a space; as is otherwise.
void append_field(std::string& out, std::string_view field);
inline std::string field(std::string_view f) {
    std::string s;
    append_field(s, f);
    return s;
}

}  // namespace fabricsim::csv
