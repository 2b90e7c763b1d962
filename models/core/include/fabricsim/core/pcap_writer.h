#pragma once
/// Writes frames to a libpcap file (nanosecond timestamps, LINKTYPE_ETHERNET, no FCS).
/// Timestamp = first bit on the wire at the transmitter. Output is bounded: frames longer than
/// the snap length are cut (incl_len < orig_len, as libpcap does), only frames starting inside
/// a time window are kept, and capture stops at a file size cap (the frames it then leaves out
/// are counted). Write errors are kept and reported by check()/close() (output_file.h).
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "fabricsim/core/frame.h"
#include "fabricsim/core/output_file.h"

namespace fabricsim {

struct pcap_options {
    std::uint32_t snaplen = 65535;                 ///< bytes kept per frame
    ps_t start = 0;                                ///< first time captured
    ps_t stop = std::numeric_limits<ps_t>::max();  ///< frames from here on are not
    std::uint64_t max_bytes = std::numeric_limits<std::uint64_t>::max();  ///< file size cap
};

class pcap_writer
{
public:
    explicit pcap_writer(const std::string& path, const pcap_options& opt = {});

    void write(const frame& f, ps_t timestamp);
    std::uint64_t frames_written() const { return m_count; }
    /// Frames inside the window that the size cap left out.
    std::uint64_t frames_not_captured() const { return m_missed; }
    std::uint64_t bytes() const { return m_file.bytes(); }
    const std::string& path() const { return m_file.path(); }
    bool failed() const { return m_file.failed(); }
    void check() const { m_file.check(); }
    void close() { m_file.close(); }

    static constexpr std::uint64_t FILE_HEADER_BYTES = 24;
    static constexpr std::uint64_t RECORD_HEADER_BYTES = 16;

private:
    output_file m_file;
    pcap_options m_opt;
    std::vector<std::uint8_t> m_buf;
    std::uint64_t m_count = 0;
    std::uint64_t m_missed = 0;
    bool m_full = false;
};

}  // namespace fabricsim
