"""RoCEv2 with DCQCN (issue 13): the oracles of tests/python/test_dcqcn_oracle.py on
platforms/scenarios/dcqcn_*.yaml (the DCQCN paper's set-ups: 40G, RED Kmin/Kmax, CNP every 50 us)."""
from . import plots
from .core import Outcome, experiment, num

LINE = 40e9
KMAX = 200e3  # RED max_th of the scenarios (the DCQCN paper's Kmax)


def xoff_after(ts, t0_us):
    """Fraction of samples after t0 in which any ingress PG of any port is in XOFF."""
    cols = [c for c in ts.columns if c.endswith("_xoff")]
    late = ts[ts.time_us >= t0_us]
    return float((late[cols].sum(axis=1) > 0).mean())


@experiment("dcqcn-two-flows", "RoCE/DCQCN", "Two flows converge to a fair share",
            "facts-l2-congestion-management.md §4 (DCQCN, Zhu et al. SIGCOMM 2015); docs/models/roce.md",
            "platforms/scenarios/dcqcn_two_flows.yaml: two RoCEv2 flows into one 40G port, lossless "
            "class with PFC, RED marking (Kmax 200 KB), the paper's DCQCN preset; rates over 10-20 ms.",
            "the two flows converge to equal shares of the port; the queue stays near the RED band and "
            "PFC is quiet once settled",
            "total > 85 % of 40G, each within 10 % of half; queue p99 <= 1.25 Kmax after 5 ms; no XOFF after "
            "5 ms; no drop", quick=True)
def two_flows(ctx):
    import fabricsim
    path = fabricsim.scenarios.path("dcqcn_two_flows")
    at10 = ctx.run(path, "at10", overrides={"duration": "10ms"})
    at20 = ctx.run(path, "at20")
    a = {f["id"]: f["rx_bytes"] for f in at10.summary["flows"]}
    b = {f["id"]: f["rx_bytes"] for f in at20.summary["flows"]}
    rates = [(b[i] - a[i]) * 8 / 10e-3 for i in (0, 1)]
    total = sum(rates)
    ts = at20.timeseries
    q = ts[ts.time_us >= 5000]["tor.p2q3_frame_bytes"]
    v = {"rate0_bps": num(rates[0]), "rate1_bps": num(rates[1]), "queue_p99_bytes": num(q.quantile(0.99)),
         "xoff_after_5ms": xoff_after(ts, 5000),
         "dropped": at10.summary["frames"]["dropped"] + at20.summary["frames"]["dropped"]}
    ok = (total > 0.85 * LINE and all(abs(r - total / 2) <= 0.10 * total / 2 for r in rates)
          and v["queue_p99_bytes"] <= 1.25 * KMAX and v["xoff_after_5ms"] == 0 and v["dropped"] == 0)

    def plot(fig):
        ax = fig.add_subplot(111)
        for nic in ("h0_nic", "h1_nic"):
            ax.plot(ts.time_us / 1e3, ts[f"{nic}.limiter_rate_mean_bps"] / 1e9, lw=0.8, label=f"{nic} DCQCN rate")
        ax.axhline(LINE / 2e9, color=plots.PUB, ls="--", label="fair share 20 Gbps")
        ax.set_xlabel("time (ms)")
        ax.set_ylabel("rate (Gbps)")
        ax.set_title("DCQCN, two flows on a 40G port", fontsize=9)
        ax.legend(fontsize=8)
    return Outcome(f"{rates[0] / 1e9:.2f} + {rates[1] / 1e9:.2f} Gbps over 10-20 ms; queue p99 "
                   f"{v['queue_p99_bytes'] / 1e3:.0f} KB; XOFF after 5 ms: {v['xoff_after_5ms']:.0%}", v, ok, plot)


@experiment("dcqcn-incast", "RoCE/DCQCN", "Incast: queue near the RED band, PFC quiet",
            "facts-l2-congestion-management.md §4 (DCQCN, Zhu et al. SIGCOMM 2015); docs/models/roce.md",
            "platforms/scenarios/dcqcn_incast.yaml with N = 2, 4, 8, 16 senders into one 40G port.",
            "DCQCN holds the queue near the RED band and PFC is needed only in the start-up burst",
            "after 5 ms: queue p99 <= 1.25 Kmax, mean <= Kmax, no XOFF; goodput > 40 %; every flow rate-limited")
def incast(ctx):
    import fabricsim
    path = fabricsim.scenarios.path("dcqcn_incast")
    rows, ok = {}, True
    for n in (2, 4, 8, 16):
        r = ctx.run(path, f"n{n}", overrides={"topology.incast.hosts": n + 1})
        ts, s = r.timeseries, r.summary
        q = ts[ts.time_us >= 5000][f"tor.p{n}q3_frame_bytes"]
        rows[str(n)] = {"queue_p99_bytes": num(q.quantile(0.99)), "queue_mean_bytes": num(q.mean()),
                        "xoff_after_5ms": xoff_after(ts, 5000), "goodput_bps": s["goodput_bps"],
                        "rate_limited_flows": s["roce"]["rate_limited_flows"], "dropped": s["frames"]["dropped"]}
        x = rows[str(n)]
        ok = ok and (x["queue_p99_bytes"] <= 1.25 * KMAX and x["queue_mean_bytes"] <= KMAX and x["xoff_after_5ms"] == 0
                     and x["goodput_bps"] > 0.4 * LINE and x["rate_limited_flows"] == n and x["dropped"] == 0)

    def plot(fig):
        ax = plots.bars(fig, [f"N={n}" for n in rows], [x["queue_p99_bytes"] / 1e3 for x in rows.values()],
                        [KMAX / 1e3] * len(rows), "queue p99 (KB)", "DCQCN incast: queue p99 against Kmax (red)")
        ax.axhline(1.25 * KMAX / 1e3, color="gray", ls=":")
    return Outcome("queue p99 " + ", ".join(f"N={n} {x['queue_p99_bytes'] / 1e3:.0f} KB" for n, x in rows.items())
                   + "; no XOFF after 5 ms" * all(x["xoff_after_5ms"] == 0 for x in rows.values()), rows, ok, plot)


@experiment("dcqcn-spreading", "RoCE/DCQCN", "DCQCN stops PFC from spreading congestion to a victim",
            "facts-l2-congestion-management.md §4 (DCQCN, Zhu et al. SIGCOMM 2015); docs/models/roce.md",
            "platforms/scenarios/dcqcn_spreading.yaml: an incast behind PFC and a victim flow that shares only "
            "a paused upstream port with it; PFC alone (DCQCN and ECN off) against DCQCN; 20 ms.",
            "with PFC alone the pause spreads and the victim is held behind the incast; DCQCN keeps PFC quiet "
            "and the victim's throughput up",
            "XOFF frames with DCQCN < 5 % of PFC alone; victim < 3.5 Gbps with PFC alone and > 1.5x that with "
            "DCQCN; no drop")
def spreading(ctx):
    import fabricsim
    path = fabricsim.scenarios.path("dcqcn_spreading")
    runs = {"pfc_only": ctx.run(path, "pfc_only", overrides={"nic.dcqcn.mode": "none", "switch.ecn.mode": "off"}),
            "dcqcn": ctx.run(path, "dcqcn")}

    def xoffs(r):
        return sum(sum(p["flow_control"]["xoff_sent"]) for sw in r.summary["switches"].values() for p in sw["ports"])
    v = {k: {"xoff_frames": xoffs(r), "victim_gbps": r.summary["flows"][3]["rx_bytes"] * 8 / 20e-3 / 1e9,
             "dropped": r.summary["frames"]["dropped"]} for k, r in runs.items()}
    p, d = v["pfc_only"], v["dcqcn"]
    ok = (p["dropped"] == 0 and d["dropped"] == 0 and d["xoff_frames"] < 0.05 * p["xoff_frames"]
          and p["victim_gbps"] < 3.5 and d["victim_gbps"] > 1.5 * p["victim_gbps"])

    def plot(fig):
        ax = fig.add_subplot(121)
        ax.bar([0, 1], [p["victim_gbps"], d["victim_gbps"]], color=["orange", plots.SIM])
        ax.set_xticks([0, 1])
        ax.set_xticklabels(["PFC only", "DCQCN"])
        ax.set_ylabel("victim throughput (Gbps)")
        ax2 = fig.add_subplot(122)
        ax2.bar([0, 1], [p["xoff_frames"], d["xoff_frames"]], color=["orange", plots.SIM])
        ax2.set_xticks([0, 1])
        ax2.set_xticklabels(["PFC only", "DCQCN"])
        ax2.set_ylabel("XOFF frames sent")
    return Outcome(f"victim {p['victim_gbps']:.2f} Gbps with PFC only, {d['victim_gbps']:.2f} with DCQCN; XOFF frames "
                   f"{p['xoff_frames']} -> {d['xoff_frames']}", v, ok, plot)
