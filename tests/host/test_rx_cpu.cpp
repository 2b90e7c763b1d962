// Host receive CPU: ring, interrupt, NAPI poll with budget, costs on cores, ring overflow.
#include <catch2/catch.hpp>

#include <utility>
#include <vector>

#include "fabricsim/host/algo/gro.h"
#include "fabricsim/host/algo/rx_cpu.h"

using namespace fabricsim;
using namespace fabricsim::host;

namespace {

struct recorder : rx_sink {
    struct delivery {
        unsigned queue;
        std::uint64_t cookie;
        ps_t at;
    };
    struct poll_end {
        unsigned queue;
        ps_t at;
        bool complete;
    };
    std::vector<delivery> deliveries;
    std::vector<poll_end> ends;
    void on_delivery(unsigned queue, const rx_packet& p, ps_t at) override {
        deliveries.push_back({queue, p.cookie, at});
    }
    void on_poll_end(unsigned queue, ps_t at, bool complete) override {
        ends.push_back({queue, at, complete});
    }
    std::vector<ps_t> times() const {
        std::vector<ps_t> v;
        for (const auto& d : deliveries) v.push_back(d.at);
        return v;
    }
};

nic::coalesce_params coalesce(ps_t usecs, std::uint32_t frames) {
    nic::coalesce_params c;
    c.rx_usecs = usecs;
    c.rx_frames = frames;
    return c;
}

rx_cpu_params costs(ps_t irq, ps_t poll, ps_t pkt) {
    rx_cpu_params p;
    p.irq_cost = irq;
    p.poll_cost = poll;
    p.packet_cost = pkt;
    return p;
}

rx_packet frame(std::uint64_t cookie, std::uint32_t bytes = 1500) {
    rx_packet p;
    p.cookie = cookie;
    p.bytes = bytes;
    return p;
}

/// Runs every event up to and including `until`, the way an adapter would.
void drain(rx_cpu& cpu, ps_t until) {
    while (cpu.next_event() <= until) cpu.advance(cpu.next_event());
}

constexpr ps_t US = PS_PER_US;
constexpr ps_t NS = PS_PER_NS;

}  // namespace

TEST_CASE("rx_cpu: one interrupt and a poll of 10 frames give exact delivery times",
          "[host][rxcpu]") {
    // rx-frames 10 (count only); irq 2 us, poll entry 1 us, 500 ns per frame.
    recorder r;
    rx_cpu cpu(costs(2 * US, 1 * US, 500 * NS), coalesce(0, 10), r);
    for (std::uint64_t k = 0; k < 9; ++k) {
        CHECK(cpu.on_completion(0, k * US, frame(k)));
        CHECK(cpu.next_event() == rx_cpu::NEVER);  // nothing signalled yet
    }
    // The 10th completion at 9 us fires; the poll reads the ring at 9 + 2 + 1 = 12 us.
    CHECK(cpu.on_completion(0, 9 * US, frame(9)));
    CHECK(cpu.polling(0));
    CHECK(cpu.next_event() == 12 * US);
    cpu.advance(12 * US);
    std::vector<ps_t> want;
    for (ps_t k = 1; k <= 10; ++k) want.push_back(12 * US + k * 500 * NS);  // 12.5 .. 17 us
    CHECK(r.times() == want);
    CHECK(r.deliveries.back().cookie == 9);
    // The poll looks again when the last frame is done and finds the ring empty: complete.
    CHECK(cpu.next_event() == 17 * US);

    SECTION("nothing more arrives") {
        drain(cpu, 100 * US);
        REQUIRE(r.ends.size() == 1);
        CHECK(r.ends[0].at == 17 * US);
        CHECK(r.ends[0].complete);
        CHECK_FALSE(cpu.polling(0));
        CHECK(cpu.coalescer(0).interrupt_enabled());
        CHECK(cpu.stats(0).interrupts == 1);
        CHECK(cpu.stats(0).polls == 1);
        CHECK(cpu.stats(0).packets == 10);
        CHECK(cpu.stats(0).max_batch == 10);
        CHECK(cpu.busy_ps(0, 20 * US) == 8 * US);  // 2 + 1 + 10 x 0.5
        CHECK(cpu.ring_used(0) == 10);             // as of the last call (9 us)
    }
    SECTION("a frame arriving during the poll joins it without an interrupt") {
        CHECK(cpu.on_completion(0, 13'200 * NS, frame(10)));
        CHECK(cpu.coalescer(0).stats().completions_masked == 1);
        drain(cpu, 100 * US);
        CHECK(r.deliveries.size() == 11);
        CHECK(r.deliveries.back().at == 17'500 * NS);
        REQUIRE(r.ends.size() == 1);
        CHECK(r.ends[0].at == 17'500 * NS);
        CHECK(cpu.stats(0).interrupts == 1);
        CHECK(cpu.stats(0).max_batch == 11);
        // Slots free as frames finish: at 15 us frames 0..5 are done (12.5 .. 15 us).
        CHECK(cpu.on_completion(0, 15 * US, frame(11)));
        CHECK(cpu.ring_used(0) == 11 - 6 + 1);
    }
}

TEST_CASE("rx_cpu: budget exhaustion re-polls", "[host][rxcpu]") {
    recorder r;
    rx_cpu_params p = costs(2 * US, 1 * US, 500 * NS);
    p.budget = 4;
    rx_cpu cpu(p, coalesce(0, 10), r);
    for (std::uint64_t k = 0; k < 10; ++k) cpu.on_completion(0, k * US, frame(k));
    drain(cpu, 100 * US);
    // Poll 1 at 12 us: 4 frames (12.5 .. 14). Budget used up with 6 waiting: poll again,
    // entry 1 us: 4 frames from 15 us (15.5 .. 17). Again: 2 frames from 18 us (18.5, 19).
    // At 19 us the ring is empty with budget left: complete.
    CHECK(r.times() == std::vector<ps_t>{12'500 * NS, 13 * US, 13'500 * NS, 14 * US,  //
                                         15'500 * NS, 16 * US, 16'500 * NS, 17 * US,  //
                                         18'500 * NS, 19 * US});
    REQUIRE(r.ends.size() == 3);
    CHECK(r.ends[0].at == 14 * US);
    CHECK_FALSE(r.ends[0].complete);
    CHECK(r.ends[1].at == 17 * US);
    CHECK_FALSE(r.ends[1].complete);
    CHECK(r.ends[2].at == 19 * US);
    CHECK(r.ends[2].complete);
    CHECK(cpu.stats(0).polls == 3);
    CHECK(cpu.stats(0).repolls == 2);
    CHECK(cpu.stats(0).max_batch == 10);
    CHECK(cpu.busy_ps(0, 19 * US) == 10 * US);  // 2 + 3 x 1 + 10 x 0.5

    SECTION("a used-up budget with nothing waiting completes without a re-poll") {
        recorder r2;
        rx_cpu c2(p, coalesce(0, 4), r2);
        for (std::uint64_t k = 0; k < 4; ++k) c2.on_completion(0, k * US, frame(k));
        drain(c2, 100 * US);
        REQUIRE(r2.ends.size() == 1);
        CHECK(r2.ends[0].at == 8 * US);  // 3 + 2 + 1 + 4 x 0.5
        CHECK(r2.ends[0].complete);
        CHECK(c2.stats(0).repolls == 0);
    }
}

TEST_CASE("rx_cpu: the rx-usecs timer and re-enabling after the poll", "[host][rxcpu]") {
    // rx-usecs 16 us, rx-frames 44: frames every 1.2304 us. The first window holds the frames
    // up to 16 us (0 .. 14.7648 us: 13) and the interrupt fires at 16 us.
    recorder r;
    rx_cpu cpu(costs(2 * US, 1 * US, 500 * NS), coalesce(16 * US, 44), r);
    const ps_t gap = 1'230'400;
    ps_t t = 0;
    std::uint64_t k = 0;
    for (; t <= 16 * US; t += gap) CHECK(cpu.on_completion(0, t, frame(k++)));
    CHECK(k == 14);  // the 14th, at 15.9952 us, is in too
    CHECK(cpu.next_event() == 16 * US);
    // Frames keep coming. Interrupt at 16 us; the poll reads at 19 us: frames 0..15 (up to
    // 18.456 us), done at 27 us; then frames 16..21 (up to 25.8384 us): 30 us; 22..24: 31.5 us;
    // 25 (30.76 us): 32 us; 26 (31.9904 us): 32.5 us. Frame 27 comes at 33.2208 us: the ring
    // is empty at 32.5 us, NAPI completes and the interrupt is re-enabled.
    for (; t < 40 * US; t += gap) cpu.on_completion(0, t, frame(k++));
    REQUIRE(!r.ends.empty());
    CHECK(r.ends[0].at == 32'500 * NS);
    CHECK(r.ends[0].complete);
    CHECK(r.deliveries.size() == 27);
    CHECK(r.deliveries[15].at == 27 * US);
    CHECK(r.deliveries[21].at == 30 * US);
    CHECK(cpu.stats(0).max_batch == 27);
    // The next window opens with frame 27.
    CHECK(cpu.coalescer(0).deadline() == 33'220'800 + 16 * US);
    CHECK(cpu.coalescer(0).stats().frames_signalled == 14);
    CHECK(cpu.coalescer(0).stats().completions_masked == 13);
}

TEST_CASE("rx_cpu: saturation overflows the ring at the predicted frame", "[host][rxcpu]") {
    // Two cores, 1 us per frame and no other cost: 2 Mframes/s at most. Offered: a frame every
    // 400 ns (2.5 M/s) alternating between the queues, 800 ns apart on each, an interrupt per
    // frame (both criteria off), ring of 4. On a queue frame k arrives at 0.8k us (+0.4 us on
    // queue 1) and, the core never idling, ends at (k + 1) us. Slots in use when frame k
    // arrives: frames j < k not ended, 1 us x (j + 1) > 0.8k us: k - floor(0.8 k). That
    // reaches 4 first at k = 16: queue 0 drops frame 16 (global 32, at 12.8 us), queue 1 its
    // frame 16 (global 33, 13.2 us). Then one in five: next on queue 0 at k = 21 (global 42).
    recorder r;
    rx_cpu_params p = costs(0, 0, 1 * US);
    p.cores = 2;
    p.ring = 4;
    rx_cpu cpu(p, coalesce(0, 0), r);
    std::vector<std::uint64_t> dropped;
    for (std::uint64_t g = 0; g < 45; ++g) {
        const ps_t t = g * 400 * NS;
        if (!cpu.on_completion(unsigned(g % 2), t, frame(g, 0))) dropped.push_back(g);
        drain(cpu, t);
    }
    CHECK(dropped == std::vector<std::uint64_t>{32, 33, 42, 43});
    CHECK(cpu.stats(0).rx_ring_full == 2);
    CHECK(cpu.stats(1).rx_ring_full == 2);
    CHECK(cpu.totals().rx_ring_full == 4);
    CHECK(cpu.stats(0).peak_ring == 4);
    // The cores never idle once started: queue 0 from 0, queue 1 from 0.4 us.
    const ps_t now = 17'600 * NS;
    CHECK(cpu.busy_ps(0, now) == now);
    CHECK(cpu.busy_ps(1, now) == now - 400 * NS);
    CHECK(cpu.utilisation(0, now) == 1.0);
    CHECK(cpu.stats(0).interrupts == 1);  // NAPI never completes
}

TEST_CASE("rx_cpu: utilisation numbers are exact", "[host][rxcpu]") {
    // An interrupt per frame; irq 1 us, poll 500 ns, 250 ns + 1 ns/B x 1000 B = 1.25 us per
    // frame: 2.75 us per frame. Frames at 0, 10 and 20 us on one core.
    recorder r;
    rx_cpu_params p = costs(1 * US, 500 * NS, 250 * NS);
    p.byte_cost = 1000;  // ps per byte
    rx_cpu cpu(p, coalesce(0, 1), r);
    for (ps_t t : {ps_t(0), 10 * US, 20 * US}) {
        cpu.on_completion(0, t, frame(t, 1000));
        drain(cpu, t);  // up to the arrival: the poll of this frame is still ahead
    }
    // At 21 us the third interrupt's 1.5 us of entry cost is under way (20 .. 21.5 us).
    CHECK(cpu.busy_ps(0, 21 * US) == 2 * 2750 * NS + 1 * US);
    drain(cpu, 30 * US);
    CHECK(r.times() == std::vector<ps_t>{2750 * NS, 12'750 * NS, 22'750 * NS});
    CHECK(cpu.busy_ps(0, 30 * US) == 8250 * NS);
    CHECK(cpu.utilisation(0, 30 * US) == Approx(0.275).epsilon(1e-12));
    CHECK(cpu.utilisation(30 * US) == Approx(0.275).epsilon(1e-12));
    CHECK(cpu.totals().bytes == 3000);

    SECTION("averaged over cores") {
        recorder r2;
        rx_cpu_params p2 = p;
        p2.cores = 4;
        rx_cpu c4(p2, coalesce(0, 1), r2);
        c4.on_completion(0, 0, frame(0, 1000));
        c4.on_completion(3, 0, frame(1, 1000));
        drain(c4, 10 * US);
        CHECK(c4.busy_ps(0, 10 * US) == 2750 * NS);
        CHECK(c4.busy_ps(1, 10 * US) == 0);
        CHECK(c4.utilisation(10 * US) == Approx(2 * 2.75 / 40).epsilon(1e-12));
    }
}

TEST_CASE("rx_cpu: validate names the field", "[host][rxcpu]") {
    CHECK_FALSE(rx_cpu_params{}.validate());
    auto field = [](rx_cpu_params p) { return p.validate().value().field; };
    rx_cpu_params p;
    p.cores = 0;
    CHECK(field(p) == "cores");
    p = rx_cpu_params{};
    p.budget = 0;
    CHECK(field(p) == "budget");
    p = rx_cpu_params{};
    p.ring = 0;
    CHECK(field(p) == "ring");
    p = rx_cpu_params{};
    p.ring = (1u << 20) + 1;
    CHECK(field(p) == "ring");
    p = rx_cpu_params{};
    p.irq_cost = 2 * PS_PER_S;
    CHECK(field(p) == "irq_cost");
    p = rx_cpu_params{};
    p.poll_cost = 2 * PS_PER_S;
    CHECK(field(p) == "poll_cost");
    p = rx_cpu_params{};
    p.packet_cost = 2 * PS_PER_S;
    CHECK(field(p) == "packet_cost");
    p = rx_cpu_params{};
    p.byte_cost = 2 * PS_PER_US;
    CHECK(field(p) == "byte_cost");
    recorder r;
    p = rx_cpu_params{};
    p.budget = 0;
    CHECK_THROWS_WITH(rx_cpu(p, nic::coalesce_params{}, r), "rx_cpu_params.budget: must be >= 1");
    CHECK_THROWS_WITH(rx_cpu(rx_cpu_params{}, coalesce(70'000 * US, 1), r),
                      "coalesce_params.rx_usecs: must be <= 65535 us");
}

namespace {

struct trend_point {
    double cpu = 0;
    double frames_per_interrupt = 0;
    double segments_per_delivery = 0;
    std::uint64_t interrupts = 0;
    std::uint64_t drops = 0;
    unsigned profile = 0;
};

/// Back-to-back 1500-B TCP segments at 10G (1538 B on the wire: one every 1.2304 us, 812.7 k/s)
/// into one queue with the default CPU costs and GRO behind the poll, for 40 ms; the figures
/// are those of the second 20 ms (net_dim has settled by then).
trend_point table_4_2(const nic::coalesce_params& co) {
    struct count : gro_output {
        std::uint64_t n = 0;
        std::uint64_t segs = 0;
        void on_aggregate(unsigned queue, const gro_aggregate& a) override {
            (void)queue;
            ++n;
            segs += a.segments;
        }
    } out;
    gro_merger gro(1, gro_params{}, out);
    rx_cpu cpu(rx_cpu_params{}, co, gro);
    const ps_t mid = 20 * PS_PER_MS;
    const ps_t end = 40 * PS_PER_MS;
    std::uint64_t k = 0;
    ps_t busy0 = 0;
    rx_cpu::counters c0;
    std::uint64_t n0 = 0;
    std::uint64_t segs0 = 0;
    bool marked = false;
    for (ps_t t = 0; t < end; t += 1'230'400, ++k) {
        if (!marked && t >= mid) {
            drain(cpu, mid);
            busy0 = cpu.busy_ps(0, mid);
            c0 = cpu.stats(0);
            n0 = out.n;
            segs0 = out.segs;
            marked = true;
        }
        rx_packet p;
        p.cookie = k;
        p.bytes = 1514;
        p.flow = 1;
        p.seq = std::uint32_t(k * 1448);
        p.payload = 1448;
        cpu.on_completion(0, t, p);
    }
    drain(cpu, end);
    const rx_cpu::counters& c = cpu.stats(0);
    trend_point r;
    r.cpu = double(cpu.busy_ps(0, end) - busy0) / double(end - mid);
    r.interrupts = c.interrupts - c0.interrupts;
    r.frames_per_interrupt = double(c.packets - c0.packets) / double(r.interrupts);
    r.segments_per_delivery = double(out.segs - segs0) / double(out.n - n0);
    r.drops = c.rx_ring_full;
    r.profile = cpu.coalescer(0).profile();
    return r;
}

}  // namespace

TEST_CASE("rx_cpu: seed-000 Table 4.2 trend with the default costs", "[host][rxcpu][calibration]") {
    // rx-usecs off so that rx-frames alone sets the batch; "0" is the seed's rx-frames=0 row
    // (an interrupt per frame, see interrupt_coalescer.h).
    std::vector<trend_point> pts;
    for (std::uint32_t f : {0u, 2u, 8u, 32u, 128u}) {
        nic::coalesce_params co;
        co.rx_usecs = 0;
        co.rx_frames = f;
        pts.push_back(table_4_2(co));
    }
    nic::coalesce_params ad;
    ad.adaptive = true;
    const trend_point adaptive = table_4_2(ad);
    // Steady cycles, by hand (g = 1.2304 us, 8 us of interrupt + poll entry, 0.3 us a frame):
    //  "0": the poll reads at +8 us: 7 frames (2.1 us), then 2 more (0.6 us); done at +10.7 us,
    //       the next frame at +9g = 11.0736 us: 9 frames per interrupt, CPU 10.7 / 11.0736.
    //  2:   interrupt on the 2nd frame; 8 + 2 frames by the first look, 10 per interrupt:
    //       CPU (8 + 3) / (10 g) = 0.894.
    //  8:   14 + 3 + 1 = 18 frames per interrupt: CPU (8 + 5.4) / (18 g) = 0.60504.
    //  32:  50 per interrupt (45 + 5 per GRO delivery): CPU (8 + 15) / (50 g) = 0.37386.
    //  128: interrupt on the 128th, 184.6 per interrupt with two budget re-polls: 0.3135.
    const std::vector<std::uint64_t> irqs{1806, 1625, 903, 325, 88};
    const std::vector<double> cpu{10.7 / 11.0736, 11.0 / 12.304, 13.4 / 22.1472, 23.0 / 61.52,
                                  0.3135};
    const std::vector<double> segs{9, 10, 18, 25, 31.03};
    for (std::size_t i = 0; i < pts.size(); ++i) {
        CHECK(pts[i].interrupts == irqs[i]);
        CHECK(pts[i].cpu == Approx(cpu[i]).margin(5e-4));
        CHECK(pts[i].segments_per_delivery == Approx(segs[i]).margin(0.01));
        CHECK(pts[i].drops == 0);
        if (i > 0) {
            CHECK(pts[i].cpu < pts[i - 1].cpu);  // receiver CPU falls with rx-frames
            CHECK(pts[i].segments_per_delivery > pts[i - 1].segments_per_delivery);  // ACK ratio
        }
    }
    // Seed: 99 / 98.7 / 75 / 53.2 / 30.7 % and ACK ratio 67.4 / 11.4 / 12.2 / 16.5 / 64 KB; the
    // model's ACK ratio is segments per delivery x 1448 B: 13 / 14.5 / 26 / 36 / 45 KB.
    // Adaptive: net_dim climbs to profile 4 {64us, 64}; seed 37.2 % and 41.3 KB.
    CHECK(adaptive.profile == 4);
    CHECK(adaptive.interrupts == 198);
    CHECK(adaptive.cpu == Approx(0.3623).margin(5e-4));
    CHECK(adaptive.segments_per_delivery == Approx(27.33).margin(0.01));
    CHECK(adaptive.drops == 0);
}

TEST_CASE("rx_cpu: the application reads in the core's idle time, pre-empted by interrupts",
          "[host][rxcpu]") {
    struct reads : recorder {
        std::vector<std::pair<std::uint64_t, ps_t>> read;
        void on_app_read(unsigned, const rx_packet& p, ps_t at) override {
            read.emplace_back(p.cookie, at);
        }
    } r;
    rx_cpu_params p = costs(2 * US, 1 * US, 500 * NS);
    p.app_byte_cost = 1000;  // 1 ns per payload byte: 1 us per frame
    rx_cpu cpu(p, coalesce(0, 10), r);
    auto data = [](std::uint64_t k) {
        rx_packet f = frame(k);
        f.payload = 1000;
        return f;
    };
    // The worked example: the poll hands frames 0..9 over at 12.5 .. 17 us and completes at
    // 17 us; the reader then takes 1 us each: frames 0, 1, 2 read at 18, 19, 20 us.
    for (std::uint64_t k = 0; k < 10; ++k) cpu.on_completion(0, k * US, data(k));
    // Ten more frames 100 ns apart from 20 us: the 10th fires the interrupt at 20.9 us, 0.9 us
    // into frame 3; the poll (2 + 1 us) reads them at 23.9 us, 0.5 us each, and completes at
    // 28.9 us; the reader resumes: frame 3 at 29 us, 4..9 at 30..35 us, 10..19 at 36..45 us.
    for (std::uint64_t k = 0; k < 10; ++k)
        cpu.on_completion(0, 20 * US + k * 100 * NS, data(10 + k));
    CHECK(cpu.app_backlog(0) == 7 * 1000);  // as of 20.9 us: 3 read, 7 processed and unread
    drain(cpu, 100 * US);
    REQUIRE(r.read.size() == 20);
    CHECK(r.read[0] == std::make_pair(std::uint64_t(0), 18 * US));
    CHECK(r.read[2] == std::make_pair(std::uint64_t(2), 20 * US));
    CHECK(r.read[3] == std::make_pair(std::uint64_t(3), 29 * US));
    CHECK(r.read[9] == std::make_pair(std::uint64_t(9), 35 * US));
    CHECK(r.read[19] == std::make_pair(std::uint64_t(19), 45 * US));
    CHECK(cpu.app_busy_ps(0, 100 * US) == 20 * US);
    CHECK(cpu.busy_ps(0, 100 * US) == 2 * (3 * US + 5 * US));
    CHECK(cpu.app_backlog(0) == 0);
}
