"""fabricsim-sim is valgrind-clean on the default scenario (issue 18): no invalid reads or
writes, no use of uninitialised values, nothing definitely or indirectly lost (SystemC's own
globals stay reachable at exit, which memcheck does not count as an error)."""
import os
import shutil
import subprocess

import pytest

from conftest import ROOT


def test_default_scenario_is_valgrind_clean(tmp_path):
    vg = shutil.which("valgrind")
    if not vg:  # `make test` installs it (APT_PACKAGES); a bare pytest may not have it
        pytest.skip("valgrind not installed")
    exe = os.environ.get("FABRICSIM_SIM", str(ROOT / "build" / "platforms" / "fabricsim-sim"))
    env = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
    p = subprocess.run([vg, "--error-exitcode=9", "--leak-check=full",
                        "--errors-for-leak-kinds=definite,indirect", exe,
                        str(ROOT / "platforms" / "scenarios" / "default.yaml"), "--out",
                        str(tmp_path / "r"), "--quiet"],
                       capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0, p.stderr[-4000:]
    assert "ERROR SUMMARY: 0 errors" in p.stderr
    assert (tmp_path / "r" / "summary.json").exists()
