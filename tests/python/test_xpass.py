"""ExpressPass (issue 16; seed-002 §1.3/§2.4, facts-mmu-credit-workload §2): receiver-driven
credits through the switches' credit queues. One flow alone carries 9.25 Gb/s of IP packets
(the thesis: "9.2"), credits not data are dropped when flows compete, flows split the link and
sized flows finish, wasting the credits that arrive after their last data. Bad input is refused
naming the key."""
import json

import pandas as pd
import pytest

from fabricsim.validation.credit import CRUSH, crush_expected_packets

ONE = """
name: xpass_one
seed: 1
duration: 50ms
topology: {kind: dumbbell, host_rate: 10Gbps, link_delay: 5us, dumbbell: {hosts_per_side: 1}}
switch:
  credit_queue: {queue: 7}
traffic:
  flows:
    - {src: h0, dst: h1, transport: xpass, trace: true}
"""
# Credit rate of a 10G port: 84/(84+1538) of it, to the bps.
CREDIT_BPS = 517_879_162


def run(sim, path, text, *sets):
    path.mkdir(parents=True, exist_ok=True)
    (path / "s.yaml").write_text(text)
    sim(path / "s.yaml", *[a for s in sets for a in ("--set", s)], "--out", path / "r", "--quiet")
    return json.loads((path / "r" / "summary.json").read_text())


@pytest.fixture(scope="module")
def dumbbell(sim, scenarios, tmp_path_factory):
    out = tmp_path_factory.mktemp("xpass") / "r"
    sim(scenarios / "xpass_dumbbell.yaml", "--out", out, "--quiet")
    return json.loads((out / "summary.json").read_text()), out


def test_one_flow_carries_the_data_share_of_the_link(sim, tmp_path):
    s = run(sim, tmp_path, ONE)
    f = s["flows"][0]
    # 1500 B IP packets at 1538/(84+1538) of 10G: 9.248 Gb/s; the first RTTs ramp from alpha
    # (about 100 us at half rate).
    ip_gbps = f["delivered_frames"] * 1500 * 8 / s["sim_time_s"] / 1e9
    assert 9.2 <= ip_gbps <= 9.25, ip_gbps
    assert s["frames"]["dropped"] == s["frames"]["dropped_by_cause"]["credit_dropped"]
    cq = s["switches"]["s1"]["ports"][1]["credit_queue"]  # toward h0: the credits' way
    assert cq["rate_bps"] == CREDIT_BPS and cq["credits_sent"] > 15000
    x = f["xpass"]
    assert x["credits_wasted"] == 0 and x["requests"] == 1
    assert x["credit_rate_gbps"] == pytest.approx(CREDIT_BPS / 1e9, rel=1e-6)
    tr = pd.read_csv(tmp_path / "r" / "traces" / "flow0.csv")
    assert list(tr.columns) == ["time_us", "credit_rate_gbps", "w", "loss", "rtt_us"]
    # alpha = 0.5 of the maximum at the start, the maximum within a few RTTs.
    assert tr.credit_rate_gbps.iloc[0] < 0.45 and tr.credit_rate_gbps.iloc[-1] == pytest.approx(
        CREDIT_BPS / 1e9, rel=1e-6)
    # Six 5 us links and a few frame times of serialisation and queueing.
    assert 37 < tr.rtt_us.median() < 45


def test_credit_queue_jitter_keeps_the_rate_and_the_run_reproducible(sim, tmp_path):
    """switch.credit_queue.jitter: 0.1 (ns2-xpass's 76-92 B credits as its bucket sees them),
    taken by the switches' and the hosts' link-end queues: the credits' mean rate and the flow's
    share of the link stay, the times change, and the same seed gives the same run."""
    plain = run(sim, tmp_path / "plain", ONE)
    a = run(sim, tmp_path / "a", ONE, "switch.credit_queue.jitter=0.1")
    b = run(sim, tmp_path / "b", ONE, "switch.credit_queue.jitter=0.1")
    assert a["flows"] == b["flows"] and a["switches"] == b["switches"]
    f = a["flows"][0]
    ip_gbps = f["delivered_frames"] * 1500 * 8 / a["sim_time_s"] / 1e9
    assert 9.2 <= ip_gbps <= 9.25, ip_gbps
    # The credits that left the receiver's link end and the switch: within 0.1 % of the
    # unjittered run's (the same bucket rate), but not the same credits.
    for s_of in (lambda s: s["hosts"]["h1"]["credit_queue"]["credits_sent"],
                 lambda s: s["switches"]["s1"]["ports"][1]["credit_queue"]["credits_sent"]):
        assert s_of(a) == pytest.approx(s_of(plain), rel=1e-3)
    assert a["flows"] != plain["flows"]
    assert a["frames"]["dropped"] == a["frames"]["dropped_by_cause"]["credit_dropped"]


def test_competing_flows_lose_credits_not_data(dumbbell):
    s, _ = dumbbell
    fr = s["frames"]
    assert fr["dropped"] > 1000
    assert fr["dropped"] == fr["dropped_by_cause"]["credit_dropped"]
    assert all(f["xpass"]["retransmitted"] == 0 for f in s["flows"])


def test_without_the_credit_queue_data_is_dropped(sim, scenarios, tmp_path):
    # Credits then share the data queues unlimited: both receivers credit at their maximum and
    # the senders overrun the bottleneck (data loss, go-back-N resends).
    sim(scenarios / "xpass_dumbbell.yaml", "--set", "switch.credit_queue={}", "--set",
        "duration=12ms", "--out", tmp_path / "r", "--quiet")
    s = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert s["frames"]["dropped_by_cause"]["credit_dropped"] == 0
    assert s["frames"]["dropped"] > 100
    assert sum(f["xpass"]["retransmitted"] for f in s["flows"]) > 100


def test_two_long_flows_split_the_link(dumbbell):
    s, out = dumbbell
    # From 5 ms both long flows run; the sized ones come and go at 10-18 ms. Over the whole run
    # the first has more; both got a large share.
    rx = [f["rx_bytes"] for f in s["flows"][:2]]
    assert rx[0] > rx[1] > 0.4 * rx[0]
    tr = pd.read_csv(out / "traces" / "flow0.csv")
    late = tr[tr.time_us > 20000].credit_rate_gbps
    # Alone, the flow credits at the maximum (0.518 Gb/s); shared, near half of it.
    assert 0.2 < late.mean() < 0.35, late.mean()


def test_sized_flows_finish_and_waste_the_credits_after_their_last_data(dumbbell):
    s, _ = dumbbell
    for f, size in zip(s["flows"][2:], (2_000_000, 100_000)):
        x = f["xpass"]
        assert f["rx_bytes"] == size and f["fct_us"] > 0
        assert x["packets"] == -(-size // 1460) and x["stops"] == 1
        assert x["credits_wasted"] >= 1
        assert x["credits_received"] == x["packets"] + x["credits_wasted"]
    assert s["xpass"]["completed"] == 2 and 0 < s["xpass"]["wasted_share"] < 0.01
    assert s["frames"]["conserved"]


@pytest.mark.parametrize("setting, message", [
    ("switch.credit_queue={ratio: 0.1}", "switch.credit_queue.ratio: is set but credit_queue.queue is not"),
    ("switch.credit_queue.queue=8", "switch.credit_queue.queue: '8' is above the maximum 7"),
    ("switch.queues=4", "switch.credit_queue.queue: is not below switch.queues (4)"),
    (["switch.scheduler.kind=sp", "switch.credit_queue.queue=6"],
     "switch.credit_queue.queue: has strict queue 7 above it"),
    ("switch.credit_queue.burst=1KB", "switch.credit_queue.burst: is larger than credit_queue.buffer"),
    ("switch.credit_queue.buffer=50B", "switch.credit_queue.buffer: '50B' is below the minimum"),
    ("switch.credit_queue={jitter: 0.1}",
     "switch.credit_queue.jitter: is set but credit_queue.queue is not"),
    ("switch.credit_queue.jitter=0.6", "switch.credit_queue.jitter: '0.6' is above the maximum 0.5"),
    ("xpass.credit_max=80B", "xpass.credit_max: '80B' is below the minimum"),
    ("xpass.w_init=0.9", "xpass.w_init: must lie between xpass.w_min and xpass.w_max"),
    ("traffic.flows[0].process=poisson", "traffic.flows[0].process: applies to UDP flows only"),
])
def test_bad_credit_input_names_the_key(sim, tmp_path, setting, message):
    (tmp_path / "s.yaml").write_text(ONE)
    sets = [a for s in ([setting] if isinstance(setting, str) else setting) for a in ("--set", s)]
    p = sim(tmp_path / "s.yaml", *sets, "--out", tmp_path / "r", check=False)
    assert p.returncode == 2 and message in p.stderr, p.stderr


def test_a_lossless_credit_queue_is_refused(sim, tmp_path):
    (tmp_path / "s.yaml").write_text(ONE.replace(
        "credit_queue: {queue: 7}",
        "credit_queue: {queue: 7}\n  mmu: {lossless_queues: ['7'], lossless_pool: 1MB}"))
    p = sim(tmp_path / "s.yaml", "--out", tmp_path / "r", check=False)
    assert p.returncode == 2 and "switch.credit_queue.queue: is a lossless queue" in p.stderr, p.stderr


FAN_IN = """
name: xpass_fan_in
seed: 1
duration: 5ms
topology:
  kind: leaf_spine
  host_rate: 10Gbps
  link_delay: 2us
  leaf_spine: {leaves: 3, spines: 2, hosts_per_leaf: 2}
switch: {credit_queue: {queue: 7}}
xpass: {retransmit_timeout: 1ms}
traffic:
  flows:
    - {src: h2, dst: h0, transport: xpass}
    - {src: h3, dst: h0, transport: xpass}
    - {src: h4, dst: h0, transport: xpass}
    - {src: h5, dst: h0, transport: xpass}
results: {sample_interval: 0s}
"""


def test_credits_leave_through_the_credit_queue_of_the_hosts_link_end(sim, tmp_path):
    """Four senders on two other leaves into h0: h0's credits leave leaf0 over two spine
    uplinks, whose credit queues pass twice h0's share. The credit queue at h0's end of its
    link (ns2-xpass has one at every link end) keeps the credits at h0's share: no data lost;
    without it (nic.credit_queue: off) h0's downlink gets up to twice its rate and drops."""
    on = run(sim, tmp_path / "on", FAN_IN)
    cq = on["hosts"]["h0"]["credit_queue"]
    assert cq["rate_bps"] == 517879162 and cq["credits_dropped"] > 0
    assert on["frames"]["dropped"] == on["frames"]["dropped_by_cause"]["credit_dropped"]
    assert on["frames"]["dropped_by_cause"]["credit_dropped"] >= cq["credits_dropped"]
    assert on["xpass"]["retransmitted"] == 0 and on["frames"]["conserved"]
    goodput = sum(f["rx_bytes"] for f in on["flows"]) * 8 / 5e-3 / 1e9
    assert goodput > 8.5, goodput
    off = run(sim, tmp_path / "off", FAN_IN, "nic.credit_queue=off")
    assert "credit_queue" not in off["hosts"]["h0"]
    assert off["frames"]["dropped_by_cause"]["port_cap"] > 100 and off["xpass"]["retransmitted"] > 0
    assert sum(f["rx_bytes"] for f in off["flows"]) * 8 / 5e-3 / 1e9 < goodput


def test_rtt_mismatch_crushes_data_at_the_bottleneck(sim, tmp_path):
    """seed-002 §2.5, Table 4.3: flow 1 (RTT 40 ms) is credited 20-40 ms, flow 2 (RTT 20 ms,
    from 30 ms) 40-60 ms; both flows' data reach the bottleneck together and queue there:
    16177 packets, the round-trip reading of delta-RTT x C (25 MB; the thesis reports the
    one-way one, 12.5 MB, which its own timeline does not give). Equal RTTs interleave."""
    s = run(sim, tmp_path / "a", CRUSH)
    peak = s["switches"]["sw"]["ports"][2]["queues"][0]["peak_frame_bytes"] / 1518
    assert peak == pytest.approx(crush_expected_packets(), rel=0.02)
    assert peak == pytest.approx(20e-3 * 10e9 / 8 / 1538, rel=0.05)
    assert s["frames"]["dropped"] == s["frames"]["dropped_by_cause"]["credit_dropped"]
    assert all(f["fct_us"] > 0 and f["rx_bytes"] == 25_000_000 for f in s["flows"])
    eq = run(sim, tmp_path / "b", CRUSH, "topology.links[1].delay=20ms")
    assert eq["switches"]["sw"]["ports"][2]["queues"][0]["peak_frame_bytes"] / 1518 <= 6
