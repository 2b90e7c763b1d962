"""The validation report: every oracle experiment against its seed, as docs/validation/.

    python -m fabricsim.validation [--quick] [--out docs/validation] [--only ID ...]

runs the experiments (each through fabricsim.run, so the shipped simulator), and writes
README.md (per experiment: seed reference, set-up, published figure, simulated figure,
tolerance, PASS/FAIL, PNG), one PNG per experiment and results.json (the measured numbers).
Same code, same simulator: same numbers (runs are deterministic per config and seed).

A new mechanism adds its experiment with @experiment(...) in a module of this package (one per
seed or mechanism family) and imports that module in MODULES below.
"""
import importlib

from .core import REGISTRY, Context, Experiment, Outcome, experiment  # noqa: F401

MODULES = ["dctcp", "mqecn", "hull", "pfc", "roce", "nic", "qcn", "fera_bcn", "credit", "gemini", "cross_sim"]


def experiments(quick=False, only=None):
    """The registered experiments (every module imported), in module order."""
    for m in MODULES:
        importlib.import_module(f".{m}", __name__)
    out = [e for e in REGISTRY if (not quick or e.quick) and (not only or e.id in only)]
    return out
