#include "fabricsim/core/pcap_writer.h"

#include <stdexcept>

namespace fabricsim {

namespace {
template <typename T>
void put(std::FILE* f, T v) {
    std::fwrite(&v, sizeof v, 1, f);  // host byte order; the magic number tells readers which
}
}  // namespace

pcap_writer::pcap_writer(const std::string& path) : m_buf(16384) {
    m_file = std::fopen(path.c_str(), "wb");
    if (!m_file) throw std::runtime_error("cannot open pcap file '" + path + "' for writing");
    put<std::uint32_t>(m_file, 0xa1b23c4d);  // nanosecond-resolution pcap
    put<std::uint16_t>(m_file, 2);
    put<std::uint16_t>(m_file, 4);
    put<std::int32_t>(m_file, 0);
    put<std::uint32_t>(m_file, 0);
    put<std::uint32_t>(m_file, 65535);  // snaplen
    put<std::uint32_t>(m_file, 1);      // LINKTYPE_ETHERNET
}

pcap_writer::~pcap_writer() {
    if (m_file) std::fclose(m_file);
}

void pcap_writer::write(const frame& f, ps_t timestamp) {
    const std::size_t n = f.to_bytes(m_buf.data(), m_buf.size());
    const ps_t ns = timestamp / PS_PER_NS;
    put<std::uint32_t>(m_file, static_cast<std::uint32_t>(ns / 1000000000));
    put<std::uint32_t>(m_file, static_cast<std::uint32_t>(ns % 1000000000));
    put<std::uint32_t>(m_file, static_cast<std::uint32_t>(n));
    put<std::uint32_t>(m_file, static_cast<std::uint32_t>(n));
    std::fwrite(m_buf.data(), 1, n, m_file);
    ++m_count;
}

}  // namespace fabricsim
