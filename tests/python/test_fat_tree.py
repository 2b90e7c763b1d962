"""The shipped HULL fat-tree scenario (seed-000 §3.4, ns-2 large-scale) as plain DCTCP."""
import json


def test_hull_fat_tree_conserves_frames_completes_flows_and_uses_every_core(sim, scenarios, tmp_path):
    out = tmp_path / "ft"
    sim(scenarios / "hull_fat_tree.yaml", "--out", out, "--quiet")
    s = json.loads((out / "summary.json").read_text())
    assert s["complete"]
    fr = s["frames"]
    assert fr["conserved"]
    assert fr["sent"] == fr["delivered"] + fr["dropped"] + fr["in_flight"]
    # 56 8-port switches (32 ToRs, 16 aggregation, 8 cores) and 192 hosts.
    sw = s["switches"]
    assert len(sw) == 56
    assert len(s["nics"]) == 192
    for prefix, count in (("tor", 32), ("agg", 16), ("core", 8)):
        names = [f"{prefix}{i}" for i in range(count)]
        assert all(len(sw[n]["ports"]) == 8 for n in names)
    # Poisson arrivals for 15 ms at 15% of 192 x 10G, Pareto sizes (mean 100 KB): ~5000 flows.
    # Every flow under 1 MB completes by 20 ms; only the heavy tail may still be running.
    fct = s["fct"]
    assert 4000 < fct["all"]["flows"] < 6500
    for b in fct["by_size"]:
        if b["bin"] in ("<10KB", "10KB-100KB", "100KB-1MB"):
            assert b["completed"] == b["flows"], b
    assert fct["all"]["completed"] >= 0.995 * fct["all"]["flows"]
    # ECMP: every core forwards to every pod, every aggregation uplink carries traffic.
    for c in range(8):
        assert all(p["tx_frames"] > 0 for p in sw[f"core{c}"]["ports"])
    for a in range(16):
        assert all(p["tx_frames"] > 0 for p in sw[f"agg{a}"]["ports"][4:])
    assert s["config"]["topology"]["fat_tree"] == {"k": 8, "hosts_per_tor": 6, "tor_uplinks": 2}


HULL = ["--set", "switch.ecn.mode=off", "--set", "switch.phantom_queue.enabled=true",
        "--set", "switch.phantom_queue.threshold=1KB", "--set", "nic.pacer.mode=ns2"]


def test_hull_on_the_fat_tree_marks_at_the_phantom_queues_paces_and_cuts_small_flow_latency(
        sim, scenarios, tmp_path):
    # The overrides of the scenario's header: phantom queues at 9.5 Gbps (1 KB) instead of
    # DCTCP's K = 65 packets, and the ns-2 pacer. Seed-000 §3.4: flows under 10 KB finish > 80%
    # faster at the 99th percentile than with DCTCP (and > 50% on average; here ~30%).
    runs = {}
    for name, extra in (("dctcp", []), ("hull", HULL)):
        sim(scenarios / "hull_fat_tree.yaml", "--out", tmp_path / name, "--quiet", *extra)
        runs[name] = json.loads((tmp_path / name / "summary.json").read_text())
    d, h = runs["dctcp"], runs["hull"]
    assert h["frames"]["conserved"] and h["frames"]["dropped"] == 0
    ports = [p for sw in h["switches"].values() for p in sw["ports"]]
    assert sum(p["phantom_queue"]["marked"] for p in ports) > 10000
    pacers = [n["pacer"] for n in h["nics"].values()]
    assert sum(p["associations"] for p in pacers) > 100
    assert sum(p["paced_frames"] for p in pacers) > 10000
    assert sum(p["fifo_full_frames"] for p in pacers) == 0

    def small(s):
        return next(b for b in s["fct"]["by_size"] if b["bin"] == "<10KB")

    sd, sh = small(d), small(h)
    assert sd["flows"] == sh["flows"] == sh["completed"]
    assert sh["fct_us"]["mean"] < 0.85 * sd["fct_us"]["mean"]
    assert sh["fct_us"]["p99"] < 0.5 * sd["fct_us"]["p99"]
