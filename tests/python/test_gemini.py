"""GEMINI (issue 16; seed-002 §1.1 Algorithm 1, §2.1-§2.2): the sawtooth of Theorem 3.3.1 at
two points and on either side of its full-use condition, RTT fairness (Theorem 3.3.2) at 16x
against DCTCP, the results and traces, and bad input refused naming the key. The same
measures as the validation report (fabricsim.validation.gemini)."""
import json
import types

import pandas as pd
import pytest
import yaml

from fabricsim.validation.gemini import fairness, sawtooth, sawtooth_ok


@pytest.fixture
def run(sim, tmp_path):
    def go(config, name):
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(config))
        out = tmp_path / name
        sim(tmp_path / f"{name}.yaml", "--out", out, "--quiet", "--overwrite")
        summary = json.loads((out / "summary.json").read_text())
        ts = out / "timeseries.csv"
        return types.SimpleNamespace(summary=summary,
                                     timeseries=pd.read_csv(ts) if ts.exists() else None)
    return go


@pytest.mark.parametrize("n,k", [(10, 200), (4, 200)])
def test_theorem_331_sawtooth(run, n, k):
    v = sawtooth(run, n, k)
    # h = H C RTT = 1.2e-7 x 1e10 x 5 ms = 6, capped at 5; F = 4K/(C RTT + K) exactly.
    assert v["h"] == 5.0
    assert v["f"] == pytest.approx(v["f_limit"], rel=1e-3)
    assert abs(v["q_max"] - (k + n * 5)) <= 0.15 * (k + n * 5), v
    assert abs(v["amplitude"] - v["amplitude_model"]) <= 0.25 * v["amplitude_model"], v
    assert v["q_min"] > 0 and v["use"] > 0.9999, v
    assert sawtooth_ok(v)


def test_theorem_331_full_use_condition(run):
    below = sawtooth(run, 10, 200, 0.8)  # F under 4K/(C RTT + K): the queue never empties
    above = sawtooth(run, 10, 200, 3.0)  # over it: Q_min < 0 in the model, the port idles
    assert below["q_min"] > 0 and below["use"] > 0.9999, below
    assert above["q_min_model"] < 0
    assert above["q_min"] == 0 and above["use"] < 0.999, above


def test_theorem_332_fairness_at_16x_and_dctcp_contrast(run):
    g = fairness(run, "gemini", 16)
    d = fairness(run, "dctcp", 16)
    assert abs(g - 1) <= 0.25, g
    assert d > 20, d  # DCTCP: the 200 us flow takes the link


@pytest.mark.xfail(strict=True, reason="Theorem 3.3.2 at 4x is not reproduced: the 200 us flow "
                   "gets ~0.62 of the 800 us flow's rate, and other pairs 0.76-1.5 "
                   "(docs/models/gemini.md)")
def test_theorem_332_fairness_at_4x(run):
    assert abs(fairness(run, "gemini", 4) - 1) <= 0.25


def test_results_trace_and_pacing(run, sim, tmp_path):
    cfg = {
        "name": "gemini_one", "seed": 1, "duration": "20ms",
        "topology": {"kind": "dumbbell", "host_rate": "10Gbps", "link_delay": "25us",
                     "dumbbell": {"hosts_per_side": 1}},
        "switch": {"ecn": {"mode": "step", "k": "65pkt"}},
        "tcp": {"cc": "gemini"},
        "traffic": {"flows": [{"src": "h0", "dst": "h1", "transport": "tcp", "trace": True,
                               "size": "2MB"}]},
    }
    s = run(cfg, "one").summary
    f = s["flows"][0]
    g = f["tcp"]["gemini"]
    assert f["fct_us"] > 0 and f["rx_bytes"] == 2_000_000
    # C = the 10G line rate, K = 500 packets of 1500 B: F = 4K / (C RTT_base + K).
    rtt = g["rtt_base_us"] * 1e-6
    k = 500 * 1500
    assert g["f"] == pytest.approx(4 * k / (10e9 / 8 * rtt + k), rel=1e-9)
    assert g["h"] == pytest.approx(1.2e-7 * 10e9 * rtt, rel=1e-9)  # H C RTT_base, in bounds
    assert g["pacing_bps"] == 0  # released when the flow finished
    trace = pd.read_csv(tmp_path / "one" / "traces" / "flow0.csv")
    assert list(trace.columns[-2:]) == ["rtt_min_us", "rtt_base_us"]
    assert (trace.rtt_base_us.iloc[1:] > 0).all()
    # Paced: the sender's NIC has a rate-limiter bank (one limiter in use while it sends).
    assert "h0_nic.limiters_in_use" in pd.read_csv(tmp_path / "one" / "timeseries.csv").columns


@pytest.mark.parametrize("key,value,needle", [
    ("tcp.gemini.beta", "1.5", "tcp.gemini.beta"),
    ("tcp.gemini.h_min", "10", "tcp.gemini.h_min"),
    ("tcp.gemini.capacity", "0bps", "tcp.gemini.capacity"),
    ("tcp.gemini.max_cut", "0", "tcp.gemini.max_cut"),
    ("tcp.gemini.rtt_noise", "2s", "tcp.gemini.rtt_noise"),
])
def test_bad_input_names_the_key(sim, default_yaml, key, value, needle):
    p = sim("validate", default_yaml, "--set", "tcp.cc=gemini", "--set", f"{key}={value}",
            check=False)
    assert p.returncode == 2, p.stdout + p.stderr
    assert needle in p.stderr


def test_rtt_noise_reaches_the_delay_signal_only_above_t(run):
    # Table 3.5's noise, U[0, x] on each RTT sample GEMINI sees, on an idle 10G path (400 us,
    # at most ~1.2 ms more in the sender's NIC queue in slow start): with x = 2 ms RTT_min can
    # never exceed RTT_base + T = 5 ms more; with x = 50 ms the minimum of a window's samples
    # often does, and the flow is cut by beta again and again.
    def go(noise, seed=1):
        cfg = {
            "name": "gemini_noise", "seed": seed, "duration": "100ms",
            "topology": {"kind": "dumbbell", "host_rate": "10Gbps", "link_delay": "100us",
                         "dumbbell": {"hosts_per_side": 1}},
            "tcp": {"cc": "gemini", "gemini": {"rtt_noise": noise}},
            "traffic": {"flows": [{"src": "h0", "dst": "h1", "transport": "tcp",
                                   "size": "20MB"}]},
        }
        f = run(cfg, f"noise_{noise}_{seed}").summary["flows"][0]
        return f["tcp"]["gemini"]["wan_reductions"], f["rx_bytes"]
    assert go("0s") == go("2ms") == (0, 20_000_000)
    loud = go("50ms")
    assert loud[0] > 50 and loud[1] < 20_000_000
    assert go("50ms") == loud  # the same seed, the same noise
    assert go("50ms", seed=2) != loud


def test_app_driven_connections_are_paced_too(run):
    # Messages on persistent connections (the application writes): the flow takes its limiter
    # at the first write, not at a start event, and keeps it while the connection lives.
    cfg = {
        "name": "gemini_msgs", "seed": 1, "duration": "5ms",
        "topology": {"kind": "dumbbell", "host_rate": "10Gbps", "link_delay": "5us",
                     "dumbbell": {"hosts_per_side": 2}},
        "tcp": {"cc": "gemini"},
        "traffic": {"workload": [{"pattern": "all_to_all", "sizes": "fixed", "size": "100KB",
                                  "load": 0.3, "transport": "tcp", "connections": 1}]},
    }
    s = run(cfg, "msgs").summary
    paced = [f["tcp"]["gemini"]["pacing_bps"] for f in s["flows"] if f["tcp"]["segments"] > 0]
    assert paced and all(p > 0 for p in paced), paced
