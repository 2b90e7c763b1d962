"""The PFC headroom calculator: fabricsim.headroom(), `fabricsim headroom`, `fabricsim-sim headroom`."""
import json
import os
import subprocess
import sys

import pytest

import fabricsim

# 100G, 5 m: one way 25 ns cable + 40 ns PCS + 100 ns RS(528,514) = 165 ns, 4125 B round trip;
# 9236 (9216-B frame + 20) + 72 (PFC) + 4125 + 25216 (394 quanta) + 1538 (1518 + 20) = 40187 B
# -> floor(26.13) = 26 frames of 1518 B x 8 cells of 208 B = 208 cells = 43264 B.
G100_5M = {"max_frame": 9236, "pause_frame": 72, "propagation": 4125, "response": 25216,
           "lossless_frame": 1538}


def fs(*args):
    env = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
    return subprocess.run([sys.executable, "-m", "fabricsim", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=120)


def test_model_headroom_at_100g_5m():
    r = fabricsim.headroom(rate="100Gbps", cable_length=5)
    assert r["method"] == "model"
    assert r["terms"] == G100_5M
    assert r["inputs"]["one_way_latency_ps"] == 165_000
    assert r["inputs"]["response_quanta"] == 394
    assert (r["wire_bytes"], r["lossless_frames"], r["cells"], r["bytes"]) == (40187, 26, 208, 43264)


def test_numbers_take_the_python_units():
    # 10 Gbit/s and 3 us as numbers (bit/s, seconds); 1 us one way: 2500 B; 3 us: 3750 B.
    r = fabricsim.headroom(10e9, one_way_latency=1e-6, response_delay=3e-6, mtu=1518, cell=256)
    assert r["terms"]["propagation"] == 2500 and r["terms"]["response"] == 3750
    assert r["wire_bytes"] == 1538 + 72 + 2500 + 3750 + 1538


def test_sonic_method_reproduces_the_worked_example():
    r = fabricsim.headroom("100Gbps", "5m", method="sonic", cell=96)
    assert (r["xoff"], r["xon"], r["size"]) == (72704, 18432, 91136)
    assert r["pause_quanta"] == 394


def test_bad_input_names_the_option():
    with pytest.raises(fabricsim.ConfigError) as e:
        fabricsim.headroom("100Gbps", 5, cell=0)
    assert e.value.key == "cell" and "must be positive" in str(e.value)
    with pytest.raises(fabricsim.ConfigError) as e:
        fabricsim.headroom("100G", 5)
    assert e.value.key == "rate" and "bit-rate unit" in str(e.value)
    with pytest.raises(fabricsim.ConfigError) as e:
        fabricsim.headroom("100Gbps", 5, small_packets=101)
    assert e.value.key == "small_packets"
    with pytest.raises(fabricsim.ConfigError) as e:
        fabricsim.headroom("100Gbps", 5, method="sonic", response_delay="3us")
    assert e.value.key == "response_delay"
    with pytest.raises(fabricsim.ConfigError) as e:
        fabricsim.headroom("100Gbps", 5, celll=96)
    assert e.value.key == "celll"


def test_python_cli_mirrors_fabricsim_sim(sim):
    args = ["headroom", "--rate", "100Gbps", "--cable-length", "5"]
    p, q = fs(*args), sim(*args)
    assert p.returncode == 0 and p.stdout == q.stdout
    assert "headroom (XOFF_TH): 208 cells = 43264 B" in p.stdout
    assert "D-Resp" in p.stdout and "25216" in p.stdout
    assert json.loads(fs(*args, "--json").stdout) == json.loads(sim(*args, "--json").stdout)
    assert json.loads(sim(*args, "--json").stdout)["bytes"] == 43264


def test_cli_bad_value_exits_2_naming_the_option(sim):
    for args in (["--rate", "100Gbps", "--cable-length", "5", "--response-delay", "3"],
                 ["--rate", "100Gbps"]):
        p, q = fs("headroom", *args), sim("headroom", *args, check=False)
        assert p.returncode == 2 == q.returncode
        assert p.stderr.split(": ", 1)[1] == q.stderr.split(": ", 1)[1]
        assert "Traceback" not in p.stderr
    q = sim("headroom", "--rate", "100Gbps", "--cable-length", "5", "--response-delay", "3", check=False)
    assert "--response-delay: '3' needs a time unit" in q.stderr
    q = sim("headroom", "--rate", "100Gbps", check=False)
    assert "--cable-length: is required unless one_way_latency is given" in q.stderr
