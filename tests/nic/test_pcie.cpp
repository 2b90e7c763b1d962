// The NIC's PCIe link and DMA timing: TLP split, tags, full duplex and the two presets, exact to
// the picosecond.
#include <catch2/catch.hpp>
#include <stdexcept>
#include <vector>

#include "fabricsim/nic/algo/pcie_link.h"
#include "simple_pcie.h"

using namespace fabricsim;
using namespace fabricsim::nic;

TEST_CASE("pcie: raw rate per generation and width", "[nic][pcie]") {
    auto raw = [](std::uint32_t gen, std::uint32_t lanes) {
        pcie_config c;
        c.generation = gen;
        c.lanes = lanes;
        return c.raw_bps();
    };
    CHECK(raw(1, 1) == 2'000'000'000);   // 2.5 GT/s x 8/10
    CHECK(raw(2, 4) == 16'000'000'000);  // 5 GT/s x 4 x 8/10
    CHECK(raw(3, 8) == 63'015'384'615);  // 8 GT/s x 8 x 128/130 = 63.0153846... Gb/s
    CHECK(raw(3, 16) == 126'030'769'230);
    CHECK(raw(4, 16) == 252'061'538'461);
    CHECK(raw(5, 16) == 504'123'076'923);

    // Without DLLP overhead a byte takes 8 x 130/128 / (GT/s x lanes): gen3 x8 126.953125 ps,
    // so 1024 B take exactly 130 ns; each generation halves it; gen1 x1 is 4 ns a byte.
    auto wire = [](std::uint32_t gen, std::uint32_t lanes, std::uint64_t bytes) {
        pcie_config c;
        c.generation = gen;
        c.lanes = lanes;
        c.link_overhead_ppm = 0;
        return pcie_link(c).wire_time(bytes);
    };
    CHECK(wire(1, 1, 1024) == 4'096'000);
    CHECK(wire(2, 4, 1024) == 512'000);
    CHECK(wire(3, 8, 1024) == 130'000);
    CHECK(wire(3, 16, 1024) == 65'000);
    CHECK(wire(4, 16, 1024) == 32'500);
    CHECK(wire(5, 16, 1024) == 16'250);
    CHECK(wire(3, 8, 1) == 126);  // 126.953125, rounded down

    // With the presets' DLLP + SKP share a byte takes 1e6 / (1e6 - ppm) longer: gen3 x8
    // 126.953125 / 0.918581 = 138.2057 ps (57.88 Gb/s of TLPs, the paper's figure).
    CHECK(pcie_link(pcie_config::gen3_x8()).wire_time(1'000'000) == 138'205'694);
    CHECK(pcie_link(pcie_config::gen3_x16()).wire_time(1'000'000) == 70'360'570);
    CHECK(pcie_link(pcie_config::gen4_x16()).wire_time(1'000'000) == 35'180'285);
}

TEST_CASE("pcie: presets", "[nic][pcie]") {
    const pcie_config d;
    const pcie_config g3 = pcie_config::gen3_x16();
    CHECK(d.generation == g3.generation);
    CHECK(d.lanes == g3.lanes);
    CHECK(d.link_overhead_ppm == g3.link_overhead_ppm);
    const pcie_config g4 = pcie_config::gen4_x16();
    CHECK(g4.generation == 4);
    CHECK(g4.lanes == 16);
    CHECK(g4.max_payload == 256);
    CHECK(g4.max_read_request == 512);
    CHECK(g4.link_overhead_ppm == 97'839);
    CHECK(g4.read_latency == 540 * PS_PER_NS);
    const pcie_config g38 = pcie_config::gen3_x8();
    CHECK(g38.lanes == 8);
    CHECK(g38.link_overhead_ppm == 81'419);
    CHECK_FALSE(g38.validate().has_value());
    CHECK_FALSE(g3.validate().has_value());
    CHECK_FALSE(g4.validate().has_value());
}

TEST_CASE("pcie: descriptor and 1500 B payload read at gen3 x8", "[nic][pcie]") {
    // A byte takes t = 8e12 x 130 / (128 x 8 x 8000 x 918581) = 126953125/918581 ps
    // (138.2057 ps). Every TLP below starts on an idle direction except where noted.
    SECTION("one 16 B descriptor") {
        pcie_link l(pcie_config::gen3_x8());
        // MRd 24 B: 3316.94 -> 3316; host 540 ns; CplD 20 + 16 = 36 B: 4975.40 -> 4975.
        CHECK(l.dma_read(0, 16) == 3'316 + 540'000 + 4'975);  // 548 291 ps
        CHECK(l.stats().read_requests == 1);
        CHECK(l.stats().completions == 1);
        CHECK(l.stats().upstream_busy == 3'316);
        CHECK(l.stats().downstream_busy == 4'975);
    }
    SECTION("one 1500 B payload") {
        pcie_link l(pcie_config::gen3_x8());
        // MRRS 512: requests of 512, 512, 476 B; upstream back to back, the first ends at 3316.
        // Completions (MPS 256): 2 + 2 + 2 (256 and 220) = 6 CplD, 1500 + 6 x 20 = 1620 B.
        // The first two go from 543 316 to 543 316 + 552t; the second request arrived at
        // 48t = 6633, so its completions (ready 546 633) queue behind with no gap, and so do
        // the third's: downstream busy 1620t = 223 893.2 -> 223 893 from 543 316.
        CHECK(l.dma_read(0, 1500) == 3'316 + 540'000 + 223'893);  // 767 209 ps
        CHECK(l.stats().read_requests == 3);
        CHECK(l.stats().completions == 6);
        CHECK(l.stats().upstream_busy == 9'950);  // 72t = 9950.8
        CHECK(l.stats().downstream_busy == 223'893);
        CHECK(l.stats().peak_outstanding_reads == 3);
        CHECK(l.stats().bytes_read == 1500);
    }
}

TEST_CASE("pcie: descriptor and 1500 B payload read at gen4 x16", "[nic][pcie]") {
    // t = 8e12 x 130 / (128 x 16 x 16000 x 902161) = 9765625/277588 ps (35.1803 ps).
    SECTION("one 16 B descriptor") {
        pcie_link l(pcie_config::gen4_x16());
        // MRd 24t = 844.33 -> 844; 540 ns; CplD 36t = 1266.49 -> 1266.
        CHECK(l.dma_read(0, 16) == 844 + 540'000 + 1'266);  // 542 110 ps
    }
    SECTION("one 1500 B payload") {
        pcie_link l(pcie_config::gen4_x16());
        // As at gen3 x8: the 2nd and 3rd requests arrive (48t = 1688, 72t) long before the
        // first request's completions end (552t later), so 1620t = 56 992.06 -> 56 992 of
        // completions back to back from 844 + 540 000.
        CHECK(l.dma_read(0, 1500) == 844 + 540'000 + 56'992);  // 597 836 ps
        CHECK(l.stats().completions == 6);
    }
    SECTION("later on an idle link: the same latency") {
        pcie_link l(pcie_config::gen4_x16());
        const ps_t t0 = 10 * PS_PER_US;
        CHECK(l.dma_read(t0, 16) == t0 + 542'110);
        CHECK(l.dma_read(2 * t0, 1500) == 2 * t0 + 597'836);
    }
}

TEST_CASE("pcie: reads split at MRRS and completions at MPS or RCB", "[nic][pcie]") {
    SECTION("MPS completions") {
        pcie_link l(test::simple_pcie());
        // 1000 B: requests 256, 256, 256, 232; completions 2 each (128 + 104 for the last).
        // MRd 24 B = 6 ns each: 0-6000, 6000-12000, 12000-18000, 18000-24000.
        // Completions from 106 000, all back to back (each request arrives 6 ns after the
        // previous while its completions take 74 ns): 7 x 148 B + 124 B = 1160 B = 290 ns.
        CHECK(l.dma_read(0, 1000) == 106'000 + 290'000);
        CHECK(l.stats().read_requests == 4);
        CHECK(l.stats().completions == 8);
        CHECK(l.stats().upstream_busy == 24'000);
        CHECK(l.stats().downstream_busy == 290'000);
        CHECK(l.stats().peak_outstanding_reads == 4);
    }
    SECTION("RCB completions") {
        pcie_config c = test::simple_pcie();
        c.completions_at_rcb = true;  // RCB 64
        pcie_link l(c);
        // One request of 256 B answered by 4 CplD of 64 B: 4 x 84 B = 336 B = 84 ns.
        CHECK(l.dma_read(0, 256) == 6'000 + 100'000 + 84'000);
        CHECK(l.stats().completions == 4);
    }
    SECTION("zero bytes") {
        pcie_link l(test::simple_pcie());
        CHECK(l.dma_read(7, 0) == 7);
        CHECK(l.dma_write(9, 0) == 9);
        CHECK(l.stats().upstream_tlps() == 0);
        CHECK(l.stats().downstream_tlps() == 0);
    }
}

TEST_CASE("pcie: a read beyond tags x MRRS waits one round trip for a tag", "[nic][pcie]") {
    // Requests of 128 B (MRRS 128): one round trip alone is MRd 6 ns + 100 ns + one CplD of
    // 148 B (37 ns) = 143 ns.
    pcie_config c = test::simple_pcie();
    c.max_read_request = 128;
    SECTION("three requests, three tags") {
        c.max_outstanding_reads = 3;
        pcie_link l(c);
        // MRd 0-6, 6-12, 12-18 ns; CplD 106-143, 143-180, 180-217 ns (queued downstream).
        CHECK(l.dma_read(0, 384) == 217'000);
        CHECK(l.stats().tag_stalls == 0);
        CHECK(l.stats().peak_outstanding_reads == 3);
    }
    SECTION("three requests, two tags") {
        c.max_outstanding_reads = 2;
        pcie_link l(c);
        // The third request needs the first one's tag, free when its completion ends at
        // 143 ns; then it takes one more round trip: 143 + 143 = 286 ns.
        CHECK(l.dma_read(0, 384) == 2 * 143'000);
        CHECK(l.stats().tag_stalls == 1);
        CHECK(l.stats().tag_wait == 143'000);
        CHECK(l.stats().peak_outstanding_reads == 2);
        CHECK(l.outstanding_reads(143'000) == 2);  // the 2nd (until 180 ns) and the 3rd
        CHECK(l.outstanding_reads(180'000) == 1);
        CHECK(l.outstanding_reads(286'000) == 0);
    }
    SECTION("one tag: every request a round trip") {
        c.max_outstanding_reads = 1;
        pcie_link l(c);
        CHECK(l.dma_read(0, 384) == 3 * 143'000);
        CHECK(l.stats().tag_stalls == 2);
        // A later read waits for the last tag too: issued at 0, it goes at 429 ns.
        CHECK(l.dma_read(0, 128) == 4 * 143'000);
    }
}

TEST_CASE("pcie: posted writes split at MPS", "[nic][pcie]") {
    pcie_link l(test::simple_pcie());
    // 300 B from 1 ns: MWr of 128 + 24, 128 + 24, 44 + 24 B = 38, 38, 17 ns back to back,
    // last byte at the root complex at 94 ns, in memory 50 ns later.
    CHECK(l.dma_write(1'000, 300) == 1'000 + 93'000 + 50'000);
    CHECK(l.stats().write_tlps == 3);
    CHECK(l.stats().upstream_busy == 93'000);
    CHECK(l.stats().downstream_busy == 0);
    CHECK(l.stats().bytes_written == 300);
    CHECK(l.upstream_free() == 94'000);
}

TEST_CASE("pcie: operations in one direction queue in call order", "[nic][pcie]") {
    SECTION("two writes") {
        pcie_link l(test::simple_pcie());
        CHECK(l.dma_write(0, 128) == 38'000 + 50'000);
        // Called at 10 ns, it waits for the first TLP to end at 38 ns.
        CHECK(l.dma_write(10'000, 128) == 76'000 + 50'000);
    }
    SECTION("two reads") {
        pcie_link l(test::simple_pcie());
        CHECK(l.dma_read(0, 128) == 6'000 + 100'000 + 37'000);
        // MRd 6-12 ns, answer ready at 112 ns but the first completion holds the downstream
        // until 143 ns.
        CHECK(l.dma_read(0, 128) == 143'000 + 37'000);
        CHECK(l.stats().downstream_busy == 74'000);
    }
}

TEST_CASE("pcie: full duplex, reads and writes share only the upstream", "[nic][pcie]") {
    SECTION("a write after a read does not delay its completions") {
        pcie_link l(test::simple_pcie());
        const ps_t read_done = l.dma_read(0, 128);
        // 4096 B: 32 MWr of 152 B = 32 x 38 ns after the read request (6 ns).
        const ps_t write_done = l.dma_write(0, 4096);
        CHECK(read_done == 143'000);
        CHECK(write_done == 6'000 + 1'216'000 + 50'000);
        CHECK(l.downstream_free() == 143'000);
    }
    SECTION("a read request after a write waits behind its TLPs") {
        pcie_link l(test::simple_pcie());
        CHECK(l.dma_write(0, 4096) == 1'216'000 + 50'000);
        CHECK(l.dma_read(0, 128) == 1'216'000 + 6'000 + 100'000 + 37'000);
        CHECK(l.stats().upstream_tlps() == 33);
        CHECK(l.stats().downstream_tlps() == 1);
        CHECK(l.stats().upstream_busy == 1'222'000);
    }
}

TEST_CASE("pcie: a 100G NIC on gen3 x4 is capped at the PCIe read goodput", "[nic][pcie]") {
    // A 100G NIC sending 1500 B packets back to back (1538 B on the wire: one every 123.04 ns)
    // reads each payload over gen3 x4 (DLLP + SKP share 2 x 8/214 + 4/1538 = 77 367 ppm).
    pcie_config c = pcie_config::gen3_x16();
    c.lanes = 4;
    c.link_overhead_ppm = 77'367;
    pcie_link l(c);
    // A byte takes t = 8e12 x 130 / (128 x 4 x 8000 x 922633) = 253906250/922633 ps
    // (275.197 ps); a payload 1620 B of completions (6 x 20 B headers) = 445.82 ns, so the
    // goodput is 1500 x 8 / 445.82 ns = 26.92 Gb/s, far below 100 Gb/s. From the first
    // completion at s0 = 24t + 540 ns = 546 604 ps the downstream never idles (256 tags of
    // 512 B keep ~36 us of completions queued, against a 0.54 us round trip), so read i ends
    // at s0 + floor((i + 1) x 1620t).
    const std::uint64_t num = 253'906'250;
    const std::uint64_t den = 922'633;
    const ps_t s0 = 546'604;
    const int n = 1000;
    std::vector<ps_t> done;
    for (int i = 0; i < n; ++i) done.push_back(l.dma_read(ps_t(i) * 123'040, 1500));
    for (int i = 0; i < n; ++i) REQUIRE(done[i] == s0 + (std::uint64_t(i) + 1) * 1620 * num / den);
    CHECK(done[n - 1] == 446'366'474);  // s0 + floor(1000 x 1620t) = 546 604 + 445 819 870
    // Throughput: 500 payloads in 222.91 ns: the PCIe rate, not the 100G line rate.
    CHECK(done[n - 1] - done[n / 2 - 1] == 446'366'474 - 223'456'539);
    // Latency grows with the backlog: 445.82 - 123.04 ns more for every packet.
    CHECK(done[0] - 0 == s0 + 445'819);
    CHECK(done[n - 1] - ps_t(n - 1) * 123'040 == 446'366'474 - 122'916'960);
    CHECK(l.stats().downstream_busy == done[n - 1] - s0);
    CHECK(l.stats().peak_outstanding_reads == 256);
    CHECK(l.stats().tag_stalls > 0);
    CHECK(l.stats().read_requests == 3 * n);
    CHECK(l.stats().completions == 6 * n);
    // The upstream carries only requests: 3 x 24 B a payload, about 4 % busy.
    CHECK(l.stats().upstream_busy < done[n - 1] / 20);
}

TEST_CASE("pcie: a call with an earlier now is taken at the latest now", "[nic][pcie]") {
    pcie_link l(test::simple_pcie());
    CHECK(l.dma_write(100'000, 128) == 100'000 + 38'000 + 50'000);
    CHECK(l.dma_write(50'000, 128) == 100'000 + 76'000 + 50'000);
    CHECK(l.stats().late_calls == 1);
}

TEST_CASE("pcie: validate names the bad field", "[nic][pcie]") {
    auto field = [](pcie_config c) {
        const auto e = c.validate();
        return e ? e->field : std::string();
    };
    pcie_config c;
    CHECK(field(c).empty());
    c.generation = 6;
    CHECK(field(c) == "generation");
    c = {};
    c.generation = 0;
    CHECK(field(c) == "generation");
    c = {};
    c.lanes = 3;
    CHECK(field(c) == "lanes");
    c = {};
    c.max_payload = 192;
    CHECK(field(c) == "max_payload");
    c = {};
    c.max_payload = 8192;
    CHECK(field(c) == "max_payload");
    c = {};
    c.max_read_request = 64;
    CHECK(field(c) == "max_read_request");
    c = {};
    c.read_completion_boundary = 256;
    CHECK(field(c) == "read_completion_boundary");
    c = {};
    c.mrd_tlp_bytes = 0;
    CHECK(field(c) == "mrd_tlp_bytes");
    c = {};
    c.mwr_overhead_bytes = 0;
    CHECK(field(c) == "mwr_overhead_bytes");
    c = {};
    c.cpld_overhead_bytes = 0;
    CHECK(field(c) == "cpld_overhead_bytes");
    c = {};
    c.link_overhead_ppm = 1'000'000;
    CHECK(field(c) == "link_overhead_ppm");
    c = {};
    c.read_latency = 2 * PS_PER_MS;
    CHECK(field(c) == "read_latency");
    c = {};
    c.write_latency = 2 * PS_PER_MS;
    CHECK(field(c) == "write_latency");
    c = {};
    c.max_outstanding_reads = 0;
    CHECK(field(c) == "max_outstanding_reads");
    c = {};
    c.max_outstanding_reads = 1025;
    CHECK(field(c) == "max_outstanding_reads");
    c = {};
    c.lanes = 12;
    const auto e = c.validate();
    REQUIRE(e);
    CHECK(e->reason == "must be 1, 2, 4, 8 or 16");
    CHECK_THROWS_WITH(pcie_link(c), "pcie_config.lanes: must be 1, 2, 4, 8 or 16");
    CHECK_THROWS_AS(pcie_link(c), std::invalid_argument);
}
