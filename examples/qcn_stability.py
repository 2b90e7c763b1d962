"""QCN stability against round-trip time: QCN vs QCN-AIMD -> queue oscillation, with the tau* line
(seed-000 §2.5, Fig 5.6, Theorems 5.1/5.2).

Ten backlogged L2 sources share one 10G port of a rack switch. The port's congestion point runs
the thesis' QCN (Q_eq = 22 packets, w = 2, sampling 1 %); each source NIC's reaction point runs
the thesis' RP (G_d = 1/128, R_AI = 5 Mb/s, byte counter only) with its 5 fast-recovery cycles
(QCN) or without them (QCN-AIMD). The sweep stretches the round trip (4 links, propagation) and
records the port queue's 10th/50th/90th percentiles and how often it is empty after the start
transient. The fluid model's delay margins (fabricsim.qcn_stability: tau* = 249 us for QCN,
tau_hat = 216 us for QCN-AIMD) are drawn as lines: QCN keeps the queue near Q_eq well past its
sufficient margin, QCN-AIMD swings wider at every RTT, and both empty the queue more as the RTT
grows.  Output: examples/out/qcn_stability.{csv,png}.  QUICK=1 runs 2 x 2 short points (the test).
"""
import os
import sys

import fabricsim
from fabricsim import plot

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "out")
QUICK = os.environ.get("QUICK") == "1"
Q_EQ = 22  # packets
WARMUP_US = 100_000 if QUICK else 300_000  # the start transient: ten line-rate sources, one port


def rack():
    return {
        "name": "qcn_stability",
        "duration": "200ms" if QUICK else "800ms",
        "topology": {"kind": "incast", "host_rate": "10Gbps", "link_delay": "12.5us", "incast": {"hosts": 11}},
        "switch": {"buffer": "4MB", "qcn": {"mode": "thesis"}},
        "nic": {"qcn": {"mode": "thesis"}},
        "traffic": {"generate": [{"pattern": "many_to_one", "transport": "udp", "process": "backlogged"}]},
        "results": {"sample_interval": "10us", "per_queue_series": False},
    }


def metrics(r):
    """The bottleneck port's queue (packets) after the transient, and the link's use."""
    ts = r.timeseries
    q = ts.loc[ts["time_us"] >= WARMUP_US, "tor.p10_frame_bytes"] / 1500
    return {"queue_p10": float(q.quantile(0.1)), "queue_p50": float(q.median()), "queue_p90": float(q.quantile(0.9)),
            "swing_pkts": float(q.quantile(0.9) - q.quantile(0.1)), "empty_share": float((q == 0).mean()),
            "throughput_gbps": float(r.flows["goodput_bps"].sum() / 1e9)}


def main():
    os.makedirs(OUT, exist_ok=True)
    rtts = [50, 350] if QUICK else [50, 100, 150, 200, 250, 300, 350, 400, 500, 600, 700, 800]
    grid = {"topology.link_delay": [f"{rtt / 4}us" for rtt in rtts], "nic.qcn.mode": ["thesis", "thesis_aimd"]}
    df = fabricsim.sweep(rack(), grid, repeats=1, workers=int(os.environ.get("WORKERS", os.cpu_count() or 2)),
                         cache_dir=None if QUICK else os.path.join(OUT, "cache-qcn"), metrics=metrics,
                         progress=not QUICK)
    df["rtt_us"] = df["topology.link_delay"].str.removesuffix("us").astype(float) * 4
    df["rp"] = df["nic.qcn.mode"].map({"thesis": "QCN", "thesis_aimd": "QCN-AIMD"})
    df.to_csv(os.path.join(OUT, "qcn_stability.csv"), index=False)
    bad = df[df["status"] != "ok"]
    if len(bad):
        print(bad[["rtt_us", "rp", "status", "error"]].to_string(), file=sys.stderr)
        return 1

    margins = fabricsim.qcn_stability(10e9, flows=10)  # the thesis' baseline gains
    import matplotlib.pyplot as plt
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.4), layout="constrained")
    plot.sweep_lines(df, "rtt_us", "swing_pkts", hue="rp", ax=a, xlabel="round-trip time (us)",
                     ylabel="queue p90 - p10 (packets)", title="queue oscillation vs RTT")
    plot.sweep_lines(df, "rtt_us", "empty_share", hue="rp", ax=b, xlabel="round-trip time (us)",
                     ylabel="share of samples with an empty queue", title="queue underflow vs RTT")
    for ax in (a, b):
        ax.axvline(margins["tau_star"] * 1e6, color="tab:blue", ls="--", lw=1, label="tau* (QCN, Thm 5.1)")
        ax.axvline(margins["tau_hat"] * 1e6, color="tab:orange", ls=":", lw=1, label="tau_hat (AIMD, Thm 5.2)")
        ax.legend(fontsize=8)
    fig.savefig(os.path.join(OUT, "qcn_stability.png"), dpi=110)
    print(f"tau* = {margins['tau_star'] * 1e6:.1f} us, tau_hat = {margins['tau_hat'] * 1e6:.1f} us")
    print(df[["rtt_us", "rp", "queue_p10", "queue_p50", "queue_p90", "empty_share", "throughput_gbps"]]
          .sort_values(["rp", "rtt_us"]).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
