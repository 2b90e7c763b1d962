"""Configuration forms accepted by run/sweep/validate, turned into one picklable source.

A config is a scenario path, a YAML string or a nested dict (sent to C++ as JSON text, which is
YAML). Overrides are dotted keys ("switch.buffer", "traffic.flows[0].rate") applied in order,
exactly like the CLI's `--set key=value`. Validation runs the C++ schema in this process and
never elaborates SystemC.
"""
import json
import math
import numbers
import os
import re
from collections.abc import Mapping

from ._native import make_config_error, native

__all__ = ["make_source", "format_value", "validate", "validate_source", "config_value"]


def _plain(v):
    """numpy scalars and paths as plain Python values."""
    if hasattr(v, "item") and callable(v.item) and not isinstance(v, (list, dict, str)):
        try:
            return v.item()
        except (TypeError, ValueError):
            pass
    if isinstance(v, os.PathLike):
        return os.fspath(v)
    raise TypeError(f"cannot put {type(v).__name__} into a scenario configuration")


_kinds = None
_indexed = None


def _schema_kinds():
    global _kinds, _indexed
    if _kinds is None:
        params = native.schema()
        _kinds = {p["path"]: p["kind"] for p in params}
        _indexed = {p["path"] for p in params if p.get("indices")}
    return _kinds


def _is_indexed(spath):
    _schema_kinds()
    return spath in _indexed


_UNIT_NAMES = {"bytes": "bytes", "size": "bytes", "bit_rate": "bits per second"}


def _whole(key, v, unit, scale=1):
    x = v * scale
    n = round(x)
    if abs(x - n) > 1e-6 * max(1.0, abs(x)):
        raise make_config_error(f"{key}: {v!r} is not a whole number of {unit}", key,
                                f"{v!r} is not a whole number of {unit}")
    return n


def _format_ps(ps):
    for unit, f in (("ms", 10**9), ("us", 10**6), ("ns", 10**3)):
        if ps and ps % f == 0:
            return f"{ps // f}{unit}"
    return f"{ps}ps"


def config_value(key, v):
    """`v` for the dotted key `key` ("traffic.flows[0].rate"), numbers in the schema's base unit
    turned into strings with that unit: bytes for byte and size keys, bit/s for rates, seconds
    for times, Hz for frequencies. numpy/pandas scalars count as numbers. Raises ConfigError for
    a number the unit cannot take (a fraction of a byte or picosecond, NaN). Dicts and lists
    are converted below `key`; a per-index key (one value per queue, PG or pool) takes a list
    or {index: value} of such values. Anything else is returned as is."""
    spath = re.sub(r"\[\d+\]", "[]", key)
    if _is_indexed(spath) and isinstance(v, (Mapping, list, tuple)):
        kind = _schema_kinds().get(spath)
        items = v.items() if isinstance(v, Mapping) else enumerate(v)
        out = {_index_key(k): _scalar(f"{key}[{k}]", x, kind) for k, x in items}
        return out if isinstance(v, Mapping) else list(out.values())
    if isinstance(v, Mapping):
        return {k: config_value(f"{key}.{k}" if key else str(k), x) for k, x in v.items()}
    kind = _schema_kinds().get(spath)
    if isinstance(v, (list, tuple)):
        if kind == "map_list":
            return [config_value(f"{key}[{i}]", x) for i, x in enumerate(v)]
        return [_plain(x) if hasattr(x, "item") else x for x in v]
    return _scalar(key, v, kind)


def _scalar(key, v, kind):
    """One value of a key of `kind`: a number in the kind's base unit becomes a unit string."""
    if not isinstance(v, (str, bool)) and hasattr(v, "item") and callable(v.item):
        v = _plain(v)  # numpy and pandas scalars
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        return v
    if kind in ("bytes", "size", "bit_rate", "time", "frequency", "int") and not math.isfinite(v):
        raise make_config_error(f"{key}: {v!r} is not a finite number", key, f"{v!r} is not a finite number")
    if kind in _UNIT_NAMES:
        return f"{_whole(key, v, _UNIT_NAMES[kind])}{'bps' if kind == 'bit_rate' else 'B'}"
    if kind == "time":
        return _format_ps(_whole(key, v, "picoseconds (numbers for time keys are seconds)", 10**12))
    if kind == "frequency":
        return f"{v!r}Hz"
    if kind == "int" and isinstance(v, float):
        return _whole(key, v, "units (an integer key)")
    return v


def _index_key(k):
    """A per-index map key: numpy integers as int."""
    return _plain(k) if hasattr(k, "item") and not isinstance(k, (str, int)) else k


def format_value(v):
    """An override value as the CLI would write it after '=': strings verbatim, else JSON."""
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    return json.dumps(v, default=_plain)


def normalize_overrides(overrides):
    """`overrides` as "key=value" strings: a dict {dotted key: value}, a list of strings, or None."""
    if overrides is None:
        return []
    if isinstance(overrides, Mapping):
        return [f"{k}={format_value(config_value(k, v))}" for k, v in overrides.items()]
    if isinstance(overrides, str):
        return [overrides]
    return [str(o) for o in overrides]


def _looks_like_path(s):
    return "\n" not in s and (s.endswith((".yaml", ".yml", ".json")) or os.path.exists(s))


def make_source(config, overrides=None, seed=None):
    """A picklable scenario source: {"config", "is_file", "overrides", "name", "base_dir"}.

    A path is read here (so that workers on other machines need no shared file system) after the
    C++ reader had its say on it, so a missing file gives the CLI's error; relative paths in it
    (a workload's `sizes: my.csv`) resolve against its folder (base_dir), those of a YAML string
    or dict against the current directory. validate_source() adds "files": the content of every
    file the scenario refers to, which the worker uses instead of the disk.
    """
    ov = normalize_overrides(overrides)
    if seed is not None:
        ov.append(f"seed={int(seed)}")
    if isinstance(config, dict) and set(config) >= {"config", "is_file", "overrides", "name"}:
        return dict(config, overrides=list(config["overrides"]) + ov)  # already a source
    if isinstance(config, Mapping):
        return {"config": json.dumps(config_value("", config), default=_plain), "is_file": False, "overrides": ov,
                "name": str(config.get("name", "scenario")), "base_dir": os.getcwd()}
    if isinstance(config, os.PathLike) or (isinstance(config, str) and _looks_like_path(config)):
        path = os.fspath(config)
        if not os.path.isfile(path):
            native.validate(path, True, [], "")  # raises the CLI's "cannot read scenario file"
        # Bytes that are not UTF-8 become U+FFFD, as the CLI's messages show them: a key with
        # them is then refused by name (it cannot be a known key) instead of a UnicodeDecodeError.
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        return {"config": text, "is_file": False, "overrides": ov,
                "name": os.path.splitext(os.path.basename(path))[0],
                "base_dir": os.path.dirname(os.path.abspath(path))}
    if isinstance(config, str):
        return {"config": config, "is_file": False, "overrides": ov, "name": "scenario", "base_dir": os.getcwd()}
    raise TypeError(f"config must be a path, a YAML string or a dict, not {type(config).__name__}")


def with_overrides(source, overrides):
    """A copy of `source` with more overrides appended."""
    return dict(source, overrides=list(source["overrides"]) + normalize_overrides(overrides))


def validate_source(source):
    """Validates a source; returns {"name", "seed", "counts", "config", "files"} (files: {path:
    content} of the files the scenario refers to); raises ConfigError."""
    extra = {k: source[k] for k in ("base_dir", "files") if source.get(k)}
    d = native.validate(source["config"], source["is_file"], source["overrides"], source["name"], **extra)
    return {"name": d["name"], "seed": d["seed"], "counts": d["counts"], "config": json.loads(d["config_json"]),
            "files": dict(d.get("files") or {})}


def validate(config, overrides=None, seed=None):
    """Checks a configuration against the schema without simulating.

    Returns {"name", "seed", "counts", "config", "files"} where config has every default filled
    in; raises ConfigError naming the key, with the CLI's message.
    """
    return validate_source(make_source(config, overrides, seed))
