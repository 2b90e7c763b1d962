#pragma once
/// Writes frames to a libpcap file (nanosecond timestamps, LINKTYPE_ETHERNET, no FCS).
/// Timestamp = first bit on the wire at the transmitter.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "fabricsim/core/frame.h"

namespace fabricsim {

class pcap_writer {
public:
    explicit pcap_writer(const std::string& path);
    ~pcap_writer();
    pcap_writer(const pcap_writer&) = delete;
    pcap_writer& operator=(const pcap_writer&) = delete;

    void write(const frame& f, ps_t timestamp);
    std::uint64_t frames_written() const { return m_count; }

private:
    std::FILE* m_file = nullptr;
    std::vector<std::uint8_t> m_buf;
    std::uint64_t m_count = 0;
};

}  // namespace fabricsim
