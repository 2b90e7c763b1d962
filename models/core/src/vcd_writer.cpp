#include "fabricsim/core/vcd_writer.h"

#include <charconv>

namespace fabricsim {

namespace {

/// The path's parts: "leaf0.p3_frame_bytes" -> {"leaf0", "p3_frame_bytes"}.
std::vector<std::string_view> parts(std::string_view path) {
    std::vector<std::string_view> v;
    for (std::size_t start = 0;;) {
        const std::size_t dot = path.find('.', start);
        v.push_back(path.substr(start, dot - start));
        if (dot == std::string_view::npos) return v;
        start = dot + 1;
    }
}

}  // namespace

std::string vcd_writer::id_code(std::size_t i) {
    std::string s;
    do {
        s += static_cast<char>('!' + i % 94);
        i /= 94;
    } while (i);
    return s;
}

vcd_writer::vcd_writer(const std::string& path, const std::string& top, std::vector<signal> signals)
    : m_out(path), m_signals(std::move(signals)), m_last(m_signals.size()) {
    std::string h =
        "$version FabricSim $end\n$timescale 1 ps $end\n$scope module " + top + " $end\n";
    // Signals keep their order; a scope is closed and another opened where the path changes.
    std::vector<std::string_view> open;
    for (std::size_t i = 0; i < m_signals.size(); ++i) {
        std::vector<std::string_view> p = parts(m_signals[i].path);
        const std::string_view name = p.back();
        p.pop_back();
        std::size_t common = 0;
        while (common < open.size() && common < p.size() && open[common] == p[common]) ++common;
        for (std::size_t k = open.size(); k > common; --k) h += "$upscope $end\n";
        for (std::size_t k = common; k < p.size(); ++k)
            h.append("$scope module ").append(p[k]).append(" $end\n");
        open = std::move(p);
        m_ids.push_back(id_code(i));
        h.append(m_signals[i].real ? "$var real 64 " : "$var wire 64 ")
            .append(m_ids.back())
            .append(" ")
            .append(name)
            .append(" $end\n");
    }
    for (std::size_t k = open.size(); k > 0; --k) h += "$upscope $end\n";
    h += "$upscope $end\n$enddefinitions $end\n";
    m_out.write(h);
}

void vcd_writer::sample(ps_t t, const std::vector<std::string_view>& values) {
    std::string& b = m_buf;
    b.clear();
    for (std::size_t i = 0; i < m_signals.size(); ++i) {
        const std::string_view v = values[i];
        if (!m_first && v == m_last[i]) continue;
        m_last[i].assign(v);
        if (m_signals[i].real) {
            b.append("r").append(v);
        } else {
            // Binary without leading zeros (a reader extends with 0); "x" if not a number.
            std::uint64_t n = 0;
            const auto r = std::from_chars(v.data(), v.data() + v.size(), n);
            b += 'b';
            if (r.ec != std::errc() || r.ptr != v.data() + v.size()) {
                b += 'x';
            } else {
                int bit = 63;
                while (bit > 0 && !(n >> bit & 1)) --bit;
                for (; bit >= 0; --bit) b += char('0' + (n >> bit & 1));
            }
        }
        b.append(" ").append(m_ids[i]) += '\n';
    }
    if (b.empty()) return;  // nothing changed: no time stamp
    char head[32] = "#";
    char* end = std::to_chars(head + 1, head + sizeof head - 1, t).ptr;
    *end++ = '\n';
    m_out.write(head, std::size_t(end - head));
    if (m_first) {
        m_out.write("$dumpvars\n");
        b += "$end\n";
        m_first = false;
    }
    m_out.write(b);
}

}  // namespace fabricsim
