"""Incast buffer sizing: shared buffer x fan-in -> p99 query completion time and drops.

One rack (a ToR switch, 10G hosts). A query fans out to `fan_in` servers, which all answer at
once with a 64 KB response to the aggregator (the last host); ten queries, one every 4 ms (the
largest, 64 x 64 KB, drains in 3.4 ms at 10G). The
ToR's dynamic-threshold MMU (alpha 1, no static port cap) decides how much of the shared buffer
the aggregator's port may take. Output: examples/out/incast_buffer_sweep.{csv,png}.

Senders are open-loop UDP-like sources for now, so a dropped frame is never retransmitted: the
query completion time is the time the last response frame arrives (line-rate send of the
response + the largest one-way latency among its frames), and a query that lost frames is
counted as incomplete; p99 QCT is left out (NaN) where a query was incomplete. Once the transports land (TCP/DCTCP hosts, per-flow FCT in flows.csv),
switch the senders to TCP and read the QCT directly: drops then turn into RTO-sized tails.
"""
import os
import sys

import fabricsim
from fabricsim import plot

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "out")
QUERIES, PERIOD_US, RESPONSE_FRAMES = 10, 4000, 44  # 44 x 1500 B ~ 64 KB
FRAME_US = 1538 * 8 / 10e9 * 1e6  # one full frame on the wire at 10G


def rack():
    return {
        "name": "incast_rack",
        "duration": f"{QUERIES * PERIOD_US}us",
        "topology": {"kind": "incast", "host_rate": "10Gbps", "link_delay": "1us", "incast": {"hosts": 9}},
        "switch": {"buffer": "4MiB", "port_cap": "0B", "mmu": {"queue_alpha": 1}},
        "traffic": {"generate": [
            {"pattern": "many_to_one", "process": "cbr", "load": 1.0, "frames": RESPONSE_FRAMES,
             "start": f"{q * PERIOD_US}us"} for q in range(QUERIES)]},
        "results": {"sample_interval": "20us", "per_queue_series": False},
    }


def query_metrics(r):
    """Per-query completion time (proxy, see above) and completeness, from flows.csv."""
    f = r.flows
    qct, incomplete = [], 0
    for _, q in f.groupby("start_us"):
        qct.append((RESPONSE_FRAMES - 1) * FRAME_US + q["latency_max_us"].max())
        incomplete += int((q["undelivered_frames"] > 0).any())
    qct.sort()
    p99 = qct[min(len(qct) - 1, int(0.99 * len(qct)))] if incomplete == 0 else float("nan")
    return {"qct_p99_us": p99, "qct_max_us": qct[-1], "queries_incomplete": incomplete}


def main():
    os.makedirs(OUT, exist_ok=True)
    grid = [{"switch.buffer": buf, "topology.incast.hosts": fan_in + 1}
            for fan_in in (8, 16, 32, 64) for buf in ("2MiB", "4MiB", "8MiB", "16MiB", "32MiB")]
    df = fabricsim.sweep(rack(), grid, workers=int(os.environ.get("WORKERS", os.cpu_count() or 2)),
                         cache_dir=os.path.join(OUT, "cache-incast"), metrics=query_metrics)
    df["fan_in"] = df["topology.incast.hosts"] - 1
    df.to_csv(os.path.join(OUT, "incast_buffer_sweep.csv"), index=False)
    bad = df[df["status"] != "ok"]
    if len(bad):
        print(bad[["switch.buffer", "fan_in", "status", "error"]].to_string(), file=sys.stderr)

    import matplotlib.pyplot as plt
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.5), layout="constrained")
    plot.sweep_lines(df, "switch.buffer", "qct_p99_us", hue="fan_in", ax=a, xlabel="shared buffer",
                     ylabel="p99 query completion time (us)",
                     title="Incast: p99 QCT, 10 queries x 64 KB per sender (gap: frames lost)")
    plot.sweep_heatmap(df, "switch.buffer", "fan_in", "frames.dropped", ax=b, fmt="{:.0f}", cmap="magma",
                       xlabel="shared buffer", ylabel="fan-in (senders)", title="Frames dropped at the ToR")
    plot.save(fig, os.path.join(OUT, "incast_buffer_sweep.png"))
    cols = ["switch.buffer", "fan_in", "qct_p99_us", "frames.dropped", "queries_incomplete",
            "switch.buffer_peak_bytes"]
    print(df[cols].to_string(index=False))
    print(f"wrote {os.path.join(OUT, 'incast_buffer_sweep.png')}")


if __name__ == "__main__":
    main()
