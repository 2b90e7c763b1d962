"""ECN threshold sweep: DCTCP marking threshold K -> throughput and queue at a 10G bottleneck.

Four long-lived DCTCP flows share one 10G port toward a receiver (incast rack, 20 us links, so
the base RTT is ~85 us and C x RTT ~ 105 KB). The ToR marks CE on the instantaneous queue above
K (step marking). Small K keeps the queue short but starves the link once K drops below about
C x RTT / 7 (the DCTCP paper's guideline); large K only adds queueing delay.
Output: examples/out/ecn_threshold_sweep.{csv,png}.  QUICK=1 runs three values of K (the test).
"""
import os
import sys

import fabricsim
from fabricsim import plot

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "out")
QUICK = os.environ.get("QUICK") == "1"
WARMUP_US = 5000  # leave slow start out of the queue statistics


def bottleneck():
    return {
        "name": "dctcp_bottleneck",
        "duration": "10ms" if QUICK else "40ms",
        "topology": {"kind": "incast", "host_rate": "10Gbps", "link_delay": "20us", "incast": {"hosts": 5}},
        "switch": {"buffer": "4MiB", "port_cap": "0B", "ecn": {"mode": "step", "k": "65pkt"}},
        "traffic": {"generate": [{"pattern": "many_to_one", "transport": "tcp", "cc": "dctcp"}]},
        "results": {"sample_interval": "5us", "per_queue_series": False},
    }


def queue_metrics(r):
    """Bottleneck queue after warm-up (time series) and the flows' goodput (flows.csv)."""
    ts = r.timeseries
    ts = ts[ts["time_us"] >= WARMUP_US]
    port = max((c for c in ts.columns if c.endswith("_frame_bytes") and ".p" in c), key=lambda c: ts[c].mean())
    q = ts[port] / 1e3
    f = r.flows
    return {"queue_mean_kb": float(q.mean()), "queue_p99_kb": float(q.quantile(0.99)),
            "throughput_gbps": float(f["goodput_bps"].sum() / 1e9), "alpha_mean": float(f["alpha"].mean()),
            "tcp_timeouts": int(f["timeouts"].sum())}


def main():
    os.makedirs(OUT, exist_ok=True)
    ks = ["4KB", "16KB", "64KB"] if QUICK else ["2KB", "4KB", "8KB", "16KB", "32KB", "64KB", "128KB", "256KB"]
    df = fabricsim.sweep(bottleneck(), {"switch.ecn.k": ks}, repeats=1,
                         workers=int(os.environ.get("WORKERS", os.cpu_count() or 2)),
                         cache_dir=None if QUICK else os.path.join(OUT, "cache-ecn"), metrics=queue_metrics,
                         progress=not QUICK)
    df.to_csv(os.path.join(OUT, "ecn_threshold_sweep.csv"), index=False)
    bad = df[df["status"] != "ok"]
    if len(bad):
        print(bad[["switch.ecn.k", "status", "error"]].to_string(), file=sys.stderr)
        return 1

    import matplotlib.pyplot as plt
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.2), layout="constrained")
    plot.sweep_lines(df, "switch.ecn.k", "throughput_gbps", ax=a, xlabel="marking threshold K",
                     ylabel="throughput of the 4 flows (Gbps)", title="DCTCP: bottleneck throughput vs K")
    a.set_ylim(0, 10.5)
    plot.sweep_lines(df, "switch.ecn.k", "queue_mean_kb", ax=b, xlabel="marking threshold K", ylabel="queue (KB)",
                     title="Bottleneck queue after 5 ms: mean (solid), p99 (dashed)")
    plot.sweep_lines(df, "switch.ecn.k", "queue_p99_kb", ax=b, xlabel="marking threshold K", ylabel="queue (KB)",
                     marker="s", title="Bottleneck queue after 5 ms: mean (solid), p99 (dashed)")
    b.get_lines()[-1].set_linestyle("--")
    plot.save(fig, os.path.join(OUT, "ecn_threshold_sweep.png"))
    print(df.groupby("switch.ecn.k", sort=False)[["throughput_gbps", "queue_mean_kb", "queue_p99_kb",
                                                    "alpha_mean", "tcp_timeouts"]].mean().to_string())
    print(f"wrote {os.path.join(OUT, 'ecn_threshold_sweep.png')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
