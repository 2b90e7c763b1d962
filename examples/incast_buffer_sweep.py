"""Incast buffer sizing: shared buffer x fan-in -> p99 query completion time and drops.

One rack (a ToR switch, 10G hosts, TCP NewReno with a 10 ms minimum RTO). A query fans out to
`fan_in` servers, which all answer at once with a 64 KB response to the aggregator (the last
host); ten queries, one every 10 ms. The ToR's dynamic-threshold MMU (alpha 1, no static port
cap) decides how much of the shared buffer the aggregator's port may take. A query completes
when its last response does (QCT = the largest FCT among its flows); where the buffer is too
small, drops turn into retransmission timeouts and the p99 QCT jumps by the RTO.
Output: examples/out/incast_buffer_sweep.{csv,png}.  QUICK=1 runs a 2x2 grid (the test).
"""
import os
import sys

import fabricsim
from fabricsim import plot

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "out")
QUICK = os.environ.get("QUICK") == "1"
QUERIES, PERIOD_MS = (2, 10) if QUICK else (10, 10)


def rack():
    return {
        "name": "incast_rack",
        "duration": f"{QUERIES * PERIOD_MS + 40}ms",  # room for the last query's timeouts
        "topology": {"kind": "incast", "host_rate": "10Gbps", "link_delay": "1us", "incast": {"hosts": 9}},
        "switch": {"buffer": "4MiB", "port_cap": "0B", "mmu": {"queue_alpha": 1}},
        "traffic": {"generate": [
            {"pattern": "many_to_one", "transport": "tcp", "size": "64KB", "start": f"{q * PERIOD_MS}ms"}
            for q in range(QUERIES)]},
        "results": {"sample_interval": "20us", "per_queue_series": False},
    }


def query_metrics(r):
    """Per-query completion time from flows.csv (a flow unfinished at the end counts as lost)."""
    f = r.flows
    qct, incomplete = [], 0
    for _, q in f.groupby("start_us"):
        if (q["fct_us"] < 0).any():
            incomplete += 1
        else:
            qct.append(q["fct_us"].max())
    qct.sort()
    p99 = qct[min(len(qct) - 1, int(0.99 * len(qct)))] if qct and not incomplete else float("nan")
    return {"qct_p99_us": p99, "qct_median_us": qct[len(qct) // 2] if qct else float("nan"),
            "queries_incomplete": incomplete, "tcp_timeouts": int(f["timeouts"].sum())}


def main():
    os.makedirs(OUT, exist_ok=True)
    fan_ins = (8, 32) if QUICK else (8, 16, 32, 64)
    buffers = ("2MiB", "16MiB") if QUICK else ("2MiB", "4MiB", "8MiB", "16MiB", "32MiB")
    grid = [{"switch.buffer": buf, "topology.incast.hosts": n + 1} for n in fan_ins for buf in buffers]
    df = fabricsim.sweep(rack(), grid, workers=int(os.environ.get("WORKERS", os.cpu_count() or 2)),
                         cache_dir=None if QUICK else os.path.join(OUT, "cache-incast"), metrics=query_metrics,
                         progress=not QUICK)
    df["fan_in"] = df["topology.incast.hosts"] - 1
    df.to_csv(os.path.join(OUT, "incast_buffer_sweep.csv"), index=False)
    bad = df[df["status"] != "ok"]
    if len(bad):
        print(bad[["switch.buffer", "fan_in", "status", "error"]].to_string(), file=sys.stderr)
        return 1

    import matplotlib.pyplot as plt
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.5), layout="constrained")
    plot.sweep_lines(df, "switch.buffer", "qct_p99_us", hue="fan_in", ax=a, xlabel="shared buffer",
                     ylabel="p99 query completion time (us)",
                     title=f"Incast, TCP: p99 QCT over {QUERIES} queries x 64 KB per server")
    a.set_yscale("log")
    plot.sweep_heatmap(df, "switch.buffer", "fan_in", "frames.dropped", ax=b, fmt="{:.0f}", cmap="magma",
                       xlabel="shared buffer", ylabel="fan-in (servers)", title="Frames dropped at the ToR")
    plot.save(fig, os.path.join(OUT, "incast_buffer_sweep.png"))
    cols = ["switch.buffer", "fan_in", "qct_p99_us", "qct_median_us", "frames.dropped", "tcp_timeouts",
            "switch.buffer_peak_bytes"]
    print(df[cols].to_string(index=False))
    print(f"wrote {os.path.join(OUT, 'incast_buffer_sweep.png')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
