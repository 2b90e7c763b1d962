"""The `fabricsim` console script (python -m fabricsim): run, sweep, explain, validate, plot."""
import json
import os
import subprocess
import sys

import pandas as pd
import pytest

import fabricsim
from conftest import ROOT


def fs(*args, check=True):
    env = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
    p = subprocess.run([sys.executable, "-m", "fabricsim", *map(str, args)], capture_output=True, text=True,
                       env=env, timeout=300)
    if check and p.returncode != 0:
        raise AssertionError(f"exit {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p


def test_run_prints_the_cli_summary_and_writes_results(default_yaml, tmp_path, sim):
    p = fs("run", default_yaml, "--set", "duration=2ms", "--seed", "2", "--out", tmp_path / "py")
    assert "frames delivered" in p.stdout and "results written to" in p.stdout
    sim(default_yaml, "--set", "duration=2ms", "--set", "seed=2", "--out", tmp_path / "cpp", "--quiet")
    a = json.loads((tmp_path / "py" / "summary.json").read_text())
    b = json.loads((tmp_path / "cpp" / "summary.json").read_text())
    a.pop("host_perf"), b.pop("host_perf")
    assert a == b  # one C++ path behind both CLIs
    assert (tmp_path / "py" / "flows.csv").read_bytes() == (tmp_path / "cpp" / "flows.csv").read_bytes()


def test_bad_key_exits_2_with_the_same_message_as_fabricsim_sim(default_yaml, sim):
    p = fs("run", default_yaml, "--set", "switch.bufer=1MiB", check=False)
    q = sim(default_yaml, "--set", "switch.bufer=1MiB", check=False)
    assert p.returncode == 2 == q.returncode
    assert p.stderr.split("configuration error: ")[1] == q.stderr.split("configuration error: ")[1]
    assert "switch.bufer: unknown key" in p.stderr and "Traceback" not in p.stderr


def test_validate_and_explain(default_yaml):
    assert "valid (8 hosts, 2 switches, 9 links, 5 flows)" in fs("validate", default_yaml).stdout
    assert "default: 600KB" in fs("explain", "switch.port_cap").stdout
    assert fs("explain", "no.such", check=False).returncode == 2


def test_sweep_writes_csv_and_plot_and_exits_1_when_a_point_failed(default_yaml, tmp_path):
    csv = tmp_path / "s.csv"
    p = fs("sweep", default_yaml, "--set", "traffic.flows[4].process=poisson", "--grid", "duration=2ms,3ms,5s",
           "--grid", "switch.port_cap=100KB,300KB", "--timeout", "1", "--csv", csv, "--workers", "2", "--no-progress",
           check=False)
    assert p.returncode == 1, p.stderr
    assert "6 runs, 2 failed" in p.stdout
    df = pd.read_csv(csv)
    assert list(df["status"]) == ["ok", "ok", "ok", "ok", "timeout", "timeout"]
    fs("plot", "lines", csv, "--x", "switch.port_cap", "--y", "frames.dropped", "--hue", "duration",
       "-o", tmp_path / "l.png")
    assert (tmp_path / "l.png").stat().st_size > 10_000
    ok = fs("sweep", default_yaml, "--set", "duration=2ms", "--grid", "switch.port_cap=100KB,300KB", "--no-progress")
    assert "2 runs, 0 failed" in ok.stdout


def test_sweep_with_an_invalid_point_or_key_exits_2_and_runs_nothing(default_yaml, tmp_path):
    cache = tmp_path / "cache"
    p = fs("sweep", default_yaml, "--set", "duration=2ms", "--grid", "switch.port_cap=100KB,64MiB,300KB",
           "--cache", cache, "--no-progress", check=False)
    assert p.returncode == 2 and p.stdout == ""
    assert ('configuration error at {"switch.port_cap": "64MiB"}: switch.port_cap: is larger than switch.buffer'
            in p.stderr)
    assert "nothing was run" in p.stderr and "Traceback" not in p.stderr
    assert not cache.exists()
    p = fs("sweep", default_yaml, "--grid", "switch.bufer=1MiB,2MiB", "--no-progress", check=False)
    assert p.returncode == 2
    assert "configuration error: switch.bufer: unknown key" in p.stderr and "Traceback" not in p.stderr


def test_plot_a_results_folder(default_yaml, tmp_path):
    fs("run", default_yaml, "--set", "duration=2ms", "--out", tmp_path / "r", "--quiet")
    for kind in ("queue", "fct", "cdf"):
        fs("plot", kind, tmp_path / "r", "-o", tmp_path / f"{kind}.png")
        assert (tmp_path / f"{kind}.png").read_bytes()[:4] == b"\x89PNG"


def test_version():
    p = fs("--version")
    assert p.stdout == f"fabricsim {fabricsim.__version__} (native module {fabricsim.native.__version__})\n"


@pytest.mark.parametrize("args", [["explain"], ["validate", "platforms/scenarios/default.yaml"]])
def test_a_closed_pipe_ends_quietly(args):
    env = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
    p = subprocess.Popen([sys.executable, "-m", "fabricsim", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=env, cwd=ROOT)
    p.stdout.close()  # the reader is gone before anything is written, as with `| head -1` on long output
    err = p.stderr.read().decode()
    assert p.wait(timeout=60) == 141 and err == ""


def test_run_refuses_a_non_empty_out_unless_overwrite(default_yaml, tmp_path):
    fs("run", default_yaml, "--set", "duration=2ms", "--out", tmp_path / "r", "--quiet")
    p = fs("run", default_yaml, "--set", "duration=2ms", "--out", tmp_path / "r", "--quiet", check=False)
    assert p.returncode == 2 and "results folder is not empty" in p.stderr and "Traceback" not in p.stderr
    fs("run", default_yaml, "--set", "duration=2ms", "--out", tmp_path / "r", "--quiet", "--overwrite")


def test_fabricsim_sim_console_script_runs_the_binary(default_yaml, tmp_path):
    env = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
    p = subprocess.run([sys.executable, "-m", "fabricsim._sim", "validate", str(default_yaml)], capture_output=True,
                       text=True, env=env, timeout=60)
    assert p.returncode == 0 and p.stdout == f"{default_yaml}: valid (8 hosts, 2 switches, 9 links, 5 flows)\n"
