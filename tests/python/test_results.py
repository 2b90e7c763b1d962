"""Result: FCT/QCT metrics, tidy per-port/per-queue tables, long-form time series, Parquet."""
import json

import pandas as pd
import pytest

import fabricsim
from fabricsim.results import Result

# A small rack with a web-search workload (FCT by size bin) and 2 queues per port: ~0.1 s.
WORKLOAD = {"duration": "5ms", "topology": {"kind": "incast", "incast": {"hosts": 5}}, "switch": {"queues": 2},
            "traffic": {"workload": [{"pattern": "all_to_all", "load": 0.5, "sizes": "websearch"}]},
            "results": {"sample_interval": "100us"}}


@pytest.fixture(scope="module")
def workload(tmp_path_factory):
    return fabricsim.run(WORKLOAD, out=tmp_path_factory.mktemp("wl") / "r", seed=1)


def test_metrics_have_fct_and_slowdown_percentiles_by_size_bin(workload):
    s, m = workload.summary, workload.metrics
    assert m["fct.all.fct_us.p99"] == s["fct"]["all"]["fct_us"]["p99"]
    assert m["fct.all.flows"] == s["fct"]["all"]["flows"] > 0
    bins = s["fct"]["by_size"]
    assert len(bins) >= 2
    for b in bins:
        for stat in ("p50", "p99", "p999", "mean", "max"):
            assert m[f"fct.{b['bin']}.fct_us.{stat}"] == b["fct_us"][stat]
            assert m[f"fct.{b['bin']}.slowdown.{stat}"] == b["slowdown"][stat]
        assert m[f"fct.{b['bin']}.completed"] == b["completed"]
    assert not any(k.endswith(".bin") for k in m)


def test_sweep_rows_carry_fct_and_qct_percentiles():
    incast = {"duration": "3ms", "topology": {"kind": "incast", "incast": {"hosts": 5}},
              "traffic": {"incast": [{"response_size": "20KB", "queries": 3}]}}
    df = fabricsim.sweep(WORKLOAD, {"seed": [1]}, progress=False)
    assert df.loc[0, "fct.all.slowdown.p50"] > 0 and "fct.<10KB.fct_us.p99" in df.columns
    df = fabricsim.sweep(incast, {"seed": [1]}, progress=False)
    for stat in ("mean", "min", "p50", "p95", "p99", "max"):
        assert df.loc[0, f"incast.qct_us.{stat}"] > 0


SUMMARY = {
    "switches": {"s0": {"ports": [
        {"port": 0, "tx_frames": 10, "tx_bytes": 15000, "ce_marked": 2, "queue_peak_cell_bytes": 4160,
         "drops": {"port_cap": 3, "shared_buffer_full": 1},
         "queues": [{"queue": 0, "tx_frames": 7, "ce_marked": 2, "peak_frame_bytes": 3000, "drops": {"port_cap": 3}},
                    {"queue": 1, "tx_frames": 3, "ce_marked": 0, "peak_frame_bytes": 1500, "drops": {"port_cap": 0}}],
         "ingress_pgs": [{"pg": 0}]},
        {"port": 1, "tx_frames": 0, "tx_bytes": 0, "ce_marked": 0, "queue_peak_cell_bytes": 0,
         "drops": {"port_cap": 0, "shared_buffer_full": 0},
         "queues": [{"queue": 0, "tx_frames": 0, "ce_marked": 0, "peak_frame_bytes": 0, "drops": {"port_cap": 0}}]}]}},
}


def test_port_and_queue_tables(tmp_path):
    r = Result(tmp_path, summary=SUMMARY)
    p = r.ports
    assert list(p.columns[:3]) == ["switch", "port", "drops"]
    assert p.to_dict("records")[0] == {"switch": "s0", "port": 0, "drops": 4, "tx_frames": 10, "tx_bytes": 15000,
                                       "ce_marked": 2, "queue_peak_cell_bytes": 4160, "drops.port_cap": 3,
                                       "drops.shared_buffer_full": 1}
    assert list(p["drops"]) == [4, 0]
    q = r.queues
    assert list(q.columns) == ["switch", "port", "queue", "drops", "tx_frames", "ce_marked", "peak_frame_bytes",
                               "drops.port_cap"]
    assert q.values.tolist() == [["s0", 0, 0, 3, 7, 2, 3000, 3], ["s0", 0, 1, 0, 3, 0, 1500, 0],
                                 ["s0", 1, 0, 0, 0, 0, 0, 0]]


def test_tables_of_a_run_match_the_summary_and_drops(workload):
    p, q = workload.ports, workload.queues
    s = workload.summary["switches"]
    assert len(p) == sum(len(sw["ports"]) for sw in s.values())
    assert len(q) == 2 * len(p)
    switch_drops = workload.drops.query("kind == 'switch'")["frames"].sum()
    assert p["drops"].sum() == switch_drops > 0
    assert q.groupby(["switch", "port"])["tx_frames"].sum().tolist() == p["tx_frames"].tolist()


def test_long_form_time_series(tmp_path, workload):
    (tmp_path / "timeseries.csv").write_text(
        "time_us,s0.buffer_cell_bytes,s0.p4_frame_bytes,s0.p4q1_frame_bytes\n0,0,0,0\n10,416,300,200\n")
    long = Result(tmp_path, summary={}).timeseries_long
    assert list(long.columns) == ["time_us", "node", "port", "queue", "metric", "value"]
    assert [tuple(r) for r in long.itertuples(index=False)] == [
        (0, "s0", -1, -1, "buffer_cell_bytes", 0), (10, "s0", -1, -1, "buffer_cell_bytes", 416),
        (0, "s0", 4, -1, "frame_bytes", 0), (10, "s0", 4, -1, "frame_bytes", 300),
        (0, "s0", 4, 1, "frame_bytes", 0), (10, "s0", 4, 1, "frame_bytes", 200)]
    # a real run: every wide column is one series of the long form
    wide, long = workload.timeseries, workload.timeseries_long
    assert len(long) == len(wide) * (len(wide.columns) - 1)
    pivot = long.pivot_table(index="time_us", columns=["node", "port", "queue", "metric"], values="value",
                             observed=True)
    assert len(pivot.columns) == len(wide.columns) - 1
    col = [c for c in wide.columns if c.startswith("tor.p0q0_")][0]
    series = long[(long.node == "tor") & (long.port == 0) & (long.queue == 0)]
    assert series["value"].tolist() == wide[col].tolist() and series["value"].max() > 0


def test_parquet_results_read_like_csv(tmp_path, workload):
    r = fabricsim.run(WORKLOAD, out=tmp_path / "pq", seed=1, overrides={"results.format": "parquet"})
    files = sorted(p.name for p in r.path.iterdir())
    assert "flows.parquet" in files and "timeseries.parquet" in files
    assert not [f for f in files if f.endswith(".csv")]
    assert r.summary["config"]["results"]["format"] == "parquet"
    for table in ("flows", "timeseries"):
        a, b = getattr(r, table), getattr(workload, table)
        assert a.columns.tolist() == b.columns.tolist() and len(a) == len(b) > 0
        pd.testing.assert_frame_equal(a, b, check_dtype=False)
    again = fabricsim.load_result(r.path)
    assert again.timeseries_long.equals(workload.timeseries_long)
    assert json.loads((r.path / "summary.json").read_text())["frames"] == workload.summary["frames"]


def test_fabricsim_sim_refuses_parquet(default_yaml, sim, tmp_path):
    p = sim(default_yaml, "--set", "results.format=parquet", "--out", tmp_path / "x", check=False)
    assert p.returncode == 2
    assert p.stderr.startswith("fabricsim-sim: configuration error: results.format: parquet is written by the Python")
    assert not (tmp_path / "x").exists()
