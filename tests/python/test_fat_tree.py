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
