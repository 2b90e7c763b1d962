"""DCTCP (seed-000 §2.1-§2.3, §3.2), the dynamic-threshold buffer under TCP (facts-mmu), and
incast: the headline results of the C++ oracles tests/platforms/test_tcp_oracles.cpp and
test_incast_oracles.cpp, run from Python with the same set-ups and tolerances."""
import numpy as np

from . import plots
from .core import Outcome, experiment, num

SEED = "seed-000-alizadeh-dctcp-hull-qcn.md"
FRAME = 1518  # bytes of a 1500 B packet in the buffer
WIRE = 1538  # on the wire
PAYLOAD_10G = 10e9 * 1460 / WIRE


def sawtooth_alpha(w):
    """Seed-000 eq. 2.6: alpha^2 (1 - alpha/4) = (2W+1)/(W+1)^2, by bisection."""
    lo, hi = 0.0, 1.0
    rhs = (2 * w + 1) / ((w + 1) ** 2)
    for _ in range(100):
        a = (lo + hi) / 2
        if a * a * (1 - a / 4) < rhs:
            lo = a
        else:
            hi = a
    return (lo + hi) / 2


def _sawtooth(ctx, n, k=40):
    r = ctx.run(f"""
duration: 40ms
topology: {{kind: incast, host_rate: 10Gbps, link_delay: 24us, incast: {{hosts: {n + 1}}}}}
switch: {{queues: 1, ecn: {{mode: step, k: {k}pkt}}}}
tcp: {{cc: dctcp, ack_every: 1, dctcp: {{g: 0.0625}}}}
traffic: {{generate: [{{pattern: many_to_one, transport: tcp}}]}}
results: {{sample_interval: 1us}}
""", f"sawtooth{n}")
    s = r.summary
    rtt_us = s["flows"][0]["tcp"]["min_rtt_us"]
    c_rtt = 10e9 * rtt_us * 1e-6 / (WIRE * 8)
    w_star = (c_rtt + k) / n
    alpha = sawtooth_alpha(w_star)
    amplitude = n * (w_star + 1) * alpha / 2  # eq. 2.8, exact form
    ts = r.timeseries
    late = ts[ts.time_us >= 10000]
    q = late[f"tor.p{n}_frame_bytes"].to_numpy() / FRAME
    alpha_mean = sum(f["tcp"]["alpha"] for f in s["flows"]) / n
    v = {"q_max": num(q.max()), "q_min": num(q.min()), "amplitude": num(q.max() - q.min()),
         "amplitude_model": amplitude, "alpha": num(alpha_mean), "alpha_model": alpha,
         "k_plus_n": k + n, "goodput_bps": s["goodput_bps"], "timeouts": s["tcp"]["timeouts"],
         "dropped": s["frames"]["dropped"]}
    ok = (abs(v["q_max"] - (k + n)) <= 2 and abs(v["amplitude"] - amplitude) <= 0.25 * amplitude
          and abs(alpha_mean - alpha) <= 0.25 * alpha and v["q_min"] > 0 and v["timeouts"] == 0
          and v["dropped"] == 0 and v["goodput_bps"] > 0.97 * PAYLOAD_10G)
    window = ts[(ts.time_us >= 20000) & (ts.time_us < 24000)]

    def plot(fig):
        ax = plots.series(fig, window.time_us / 1e3, window[f"tor.p{n}_frame_bytes"] / FRAME,
                          "time (ms)", "queue (packets)", f"DCTCP sawtooth, N = {n}, K = {k}",
                          [(k + n, "Q_max = K + N (eq. 2.7)"),
                           (k + n - amplitude, "Q_min = Q_max - A (eq. 2.8)")])
        ax.set_ylim(bottom=0)
    text = (f"Q_max {v['q_max']:.1f}, amplitude {v['amplitude']:.1f} (model {amplitude:.1f}), "
            f"alpha {alpha_mean:.3f} (model {alpha:.3f}), queue never empty (min {v['q_min']:.1f}), "
            f"goodput {v['goodput_bps'] / 1e9:.3f} Gbps")
    return Outcome(text, v, ok, plot)


SAW_SETUP = ("N long-lived DCTCP flows into one 10G port (incast rack), K = 40 packets, g = 1/16, "
             "ACK every packet, ~100 us RTT, 40 ms; queue sampled every 1 us after 10 ms. "
             "C x RTT from the measured base RTT.")
SAW_PUB = ("Q_max = K + N (eq. 2.7); amplitude A = N (W* + 1) alpha / 2 (eq. 2.8) with alpha "
           "from eq. 2.6; the queue never empties")
SAW_TOL = "Q_max within 2 packets; amplitude and alpha within 25 % (synchronised-flow model)"


@experiment("dctcp-sawtooth-2", "DCTCP", "Sawtooth with 2 flows", SEED + " §2.1 (eqs. 2.6-2.8)",
            SAW_SETUP.replace("N long", "2 long"), SAW_PUB, SAW_TOL, quick=True)
def sawtooth_2(ctx):
    return _sawtooth(ctx, 2)


@experiment("dctcp-sawtooth-10", "DCTCP", "Sawtooth with 10 flows", SEED + " §2.1 (eqs. 2.6-2.8)",
            SAW_SETUP.replace("N long", "10 long"), SAW_PUB, SAW_TOL)
def sawtooth_10(ctx):
    return _sawtooth(ctx, 10)


def _utilisation(ctx, cc):
    r = ctx.run(f"""
duration: 400ms
topology: {{kind: incast, host_rate: 10Gbps, link_delay: 120us, incast: {{hosts: 3}}}}
switch: {{queues: 1, ecn: {{mode: step, k: 4pkt}}}}
tcp: {{cc: {cc}, ack_every: 1, dctcp: {{g: 0.05}}}}
traffic: {{generate: [{{pattern: many_to_one, transport: tcp, trace: true}}]}}
results: {{sample_interval: 0s}}
""", f"util_{cc}")
    t0, t1 = 150e3, 400e3
    total = 0.0
    for f in (0, 1):
        tr = r.trace(f)
        acked = tr.acked_bytes.to_numpy()
        t = tr.time_us.to_numpy()

        def at(x):
            i = np.searchsorted(t, x, side="right") - 1
            return acked[i] if i >= 0 else 0
        total += at(t1) - at(t0)
    return total * 8 / ((t1 - t0) * 1e-6) / PAYLOAD_10G


@experiment("dctcp-small-k", "DCTCP", "Throughput at K = 1 % of the BDP",
            SEED + " §2.2 (Fig 3.8/3.9)",
            "2 long-lived flows into one 10G port, RTT ~480 us (BDP ~400 packets), K = 4 packets, "
            "g = 0.05, 400 ms; utilisation from the bytes acked between 150 and 400 ms.",
            "DCTCP keeps >= 94 % of the link at K = 1 % of the BDP; ECN* (TCP halving on marks) "
            "falls toward 75 %",
            "DCTCP >= 0.94; ECN* in (0.70, 0.85)")
def small_k(ctx):
    d, e = _utilisation(ctx, "dctcp"), _utilisation(ctx, "ecn")
    ok = d >= 0.94 and 0.70 < e < 0.85

    def plot(fig):
        plots.bars(fig, ["DCTCP", "ECN*"], [d, e], [0.94, 0.75], "utilisation",
                   "K = 4 packets (1 % of BDP): published bound / limit in red")
    return Outcome(f"DCTCP {d:.3f}, ECN* {e:.3f} of the link", {"dctcp": num(d), "ecn": num(e)},
                   ok, plot)


def _queue_run(ctx, cc):
    ecn = "{mode: step, k: 20pkt}" if cc == "dctcp" else "{mode: off}"
    r = ctx.run(f"""
duration: 1500ms
topology: {{kind: incast, host_rate: 1Gbps, link_delay: 24us, incast: {{hosts: 3}}}}
switch: {{queues: 1, buffer: 4MiB, port_cap: 0B, mmu: {{queue_alpha: 0.17}}, ecn: {ecn}}}
tcp: {{cc: {cc}}}
traffic: {{generate: [{{pattern: many_to_one, transport: tcp}}]}}
results: {{sample_interval: 100us}}
""", f"queue_{cc}")
    ts = r.timeseries
    q = ts[ts.time_us >= 100e3]["tor.p2_frame_bytes"] / FRAME
    return r, ts, q


DT_LIMIT = 0.17 * 4 * 1048576.0 / 1.17 / (8 * 208)  # alpha B / (1 + alpha) in 8-cell frames
QUEUE_SETUP = ("2 long-lived flows into one 1G port of a 4 MiB shared buffer with a dynamic "
               "threshold (alpha 0.17: one queue may take ~600 KB), 1.5 s; DCTCP with K = 20 "
               "packets, TCP NewReno on drop-tail (the testbed's baseline); queue after 100 ms.")


@experiment("dctcp-queue", "DCTCP", "Queue stays near K + N where TCP fills the buffer",
            SEED + " §3.2 (Fig 1.2, 2.14a)", QUEUE_SETUP,
            "DCTCP queue stable around K + N = 22 packets; TCP's over 10x larger",
            "DCTCP mean in [15, 24], max <= 24 packets, no drop, goodput > 90 %; TCP mean > 220",
            quick=True)
def queue(ctx):
    rd, tsd, qd = _queue_run(ctx, "dctcp")
    rt, tst, qt = _queue_run(ctx, "newreno")
    v = {"dctcp_mean": num(qd.mean()), "dctcp_max": num(qd.max()), "tcp_mean": num(qt.mean()),
         "dctcp_dropped": rd.summary["frames"]["dropped"], "dctcp_goodput_bps": rd.summary["goodput_bps"]}
    ok = (15 <= v["dctcp_mean"] <= 24 and v["dctcp_max"] <= 24 and v["dctcp_dropped"] == 0
          and v["dctcp_goodput_bps"] > 0.9 * 1e9 * 1460 / WIRE and v["tcp_mean"] > 10 * 22)

    def plot(fig):
        w = lambda ts: ts[(ts.time_us >= 1e6) & (ts.time_us < 1.2e6)]  # noqa: E731
        ax = plots.series(fig, w(tsd).time_us / 1e3, w(tsd)["tor.p2_frame_bytes"] / FRAME,
                          "time (ms)", "queue (packets)", "1G, 2 flows, 4 MiB dynamic buffer",
                          [(22, "K + N = 22 (published DCTCP level)")], label="FabricSim DCTCP")
        ax.plot(w(tst).time_us / 1e3, w(tst)["tor.p2_frame_bytes"] / FRAME, color="orange", lw=0.7,
                label="FabricSim TCP")
        ax.set_yscale("log")
        ax.legend(fontsize=8)
    return Outcome(f"DCTCP mean {v['dctcp_mean']:.1f}, max {v['dctcp_max']:.1f} packets; "
                   f"TCP mean {v['tcp_mean']:.0f} packets", v, ok, plot)


@experiment("mmu-dt-tcp", "MMU dynamic threshold", "TCP fills the dynamic-threshold limit",
            SEED + " §3.2 (Fig 1.2); facts-mmu-credit-workload.md §1.4 (dynamic threshold)", QUEUE_SETUP,
            "a queue under dynamic thresholds is capped at alpha B / (1 + alpha) "
            f"(= {DT_LIMIT:.0f} packets of 8 cells here), where TCP is tail-dropped",
            "TCP peak >= 95 % of the limit, drops counted as egress_queue_limit", quick=True)
def dt_tcp(ctx):
    rt, tst, qt = _queue_run(ctx, "newreno")
    drops = rt.summary["frames"]["dropped_by_cause"].get("egress_queue_limit", 0)
    v = {"tcp_max": num(qt.max()), "limit": DT_LIMIT, "egress_queue_limit_drops": drops,
         "goodput_bps": rt.summary["goodput_bps"]}
    ok = v["tcp_max"] >= 0.95 * DT_LIMIT and drops > 0 and v["goodput_bps"] > 0.9 * 1e9 * 1460 / WIRE

    def plot(fig):
        w = tst[(tst.time_us >= 1e6) & (tst.time_us < 1.5e6)]
        plots.series(fig, w.time_us / 1e3, w["tor.p2_frame_bytes"] / FRAME, "time (ms)",
                     "queue (packets)", "TCP NewReno, dynamic threshold alpha 0.17, 4 MiB",
                     [(DT_LIMIT, "alpha B / (1 + alpha)")])
    return Outcome(f"TCP peak {v['tcp_max']:.0f} packets ({v['tcp_max'] / DT_LIMIT:.1%} of the "
                   f"limit), {drops} egress_queue_limit drops", v, ok, plot)


@experiment("dctcp-convergence", "DCTCP", "A joining flow converges to its fair share",
            SEED + " §2.3 (Fig 3.11)",
            "10G, link delay 50 us, K = 35, g = 1/sqrt(W_max); flow 2 joins at 150 ms with cwnd 1 "
            "and alpha 1; converged when both windows are within 10 % of the fair share (the mean "
            "window over the last 100 ms).",
            "55 ms until both windows are within 10 % of the fair share",
            "0.5x to 2x of 55 ms (27.5-110 ms)")
def convergence(ctx):
    r = ctx.run("""
duration: 500ms
topology: {kind: incast, host_rate: 10Gbps, link_delay: 50us, incast: {hosts: 3}}
switch: {queues: 1, ecn: {mode: step, k: 35pkt}}
tcp: {cc: dctcp, ack_every: 1, initial_window: 1, dctcp: {g: 0.0707, initial_alpha: 1}}
traffic:
  flows:
    - {src: h0, dst: h2, transport: tcp, trace: true}
    - {src: h1, dst: h2, transport: tcp, trace: true, start: 150ms}
results: {sample_interval: 0s}
""", "convergence")
    w = [r.trace(f) for f in (0, 1)]
    fair = np.concatenate([x[x.time_us >= 400e3].cwnd_bytes.to_numpy() for x in w]).mean()
    grid = np.arange(150e3, 500e3, 100)

    def at(x, t):
        i = np.searchsorted(x.time_us.to_numpy(), t, side="right") - 1
        return np.where(i >= 0, x.cwnd_bytes.to_numpy()[np.maximum(i, 0)], 0)
    a, b = at(w[0], grid), at(w[1], grid)
    inside = (np.abs(a - fair) <= 0.1 * fair) & (np.abs(b - fair) <= 0.1 * fair)
    conv_ms = float((grid[inside.argmax()] - 150e3) / 1e3) if inside.any() else None
    ok = conv_ms is not None and 27.5 <= conv_ms <= 110

    def plot(fig):
        ax = fig.add_subplot(111)
        for x, lab in zip(w, ("flow 1", "flow 2 (joins at 150 ms)")):
            ax.plot(x.time_us / 1e3, x.cwnd_bytes / 1460, lw=0.7, label=lab)
        ax.axhline(fair / 1460, color="gray", ls=":", label="fair share")
        ax.axvline(150 + 55, color=plots.PUB, ls="--", label="published: converged at +55 ms")
        if conv_ms is not None:
            ax.axvline(150 + conv_ms, color=plots.SIM, ls="--", label=f"FabricSim: +{conv_ms:.1f} ms")
        ax.set_xlim(100, 300)
        ax.set_xlabel("time (ms)")
        ax.set_ylabel("cwnd (packets)")
        ax.legend(fontsize=8)
    return Outcome(f"converged {conv_ms} ms after the join (fair window {fair / 1460:.0f} packets)",
                   {"converged_ms": conv_ms, "fair_window_bytes": num(fair)}, ok, plot)


INCAST = [("dctcp", 10, "== 0, QCT p50 8.4-9.5 ms"), ("dctcp", 35, "<= 0.05"), ("dctcp", 40, ">= 0.5"),
          ("newreno", 10, "<= 0.1"), ("newreno", 16, ">= 0.5")]


@experiment("dctcp-incast", "DCTCP", "Incast: where the timeouts start",
            SEED + " §3.2 (Fig 2.18)",
            "platforms/scenarios/incast_dctcp.yaml: 1G rack, an aggregator asks N workers for "
            "1 MB / N, 100 queries, 20 ms think time, static 100-packet port buffer, RTO_min 10 ms; "
            "DCTCP K = 20, TCP NewReno on drop-tail; 10 s.",
            "DCTCP has no timeouts until N ~ 35 (QCT ~8 ms), TCP from N ~ 10",
            "share of queries with a timeout: " + "; ".join(f"{cc} N={n} {t}" for cc, n, t in INCAST))
def incast(ctx):
    import fabricsim
    path = fabricsim.scenarios.path("incast_dctcp")
    res = {}
    for cc, n, _ in INCAST:
        o = {"traffic.incast[0].workers": n, "duration": "10s"}
        if cc != "dctcp":
            o.update({"tcp.cc": cc, "switch.ecn.mode": "off"})
        g = ctx.run(path, f"incast_{cc}_{n}", overrides=o).summary["incast"][0]
        res[f"{cc}_{n}"] = {"timeout_share": g["queries_with_timeouts"] / g["queries_completed"],
                            "completed": g["queries_completed"], "qct_p50_ms": g["qct_us"]["p50"] / 1e3}
    t = {k: x["timeout_share"] for k, x in res.items()}
    ok = (all(x["completed"] == 100 for x in res.values()) and t["dctcp_10"] == 0
          and 8.4 <= res["dctcp_10"]["qct_p50_ms"] <= 9.5 and t["dctcp_35"] <= 0.05
          and t["dctcp_40"] >= 0.5 and t["newreno_10"] <= 0.1 and t["newreno_16"] >= 0.5)

    def plot(fig):
        # The seed gives knees, not shares: the tolerance of each point is drawn as a band.
        ax = fig.add_subplot(111)
        bands = {"dctcp_10": (0, 0), "dctcp_35": (0, 0.05), "dctcp_40": (0.5, 1), "newreno_10": (0, 0.1),
                 "newreno_16": (0.5, 1)}
        for i, (k, x) in enumerate(t.items()):
            lo, hi = bands[k]
            ax.bar(i, x, 0.5, color=plots.SIM if k.startswith("dctcp") else "orange")
            ax.plot([i - 0.35, i + 0.35], [lo, lo], color=plots.PUB, lw=2)
            ax.plot([i - 0.35, i + 0.35], [hi, hi], color=plots.PUB, lw=2)
        ax.set_xticks(range(len(t)))
        ax.set_xticklabels([k.replace("newreno", "TCP").replace("dctcp", "DCTCP").replace("_", " N=") for k in t],
                           fontsize=8)
        ax.set_ylabel("queries with a timeout")
        ax.set_title("incast, static 100-packet buffer; red: accepted range (knees: DCTCP 35-40, TCP 10-16)",
                     fontsize=9)
    return Outcome("timeout share " + ", ".join(f"{k} {x:.2f}" for k, x in t.items())
                   + f"; DCTCP N=10 QCT p50 {res['dctcp_10']['qct_p50_ms']:.2f} ms", res, ok, plot)
