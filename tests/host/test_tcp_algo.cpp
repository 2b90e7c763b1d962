// TCP sender and receiver state machines (plain C++, no kernel): exact ACK decisions, timers,
// windows and recovery steps against hand-worked sequences.
#include <catch2/catch.hpp>

#include <vector>

#include "fabricsim/host/algo/tcp_receiver.h"
#include "fabricsim/host/algo/tcp_sender.h"

using namespace fabricsim;
using namespace fabricsim::host;

namespace {

constexpr std::uint32_t MSS = 1460;
constexpr ps_t US = PS_PER_US;

struct rx_harness {
    tcp_receiver r;
    std::vector<ack_decision> acks;
    explicit rx_harness(const tcp_receiver_params& p) : r(p) {}
    /// Segment number k (MSS bytes at k*MSS) arriving at time k us.
    unsigned seg(unsigned k, bool ce = false, bool cwr = false, bool more = false) {
        ack_decision out[2];
        const unsigned n =
            r.on_segment(k * US, std::uint64_t(k) * MSS, MSS, ce, cwr, 1000 + k, out, more);
        for (unsigned i = 0; i < n; ++i) acks.push_back(out[i]);
        return n;
    }
};

tcp_receiver_params rx_params(std::uint32_t m, ecn_feedback ecn = ecn_feedback::NONE) {
    tcp_receiver_params p;
    p.ack_every = m;
    p.delayed_ack_timeout = 500 * US;
    p.ecn = ecn;
    return p;
}

}  // namespace

TEST_CASE("tcp receiver: delayed ACK every second segment, timer for a lone segment", "[tcp]") {
    rx_harness h(rx_params(2));
    CHECK(h.seg(0) == 0);
    CHECK(h.r.delayed_ack_deadline() == 500 * US);
    CHECK(h.seg(1) == 1);
    CHECK(h.acks.back().ack == 2 * MSS);
    CHECK(h.acks.back().ts_echo == 1000);  // TS.Recent: first segment after the last ACK
    CHECK(h.r.delayed_ack_deadline() == 0);
    CHECK(h.seg(2) == 0);
    ack_decision a;
    REQUIRE(h.r.on_delayed_ack_timer(502 * US, a));
    CHECK(a.ack == 3 * MSS);
    CHECK(a.ts_echo == 1002);
    CHECK(h.r.get_stats().delayed_ack_timeouts == 1);
    CHECK_FALSE(h.r.on_delayed_ack_timer(1000 * US, a));  // nothing pending
}

TEST_CASE("tcp receiver: a GRO aggregate is ACKed once, after its last segment", "[tcp][gro]") {
    rx_harness h(rx_params(2));
    for (unsigned k = 0; k < 4; ++k) CHECK(h.seg(k, false, false, true) == 0);
    CHECK(h.seg(4) == 1);  // the aggregate's last segment: one ACK for all five
    CHECK(h.acks.back().ack == 5 * MSS);
    CHECK(h.acks.back().ts_echo == 1000);
    // A lone last segment of an aggregate of one: the delayed ACK as before.
    CHECK(h.seg(5) == 0);
    CHECK(h.r.delayed_ack_deadline() == 505 * US);
    // A hole filled inside an aggregate is ACKed with the aggregate's last segment.
    rx_harness g(rx_params(8));
    g.seg(1);
    CHECK(g.seg(0, false, false, true) == 0);  // fills the hole, more follow
    CHECK(g.seg(2) == 1);
    CHECK(g.acks.back().ack == 3 * MSS);
    // Out-of-order segments are ACKed at once even inside an aggregate.
    CHECK(g.seg(5, false, false, true) == 1);
}

TEST_CASE(
    "tcp receiver: out-of-order data gets immediate duplicate ACKs, the hole fill an immediate ACK",
    "[tcp]") {
    rx_harness h(rx_params(2));
    h.seg(0);
    CHECK(h.seg(2) == 1);  // gap at segment 1
    CHECK(h.acks.back().ack == MSS);
    CHECK(h.seg(3) == 1);
    CHECK(h.acks.back().ack == MSS);
    CHECK(h.r.out_of_order_bytes() == 2 * MSS);
    CHECK(h.seg(1) == 1);  // fills the hole: ACK everything at once
    CHECK(h.acks.back().ack == 4 * MSS);
    CHECK(h.r.out_of_order_bytes() == 0);
    CHECK(h.seg(1) == 1);  // duplicate: immediate ACK
    CHECK(h.acks.back().ack == 4 * MSS);
    CHECK(h.r.get_stats().duplicates == 1);
    CHECK(h.r.get_stats().out_of_order == 2);
}

TEST_CASE("tcp receiver: DCTCP two-state machine conveys the exact run of marks", "[tcp]") {
    rx_harness h(rx_params(2, ecn_feedback::DCTCP));
    // CE pattern 0 0 1 1 1 0 (seed-000 §1.2, Fig 2.10).
    h.seg(0, false);
    h.seg(1, false);  // 2nd unmarked: delayed ACK, ECE 0
    REQUIRE(h.acks.size() == 1);
    CHECK(h.acks[0].ack == 2 * MSS);
    CHECK_FALSE(h.acks[0].ece);
    CHECK(h.seg(2, true) == 0);  // state change with nothing pending: no extra ACK
    CHECK(h.seg(3, true) == 1);
    CHECK(h.acks[1].ack == 4 * MSS);
    CHECK(h.acks[1].ece);
    h.seg(4, true);
    CHECK(h.seg(5, false) == 1);  // change 1 -> 0 with one pending: ACK it at once with ECE 1
    CHECK(h.acks[2].ack == 5 * MSS);
    CHECK(h.acks[2].ece);
    CHECK(h.r.delayed_ack_deadline() == 5 * US + 500 * US);  // segment 5 waits under state 0
    ack_decision a;
    REQUIRE(h.r.on_delayed_ack_timer(505 * US, a));
    CHECK(a.ack == 6 * MSS);
    CHECK_FALSE(a.ece);
}

TEST_CASE("tcp receiver: RFC 3168 latches ECE until CWR", "[tcp]") {
    rx_harness h(rx_params(1, ecn_feedback::RFC3168));
    h.seg(0);
    h.seg(1, true);
    h.seg(2);
    h.seg(3);
    h.seg(4, false, true);  // CWR
    h.seg(5);
    REQUIRE(h.acks.size() == 6);
    const bool expect[6] = {false, true, true, true, false, false};
    for (int i = 0; i < 6; ++i) CHECK(h.acks[i].ece == expect[i]);
}

namespace {

cc_params cc(cc_kind k = cc_kind::NEWRENO, std::uint32_t iw = 10) {
    cc_params p;
    p.kind = k;
    p.mss = MSS;
    p.initial_window_segments = iw;
    return p;
}

rtt_params rtt() {
    rtt_params r;
    r.initial_rto = 1 * PS_PER_S;
    r.min_rto = 10 * PS_PER_MS;
    return r;
}

/// Sends everything the window allows at `now`; returns the segments.
std::vector<tcp_segment> drain(tcp_sender& s, ps_t now) {
    std::vector<tcp_segment> v;
    tcp_segment seg;
    while (s.next_segment(now, seg)) v.push_back(seg);
    return v;
}

}  // namespace

TEST_CASE("tcp sender: initial window, slow start by ACK, timer armed and restarted", "[tcp]") {
    tcp_sender s(tcp_sender_params{}, cc(), rtt());
    s.set_unlimited();
    auto v = drain(s, 0);
    REQUIRE(v.size() == 10);
    CHECK(v[9].seq == 9ull * MSS);
    CHECK(v[9].len == MSS);
    CHECK(s.rto_deadline() == 1 * PS_PER_S);  // RFC 6298 5.1 with the initial RTO
    // ACK of two segments 100 us later, echoing the first one's send time: RTT 100 us.
    s.on_ack(100 * US, 2 * MSS, false, 1);
    CHECK(s.cc().cwnd() == 12ull * MSS);  // slow start: + min(acked, 2 MSS)
    CHECK(s.rtt().srtt() == 100 * US - 1);
    CHECK(s.rto_deadline() == 100 * US + s.rtt().rto());  // 5.3 restart
    CHECK(s.rtt().rto() == 10 * PS_PER_MS);               // clamped to min_rto
    v = drain(s, 100 * US);
    CHECK(v.size() == 4);  // 2 freed + 2 of growth
    CHECK(s.flight() == 12ull * MSS);
}

TEST_CASE("tcp sender: finite stream segments, last short segment, timer stops when all is acked",
          "[tcp]") {
    tcp_sender s(tcp_sender_params{}, cc(), rtt());
    s.write(3000);
    auto v = drain(s, 0);
    REQUIRE(v.size() == 3);
    CHECK(v[2].seq == 2920);
    CHECK(v[2].len == 80);
    CHECK_FALSE(s.all_acked());
    s.on_ack(50 * US, 3000, false, 0);
    CHECK(s.all_acked());
    CHECK(s.rto_deadline() == 0);
}

TEST_CASE("tcp sender: the receive window caps the flight", "[tcp]") {
    tcp_sender_params p;
    p.rwnd = 3 * MSS;
    tcp_sender s(p, cc(), rtt());
    s.set_unlimited();
    CHECK(drain(s, 0).size() == 3);
}

TEST_CASE(
    "tcp sender: without SACK, three duplicate ACKs fast-retransmit snd_una outside the window",
    "[tcp]") {
    tcp_sender_params p;
    p.sack = false;
    tcp_sender s(p, cc(), rtt());
    s.set_unlimited();
    drain(s, 0);                        // 10 segments
    s.on_ack(100 * US, MSS, false, 1);  // segment 0 acked, 1 lost
    drain(s, 100 * US);                 // window 11: 2 more -> flight 11
    for (int i = 0; i < 2; ++i) s.on_ack(101 * US, MSS, false, 0);
    CHECK(s.get_stats().fast_retransmits == 0);
    s.on_ack(102 * US, MSS, false, 0);
    CHECK(s.get_stats().fast_retransmits == 1);
    CHECK(s.cc().in_recovery());
    // ssthresh = flight/2 = 11*1460/2; cwnd = ssthresh + 3 MSS (RFC 6582).
    CHECK(s.cc().ssthresh() == 11ull * MSS / 2);
    CHECK(s.cc().cwnd() == 11ull * MSS / 2 + 3ull * MSS);
    tcp_segment seg;
    REQUIRE(s.next_segment(102 * US, seg));
    CHECK(seg.seq == MSS);
    CHECK(seg.retransmission);
    // Partial ACK (up to segment 5): the next hole goes out at once.
    s.on_ack(200 * US, 5ull * MSS, false, 0);
    REQUIRE(s.next_segment(200 * US, seg));
    CHECK(seg.seq == 5ull * MSS);
    CHECK(seg.retransmission);
}

TEST_CASE("tcp sender: RTO goes back to snd_una with one segment and backs off", "[tcp]") {
    tcp_sender s(tcp_sender_params{}, cc(), rtt());
    s.set_unlimited();
    drain(s, 0);
    s.on_ack(100 * US, MSS, false, 1);  // sample -> RTO = min_rto = 10 ms
    drain(s, 100 * US);
    const ps_t due = s.rto_deadline();
    CHECK(due == 100 * US + 10 * PS_PER_MS);
    s.on_rto_timer(due);
    CHECK(s.get_stats().timeouts == 1);
    CHECK(s.cc().cwnd() == MSS);
    CHECK(s.snd_nxt() == MSS);
    CHECK(s.rto_deadline() == due + 20 * PS_PER_MS);  // backed off x2
    auto v = drain(s, due);
    REQUIRE(v.size() == 1);
    CHECK(v[0].seq == MSS);
    CHECK(v[0].retransmission);
    // The receiver had kept segments 2..11: its ACK jumps past snd_nxt.
    s.on_ack(due + 100 * US, 12ull * MSS, false, 0);
    CHECK(s.snd_una() == 12ull * MSS);
    CHECK(s.snd_nxt() == 12ull * MSS);
}

TEST_CASE("tcp sender: a DCTCP cut marks the next new segment CWR", "[tcp]") {
    tcp_sender s(tcp_sender_params{}, cc(cc_kind::DCTCP), rtt());
    s.set_unlimited();
    drain(s, 0);
    // The first ACK carries ECE; alpha starts at 1, so the cut halves cwnd (no growth on it).
    s.on_ack(100 * US, 2 * MSS, true, 1);
    CHECK(s.cc().ecn_reductions() == 1);
    CHECK(s.cc().cwnd() == 5ull * MSS);
    tcp_segment seg;
    CHECK_FALSE(s.next_segment(100 * US, seg));  // flight 8 MSS > cwnd
    s.on_ack(200 * US, 10ull * MSS, false, 0);
    REQUIRE(s.next_segment(200 * US, seg));
    CHECK(seg.cwr);
    REQUIRE(s.next_segment(200 * US, seg));
    CHECK_FALSE(seg.cwr);
}

namespace {
/// A duplicate ACK for snd_una = 1 MSS with one SACK block [b, e) in segments.
void sack_dupack(tcp_sender& s, ps_t at, std::uint64_t b, std::uint64_t e) {
    const std::uint64_t edges[2] = {b * MSS, e * MSS};
    s.on_ack(at, MSS, false, 0, 1, edges);
}
}  // namespace

TEST_CASE("tcp sender: SACK recovery (RFC 6675) retransmits the hole, then sends by pipe",
          "[tcp]") {
    tcp_sender s(tcp_sender_params{}, cc(), rtt());
    s.set_unlimited();
    drain(s, 0);                        // segments 0..9
    s.on_ack(100 * US, MSS, false, 1);  // 0 acked, 1 lost; cwnd 11 MSS
    drain(s, 100 * US);                 // 10, 11 -> flight 11 MSS
    sack_dupack(s, 101 * US, 2, 3);
    sack_dupack(s, 102 * US, 2, 4);
    CHECK_FALSE(s.cc().in_recovery());
    sack_dupack(s, 103 * US, 2, 5);  // 3 segments SACKed above the hole: it is lost
    REQUIRE(s.cc().in_recovery());
    CHECK(s.get_stats().fast_retransmits == 1);
    CHECK(s.cc().ssthresh() == 11ull * MSS / 2);
    tcp_segment seg;
    REQUIRE(s.next_segment(103 * US, seg));
    CHECK(seg.seq == MSS);
    CHECK(seg.len == MSS);
    CHECK(seg.retransmission);
    // pipe = 7 unSACKed segments above the hole + the retransmission = 8 MSS > ssthresh 5.5 MSS.
    CHECK(s.pipe() == 8ull * MSS);
    CHECK_FALSE(s.next_segment(103 * US, seg));
    sack_dupack(s, 104 * US, 2, 9);  // pipe = 3 + 1 = 4 MSS: room for one new segment
    CHECK(s.pipe() == 4ull * MSS);
    REQUIRE(s.next_segment(104 * US, seg));
    CHECK(seg.seq == 12ull * MSS);
    CHECK_FALSE(seg.retransmission);
    CHECK_FALSE(s.next_segment(104 * US, seg));
    // The ACK that covers everything sent before recovery ends it.
    s.on_ack(200 * US, 12ull * MSS, false, 0);
    CHECK_FALSE(s.cc().in_recovery());
    CHECK(s.sacked_bytes() == 0);
}

TEST_CASE("tcp sender: a lost retransmission is resent once later data is SACKed", "[tcp]") {
    tcp_sender s(tcp_sender_params{}, cc(), rtt());
    s.set_unlimited();
    drain(s, 0);
    s.on_ack(100 * US, MSS, false, 1);
    drain(s, 100 * US);
    for (std::uint64_t e = 3; e <= 5; ++e) sack_dupack(s, 100 * US + e, 2, e);
    tcp_segment seg;
    REQUIRE(s.next_segment(105 * US, seg));  // retransmission of segment 1
    CHECK(seg.seq == MSS);
    sack_dupack(s, 106 * US, 2, 9);
    REQUIRE(s.next_segment(106 * US, seg));  // segment 12, sent after the retransmission
    CHECK(seg.seq == 12ull * MSS);
    CHECK(s.get_stats().lost_retransmits == 0);
    // Segment 12 is SACKed while the hole at 1 is still open: the retransmission was lost.
    const std::uint64_t edges[4] = {2 * MSS, 12 * MSS, 12 * MSS, 13 * MSS};
    s.on_ack(300 * US, MSS, false, 0, 2, edges);
    CHECK(s.get_stats().lost_retransmits == 1);
    REQUIRE(s.next_segment(300 * US, seg));
    CHECK(seg.seq == MSS);
    CHECK(seg.retransmission);
}

namespace {
/// A duplicate ACK for snd_una = 1 MSS with SACK blocks given in segments.
void sack_blocks(tcp_sender& s, ps_t at, std::vector<std::uint64_t> seg_edges,
                 std::uint64_t ack = 1) {
    for (auto& e : seg_edges) e *= MSS;
    s.on_ack(at, ack * MSS, false, 0, static_cast<unsigned>(seg_edges.size() / 2),
             seg_edges.data());
}
}  // namespace

TEST_CASE(
    "tcp sender: each retransmission is watched and an early one lost is found after a later one "
    "arrives",
    "[tcp]") {
    tcp_sender s(tcp_sender_params{}, cc(), rtt());
    s.set_unlimited();
    drain(s, 0);                        // 0..9
    s.on_ack(100 * US, MSS, false, 1);  // cwnd 11 MSS
    drain(s, 100 * US);                 // 10, 11: segments 1 and 3 are lost
    sack_blocks(s, 101 * US, {2, 3});
    sack_blocks(s, 102 * US, {2, 3, 4, 5});
    sack_blocks(s, 103 * US, {2, 3, 4, 6});  // third duplicate: recovery, ssthresh 5.5 MSS
    REQUIRE(s.cc().in_recovery());
    tcp_segment seg;
    REQUIRE(s.next_segment(103 * US, seg));
    CHECK(seg.seq == MSS);
    CHECK_FALSE(s.next_segment(103 * US, seg));  // pipe 8 MSS: 7 unSACKed above the lost point + 1
    sack_blocks(s, 104 * US, {2, 3, 4, 9});      // segment 3 is now lost too: pipe 4 MSS
    REQUIRE(s.next_segment(104 * US, seg));
    CHECK(seg.seq == 3ull * MSS);
    CHECK(seg.retransmission);
    CHECK_FALSE(s.next_segment(104 * US, seg));
    sack_blocks(s, 105 * US, {2, 3, 4, 11});  // pipe 3 MSS: new data 12 and 13
    REQUIRE(s.next_segment(105 * US, seg));
    CHECK(seg.seq == 12ull * MSS);
    REQUIRE(s.next_segment(105 * US, seg));
    CHECK(seg.seq == 13ull * MSS);
    CHECK_FALSE(s.next_segment(105 * US, seg));
    // The retransmission of 3 arrived, that of 1 did not; 12 (sent after both) is SACKed.
    sack_blocks(s, 200 * US, {2, 11, 12, 13});
    CHECK(s.get_stats().lost_retransmits == 1);
    REQUIRE(s.next_segment(200 * US, seg));
    CHECK(seg.seq == MSS);
    CHECK(seg.retransmission);
    REQUIRE(s.next_segment(200 * US, seg));  // not 3 again: new data
    CHECK(seg.seq == 14ull * MSS);
    CHECK_FALSE(seg.retransmission);
}

TEST_CASE(
    "tcp sender: with no new data, recovery resends a hole not yet deemed lost (RFC 6675 NextSeg "
    "rule 3)",
    "[tcp]") {
    tcp_sender s(tcp_sender_params{}, cc(), rtt());
    s.write(12ull * MSS);
    drain(s, 0);
    s.on_ack(100 * US, MSS, false, 1);
    drain(s, 100 * US);  // 10, 11: everything written is sent; 1 and 10 are lost
    for (std::uint64_t e = 3; e <= 5; ++e) sack_blocks(s, 100 * US + e, {2, e});
    tcp_segment seg;
    REQUIRE(s.next_segment(105 * US, seg));
    CHECK(seg.seq == MSS);
    sack_blocks(s, 106 * US, {2, 10, 11, 12});  // one segment above 10: not lost by IsLost
    CHECK(s.pipe() == 2ull * MSS);              // segment 10 in flight + the retransmission of 1
    REQUIRE(s.next_segment(106 * US, seg));
    CHECK(seg.seq == 10ull * MSS);
    CHECK(seg.retransmission);
    CHECK(s.pipe() == 3ull * MSS);  // a retransmitted octet counts twice (RFC 6675 SetPipe)
    CHECK_FALSE(s.next_segment(106 * US, seg));  // once only
}

TEST_CASE(
    "tcp sender: early retransmit (RFC 5827) with three segments outstanding and nothing new to "
    "send",
    "[tcp]") {
    for (const bool er : {true, false}) {
        tcp_sender_params p;
        p.early_retransmit = er;
        tcp_sender s(p, cc(), rtt());
        s.write(4ull * MSS);
        drain(s, 0);
        s.on_ack(100 * US, MSS, false, 1);  // 1, 2, 3 outstanding; 1 is lost
        sack_blocks(s, 101 * US, {2, 3});
        CHECK_FALSE(s.cc().in_recovery());
        sack_blocks(s, 102 * US, {2, 4});  // oseg - 1 = 2 duplicates
        CHECK(s.cc().in_recovery() == er);
        CHECK(s.get_stats().early_retransmits == (er ? 1u : 0u));
        tcp_segment seg;
        CHECK(s.next_segment(102 * US, seg) == er);
        if (er) CHECK(seg.seq == MSS);
    }
}

TEST_CASE("tcp sender: slow-start restart after an idle RTO keeps at most the initial window",
          "[tcp]") {
    tcp_sender s(tcp_sender_params{}, cc(cc_kind::NEWRENO, 4), rtt());
    s.write(20ull * MSS);
    drain(s, 0);
    ps_t t = 0;
    while (!s.all_acked()) {  // every round acks everything: slow start 4, 8, ... segments
        t += 100 * US;
        s.on_ack(t, s.snd_nxt(), false, t - 100 * US);
        drain(s, t);
    }
    const std::uint64_t grown = s.cc().cwnd();
    CHECK(grown > 4ull * MSS);
    s.write(20ull * MSS);
    // Idle for less than the RTO (10 ms): the window stays.
    drain(s, t + 5 * PS_PER_MS);
    CHECK(s.get_stats().idle_restarts == 0);
    s.on_ack(t + 6 * PS_PER_MS, s.snd_nxt(), false, 0);
    const std::uint64_t before = s.cc().cwnd();
    s.write(4ull * MSS);
    drain(s, t + 30 * PS_PER_MS);  // idle 24 ms > RTO
    CHECK(s.get_stats().idle_restarts == 1);
    CHECK(s.cc().cwnd() == 4ull * MSS);
    CHECK(s.cc().ssthresh() >= before / 4 * 3);
}
