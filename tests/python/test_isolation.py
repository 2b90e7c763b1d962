"""The worker processes: scripts without a __main__ guard, Ctrl-C, and no process outliving its
parent (fork server: runner.py, _forkserver.py)."""
import os
import signal
import subprocess
import sys
import threading
import time
import uuid

import pytest

import fabricsim
from conftest import ROOT, default_sigint


def procs_with(marker):
    """Pids of the live processes whose environment holds `marker` (the script and its workers)."""
    pids = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/environ", "rb") as f:
                    if marker.encode() in f.read():
                        pids.append(int(d))
            except OSError:
                pass
    return pids


def wait_for(cond, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.02)
    return cond()


def start_script(tmp_path, body):
    """Runs `body` as a script file (no __main__ guard) with a marker in its environment."""
    script = tmp_path / "user_script.py"
    script.write_text(f"import fabricsim\nSCENARIO = {str(ROOT / 'platforms/scenarios/default.yaml')!r}\n" + body)
    marker = f"FABRICSIM_TEST_{uuid.uuid4().hex}"
    env = dict(os.environ, **{marker: "1"})
    p = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=env, cwd=tmp_path, preexec_fn=default_sigint)
    return p, marker


def test_a_script_without_main_guard_runs_and_sweeps_once(tmp_path):
    body = """
r = fabricsim.run(SCENARIO, overrides={"duration": "2ms"}, seed=2)
print("run", r.summary["seed"], r.summary["frames"]["conserved"])
df = fabricsim.sweep(SCENARIO, {"seed": [1, 2, 3]}, overrides={"duration": "2ms"}, workers=2, progress=False)
print("sweep", df["status"].tolist(), df["seed"].tolist())
"""
    p, marker = start_script(tmp_path, body)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    assert out == "run 2 True\nsweep ['ok', 'ok', 'ok'] [1, 2, 3]\n"
    assert wait_for(lambda: not procs_with(marker), 2)


LONG_SWEEP = """
import sys
print("started", flush=True)
try:
    fabricsim.sweep(SCENARIO, {"seed": [1, 2, 3, 4, 5]}, overrides={"duration": "30s"}, workers=2, progress=False,
                    cache_dir="cache")
except fabricsim.Interrupted as e:
    print("partial", list(e.partial["status"]), flush=True)
    raise
"""


@pytest.mark.parametrize("body, workers", [(LONG_SWEEP, 2), ("""
print("started", flush=True)
try:
    fabricsim.run(SCENARIO, overrides={"duration": "30s"})
except fabricsim.Interrupted as e:
    print("partial", type(e.partial).__name__, flush=True)
    raise
""", 1)])
def test_ctrl_c_stops_the_runs_and_leaves_no_process(tmp_path, body, workers):
    p, marker = start_script(tmp_path, body)
    assert p.stdout.readline() == "started\n"
    # the script, the fork server and the running simulations
    assert wait_for(lambda: len(procs_with(marker)) >= 2 + workers, 20), procs_with(marker)
    time.sleep(0.5)
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=10)
    took = time.monotonic() - t0
    assert took < 2.5, (took, err)
    assert p.returncode == 1 and err.rstrip().endswith("interrupted"), err  # an uncaught Interrupted
    assert "fabricsim.Interrupted: fabricsim." in err
    if workers == 2:
        # every point interrupted (stopped or never started), none cached
        assert out == "partial ['interrupted', 'interrupted', 'interrupted', 'interrupted', 'interrupted']\n"
        assert not list((tmp_path / "cache").glob("*.json"))
    else:
        assert out.startswith("partial ")
    assert wait_for(lambda: not procs_with(marker), 1), procs_with(marker)


def test_the_fork_server_and_its_children_exit_when_the_client_is_killed(tmp_path):
    p, marker = start_script(tmp_path, 'print("started", flush=True)\nfabricsim.run(SCENARIO, '
                                       'overrides={"duration": "30s"})\n')
    assert p.stdout.readline() == "started\n"
    assert wait_for(lambda: len(procs_with(marker)) >= 3, 20)
    p.kill()
    p.wait()
    assert wait_for(lambda: not procs_with(marker), 2), procs_with(marker)


def test_a_run_dies_with_the_fork_server_and_is_a_crash(default_yaml, tmp_path):
    from fabricsim import runner
    runner.shutdown_fork_server()
    fabricsim.run(default_yaml, out=tmp_path / "warm", overrides={"duration": "2ms"})
    server = runner._server.proc.pid
    errors = []

    def long_run():
        try:
            fabricsim.run(default_yaml, out=tmp_path / "long", overrides={"duration": "30s"})
        except fabricsim.RunError as e:
            errors.append(e)
    t = threading.Thread(target=long_run)
    t.start()

    def children():
        return [int(d) for d in os.listdir("/proc") if d.isdigit() and _ppid(d) == server]
    assert wait_for(lambda: children(), 10)
    child = children()[0]
    os.kill(server, signal.SIGKILL)
    t.join(10)
    assert len(errors) == 1 and errors[0].kind == "crash" and "signal 9" in str(errors[0])
    assert wait_for(lambda: not os.path.exists(f"/proc/{child}") or _state(child) == "Z", 2)
    # the next run starts a new server
    r = fabricsim.run(default_yaml, out=tmp_path / "after", overrides={"duration": "2ms"})
    assert r.summary["frames"]["conserved"] and runner._server.proc.pid != server


def _ppid(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def _state(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None
