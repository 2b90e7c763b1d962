"""NIC burstiness: interrupt coalescing (rx-frames) x LSO -> ACK ratio, receiver CPU and the switch
queue (seed-000 §4.3.1, Table 4.2, Fig 4.3).

Four long-lived DCTCP flows share one 10G port toward a receiver (incast rack, 5 us links). Every
host has the real NIC data path: PCIe gen3 x16 with DMA, interrupt coalescing with NAPI polls on
one core and GRO (one ACK per aggregate), and an application reading at 0.1 ns per byte; the
receiver h4 interrupts every rx-frames frames (or 100 us), the senders moderate adaptively.
Larger rx-frames batches more segments per interrupt, so ACKs are fewer, cover more data and
arrive together, and the receiver's CPU falls; once rx-frames exceeds what the flows have in
flight, the 100-us timer paces the ACKs and throughput drops. LSO changes little here: TCP's
window leaves back to back at line rate either way (the senders' CPU is not modelled).
Output: examples/out/nic_burstiness.{csv,png}.  QUICK=1 runs 2 x 2 points (the test).
"""
import os
import sys

import fabricsim
from fabricsim import plot

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "out")
QUICK = os.environ.get("QUICK") == "1"
WARMUP_US = 5000  # leave slow start out of the queue statistics


def rack():
    return {
        "name": "nic_burstiness",
        "duration": "15ms" if QUICK else "50ms",
        "topology": {"kind": "incast", "host_rate": "10Gbps", "link_delay": "5us", "incast": {"hosts": 5}},
        "switch": {"buffer": "4MiB", "port_cap": "0B", "ecn": {"mode": "step", "k": "65pkt"}},
        "tcp": {"abc_limit": 64},
        "nic": {"pcie": {"model": "gen3_x16"}, "lso": {"enabled": True},
                "rx": {"napi": True, "rx_usecs": "100us", "rx_frames": 32, "app_byte_cost": "0.1ns"}},
        # The senders take their ACKs with adaptive moderation; the sweep sets the receiver's.
        "nic_profiles": [{"name": "sender", "nodes": ["h0", "h1", "h2", "h3"], "rx": {"coalescing": "adaptive"}}],
        "traffic": {"generate": [{"pattern": "many_to_one", "transport": "tcp", "cc": "dctcp"}]},
        "results": {"sample_interval": "5us", "per_queue_series": False},
    }


def metrics(r):
    """ACK ratio (payload per ACK), the receiver's CPU, goodput, and the bottleneck queue."""
    ts = r.timeseries_long  # time_us, node, port, queue, metric, value
    ports = ts[(ts["port"] >= 0) & (ts["queue"] == -1) & (ts["time_us"] >= WARMUP_US)]
    per_port = ports.groupby(["node", "port"], observed=True)["value"]
    q = per_port.get_group(per_port.mean().idxmax()) / 1e3  # the busiest port's queued bytes
    f = r.flows
    receiver = max(r.summary["hosts"].values(), key=lambda h: h["received_bytes"])
    return {"ack_ratio_kb": float(f["rx_bytes"].sum() / f["ack_frames"].sum() / 1e3),
            "receiver_cpu": float(receiver["rx_path"]["cpu_utilisation"]),
            "throughput_gbps": float(f["goodput_bps"].sum() / 1e9),
            "queue_mean_kb": float(q.mean()), "queue_p99_kb": float(q.quantile(0.99))}


def main():
    os.makedirs(OUT, exist_ok=True)
    frames = [8, 128] if QUICK else [2, 8, 32, 128]
    df = fabricsim.sweep(rack(), {"nic.rx.rx_frames": frames, "nic.lso.enabled": [False, True]}, repeats=1,
                         workers=int(os.environ.get("WORKERS", os.cpu_count() or 2)),
                         cache_dir=None if QUICK else os.path.join(OUT, "cache-nic"), metrics=metrics,
                         progress=not QUICK)
    df.to_csv(os.path.join(OUT, "nic_burstiness.csv"), index=False)
    bad = df[df["status"] != "ok"]
    if len(bad):
        print(bad[["nic.rx.rx_frames", "nic.lso.enabled", "status", "error"]].to_string(), file=sys.stderr)
        return 1

    import matplotlib.pyplot as plt
    fig, (a, b, c) = plt.subplots(1, 3, figsize=(15, 4.2), layout="constrained")
    for ax, y, label in ((a, "ack_ratio_kb", "payload per ACK (KB)"), (b, "receiver_cpu", "receiver CPU (share)"),
                         (c, "queue_p99_kb", "bottleneck queue p99 (KB)")):
        plot.sweep_lines(df, "nic.rx.rx_frames", y, hue="nic.lso.enabled", ax=ax, xlabel="rx-frames",
                         ylabel=label, title=label + " vs rx-frames", logx=True)
    fig.savefig(os.path.join(OUT, "nic_burstiness.png"), dpi=110)
    print(df[["nic.rx.rx_frames", "nic.lso.enabled", "ack_ratio_kb", "receiver_cpu", "throughput_gbps",
              "queue_p99_kb"]].to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
