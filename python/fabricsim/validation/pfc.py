"""PAUSE/PFC headroom (issue 13; facts-l2-congestion-management.md, seed-003 §4): the headroom
calculator's worked example and the zero-loss-iff-enough-headroom oracle of
tests/python/test_pfc_headroom_oracle.py on platforms/scenarios/headroom_incast.yaml."""
from . import plots
from .core import Outcome, experiment

MTU_CELLS = 8  # a 1518-B frame in 208-B cells
COMBOS = [("10Gbps", 2, "9Gbps"), ("10Gbps", 100, "9Gbps"), ("100Gbps", 2, "90Gbps"), ("100Gbps", 100, "90Gbps")]


def overrides(rate, cable, reverse, **extra):
    o = {"topology.host_rate": rate, "topology.cable_length": cable,
         "traffic.flows[0].rate": rate, "traffic.flows[1].rate": rate,
         "traffic.flows[2].rate": reverse, "traffic.flows[3].rate": reverse,
         "duration": "2ms" if rate == "100Gbps" else "4ms"}
    o.update(extra)
    return o


def lossless_pgs(summary):
    """(headroom_limit_cells, headroom_peak_cells) of PG 3 at each port that used it."""
    return [(g["headroom_limit_cells"], g["headroom_peak_cells"])
            for p in summary["switches"]["tor"]["ports"] for g in p["ingress_pgs"] if g["pg"] == 3]


@experiment("pfc-headroom-calculator", "PAUSE/PFC", "Headroom calculator: the worked examples",
            "facts-l2-congestion-management.md §2.4-2.5 (headroom, SONiC profiles); "
            "facts-mmu-credit-workload.md §1.6",
            "fabricsim.headroom(rate=100Gbps, cable 5 m), model method (208-B cells) and the SONiC "
            "method (96-B cells).",
            "100G, 5 m: 40187 B on the wire -> 26 frames = 208 cells = 43264 B; SONiC: xoff 72704, "
            "xon 18432, size 91136 B",
            "exact", quick=True)
def calculator(ctx):
    import fabricsim
    m = fabricsim.headroom(rate="100Gbps", cable_length=5)
    s = fabricsim.headroom("100Gbps", "5m", method="sonic", cell=96)
    v = {"wire_bytes": m["wire_bytes"], "cells": m["cells"], "bytes": m["bytes"],
         "sonic_xoff": s["xoff"], "sonic_xon": s["xon"], "sonic_size": s["size"]}
    ok = (v["wire_bytes"], v["cells"], v["bytes"]) == (40187, 208, 43264) and \
         (s["xoff"], s["xon"], s["size"]) == (72704, 18432, 91136)

    def plot(fig):
        plots.bars(fig, ["model\nwire B", "model\nheadroom B", "SONiC\nxoff", "SONiC\nxon", "SONiC\nsize"],
                   [m["wire_bytes"], m["bytes"], s["xoff"], s["xon"], s["size"]],
                   [40187, 43264, 72704, 18432, 91136], "bytes", "PFC headroom at 100G, 5 m")
    return Outcome(f"model {m['wire_bytes']} B on the wire, {m['cells']} cells = {m['bytes']} B; SONiC xoff "
                   f"{s['xoff']}, xon {s['xon']}, size {s['size']}", v, ok, plot)


def _headroom(ctx, combos, seeds):
    import fabricsim
    path = fabricsim.scenarios.path("headroom_incast")
    rows = {}
    for c in combos:
        key = f"{c[0]}-{c[1]}m"
        drops, reached, xoffs = 0, False, 0
        for seed in seeds:
            s = ctx.run(path, f"{key}_s{seed}", seed=seed, overrides=overrides(*c)).summary
            drops += s["frames"]["dropped"]
            pgs = lossless_pgs(s)
            reached = reached or any(peak == limit for limit, peak in pgs)
            xoffs += sum(p["flow_control"]["xoff_sent"][3] for p in s["switches"]["tor"]["ports"])
            limit = pgs[0][0]
        smaller = f"{(limit - MTU_CELLS) * 208}B"
        s = ctx.run(path, f"{key}_less", seed=1, overrides=overrides(
            *c, **{"switch.flow_control.headroom": "configured", "switch.mmu.pg_headroom": {3: smaller}})).summary
        rows[key] = {"limit_cells": limit, "drops_calculated": drops, "bound_reached": reached, "xoff_sent": xoffs,
                     "headroom_exhausted_one_mtu_less": s["frames"]["dropped_by_cause"]["headroom_exhausted"]}
    ok = all(r["drops_calculated"] == 0 and r["bound_reached"] and r["xoff_sent"] > 100 * len(seeds)
             and r["headroom_exhausted_one_mtu_less"] > 0 for r in rows.values())

    def plot(fig):
        ax = plots.bars(fig, list(rows), [r["headroom_exhausted_one_mtu_less"] for r in rows.values()],
                        [r["drops_calculated"] for r in rows.values()], "lossless frames dropped",
                        "blue: one MTU less headroom; red: the calculator's headroom (0 = lossless)")
        ax.legend(["one MTU less", "calculated"], fontsize=8)
    text = "; ".join(f"{k}: {r['limit_cells']} cells, {r['drops_calculated']} drops, bound "
                     f"{'reached' if r['bound_reached'] else 'not reached'}, one MTU less: "
                     f"{r['headroom_exhausted_one_mtu_less']} headroom_exhausted" for k, r in rows.items())
    return Outcome(text, rows, ok, plot)


HEADROOM = dict(
    family="PAUSE/PFC", title="Zero loss iff enough headroom",
    seed="facts-l2-congestion-management.md §2.3-2.4 (XOFF/XON, headroom)",
    setup="platforms/scenarios/headroom_incast.yaml (two senders at line rate into one lossless port, "
          "reverse traffic) at 10G/100G and 2 m/100 m cables, the calculator's headroom per port; "
          "then one MTU (8 cells) less.",
    published="the headroom bound (max frame + PFC frame + 2 x propagation + response + one lossless "
              "frame) is sufficient and tight",
    tolerance="no lossless drop over the seeds and the peak headroom use reaches the bound; one MTU "
              "less drops as headroom_exhausted")


@experiment("pfc-headroom", quick=True, **HEADROOM)
def headroom(ctx):
    return _headroom(ctx, COMBOS, [1, 2, 3])


T_P_US = 20 * 1500 * 8 / 10e9 * 1e6  # seed-003 §2 G: (L - Q_off) P_m / C


@experiment("pause-cycle", "PAUSE/PFC", "802.3x PAUSE cycle: t_P = (L - Q_off) P_m / C",
            "seed-003-jiang-fera-bcn-pause.md §1.9, §2 G (FERA thesis §7.7)",
            "platforms/scenarios/pause_cycle.yaml: two 10G senders burst 2000 frames each into one 10G port "
            "holding L = 100 packets; the switch sends PAUSE ON above Q_on = 90 and OFF below Q_off = 80 "
            "packets; the NICs honour it (Annex 31B response time); 5 ms, sampled every 1 us.",
            f"a PAUSE interval lasts up to t_P = 20 x 1500 B x 8 / 10 Gbps = {T_P_US:.0f} us; no loss",
            "mean interval (XOFF time / PAUSE frames) within 10 % of 24 us on both sender ports, > 50 cycles, "
            "every ON followed by an OFF; no drop; the queue within L")
def pause_cycle(ctx):
    import fabricsim
    r = ctx.run(fabricsim.scenarios.path("pause_cycle"), "cycle", overrides={"results.sample_interval": "1us"})
    s = r.summary
    ports, ok = {}, True
    for port in (1, 2):
        fc = s["switches"]["tor"]["ports"][port]["flow_control"]
        n = fc["xoff_sent"][0]
        ports[str(port)] = {"pauses": n, "interval_us": fc["xoff_time_us"][0] / n if n else None}
        ok = ok and n > 50 and fc["xon_sent"][0] == n and abs(ports[str(port)]["interval_us"] / T_P_US - 1) <= 0.10
    peak = s["switches"]["tor"]["ports"][0]["queue_peak_cell_bytes"]
    ok = ok and s["frames"]["dropped"] == 0 and peak <= 100 * 8 * 208
    ts = r.timeseries

    def plot(fig):
        w = ts[(ts.time_us >= 1000) & (ts.time_us <= 1300)]
        ax = plots.series(fig, w.time_us, w["tor.p0_frame_bytes"] / 1518, "time (us)", "queue (packets)",
                          f"PAUSE cycle (shaded: XOFF on port 1); published t_P = {T_P_US:.0f} us",
                          [(90, "Q_on = 90"), (80, "Q_off = 80")])
        ax.fill_between(w.time_us, 0, 100, where=(w["tor.p1_xoff"] != 0), color="orange", alpha=0.3, step="mid")
        ax.set_ylim(60, 102)
    return Outcome("mean PAUSE interval " + ", ".join(f"port {p}: {x['interval_us']:.1f} us over {x['pauses']} cycles"
                                                      for p, x in ports.items()) + f"; no drop, queue peak "
                   f"{peak / (8 * 208):.0f} packets", {"ports": ports, "queue_peak_cell_bytes": peak,
                                                        "dropped": s["frames"]["dropped"]}, ok, plot)
