"""Incast buffer sizing: shared buffer x fan-in -> p99 query completion time and drops.

One rack (a ToR switch, 10G hosts, TCP NewReno with a 10 ms minimum RTO). A partition/aggregate
application (traffic.incast): the aggregator (first host) sends a query to `fan_in` workers over
persistent connections, each answers with 64 KB at once; the next query follows 100 us after
the previous one completed, 20 queries per run. The ToR's dynamic-threshold MMU (alpha 1, no
static port cap) decides how much of the shared buffer the aggregator's port may take. Where
the buffer is too small, drops turn into retransmission timeouts and the p99 query completion
time (QCT) jumps by the RTO. Output: examples/out/incast_buffer_sweep.{csv,png}.
QUICK=1 runs a 2x2 grid with 3 queries (the test).
"""
import os
import sys

import fabricsim
from fabricsim import plot

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "out")
QUICK = os.environ.get("QUICK") == "1"
QUERIES = 3 if QUICK else 20


def rack():
    return {
        "name": "incast_rack",
        "duration": f"{QUERIES * 15 + 20}ms",  # room for queries that time out
        "topology": {"kind": "incast", "host_rate": "10Gbps", "link_delay": "1us", "incast": {"hosts": 9}},
        "switch": {"buffer": "4MiB", "port_cap": "0B", "mmu": {"queue_alpha": 1}},
        "traffic": {"incast": [{"response_size": "64KB", "queries": QUERIES, "think_time": "100us"}]},
        "results": {"sample_interval": "20us", "per_queue_series": False},
    }


def main():
    os.makedirs(OUT, exist_ok=True)
    fan_ins = (8, 32) if QUICK else (8, 16, 32, 64)
    buffers = ("2MiB", "16MiB") if QUICK else ("2MiB", "4MiB", "8MiB", "16MiB", "32MiB")
    # fan-in = every host of the rack but the aggregator
    grid = {"topology.incast.hosts": [n + 1 for n in fan_ins], "switch.buffer": list(buffers)}
    df = fabricsim.sweep(rack(), grid, workers=int(os.environ.get("WORKERS", os.cpu_count() or 2)),
                         cache_dir=None if QUICK else os.path.join(OUT, "cache-incast"), progress=not QUICK)
    df["fan_in"] = df["topology.incast.hosts"] - 1
    df.to_csv(os.path.join(OUT, "incast_buffer_sweep.csv"), index=False)
    bad = df[(df["status"] != "ok") | (df.get("incast.queries_completed", 0) != QUERIES)]
    if len(bad):
        print(bad[["switch.buffer", "fan_in", "status", "error"]].to_string(), file=sys.stderr)
        return 1

    import matplotlib.pyplot as plt
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.5), layout="constrained")
    plot.sweep_lines(df, "switch.buffer", "incast.qct_us.p99", hue="fan_in", ax=a, xlabel="shared buffer",
                     ylabel="p99 query completion time (us)",
                     title=f"Incast, TCP: p99 QCT of {QUERIES} queries, 64 KB per worker")
    a.set_yscale("log")
    plot.sweep_heatmap(df, "switch.buffer", "fan_in", "frames.dropped", ax=b, fmt="{:.0f}", cmap="magma",
                       xlabel="shared buffer", ylabel="fan-in (workers)", title="Frames dropped at the ToR")
    plot.save(fig, os.path.join(OUT, "incast_buffer_sweep.png"))
    cols = ["switch.buffer", "fan_in", "incast.qct_us.p50", "incast.qct_us.p99", "frames.dropped",
            "incast.queries_with_timeouts", "switch.buffer_peak_cell_bytes"]
    print(df[cols].to_string(index=False))
    print(f"wrote {os.path.join(OUT, 'incast_buffer_sweep.png')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
