"""Configuration forms accepted by run/sweep/validate, turned into one picklable source.

A config is a scenario path, a YAML string or a nested dict (sent to C++ as JSON text, which is
YAML). Overrides are dotted keys ("switch.buffer", "traffic.flows[0].rate") applied in order,
exactly like the CLI's `--set key=value`. Validation runs the C++ schema in this process and
never elaborates SystemC.
"""
import json
import os
from collections.abc import Mapping

from ._native import native

__all__ = ["make_source", "format_value", "validate", "validate_source"]


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
        return [f"{k}={format_value(v)}" for k, v in overrides.items()]
    if isinstance(overrides, str):
        return [overrides]
    return [str(o) for o in overrides]


def _looks_like_path(s):
    return "\n" not in s and (s.endswith((".yaml", ".yml", ".json")) or os.path.exists(s))


def make_source(config, overrides=None, seed=None):
    """A picklable scenario source: {"config", "is_file", "overrides", "name"}.

    A path is read here (so that workers on other machines need no shared file system) after the
    C++ reader had its say on it, so a missing file gives the CLI's error.
    """
    ov = normalize_overrides(overrides)
    if seed is not None:
        ov.append(f"seed={int(seed)}")
    if isinstance(config, dict) and set(config) >= {"config", "is_file", "overrides", "name"}:
        return dict(config, overrides=list(config["overrides"]) + ov)  # already a source
    if isinstance(config, Mapping):
        return {"config": json.dumps(config, default=_plain), "is_file": False, "overrides": ov,
                "name": str(config.get("name", "scenario"))}
    if isinstance(config, os.PathLike) or (isinstance(config, str) and _looks_like_path(config)):
        path = os.fspath(config)
        if not os.path.isfile(path):
            native.validate(path, True, [], "")  # raises the CLI's "cannot read scenario file"
        with open(path, encoding="utf-8") as f:
            text = f.read()
        return {"config": text, "is_file": False, "overrides": ov,
                "name": os.path.splitext(os.path.basename(path))[0]}
    if isinstance(config, str):
        return {"config": config, "is_file": False, "overrides": ov, "name": "scenario"}
    raise TypeError(f"config must be a path, a YAML string or a dict, not {type(config).__name__}")


def with_overrides(source, overrides):
    """A copy of `source` with more overrides appended."""
    return dict(source, overrides=list(source["overrides"]) + normalize_overrides(overrides))


def validate_source(source):
    """Validates a source; returns {"name", "seed", "counts", "config"}; raises ConfigError."""
    d = native.validate(source["config"], source["is_file"], source["overrides"], source["name"])
    return {"name": d["name"], "seed": d["seed"], "counts": d["counts"], "config": json.loads(d["config_json"])}


def validate(config, overrides=None, seed=None):
    """Checks a configuration against the schema without simulating.

    Returns {"name", "seed", "counts", "config"} where config has every default filled in;
    raises ConfigError naming the key, with the CLI's message.
    """
    return validate_source(make_source(config, overrides, seed))
