#include "fabricsim/core/pcap_writer.h"

#include <algorithm>
#include <cstring>

namespace fabricsim {

namespace {
template <typename T>
std::uint8_t* put(std::uint8_t* p, T v) {
    std::memcpy(p, &v, sizeof v);  // host byte order; the magic number tells readers which
    return p + sizeof v;
}
}  // namespace

pcap_writer::pcap_writer(const std::string& path, const pcap_options& opt)
    : m_file(path), m_opt(opt), m_buf(16384) {
    std::uint8_t h[FILE_HEADER_BYTES];
    std::uint8_t* p = put<std::uint32_t>(h, 0xa1b23c4d);  // nanosecond-resolution pcap
    p = put<std::uint16_t>(p, 2);
    p = put<std::uint16_t>(p, 4);
    p = put<std::int32_t>(p, 0);
    p = put<std::uint32_t>(p, 0);
    p = put<std::uint32_t>(p, m_opt.snaplen);
    put<std::uint32_t>(p, 1);  // LINKTYPE_ETHERNET
    m_file.write(h, sizeof h);
}

void pcap_writer::write(const frame& f, ps_t timestamp) {
    if (timestamp < m_opt.start || timestamp >= m_opt.stop) return;
    if (m_full) {
        ++m_missed;
        return;
    }
    const std::size_t n = f.to_bytes(m_buf.data(), m_buf.size());
    const std::size_t kept = std::min<std::size_t>(n, m_opt.snaplen);
    if (m_file.bytes() + RECORD_HEADER_BYTES + kept > m_opt.max_bytes) {
        m_full = true;  // capture stops here, so the file is a complete prefix of the traffic
        ++m_missed;
        return;
    }
    const ps_t ns = timestamp / PS_PER_NS;
    std::uint8_t h[RECORD_HEADER_BYTES];
    std::uint8_t* p = put<std::uint32_t>(h, static_cast<std::uint32_t>(ns / 1000000000));
    p = put<std::uint32_t>(p, static_cast<std::uint32_t>(ns % 1000000000));
    p = put<std::uint32_t>(p, static_cast<std::uint32_t>(kept));
    put<std::uint32_t>(p, static_cast<std::uint32_t>(n));
    m_file.write(h, sizeof h);
    m_file.write(m_buf.data(), kept);
    ++m_count;
}

}  // namespace fabricsim
