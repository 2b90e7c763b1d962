"""A results folder (docs/models/results.md) as Python objects: the summary as a dict, flows,
time series and drops as pandas DataFrames, and the flat scalar metrics that sweep rows use."""
import json
import pathlib

__all__ = ["Result", "load_result", "summary_metrics", "RUN_VARYING"]

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
    kernel.*, tcp.*, incast.* (incast[i].* with several partition/aggregate groups: qct_us.p99,
    timeouts, ...), and switch-wide aggregates (peak queue over all ports, peak buffer, CE marks).
    Run-varying wall-clock figures are left out (see run_metrics)."""
    m = {}
    for k in ("sim_time_s", "goodput_bps"):
        if k in summary:
            m[k] = summary[k]
    for section in ("frames", "latency_us", "kernel", "tcp"):
        if isinstance(summary.get(section), dict):
            _flatten(summary[section], section + ".", m)
    groups = summary.get("incast") or []
    for i, g in enumerate(groups):  # partition/aggregate groups: QCT percentiles, timeouts
        _flatten(g, "incast." if len(groups) == 1 else f"incast[{i}].", m)
    switches = summary.get("switches") or {}
    ports = [p for sw in switches.values() for p in sw.get("ports", [])]
    if switches:
        m["switch.buffer_peak_cell_bytes"] = max(sw.get("buffer_peak_cell_bytes", 0) for sw in switches.values())
        m["switch.queue_peak_cell_bytes"] = max((p.get("queue_peak_cell_bytes", 0) for p in ports), default=0)
        m["switch.ce_marked"] = sum(p.get("ce_marked", 0) for p in ports)
    flows = summary.get("flows") or []
    if flows:
        m["flows.ce_frames"] = sum(f.get("ce_frames", 0) for f in flows)
        m["flows.latency_max_us"] = max(f.get("latency_max_us", 0) for f in flows)
    return m


def run_metrics(summary):
    """The wall-clock figures of a run (host_perf.*): they differ between identical runs."""
    m = {}
    for k in RUN_VARYING:
        if isinstance(summary.get(k), dict):
            _flatten(summary[k], k + ".", m)
    return m


class Result:
    """One run's results folder.

    summary: summary.json as a dict. flows, timeseries, queries, drops: DataFrames (read on
    first use).
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
        if name not in self._cache:
            import pandas as pd
            f = self.path / name
            self._cache[name] = pd.read_csv(f) if f.exists() else pd.DataFrame()
        return self._cache[name]

    @property
    def flows(self):
        """flows.csv: one row per flow (empty if results.flows_csv was off)."""
        return self._csv("flows.csv")

    @property
    def timeseries(self):
        """timeseries.csv: time_us, then buffer/pool/port/queue bytes columns per switch."""
        return self._csv("timeseries.csv")

    @property
    def queries(self):
        """queries.csv: one row per partition/aggregate query (group, query, start_us, end_us,
        qct_us, timeouts); empty without traffic.incast."""
        return self._csv("queries.csv")

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


def load_result(path):
    """Opens an existing results folder (from run(), the CLI or fabricsim-sim)."""
    p = pathlib.Path(path)
    if not (p / "summary.json").exists():
        raise FileNotFoundError(f"{p}: no summary.json (not a results folder)")
    return Result(p)
