"""fabricsim.run(): config forms, errors, results, process isolation and determinism."""
import json
import time

import pandas as pd
import pytest
import yaml

import fabricsim
from conftest import SHORT, deterministic


def test_run_accepts_a_path_a_yaml_string_and_a_dict_with_the_same_results(default_yaml, tmp_path):
    text = default_yaml.read_text()
    tree = yaml.safe_load(text)
    by_path = fabricsim.run(default_yaml, out=tmp_path / "path", seed=7, overrides=SHORT)
    by_text = fabricsim.run(text, out=tmp_path / "text", seed=7, overrides=SHORT)
    by_dict = fabricsim.run(tree, out=tmp_path / "dict", seed=7, overrides=SHORT)
    s = by_path.summary
    assert s["seed"] == 7 and s["scenario"] == "default"
    assert s["frames"]["delivered"] > 1000 and s["frames"]["conserved"]
    assert deterministic(by_text.summary) == deterministic(s)
    assert deterministic(by_dict.summary) == deterministic(s)
    assert by_path.path == tmp_path / "path" and (by_path.path / "summary.json").exists()
    # the summary returned by the worker is the one written to the folder
    assert json.loads((by_path.path / "summary.json").read_text()) == s


def test_dict_config_with_nested_sections_and_python_values(tmp_path):
    cfg = {
        "duration": "1ms",
        "topology": {"kind": "incast", "host_rate": "10Gbps", "incast": {"hosts": 5}},
        "switch": {"buffer": "1MiB", "port_cap": "0B"},
        "traffic": {"generate": [{"pattern": "many_to_one", "load": 0.5, "frames": 40}]},
        "results": {"sample_interval": "20us"},
    }
    r = fabricsim.run(cfg, out=tmp_path / "r")
    assert r.summary["scenario"] == "scenario"
    assert r.config["topology"]["incast"]["hosts"] == 5
    assert r.summary["frames"]["sent"] == 4 * 40  # four senders to the last host


def test_result_gives_dataframes_and_metrics(default_yaml, tmp_path):
    r = fabricsim.run(default_yaml, out=tmp_path / "r", overrides={"duration": "3ms"})
    assert isinstance(r.flows, pd.DataFrame) and len(r.flows) == 5
    assert list(r.flows.columns[:3]) == ["id", "src", "dst"]
    ts = r.timeseries
    assert len(ts) == 300 and ts["time_us"].iloc[1] == 10
    assert ts["s0.p4_frame_bytes"].max() > 250_000  # the bottleneck port fills to its 300 KB cap
    d = r.drops
    assert set(d.columns) == {"kind", "node", "port", "queue", "cause", "frames"}
    assert d["frames"].sum() == r.summary["frames"]["dropped"] > 0
    row = d.iloc[0]
    assert (row.kind, row.node, row.port, row.queue, row.cause) == ("switch", "s0", 4, 0, "port_cap")
    m = r.metrics
    assert m["frames.dropped"] == r.summary["frames"]["dropped"]
    assert m["switch.queue_peak_cell_bytes"] == max(p["queue_peak_cell_bytes"] for p in r.summary["switches"]["s0"]["ports"])
    assert not any(k.startswith("host_perf") for k in m)
    again = fabricsim.load_result(r.path)
    assert again.summary == r.summary and again.flows.equals(r.flows)


def test_parent_never_elaborates(default_yaml, tmp_path):
    fabricsim.run(default_yaml, out=tmp_path / "a", overrides=SHORT)
    fabricsim.validate(default_yaml)
    fabricsim.explain("switch")
    assert fabricsim.native.has_run() is False


def test_the_native_run_refuses_a_second_elaboration_in_one_process(default_yaml, tmp_path):
    """Guard of _fabricsim.run, exercised in a worker that tries twice."""
    from fabricsim import _worker
    src = fabricsim.config.make_source(default_yaml, SHORT)
    import multiprocessing as mp
    ctx = mp.get_context("forkserver")
    with ctx.Pool(1) as pool:
        first, second = pool.starmap(_twice, [(src, str(tmp_path))])[0]
    assert first[0] == "ok"
    assert second[0] == "error" and "already ran in this process" in second[1]
    assert _worker  # imported for the fork server


def _twice(src, tmp):
    from fabricsim import _worker
    return _worker.execute(src, tmp + "/one"), _worker.execute(src, tmp + "/two")


BAD = [
    ({"switch.bufer": "1MiB"}, "switch.bufer: unknown key"),
    ({"switch.buffer": "4"}, "switch.buffer: '4' needs a byte unit"),  # a string: no base unit
    ({"topology.host_rate": "10GB"}, "topology.host_rate: '10GB' needs a bit-rate unit"),
    ({"phy.ber": 0.5}, "phy.ber: '0.5' is above the maximum"),
    ({"switch.port_cap": "64MiB"}, "switch.port_cap: is larger than switch.buffer"),
    ({"traffic.flows[0].dst": "h99"}, "traffic.flows[0].dst: no host named 'h99'"),
    ({"switch.ecn.max_th": "10KB"}, "switch.ecn.max_th: is below min_th"),
]


@pytest.mark.parametrize("override, message", BAD)
def test_bad_keys_units_and_values_raise_config_error_like_the_cli(default_yaml, sim, override, message):
    with pytest.raises(fabricsim.ConfigError) as ei:
        fabricsim.run(default_yaml, overrides=override)
    e = ei.value
    assert isinstance(e, ValueError)
    assert str(e).startswith(message)
    key = message.split(":")[0]
    assert e.key == key and str(e) == f"{e.key}: {e.reason}"
    (k, v), = override.items()
    cli = sim(default_yaml, "--set", f"{k}={fabricsim.config.format_value(v)}", check=False)
    assert cli.returncode == 2
    assert cli.stderr.strip() == f"fabricsim-sim: configuration error: {e}"


def test_bad_key_in_a_nested_dict_names_the_full_path():
    cfg = {"topology": {"kind": "incast", "incast": {"hostz": 4}}}
    with pytest.raises(fabricsim.ConfigError, match=r"^topology\.incast\.hostz: unknown key"):
        fabricsim.run(cfg)
    with pytest.raises(fabricsim.ConfigError, match="YAML syntax error"):
        fabricsim.run("topology: [unclosed\n")
    with pytest.raises(fabricsim.ConfigError, match="cannot read scenario file"):
        fabricsim.run("no/such/scenario.yaml")


@pytest.mark.parametrize("isolation", ["forkserver", "subprocess"])
def test_worker_crash_and_timeout_become_run_errors(default_yaml, tmp_path, monkeypatch, isolation):
    from fabricsim.runner import run_isolated
    monkeypatch.setenv("FABRICSIM_ISOLATION", isolation)
    src = dict(fabricsim.config.make_source(default_yaml, SHORT), _fault_on="duration=2ms")
    with pytest.raises(fabricsim.RunError, match=r"died \(signal 6\)") as ei:
        run_isolated(src, tmp_path / "crash")
    assert ei.value.kind == "crash"
    t0 = time.perf_counter()
    with pytest.raises(fabricsim.RunError, match="timed out") as ei:
        fabricsim.run(default_yaml, out=tmp_path / "slow", overrides={"duration": "2s"}, timeout=0.3)
    assert ei.value.kind == "timeout" and time.perf_counter() - t0 < 5


def test_same_seed_identical_across_processes_and_isolation_modes(default_yaml, tmp_path, monkeypatch):
    a = fabricsim.run(default_yaml, out=tmp_path / "a", seed=3, overrides=SHORT)
    b = fabricsim.run(default_yaml, out=tmp_path / "b", seed=3, overrides=SHORT)
    monkeypatch.setenv("FABRICSIM_ISOLATION", "subprocess")
    c = fabricsim.run(default_yaml, out=tmp_path / "c", seed=3, overrides=SHORT)
    d = fabricsim.run(default_yaml, out=tmp_path / "d", seed=4, overrides=SHORT)
    for other in (b, c):
        assert deterministic(other.summary) == deterministic(a.summary)
        for name in ("flows.csv", "timeseries.csv"):
            assert (other.path / name).read_bytes() == (a.path / name).read_bytes()
    assert d.summary["frames"]["delivered"] != a.summary["frames"]["delivered"]


def test_isolation_overhead_per_run_is_small(default_yaml, tmp_path):
    """Wall time of run() minus the simulation's own wall time (bench/python_isolation.py
    reports the median; here a loose bound that a shared CI machine keeps)."""
    over = []
    for i in range(5):
        r = fabricsim.run(default_yaml, out=tmp_path / str(i), overrides={"duration": "2ms"})
        over.append(r.elapsed_s - r.summary["host_perf"]["wall_time_s"])
    over.sort()
    assert over[len(over) // 2] < 0.25, over


def test_partition_aggregate_queries_and_tcp_metrics(tmp_path):
    cfg = {"duration": "5ms", "topology": {"kind": "incast", "incast": {"hosts": 5}},
           "traffic": {"incast": [{"response_size": "20KB", "queries": 4}]}}
    r = fabricsim.run(cfg, out=tmp_path / "pa")
    q = r.queries
    assert list(q.columns) == ["group", "query", "start_us", "end_us", "qct_us", "timeouts"]
    assert len(q) == 4 and (q["qct_us"] > 0).all()
    m = r.metrics
    g = r.summary["incast"][0]
    assert m["incast.queries_completed"] == 4 and m["incast.qct_us.p99"] == g["qct_us"]["p99"]
    assert m["incast.qct_us.max"] == pytest.approx(q["qct_us"].max(), abs=1e-3)
    assert m["tcp.flows"] == r.summary["tcp"]["flows"] > 0


def test_messages_on_persistent_connections(sim, tmp_path):
    # A workload over persistent connections: messages.csv through Result.messages, and the
    # messages counted in the FCT metrics.
    cfg = tmp_path / "m.yaml"
    cfg.write_text("duration: 20ms\ntopology: {kind: incast, host_rate: 1Gbps, incast: {hosts: 3}}\n"
                   "traffic: {workload: [{pattern: many_to_one, target: h0, load: 0.2, sizes: fixed,\n"
                   "  size: 4KB, connections: 2, request_size: 64B, stop: 15ms}]}\n")
    sim(cfg, "--out", tmp_path / "m", "--quiet")
    r = fabricsim.load_result(tmp_path / "m")
    m = r.messages
    assert list(m.columns) == ["workload", "message", "src", "dst", "connection_flow", "size_bytes",
                               "start_us", "dispatch_us", "end_us", "fct_us", "timeouts",
                               "ideal_fct_us", "slowdown"]
    w = r.summary["messages"][0]
    assert len(m) == w["messages"] == w["completed"] > 10 and w["connections"] == 4
    assert (m.dst == "h0").all() and (m.fct_us >= m.ideal_fct_us - 1e-3).all()
    assert r.metrics["fct.all.completed"] == len(m)
    assert len(r.flows) == 8  # per connection a data flow and a request flow


def test_schema_gives_kind_and_the_unit_of_plain_numbers():
    params = {p["path"]: p for p in fabricsim.schema()}
    assert {k: (params[k]["kind"], params[k]["unit"]) for k in (
        "duration", "switch.buffer", "switch.port_cap", "topology.host_rate", "seed", "results.format")} == {
        "duration": ("time", "s"), "switch.buffer": ("bytes", "B"), "switch.port_cap": ("size", "B"),
        "topology.host_rate": ("bit_rate", "bps"), "seed": ("int", ""), "results.format": ("choice", "")}
    assert params["duration"]["min"] == 1e-9  # 1 ns, in seconds like the numbers
    assert params["results.format"]["choices"] == ["csv", "parquet"] and params["results.format"]["default"] == "csv"


def test_plain_and_numpy_numbers_in_base_units(default_yaml, tmp_path):
    import numpy as np
    text = fabricsim.run(default_yaml, out=tmp_path / "text", overrides={
        "duration": "2ms", "switch.port_cap": "100KB", "topology.host_rate": "10Gbps", "traffic.flows[0].start": "5us"})
    nums = fabricsim.run(default_yaml, out=tmp_path / "nums", overrides={
        "duration": np.float64(0.002), "switch.port_cap": np.int64(100_000), "topology.host_rate": 1e10,
        "traffic.flows[0].start": 5e-6})
    assert deterministic(nums.summary) == {**deterministic(text.summary), "config": nums.summary["config"]}
    assert nums.config["duration"] == "2ms" and nums.config["switch"]["port_cap"] == "100000B"
    # a nested dict config takes numbers too
    r = fabricsim.run({"duration": 0.001, "switch": {"buffer": 2 ** 20, "port_cap": 0},
                       "traffic": {"flows": [{"src": "h0", "dst": "h3", "rate": 1e9, "start": 1e-5}]}},
                      out=tmp_path / "dict")
    assert r.config["switch"]["buffer"] == "1048576B" and r.config["traffic"]["flows"][0]["rate"] == "1000000000bps"
    for override, message in [({"switch.buffer": 1000.5}, "switch.buffer: 1000.5 is not a whole number of bytes"),
                              ({"duration": 1e-13}, "duration: 1e-13 is not a whole number of picoseconds"),
                              ({"topology.host_rate": float("nan")}, "topology.host_rate: nan is not a finite number"),
                              ({"seed": 1.5}, "seed: 1.5 is not a whole number")]:
        with pytest.raises(fabricsim.ConfigError) as ei:
            fabricsim.run(default_yaml, overrides=override)
        assert str(ei.value).startswith(message) and ei.value.key == next(iter(override))


def test_per_index_keys_take_lists_and_maps_of_plain_numbers(default_yaml):
    import numpy as np
    params = {p["path"]: p for p in fabricsim.schema()}
    assert params["switch.mmu.queue_min"]["indices"] == 8 and params["switch.buffer"]["indices"] == 0
    assert params["switch.mmu.pool_size"]["indices"] == 4
    v = fabricsim.validate(default_yaml, overrides={
        "switch.mmu.queue_min": [0, 2080], "switch.mmu.queue_alpha": {3: 2, 5: np.float64(0.5)},
        "switch.mmu.pool_size": {np.int64(2): 100_000}, "switch.mmu.queue_pool": {1: 2}})
    mmu = v["config"]["switch"]["mmu"]
    assert mmu["queue_min"] == ["0B", "2080B"]
    assert mmu["queue_alpha"] == {"3": 2.0, "5": 0.5}
    assert mmu["pool_size"] == {"2": "100000B"} and mmu["queue_pool"] == {"1": 2}
    with pytest.raises(fabricsim.ConfigError) as ei:
        fabricsim.validate(default_yaml, overrides={"switch.mmu.queue_min": {1: 1000.5}})
    assert ei.value.key == "switch.mmu.queue_min[1]" and "is not a whole number of bytes" in str(ei.value)
    with pytest.raises(fabricsim.ConfigError) as ei:
        fabricsim.validate(default_yaml, overrides={"switch.mmu.queue_alpha": {9: 1}})
    assert str(ei.value) == "switch.mmu.queue_alpha[9]: index out of range: there are 8 queues"


def test_temporary_results_folder_lives_as_long_as_the_result(default_yaml):
    import gc
    r = fabricsim.run(default_yaml, overrides=SHORT)
    path = r.path
    assert (path / "summary.json").exists() and len(r.flows) == 5
    del r
    gc.collect()
    assert not path.exists()
    kept = fabricsim.run(default_yaml, overrides=SHORT, keep=True)
    path = kept.path
    del kept
    gc.collect()
    assert (path / "summary.json").exists()
    import shutil
    shutil.rmtree(path)


def test_a_non_empty_results_folder_needs_overwrite(default_yaml, tmp_path):
    out = tmp_path / "r"
    fabricsim.run(default_yaml, out=out, overrides=SHORT)
    (out / "stale.pcap").write_text("from another run")
    with pytest.raises(FileExistsError, match="results folder is not empty"):
        fabricsim.run(default_yaml, out=out, overrides=SHORT)
    r = fabricsim.run(default_yaml, out=out, overrides=SHORT, overwrite=True)
    assert not (out / "stale.pcap").exists() and r.summary["frames"]["conserved"]


def test_shipped_scenarios():
    names = fabricsim.scenarios.names()
    assert "default" in names and "incast_dctcp" in names
    p = fabricsim.scenarios.path("default")
    assert p.name == "default.yaml" and "dumbbell" in p.read_text()
    assert fabricsim.validate(p)["name"] == "default"
    assert "websearch" in fabricsim.scenarios.workloads()
    assert fabricsim.scenarios.workload_path("websearch").read_text().count("\n") > 5
    with pytest.raises(KeyError, match="no scenario named 'nope' \\(known: .*default"):
        fabricsim.scenarios.path("nope")


def test_relative_files_resolve_against_the_scenario_and_travel_with_the_run(tmp_path, monkeypatch):
    """Needs the native base_dir/files of validate() and run() (helper A's part of issue 19)."""
    d = tmp_path / "scenario"
    d.mkdir()
    (d / "my_sizes.csv").write_text("size_bytes,cdf\n1000,0\n1000,0.5\n20000,0.5\n20000,1\n")
    (d / "w.yaml").write_text("duration: 3ms\ntopology: {kind: incast, incast: {hosts: 5}}\n"
                              "traffic: {workload: [{pattern: all_to_all, load: 0.3, sizes: my_sizes.csv}]}\n")
    monkeypatch.chdir(tmp_path)  # not the scenario's folder
    src = fabricsim.config.make_source("scenario/w.yaml")
    assert src["base_dir"] == str(d)
    info = fabricsim.config.validate_source(src)
    assert info["files"] == {str(d / "my_sizes.csv"): (d / "my_sizes.csv").read_text()}
    src["files"] = info["files"]
    (d / "my_sizes.csv").unlink()  # the worker uses the content shipped with the source
    from fabricsim.runner import run_isolated
    s = run_isolated(src, tmp_path / "out")
    assert s["fct"]["all"]["flows"] > 0
