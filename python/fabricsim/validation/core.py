"""The experiment registry, the run context and the outcome of one experiment.

An experiment is a function decorated with @experiment(...): it runs its scenarios through
ctx.run (fabricsim.run in a worker process, results under the run's work folder), measures,
compares with the published figure and returns an Outcome. Plots are drawn afterwards in the
calling thread (matplotlib's pyplot is not thread-safe; each Outcome.plot gets its own Figure).
"""
import dataclasses
import math
import pathlib
from typing import Callable, Optional

__all__ = ["Experiment", "Outcome", "Context", "experiment", "REGISTRY", "num"]

REGISTRY = []


@dataclasses.dataclass
class Outcome:
    simulated: str  # the simulated figure, as a sentence for the page
    values: dict  # the measured numbers (results.json): plain floats, ints, bools, lists
    passed: bool
    plot: Optional[Callable] = None  # plot(fig): draws simulated against published


@dataclasses.dataclass
class Experiment:
    id: str
    family: str
    title: str
    seed: str  # seed file and section / figure / table
    setup: str
    published: str
    tolerance: str
    func: Callable
    quick: bool = False  # in the quick subset (one or two cheap experiments per family)
    reading: str = ""  # where the seed is ambiguous or wrong: the reading the model follows
    deviation: str = ""  # a documented known deviation: shown as "not reproduced", not FAIL
    cross_sim: bool = False  # the cross-simulator section, not an oracle
    differs: str = ""  # cross-simulator: what differs between the simulators

    def status(self, passed):
        if passed:
            return "PASS"
        return "NOT REPRODUCED" if self.deviation else "FAIL"


def experiment(id, family, title, seed, setup, published, tolerance, quick=False, reading="",
               deviation="", cross_sim=False, differs=""):
    def wrap(func):
        REGISTRY.append(Experiment(id, family, title, seed, setup, published, tolerance, func,
                                   quick, reading, deviation, cross_sim, differs))
        return func
    return wrap


class Context:
    """What an experiment gets: run() for simulations and the folder for their results."""

    def __init__(self, work):
        self.work = pathlib.Path(work)

    def run(self, config, name, overrides=None, seed=None):
        import fabricsim
        out = self.work / name
        r = fabricsim.run(config, out=out, overrides=overrides, seed=seed, overwrite=True)
        if not r.summary.get("complete", True) or not r.summary["frames"]["conserved"]:
            raise RuntimeError(f"{name}: run incomplete or frames not conserved")
        return r

    def path(self, name):
        return self.work / name


def num(x):
    """A plain Python number for results.json (numpy scalars, NaN as None)."""
    if isinstance(x, bool) or x is None:
        return x
    if isinstance(x, int):
        return x
    try:
        import numpy as np
        if isinstance(x, np.integer):
            return int(x)
        if isinstance(x, np.bool_):
            return bool(x)
    except ImportError:
        pass
    f = float(x)
    return None if math.isnan(f) else f
