"""`pip install .` outside a checkout: the README tour with the installed package only.

Builds the wheel (minutes: the whole C++ project), so it runs only with FABRICSIM_WHEEL_TEST=1
(`make test-wheel`, in CI after `make test`)."""
import os
import subprocess
import sys

import pytest

from conftest import ROOT

pytestmark = [pytest.mark.wheel,
              pytest.mark.skipif(os.environ.get("FABRICSIM_WHEEL_TEST") != "1", reason="set FABRICSIM_WHEEL_TEST=1")]


def sh(*args, **kw):
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=3000, **kw)
    assert p.returncode == 0, f"{args}: exit {p.returncode}\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}"
    return p.stdout


def test_installed_package_ships_scenarios_and_the_simulator(tmp_path):
    # The wheel, built with this venv's scikit-build-core and pybind11 (requirements-dev.txt):
    # no build isolation, so nothing is fetched for the build.
    sh(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", tmp_path / "dist", ROOT)
    wheel, = (tmp_path / "dist").glob("fabricsim-*.whl")
    venv = tmp_path / "venv"
    sh(sys.executable, "-m", "venv", venv)
    sh(venv / "bin" / "pip", "install", "-q", wheel)  # run dependencies from the index (pip's cache)

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "FABRICSIM_SIM", "VIRTUAL_ENV")}
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    py = venv / "bin" / "python"
    default = sh(py, "-c", "import fabricsim; print(fabricsim.scenarios.path('default'))", cwd=cwd, env=env).strip()
    assert default.startswith(str(venv)) and default.endswith("fabricsim/data/scenarios/default.yaml")
    names = sh(py, "-c", "import fabricsim; print(fabricsim.scenarios.names())", cwd=cwd, env=env)
    assert "'default'" in names and "'websearch_leaf_spine'" in names

    out = sh(venv / "bin" / "fabricsim-sim", default, "--set", "duration=2ms", "--out", "x", cwd=cwd, env=env)
    assert "frames delivered" in out and (cwd / "x" / "summary.json").exists()
    out = sh(py, "-c", "import fabricsim; r = fabricsim.run(fabricsim.scenarios.path('default'), "
             "overrides={'duration': '2ms'}); print(r.summary['frames']['conserved'], r.path.is_dir())",
             cwd=cwd, env=env)
    assert out == "True True\n"
    out = sh(venv / "bin" / "fabricsim", "sweep", default, "--set", "duration=2ms", "--grid", "seed=1,2",
             "--no-progress", cwd=cwd, env=env)
    assert "2 runs, 0 failed" in out
