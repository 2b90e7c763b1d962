"""QCN stability (seed-000 §2.5, Fig 5.6; issue 15): ten backlogged L2 sources share one 10G port
whose congestion point runs the thesis' QCN (Q_eq = 22 packets, w = 2, p_s = 1 %) and whose
reaction points run the thesis' RP (G_d = 1/128, R_AI = 5 Mb/s, byte counter only: 5 fast
recovery cycles) or QCN-AIMD (no fast recovery). The thesis: both stable around Q_eq at RTT
50 us; at 200 us QCN-AIMD oscillates and underflows while QCN stays stable; QCN hovers near Q_eq
past its Theorem 5.1 margin (tau* = 249 us) at 350 us and underflows only beyond ~500 us.

The queue is sampled every 10 us from 300 ms to 800 ms, after the start transient (ten sources at line
rate into one port: the first few ms overflow the port until the CNMs have cut the rates). RTT
here is the propagation round trip (4 links); serialisation and NIC latency add ~7 us."""
import json

import pytest

import fabricsim
from fabricsim.validation.qcn import STABILITY, near_q_eq

SCENARIO = STABILITY  # the validation report's Fig 5.6 loop
Q_EQ = 22  # packets
WARM_US = 300_000


def loop(sim, tmp_path, rtt_us, mode, seed=1):
    import pandas as pd
    d = tmp_path / f"{mode}_{rtt_us}_{seed}"
    d.mkdir()
    (d / "s.yaml").write_text(SCENARIO.format(delay=rtt_us / 4, mode=mode, seed=seed))
    sim(d / "s.yaml", "--out", d / "r", "--quiet")
    s = json.loads((d / "r" / "summary.json").read_text())
    ts = pd.read_csv(d / "r" / "timeseries.csv")
    q = ts[ts.time_us >= WARM_US]["tor.p10_frame_bytes"] / 1500
    return s, {"underflow": float((q == 0).mean()), "median": q.median(), "p10": q.quantile(0.1),
               "swing": q.quantile(0.9) - q.quantile(0.1)}


@pytest.fixture(scope="module")
def tmp(tmp_path_factory):
    return tmp_path_factory.mktemp("qcn_stability")


@pytest.fixture(scope="module")
def at_50(sim, tmp):
    return {m: loop(sim, tmp, 50, m) for m in ("thesis", "thesis_aimd")}


@pytest.fixture(scope="module")
def at_200(sim, tmp):
    return {m: loop(sim, tmp, 200, m) for m in ("thesis", "thesis_aimd")}


def test_both_hold_the_queue_around_q_eq_at_50us(at_50):
    for mode, (s, q) in at_50.items():
        assert 0.6 * Q_EQ <= q["median"] <= 1.2 * Q_EQ, (mode, q)
        assert q["underflow"] <= 0.005, (mode, q)
        # The loop runs on CNMs: every source was cut and recovers by its byte counter.
        for h in range(10):
            rp = s["nics"][f"h{h}_nic"]["qcn"]
            assert rp["decreases"] > 10 and rp["byte_events"] > 10
            assert (rp["fast_recovery_events"] == 0) == (mode == "thesis_aimd")
    # QCN's averaging holds it tighter than AIMD's additive steps even here.
    assert near_q_eq(at_50["thesis"][1]), at_50["thesis"][1]
    assert at_50["thesis"][1]["swing"] < at_50["thesis_aimd"][1]["swing"]


def test_at_200us_qcn_stays_stable_where_qcn_aimd_underflows(at_200):
    qcn, aimd = at_200["thesis"][1], at_200["thesis_aimd"][1]
    assert near_q_eq(qcn), qcn
    # QCN-AIMD drains the queue: empty at times, below 0.3 Q_eq 10 % of the time (QCN: above 0.45 Q_eq).
    assert aimd["underflow"] > qcn["underflow"] and aimd["p10"] <= 0.3 * Q_EQ, (qcn, aimd)
    assert aimd["swing"] >= 1.4 * qcn["swing"], (qcn, aimd)


def test_tau_star_of_the_configured_gains_bounds_a_stable_loop(sim, tmp, at_50):
    # Theorem 5.1 for the gains the run reports (the thesis' baseline: tau* = 249 us) ...
    s, _ = at_50["thesis"]
    rp = s["nics"]["h0_nic"]["qcn"]["params"]
    (cp,) = [c for c in s["switches"]["tor"]["ports"][10]["qcn"] if c["frames"]]
    m = fabricsim.qcn_stability(10e9, flows=10, r_ai_bps=rp["ai_rate_bps"], g_d=rp["gd"],
                                w=cp["w"], p_s=cp["sample_probability"],
                                q_eq_packets=cp["q_eq_bytes"] / 1500)
    assert m["tau_star"] == pytest.approx(249.07e-6, abs=0.05e-6)
    assert m["tau_hat"] == pytest.approx(216.3e-6, abs=0.1e-6) and m["thm53_holds"]
    # ... is sufficient: the loop at 0.9 tau* keeps the queue near Q_eq and (almost) never
    # empties it. Averaged over seeds 1-3: near the margin single runs vary (seeds 1-11: empty
    # 0.01-0.17 % of the time, p10 8-13 packets; at 350 us 0.2-0.6 % and 3-7 packets).
    rtt = round(0.9 * m["tau_star"] * 1e6)
    qs = [loop(sim, tmp, rtt, "thesis", seed)[1] for seed in (1, 2, 3)]
    mean = {k: sum(q[k] for q in qs) / len(qs) for k in qs[0]}
    assert near_q_eq(mean), (rtt, qs)


def test_qcn_hovers_near_q_eq_past_tau_star_and_underflows_beyond_500us(sim, tmp, at_200):
    _, q350 = loop(sim, tmp, 350, "thesis")
    assert 0.6 * Q_EQ <= q350["median"] and q350["underflow"] <= 0.01, q350
    assert q350["swing"] > at_200["thesis"][1]["swing"]  # larger oscillation
    _, q700 = loop(sim, tmp, 700, "thesis")
    assert q700["underflow"] >= 0.01 and q700["median"] < 0.6 * Q_EQ, q700


def test_a_backlogged_source_refuses_a_rate(sim, tmp_path):
    (tmp_path / "s.yaml").write_text(SCENARIO.format(delay=1, mode="thesis", seed=1).replace(
        "process: backlogged", "process: backlogged, load: 0.7"))
    p = sim(tmp_path / "s.yaml", "--out", tmp_path / "r", check=False)
    assert p.returncode == 2 and (
        "traffic.generate[0].load: does not apply to a backlogged source") in p.stderr, p.stderr
