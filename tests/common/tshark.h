#pragma once
// `tshark -V` of a pcap for dissection tests; nothing when tshark is not installed (the test
// then warns and checks only what it wrote).
#include <array>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

inline std::optional<std::string> tshark_verbose(const std::string& pcap) {
    if (std::system("command -v tshark > /dev/null 2>&1") != 0) return std::nullopt;
    std::string out;
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(
        popen(("tshark -r '" + pcap + "' -V 2>&1").c_str(), "r"), pclose);
    if (!pipe) return std::nullopt;
    std::array<char, 4096> buf{};
    while (std::fgets(buf.data(), buf.size(), pipe.get())) out += buf.data();
    return out;
}
