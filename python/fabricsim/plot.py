"""Plots of runs and sweeps (matplotlib). Every function returns the Figure, draws into `ax`
when given, and writes a PNG when `path` is given; in a notebook the Figure displays itself.
Without a display, matplotlib's Agg backend is used."""
import os
import re
import sys

import matplotlib

if "matplotlib.pyplot" not in sys.modules and not os.environ.get("MPLBACKEND") and not os.environ.get("DISPLAY") \
        and "ipykernel" not in sys.modules:
    matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

__all__ = ["queue_occupancy", "fct_percentiles", "cdf", "sweep_lines", "sweep_heatmap", "save"]

_PORT_COL = re.compile(r"^(?P<sw>[^.]+)\.p(?P<port>\d+)(q(?P<queue>\d+))?_frame_bytes$")


def _axes(ax, figsize=(7, 4)):
    if ax is not None:
        return ax.figure, ax
    fig, ax = plt.subplots(figsize=figsize, layout="constrained")
    return fig, ax


def save(fig, path, dpi=120):
    """Writes `fig` as PNG (directories created); returns the path."""
    if path is not None:
        d = os.path.dirname(os.fspath(path))
        if d:
            os.makedirs(d, exist_ok=True)
        fig.savefig(path, dpi=dpi)
    return path


def _timeseries(data):
    return data.timeseries if hasattr(data, "timeseries") else data


def queue_occupancy(data, columns=None, top=4, queues=False, unit="KB", ax=None, path=None, title=None):
    """Egress-port (or per-queue) occupancy over time.

    data: a Result or its timeseries DataFrame. columns: names or a regex of timeseries columns;
    default: the `top` busiest ports (peak bytes), per queue if `queues`.
    """
    ts = _timeseries(data)
    if ts is None or len(ts) == 0:
        raise ValueError("no time series (results.sample_interval is 0?)")
    if columns is None:
        cand = [c for c in ts.columns if (m := _PORT_COL.match(c)) and bool(m.group("queue")) == queues]
        cand = sorted(cand, key=lambda c: -ts[c].max())
        columns = [c for c in cand[:top] if ts[c].max() > 0] or cand[:1]
    elif isinstance(columns, str):
        columns = [c for c in ts.columns if re.search(columns, c)]
    scale = {"B": 1, "KB": 1e3, "MB": 1e6, "KiB": 1024, "MiB": 1024**2}[unit]
    fig, ax = _axes(ax)
    t = ts["time_us"]
    xs, xl = (t / 1000.0, "time (ms)") if t.max() > 5000 else (t, "time (us)")
    for c in columns:
        m = _PORT_COL.match(c)
        label = f"{m.group('sw')}:{m.group('port')}" + (f" q{m.group('queue')}" if m and m.group("queue") else "") \
            if m else c
        ax.plot(xs, ts[c] / scale, label=label, lw=1.2)
    ax.set_xlabel(xl)
    ax.set_ylabel(f"queued ({unit})")
    ax.set_title(title or "Egress queue occupancy")
    ax.grid(alpha=0.3)
    if columns:
        ax.legend(fontsize="small")
    save(fig, path)
    return fig


def _default_col(df, names):
    for n in names:
        if n in df.columns:
            return n
    raise KeyError(f"none of the columns {names} in {list(df.columns)}")


def fct_percentiles(flows, size=None, time=None, bins=None, percentiles=(50, 99), ax=None, path=None, title=None):
    """Flow (or query) completion time percentiles by flow-size bin.

    flows: a Result or its flows DataFrame. size/time: column names (default: size_bytes and
    fct_us of finished TCP flows; without any, sent_bytes and latency_max_us, the largest one-way
    latency of an open-loop flow). Unfinished flows (time < 0) are left out. bins: size-bin
    edges in bytes (default: decades).
    """
    df = flows.flows if hasattr(flows, "flows") else flows
    if size is None and time is None:
        # Finished TCP flows (fct_us >= 0) if any, else open-loop flows by their latency.
        if {"size_bytes", "fct_us"} <= set(df.columns) and ((df["fct_us"] >= 0) & (df["size_bytes"] > 0)).any():
            size, time = "size_bytes", "fct_us"
        else:
            size, time = "sent_bytes", "latency_max_us"
    size = size or _default_col(df, ["size_bytes", "sent_bytes"])
    time = time or _default_col(df, ["fct_us", "qct_us", "latency_max_us"])
    d = df[[size, time]].dropna()
    d = d[(d[size] > 0) & (d[time] >= 0)]
    if d.empty:
        raise ValueError(f"no flows with {size} > 0 and {time} >= 0")
    if bins is None:
        lo, hi = np.floor(np.log10(d[size].min())), np.ceil(np.log10(d[size].max() + 1))
        bins = 10.0 ** np.arange(lo, max(hi, lo + 1) + 1)
    cats = np.digitize(d[size], bins) - 1
    fig, ax = _axes(ax)
    labels, x = [], []
    for b in sorted(set(cats)):
        if 0 <= b < len(bins) - 1:
            labels.append(f"{_fmt_bytes(bins[b])}-{_fmt_bytes(bins[b + 1])}")
            x.append(b)
    width = 0.8 / max(1, len(percentiles))
    for k, p in enumerate(percentiles):
        vals = [np.percentile(d[time][cats == b], p) for b in x]
        ax.bar(np.arange(len(x)) + (k - (len(percentiles) - 1) / 2) * width, vals, width, label=f"p{p:g}")
    ax.set_xticks(np.arange(len(x)), labels)
    ax.set_xlabel("flow size")
    ax.set_ylabel(f"{time}")
    ax.set_title(title or "Completion time by flow size")
    ax.grid(alpha=0.3, axis="y")
    ax.legend()
    save(fig, path)
    return fig


def _fmt_bytes(v):
    for unit, f in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if v >= f:
            return f"{v / f:g}{unit}"
    return f"{v:g}B"


def cdf(data, column=None, label=None, ax=None, path=None, title=None, xlabel=None, logx=False):
    """Empirical CDF of one or several samples: a sequence, a Series, a DataFrame column, or a
    dict {label: sample}."""
    series = data if isinstance(data, dict) else {label or column or "": data[column] if column else data}
    fig, ax = _axes(ax)
    for lab, v in series.items():
        v = np.sort(np.asarray(v, dtype=float))
        v = v[~np.isnan(v)]
        if len(v):
            ax.step(v, np.arange(1, len(v) + 1) / len(v), where="post", label=str(lab) if lab else None)
    ax.set_ylim(0, 1.01)
    ax.set_ylabel("CDF")
    ax.set_xlabel(xlabel or column or "value")
    if logx:
        ax.set_xscale("log")
    ax.set_title(title or "CDF")
    ax.grid(alpha=0.3)
    if any(series.keys()):
        ax.legend(fontsize="small")
    save(fig, path)
    return fig


def _ok(df):
    return df[df["status"] == "ok"] if "status" in df.columns else df


def sweep_lines(df, x, y, hue=None, agg="mean", ax=None, path=None, title=None, xlabel=None, ylabel=None,
                logx=False, marker="o"):
    """y against x for each value of `hue`, from a sweep DataFrame (failed rows left out;
    repeats aggregated with `agg`, with min-max whiskers when there are repeats)."""
    d = _ok(df)
    fig, ax = _axes(ax)
    groups = [(None, d)] if hue is None else list(d.groupby(hue, sort=True))
    order = sorted(set(d[x]), key=_sort_key)  # "2MiB" < "16MiB", numbers by value
    numeric = all(isinstance(v, (int, float, np.number)) for v in order)
    pos = {v: (float(v) if numeric else float(i)) for i, v in enumerate(order)}
    for key, g in groups:
        s = g.groupby(x, sort=False)[y]
        keys = sorted(s.groups.keys(), key=_sort_key)
        m = s.agg(agg).reindex(keys)
        xs = np.asarray([pos[k] for k in keys])
        line, = ax.plot(xs, m.values, marker=marker, label=None if hue is None else f"{hue}={key}")
        if (s.count() > 1).any():
            ax.fill_between(xs, s.min().reindex(keys).values, s.max().reindex(keys).values, color=line.get_color(),
                            alpha=0.15)
    if not numeric:
        ax.set_xticks([pos[v] for v in order], [str(v) for v in order])
    ax.set_xlabel(xlabel or x)
    ax.set_ylabel(ylabel or y)
    if logx:
        ax.set_xscale("log", base=2)
    ax.set_title(title or f"{y} vs {x}")
    ax.grid(alpha=0.3)
    if hue is not None:
        ax.legend(fontsize="small")
    save(fig, path)
    return fig


_UNITS = {"b": 1, "kb": 1e3, "kib": 1024, "mb": 1e6, "mib": 1024**2, "gb": 1e9, "gib": 1024**3, "pkt": 1,
          "kbps": 1e3, "mbps": 1e6, "gbps": 1e9, "ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}


def _sort_key(v):
    """Orders "2MiB" < "16MiB" and 8 < 16: numbers with units by value."""
    if isinstance(v, (int, float, np.number)):
        return float(v)
    m = re.fullmatch(r"\s*([0-9.]+)\s*([A-Za-z]*)\s*", str(v))
    if m:
        return float(m.group(1)) * _UNITS.get(m.group(2).lower(), 1)
    return float("inf")


def sweep_heatmap(df, x, y, value, agg="mean", ax=None, path=None, title=None, fmt="{:.3g}", cmap="viridis",
                  xlabel=None, ylabel=None):
    """`value` over a 2-D grid of x and y (one cell per point, repeats aggregated), annotated."""
    d = _ok(df)
    table = d.pivot_table(index=y, columns=x, values=value, aggfunc=agg)
    table = table.reindex(index=sorted(table.index, key=_sort_key), columns=sorted(table.columns, key=_sort_key))
    fig, ax = _axes(ax, figsize=(1.2 * table.shape[1] + 3, 0.7 * table.shape[0] + 2))
    im = ax.imshow(table.values.astype(float), cmap=cmap, aspect="auto", origin="lower")
    ax.set_xticks(range(table.shape[1]), [str(c) for c in table.columns])
    ax.set_yticks(range(table.shape[0]), [str(i) for i in table.index])
    ax.set_xlabel(xlabel or x)
    ax.set_ylabel(ylabel or y)
    vmax = np.nanmax(table.values) if table.size else 0
    for i in range(table.shape[0]):
        for j in range(table.shape[1]):
            v = table.values[i, j]
            if not np.isnan(v):
                ax.text(j, i, fmt.format(v), ha="center", va="center", fontsize="small",
                        color="black" if v > 0.6 * vmax else "white")
    fig.colorbar(im, ax=ax, label=value)
    ax.set_title(title or value)
    save(fig, path)
    return fig
