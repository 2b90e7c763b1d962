"""A results folder (docs/models/results.md) as Python objects: the summary as a dict, flows,
time series and drops as pandas DataFrames, and the flat scalar metrics that sweep rows use."""
import json
import pathlib
import re

__all__ = ["Result", "load_result", "summary_metrics", "convert_to_parquet", "RUN_VARYING"]

# Summary fields that change from run to run (wall clock): never part of a determinism check.
RUN_VARYING = ("host_perf",)


def _flatten(d, prefix, out):
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            _flatten(v, key + ".", out)
        elif isinstance(v, (int, float, bool, str)) or v is None:
            out[key] = v


def summary_metrics(summary):
    """Flat scalar metrics of a summary: sim_time_s, goodput_bps, frames.*, latency_us.*,
    kernel.*, tcp.*, fct.<bin>.* (bin "all", "<10KB", "10KB-100KB", ...: flows, completed,
    timeouts, fct_us.p50/p99/..., slowdown.p50/...; messages on persistent connections
    included), incast.* (incast[i].* with several
    partition/aggregate groups: qct_us.p50/p99/..., timeouts, ...), and switch-wide aggregates (peak queue over all ports, peak buffer, CE marks).
    Run-varying wall-clock figures are left out (see run_metrics)."""
    m = {}
    for k in ("sim_time_s", "goodput_bps"):
        if k in summary:
            m[k] = summary[k]
    for section in ("frames", "latency_us", "kernel", "tcp"):
        if isinstance(summary.get(section), dict):
            _flatten(summary[section], section + ".", m)
    fct = summary.get("fct")
    if isinstance(fct, dict):  # flow completion times of sized TCP flows: all and by size bin
        for b in [fct.get("all") or {}] + list(fct.get("by_size") or []):
            _flatten({k: v for k, v in b.items() if k != "bin"}, f"fct.{b.get('bin', 'all')}.", m)
    groups = summary.get("incast") or []
    for i, g in enumerate(groups):  # partition/aggregate groups: QCT percentiles, timeouts
        _flatten(g, "incast." if len(groups) == 1 else f"incast[{i}].", m)
    switches = summary.get("switches") or {}
    agg = summary.get("aggregate") or {}  # results.detail: csv: the ports and flows are in CSVs
    ports = [p for sw in switches.values() for p in (sw.get("ports") if isinstance(sw.get("ports"), list) else [])]
    if switches:
        m["switch.buffer_peak_cell_bytes"] = max(sw.get("buffer_peak_cell_bytes", 0) for sw in switches.values())
        if "switch_ports" in agg:
            m["switch.queue_peak_cell_bytes"] = agg["switch_ports"]["max"].get("queue_peak_cell_bytes", 0)
            m["switch.ce_marked"] = agg["switch_ports"]["sum"].get("ce_marked", 0)
        else:
            m["switch.queue_peak_cell_bytes"] = max((p.get("queue_peak_cell_bytes", 0) for p in ports), default=0)
            m["switch.ce_marked"] = sum(p.get("ce_marked", 0) for p in ports)
    flows = summary.get("flows") or []
    if flows:
        m["flows.ce_frames"] = sum(f.get("ce_frames", 0) for f in flows)
        m["flows.latency_max_us"] = max(f.get("latency_max_us", 0) for f in flows)
    elif agg.get("flows", {}).get("count"):
        m["flows.ce_frames"] = agg["flows"]["sum"].get("ce_frames", 0)
        m["flows.latency_max_us"] = agg["flows"]["max"].get("latency_max_us", 0)
    return m


def run_metrics(summary):
    """The wall-clock figures of a run (host_perf.*): they differ between identical runs."""
    m = {}
    for k in RUN_VARYING:
        if isinstance(summary.get(k), dict):
            _flatten(summary[k], k + ".", m)
    return m


def convert_to_parquet(folder):
    """Replaces every CSV table of a results folder (traces/ included) by a Parquet file of the
    same name (results.format: parquet); Result reads either."""
    import pyarrow.csv
    import pyarrow.parquet
    for csv in sorted(pathlib.Path(folder).rglob("*.csv")):
        if csv.stat().st_size == 0:
            continue
        pyarrow.parquet.write_table(pyarrow.csv.read_csv(csv), csv.with_suffix(".parquet"))
        csv.unlink()


def _scalars(d, prefix=""):
    """The scalar fields of a summary object, nested objects flattened with '.', lists left out."""
    out = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(_scalars(v, f"{prefix}{k}."))
        elif not isinstance(v, list):
            out[f"{prefix}{k}"] = v
    return out


# timeseries.csv columns: <node>.p<port>[q<queue>]_<metric>, or <node>.<metric> for the node.
_SERIES = re.compile(r"^(?P<node>.+)\.p(?P<port>\d+)(?:q(?P<queue>\d+))?_(?P<metric>.+)$")


def _series_column(name):
    m = _SERIES.match(name)
    if m:
        return m["node"], int(m["port"]), int(m["queue"]) if m["queue"] is not None else -1, m["metric"]
    node, _, metric = name.rpartition(".")
    return node, -1, -1, metric


class Result:
    """One run's results folder.

    summary: summary.json as a dict. flows, timeseries, queries, messages, drops, ports, queues,
    timeseries_long: DataFrames (read on first use; tables from CSV or Parquet files).
    metrics: flat scalar metrics (the columns of a sweep row). path: the folder.
    """

    def __init__(self, path, summary=None, elapsed_s=None, worker_s=None):
        self.path = pathlib.Path(path)
        self._summary = summary
        self._cache = {}
        self.elapsed_s = elapsed_s  # wall time of the isolated run, worker process included
        self.worker_s = worker_s  # of which in the worker's native run (the rest: process isolation)

    def __repr__(self):
        s = self.summary
        fr = s.get("frames", {})
        return (f"<fabricsim.Result {s.get('scenario')!r} seed={s.get('seed')} sent={fr.get('sent')} "
                f"delivered={fr.get('delivered')} dropped={fr.get('dropped')} at {str(self.path)!r}>")

    @property
    def summary(self):
        if self._summary is None:
            self._summary = json.loads((self.path / "summary.json").read_text())
        return self._summary

    @property
    def config(self):
        """The configuration as run, every default filled in."""
        return self.summary.get("config", {})

    @property
    def metrics(self):
        return summary_metrics(self.summary)

    def _csv(self, name):
        """A table of the folder: <stem>.parquet if there is one, else the CSV, else empty."""
        if name not in self._cache:
            import pandas as pd
            f = self.path / name
            pq = f.with_suffix(".parquet")
            self._cache[name] = (pd.read_parquet(pq) if pq.exists() else pd.read_csv(f) if f.exists()
                                 else pd.DataFrame())
        return self._cache[name]

    @property
    def flows(self):
        """flows.csv: one row per flow (empty if results.flows_csv was off)."""
        return self._csv("flows.csv")

    def trace(self, flow):
        """traces/flow<flow>.csv: a traced flow's rows (TCP: per ACK; RoCE: CNPs and DCQCN rate
        changes), empty if the flow was not traced."""
        return self._csv(f"traces/flow{int(flow)}.csv")

    @property
    def timeseries(self):
        """timeseries.csv: time_us, then buffer/pool/port/queue bytes columns per switch."""
        return self._csv("timeseries.csv")

    @property
    def timeseries_long(self):
        """timeseries.csv in long form: the time column, node, port, queue, metric, value; one
        row per sample and column. port and queue are -1 for a switch-wide series (buffer,
        pools) and queue -1 for a port's total; metric is the column's suffix (frame_bytes,
        buffer_cell_bytes, ...). Ordered by series, then time."""
        if "timeseries_long" not in self._cache:
            import numpy as np
            import pandas as pd
            ts = self.timeseries
            if ts.empty:
                out = pd.DataFrame(columns=["time_us", "node", "port", "queue", "metric", "value"])
            else:
                tcol, cols = ts.columns[0], list(ts.columns[1:])
                meta = [_series_column(c) for c in cols]
                n = len(ts)

                def rep(i):
                    return np.repeat(np.array([m[i] for m in meta]), n)
                out = pd.DataFrame({tcol: np.tile(ts[tcol].to_numpy(), len(cols)),
                                    "node": pd.Categorical(rep(0)), "port": rep(1).astype("int32"),
                                    "queue": rep(2).astype("int32"), "metric": pd.Categorical(rep(3)),
                                    "value": ts[cols].to_numpy().ravel(order="F")})
            self._cache["timeseries_long"] = out
        return self._cache["timeseries_long"]

    def _switch_table(self, key):
        import pandas as pd
        if self.summary.get("detail") == "csv":  # switch_ports.csv / switch_queues.csv
            t = self._csv(f"switch_{key}.csv").copy()
            if "drops.total" in t:
                t.insert(2 if key == "ports" else 3, "drops", t.pop("drops.total"))
            return t
        rows = []
        for sw_name, sw in (self.summary.get("switches") or {}).items():
            for p in sw.get("ports", []):
                for q in (p.get("queues", []) if key == "queues" else [p]):
                    row = {"switch": sw_name, "port": p["port"]}
                    if key == "queues":
                        row["queue"] = q["queue"]
                    fields = _scalars(q)
                    row["drops"] = sum(v for k, v in fields.items() if k.startswith("drops."))
                    row.update((k, v) for k, v in fields.items() if k not in row)
                    rows.append(row)
        return pd.DataFrame(rows)

    @property
    def ports(self):
        """One row per switch port: switch, port, drops (all causes), then every counter of the
        port in summary.json: peaks, queued and tx/rx frames and bytes, ce_marked, drops.<cause>."""
        if "ports" not in self._cache:
            self._cache["ports"] = self._switch_table("ports")
        return self._cache["ports"]

    @property
    def queues(self):
        """One row per egress queue: switch, port, queue, drops (all causes), then the queue's
        counters in summary.json: peaks, queued, tx frames/bytes, ce_marked, drops.<cause>."""
        if "queues" not in self._cache:
            self._cache["queues"] = self._switch_table("queues")
        return self._cache["queues"]

    @property
    def queries(self):
        """queries.csv: one row per partition/aggregate query (group, query, start_us, end_us,
        qct_us, timeouts); empty without traffic.incast."""
        return self._csv("queries.csv")

    @property
    def messages(self):
        """messages.csv: one row per message of a workload over persistent connections
        (workload, message, src, dst, connection_flow, size_bytes, start_us, dispatch_us,
        end_us, fct_us, timeouts, ideal_fct_us, slowdown); empty without
        traffic.workload[].connections."""
        return self._csv("messages.csv")

    @property
    def drops(self):
        """Drops by place and cause, one row per non-zero count, without double counting.

        Columns: kind (switch, nic, link), node, port, queue, cause, frames. Switch drops are
        per queue where the queue is known; what a port counted beyond its queues (ingress-side
        causes) has queue = -1. Summing `frames` gives summary["frames"]["dropped"].
        """
        if "drops" not in self._cache:
            import pandas as pd
            rows = []
            s = self.summary
            if s.get("detail") == "csv":
                self._cache["drops"] = self._drops_from_tables()
                return self._cache["drops"]
            for sw_name, sw in (s.get("switches") or {}).items():
                for p in sw.get("ports", []):
                    left = dict(p.get("drops", {}))
                    for q in p.get("queues", []):
                        for cause, n in q.get("drops", {}).items():
                            if n:
                                rows.append(("switch", sw_name, p["port"], q["queue"], cause, n))
                                left[cause] = left.get(cause, 0) - n
                    for cause, n in left.items():
                        if n > 0:
                            rows.append(("switch", sw_name, p["port"], -1, cause, n))
            for nic, d in (s.get("nics") or {}).items():
                for cause, n in d.get("drops", {}).items():
                    if n:
                        rows.append(("nic", nic, 0, -1, cause, n))
            for link, d in (s.get("links") or {}).items():
                for cause, n in d.get("drops", {}).items():
                    if n:
                        rows.append(("link", link, 0, -1, cause, n))
            self._cache["drops"] = pd.DataFrame(rows, columns=["kind", "node", "port", "queue", "cause", "frames"])
        return self._cache["drops"]

    def _drops_from_tables(self):
        """drops for results.detail: csv, from switch_ports/queues.csv, nics.csv and links.csv."""
        import pandas as pd
        rows = []

        def causes(t):
            return [c for c in t.columns if c.startswith("drops.") and c != "drops.total"]
        ports, queues = self._csv("switch_ports.csv"), self._csv("switch_queues.csv")
        per_queue = {}
        for _, r in queues.iterrows():
            for c in causes(queues):
                n = int(r[c])
                if n:
                    at = (r["switch"], int(r["port"]), c)
                    rows.append(("switch", at[0], at[1], int(r["queue"]), c[6:], n))
                    per_queue[at] = per_queue.get(at, 0) + n
        for _, r in ports.iterrows():
            for c in causes(ports):
                n = int(r[c]) - per_queue.get((r["switch"], int(r["port"]), c), 0)
                if n > 0:
                    rows.append(("switch", r["switch"], int(r["port"]), -1, c[6:], n))
        for kind, name, table, key in (("nic", "nic", "nics.csv", None), ("link", "link", "links.csv", "direction")):
            t = self._csv(table)
            for _, r in t.iterrows():
                for c in causes(t):
                    if int(r[c]):
                        node = r[name] if key is None else f"{r[name]}.{r[key]}"
                        rows.append((kind, node, 0, -1, c[6:], int(r[c])))
        return pd.DataFrame(rows, columns=["kind", "node", "port", "queue", "cause", "frames"])


def load_result(path):
    """Opens an existing results folder (from run(), the CLI or fabricsim-sim)."""
    p = pathlib.Path(path)
    if not (p / "summary.json").exists():
        raise FileNotFoundError(f"{p}: no summary.json (not a results folder)")
    return Result(p)
