"""The invariant checker (issue 18): between simulation slices and at the end, a checked run
audits every switch's MMU counters against the frames it holds, the frame balance, lossless
classes and the timer calendar; a violation stops the run with exit status 3 naming the
component, the model time and the values. It only reads: checked and unchecked runs agree."""
import json

from test_cli import strip_wallclock

# pfc_spreading.yaml with its lossless PG 3 draining into a lossy queue 3 under a port cap: PFC
# holds the senders back at ingress, but the egress cap drops the class's frames anyway.
LOSSY_QUEUE = ["--set", "switch.mmu.lossless_queues=[]", "--set", "switch.port_cap=20KB",
               "--set", "duration=1ms"]


def test_a_lossless_class_dropped_at_a_lossy_queue_stops_the_run(sim, scenarios, tmp_path):
    p = sim(scenarios / "pfc_spreading.yaml", *LOSSY_QUEUE, "--check-invariants", "--quiet",
            "--out", tmp_path / "r", check=False)
    assert p.returncode == 3, p.stderr
    assert p.stderr.startswith("fabricsim-sim: invariant violated in top.leaf1.p0 at 13756000 ps: ")
    assert "frame(s) of lossless PG 3 dropped, the first from queue 3 as port_cap" in p.stderr
    assert "queue 3 is lossy: is it missing from switch.mmu.lossless_queues?" in p.stderr
    assert not (tmp_path / "r" / "summary.json").exists()  # a violated run writes no summary
    # Unchecked, the same run completes and counts the drops it should not have had.
    p = sim(scenarios / "pfc_spreading.yaml", *LOSSY_QUEUE, "--check-invariants=0", "--quiet",
            "--out", tmp_path / "u", check=False)
    assert p.returncode == 0, p.stderr
    s = json.loads((tmp_path / "u" / "summary.json").read_text())
    assert s["frames"]["dropped_by_cause"]["port_cap"] > 0


def test_the_shipped_lossless_scenario_passes_and_checking_changes_no_result(sim, scenarios, tmp_path):
    args = [scenarios / "pfc_spreading.yaml", "--set", "duration=1ms", "--quiet"]
    sim(*args, "--check-invariants", "--out", tmp_path / "on")
    sim(*args, "--check-invariants=0", "--out", tmp_path / "off")
    on = json.loads((tmp_path / "on" / "summary.json").read_text())
    off = json.loads((tmp_path / "off" / "summary.json").read_text())
    assert on["frames"]["dropped"] == 0 and on["frames"]["conserved"]
    assert strip_wallclock(on) == strip_wallclock(off)
    assert (tmp_path / "on" / "flows.csv").read_bytes() == (tmp_path / "off" / "flows.csv").read_bytes()
