"""FERA in the frame path (issue 15; seed-003 §1.2-§1.9, §2 A/B, §3.1-§3.2): the switch's
advertised rate, the forward tags it lowers, the destination's returning tags and the sources'
per-flow regulators close the loop. The oracles: the linear-f convergence time of §2 B, the
max-min rate C/N one interval after the first tags return (§2 A), the gamma and multistage
trends of Tables 7.1/7.2. Bad FERA input is refused naming the key."""
import json
import struct

import pandas as pd
import pytest

from fabricsim.validation.fera_bcn import analysis, queue_per_interval, recurrence_entry, throughput_mbps

C = 10e9
Q_EQ = 16 * 1500  # bytes, as the thesis' 16 packets of 1500 B
FERA = 0x88B5


def run(sim, tmp_path, text, name="r"):
    (tmp_path / f"{name}.yaml").write_text(text)
    sim(tmp_path / f"{name}.yaml", "--out", tmp_path / name, "--quiet")
    out = tmp_path / name
    return json.loads((out / "summary.json").read_text()), pd.read_csv(out / "timeseries.csv")


@pytest.mark.parametrize("k, seed_n", [(0.002, 21), (0.008, 5)])
def test_queue_enters_the_band_after_the_seed_interval_count(sim, tmp_path, k, seed_n):
    # §2 B: iterating eq. (5) from q_0 = 0 the queue first enters [0.9, 1.1] Q_eq at step 21
    # (k = 0.002) and 5 (k = 0.008); the packet model within +-2 intervals (its queue moves in
    # whole 1518-B frames, the fluid one in fractions of a packet).
    assert recurrence_entry(k) == seed_n
    s, ts = run(sim, tmp_path, analysis(k))
    qs = queue_per_interval(ts)
    n = next(i for i, q in enumerate(qs) if 0.9 * Q_EQ <= q <= 1.1 * Q_EQ)
    assert abs(n - seed_n) <= 2, (n, [round(q / 1500, 1) for q in qs])
    # Then it stays near Q_eq (within one frame of the band) and nothing is dropped or paused.
    assert all(0.9 * Q_EQ - 1518 <= q <= 1.1 * Q_EQ + 1518 for q in qs[seed_n + 3:]), qs
    fera = s["switches"]["tor"]["ports"][0]["fera"]
    assert fera["intervals"] >= 35 and fera["paused_intervals"] == 0
    assert s["frames"]["conserved"] and s["frames"]["dropped"] == 0


def test_sources_take_the_max_min_rate_one_interval_after_the_first_tags(sim, tmp_path):
    # §2 A: r_{i+1} = f(q_i) C / N. The first tags return with r_0 = C/N_0; the first close
    # measures N r_0 and advertises f(0) C/N = 1.002 C/N, which the next tags bring back:
    # within 1 % of C/N (the 0.2 % of f(0) plus the measurement's frame granularity).
    s, ts = run(sim, tmp_path, analysis(0.002, sources=4, duration_ms=6))
    rate = ts["tor.p0.fera_rate_bps"]
    t1 = ts.time_us[rate != rate.iloc[0]].iloc[0]
    # Before: every source at C/N_0; one interval after the first close: C/N each.
    early = ts[(ts.time_us > 0) & (ts.time_us < t1 - 100)]
    assert (early["h1_nic.fera_rate_min_bps"] == C / 1000).all()
    later = ts[(ts.time_us >= t1 + 100) & (ts.time_us <= t1 + 3000)]
    for h in range(1, 5):
        r = later[f"h{h}_nic.fera_rate_min_bps"]
        assert (abs(r / (C / 4) - 1) < 0.01).all(), r.describe()
    # Each source sent a tag per tau and got each back (but those in flight at the end).
    for h in range(1, 5):
        f = s["nics"][f"h{h}_nic"]["fera"]
        assert f["flows"] == 1 and 6 <= f["tags_sent"] <= 7
        assert f["tags_sent"] - 1 <= f["tags_returned"] <= f["tags_sent"]
    # The destination reflected every tag; they count as control frames in the balance.
    assert s["nics"]["h0_nic"]["fera"]["tags_reflected"] == sum(
        s["nics"][f"h{h}_nic"]["fera"]["tags_sent"] for h in range(1, 5))
    fr = s["frames"]
    assert fr["conserved"] and fr["control_sent"] == s["nics"]["h0_nic"]["fera"]["tags_reflected"]


def frames(path):
    d = path.read_bytes()
    off = 24
    while off < len(d):
        _, _, incl, _ = struct.unpack("<IIII", d[off:off + 16])
        yield d[off + 16:off + 16 + incl]
        off += 16 + incl


def test_tags_are_bytes_in_the_pcaps(sim, tmp_path):
    # Forward tags: a 12-byte trailer after the IPv4 datagram (EtherType 0x88B5, type 1, rate
    # in bit/s) on the first frame and then one per tau; the switch lowers the rate. Returning
    # tags: 0x88B5 frames of type 2 with the rate and the flow id, to the source.
    text = analysis(0.002, sources=2, duration_ms=3, pcap=", pcap: [h1, tor:0, tor:1]")
    run(sim, tmp_path, text)
    out = tmp_path / "r"
    sent, back = [], []
    for pkt in frames(out / "h1.pcap"):  # what h1 sends
        assert struct.unpack(">H", pkt[12:14])[0] == 0x0800
        ip_len = struct.unpack(">H", pkt[16:18])[0]
        trailer = pkt[14 + ip_len:]
        if len(trailer) == 12:
            assert struct.unpack(">HBB", trailer[:4]) == (FERA, 1, 0)
            sent.append(struct.unpack(">Q", trailer[4:])[0])
        else:
            assert trailer == b""
    for pkt in frames(out / "tor.1.pcap"):  # what reaches h1
        assert struct.unpack(">H", pkt[12:14])[0] == FERA and len(pkt) == 60
        assert pkt[14] == 2 and pkt[0:6] == next(frames(out / "h1.pcap"))[6:12]
        back.append(struct.unpack(">QI", pkt[16:28]))
    assert sent == [int(C)] * len(sent) and 3 <= len(sent) <= 4  # at the link rate, 1 per ms
    # The first comes back with r_0 = C/N_0; the next with about C/2.
    assert back[0] == (int(C / 1000), 0)
    assert all(abs(r / (C / 2) - 1) < 0.01 and f == 0 for r, f in back[1:]), back
    lowered = []
    for pkt in frames(out / "tor.0.pcap"):
        if struct.unpack(">H", pkt[12:14])[0] == 0x0800:
            ip_len = struct.unpack(">H", pkt[16:18])[0]
            if len(pkt) - 14 - ip_len == 12:
                lowered.append(struct.unpack(">Q", pkt[-8:])[0])
    assert lowered and all(r < C for r in lowered)


BAD_BASE = analysis(0.002, duration_ms=1)


@pytest.mark.parametrize("setting, message", [
    ("switch.fera.q_sc=8pkt", "switch.fera.q_sc: switch 'tor' port 0 (10Gbps): must be >= q_eq_bytes"),
    ("switch.fera.gamma=1.5", "switch.fera.gamma: switch 'tor' port 0 (10Gbps): must be in (0, 1]"),
    ("switch.fera.n0=0.5", "switch.fera.n0: switch 'tor' port 0 (10Gbps): must be >= 1"),
    ("switch.fera.control=cubic", "switch.fera.control"),
    ("nic.fera.tau=2ms", "nic.fera.tau: host 'h0'"),
    ("nic.qcn.mode=thesis", "nic.fera.mode: host 'h0': a NIC has one reaction point"),
    ("nic.bcn.mode=thesis", "nic.fera.mode: host 'h0': a NIC has one reaction point: not with bcn.mode"),
])
def test_bad_fera_input_names_the_key(sim, tmp_path, setting, message):
    (tmp_path / "s.yaml").write_text(BAD_BASE)
    p = sim(tmp_path / "s.yaml", "--set", setting, "--out", tmp_path / "r", check=False)
    assert p.returncode == 2 and message in p.stderr, p.stderr


def test_stability_warns_by_default_and_strict_refuses(sim, tmp_path):
    # §2 A: alpha k / Q_eq < 1 is sufficient for convergence; k = 0.02 at 10G, T 1 ms, Q_eq 16
    # gives 1.04: a warning naming the key, or with strict_stability a refusal (exit 2).
    (tmp_path / "s.yaml").write_text(BAD_BASE)
    p = sim(tmp_path / "s.yaml", "--set", "switch.fera.k=0.02", "--out", tmp_path / "r",
            "--quiet", check=False)
    assert p.returncode == 0 and "warning: switch.fera.k: switch 'tor' port 0" in p.stderr
    assert "a warning: set switch.fera.strict_stability: true to refuse it" in p.stderr
    p = sim(tmp_path / "s.yaml", "--set", "switch.fera.k=0.02", "--set",
            "switch.fera.strict_stability=true", "--out", tmp_path / "r2", check=False)
    assert p.returncode == 2 and "switch.fera.k: switch 'tor' port 0" in p.stderr
    assert "refused: strict_stability is true" in p.stderr, p.stderr


def test_fera_keys_without_a_mode_are_refused(sim, tmp_path):
    (tmp_path / "s.yaml").write_text(BAD_BASE.replace("mode: analysis, ", ""))
    p = sim(tmp_path / "s.yaml", "--out", tmp_path / "r", check=False)
    assert p.returncode == 2 and "switch.fera.n0: is set but fera.mode is not" in p.stderr, p.stderr


def heavy(gamma=None, control=None, stages=1, duration_ms=50, hosts=10, per_host=10,
          process=", process: bernoulli"):
    """§3.1/§3.2: 100 Bernoulli flows of 200 Mb/s average (slots at 400 Mb/s, each used with
    probability 1/2) into one 10G port (2x overload), the thesis
    preset (hyperbolic f, Q_eq 16, Q_sc 80, T 1 ms, N_0 20), PAUSE ON/OFF 90/80 packets. Ten
    hosts with ten flows each; L = 200 packets (not 100: ten line-rate senders overrun 10
    packets of headroom within the Annex 31B response time, and the thesis' PAUSE is lossless)."""
    fera = "mode: thesis"
    if gamma is not None:
        fera += f", gamma: {gamma}"
    if control:
        fera += f", control: {control}, k: 0.002, stages: {stages}"
    flows = "\n".join(f"    - {{src: h{h}, dst: h0, rate: 200Mbps, frames: 1000000{process}}}"
                      for h in range(1, hosts + 1) for _ in range(per_host))
    return f"""
name: fera_heavy
seed: 1
duration: {duration_ms}ms
topology: {{kind: incast, host_rate: 10Gbps, link_delay: 0.5us, incast: {{hosts: {hosts + 1}}}}}
switch:
  queues: 1
  port_cap: 200pkt
  flow_control: {{generate: queue_pause, q_on: 90pkt, q_off: 80pkt}}
  fera: {{{fera}}}
nic:
  tx_queue: 100000
  flow_control: {{honour_pause: true}}
  fera: {{mode: thesis}}
traffic:
  flows:
{flows}
results: {{sample_interval: 1ms}}
"""


@pytest.fixture(scope="module")
def gamma_sweep(sim, tmp_path_factory):
    d = tmp_path_factory.mktemp("gamma")
    out = {}
    for g in (0.98, 0.99, 1.0):
        s, ts = run(sim, d, heavy(gamma=g), name=f"g{g}")
        out[g] = (s, ts)
    return out


def test_gamma_sweep_table_7_1(gamma_sweep):
    # Table 7.1: 9154 / 9329 / 9154 Mb/s for gamma 0.98 / 0.99 / 1.00 (here 9248 / 9294 / 9360):
    # the hyperbolic loop (alpha k/Q_eq = 4.7 > 1 at T = 1 ms) oscillates between an empty
    # queue and PAUSE and loses 6-9 % of the link. Here the same: each run within 9.0-9.5
    # Gb/s, lossless, with PAUSE cycles; without FERA the sources hold the port in PAUSE at
    # 9.87 Gb/s.
    tp = {g: throughput_mbps(s) for g, (s, _) in gamma_sweep.items()}
    for g, (s, ts) in gamma_sweep.items():
        assert 9000 <= tp[g] <= 9500, tp
        assert s["frames"]["dropped"] == 0
        fera = s["switches"]["tor"]["ports"][0]["fera"]
        assert 0 < fera["paused_intervals"] < fera["intervals"] / 2
        # The sources end near the fair share C/100 (the loop's swing: within a factor 2).
        rates = [f["rate_bps"] for h in range(1, 11)
                 for f in s["nics"][f"h{h}_nic"]["fera"]["per_flow"]]
        assert len(rates) == 100 and 50e6 <= sum(rates) / 100 <= 200e6
    # gamma < 1 serves q > Q_eq at gamma C: the mean queue falls with gamma.
    mean_q = {g: ts["tor.p0_frame_bytes"][ts.time_us >= 10000].mean()
              for g, (_, ts) in gamma_sweep.items()}
    assert mean_q[0.98] < mean_q[0.99] < mean_q[1.0], mean_q


@pytest.mark.xfail(strict=True, reason="Table 7.1's optimum at gamma 0.99 is not reproduced: "
                   "throughput rises with gamma by < 1.2 % (9248/9294/9360 Mb/s), within the "
                   "loop's run-to-run variation; see docs/models/fera_bcn.md")
def test_gamma_0_99_beats_0_98_and_1_00(gamma_sweep):
    tp = {g: throughput_mbps(s) for g, (s, _) in gamma_sweep.items()}
    assert tp[0.99] > tp[0.98] and tp[0.99] > tp[1.0], tp


def test_multistage_table_7_2(sim, tmp_path, gamma_sweep):
    # Table 7.2 (Bernoulli): single stage 9329 (the gamma 0.99 run of Table 7.1), multistage
    # n = 2 9446, n = 3 9815 Mb/s (here 9294, 9869, 9869). The multistage f (k = 0.002 s on stage s) is gentle near
    # Q_eq: the sources come down from C/N_0 = 500 Mb/s slowly and PAUSE holds the port busy,
    # so both multistage runs use more of the link than the oscillating hyperbolic one.
    single = throughput_mbps(gamma_sweep[0.99][0])
    tp = {}
    for n in (2, 3):
        s, _ = run(sim, tmp_path, heavy(gamma=0.99, control="multistage", stages=n), name=f"m{n}")
        assert s["frames"]["dropped"] == 0
        tp[n] = throughput_mbps(s)
    assert tp[3] >= tp[2] - 0.002 * 1e4 and tp[2] >= single + 0.03 * 1e4, (single, tp)
