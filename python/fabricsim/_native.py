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


# Unit of a plain number per headroom option kind (Python convention: times in seconds).
_HEADROOM_UNITS = {"bit_rate": "bps", "time": "s", "bytes": "B"}


def _headroom_text(name, value, kind):
    if isinstance(value, bool):
        why = "must be a number or a string with a unit, not a bool"
        raise make_config_error(f"{name}: {why}", name, why)
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        if kind == "bytes" and isinstance(value, int):
            return str(value)
        return repr(value) + _HEADROOM_UNITS.get(kind, "")
    why = f"must be a number or a string, not {type(value).__name__}"
    raise make_config_error(f"{name}: {why}", name, why)


def headroom(rate, cable_length=None, *, method="model", **options):
    """PFC headroom (XOFF_TH) one lossless (port, priority group) needs, as a dict.

    method "model" (default): the worst case of FabricSim's own PFC physics, per term in wire
    bytes (`terms`), the total `wire_bytes`, `cells` and `bytes` (= cells x cell). method
    "sonic": the Mellanox/SONiC formula (`xoff`, `xon`, `size`, 1 KiB steps).
    Values are strings with units ("100Gbps", "3us", "9216B") or numbers (rates in bit/s, times
    in seconds, sizes in bytes, cable_length in metres, small_packets in percent). Options:
    one_way_latency (instead of cable_length), mtu, lossless_mtu, cell, cell_overhead,
    response_delay, small_packets, local_commit_ahead, peer_commit_ahead, crossing_frame
    ("fits" or "in_headroom"), gearbox_delay (sonic);
    see `fabricsim headroom --help` or docs/models/pfc.md. Raises ConfigError naming the option.
    """
    kinds = {o["name"]: o["kind"] for o in native.headroom_options()}
    given = dict(options, rate=rate, cable_length=cable_length, method=method)
    text = {}
    for name, value in given.items():
        if value is None:
            continue
        if name not in kinds:
            raise make_config_error(f"{name}: unknown option", name, "unknown option")
        text[name] = _headroom_text(name, value, kinds[name])
    return native.headroom(text)


def qcn_stability(rate_bps=10e9, flows=10, *, r_ai_bps=5e6, g_d=1 / 128, w=2.0, p_s=0.01,
                  q_eq_packets=22, packet_bytes=1500):
    """The QCN fluid model of Alizadeh's thesis (seed-000 2.5) for N = `flows` sources through one
    bottleneck of `rate_bps`, with the reaction point's R_AI and G_d and the congestion point's w,
    sampling probability p_s and Q_eq: a dict with the delay margins `tau_star` (Thm 5.1, QCN:
    stable for round trips up to it) and `tau_hat` (Thm 5.2, QCN-AIMD) in seconds, the fixed
    point (`q_star_packets`, `rc_star_bps`, `rt_star_bps`) and whether Thm 5.3's condition
    (tau_star > tau_hat) holds. The defaults are the thesis' baseline: tau_star = 249 us."""
    return native.qcn_fluid(float(rate_bps), float(flows), float(r_ai_bps), float(g_d), float(w),
                            float(p_s), float(q_eq_packets), float(packet_bytes))
