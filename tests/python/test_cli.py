"""The fabricsim-sim CLI: running, determinism, pcap dissection and bad input."""
import csv
import json
import os
import re
import resource
import signal
import struct
import subprocess
import sys
import time

import pytest

from conftest import ROOT, default_sigint


def strip_wallclock(summary):
    summary = dict(summary)
    summary.pop("host_perf")
    return summary


def test_default_scenario_runs_and_writes_results(sim, scenarios, tmp_path):
    out = tmp_path / "r"
    p = sim(scenarios / "default.yaml", "--out", out)
    assert "frames delivered" in p.stdout
    s = json.loads((out / "summary.json").read_text())
    fr = s["frames"]
    assert fr["conserved"]
    assert fr["sent"] == fr["delivered"] + fr["dropped"] + fr["in_flight"]
    assert fr["dropped_by_cause"]["port_cap"] > 0  # 12 Gbps into a 10 Gbps bottleneck
    assert s["config"]["switch"]["buffer"] == "4MiB"
    assert s["config"]["switch"]["mode"] == "store_and_forward"  # defaults are echoed
    header = (out / "flows.csv").read_text().splitlines()[0]
    assert header.startswith("id,src,dst,process,rate_bps")
    ts = (out / "timeseries.csv").read_text().splitlines()
    assert ts[0].startswith("time_us,s0.buffer_cell_bytes")
    assert len(ts) == 1 + 500  # 5 ms sampled every 10 us
    assert max(int(r.split(",")[1]) for r in ts[1:]) > 100_000
    perf = s["host_perf"]
    assert 0 < perf["cpu_time_s"] <= perf["wall_time_s"] * 1.01
    assert 0 < perf["elaboration_s"] < 60  # building the platform, before the first slice
    assert perf["frame_hops_per_cpu_s"] == pytest.approx(s["kernel"]["frame_hops"] / perf["cpu_time_s"])


def test_same_seed_gives_identical_results(sim, scenarios, tmp_path):
    args = [scenarios / "default.yaml", "--set", "traffic.flows[4].process=poisson", "--quiet"]
    sim(*args, "--out", tmp_path / "a")
    sim(*args, "--out", tmp_path / "b")
    sa = json.loads((tmp_path / "a" / "summary.json").read_text())
    sb = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert strip_wallclock(sa) == strip_wallclock(sb)
    assert (tmp_path / "a" / "flows.csv").read_bytes() == (tmp_path / "b" / "flows.csv").read_bytes()
    assert (tmp_path / "a" / "timeseries.csv").read_bytes() == (tmp_path / "b" / "timeseries.csv").read_bytes()
    sim(*args, "--set", "seed=2", "--out", tmp_path / "c")
    sc = json.loads((tmp_path / "c" / "summary.json").read_text())
    assert sc["frames"]["delivered"] != sa["frames"]["delivered"]  # the seed matters


def test_running_ahead_of_the_kernel_changes_nothing(sim, scenarios, tmp_path):
    """The scheduler's run-ahead only saves kernel wake-ups: lock-step gives the same bytes."""
    args = [scenarios / "default.yaml", "--set", "traffic.flows[4].process=poisson", "--quiet"]
    sim(*args, "--out", tmp_path / "ahead")
    sim(*args, "--lockstep", "--out", tmp_path / "lock")
    sa = json.loads((tmp_path / "ahead" / "summary.json").read_text())
    sl = json.loads((tmp_path / "lock" / "summary.json").read_text())
    assert sl["kernel"]["systemc_wakeups"] > 10 * sa["kernel"]["systemc_wakeups"]
    for s in (sa, sl):
        del s["kernel"]["systemc_wakeups"]
    assert strip_wallclock(sa) == strip_wallclock(sl)
    for name in ("flows.csv", "timeseries.csv"):
        assert (tmp_path / "ahead" / name).read_bytes() == (tmp_path / "lock" / name).read_bytes()


def test_sampling_does_not_wake_the_kernel(sim, scenarios, tmp_path):
    """The time series is sampled by the model scheduler: a run sampled every 10 us wakes the
    SystemC kernel as often as an unsampled one (an sc_event per sample cut every run-ahead
    window: one wake-up per sample at least), and simulates the same."""
    args = [scenarios / "default.yaml", "--set", "duration=2ms", "--quiet"]
    sim(*args, "--set", "results.sample_interval=10us", "--out", tmp_path / "on")
    sim(*args, "--set", "results.sample_interval=0s", "--out", tmp_path / "off")
    on = json.loads((tmp_path / "on" / "summary.json").read_text())
    off = json.loads((tmp_path / "off" / "summary.json").read_text())
    assert len((tmp_path / "on" / "timeseries.csv").read_text().splitlines()) == 1 + 200
    assert on["kernel"]["systemc_wakeups"] == off["kernel"]["systemc_wakeups"] < 200
    assert on["kernel"]["activations"] == off["kernel"]["activations"]


def test_pcap_dissects_without_malformed_packets(sim, scenarios, tmp_path, tshark):
    out = tmp_path / "p"
    sim(scenarios / "default.yaml", "--set", "duration=1100us", "--set", "results.pcap=[h0, 's0:4', h5]",
        "--set", "traffic.flows[0].pcp=3", "--out", out, "--quiet")
    for name in ["h0.pcap", "s0.4.pcap", "h5.pcap"]:
        p = subprocess.run([tshark, "-r", str(out / name), "-V"], capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        assert "Malformed" not in p.stdout
        assert "Expert Info (Error" not in p.stdout
        assert "User Datagram Protocol" in p.stdout
    p = subprocess.run([tshark, "-r", str(out / "h0.pcap"), "-T", "fields", "-e", "vlan.priority", "-e", "ip.len",
                        "-e", "ip.checksum.status"], capture_output=True, text=True)
    first = p.stdout.splitlines()[0].split("\t")
    assert first[0] == "3" and first[1] == "1500"


@pytest.mark.parametrize("override, message", [
    ("switch.bufer=1MiB", "switch.bufer: unknown key"),
    ("switch={'shaper.rate': 5Gbps}", "switch.shaper.rate: a key cannot contain '.'"),
    ("switch.buffer=4", "switch.buffer: '4' needs a byte unit"),
    ("topology.host_rate=10GB", "topology.host_rate: '10GB' needs a bit-rate unit"),
    ("phy.ber=0.5", "phy.ber: '0.5' is above the maximum"),
    ("switch.port_cap=64MiB", "switch.port_cap: is larger than switch.buffer"),
    ("traffic.flows[0].dst=h99", "traffic.flows[0].dst: no host named 'h99'"),
    ("traffic.flows[9].rate=1Gbps", "traffic.flows[9]: no such list element"),
    ("switch.mmu.queue_min=200KB", "switch.mmu: switch 's0': reserves"),
    ("switch.mmu.lossless_pgs=[3]", "switch.mmu.lossless_pool: is 0 but lossless_pgs"),
    ("switch.ecn.max_th=10KB", "switch.ecn.max_th: is below min_th"),
    ("switch.ecn.max_th=100pkt", "switch.ecn.max_th: must use the same unit as min_th"),
    ("switch.scheduler.quanta=[1538B]", "switch.scheduler.quanta: needs one quantum per queue (8)"),
    ("switch.scheduler.quanta=[1538B,1538B,1538B,1538B,1538B,1538B,1538B,17MiB]",
     "switch.scheduler.quanta: entry 7 must be 64B to 16MiB, got 17825792B"),
    ("switch.buffer=1024GiB", "the buffer has 5286113595 cells, more than the model counts (2^32 - 1)"),
    ("switch.qos.dscp_to_tc=['46:9']", "switch.qos.dscp_to_tc: '9' is not an integer in 0..7"),
    ("switch.ecn={scope: port, queue_threshold: mq_ecn}", "switch.ecn.queue_threshold: 'mq_ecn' needs scope 'queue'"),
    ("traffic.flows[0].transport=tcp", "traffic.flows[0].rate: applies to UDP flows only"),
    ("traffic.flows[4]={src: h5, dst: h1, size: 1MB}", "traffic.flows[4].size: applies to TCP, RoCE and ExpressPass flows only"),
    ("tcp.cc=bbr", "tcp.cc: 'bbr' is not one of"),
    ("tcp.min_rto=2s", "tcp.initial_rto: must lie between tcp.min_rto and tcp.max_rto"),
    ("tcp.rwnd=1000B", "tcp.rwnd: is smaller than one segment"),
    ("traffic.flows[0]={src: h0, dst: h4, transport: roce, cc: dctcp}",
     "traffic.flows[0].cc: applies to TCP flows only"),
    ("roce.mtu=1500", "roce.mtu: '1500' is not one of: 256, 512, 1024, 2048, 4096"),
    ("nic.dcqcn={mode: paper, min_rate: 20Gbps}",
     "nic.dcqcn.min_rate: host 'h0' (10Gbps): must not exceed the line rate"),
    ("nic.dcqcn.g=2", "nic.dcqcn.g: '2' is above the maximum 1"),
    ("traffic.workload=[{transport: roce, cc: dctcp}]",
     "traffic.workload[0].cc: applies to TCP workloads only"),
    ("traffic.workload=[{sizes: websurch}]", "traffic.workload[0].sizes: unknown distribution 'websurch'"),
    ("traffic.workload=[{sizes: fixed}]", "traffic.workload[0].size: is required with sizes: fixed"),
    ("traffic.workload=[{sizes: /nonexistent.csv}]", "traffic.workload[0].sizes: cannot read /nonexistent.csv"),
    ("traffic.workload=[{sizes: fixed, size: 1KB, load: 0.9, max_flows: 10}]",
     "traffic.workload[0].max_flows: the workload would generate more than 10 flows"),
    ("traffic.incast=[{workers: 40}]", "traffic.incast[0].workers: asks for 40 workers but the topology has 7"),
    ("traffic.incast=[{response_size: 1KB, total_response: 1MB}]", "traffic.incast[0].total_response: give either"),
])
def test_bad_input_exits_2_naming_the_key(sim, scenarios, override, message):
    p = sim(scenarios / "default.yaml", "--set", override, check=False)
    assert p.returncode == 2
    assert message in p.stderr
    assert "Traceback" not in p.stderr and "Segmentation" not in p.stderr


def test_bad_yaml_and_missing_file(sim, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("topology: [unclosed\n")
    p = sim(bad, check=False)
    assert p.returncode == 2 and "YAML syntax error" in p.stderr
    p = sim(tmp_path / "nope.yaml", check=False)
    assert p.returncode == 2 and "cannot read scenario file" in p.stderr


def test_explain_and_validate(sim, scenarios):
    p = sim("explain", "switch.port_cap")
    assert "default: 600KB" in p.stdout
    assert sim("explain", "no.such", check=False).returncode == 2
    p = sim("validate", scenarios / "default.yaml")
    assert "valid (8 hosts, 2 switches, 9 links, 5 flows)" in p.stdout


def _mqecn_run(sim, scenarios, out, *sets):
    """Runs the MQ-ECN static-flow scenario; returns (service 1 Mbps, service 2 Mbps, mean bytes
    in service 2's queue after 20 ms, port stats)."""
    args = []
    for kv in sets:
        args += ["--set", kv]
    sim(scenarios / "mqecn_static_flows.yaml", "--out", out, "--quiet", *args)
    s = json.loads((out / "summary.json").read_text())
    assert s["frames"]["conserved"]
    secs = s["sim_time_s"]
    g = [f["rx_bytes"] * 8 / secs / 1e6 for f in s["flows"]]
    with open(out / "timeseries.csv") as f:
        rows = [r for r in csv.DictReader(f) if float(r["time_us"]) >= 20000]
    q1 = sum(int(r["tor.p2q1_frame_bytes"]) for r in rows) / len(rows)
    return g[0], sum(g[1:]), q1, s["switches"]["tor"]["ports"][2]


def test_mqecn_static_flows_with_dctcp(sim, scenarios, tmp_path):
    """MQ-ECN §5.1.1 (Fig. 6): 1 vs 4 DCTCP flows in two equal DWRR queues get equal goodput,
    ~936 Mbps in total; MQ-ECN halves each busy queue's threshold (T_round = 2 quanta)."""
    s1, s2, _, port = _mqecn_run(sim, scenarios, tmp_path / "mq")
    assert s1 / (s1 + s2) == pytest.approx(0.5, abs=0.05)
    assert s1 + s2 > 920
    assert port["mq_ecn"]["t_round_us"] == pytest.approx(24.608, rel=0.02)
    assert port["queues"][0]["ecn_threshold_scale"] == pytest.approx(0.5, rel=0.02)
    assert port["rate_bps"] == 1_000_000_000


def test_mqecn_halves_queueing_against_the_standard_threshold(sim, scenarios, tmp_path):
    """Fig. 6(b): the standard per-queue threshold keeps the same split but about twice the
    queue (paper: ping RTT 651 vs 441 us over a ~250 us base)."""
    _, _, mq, _ = _mqecn_run(sim, scenarios, tmp_path / "mq")
    s1, s2, std, _ = _mqecn_run(sim, scenarios, tmp_path / "std", "switch.ecn.queue_threshold=standard")
    assert s1 / (s1 + s2) == pytest.approx(0.5, abs=0.05)
    assert std > 1.6 * mq


def test_per_port_ecn_breaks_weighted_fair_sharing(sim, scenarios, tmp_path):
    """§2.2.3 (Fig. 3): with one port-wide threshold (K = 16 pkt) every flow sees the same
    marks, so the queue with 4 flows takes more than its half (paper: 403 vs 539 Mbps)."""
    s1, s2, _, _ = _mqecn_run(sim, scenarios, tmp_path / "port", "switch.ecn.scope=port",
                              "switch.ecn.queue_threshold=standard", "switch.ecn.k=16pkt")
    assert s2 / (s1 + s2) > 0.55
    assert s1 + s2 > 920



def test_tcp_workload_runs_are_deterministic(sim, tmp_path):
    """Same config and seed: identical summary (minus wall clock), flows, queries and traces."""
    scenario = tmp_path / "tcp.yaml"
    scenario.write_text(
        "duration: 10ms\n"
        "topology: {kind: leaf_spine, leaf_spine: {leaves: 2, spines: 2, hosts_per_leaf: 4}}\n"
        "switch: {queues: 1, ecn: {mode: step, k: 65pkt}}\n"
        "tcp: {cc: dctcp}\n"
        "traffic:\n"
        "  workload: [{load: 0.6, sizes: websearch}]\n"
        "  incast: [{aggregator: h0, workers: 5, total_response: 100KB, queries: 5}]\n"
        "  flows: [{src: h1, dst: h6, transport: tcp, trace: true}]\n")
    outs = []
    for name in ("a", "b"):
        sim(scenario, "--out", tmp_path / name, "--quiet")
        outs.append(tmp_path / name)
    a, b = (json.loads((o / "summary.json").read_text()) for o in outs)
    assert strip_wallclock(a) == strip_wallclock(b)
    assert a["fct"]["all"]["completed"] > 10
    for f in ("flows.csv", "queries.csv", "traces/flow0.csv"):
        assert (outs[0] / f).read_bytes() == (outs[1] / f).read_bytes()
    # The config echo (every default filled in) reproduces the run.
    sim(outs[0] / "config.yaml", "--out", tmp_path / "echo", "--quiet")
    assert (tmp_path / "echo" / "flows.csv").read_bytes() == (outs[0] / "flows.csv").read_bytes()


def test_idle_network_ideal_is_a_tight_lower_bound_of_fct(sim, tmp_path):
    """A one-segment flow on an idle rack completes in exactly the ideal time (up to the
    switch's clock rounding); longer flows (slow start) never beat it."""
    scenario = tmp_path / "ideal.yaml"
    scenario.write_text(
        "duration: 5ms\n"
        "topology: {kind: incast, incast: {hosts: 3}}\n"
        "traffic:\n"
        "  flows:\n"
        "    - {src: h0, dst: h2, transport: tcp, size: 1000B}\n"
        "    - {src: h1, dst: h2, transport: tcp, size: 100KB, start: 1ms}\n"
        "    - {src: h0, dst: h1, transport: tcp, size: 1MB, start: 2ms}\n")
    sim(scenario, "--out", tmp_path / "r", "--quiet")
    with open(tmp_path / "r" / "flows.csv") as f:
        rows = list(csv.DictReader(f))
    slow = [float(r["slowdown"]) for r in rows]
    assert slow[0] == pytest.approx(1.0, abs=0.002)
    assert all(s >= 1.0 for s in slow)


def test_incast_first_window_losses_wait_for_min_rto_not_the_initial_rto(sim, scenarios, tmp_path):
    """30 workers x initial window 10 overflow the 100-packet buffer in the first query. The
    senders start with their handshake's RTT sample, so those losses cost min_rto (10 ms),
    not RFC 6298's 1 s initial RTO."""
    sim(scenarios / "incast_dctcp.yaml", "--set", "traffic.incast[0].queries=10", "--set", "duration=1s",
        "--out", tmp_path / "i", "--quiet")
    g = json.loads((tmp_path / "i" / "summary.json").read_text())["incast"][0]
    assert g["queries_completed"] == 10
    assert g["queries_with_timeouts"] >= 1
    assert g["qct_us"]["max"] < 50_000


# --- results you can trust (issue 19) ---

def _sim_exe():
    return os.environ.get("FABRICSIM_SIM", str(ROOT / "build" / "platforms" / "fabricsim-sim"))


def _env():
    return dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")


def test_timeseries_times_are_exact(sim, tmp_path):
    """1.2 s sampled every 3 us: 400 000 rows, 400 000 distinct times (6 significant digits
    used to collapse them to 353 335)."""
    scenario = tmp_path / "tiny.yaml"
    scenario.write_text("duration: 1.2s\n"
                        "topology: {kind: incast, incast: {hosts: 2}}\n"
                        "results: {sample_interval: 3us, per_queue_series: false}\n")
    sim(scenario, "--out", tmp_path / "r", "--quiet")
    with open(tmp_path / "r" / "timeseries.csv") as f:
        times = [line.split(",", 1)[0] for line in f][1:]
    assert len(times) == 400_000
    assert len(set(times)) == 400_000
    assert times[-1] == "1199997" and times[1] == "3"


def test_csv_numbers_are_exact(sim, scenarios, tmp_path):
    """flows.csv times are exact microseconds and reals round-trip (no fixed 4 decimals)."""
    sim(scenarios / "default.yaml", "--set", "traffic.flows[3].start=1.0000005ms", "--out", tmp_path / "r", "--quiet")
    s = json.loads((tmp_path / "r" / "summary.json").read_text())
    with open(tmp_path / "r" / "flows.csv") as f:
        rows = list(csv.DictReader(f))
    assert rows[3]["start_us"] == "1000.0005"
    for row, flow in zip(rows, s["flows"]):
        assert float(row["latency_mean_us"]) == flow["latency_mean_us"]
        assert float(row["latency_max_us"]) == flow["latency_max_us"]


def _limited(limit):
    def pre():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes fail with EFBIG instead
    return pre


@pytest.mark.parametrize("sets, limit, failing", [
    (["results.pcap=[]"], 50_000, "timeseries.csv"),
    (["results.sample_interval=0s"], 50_000, "h0.pcap"),
    (["results.sample_interval=0s", "results.pcap=[]"], 50_000, "summary.json"),
    ([], 1000, "config.yaml"),
])
def test_a_failed_write_exits_1_naming_the_file(scenarios, tmp_path, sets, limit, failing):
    args = [_sim_exe(), str(scenarios / "default.yaml"), "--out", str(tmp_path / "r"), "--quiet"]
    for kv in sets:
        args += ["--set", kv]
    p = subprocess.run(args, capture_output=True, text=True, env=_env(), preexec_fn=_limited(limit), timeout=60)
    assert p.returncode == 1, p.stderr
    assert p.stderr == f"fabricsim-sim: cannot write {tmp_path / 'r' / failing}: File too large\n"


def test_a_failed_write_raises_in_python(scenarios, tmp_path):
    code = ("import sys\nfrom fabricsim._native import native\n"
            "try:\n"
            f"    native.run({str(scenarios / 'default.yaml')!r}, True, ['results.pcap=[]'], '', {str(tmp_path / 'r')!r})\n"
            "except RuntimeError as e:\n"
            "    print(e)\n    sys.exit(3)\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env(),
                       preexec_fn=_limited(50_000), timeout=60)
    assert p.returncode == 3, p.stderr
    assert p.stdout == f"cannot write {tmp_path / 'r' / 'timeseries.csv'}: File too large\n"


def test_a_failed_write_is_a_run_error_from_fabricsim_run(scenarios, tmp_path):
    """The whole Python path: the worker's failed write reaches the caller as RunError naming
    the file (it used to return normally with empty files)."""
    code = ("import sys, fabricsim\n"
            "try:\n"
            f"    fabricsim.run({str(scenarios / 'default.yaml')!r}, out={str(tmp_path / 'r')!r},"
            " overrides={'results.pcap': []})\n"
            "except fabricsim.RunError as e:\n"
            "    print(e.kind, str(e).splitlines()[0])\n    sys.exit(3)\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env(),
                       preexec_fn=_limited(50_000), timeout=120)
    assert p.returncode == 3, p.stdout + p.stderr
    assert p.stdout.startswith("error ") and f"cannot write {tmp_path / 'r' / 'timeseries.csv'}" in p.stdout


def test_a_results_folder_holds_one_run(sim, scenarios, tmp_path):
    out = tmp_path / "r"
    sim(scenarios / "default.yaml", "--set", "duration=2ms", "--out", out, "--quiet")
    assert (out / "h0.pcap").exists() and (out / "timeseries.csv").exists()
    second = [scenarios / "default.yaml", "--set", "duration=2ms", "--set", "results.pcap=[]",
              "--set", "results.sample_interval=0s", "--out", out, "--quiet"]
    p = sim(*second, check=False)
    assert p.returncode == 2
    assert f"out: results folder '{out}' is not empty" in p.stderr and "use --overwrite" in p.stderr
    sim(*second, "--overwrite")
    assert sorted(f.name for f in out.iterdir()) == ["config.yaml", "flows.csv", "summary.json"]


def test_overwrite_refuses_a_folder_that_is_not_a_results_folder(sim, scenarios, tmp_path):
    (tmp_path / "notes.txt").write_text("keep me")
    p = sim(scenarios / "default.yaml", "--set", "duration=2ms", "--out", tmp_path, "--overwrite", check=False)
    assert p.returncode == 2
    assert "does not look like a results folder (no summary.json or config.yaml); refusing to clear it" in p.stderr
    assert sorted(f.name for f in tmp_path.iterdir()) == ["notes.txt"]


def test_latency_percentiles_lie_within_the_observed_range_and_names_say_their_unit(sim, scenarios, tmp_path):
    p = sim(scenarios / "default.yaml", "--out", tmp_path / "r")
    s = json.loads((tmp_path / "r" / "summary.json").read_text())
    lat = s["latency_us"]
    assert lat["max"] == max(f["latency_max_us"] for f in s["flows"])
    assert lat["min"] <= lat["p50"] <= lat["p99"] <= lat["p999"] <= lat["max"]
    assert lat["p999"] == lat["max"]  # the histogram's bucket edge lies above the largest latency
    sw = s["switches"]["s0"]
    assert {"buffer_used_cell_bytes", "buffer_peak_cell_bytes"} <= sw.keys()
    assert {"buffer_used_bytes", "buffer_peak_bytes"}.isdisjoint(sw.keys())
    assert "egress_peak_cell_bytes" in sw["pools"]["lossy"]
    port = sw["ports"][4]
    assert port["queue_peak_cell_bytes"] == 299520 and port["queue_frame_bytes"] >= 0
    assert port["queues"][0]["peak_frame_bytes"] > 0 and "queued_frame_bytes" in port["queues"][0]
    assert "peak queue (cells x cell size, B)" in p.stdout


def _start(args):
    return subprocess.Popen([_sim_exe(), *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(),
                            preexec_fn=default_sigint)


@pytest.mark.parametrize("sig, status, name", [(signal.SIGINT, 130, "SIGINT"), (signal.SIGTERM, 143, "SIGTERM")])
def test_a_signal_stops_the_run_cleanly_with_its_results(scenarios, tmp_path, sig, status, name):
    """A 20 s dumbbell run stopped after ~1 s: results up to the time reached, marked incomplete."""
    out = tmp_path / "r"
    p = _start([scenarios / "default.yaml", "--set", "duration=20s", "--set", "results.sample_interval=0s",
                "--set", "results.pcap=[]", "--out", out, "--progress"])
    time.sleep(1.5)
    assert p.poll() is None
    p.send_signal(sig)
    stdout, stderr = (b.decode() for b in p.communicate(timeout=30))
    assert p.returncode == status, stderr
    s = json.loads((out / "summary.json").read_text())
    assert s["complete"] is False and s["stop_reason"] == name
    assert 0 < s["sim_time_s"] < 20
    assert s["frames"]["conserved"]
    assert (out / "flows.csv").exists() and (out / "config.yaml").exists()
    assert f"stopped by {name}" in stderr
    assert re.search(r"\r  [0-9.]+ s of 20\.000 s simulated \([0-9.]+%\)  [0-9.]+ M frame-hops/s  ETA", stderr)
    assert f"(stopped early by {name})" in stdout


def test_a_complete_run_says_so_and_prints_no_progress_off_a_terminal(sim, scenarios, tmp_path):
    p = sim(scenarios / "default.yaml", "--set", "duration=2ms", "--out", tmp_path / "r")
    s = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert s["complete"] is True and "stop_reason" not in s
    assert p.stderr == ""


def test_python_native_run_returns_the_partial_summary_on_sigint(scenarios, tmp_path):
    code = ("import json, signal\nfrom fabricsim._native import native\n"
            f"s = json.loads(native.run({str(scenarios / 'default.yaml')!r}, True, "
            "['duration=20s', 'results.sample_interval=0s', 'results.pcap=[]'], '', "
            f"{str(tmp_path / 'r')!r}))\n"
            "print(s['complete'], s['stop_reason'], signal.getsignal(signal.SIGINT) is signal.default_int_handler)\n")
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=_env(), preexec_fn=default_sigint)
    time.sleep(2.5)  # interpreter start-up and import, then about a second of simulation
    p.send_signal(signal.SIGINT)
    stdout, stderr = p.communicate(timeout=30)
    assert p.returncode == 0, stderr
    assert stdout == "False SIGINT True\n"  # and Python's own handler is back


@pytest.mark.parametrize("sets, part", [
    (["results.sample_interval=1ps"], "timeseries.csv 3.98 TB: 5e+09 rows of 796 B; pcaps 6.25 MB; traces 0 B"),
    (["duration=1000s", "results.sample_interval=0s", "results.pcap_max_bytes=1000GB"],
     "timeseries.csv 0 B; pcaps 1 TB; traces 0 B"),  # 1.25 TB at line rate, capped
    (["duration=1000s", "results.sample_interval=0s", "results.pcap=[]",
      "traffic.flows=[{src: h0, dst: h4, transport: tcp, trace: true}]"], "pcaps 0 B; traces 104 GB"),
])
def test_output_larger_than_the_limit_is_refused_before_the_run(sim, scenarios, sets, part):
    args = ["validate", scenarios / "default.yaml"]
    for kv in sets:
        args += ["--set", kv]
    p = sim(*args, check=False)
    assert p.returncode == 2
    assert "results.max_output_bytes: the results would take about" in p.stderr
    assert "more than the limit of 4.29 GB (4294967296 B): " in p.stderr
    assert part in p.stderr


def test_the_output_limit_has_a_floor(sim, scenarios):
    p = sim("validate", scenarios / "default.yaml", "--set", "results.max_output_bytes=1KB", check=False)
    assert p.returncode == 2
    assert "results.max_output_bytes: '1KB' is below the minimum 1MiB" in p.stderr


def test_the_pcap_cap_bounds_a_long_capture(sim, scenarios):
    """A pcap on a 1e6 s run passes: its cap (results.pcap_max_bytes, 1 GiB) bounds the estimate."""
    p = sim("validate", scenarios / "default.yaml", "--set", "duration=1000000s", "--set", "results.sample_interval=0s")
    assert "valid" in p.stdout


def _pcap_records(path):
    data = path.read_bytes()
    magic, _, _, _, _, snaplen, link = struct.unpack("<IHHiIII", data[:24])
    assert magic == 0xa1b23c4d and link == 1
    records, pos = [], 24
    while pos < len(data):
        sec, nsec, incl, orig = struct.unpack("<IIII", data[pos:pos + 16])
        records.append((sec * 1_000_000_000 + nsec, incl, orig))
        pos += 16 + incl
    assert pos == len(data)
    return snaplen, records


def test_pcap_snaplen_window_and_cap(sim, scenarios, tmp_path):
    base = [scenarios / "default.yaml", "--set", "duration=3ms", "--set", "results.sample_interval=0s", "--quiet"]
    sim(*base, "--set", "results.pcap_snaplen=100B", "--set", "results.pcap_start=1ms",
        "--set", "results.pcap_stop=2ms", "--out", tmp_path / "cut")
    snaplen, recs = _pcap_records(tmp_path / "cut" / "h0.pcap")
    assert snaplen == 100
    assert len(recs) == 244  # 3 Gbit/s of 1538-byte wire slots for 1 ms
    assert all(incl == 100 and orig == 1514 for _, incl, orig in recs)
    assert all(1_000_000 <= t < 2_000_000 for t, _, _ in recs)

    sim(*base, "--set", "results.pcap_max_bytes=10KB", "--out", tmp_path / "cap")
    size = (tmp_path / "cap" / "h0.pcap").stat().st_size
    _, recs = _pcap_records(tmp_path / "cap" / "h0.pcap")
    assert size <= 10_000 and len(recs) == 6
    s = json.loads((tmp_path / "cap" / "summary.json").read_text())
    assert s["pcap"]["h0.pcap"] == {"frames": 6, "bytes": size, "frames_not_captured": s["flows"][0]["sent_frames"] - 6}


def test_version(sim):
    assert re.fullmatch(r"fabricsim-sim 0\.1\.0 \(SystemC \d+\.\d+\.\d+\)\n", sim("--version").stdout)


def test_seed_option_sets_the_seed(sim, scenarios, tmp_path):
    sim(scenarios / "default.yaml", "--set", "duration=2ms", "--seed", "7", "--out", tmp_path / "s", "--quiet")
    s = json.loads((tmp_path / "s" / "summary.json").read_text())
    assert s["seed"] == 7 and s["config"]["seed"] == 7


def test_a_closed_pipe_ends_quietly(scenarios, tmp_path):
    """The reader is gone before anything is printed (`| head -1` on a long table): no message,
    exit 0 (the results folder is complete; the table is only a copy)."""
    for args in (["explain"], [scenarios / "default.yaml", "--set", "duration=2ms", "--out", tmp_path / "p"]):
        p = _start(args)
        p.stdout.close()
        assert p.wait(timeout=60) == 0
        assert p.stderr.read() == b""
        p.stderr.close()


def test_python_native_run_refuses_a_used_folder_unless_overwrite(scenarios, tmp_path):
    out = tmp_path / "r"
    out.mkdir()
    (out / "summary.json").write_text("{}")
    code = ("import sys\nfrom fabricsim._native import native\n"
            "try:\n"
            f"    native.run({str(scenarios / 'default.yaml')!r}, True, ['duration=2ms'], '', {str(out)!r}, "
            "overwrite=sys.argv[1] == 'yes')\n"
            "except native.ConfigError as e:\n"
            "    print(e.key, e.reason)\n")
    for answer, expected in (("no", f"out results folder '{out}' is not empty"), ("yes", "")):
        p = subprocess.run([sys.executable, "-c", code, answer], capture_output=True, text=True, env=_env(), timeout=60)
        assert p.returncode == 0, p.stderr
        assert p.stdout.startswith(expected)
    assert json.loads((out / "summary.json").read_text())["complete"] is True
