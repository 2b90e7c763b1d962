"""The example scenarios and workload CDFs that come with the package.

    fabricsim.scenarios.names()            # ['dctcp_incast', 'default', ...]
    fabricsim.run(fabricsim.scenarios.path("default"), seed=2)

An installed package has them in fabricsim/data/ (CMake install rules, component "python");
in a checkout they are read from platforms/scenarios and platforms/workloads.
"""
import pathlib

__all__ = ["names", "path", "workloads", "workload_path"]


def _dirs(kind):
    import fabricsim
    dirs = [pathlib.Path(p) / "data" / kind for p in fabricsim.__path__]
    dirs.append(pathlib.Path(__file__).resolve().parents[2] / "platforms" / kind)  # a checkout
    return [d for d in dirs if d.is_dir()]


def _find(kind, suffix, name):
    for d in _dirs(kind):
        f = d / f"{name}{suffix}"
        if f.is_file():
            return f
    known = ", ".join(_names(kind, suffix)) or "none found"
    raise KeyError(f"no {kind[:-1]} named '{name}' (known: {known})")


def _names(kind, suffix):
    return sorted({f.name[:-len(suffix)] for d in _dirs(kind) for f in d.glob(f"*{suffix}")})


def names():
    """Names of the shipped scenarios."""
    return _names("scenarios", ".yaml")


def path(name):
    """Path of the shipped scenario `name` (e.g. "default"), for run(), sweep() or fabricsim-sim."""
    return _find("scenarios", ".yaml", name)


def workloads():
    """Names of the shipped flow-size CDFs (also built in: `sizes: websearch` needs no file)."""
    return _names("workloads", ".csv")


def workload_path(name):
    """Path of the shipped flow-size CDF `name` (a CSV with columns size_bytes, cdf)."""
    return _find("workloads", ".csv", name)
