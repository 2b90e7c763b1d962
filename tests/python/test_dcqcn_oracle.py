"""Oracles (issue 13): RoCEv2 with DCQCN. Two flows on one 40G port converge to a fair share;
N = 2..16 senders keep the queue near the RED band with PFC quiet after the start-up burst;
CNP pacing and rate cuts are exact in the per-flow traces; DCQCN stops PFC from spreading
congestion to a victim flow. Each check fails if DCQCN (CNPs, the reaction point or the rate
limiter) is taken out."""
from concurrent.futures import ThreadPoolExecutor

import pytest

import fabricsim
from fabricsim.validation.roce import xoff_after

LINE = 40e9
KMAX = 200e3  # RED max_th of the scenarios (the DCQCN paper's Kmax)
MIN_RATE_GBPS = 0.1  # the paper preset's floor


def run_all(jobs):
    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(lambda j: fabricsim.run(j[0], overrides=j[1]), jobs))


def rx_bytes(result):
    return {f["id"]: f["rx_bytes"] for f in result.summary["flows"]}


@pytest.fixture(scope="module")
def two_flows(scenarios):
    path = scenarios / "dcqcn_two_flows.yaml"
    return run_all([(path, {"duration": "10ms"}), (path, {})])


def test_two_flows_converge_to_a_fair_share_within_10ms(two_flows):
    at10, at20 = two_flows
    for r in two_flows:
        assert r.summary["frames"]["conserved"]
        assert r.summary["frames"]["dropped"] == 0
    a, b = rx_bytes(at10), rx_bytes(at20)
    rates = [(b[i] - a[i]) * 8 / 10e-3 for i in (0, 1)]  # payload bit/s over 10..20 ms
    total = sum(rates)
    assert total > 0.85 * LINE, rates
    for r in rates:
        assert abs(r - total / 2) <= 0.10 * total / 2, rates
    # Both were cut: each has its own limiter and DCQCN rate.
    for f in at20.summary["flows"]:
        assert f["roce"]["limiter"] >= 0 and f["roce"]["cnps_received"] > 0
    # The queue stays near the RED band and PFC is quiet once both flows have settled.
    ts = at20.timeseries
    q = ts[ts.time_us >= 5000]["tor.p2q3_frame_bytes"]
    assert q.quantile(0.99) <= 1.25 * KMAX
    assert xoff_after(ts, 5000) == 0.0
    # The senders' limiter banks over time: one limiter each from the first CNP on, its rate
    # near the fair share once settled (a limiter that is 0 bit/s before it is bound).
    for nic in ("h0_nic", "h1_nic"):
        assert ts[f"{nic}.limiters_in_use"].iloc[0] == 0 and ts[f"{nic}.limiters_in_use"].iloc[-1] == 1
        late = ts[ts.time_us >= 10e3]
        assert (late[f"{nic}.limiter_flows"] == 1).all()
        assert (late[f"{nic}.limiter_rate_min_bps"] == late[f"{nic}.limiter_rate_mean_bps"]).all()
        assert 0.35 * LINE <= late[f"{nic}.limiter_rate_mean_bps"].mean() <= 0.65 * LINE


def test_without_dcqcn_the_two_flows_hold_the_port_in_pfc(scenarios):
    r = fabricsim.run(scenarios / "dcqcn_two_flows.yaml", overrides={
        "nic.dcqcn.mode": "none", "switch.ecn.mode": "off", "duration": "5ms"})
    assert r.summary["frames"]["dropped"] == 0
    assert xoff_after(r.timeseries, 2000) > 0.5
    assert all(f["roce"]["cnps_received"] == 0 for f in r.summary["flows"])


NS = [2, 4, 8, 16]


@pytest.fixture(scope="module")
def incast(scenarios):
    path = scenarios / "dcqcn_incast.yaml"
    return dict(zip(NS, run_all([(path, {"topology.incast.hosts": n + 1}) for n in NS])))


@pytest.mark.parametrize("n", NS)
def test_incast_queue_stays_near_the_red_band_and_pfc_is_rare(incast, n):
    r = incast[n]
    s = r.summary
    assert s["frames"]["conserved"] and s["frames"]["dropped"] == 0
    ts = r.timeseries
    q = ts[ts.time_us >= 5000][f"tor.p{n}q3_frame_bytes"]
    assert q.quantile(0.99) <= 1.25 * KMAX, q.describe()
    assert q.mean() <= KMAX
    assert xoff_after(ts, 5000) == 0.0  # pauses only in the start-up burst
    assert s["goodput_bps"] > 0.4 * LINE  # the paper preset recovers slowly (AI only)
    assert s["roce"]["rate_limited_flows"] == n


def test_incast_without_dcqcn_is_paused_most_of_the_time(scenarios):
    r = fabricsim.run(scenarios / "dcqcn_incast.yaml", overrides={
        "nic.dcqcn.mode": "none", "switch.ecn.mode": "off", "duration": "5ms"})
    assert r.summary["frames"]["dropped"] == 0
    assert xoff_after(r.timeseries, 1000) > 0.9


def test_traces_show_cnp_pacing_and_paper_rate_cuts(incast):
    r = incast[8]
    cnp_gap_us = 50.0  # the paper preset's notification point
    for flow in range(8):
        t = r.trace(flow)
        sent = t[t.event == "cnp_sent"].time_us.to_numpy()
        assert len(sent) > 5
        gaps = sent[1:] - sent[:-1]
        assert gaps.min() >= cnp_gap_us - 1e-6
        assert abs(gaps.min() - cnp_gap_us) < 1e-6  # marks inside a window wait for its end
        rp = t[t.event != "cnp_sent"].reset_index(drop=True)
        cuts = rp.index[rp.event == "cnp"]
        assert len(cuts) == r.summary["flows"][flow]["roce"]["cnps_received"]
        # The first CNP halves the line rate (alpha = 1) and sets the target to it.
        first = rp.loc[cuts[0]]
        assert first.rate_gbps == pytest.approx(LINE / 2e9, rel=1e-12)
        assert first.target_gbps == pytest.approx(LINE / 1e9, rel=1e-12)
        # Every later cut: RT <- RC, then RC <- max(RC (1 - alpha/2), min rate) < RC.
        for i in cuts[1:]:
            before, after = rp.loc[i - 1], rp.loc[i]
            assert after.target_gbps == pytest.approx(before.rate_gbps, rel=1e-12)
            assert after.rate_gbps < before.rate_gbps or after.rate_gbps == MIN_RATE_GBPS
        # Between cuts the rate only grows (fast recovery, additive and hyper increase).
        for i in range(1, len(rp)):
            if rp.event[i] != "cnp":
                assert rp.rate_gbps[i] >= rp.rate_gbps[i - 1]


@pytest.fixture(scope="module")
def spreading(scenarios):
    path = scenarios / "dcqcn_spreading.yaml"
    plain = {"nic.dcqcn.mode": "none", "switch.ecn.mode": "off"}
    return run_all([(path, plain), (path, {})])


def test_dcqcn_stops_pfc_spreading_to_the_victim(spreading):
    pfc_only, dcqcn = spreading

    def xoffs(r):
        return sum(sum(p["flow_control"]["xoff_sent"]) for sw in r.summary["switches"].values()
                   for p in sw["ports"])

    def victim_gbps(r):
        return r.summary["flows"][3]["rx_bytes"] * 8 / 20e-3 / 1e9

    for r in spreading:
        assert r.summary["frames"]["dropped"] == 0
    assert xoffs(dcqcn) < 0.05 * xoffs(pfc_only)
    assert victim_gbps(pfc_only) < 3.5  # held behind the paused incast
    assert victim_gbps(dcqcn) > 1.5 * victim_gbps(pfc_only)


def test_a_full_rate_limiter_bank_shares_a_limiter_and_counts_it(scenarios):
    # h0 sends two flows and h1 one into h2's port; h0's NIC has one limiter for both of its.
    r = fabricsim.run(scenarios / "dcqcn_two_flows.yaml", overrides={
        "duration": "3ms", "nic.rate_limiters": 1, "traffic.flows": [
            {"src": src, "dst": "h2", "transport": "roce", "dscp": 24} for src in ("h0", "h1", "h0")]})
    s = r.summary
    assert s["frames"]["conserved"] and s["frames"]["dropped"] == 0
    bank = s["hosts"]["h0"]["rate_limiters"]
    assert bank["size"] == 1 and bank["bindings"] == 1 and bank["shared_bindings"] == 1
    flows = {f["id"]: f["roce"] for f in s["flows"]}
    assert flows[0]["limiter"] == flows[2]["limiter"] == 0
    assert flows[0]["shared_limiter"] and flows[2]["shared_limiter"]
    assert not flows[1]["shared_limiter"]
    assert flows[0]["rate_gbps"] == flows[2]["rate_gbps"]  # one reaction point between them
    assert s["roce"]["shared_limiter_flows"] == 2


def test_go_back_n_delivers_sized_flows_over_a_lossy_class(scenarios):
    # Without PFC and DCQCN, two senders at 40G overflow a 100 KB port cap: the receivers
    # discard everything after a gap (out_of_sequence), NAK once per gap, and the requesters go
    # back; the messages still arrive whole (and slowly: go-back-N at line rate collapses).
    lossy = {"switch.flow_control.generate": "none", "switch.mmu.lossless_pgs": [],
             "switch.mmu.lossless_queues": [], "switch.mmu.pg_threshold": "dynamic",
             "switch.port_cap": "100KB", "nic.dcqcn.mode": "none", "switch.ecn.mode": "off",
             "duration": "10ms", "traffic.flows[0].size": "300KB",
             "traffic.flows[1].size": "300KB", "traffic.flows[1].start": "0s"}
    s = fabricsim.run(scenarios / "dcqcn_two_flows.yaml", overrides=lossy).summary
    f = s["frames"]
    assert f["conserved"]
    assert f["dropped_by_cause"]["port_cap"] > 0 and f["dropped_by_cause"]["out_of_sequence"] > 0
    assert s["roce"]["completed"] == 2
    for flow in s["flows"]:
        assert flow["rx_bytes"] == flow["roce"]["acked_bytes"] == 300_000
        assert flow["roce"]["retransmitted"] > 0 and flow["roce"]["naks_received"] > 0
        assert 0 < flow["fct_us"] < 10_000
