"""results.detail (issue 17 §3): a large run's per-device and per-flow statistics go to CSV
tables; summary.json keeps each table's aggregate and the top-N. The tables hold exactly what
the summary would have listed, and Result reads either form alike."""
import json

import pandas as pd
import pytest

from fabricsim.results import load_result, summary_metrics


def run_both(sim, scenario, tmp_path, *extra):
    args = [scenario, "--quiet", *extra]
    sim(*args, "--set", "results.detail=summary", "--out", tmp_path / "full")
    sim(*args, "--set", "results.detail=csv", "--set", "results.top_n=3", "--out", tmp_path / "csv")
    return load_result(tmp_path / "full"), load_result(tmp_path / "csv")


def common(full, csv):
    cols = [c for c in full.columns if c in csv.columns]
    return full[cols].reset_index(drop=True), csv[cols].reset_index(drop=True)


@pytest.mark.parametrize("name,extra", [
    ("incast_dctcp", ["--set", "switch.port_cap=30KB"]),  # drops at the switch
    ("pfc_spreading", []),  # ingress PGs, flow control counters
])
def test_tables_hold_what_the_summary_lists(sim, scenarios, tmp_path, name, extra):
    full, csv = run_both(sim, scenarios / f"{name}.yaml", tmp_path, "--set", "duration=2ms", *extra)
    fs, cs = full.summary, csv.summary
    assert "detail" not in fs and cs["detail"] == "csv"
    for key in ("nics", "hosts", "links", "flows"):
        assert key in fs and key not in cs
    # Everything else of the summary is unchanged.
    skip = {"nics", "hosts", "links", "flows", "switches", "config", "host_perf",
            "detail", "detail_files", "aggregate", "top"}
    assert {k: v for k, v in fs.items() if k not in skip} == {k: v for k, v in cs.items() if k not in skip}
    for name_, sw in fs["switches"].items():
        assert cs["switches"][name_]["ports"] == len(sw["ports"])
        assert {k: v for k, v in sw.items() if k != "ports"} == \
               {k: v for k, v in cs["switches"][name_].items() if k != "ports"}

    # Result's tables agree cell for cell, whichever form they were read from.
    for table in ("ports", "queues"):
        a, b = common(getattr(full, table), getattr(csv, table))
        assert len(a) > 0
        pd.testing.assert_frame_equal(a, b, check_dtype=False)
    key = ["kind", "node", "port", "queue", "cause"]
    assert len(full.drops) > 0 or name != "incast_dctcp"
    pd.testing.assert_frame_equal(full.drops.sort_values(key).reset_index(drop=True),
                                  csv.drops.sort_values(key).reset_index(drop=True), check_dtype=False)
    assert summary_metrics(fs) == summary_metrics(cs)

    # Aggregates: exact sums and maxima of the listed objects.
    agg = cs["aggregate"]
    ports = [p for sw in fs["switches"].values() for p in sw["ports"]]
    assert agg["switch_ports"]["count"] == len(ports)
    assert agg["switch_ports"]["sum"]["tx_bytes"] == sum(p["tx_bytes"] for p in ports)
    assert agg["switch_ports"]["max"]["queue_peak_cell_bytes"] == max(p["queue_peak_cell_bytes"] for p in ports)
    assert agg["nics"]["sum"]["tx_frames"] == sum(n["tx_frames"] for n in fs["nics"].values())
    assert agg["links"]["sum"]["frames"] == sum(d["frames"] for d in fs["links"].values())
    assert agg["flows"]["count"] == len(fs["flows"])
    assert agg["flows"]["sum"]["delivered_bytes"] == sum(f["delivered_bytes"] for f in fs["flows"])

    # Top-N: the largest values, in order, at most results.top_n.
    top = cs["top"]["switch_ports_by_queue_peak_cell_bytes"]
    want = sorted((p["queue_peak_cell_bytes"] for p in ports), reverse=True)[:3]
    assert [t["queue_peak_cell_bytes"] for t in top] == [w for w in want if w > 0]
    lat = sorted((f["latency_max_us"] for f in fs["flows"]), reverse=True)[:3]
    assert [t["latency_max_us"] for t in cs["top"]["flows_by_latency_max_us"]] == lat

    # The files the summary names exist; links.csv has one row per direction.
    for f in cs["detail_files"]:
        assert (tmp_path / "csv" / f).exists()
    links = pd.read_csv(tmp_path / "csv" / "links.csv")
    assert len(links) == len(fs["links"])
    row = links.iloc[0]
    assert fs["links"][f"{row['link']}.{row['direction']}"]["bytes"] == row["bytes"]


def test_auto_writes_tables_above_1024_hosts_only(sim, tmp_path):
    def scenario(leaves):
        p = tmp_path / f"ls{leaves}.yaml"
        p.write_text(f"""
duration: 2us
topology:
  kind: leaf_spine
  leaf_spine: {{leaves: {leaves}, spines: 2, hosts_per_leaf: 32}}
traffic:
  generate: [{{pattern: permutation, process: poisson, load: 0.3}}]
results: {{sample_interval: 0s}}
""")
        sim(p, "--quiet", "--out", tmp_path / f"r{leaves}")
        return json.loads((tmp_path / f"r{leaves}" / "summary.json").read_text())
    big = scenario(33)  # 1056 hosts
    assert big["detail"] == "csv" and big["aggregate"]["nics"]["count"] == 1056
    assert big["switches"]["leaf0"]["ports"] == 34  # the count; the ports are table rows
    small = scenario(32)  # 1024 hosts
    assert "detail" not in small and len(small["nics"]) == 1024


@pytest.mark.parametrize("key,value,why", [
    ("results.detail", "tables", "is not one of: auto, summary, csv"),
    ("results.top_n", "0", "below the minimum 1"),
])
def test_bad_detail_keys_are_named(sim, scenarios, tmp_path, key, value, why):
    p = sim(scenarios / "default.yaml", "--set", f"{key}={value}", "--out", tmp_path / "r", check=False)
    assert p.returncode == 2
    assert key in p.stderr and why in p.stderr, p.stderr
