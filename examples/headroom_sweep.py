"""PFC headroom sweep: link speed x cable length -> the headroom a lossless PG needs.

For each speed and cable length, platforms/scenarios/headroom_incast.yaml runs a 2:1 lossless
incast (DSCP 24, PG 3) whose ingress PGs cycle through XOFF and XON while the switch's ports to
the senders are kept busy with lossy frames. With `switch.flow_control.headroom: calculated`
every port gets the headroom calculator's value for its link (`fabricsim headroom`); the run
reports it (headroom_limit_cells) and the most headroom the PG really used (headroom_peak_cells).
The two lines meet: the calculator's bound is reached and nothing is lost. The calculator grows
with the cable (2 x propagation at line rate) and with the speed (the Annex 31B response time is
worth 3.8 KB at 10G and 25 KB at 100G).
Output: examples/out/headroom_sweep.{csv,png}.  QUICK=1 runs 2 speeds x 2 lengths (the test).
"""
import os
import sys

import pandas as pd

import fabricsim
from fabricsim import plot

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "out")
QUICK = os.environ.get("QUICK") == "1"
SCENARIO = fabricsim.scenarios.path("headroom_incast")  # shipped with the package
CELL = 208


def at_speed(rate, reverse):
    """Overrides for one speed: lossless senders at line rate, the lossy reverse load at 90%."""
    return {"topology.host_rate": rate, "traffic.flows[0].rate": rate, "traffic.flows[1].rate": rate,
            "traffic.flows[2].rate": reverse, "traffic.flows[3].rate": reverse,
            "duration": "2ms" if QUICK else "5ms"}


def headroom_metrics(r):
    """Calculated headroom and peak use of PG 3 over the two senders' ports, in bytes."""
    pgs = [g for p in r.summary["switches"]["tor"]["ports"] for g in p["ingress_pgs"] if g["pg"] == 3]
    return {"calculated_bytes": max(g["headroom_limit_cells"] for g in pgs) * CELL,
            "peak_bytes": max(g["headroom_peak_cells"] for g in pgs) * CELL,
            "lossless_drops": r.summary["frames"]["dropped_by_cause"]["headroom_exhausted"]}


def main():
    os.makedirs(OUT, exist_ok=True)
    speeds = [("10Gbps", "9Gbps"), ("100Gbps", "90Gbps")] if QUICK else \
        [("10Gbps", "9Gbps"), ("25Gbps", "22.5Gbps"), ("100Gbps", "90Gbps")]
    cables = [2, 300] if QUICK else [1, 10, 50, 100, 200, 300, 500]
    frames = []
    for rate, reverse in speeds:
        df = fabricsim.sweep(SCENARIO, {"topology.cable_length": cables}, repeats=1,
                             overrides=at_speed(rate, reverse),
                             workers=int(os.environ.get("WORKERS", os.cpu_count() or 2)),
                             cache_dir=None if QUICK else os.path.join(OUT, "cache-headroom"),
                             metrics=headroom_metrics, progress=not QUICK)
        df["speed"] = rate
        frames.append(df)
    df = pd.concat(frames, ignore_index=True)
    df.to_csv(os.path.join(OUT, "headroom_sweep.csv"), index=False)
    bad = df[df["status"] != "ok"]
    if len(bad):
        print(bad[["speed", "topology.cable_length", "status", "error"]].to_string(), file=sys.stderr)
        return 1

    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7.5, 4.5), layout="constrained")
    for speed, g in df.groupby("speed", sort=False):
        line, = ax.plot(g["topology.cable_length"], g["calculated_bytes"] / 1e3, marker="o",
                        label=f"{speed}: calculator")
        ax.plot(g["topology.cable_length"], g["peak_bytes"] / 1e3, marker="x", linestyle="--",
                color=line.get_color(), label=f"{speed}: simulated peak use")
    ax.set_xlabel("cable length (m)")
    ax.set_ylabel("headroom per lossless PG (KB)")
    ax.set_title("PFC headroom: calculator vs simulation (1518-B frames, 208-B cells)")
    ax.legend()
    plot.save(fig, os.path.join(OUT, "headroom_sweep.png"))
    print(df[["speed", "topology.cable_length", "calculated_bytes", "peak_bytes",
              "lossless_drops"]].to_string(index=False))
    print(f"wrote {os.path.join(OUT, 'headroom_sweep.png')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
