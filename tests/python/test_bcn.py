"""BCN (issue 15; seed-003 §1.10 and §2 E, facts-l2 §5): the switch's congestion point and the
NIC's rate regulators close the loop, and the thesis's convergence result holds: a flow joining
at 1.1 Gb/s a 10 Gb/s port that three flows keep slightly congested needs thousands of BCN
messages to reach 90 % of its fair share, as formula (13) says for the simulated |e|. The
messages and rate-regulator tags are on the wire as docs/models/bcn.md lays them out; FERA in
the same join converges in milliseconds; bad BCN input is refused naming its key."""
import json
import struct

import pytest

from fabricsim.validation.fera_bcn import BCN_FIXED, steps_13

G_I, G_D, R_U = 0.53, 2.6e-4, 1e6
LINE = 10e9
FAIR = LINE / 4  # four flows on one 10 Gb/s port (limiter rates count wire bytes)
R0 = 1.1e9  # the newcomer's start rate
BCN, RRT = 0x88B6, 0x88B5


@pytest.fixture(scope="module")
def join(sim, scenarios, tmp_path_factory):
    import pandas as pd
    d = tmp_path_factory.mktemp("bcn")
    sim(scenarios / "bcn_join.yaml", "--out", d / "r", "--quiet")
    s = json.loads((d / "r" / "summary.json").read_text())
    return s, pd.read_csv(d / "r" / "timeseries.csv")


def cp_of(s, port=4):
    (cp,) = [c for c in s["switches"]["tor"]["ports"][port]["bcn"] if c["frames"]]
    return cp


def test_the_newcomer_needs_thousands_of_messages_to_reach_90_percent_of_its_share(join):
    s, ts = join
    cp = cp_of(s)
    messages = cp["negative_messages"] + cp["positive_messages"]
    p_neg = cp["negative_messages"] / messages  # E[e†]
    # (9)-(13) take the decrease per message as E|e| E[e†] G_d; the loop's actual mean
    # decrease is E[|e| e†] G_d (negative feedback is smaller in magnitude than positive here),
    # so the step count lies between (13) with the one and with the other.
    e_thesis = cp["fb_abs_mean"] * p_neg * G_D
    e_negative = cp["fb_negative_abs_mean"] * p_neg * G_D
    fast, slow = steps_13(e_thesis), steps_13(e_negative)
    after = ts[ts.time_us > 10_000]  # h3 starts at 10 ms
    reached = after[after["h3_nic.bcn_rate_mean_bps"] >= 0.9 * FAIR]
    assert len(reached), after["h3_nic.bcn_rate_mean_bps"].max()
    n = int(reached.iloc[0]["h3_nic.bcn_messages"])
    print(f"E|e| {cp['fb_abs_mean']:.3f}, E[e†] {p_neg:.3f}, E|e| over negatives "
          f"{cp['fb_negative_abs_mean']:.3f}: (13) gives {fast:.0f}..{slow:.0f} steps; the newcomer "
          f"took {n} messages ({reached.iloc[0].time_us / 1e6 - 0.01:.2f} s)")
    # Thousands (the thesis: 4416 at |e| = 3; here |e| is about 1.7, so more), within 10 % of
    # the band (13) spans (the 1 ms sampling of the rate adds ~1.3 messages).
    assert 2000 < n and 0.9 * fast <= n <= 1.1 * slow, (n, fast, slow)


FERA_JOIN = """
name: fera_join
seed: 1
duration: 40ms
topology: {kind: incast, host_rate: 10Gbps, link_delay: 1us, incast: {hosts: 5}}
switch:
  buffer: 4MB
  fera: {mode: thesis}
nic:
  fera: {mode: thesis}
traffic:
  flows:
    - {src: h0, dst: h4, process: backlogged}
    - {src: h1, dst: h4, process: backlogged}
    - {src: h2, dst: h4, process: backlogged}
    - {src: h3, dst: h4, process: backlogged, start: 10ms}
results: {sample_interval: 100us}
"""


def test_fera_in_the_same_join_converges_orders_of_magnitude_faster(join, sim, tmp_path):
    # Seed-003 §2 E's contrast: FERA gives every flow the same advertised rate per interval, so
    # the newcomer is within 10 % of its share in a few tens of intervals (T = 1 ms, the
    # thesis' hyperbolic f oscillates a little first), where BCN needs seconds.
    import pandas as pd
    (tmp_path / "f.yaml").write_text(FERA_JOIN)
    sim(tmp_path / "f.yaml", "--out", tmp_path / "r", "--quiet")
    ts = pd.read_csv(tmp_path / "r" / "timeseries.csv")
    r = ts[ts.time_us >= 10_000].set_index("time_us")["h3_nic.fera_rate_min_bps"]
    outside = r[(r - FAIR).abs() > 0.1 * FAIR]
    fera_s = (outside.index.max() - 10_000) / 1e6 + 1e-4  # in the band for good from here
    _, bcn_ts = join
    after = bcn_ts[bcn_ts.time_us > 10_000]
    bcn_s = after[after["h3_nic.bcn_rate_mean_bps"] >= 0.9 * FAIR].iloc[0].time_us / 1e6 - 0.01
    print(f"newcomer within 10 % of its share: FERA after {fera_s * 1e3:.1f} ms, BCN reaches "
          f"90 % after {bcn_s:.2f} s")
    assert fera_s <= 0.03 and bcn_s >= 10 * fera_s, (fera_s, bcn_s)


def test_the_rate_trajectory_follows_eq_11(join):
    s, ts = join
    cp = cp_of(s)
    messages = cp["negative_messages"] + cp["positive_messages"]
    p_neg = cp["negative_messages"] / messages
    e_fast = cp["fb_abs_mean"] * p_neg * G_D
    e_slow = cp["fb_negative_abs_mean"] * p_neg * G_D
    after = ts[ts.time_us > 10_000]
    for n in (1000, 2000, 4000):
        row = after[after["h3_nic.bcn_messages"] >= n].iloc[0]
        r = row["h3_nic.bcn_rate_mean_bps"]
        # (11) with the mean factor: r* + (r0 - r*) (1 - e)^n, between the two e, +-5 % of r*.
        lo = FAIR + (R0 - FAIR) * (1 - e_slow) ** n - 0.05 * FAIR
        hi = FAIR + (R0 - FAIR) * (1 - e_fast) ** n + 0.05 * FAIR
        assert lo <= r <= hi, (n, r, lo, hi)


def test_the_flows_end_at_equal_shares_with_the_queue_near_q_eq(join):
    s, ts = join
    last = ts[ts.time_us >= 7_000_000]
    rates = [last[f"h{h}_nic.bcn_rate_mean_bps"].mean() for h in range(4)]
    # One bottleneck: proportional and max-min fairness agree, on C/4.
    assert all(abs(r - FAIR) < 0.1 * FAIR for r in rates), rates
    assert abs(sum(rates) - LINE) < 0.03 * LINE, rates
    q = last["tor.p4_frame_bytes"]
    assert 8 * 1518 <= q.median() <= 32 * 1518, q.describe()
    fr = s["frames"]
    # Messages are control frames: made by the switch, taken in by the NICs' regulators.
    cp = cp_of(s)
    assert fr["conserved"] and fr["control_sent"] == cp["negative_messages"] + cp["positive_messages"]
    received = sum(s["nics"][f"h{h}_nic"]["bcn"]["messages_received"] for h in range(4))
    assert fr["control_sent"] - 4 <= received == fr["control_received"] <= fr["control_sent"]
    # Backlogged sources: the regulators set the rates, nothing is dropped anywhere.
    assert fr["dropped"] == 0, fr["dropped_by_cause"]
    for h in range(4):
        b = s["nics"][f"h{h}_nic"]["bcn"]
        assert b["installs"] == 1 and b["limiters_in_use"] == 1 and b["stops"] == 0
        assert b["tagged_frames"] > 0.9 * b["limited_frames"]


FIXED = BCN_FIXED  # the validation report's eq. (10) run


def test_the_fixed_point_of_eq_10_holds_with_the_simulated_feedback(sim, tmp_path):
    # Five flows start at the thesis's r* = G_i R_u / G_d = 2.04 Gb/s (slightly congested: 10.2
    # Gb/s on 10) and settle at their share, 2 Gb/s. The regulators' mean change per message
    # vanishes where G_i R_u E[|e|(1 - e†)] = G_d r* E[|e| e†], eq. (10) with the magnitudes
    # the CP sent; E[e†] = 1/2 with equal magnitudes is the thesis's 2.04 Gb/s. Here negative
    # feedback is smaller than positive, so E[e†] settles above 1/2.
    import pandas as pd
    (tmp_path / "s.yaml").write_text(FIXED)
    sim(tmp_path / "s.yaml", "--out", tmp_path / "r", "--quiet")
    s = json.loads((tmp_path / "r" / "summary.json").read_text())
    cp = cp_of(s, 5)
    neg, pos = cp["negative_messages"], cp["positive_messages"]
    neg_sum = cp["fb_negative_abs_mean"] * neg
    pos_sum = cp["fb_abs_mean"] * (neg + pos) - neg_sum
    r_star = G_I * R_U * pos_sum / (G_D * neg_sum)
    print(f"E[e†] {neg / (neg + pos):.3f}, E|e| negative {neg_sum / neg:.3f} positive "
          f"{pos_sum / pos:.3f}: r* from (10) {r_star / 1e9:.3f} Gb/s; G_i R_u / G_d = "
          f"{G_I * R_U / G_D / 1e9:.3f} Gb/s")
    assert abs(G_I * R_U / G_D - 2.04e9) < 0.01e9
    assert neg > 1000 and pos > 1000 and 0.5 < neg / (neg + pos) < 0.65
    assert abs(r_star - 2e9) < 0.1 * 2e9, r_star
    ts = pd.read_csv(tmp_path / "r" / "timeseries.csv")
    rates = [ts[f"h{h}_nic.bcn_rate_mean_bps"].iloc[-500:].mean() for h in range(5)]
    assert all(abs(r - 2e9) < 0.05 * 2e9 for r in rates), rates


SHORT = FIXED.replace("1500ms", "30ms").replace("sample_interval: 1ms}",
                                                 "sample_interval: 1ms, pcap: [h0, tor:0]}")


def frames(path):
    d = path.read_bytes()
    off = 24
    while off < len(d):
        _, _, incl, _ = struct.unpack("<IIII", d[off:off + 16])
        yield d[off + 16:off + 16 + incl]
        off += 16 + incl


def test_messages_and_tags_are_on_the_wire(sim, tmp_path):
    (tmp_path / "s.yaml").write_text(SHORT)
    sim(tmp_path / "s.yaml", "--out", tmp_path / "r", "--quiet")
    s = json.loads((tmp_path / "r" / "summary.json").read_text())
    cpid = cp_of(s, 5)["cpid"]
    h0 = list(frames(tmp_path / "r" / "h0.pcap"))  # what h0 sends
    tagged = [f for f in h0 if struct.unpack(">H", f[12:14])[0] == RRT]
    assert tagged and all(struct.unpack(">I", f[14:18])[0] == cpid for f in tagged)
    assert all(struct.unpack(">H", f[18:20])[0] == 0x0800 for f in tagged)
    assert len(tagged) == s["nics"]["h0_nic"]["bcn"]["tagged_frames"]
    msgs = [f for f in frames(tmp_path / "r" / "tor.0.pcap") if struct.unpack(">H", f[12:14])[0] == BCN]
    assert len(msgs) == s["nics"]["h0_nic"]["bcn"]["messages_received"] > 0
    for m in msgs:
        word, c, qoff, qdelta, fb = struct.unpack(">HIiii", m[14:32])
        assert word == 0 and c == cpid and m[0:6] == h0[0][6:12]  # to h0's MAC
        assert abs(fb + qoff + 2 * qdelta) <= 2  # Fb = -(Q_off + 2 Q_delta), each rounded to 1/256
        assert fb != 0 and m[6] == 0x06  # the CP's locally administered MAC


@pytest.mark.parametrize("setting, message", [
    ("switch.bcn.q_eq=8MB", "switch.bcn.q_eq: Q_eq 8000000B is not below switch.buffer (4000000B)"),
    ("switch.bcn.q_sc=1KB", "switch.bcn.q_sc: must be 0 (no STOP) or > q_eq_bytes"),
    ("switch.bcn.sample_every=0", "switch.bcn.sample_every: '0' is below the minimum"),
    ("switch.bcn.priorities=[]", "switch.bcn.priorities: lists no priority"),
    ("switch.qcn.mode=thesis", "switch.bcn.mode: queue 0 would run both QCN and BCN"),
    ("nic.qcn.mode=thesis", "nic.bcn.mode: a NIC runs QCN or BCN reaction points, not both"),
    ("nic.bcn.g_d=2", "nic.bcn.g_d: '2' is above the maximum"),
    ("nic.bcn.min_rate=20Gbps", "nic.bcn.min_rate: host 'h0' (10Gbps): must not exceed the line rate"),
    ("nic.bcn.initial_rate=50Mbps", "nic.bcn.initial_rate: host 'h0' (10Gbps): must be 0 (line rate) or between"),
])
def test_bad_bcn_input_names_the_key(sim, tmp_path, setting, message):
    (tmp_path / "s.yaml").write_text(SHORT)
    p = sim(tmp_path / "s.yaml", "--set", setting, "--out", tmp_path / "r", check=False)
    assert p.returncode == 2 and message in p.stderr, p.stderr


def test_bcn_keys_without_a_mode_are_refused(sim, tmp_path):
    (tmp_path / "s.yaml").write_text(SHORT.replace("bcn: {mode: thesis}}", "bcn: {q_eq: 30KB}}"))
    p = sim(tmp_path / "s.yaml", "--out", tmp_path / "r", check=False)
    assert p.returncode == 2 and "switch.bcn.q_eq: is set but bcn.mode is not" in p.stderr, p.stderr
    nic_without_mode = SHORT.replace("{bcn: {mode: thesis, initial_rate: 2.04Gbps}}",
                                     "{bcn: {initial_rate: 2Gbps}}")
    assert nic_without_mode != SHORT
    (tmp_path / "t.yaml").write_text(nic_without_mode)
    p = sim(tmp_path / "t.yaml", "--out", tmp_path / "r2", check=False)
    assert p.returncode == 2 and "nic.bcn.initial_rate: applies only with a bcn.mode" in p.stderr, p.stderr


PARKING_LOT = """
name: bcn_parking_lot
seed: 1
duration: 3s
topology:
  kind: custom
  host_rate: 10Gbps
  link_delay: 1us
  switches: [{name: s0, ports: 3}, {name: s1, ports: 4}]
  hosts: [{name: a}, {name: b}, {name: c}, {name: d1}, {name: d2}]
  links:
    - {a: a, b: 's0:0'}
    - {a: b, b: 's0:1'}
    - {a: 's0:2', b: 's1:0'}
    - {a: c, b: 's1:1'}
    - {a: 's1:2', b: d2}
    - {a: 's1:3', b: d1}
switch: {buffer: 4MB, bcn: {mode: thesis}}
nic: {bcn: {mode: thesis, initial_rate: 6Gbps}}
traffic:
  flows:
    - {src: a, dst: d2, process: backlogged}
    - {src: b, dst: d1, process: backlogged}
    - {src: c, dst: d2, process: backlogged}
results: {sample_interval: 1ms}
"""


def test_two_bottlenecks_share_proportionally_not_max_min(sim, tmp_path):
    # Parking lot: flow a crosses both 10G bottlenecks (s0:2 and s1:2), b only the first, c only
    # the second. Max-min gives 5 Gb/s each; proportional fairness C/3 to a and 2C/3 to b and c
    # (Jiang & Jain: BCN is proportionally fair). Flow a hears negative feedback from both CPs
    # and positive only from the one its tag names, so it ends near C/3.
    import pandas as pd
    (tmp_path / "s.yaml").write_text(PARKING_LOT)
    sim(tmp_path / "s.yaml", "--out", tmp_path / "r", "--quiet")
    ts = pd.read_csv(tmp_path / "r" / "timeseries.csv")
    a, b, c = (ts[f"{h}_nic.bcn_rate_mean_bps"].iloc[-500:].mean() for h in "abc")
    print(f"a {a / 1e9:.2f}, b {b / 1e9:.2f}, c {c / 1e9:.2f} Gb/s")
    assert abs(a + b - LINE) < 0.05 * LINE and abs(a + c - LINE) < 0.05 * LINE, (a, b, c)
    assert abs(a - LINE / 3) < abs(a - LINE / 2) and abs(a - LINE / 3) < 0.2 * LINE / 3, (a, b, c)
    s = json.loads((tmp_path / "r" / "summary.json").read_text())
    # Its regulator takes the tag of whichever CP sent the last negative message, so some
    # positive feedback reaches it stale (from the other CP) and is ignored.
    assert s["nics"]["a_nic"]["bcn"]["rp_ignored"] > 0


def test_above_q_sc_the_cp_sends_stop_and_the_regulators_restart_at_min_rate(sim, tmp_path):
    # Q_sc just above Q_eq: some samples find the queue above it and send BCN(0,0); each NIC
    # silences its regulator for a random time and restarts it at 100 Mb/s.
    (tmp_path / "s.yaml").write_text(SHORT)
    sim(tmp_path / "s.yaml", "--set", "switch.bcn.q_sc=27KB", "--out", tmp_path / "r", "--quiet")
    s = json.loads((tmp_path / "r" / "summary.json").read_text())
    cp = cp_of(s, 5)
    nics = [s["nics"][f"h{h}_nic"]["bcn"] for h in range(5)]
    assert cp["stop_messages"] > 0
    assert cp["stop_messages"] - 5 <= sum(n["stops"] for n in nics) <= cp["stop_messages"]
    assert sum(cp["fb_histogram"]) == cp["negative_messages"] + cp["positive_messages"]
    assert s["frames"]["conserved"]
