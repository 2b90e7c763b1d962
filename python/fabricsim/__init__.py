"""FabricSim from Python: run scenarios and sweeps, read results, plot.

    import fabricsim
    r = fabricsim.run("platforms/scenarios/default.yaml", seed=2)
    r.summary["frames"]["dropped"], r.flows, r.timeseries, r.drops
    df = fabricsim.sweep(cfg, {"switch.buffer": ["2MiB", "8MiB"]}, repeats=3)
    fabricsim.headroom(rate="100Gbps", cable_length=5)["bytes"]   # PFC headroom
    fabricsim.qcn_stability(10e9, flows=10)["tau_star"]            # QCN delay margin (s)

Every simulation runs in a fresh worker process (SystemC elaborates once per process); this
process only reads and validates configurations.
"""
import os as _os
import pkgutil as _pkgutil

# A development tree keeps the package in python/ and the built extension in <build>/python/:
# with both on sys.path, the package spans the two directories.
__path__ = _pkgutil.extend_path(__path__, __name__)
_os.environ.setdefault("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1")

__version__ = "0.1.0"

from ._native import ConfigError, explain, headroom, native, qcn_stability, schema  # noqa: E402
from .config import validate  # noqa: E402
from .errors import Interrupted, RunError  # noqa: E402

__all__ = ["ConfigError", "Interrupted", "RunError", "Result", "deterministic_columns", "explain", "headroom", "load_result", "qcn_stability", "plot",
           "run", "scenarios", "schema", "sweep", "validate"]

_LAZY = {"run": "runner", "Result": "results", "load_result": "results", "sweep": "sweeps", "deterministic_columns": "sweeps"}


def __getattr__(name):
    # Lazy, so that a worker process that only runs a simulation never imports pandas.
    import importlib
    if name in _LAZY:
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    if name in ("plot", "scenarios"):
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'fabricsim' has no attribute {name!r}")
