import os
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

# Every run of the suite checks the model's invariants between slices (exit 3 on a violation),
# whatever the build type; a run's results are the same with the checks on.
os.environ.setdefault("FABRICSIM_CHECK_INVARIANTS", "1")

# `make test-py` puts python/ and build/python/ on PYTHONPATH; a bare `pytest` finds them too.
try:
    import fabricsim  # noqa: F401
except ImportError:
    sys.path[:0] = [str(ROOT / "python"), str(ROOT / "build" / "python")]
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT / "python"), str(ROOT / "build" / "python"),
                                                os.environ.get("PYTHONPATH", "")])


@pytest.fixture(scope="session")
def sim():
    exe = os.environ.get("FABRICSIM_SIM", str(ROOT / "build" / "platforms" / "fabricsim-sim"))
    if not pathlib.Path(exe).exists():
        pytest.fail(f"fabricsim-sim not built at {exe}")

    def run(*args, check=True):
        env = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
        p = subprocess.run([exe, *map(str, args)], capture_output=True, text=True, env=env, timeout=600)
        if check and p.returncode != 0:
            raise AssertionError(f"exit {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}")
        return p

    return run


@pytest.fixture(scope="session")
def scenarios():
    return ROOT / "platforms" / "scenarios"


@pytest.fixture
def tshark():
    path = shutil.which("tshark")
    if not path:
        pytest.skip("tshark not installed")
    return path


# A short dumbbell (the default scenario, 2 ms, one Poisson flow so that the seed matters):
# about 10 ms of simulation per run.
SHORT = {"duration": "2ms", "traffic.flows[4].process": "poisson"}


@pytest.fixture(scope="session")
def default_yaml(scenarios):
    return scenarios / "default.yaml"


@pytest.fixture(scope="session")
def short():
    return dict(SHORT)


def deterministic(summary):
    """A summary without its wall-clock part."""
    return {k: v for k, v in summary.items() if k != "host_perf"}


def default_sigint():
    """preexec_fn for children a test interrupts: a shell's background job inherits SIGINT
    ignored, and a program rightly leaves an ignored SIGINT alone (so would the child)."""
    import signal
    signal.signal(signal.SIGINT, signal.SIG_DFL)
