"""The committed validation report (docs/validation/) is the output of the committed code: a fresh
run of the quick subset gives the numbers of results.json, every committed experiment passes or is
a documented known deviation, and the page shows every experiment with its plot."""
import io
import json
import math

import pytest

from conftest import ROOT
from fabricsim import validation
from fabricsim.validation import report
from fabricsim.validation.core import Experiment

DOCS = ROOT / "docs" / "validation"


@pytest.fixture(scope="module")
def committed():
    return json.loads((DOCS / "results.json").read_text())


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    out = tmp_path_factory.mktemp("validation")
    report.run(out, quick=True, log=io.StringIO())
    return out, json.loads((out / "results.json").read_text())


def same(a, b, path="values"):
    """Asserts a == b, floats to rel 1e-9 (ints, bools, strings and None exactly)."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and sorted(a) == sorted(b), (path, sorted(a), sorted(b))
        for k in a:
            same(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), (path, a, b)
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{path}[{i}]")
    elif isinstance(a, float) and not isinstance(b, bool) and isinstance(b, (int, float)):
        assert math.isclose(a, b, rel_tol=1e-9, abs_tol=0.0) or a == b, (path, a, b)
    else:
        assert type(a) is type(b) and a == b, (path, a, b)


def test_the_committed_report_is_full_and_lists_every_registered_experiment(committed):
    assert committed["quick"] is False
    registered = {e.id for e in validation.experiments()}
    assert set(committed["experiments"]) == registered, "regenerate it: make validate"
    quick = {e.id for e in validation.experiments(quick=True)}
    # One or more quick experiments per family (the families of the oracles).
    families = {e.family for e in validation.experiments()}
    assert {e.family for e in validation.experiments(quick=True)} >= families - {"Cross-simulator"}
    assert {i for i, x in committed["experiments"].items() if x["quick"]} == quick


def test_every_committed_experiment_passes_or_is_a_documented_deviation(committed):
    exps = {e.id: e for e in validation.experiments()}
    for i, x in committed["experiments"].items():
        if x["status"] == "NOT REPRODUCED":
            assert x["known_deviation"] and exps[i].deviation, i
        else:
            assert x["status"] == "PASS" and x["passed"], (i, x["status"])


def test_a_fresh_quick_run_gives_the_committed_numbers(committed, fresh):
    _, new = fresh
    assert new["quick"] is True and new["experiments"]
    for i, x in new["experiments"].items():
        old = committed["experiments"][i]
        assert x["status"] == old["status"], i
        same(x["values"], old["values"], i)


def test_the_page_shows_each_experiment_with_its_plot(committed, fresh):
    page = (DOCS / "README.md").read_text()
    exps = {e.id: e for e in validation.experiments()}
    for i, x in committed["experiments"].items():
        section = page.split(f'<a id="{i}"></a>')[1].split("<a id=")[0]
        status = "comparison, not an oracle (runs sane" if exps[i].cross_sim else f"{x['status']}\n"
        assert f"- **Status:** {status}" in section, i
        assert f"![{i}]({i}.png)" in section, i
        assert (DOCS / f"{i}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", i
    assert "## Cross-simulator comparison" in page and "ns-3" in page and "htsim" in page
    out, new = fresh
    for i in new["experiments"]:
        assert (out / f"{i}.png").exists(), i


def test_a_known_deviation_is_not_reproduced_and_anything_else_fails():
    e = Experiment("x", "f", "t", "s", "set-up", "pub", "tol", func=None)
    assert (e.status(True), e.status(False)) == ("PASS", "FAIL")
    e.deviation = "why"
    assert (e.status(True), e.status(False)) == ("PASS", "NOT REPRODUCED")


def test_an_experiment_that_raises_is_a_fail(tmp_path):
    def broken(ctx):
        raise ValueError("boom")
    e = Experiment("broken", "f", "t", "s", "set-up", "pub", "tol", func=broken)
    outcome, _ = report.run_one(e, tmp_path)
    assert not outcome.passed and "boom" in outcome.simulated
