import os
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


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
