"""fabricsim.sweep(): rows, failing points, cache resume, determinism, Dask."""
import json
import os

import pandas as pd
import pytest

import fabricsim
from fabricsim.sweeps import deterministic_columns

GRID = {"switch.port_cap": ["100KB", "300KB"]}


def _same(a, b):
    cols = deterministic_columns(a)
    assert cols == deterministic_columns(b)
    pd.testing.assert_frame_equal(a[cols].reset_index(drop=True), b[cols].reset_index(drop=True))


@pytest.fixture(scope="module")
def sequential(default_yaml, short):
    return fabricsim.sweep(default_yaml, GRID, repeats=2, workers=1, overrides=short, progress=False)


def test_rows_have_parameters_seed_and_metrics(sequential):
    df = sequential
    assert len(df) == 4
    assert list(df.columns[:5]) == ["switch.port_cap", "repeat", "seed", "status", "error"]
    assert list(df["switch.port_cap"]) == ["100KB", "100KB", "300KB", "300KB"]
    assert list(df["seed"]) == [1, 2, 1, 2] and list(df["repeat"]) == [0, 1, 0, 1]
    assert (df["status"] == "ok").all() and df["error"].isna().all()
    for c in ("frames.sent", "frames.dropped", "latency_us.p99", "goodput_bps", "switch.queue_peak_cell_bytes"):
        assert c in df.columns
    # the cap bounds the bottleneck queue: a smaller cap queues less and drops more
    small, large = df.iloc[0], df.iloc[2]
    assert small["switch.queue_peak_cell_bytes"] <= 100_000 < large["switch.queue_peak_cell_bytes"]
    assert small["frames.dropped"] > large["frames.dropped"]
    # seeds differ between repeats (the Poisson flow)
    assert df.iloc[0]["frames.sent"] != df.iloc[1]["frames.sent"]
    # run-varying columns come last
    assert all(c.startswith(("host_perf.", "run.")) for c in df.columns[len(deterministic_columns(df)):])


def test_parallel_pool_gives_the_same_rows(sequential, default_yaml, short):
    par = fabricsim.sweep(default_yaml, GRID, repeats=2, workers=2, overrides=short, progress=False)
    _same(sequential, par)


def test_failing_points_become_rows_and_do_not_stop_the_sweep(default_yaml, short):
    src = dict(fabricsim.config.make_source(default_yaml, short), _fault_on="switch.port_cap=200KB")
    df = fabricsim.sweep(src, {"switch.port_cap": ["100KB", "200KB", "64MiB", "300KB"]}, workers=2, progress=False)
    assert list(df["status"]) == ["ok", "crash", "config_error", "ok"]
    assert "died (signal 6)" in df.loc[1, "error"]
    assert df.loc[2, "error"].startswith("switch.port_cap: is larger than switch.buffer")
    assert df.loc[0, "frames.delivered"] > 0 and df.loc[3, "frames.delivered"] > 0
    assert pd.isna(df.loc[1, "frames.delivered"])


def test_timeout_becomes_a_row(default_yaml, short):
    df = fabricsim.sweep(default_yaml, {"duration": ["2ms", "2s"]}, overrides={"traffic.flows[4].process": "poisson"},
                         timeout=0.4, workers=2, progress=False)
    assert list(df["status"]) == ["ok", "timeout"]
    assert "timed out" in df.loc[1, "error"]


def test_cache_resumes_without_rerunning_finished_points(default_yaml, short, tmp_path):
    cache = tmp_path / "cache"
    # First attempt is "interrupted": one point dies.
    src = dict(fabricsim.config.make_source(default_yaml, short), _fault_on="switch.port_cap=300KB")
    first = fabricsim.sweep(src, GRID, repeats=2, cache_dir=cache, workers=2, progress=False)
    assert list(first["status"]) == ["ok", "ok", "crash", "crash"]
    stored = sorted(p.name for p in cache.glob("*.json"))
    assert len(stored) == 2
    mtimes = {p: os.stat(cache / p).st_mtime_ns for p in stored}
    # Resume (the fault gone): the two finished runs come from the cache, the two others run.
    again = fabricsim.sweep(default_yaml, GRID, repeats=2, cache_dir=cache, workers=2, overrides=short,
                            progress=False)
    assert (again["status"] == "ok").all()
    assert list(again["run.cached"]) == [True, True, False, False]
    assert {p: os.stat(cache / p).st_mtime_ns for p in stored} == mtimes
    assert len(list(cache.glob("*.json"))) == 4
    assert all((cache / "runs" / p[:-5] / "summary.json").exists() for p in stored)
    fresh = fabricsim.sweep(default_yaml, GRID, repeats=2, overrides=short, workers=2, progress=False)
    _same(again, fresh)
    row = json.loads((cache / stored[0]).read_text())
    assert row["status"] == "ok" and "metrics" not in row  # computed again from runs/<key> on loading


def test_metrics_function_adds_columns(default_yaml, short):
    def mean_queue(r):
        return {"mean_bottleneck_queue": float(r.timeseries["s0.p4_frame_bytes"].mean())}
    df = fabricsim.sweep(default_yaml, GRID, overrides=short, workers=2, progress=False, metrics=mean_queue)
    assert df.loc[0, "mean_bottleneck_queue"] < df.loc[1, "mean_bottleneck_queue"]


def test_dask_local_cluster_gives_the_same_rows(sequential, default_yaml, short):
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40) as cluster, distributed.Client(cluster) as client:
        df = fabricsim.sweep(default_yaml, GRID, repeats=2, executor=client.get_executor(), overrides=short,
                             progress=False)
    assert (df["status"] == "ok").all(), df["error"].tolist()
    _same(sequential, df)


def test_a_failing_metrics_function_is_an_error_row(default_yaml, short):
    def broken(r):
        raise ValueError("no such column")
    df = fabricsim.sweep(default_yaml, {"switch.port_cap": ["100KB"]}, overrides=short, metrics=broken,
                         progress=False)
    assert list(df["status"]) == ["error"] and df.loc[0, "error"] == "ValueError: no such column"


def test_cache_key_has_the_simulator_version_and_metrics_are_recomputed(default_yaml, short, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    grid = {"switch.port_cap": ["100KB"]}
    first = fabricsim.sweep(default_yaml, grid, cache_dir=cache, overrides=short, progress=False,
                            metrics=lambda r: {"extra": 1})
    assert list(first["extra"]) == [1] and list(first["run.cached"]) == [False]
    # A changed metrics function: the row comes from the cache with the new function's values.
    again = fabricsim.sweep(default_yaml, grid, cache_dir=cache, overrides=short, progress=False,
                            metrics=lambda r: {"extra": 2, "rows": len(r.flows)})
    assert list(again["run.cached"]) == [True] and list(again["extra"]) == [2] and list(again["rows"]) == [5]
    _same(first.drop(columns=["extra"]), again.drop(columns=["extra", "rows"]))
    # Another simulator version: a new key, the run goes again.
    monkeypatch.setattr(fabricsim, "__version__", "0.0.0-other")
    other = fabricsim.sweep(default_yaml, grid, cache_dir=cache, overrides=short, progress=False)
    assert list(other["run.cached"]) == [False]
    assert len(list(cache.glob("*.json"))) == 2


def test_a_retry_reuses_the_failed_attempts_folder(default_yaml, short, tmp_path):
    cache = tmp_path / "cache"
    fabricsim.sweep(default_yaml, GRID, cache_dir=cache, overrides=short, progress=False)
    entry = sorted(cache.glob("*.json"))[0]
    entry.unlink()  # as if the attempt had failed after writing its folder
    folder = cache / "runs" / entry.stem
    (folder / "stale.txt").write_text("from the failed attempt")
    df = fabricsim.sweep(default_yaml, GRID, cache_dir=cache, overrides=short, progress=False)
    assert (df["status"] == "ok").all(), df["error"].tolist()
    assert sorted(df["run.cached"]) == [False, True]
    assert not (folder / "stale.txt").exists() and (folder / "summary.json").exists()


def test_unknown_grid_key_raises_before_anything_runs(default_yaml, short, tmp_path):
    cache = tmp_path / "cache"
    with pytest.raises(fabricsim.ConfigError, match=r"^switch\.bufer: unknown key") as ei:
        fabricsim.sweep(default_yaml, {"switch.port_cap": ["100KB"], "switch.bufer": ["1MiB"]}, cache_dir=cache,
                        overrides=short, progress=False)
    assert ei.value.key == "switch.bufer"
    assert not cache.exists()
    # indexed list keys, sections and seed are keys of the schema
    df = fabricsim.sweep(default_yaml, [{"traffic.flows[0].rate": "1Gbps", "seed": 3,
                                         "switch.ecn": {"mode": "off"}}], overrides=short, progress=False)
    assert list(df["status"]) == ["ok"]


def test_numpy_and_plain_numbers_in_base_units(default_yaml, short):
    import numpy as np
    strings = fabricsim.sweep(default_yaml, {"switch.port_cap": ["100000B", "300KB"], "duration": ["2ms"]},
                              overrides=short, workers=2, progress=False)
    numbers = fabricsim.sweep(default_yaml, {"switch.port_cap": np.array([100_000, 300_000]),
                                             "duration": [np.float64(0.002)]},
                              overrides=dict(short, duration=0.002), workers=2, progress=False)
    assert (numbers["status"] == "ok").all(), numbers["error"].tolist()
    cols = [c for c in deterministic_columns(strings) if c not in ("switch.port_cap", "duration")]
    pd.testing.assert_frame_equal(strings[cols], numbers[cols])
    df = fabricsim.sweep(default_yaml, {"switch.port_cap": [100_000.5, 300_000.0, np.int64(200_000)]},
                         overrides=short, progress=False)
    assert list(df["status"]) == ["config_error", "ok", "ok"]
    assert df.loc[0, "error"] == "switch.port_cap: 100000.5 is not a whole number of bytes"
