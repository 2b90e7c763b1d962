"""FERA, BCN and the 802.1Qau hotspot (seed-003 §1-§3, §6; facts-l2): the measures of
tests/python/test_fera.py, test_bcn.py and test_hotspot.py."""
import math

from . import plots
from .core import Outcome, experiment, num

SEED = "seed-003-jiang-fera-bcn-pause.md"
C = 10e9
Q_EQ = 16 * 1500  # bytes, the thesis' 16 packets of 1500 B


def analysis(k, sources=3, duration_ms=40, n0=1000, pcap=""):
    """A few backlogged sources into one 10G port, linear f with slope k, Q_eq 16 packets, T = 1 ms,
    N_0 large (q_0 = 0, M = 0): seed-003 §2 B's worked example."""
    flows = "\n".join(f"    - {{src: h{h}, dst: h0, process: backlogged}}" for h in range(1, sources + 1))
    return f"""
name: fera_analysis
seed: 1
duration: {duration_ms}ms
topology: {{kind: incast, host_rate: 10Gbps, link_delay: 0.5us, incast: {{hosts: {sources + 1}}}}}
switch:
  queues: 1
  fera: {{mode: analysis, k: {k}, n0: {n0}}}
nic:
  fera: {{mode: thesis, n0: {n0}}}
traffic:
  flows:
{flows}
results: {{sample_interval: 100us{pcap}}}
"""


def queue_per_interval(ts, port="tor.p0", intervals=35):
    """q_i the CP measured at its closes, i = 0 at the first close after the sources took the first
    advertised rate (the recurrence's q_0): one reading per T, mid-interval."""
    rate = ts[f"{port}.fera_rate_bps"]
    t1 = ts.time_us[rate != rate.iloc[0]].iloc[0]
    qs = []
    for i in range(intervals):
        row = ts.iloc[(ts.time_us - (t1 + (i + 0.5) * 1000)).abs().argmin()]
        qs.append(int(row[f"{port}.fera_q_bytes"]))
    return qs


def recurrence(k, steps=35):
    """Eq. (5) from q_0 = 0, in 1500-B packets."""
    alpha = C * 1e-3 / (8 * 1500)
    q, out = 0.0, []
    for _ in range(steps):
        out.append(q)
        q = (1 - alpha * k / 16) * q + alpha * k
    return out


def recurrence_entry(k):
    """The first i with q_i in [0.9, 1.1] Q_eq by eq. (5)."""
    return next(i for i, q in enumerate(recurrence(k, 1000)) if 0.9 * 16 <= q <= 1.1 * 16)


@experiment("fera-2b-convergence", "FERA/BCN", "Queue convergence with a linear f (§2 B)",
            SEED + " §2 B (eq. 5, worked example); errata 2 (§6)",
            "three backlogged sources into one 10G port, linear f with slope k, Q_eq 16 packets, T = 1 ms, "
            "N_0 = 1000, 40 ms; q_i read once per interval.",
            "iterating eq. (5) from q_0 = 0 the queue enters [0.9, 1.1] Q_eq at step 21 (k = 0.002) and 5 "
            "(k = 0.008)",
            "the packet model within +-2 intervals, then within one frame of the band; no drop, no PAUSE",
            quick=True,
            reading="the seed's closed form (eq. 6) uses n+1 where eq. (5) implies n (errata 2: 20 vs 21, 4 vs 5); "
                    "the oracle is eq. (5) iterated directly.")
def fera_2b(ctx):
    rows, ok, series = {}, True, {}
    for k, seed_n in ((0.002, 21), (0.008, 5)):
        r = ctx.run(analysis(k), f"k{k}")
        qs = queue_per_interval(r.timeseries)
        n = next((i for i, q in enumerate(qs) if 0.9 * Q_EQ <= q <= 1.1 * Q_EQ), None)
        fera = r.summary["switches"]["tor"]["ports"][0]["fera"]
        rows[str(k)] = {"entry_interval": n, "eq5_entry": recurrence_entry(k), "queue_per_interval_bytes": qs}
        series[k] = qs
        ok = ok and (n is not None and abs(n - seed_n) <= 2 and recurrence_entry(k) == seed_n
                     and all(0.9 * Q_EQ - 1518 <= q <= 1.1 * Q_EQ + 1518 for q in qs[seed_n + 3:])
                     and fera["paused_intervals"] == 0 and r.summary["frames"]["dropped"] == 0)

    def plot(fig):
        ax = fig.add_subplot(111)
        for (k, qs), c in zip(series.items(), (plots.SIM, "orange")):
            ax.plot(range(len(qs)), [q / 1500 for q in qs], "o-", ms=3, color=c, label=f"FabricSim k = {k}")
            ax.plot(range(len(qs)), recurrence(k, len(qs)), "--", color=c, alpha=0.6, label=f"eq. (5) k = {k}")
        ax.axhspan(0.9 * 16, 1.1 * 16, color="gray", alpha=0.2, label="[0.9, 1.1] Q_eq")
        ax.set_xlabel("interval i")
        ax.set_ylabel("q_i (packets)")
        ax.legend(fontsize=7)
    return Outcome("; ".join(f"k = {k}: enters the band at interval {x['entry_interval']} (eq. 5: {x['eq5_entry']})"
                             for k, x in rows.items()), rows, ok, plot)


@experiment("fera-2a-max-min", "FERA/BCN", "Max-min rate one interval after the first tags (§2 A)",
            SEED + " §2 A",
            "four backlogged sources into one 10G port (linear f, k = 0.002), 6 ms; the sources' regulator rates.",
            "r_{i+1} = f(q_i) C / N: one interval after the first tags return, every source holds C/N "
            "(f(0) = 1.002)",
            "every source within 1 % of C/4 from 0.1 to 3 ms after the first close; before it, C/N_0")
def fera_2a(ctx):
    ts = ctx.run(analysis(0.002, sources=4, duration_ms=6), "maxmin").timeseries
    rate = ts["tor.p0.fera_rate_bps"]
    t1 = ts.time_us[rate != rate.iloc[0]].iloc[0]
    early = ts[(ts.time_us > 0) & (ts.time_us < t1 - 100)]
    later = ts[(ts.time_us >= t1 + 100) & (ts.time_us <= t1 + 3000)]
    dev = max(float((later[f"h{h}_nic.fera_rate_min_bps"] / (C / 4) - 1).abs().max()) for h in range(1, 5))
    ok = bool((early["h1_nic.fera_rate_min_bps"] == C / 1000).all()) and dev < 0.01

    def plot(fig):
        w = ts[ts.time_us <= t1 + 3000]
        ax = plots.series(fig, w.time_us / 1e3, w["h1_nic.fera_rate_min_bps"] / 1e9, "time (ms)", "rate (Gbps)",
                          "FERA §2 A: a source's rate", [(C / 4e9, "C/N = 2.5 Gbps")], label="FabricSim h1")
        for h in range(2, 5):
            ax.plot(w.time_us / 1e3, w[f"h{h}_nic.fera_rate_min_bps"] / 1e9, lw=0.7, label=f"h{h}")
        ax.legend(fontsize=7)
    return Outcome(f"first close at {t1 / 1e3:.1f} ms; afterwards every source within {dev:.2%} of C/4",
                   {"first_close_us": num(t1), "max_rel_deviation": dev}, ok, plot)


def heavy(gamma=None, control=None, stages=1):
    """§3.1/§3.2: 100 Bernoulli flows of 200 Mb/s average into one 10G port (2x overload), the thesis
    preset, PAUSE ON/OFF 90/80 packets, L = 200 packets, 50 ms (tests/python/test_fera.py)."""
    fera = "mode: thesis"
    if gamma is not None:
        fera += f", gamma: {gamma}"
    if control:
        fera += f", control: {control}, k: 0.002, stages: {stages}"
    flows = "\n".join(f"    - {{src: h{h}, dst: h0, rate: 200Mbps, frames: 1000000, process: bernoulli}}"
                      for h in range(1, 11) for _ in range(10))
    return f"""
name: fera_heavy
seed: 1
duration: 50ms
topology: {{kind: incast, host_rate: 10Gbps, link_delay: 0.5us, incast: {{hosts: 11}}}}
switch:
  queues: 1
  port_cap: 200pkt
  flow_control: {{generate: queue_pause, q_on: 90pkt, q_off: 80pkt}}
  fera: {{{fera}}}
nic:
  tx_queue: 100000
  flow_control: {{honour_pause: true}}
  fera: {{mode: thesis}}
traffic:
  flows:
{flows}
results: {{sample_interval: 1ms}}
"""


def throughput_mbps(s):
    return s["nics"]["h0_nic"]["rx_bytes"] * 8 / s["sim_time_s"] / 1e6


TABLE_7_1 = {0.98: 9154, 0.99: 9329, 1.0: 9154}
T71_SETUP = ("100 Bernoulli flows of 200 Mb/s average (10 hosts) into one 10G port (2x overload), the thesis "
             "preset (hyperbolic f, Q_eq 16, Q_sc 80, T 1 ms, N_0 20), PAUSE ON/OFF 90/80 packets, L = 200 "
             "packets, 50 ms, seed 1; gamma 0.98 / 0.99 / 1.00.")


def gamma_sweep(ctx):
    return {g: ctx.run(heavy(gamma=g), f"g{g}") for g in TABLE_7_1}


@experiment("fera-table-7-1", "FERA/BCN", "Table 7.1: throughput level under 2x overload",
            SEED + " §3.1, §7.4 (Table 7.1)", T71_SETUP,
            "9154 / 9329 / 9154 Mb/s for gamma 0.98 / 0.99 / 1.00 (6-9 % below the link: the hyperbolic loop "
            "swings between an empty queue and PAUSE)",
            "each run within 9.0-9.5 Gb/s, lossless, PAUSE in some but under half of the intervals, sources "
            "near C/100; the mean queue falls with gamma (what gamma is for, §7.4)",
            reading="seed-003 errata 4: the table's 0.98 and 1.00 rows are the identical 9154.14 and 9329.22 "
                    "reappears as Table 7.2's single stage; the model follows §7.4's mechanism, not the table's "
                    "ordering (docs/models/fera_bcn.md).")
def table_7_1(ctx):
    runs = gamma_sweep(ctx)
    tp = {g: throughput_mbps(r.summary) for g, r in runs.items()}
    mq, ok = {}, True
    for g, r in runs.items():
        s = r.summary
        fera = s["switches"]["tor"]["ports"][0]["fera"]
        rates = [f["rate_bps"] for h in range(1, 11) for f in s["nics"][f"h{h}_nic"]["fera"]["per_flow"]]
        ts = r.timeseries
        mq[g] = float(ts["tor.p0_frame_bytes"][ts.time_us >= 10000].mean())
        ok = ok and (9000 <= tp[g] <= 9500 and s["frames"]["dropped"] == 0
                     and 0 < fera["paused_intervals"] < fera["intervals"] / 2 and 50e6 <= sum(rates) / 100 <= 200e6)
    ok = ok and mq[0.98] < mq[0.99] < mq[1.0]

    def plot(fig):
        plots.bars(fig, [f"gamma {g}" for g in tp], list(tp.values()), list(TABLE_7_1.values()),
                   "throughput (Mb/s)", "Table 7.1 side by side").set_ylim(8500, 10000)
    return Outcome(" / ".join(f"{x:.0f}" for x in tp.values()) + " Mb/s; mean queue "
                   + " / ".join(f"{x / 1500:.1f}" for x in mq.values()) + " packets",
                   {"throughput_mbps": {str(g): x for g, x in tp.items()},
                    "mean_queue_bytes": {str(g): x for g, x in mq.items()}},
                   ok, plot)


@experiment("fera-table-7-1-optimum", "FERA/BCN", "Table 7.1: the optimum at gamma = 0.99",
            SEED + " §7.4 (Table 7.1)", T71_SETUP,
            "gamma = 0.99 gives the highest throughput (9329 against 9154 Mb/s)",
            "throughput(0.99) above both 0.98 and 1.00",
            deviation="not reproduced: throughput rises with gamma by under 1.2 % (within the loop's run-to-run "
                      "variation; over seeds 1-8 gamma = 1 is best by 1.6 %), and the thesis' table is itself "
                      "suspect (errata 4). tests/python/test_fera.py keeps the ordering as a strict xfail; "
                      "docs/models/fera_bcn.md, Table 7.1.")
def table_7_1_optimum(ctx):
    tp = {g: throughput_mbps(r.summary) for g, r in gamma_sweep(ctx).items()}
    ok = tp[0.99] > tp[0.98] and tp[0.99] > tp[1.0]

    def plot(fig):
        ax = fig.add_subplot(111)
        ax.plot(list(tp), list(tp.values()), "o-", color=plots.SIM, label="FabricSim")
        ax.plot(list(TABLE_7_1), list(TABLE_7_1.values()), "s--", color=plots.PUB, label="Table 7.1")
        ax.set_xlabel("gamma")
        ax.set_ylabel("throughput (Mb/s)")
        ax.legend(fontsize=8)
    return Outcome("throughput " + " / ".join(f"{x:.0f}" for x in tp.values()) + " Mb/s: highest at gamma "
                   f"{max(tp, key=tp.get)}", {"throughput_mbps": {str(g): x for g, x in tp.items()}}, ok, plot)


@experiment("fera-table-7-2", "FERA/BCN", "Table 7.2: multistage control",
            SEED + " §3.2, §7 (Table 7.2)", T71_SETUP.replace("gamma 0.98 / 0.99 / 1.00", "gamma 0.99, single "
                                                              "stage (hyperbolic) and multistage f with n = 2, 3"),
            "single stage 9329, multistage n = 2 9446, n = 3 9815 Mb/s",
            "n = 3 >= n = 2 (within 0.2 % of the link) and n = 2 >= single + 3 % of the link; lossless",
            reading="the multistage runs spend most intervals in PAUSE (docs/models/fera_bcn.md, Table 7.2): the "
                    "ordering holds, the mechanism behind it partly differs.")
def table_7_2(ctx):
    single = throughput_mbps(ctx.run(heavy(gamma=0.99), "single").summary)
    tp, drops = {}, 0
    for n in (2, 3):
        s = ctx.run(heavy(gamma=0.99, control="multistage", stages=n), f"m{n}").summary
        drops += s["frames"]["dropped"]
        tp[n] = throughput_mbps(s)
    ok = drops == 0 and tp[3] >= tp[2] - 0.002 * 1e4 and tp[2] >= single + 0.03 * 1e4

    def plot(fig):
        plots.bars(fig, ["single", "multistage n=2", "multistage n=3"], [single, tp[2], tp[3]], [9329, 9446, 9815],
                   "throughput (Mb/s)", "Table 7.2 side by side").set_ylim(8500, 10000)
    return Outcome(f"single {single:.0f}, n = 2 {tp[2]:.0f}, n = 3 {tp[3]:.0f} Mb/s",
                   {"single_mbps": single, "n2_mbps": tp[2], "n3_mbps": tp[3]}, ok, plot)


# ------------------------------------------------------------------ BCN §2 E

G_D = 2.6e-4
FAIR = C / 4
R0 = 1.1e9


def steps_13(e, r_star=FAIR, r0=R0, beta=0.9):
    """Formula (13): steps for r_i to reach beta x r* from r0 at a per-step factor (1 - e)."""
    return (math.log((1 - beta) * r_star) - math.log(r_star - r0)) / math.log(1 - e)


@experiment("bcn-2e-join", "FERA/BCN", "BCN: a joining flow needs thousands of messages",
            SEED + " §1.10, §2 E (formula 13); errata 1 and 6",
            "platforms/scenarios/bcn_join.yaml: three backlogged flows keep a 10G port slightly congested, a "
            "fourth joins at 10 ms at 1.1 Gb/s; the BCN messages it receives until its rate reaches 90 % of C/4.",
            "4416 messages (0.53 s) at |e| = 3 by formula (13)",
            "more than 2000 messages, within 0.9x-1.1x of the band formula (13) gives for the simulated "
            "feedback (E|e| E[e-dagger] G_d to E[|e| e-dagger] G_d)",
            reading="errata 1: \"T' ~ 1.2 ms\" is read as 0.12 ms (100 x 1500 B at 10G), the value that gives the "
                    "thesis' 0.53 s; errata 6: the inequality before (13) is inverted, so the numeric formula "
                    "is the oracle, evaluated with the |e| the switch actually sent (docs/models/bcn.md).")
def bcn_join(ctx):
    import fabricsim
    r = ctx.run(fabricsim.scenarios.path("bcn_join"), "join")
    s, ts = r.summary, r.timeseries
    (cp,) = [c for c in s["switches"]["tor"]["ports"][4]["bcn"] if c["frames"]]
    p_neg = cp["negative_messages"] / (cp["negative_messages"] + cp["positive_messages"])
    fast = steps_13(cp["fb_abs_mean"] * p_neg * G_D)
    slow = steps_13(cp["fb_negative_abs_mean"] * p_neg * G_D)
    after = ts[ts.time_us > 10_000]
    reached = after[after["h3_nic.bcn_rate_mean_bps"] >= 0.9 * FAIR]
    n = int(reached.iloc[0]["h3_nic.bcn_messages"]) if len(reached) else None
    t_s = float(reached.iloc[0].time_us / 1e6 - 0.01) if len(reached) else None
    ok = n is not None and n > 2000 and 0.9 * fast <= n <= 1.1 * slow

    def plot(fig):
        ax = fig.add_subplot(111)
        ax.plot(after["h3_nic.bcn_messages"], after["h3_nic.bcn_rate_mean_bps"] / 1e9, color=plots.SIM,
                lw=0.8, label="FabricSim: newcomer's rate")
        ax.axhline(0.9 * FAIR / 1e9, color="gray", ls=":", label="90 % of C/4")
        ax.axvline(4416, color=plots.PUB, ls="--", label="thesis: 4416 messages (|e| = 3)")
        ax.axvspan(fast, slow, color=plots.SIM, alpha=0.15, label="formula (13), simulated |e|")
        ax.set_xlabel("BCN messages received")
        ax.set_ylabel("rate (Gbps)")
        ax.legend(fontsize=7)
    return Outcome(f"{n} messages ({t_s:.2f} s); formula (13) with the simulated |e|: {fast:.0f}-{slow:.0f}",
                   {"messages": n, "seconds": t_s, "formula13_fast": fast, "formula13_slow": slow}, ok, plot)


# ------------------------------------------------------------------ 802.1Qau hotspot

STEP_US = 20000


def pause_events(ts, port="tor.p1", merge_us=200):
    """(start, end) in us of the PAUSE events the switch held on an input port: runs of samples with
    XOFF on, a gap of up to `merge_us` inside one event."""
    events = []
    for t in ts.time_us[ts[f"{port}_xoff"] != 0].tolist():
        if events and t - events[-1][1] <= merge_us:
            events[-1][1] = t
        else:
            events.append([t, t])
    return [(a, b) for a, b in events]


@experiment("hotspot-8021qau", "FERA/BCN", "802.1Qau output-generated hotspot under FERA",
            SEED + " §3.8 (Jiang §8.7)",
            "platforms/scenarios/hotspot_8021qau.yaml: ten 10G stations, 90 Bernoulli flows of 0.945 Gb/s; at 20 ms "
            "the link into h0 steps from 10G to 1G; 802.3x PAUSE as the backstop; FERA (thesis preset).",
            "one PAUSE event of about 1 ms; the nine flows into h0 at 1/9 Gb/s; the others unaffected; no loss",
            "first event starts within 0.3 ms of the step and lasts <= 2 ms; no PAUSE 18 ms after the step; the nine "
            "regulators within 10 % of 1/9 Gb/s; others > 97.5 % of 0.945 Gb/s on average; no drop", quick=True)
def hotspot(ctx):
    import fabricsim
    r = ctx.run(fabricsim.scenarios.path("hotspot_8021qau"), "fera")
    s, ts, flows = r.summary, r.timeseries, r.flows
    events = pause_events(ts)
    to_h0 = set(flows.id[flows.dst == "h0"])
    rates = [f["rate_bps"] for h in range(1, 10) for f in s["nics"][f"h{h}_nic"]["fera"]["per_flow"]
             if f["flow"] in to_h0]
    others = flows[flows.dst != "h0"].throughput_bps
    first = events[0] if events else (None, None)
    v = {"pause_events": len(events), "first_event_start_us": num(first[0]),
         "first_event_us": num(first[1] - first[0]) if events else None,
         "last_event_end_us": num(events[-1][1]) if events else None, "rates_to_h0_bps": rates,
         "others_mean_bps": num(others.mean()), "dropped": s["frames"]["dropped"]}
    ok = (bool(events) and all(a >= STEP_US for a, _ in events) and first[0] - STEP_US <= 300
          and first[1] - first[0] <= 2000 and events[-1][1] <= STEP_US + 18000 and len(rates) == 9
          and all(abs(x / (1e9 / 9) - 1) < 0.1 for x in rates) and others.mean() > 0.975 * 0.945e9
          and s["frames"]["dropped"] == 0)

    def plot(fig):
        w = ts[(ts.time_us >= 15000) & (ts.time_us <= 45000)]
        ax = plots.series(fig, w.time_us / 1e3, w["tor.p0_frame_bytes"] / 1500, "time (ms)", "queue to h0 (packets)",
                          "hotspot: 10G -> 1G at 20 ms (shaded: PAUSE; published: one ~1 ms event)",
                          [(16, "Q_eq = 16")])
        for a, b in events:
            ax.axvspan(a / 1e3, max(b, a + 50) / 1e3, color="orange", alpha=0.3)
    return Outcome(f"{len(events)} PAUSE events, the first {v['first_event_us'] / 1e3:.2f} ms long from "
                   f"{(first[0] - STEP_US) / 1e3:.2f} ms after the step; flows into h0 at "
                   f"{min(rates) / 1e6:.0f}-{max(rates) / 1e6:.0f} Mb/s; others {v['others_mean_bps'] / 1e9:.3f} Gb/s",
                   v, ok, plot)


BCN_FIXED = """
name: bcn_fixed_point
seed: 2
duration: 1500ms
topology: {kind: incast, host_rate: 10Gbps, link_delay: 1us, incast: {hosts: 6}}
switch: {buffer: 4MB, bcn: {mode: thesis}}
nic: {bcn: {mode: thesis, initial_rate: 2.04Gbps}}
traffic:
  flows:
    - {src: h0, dst: h5, process: backlogged}
    - {src: h1, dst: h5, process: backlogged}
    - {src: h2, dst: h5, process: backlogged}
    - {src: h3, dst: h5, process: backlogged}
    - {src: h4, dst: h5, process: backlogged}
results: {sample_interval: 1ms}
"""
G_I, R_U = 0.53, 1e6


@experiment("bcn-fixed-point", "FERA/BCN", "BCN: the fixed point of eq. (10)",
            SEED + " §2 E (eq. 10); facts-l2-congestion-management.md §5",
            "five backlogged flows into one 10G port start at the thesis' r* = G_i R_u / G_d = 2.04 Gb/s (slightly "
            "congested), BCN thesis preset, 1.5 s; r* from eq. (10) with the feedback magnitudes the CP sent.",
            "r* = G_i R_u / G_d = 2.04 Gb/s with E[e-dagger] = 1/2 and equal magnitudes; each flow settles at its "
            "share",
            "r* from (10) with the simulated feedback within 10 % of the 2 Gb/s share; the flows' rates over the "
            "last 0.5 s within 5 % of it; E[e-dagger] in (0.5, 0.65)",
            reading="seed-003 errata 10: G_i, R_u and the feedback definition are deferred to other papers; the "
                    "model takes them from facts-l2 §5 (G_i 0.53, G_d 2.6e-4, R_u 1 Mb/s; docs/models/bcn.md), and "
                    "eq. (10) is evaluated with the negative and positive magnitudes the CP actually sent (here "
                    "negative feedback is smaller than positive, so E[e-dagger] settles above 1/2).")
def bcn_fixed_point(ctx):
    r = ctx.run(BCN_FIXED, "fixed")
    s, ts = r.summary, r.timeseries
    (cp,) = [c for c in s["switches"]["tor"]["ports"][5]["bcn"] if c["frames"]]
    neg, pos = cp["negative_messages"], cp["positive_messages"]
    neg_sum = cp["fb_negative_abs_mean"] * neg
    pos_sum = cp["fb_abs_mean"] * (neg + pos) - neg_sum
    r_star = G_I * R_U * pos_sum / (G_D * neg_sum)
    rates = [float(ts[f"h{h}_nic.bcn_rate_mean_bps"].iloc[-500:].mean()) for h in range(5)]
    ok = (neg > 1000 and pos > 1000 and 0.5 < neg / (neg + pos) < 0.65 and abs(r_star - 2e9) < 0.1 * 2e9
          and all(abs(x - 2e9) < 0.05 * 2e9 for x in rates))

    def plot(fig):
        ax = fig.add_subplot(111)
        for h in range(5):
            ax.plot(ts.time_us / 1e6, ts[f"h{h}_nic.bcn_rate_mean_bps"] / 1e9, lw=0.6, label=f"h{h}")
        ax.axhline(2.04, color=plots.PUB, ls="--", label="thesis r* = 2.04 Gb/s")
        ax.axhline(r_star / 1e9, color=plots.SIM, ls=":", label=f"eq. (10), simulated |e|: {r_star / 1e9:.2f}")
        ax.set_xlabel("time (s)")
        ax.set_ylabel("rate (Gb/s)")
        ax.legend(fontsize=7, ncol=2)
    return Outcome(f"E[e-dagger] {neg / (neg + pos):.3f}; r* from (10) {r_star / 1e9:.3f} Gb/s; rates over the last "
                   f"0.5 s {min(rates) / 1e9:.3f}-{max(rates) / 1e9:.3f} Gb/s",
                   {"p_negative": neg / (neg + pos), "r_star_bps": r_star, "rates_bps": rates}, ok, plot)

# ---------------------------------------------------------------- multi-bottleneck topologies

# §3.5: a parking lot of two 10G chain links (the parking_lot generator); one long flow and one
# cross flow per link, backlogged sources under FERA's thesis preset.
PARKING_LOT = """
name: pl_fera
seed: 1
duration: 60ms
topology: {kind: parking_lot, host_rate: 10Gbps, link_delay: 0.5us,
           parking_lot: {switches: 3, hosts_per_switch: 2}}
switch:
  queues: 1
  port_cap: 100pkt
  flow_control: {generate: queue_pause, q_on: 90pkt, q_off: 80pkt}
  fera: {mode: thesis}
nic:
  tx_queue: 100000
  flow_control: {honour_pause: true}
  fera: {mode: thesis}
traffic:
  flows:
    - {src: s0_h0, dst: s2_h0, process: backlogged}
    - {src: s0_h1, dst: s1_h0, process: backlogged}
    - {src: s1_h1, dst: s2_h1, process: backlogged}
results: {sample_interval: 100us, per_queue_series: false}
"""

# §3.7: ST1, ST2 -> DT1 and ST3, ST4 -> DT2 over a shared 10G link; DT2's link is 1G.
ASYMMETRIC = """
name: asym_fera
seed: 1
duration: 60ms
topology:
  kind: custom
  link_delay: 0.5us
  switches: [{name: es1, ports: 5}, {name: es2, ports: 3}]
  hosts: [{name: st1}, {name: st2}, {name: st3}, {name: st4}, {name: dt1}, {name: dt2}]
  links:
    - {a: st1, b: "es1:0"}
    - {a: st2, b: "es1:1"}
    - {a: st3, b: "es1:2"}
    - {a: st4, b: "es1:3"}
    - {a: "es1:4", b: "es2:0"}
    - {a: "es2:1", b: dt1}
    - {a: "es2:2", b: dt2, rate: 1Gbps}
switch:
  queues: 1
  port_cap: 100pkt
  flow_control: {generate: queue_pause, q_on: 90pkt, q_off: 80pkt}
  fera: {mode: thesis}
nic:
  tx_queue: 100000
  flow_control: {honour_pause: true}
  fera: {mode: thesis}
traffic:
  flows:
    - {src: st1, dst: dt1, process: backlogged}
    - {src: st2, dst: dt1, process: backlogged}
    - {src: st3, dst: dt2, process: backlogged}
    - {src: st4, dst: dt2, process: backlogged}
results: {sample_interval: 100us, per_queue_series: false}
"""


def fera_regulators(s, hosts):
    """The FERA regulator rate of each flow of `hosts`, in Gb/s."""
    return [f["rate_bps"] / 1e9 for h in hosts for f in s["nics"][h + "_nic"]["fera"]["per_flow"]]


@experiment("fera-parking-lot", "FERA/BCN", "Parking lot: max-min with short and long loops",
            SEED + " §3.5 (§8.4, Fig 8.5)",
            "parking_lot generator: three switches, two 10G chain links with one-hop delays of "
            "0.5 us and 50 us; a long flow over both links and one cross flow per link, backlogged, "
            "FERA thesis preset with PAUSE 90/80 as backstop; 60 ms.",
            "FERA reaches max-min fairness and stays stable with both delays (no numbers given): "
            "max-min is C/2 = 5 Gb/s for every flow",
            "every regulator within 1 % of 5 Gb/s, the delivered rates within 0.1 Gb/s of each "
            "other, no drops")
def fera_parking_lot(ctx):
    v, ok = {}, True
    for d in ("0.5us", "50us"):
        s = ctx.run(PARKING_LOT, "pl_" + d, overrides={"topology.parking_lot.chain_delay": d}).summary
        reg = fera_regulators(s, ["s0_h0", "s0_h1", "s1_h1"])
        got = [f["delivered_bytes"] * 8 / s["sim_time_s"] / 1e9 for f in s["flows"]]
        v[d] = {"regulators_gbps": reg, "delivered_gbps": got, "dropped": s["frames"]["dropped"]}
        ok = ok and all(abs(r / 5 - 1) <= 0.01 for r in reg) and max(got) - min(got) < 0.1 \
            and s["frames"]["dropped"] == 0

    def plot(fig):
        plots.bars(fig, ["long 0.5us", "cross 1", "cross 2", "long 50us", "cross 1 ", "cross 2 "],
                   v["0.5us"]["regulators_gbps"] + v["50us"]["regulators_gbps"], [5.0] * 6,
                   "regulator rate (Gb/s)", "Parking lot (max-min: C/2 each)")
    return Outcome("regulators " + "; ".join(
        f"{d}: " + " / ".join(f"{r:.3f}" for r in v[d]["regulators_gbps"]) for d in v) + " Gb/s, no drops",
        {d: {k: (num(x) if not isinstance(x, list) else [num(y) for y in x]) for k, x in w.items()}
         for d, w in v.items()}, ok, plot)


@experiment("fera-asymmetric", "FERA/BCN", "Asymmetric topology, two congestion points",
            SEED + " §3.7 (§8.6, Fig 8.8/8.9)",
            "custom topology: ST1..ST4 on switch es1, a shared 10G link to es2, DT1 on 10G, DT2 on "
            "1G; ST1, ST2 -> DT1, ST3, ST4 -> DT2, backlogged, FERA thesis preset; 60 ms.",
            "two flows at about 4.5 Gb/s and two at 0.5 Gb/s, \"this is optimal\" (max-min)",
            "each regulator within 1 % of 4.5 / 4.5 / 0.5 / 0.5 Gb/s, no drops",
            reading="the thesis does not draw which links are 1G; the placement that makes its "
                    "4.5/4.5/0.5/0.5 max-min (one 1G destination link behind a shared 10G link) is "
                    "the spec's derived reading (seed-003 §3.7).")
def fera_asymmetric(ctx):
    s = ctx.run(ASYMMETRIC, "asym").summary
    reg = fera_regulators(s, ["st1", "st2", "st3", "st4"])
    want = [4.5, 4.5, 0.5, 0.5]
    ok = all(abs(r / w - 1) <= 0.01 for r, w in zip(reg, want)) and s["frames"]["dropped"] == 0

    def plot(fig):
        plots.bars(fig, ["ST1", "ST2", "ST3", "ST4"], reg, want, "regulator rate (Gb/s)",
                   "Asymmetric topology (published: 4.5 / 4.5 / 0.5 / 0.5)")
    return Outcome("regulators " + " / ".join(f"{r:.3f}" for r in reg) + " Gb/s, no drops",
                   {"regulators_gbps": [num(r) for r in reg], "dropped": s["frames"]["dropped"]}, ok, plot)
