"""ECN threshold sweep: marking threshold K -> throughput, queue and marks at a 10G bottleneck.

Four ECN-capable senders share one 10G port toward a receiver (incast rack), each a Poisson
source at 24% of its link (96% load in total), 20 ms. The ToR marks CE DCTCP-style (step
marking on the instantaneous queue) above K. Output: examples/out/ecn_threshold_sweep.{csv,png}.

The senders are open-loop UDP-like sources for now: they do not slow down when marked, so the
queue and the throughput do not depend on K; only the fraction of frames marked does (with
3 seeds per K to show the spread). Once DCTCP hosts land, switch the senders to DCTCP and the
same sweep shows the trade-off it is meant for: the queue settles around K while throughput
stays near line rate down to K ~ C x RTT / 7.
"""
import os
import sys

import fabricsim
from fabricsim import plot

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "out")


def bottleneck():
    return {
        "name": "ecn_bottleneck",
        "duration": "20ms",
        "topology": {"kind": "incast", "host_rate": "10Gbps", "link_delay": "1us", "incast": {"hosts": 5}},
        "switch": {"buffer": "4MiB", "port_cap": "0B", "ecn": {"mode": "step", "k": "65pkt"}},
        "traffic": {"generate": [{"pattern": "many_to_one", "process": "poisson", "load": 0.24, "ecn": True}]},
        "results": {"sample_interval": "5us", "per_queue_series": False},
    }


def queue_metrics(r):
    """Bottleneck queue statistics from the time series and the CE fraction from the flows."""
    ts = r.timeseries
    port = max((c for c in ts.columns if c.endswith("_bytes") and ".p" in c), key=lambda c: ts[c].mean())
    q = ts[port] / 1e3
    f = r.flows
    return {"queue_mean_kb": float(q.mean()), "queue_p99_kb": float(q.quantile(0.99)),
            "ce_fraction": float(f["ce_frames"].sum() / max(1, f["delivered_frames"].sum())),
            "throughput_gbps": float(f["throughput_bps"].sum() / 1e9)}


def main():
    os.makedirs(OUT, exist_ok=True)
    ks = ["5KB", "10KB", "20KB", "30KB", "45KB", "60KB", "100KB"]
    df = fabricsim.sweep(bottleneck(), {"switch.ecn.k": ks}, repeats=3,
                         workers=int(os.environ.get("WORKERS", os.cpu_count() or 2)),
                         cache_dir=os.path.join(OUT, "cache-ecn"), metrics=queue_metrics)
    df.to_csv(os.path.join(OUT, "ecn_threshold_sweep.csv"), index=False)
    bad = df[df["status"] != "ok"]
    if len(bad):
        print(bad[["switch.ecn.k", "status", "error"]].to_string(), file=sys.stderr)

    import matplotlib.pyplot as plt
    fig, (a, b, c) = plt.subplots(1, 3, figsize=(14, 4), layout="constrained")
    plot.sweep_lines(df, "switch.ecn.k", "throughput_gbps", ax=a, xlabel="K", ylabel="throughput (Gbps)",
                     title="Bottleneck throughput")
    a.set_ylim(0, 10.5)
    plot.sweep_lines(df, "switch.ecn.k", "queue_mean_kb", ax=b, xlabel="K", ylabel="queue (KB)",
                     title="Bottleneck queue: mean (line), p99 (dashed)")
    plot.sweep_lines(df, "switch.ecn.k", "queue_p99_kb", ax=b, xlabel="K", ylabel="queue (KB)", marker="s",
                     title="Bottleneck queue: mean (line), p99 (dashed)")
    b.get_lines()[-1].set_linestyle("--")
    plot.sweep_lines(df, "switch.ecn.k", "ce_fraction", ax=c, xlabel="K", ylabel="fraction of frames CE-marked",
                     title="ECN marks (open-loop senders do not react)")
    plot.save(fig, os.path.join(OUT, "ecn_threshold_sweep.png"))
    print(df.groupby("switch.ecn.k", sort=False)[["throughput_gbps", "queue_mean_kb", "queue_p99_kb",
                                                    "ce_fraction"]].mean().to_string())
    print(f"wrote {os.path.join(OUT, 'ecn_threshold_sweep.png')}")


if __name__ == "__main__":
    main()
