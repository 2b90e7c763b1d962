"""How much buffer does a border switch need? Border-switch buffer x transport -> inter-DC
throughput and intra-DC small-flow p99 FCT (seed-002 §3A, GEMINI's testbed, Table 3.1/4.1).

Two data centres (multi_dc: two leaves, one spine and 24 hosts each, 1G hosts under a 10G
fabric) are joined through their border switches by a 1G WAN link with a 10 ms round trip; DC
switches are shallow (4 MB shared, 450 packets per port, ECN step at K = 300 packets as the
thesis' testbed), border switches have the swept buffer and no ECN (ECN is "often unsupported
in the WAN"). Web-search flows arrive at every host, destinations uniform over all other hosts
(the thesis' "uniform mixed" pattern: about half cross the WAN, which runs near 90 %). The sweep
varies the border port's buffer and the transport (Cubic, DCTCP, GEMINI) and reports the WAN
link's use by inter-DC flows and the p99 FCT of intra-DC flows under 100 KB.
Output: examples/out/wan_buffer_sizing.{csv,png}.  QUICK=1 runs 2 x 2 short points (the test).
"""
import os
import sys

import fabricsim
from fabricsim import plot

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "out")
QUICK = os.environ.get("QUICK") == "1"
DURATION_S = 0.3 if QUICK else 10.0
PKT = 1500


def border(packets):
    """The border switches' profile: `packets` of 1500 B per port, no ECN."""
    return [{"name": "border", "roles": ["border"], "buffer": "256MB", "port_cap": f"{packets * PKT}B",
             "ecn": {"mode": "off"}}]


def platform():
    return {
        "name": "wan_buffer_sizing",
        "seed": 1,
        "duration": f"{DURATION_S}s",
        "topology": {"kind": "multi_dc", "host_rate": "1Gbps", "link_delay": "25us",
                     "multi_dc": {"dcs": 2, "leaves": 2, "spines": 1, "hosts_per_leaf": 12,
                                  "borders": 1, "fabric_rate": "10Gbps", "wan_rate": "1Gbps",
                                  "wan_delay": "4900us"}},
        "switch": {"queues": 1, "buffer": "4MB", "port_cap": f"{450 * PKT}B",
                   "ecn": {"mode": "step", "k": "300pkt"}},
        "switch_profiles": border(1000),
        "tcp": {"cc": "cubic", "gemini": {"k": f"{300 * PKT}B"}},
        "traffic": {"workload": [{"pattern": "all_to_all", "sizes": "websearch", "load": 0.075,
                                  "transport": "tcp"}]},
        "results": {"sample_interval": "0s"},
    }


def metrics(r):
    f = r.flows
    inter = f["src"].str[:3] != f["dst"].str[:3]
    # Bytes the WAN carried for inter-DC flows (both directions), as a share of its 2 x 1G.
    wan_use = f.loc[inter, "delivered_bytes"].sum() * 8 / DURATION_S / 2e9
    small = f[~inter & (f["size_bytes"] < 100_000) & (f["fct_us"] > 0)]
    return {"wan_use": float(wan_use), "intra_small_p99_fct_us": float(small["fct_us"].quantile(0.99)),
            "intra_small_flows": int(len(small)),
            "inter_done_share": float((f.loc[inter, "fct_us"] > 0).mean()),
            "timeouts": int(f["timeouts"].sum())}


def main():
    os.makedirs(OUT, exist_ok=True)
    buffers = [100, 1000] if QUICK else [100, 300, 1000, 3000, 10000]
    transports = ["cubic", "gemini"] if QUICK else ["cubic", "dctcp", "gemini"]
    grid = {"switch_profiles": [border(b) for b in buffers], "tcp.cc": transports}
    df = fabricsim.sweep(platform(), grid, repeats=1, workers=int(os.environ.get("WORKERS", os.cpu_count() or 2)),
                         cache_dir=None if QUICK else os.path.join(OUT, "cache-wan"), metrics=metrics,
                         progress=not QUICK)
    df["border_pkts"] = df["switch_profiles"].map(lambda p: int(p[0]["port_cap"][:-1]) // PKT)
    df.to_csv(os.path.join(OUT, "wan_buffer_sizing.csv"), index=False)
    bad = df[df["status"] != "ok"]
    if len(bad):
        print(bad[["border_pkts", "tcp.cc", "status", "error"]].to_string(), file=sys.stderr)
        return 1
    import matplotlib.pyplot as plt
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.4), layout="constrained")
    plot.sweep_lines(df, "border_pkts", "wan_use", hue="tcp.cc", ax=a,
                     xlabel="border port buffer (1500 B packets)", ylabel="WAN use by inter-DC flows",
                     title="inter-DC throughput vs border buffer")
    plot.sweep_lines(df, "border_pkts", "intra_small_p99_fct_us", hue="tcp.cc", ax=b,
                     xlabel="border port buffer (1500 B packets)", ylabel="p99 FCT (us)",
                     title="intra-DC flows < 100 KB: p99 FCT")
    for ax in (a, b):
        ax.set_xscale("log")
    fig.savefig(os.path.join(OUT, "wan_buffer_sizing.png"), dpi=110)
    print(df[["border_pkts", "tcp.cc", "wan_use", "intra_small_p99_fct_us", "inter_done_share", "timeouts"]]
          .sort_values(["tcp.cc", "border_pkts"]).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
