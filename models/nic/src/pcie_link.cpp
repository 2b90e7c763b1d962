#include "fabricsim/nic/algo/pcie_link.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace fabricsim::nic {

namespace {

constexpr std::uint64_t PPM = 1'000'000;

/// Transfers per lane per microsecond (MT/s) of a generation.
std::uint64_t mega_transfers(std::uint32_t generation) {
    switch (generation) {
        case 1:
            return 2'500;
        case 2:
            return 5'000;
        case 3:
            return 8'000;
        case 4:
            return 16'000;
        default:
            return 32'000;
    }
}

/// Line encoding: `den` bits on the wire carry `num` bits of data.
struct encoding {
    std::uint64_t num;
    std::uint64_t den;
};
encoding line_encoding(std::uint32_t generation) {
    return generation <= 2 ? encoding{8, 10} : encoding{128, 130};
}

bool power_of_two_in(std::uint32_t v, std::uint32_t lo, std::uint32_t hi) {
    return v >= lo && v <= hi && (v & (v - 1)) == 0;
}

}  // namespace

pcie_config pcie_config::gen3_x8() {
    pcie_config c;
    c.generation = 3;
    c.lanes = 8;
    c.link_overhead_ppm = 81'419;  // 2 x 8/203 + 4/1538: Ack limit 203 symbol times at x8, MPS 256
    return c;
}

pcie_config pcie_config::gen3_x16() {
    pcie_config c;  // the member defaults
    c.generation = 3;
    c.lanes = 16;
    c.link_overhead_ppm = 97'839;  // 2 x 8/168 + 4/1538: Ack limit 168 symbol times at x16, MPS 256
    return c;
}

pcie_config pcie_config::gen4_x16() {
    pcie_config c = gen3_x16();
    c.generation = 4;
    return c;
}

std::uint64_t pcie_config::raw_bps() const {
    const encoding e = line_encoding(generation);
    return mega_transfers(generation) * 1'000'000 * lanes * e.num / e.den;
}

std::optional<pcie_config::error> pcie_config::validate() const {
    auto bad = [](const char* field, const char* reason) {
        return std::optional<error>(error{field, reason});
    };
    if (generation < 1 || generation > 5) return bad("generation", "must be 1..5");
    if (lanes != 1 && lanes != 2 && lanes != 4 && lanes != 8 && lanes != 16)
        return bad("lanes", "must be 1, 2, 4, 8 or 16");
    if (!power_of_two_in(max_payload, 128, 4096))
        return bad("max_payload", "must be a power of 2 in 128..4096");
    if (!power_of_two_in(max_read_request, 128, 4096))
        return bad("max_read_request", "must be a power of 2 in 128..4096");
    if (read_completion_boundary != 64 && read_completion_boundary != 128)
        return bad("read_completion_boundary", "must be 64 or 128");
    if (mrd_tlp_bytes == 0) return bad("mrd_tlp_bytes", "must be > 0");
    if (mwr_overhead_bytes == 0) return bad("mwr_overhead_bytes", "must be > 0");
    if (cpld_overhead_bytes == 0) return bad("cpld_overhead_bytes", "must be > 0");
    if (link_overhead_ppm >= PPM)
        return bad("link_overhead_ppm", "must be < 1000000 (the link would carry nothing)");
    if (read_latency > PS_PER_MS) return bad("read_latency", "must be <= 1 ms");
    if (write_latency > PS_PER_MS) return bad("write_latency", "must be <= 1 ms");
    if (max_outstanding_reads < 1 || max_outstanding_reads > 1024)
        return bad("max_outstanding_reads", "must be in 1..1024 (10-bit tags)");
    return std::nullopt;
}

pcie_link::pcie_link(const pcie_config& cfg) : m_cfg(cfg) {
    if (auto e = cfg.validate())
        throw std::invalid_argument("pcie_config." + e->field + ": " + e->reason);
    // ps per byte = 8 bits x (den / num) on the wire over lanes x MT/s x 1e6 bit/s, stretched by
    // 1e6 / (1e6 - ppm): 8e12 x den / (num x lanes x MT/s x (1e6 - ppm)). Both fit in 64 bits
    // (<= 1.04e15 and <= 6.6e13).
    const encoding e = line_encoding(cfg.generation);
    std::uint64_t num = 8'000'000'000'000ULL * e.den;
    std::uint64_t den =
        e.num * cfg.lanes * mega_transfers(cfg.generation) * (PPM - cfg.link_overhead_ppm);
    const std::uint64_t g = std::gcd(num, den);
    m_num = num / g;
    m_den = den / g;
    m_tag_release.assign(cfg.max_outstanding_reads, 0);
}

ps_t pcie_link::wire_time(std::uint64_t bytes) const {
    __extension__ using u128 = unsigned __int128;
    return static_cast<ps_t>(u128(bytes) * m_num / m_den);
}

ps_t pcie_link::admit(ps_t now) {
    if (now < m_last_now) {
        m_stats.late_calls++;
        return m_last_now;
    }
    m_last_now = now;
    return now;
}

ps_t pcie_link::send(direction& d, ps_t& busy, ps_t ready, std::uint64_t wire_bytes) {
    ps_t start = d.free;
    if (ready > d.free) {  // the direction was idle: a fresh start on a whole ps
        start = ready;
        d.carry = 0;
    }
    // The remainder of each division is carried to the next TLP: the long-run rate is exact.
    __extension__ using u128 = unsigned __int128;
    const u128 num = u128(wire_bytes) * m_num + d.carry;
    const ps_t end = start + static_cast<ps_t>(num / m_den);
    d.carry = static_cast<std::uint64_t>(num % m_den);
    d.free = end;
    busy += end - start;
    return end;
}

void pcie_link::release_before(ps_t t) {
    while (m_tags_held > 0 && m_tag_release[m_tag_head] <= t) {
        m_tag_head = (m_tag_head + 1) % m_cfg.max_outstanding_reads;
        m_tags_held--;
    }
}

ps_t pcie_link::acquire_tag(ps_t ready) {
    release_before(ready);
    if (m_tags_held == m_cfg.max_outstanding_reads) {  // wait for the oldest (earliest) release
        const ps_t t = m_tag_release[m_tag_head];
        m_stats.tag_stalls++;
        m_stats.tag_wait += t - ready;
        ready = t;
        release_before(ready);
    }
    return ready;
}

void pcie_link::hold_tag(ps_t release) {
    m_tag_release[(m_tag_head + m_tags_held) % m_cfg.max_outstanding_reads] = release;
    m_tags_held++;
    m_stats.peak_outstanding_reads = std::max(m_stats.peak_outstanding_reads, m_tags_held);
}

std::uint32_t pcie_link::outstanding_reads(ps_t t) const {
    std::uint32_t n = 0;
    for (std::uint32_t i = 0; i < m_tags_held; ++i)
        if (m_tag_release[(m_tag_head + i) % m_cfg.max_outstanding_reads] > t) n++;
    return n;
}

ps_t pcie_link::dma_read(ps_t now, std::uint64_t bytes) {
    now = admit(now);
    m_stats.reads++;
    m_stats.bytes_read += bytes;
    const std::uint64_t chunk =
        m_cfg.completions_at_rcb ? m_cfg.read_completion_boundary : m_cfg.max_payload;
    ps_t done = now;
    for (std::uint64_t off = 0; off < bytes; off += m_cfg.max_read_request) {
        const std::uint64_t request = std::min<std::uint64_t>(m_cfg.max_read_request, bytes - off);
        const ps_t issue = acquire_tag(now);
        const ps_t at_host = send(m_up, m_stats.upstream_busy, issue, m_cfg.mrd_tlp_bytes);
        m_stats.read_requests++;
        const ps_t answer = at_host + m_cfg.read_latency;
        for (std::uint64_t c = 0; c < request; c += chunk) {
            const std::uint64_t payload = std::min(chunk, request - c);
            done =
                send(m_down, m_stats.downstream_busy, answer, m_cfg.cpld_overhead_bytes + payload);
            m_stats.completions++;
        }
        hold_tag(done);
    }
    return done;
}

ps_t pcie_link::dma_write(ps_t now, std::uint64_t bytes) {
    now = admit(now);
    m_stats.writes++;
    m_stats.bytes_written += bytes;
    if (bytes == 0) return now;
    ps_t last = now;
    for (std::uint64_t off = 0; off < bytes; off += m_cfg.max_payload) {
        const std::uint64_t payload = std::min<std::uint64_t>(m_cfg.max_payload, bytes - off);
        last = send(m_up, m_stats.upstream_busy, now, m_cfg.mwr_overhead_bytes + payload);
        m_stats.write_tlps++;
    }
    return last + m_cfg.write_latency;
}

}  // namespace fabricsim::nic
