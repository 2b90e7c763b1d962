#!/usr/bin/env python3
"""FabricSim benchmark: frame-hops per wall second, model timer firings ("activations") and
SystemC kernel wake-ups per frame-hop, and peak memory for (a) a line-rate dumbbell and (b) a
4x8x16 leaf-spine at 70% Poisson load (also in lock-step, and with 8 queues per port, DWRR
and MQ-ECN marking), (c) the same leaf-spine with open-loop web-search DCTCP flows at 60% load
(ACKs count as frames), (d) that workload at 100G over RoCEv2 with PFC and DCQCN, (e) at 100G with the ideal NIC, the
PCIe/DMA model with LSO, and the realistic host receive path, (f) two data centres over WAN
links, (g) a 1024-host leaf-spine at 100G/400G with 50% Poisson load, against the SystemC kernel floor
measured in the same run. Prints JSON (stdlib only)."""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent


def run_once(sim, scenario, out, extra=()):
    subprocess.run([sim, str(scenario), "--out", str(out), "--overwrite", "--quiet", *extra], check=True,
                   env=dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1"))
    return json.loads((out / "summary.json").read_text())


def floor_once(floor_exe, methods):
    # About 5 M activations per run (~0.5 s), whatever the number of methods.
    sim_ms = 5e6 * 1.2304e-3 / methods
    p = subprocess.run([str(floor_exe), str(methods), f"{sim_ms:.3f}"], check=True, capture_output=True,
                       text=True, env=dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1"))
    return json.loads(p.stdout.strip().splitlines()[-1])


WEB_100G = ("--set", "duration=5ms", "--set", "topology.host_rate=100Gbps",
            "--set", "topology.leaf_spine.fabric_rate=400Gbps")
NIC_TX = ("--set", "nic.pcie.model=gen3_x16", "--set", "nic.lso.enabled=true")
NIC_RX_100G = ("--set", "nic.rx.napi=true", "--set", "nic.rx.coalescing=adaptive", "--set", "nic.rx.cores=8",
               "--set", "nic.rx.packet_cost=50ns", "--set", "nic.rx.irq_cost=1us",
               "--set", "nic.rx.poll_cost=1us", "--set", "tcp.abc_limit=64")
WEB_1024 = ("--set", "topology.leaf_spine.leaves=32", "--set", "topology.leaf_spine.spines=8",
            "--set", "topology.leaf_spine.hosts_per_leaf=32", "--set", "duration=300us")
WEB_9984 = ("--set", "topology.leaf_spine.leaves=312", "--set", "topology.leaf_spine.spines=8",
            "--set", "topology.leaf_spine.hosts_per_leaf=32", "--set", "duration=100us")
# The same traffic on a k = 32 fat-tree (8192 hosts, 1280 switches, 100G everywhere).
WEB_FT32 = ("--set", "topology.kind=fat_tree", "--set", "topology.fat_tree.k=32",
            "--set", "topology.fat_tree.fabric_rate=100Gbps", "--set", "duration=100us")
SAMPLE_10US = ("--set", "results.sample_interval=10us")
SCENARIOS = [("dumbbell_line_rate", "dumbbell_line_rate.yaml", ()),
             ("leaf_spine_poisson_70", "leaf_spine_poisson.yaml", ()),
             ("leaf_spine_8q_dwrr_ecn_70", "leaf_spine_8q_dwrr_ecn.yaml", ()),
             # The same eight flows per host through one FIFO per port.
             ("leaf_spine_8q_traffic_fifo_70", "leaf_spine_8q_dwrr_ecn.yaml",
              ("--set", "switch.queues=1", "--set", "switch.ecn.mode=off")),
             # The lock-step run wakes the model scheduler from the SystemC kernel for every
             # expiry (no run-ahead): same results, and it shows what the kernel round trip costs.
             ("leaf_spine_poisson_70_lockstep", "leaf_spine_poisson.yaml", ("--lockstep",)),
             ("leaf_spine_websearch_dctcp_60", "leaf_spine_websearch_dctcp.yaml", ()),
             # (d) the same fabric at 100G with RoCEv2, PFC and DCQCN on a lossless class.
             ("leaf_spine_websearch_roce_dcqcn_60", "leaf_spine_websearch_roce.yaml", ()),
             # (e) the web-search fabric of (c) at 100G hosts / 400G fabric, 5 ms, with the ideal
             # NIC, with the PCIe gen3 x16 DMA model and LSO, and with the realistic host of
             # docs/models/nic.md (that, plus NAPI with adaptive coalescing and GRO on 8 cores at
             # 100G costs): issue 14 asks the realistic run to stay within 25% of the ideal one's
             # frame-hops/s.
             ("leaf_spine_websearch_dctcp_100g", "leaf_spine_websearch_dctcp.yaml", WEB_100G),
             ("leaf_spine_websearch_dctcp_100g_nic", "leaf_spine_websearch_dctcp.yaml", WEB_100G + NIC_TX),
             ("leaf_spine_websearch_dctcp_100g_nic_rx", "leaf_spine_websearch_dctcp.yaml",
              WEB_100G + NIC_TX + NIC_RX_100G),
             # (f) two DCs of (b)'s shape over 100G WAN links of 10 ms, ~320 MB in flight.
             ("multi_dc_wan_40", "multi_dc_wan.yaml", ()),
             # (g) issue 17: (b)'s traffic at 50% on a 1024-host leaf-spine, 100G hosts / 400G
             # fabric, 200 us (~100 timers share each 4 ns slot of the model scheduler).
             ("leaf_spine_1024_poisson_50", "leaf_spine_1024_poisson.yaml", ()),
             # (h) issue 17: one DCTCP web-search fabric at 100G/400G, 50% load, in three sizes
             # (1:1 at the leaves); the two larger ones against the 128-host one of the same run.
             ("websearch_100g_128_50", "leaf_spine_websearch_100g.yaml", ()),
             ("websearch_100g_1024_50", "leaf_spine_websearch_100g.yaml", WEB_1024),
             ("websearch_100g_9984_50", "leaf_spine_websearch_100g.yaml", WEB_9984),
             ("websearch_100g_fat_tree_k32_50", "leaf_spine_websearch_100g.yaml", WEB_FT32),
             # Issue 17, "observation costs little": (a) and (b) with the time series sampled
             # every 10 us (every port and pool of every switch), and (b) also tracing all of its
             # columns to trace.vcd; sampling_cost_* compare them with the unsampled runs.
             ("dumbbell_line_rate_sample_10us", "dumbbell_line_rate.yaml", SAMPLE_10US),
             ("leaf_spine_poisson_70_sample_10us", "leaf_spine_poisson.yaml", SAMPLE_10US),
             ("leaf_spine_poisson_70_sample_10us_vcd", "leaf_spine_poisson.yaml",
              SAMPLE_10US + ("--set", "results.vcd=['*']"))]


def link_directions(summary):
    """Link directions of a run: listed in the summary, or counted in its aggregate when the
    per-device detail went to CSV (results.detail, large runs)."""
    return len(summary["links"]) if "links" in summary else summary["aggregate"]["links"]["count"]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--build", default="build")
    ap.add_argument("--repeats", type=int, default=5,
                    help="rounds; each round runs every scenario and floor once, the fastest run of each is reported")
    ap.add_argument("--out", help="also write the JSON here")
    ap.add_argument("--only", nargs="+", metavar="KEY",
                    help="run only these scenarios (keys of the report); the ratios that need others are left out")
    args = ap.parse_args()
    scenarios = [s for s in SCENARIOS if not args.only or s[0] in args.only]
    if args.only and len(scenarios) != len(args.only):
        ap.error("unknown scenario key; known: " + ", ".join(k for k, _, _ in SCENARIOS))
    build = pathlib.Path(args.build)
    sim = build / "platforms" / "fabricsim-sim"
    floor_exe = build / "bench" / "fabricsim-kernel-floor"
    best = {}      # scenario key -> fastest summary
    best_cpu = {}  # scenario key -> highest frame-hops per CPU second
    rounds = []    # per round: scenario key -> (frame-hops/s, frame-hops per CPU second)
    floors = {}    # methods -> fastest floor run
    def keep_floor(methods):
        f = floor_once(floor_exe, methods)
        if methods not in floors or f["activations_per_s"] > floors[methods]["activations_per_s"]:
            floors[methods] = f

    with tempfile.TemporaryDirectory() as tmp:
        # Rounds interleave all runs, so a slow spell of a shared machine hits every number
        # alike instead of one scenario's repeats.
        for _ in range(args.repeats):
            keep_floor(64)
            rounds.append({})
            for key, file, extra in scenarios:
                s = run_once(sim, HERE / "scenarios" / file, pathlib.Path(tmp) / key, extra)
                perf = s["host_perf"]
                rounds[-1][key] = (perf["frame_hops_per_s"], perf["frame_hops_per_cpu_s"])
                best_cpu[key] = max(best_cpu.get(key, 0.0), perf["frame_hops_per_cpu_s"])
                if key not in best or s["host_perf"]["frame_hops_per_s"] > best[key]["host_perf"]["frame_hops_per_s"]:
                    best[key] = s
                keep_floor(link_directions(s))
    floor = floors[64]
    report = {"kernel_floor": floor, "scenarios": {}}
    for key, _, _ in scenarios:
        s = best[key]
        # The kernel's timed-event queue costs more with more pending events, so also compare
        # with a floor that has one self-notifying method per link direction of the scenario.
        matched = floors[link_directions(s)]
        hops = s["kernel"]["frame_hops"]
        fps = s["host_perf"]["frame_hops_per_s"]
        report["scenarios"][key] = {
            "frame_hops": hops,
            "frame_hops_per_s": round(fps),
            "frame_hops_per_cpu_s": round(best_cpu[key]),
            "activations_per_frame_hop": round(s["kernel"]["activations_per_frame_hop"], 4),
            "systemc_wakeups_per_frame_hop": round(s["kernel"]["systemc_wakeups"] / max(hops, 1), 4),
            "fraction_of_floor": round(fps / floor["activations_per_s"], 3),
            "matched_floor_methods": matched["methods"],
            "matched_floor_activations_per_s": round(matched["activations_per_s"]),
            "fraction_of_matched_floor": round(fps / matched["activations_per_s"], 3),
            "peak_rss_kib": s["host_perf"]["peak_rss_kib"],
            "elaboration_s": round(s["host_perf"]["elaboration_s"], 3),
            "wall_time_s": round(s["host_perf"]["wall_time_s"], 3),
            "frames_dropped": s["frames"]["dropped"],
        }
        if "tcp" in s:
            report["scenarios"][key].update({
                "tcp_flows": s["tcp"]["flows"],
                "peak_concurrent_flows": s["tcp"]["peak_concurrent_flows"],
                "mean_concurrent_flows": round(s["tcp"]["mean_concurrent_flows"], 1),
            })
    sc = report["scenarios"]
    ratios(report, sc, rounds, best_cpu)
    text = json.dumps(report, indent=2)
    print(text)
    if args.out:
        pathlib.Path(args.out).write_text(text + "\n")
    return 0


def ratios(report, sc, rounds, best_cpu):
    """The cross-scenario figures of the issues, each only when its scenarios ran."""
    def have(*keys):
        return all(k in sc for k in keys)
    if have("leaf_spine_8q_dwrr_ecn_70", "leaf_spine_8q_traffic_fifo_70", "leaf_spine_poisson_70"):
        queue_ratios(report, sc, rounds, best_cpu)
    if have("leaf_spine_websearch_dctcp_60", "leaf_spine_poisson_70"):
        websearch_memory(report, sc)
    if have("leaf_spine_websearch_dctcp_100g", "leaf_spine_websearch_dctcp_100g_nic",
            "leaf_spine_websearch_dctcp_100g_nic_rx"):
        nic_ratios(report, sc)
    for size in ("1024", "9984", "fat_tree_k32"):
        # Issue 17: frame-hops/s of the larger fabric >= 50% of the 128-host one, same run.
        big, small = f"websearch_100g_{size}_50", "websearch_100g_128_50"
        if have(big, small):
            report[f"websearch_100g_{size}_vs_128"] = round(
                sc[big]["frame_hops_per_s"] / sc[small]["frame_hops_per_s"], 3)
            report[f"websearch_100g_{size}_vs_128_cpu"] = round(best_cpu[big] / best_cpu[small], 3)
    for base in ("dumbbell_line_rate", "leaf_spine_poisson_70"):
        # Issue 17: the cost of 10 us sampling (and of the VCD) as the fraction of frame-hops/s
        # lost, as the median over rounds of back-to-back runs (target <= 0.10 on the leaf-spine).
        for suffix in ("_sample_10us", "_sample_10us_vcd"):
            if have(base, base + suffix):
                report["sampling_cost" + suffix + "_" + base] = round(
                    1 - statistics.median(r[base + suffix][1] / r[base][1] for r in rounds), 3)
    if have("multi_dc_wan_40", "leaf_spine_poisson_70"):
        # Issue 16: the WAN run at >= 50% of the leaf-spine run's frame-hops/s.
        report["multi_dc_wan_vs_leaf_spine"] = round(
            sc["multi_dc_wan_40"]["frame_hops_per_s"] / sc["leaf_spine_poisson_70"]["frame_hops_per_s"], 3)


def queue_ratios(report, sc, rounds, best_cpu):
    multi = sc["leaf_spine_8q_dwrr_ecn_70"]["frame_hops_per_s"]
    # Issue 3 target: the full data path (8 queues, DWRR, ECN) within 15% of one FIFO, on the
    # same traffic and against run (b).
    report["leaf_spine_8q_vs_fifo_same_traffic"] = round(multi / sc["leaf_spine_8q_traffic_fifo_70"]["frame_hops_per_s"], 3)
    # The same ratio from back-to-back runs of one round, median over rounds: less exposed to a
    # machine that is fast for one run and slow for the next than the ratio of two maxima.
    paired = [r["leaf_spine_8q_dwrr_ecn_70"][0] / r["leaf_spine_8q_traffic_fifo_70"][0] for r in rounds]
    report["leaf_spine_8q_vs_fifo_same_traffic_paired_median"] = round(statistics.median(paired), 3)
    # The same two ratios in CPU time of the simulating thread: on a virtual machine whose host
    # takes its CPU away (steal time), wall time counts those gaps and CPU time does not.
    report["leaf_spine_8q_vs_fifo_same_traffic_cpu"] = round(
        best_cpu["leaf_spine_8q_dwrr_ecn_70"] / best_cpu["leaf_spine_8q_traffic_fifo_70"], 3)
    paired_cpu = [r["leaf_spine_8q_dwrr_ecn_70"][1] / r["leaf_spine_8q_traffic_fifo_70"][1] for r in rounds]
    report["leaf_spine_8q_vs_fifo_same_traffic_cpu_paired_median"] = round(statistics.median(paired_cpu), 3)
    report["leaf_spine_8q_vs_fifo_run_b"] = round(multi / sc["leaf_spine_poisson_70"]["frame_hops_per_s"], 3)


def websearch_memory(report, sc):
    # Issue 4: memory of the TCP run above the same leaf-spine with UDP sources, per 1000 flows
    # (all flows of the run hold their connection state from the start) and per 1000 flows
    # active at the peak.
    web = sc["leaf_spine_websearch_dctcp_60"]
    extra_kib = web["peak_rss_kib"] - sc["leaf_spine_poisson_70"]["peak_rss_kib"]
    report["websearch_extra_rss_kib_per_1000_flows"] = round(extra_kib * 1000 / web["tcp_flows"], 1)
    report["websearch_extra_rss_kib_per_1000_concurrent_flows"] = round(extra_kib * 1000 / web["peak_concurrent_flows"], 1)


def nic_ratios(report, sc):
    # Issue 14: the realistic NIC (PCIe DMA model, LSO; then with the host receive path too)
    # against the ideal one, same 100G fabric.
    report["websearch_100g_realistic_nic_vs_ideal"] = round(
        sc["leaf_spine_websearch_dctcp_100g_nic"]["frame_hops_per_s"]
        / sc["leaf_spine_websearch_dctcp_100g"]["frame_hops_per_s"], 3)
    report["websearch_100g_realistic_host_vs_ideal"] = round(
        sc["leaf_spine_websearch_dctcp_100g_nic_rx"]["frame_hops_per_s"]
        / sc["leaf_spine_websearch_dctcp_100g"]["frame_hops_per_s"], 3)


if __name__ == "__main__":
    sys.exit(main())
