"""The compiled extension, with an error that says how to build it."""
try:
    from . import _fabricsim as native
except ImportError as e:  # pragma: no cover - depends on the installation
    raise ImportError(
        "fabricsim: the _fabricsim extension is not importable. Install with `pip install .`, or build "
        "with `make build` and put python/ and build/python/ on PYTHONPATH.") from e

ConfigError = native.ConfigError
ConfigError.__module__ = "fabricsim"
ConfigError.__doc__ = ("A configuration the schema rejects: unknown key, bad unit or value, inconsistent "
                       "settings. The message names the full key path (attributes `key`, `reason`).")


def explain(key=""):
    """Schema text (default, unit, range, help) for every parameter under `key`."""
    text = native.explain(key)
    if text is None:
        raise KeyError(f"no parameter matches '{key}'")
    return text


def schema():
    """Every parameter as a dict: path, kind, unit, default, help, optional, choices, min, max,
    indices (a per-index key: one value, a list or {index: value} for indices 0..indices-1;
    0 for a plain key)."""
    return native.schema()


def make_config_error(message, key="", reason=""):
    err = ConfigError(message)
    err.key = key
    err.reason = reason or message
    return err
