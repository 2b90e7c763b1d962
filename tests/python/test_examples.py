"""The example sweeps run (QUICK=1: a few points each) and draw their PNGs."""
import os
import shutil
import subprocess
import sys

import pandas as pd
import pytest

from conftest import ROOT


@pytest.mark.parametrize("script, check", [
    ("incast_buffer_sweep.py", lambda df: (df["incast.qct_us.p99"] > 0).all()
        and df.loc[(df["fan_in"] == 32) & (df["switch.buffer"] == "2MiB"), "frames.dropped"].item() > 0
        and df.loc[(df["fan_in"] == 32) & (df["switch.buffer"] == "16MiB"), "frames.dropped"].item() == 0),
    ("ecn_threshold_sweep.py", lambda df: df["queue_mean_kb"].is_monotonic_increasing
        and (df["throughput_gbps"] > 5).all()),
    # The calculator's bound is reached and nothing is lost; it grows with cable and speed.
    ("headroom_sweep.py", lambda df: (df["peak_bytes"] == df["calculated_bytes"]).all()
        and (df["lossless_drops"] == 0).all() and (df["frames.dropped"] == 0).all()
        and df.groupby("speed")["calculated_bytes"].apply(lambda c: c.is_monotonic_increasing).all()
        and df.loc[df["speed"] == "100Gbps", "calculated_bytes"].min()
        > df.loc[df["speed"] == "10Gbps", "calculated_bytes"].max()),
    # Bigger interrupt batches: fewer ACKs carrying more data, and a less busy receiver.
    ("nic_burstiness.py", lambda df: df.groupby("nic.lso.enabled").apply(
        lambda g: g.sort_values("nic.rx.rx_frames")["ack_ratio_kb"].is_monotonic_increasing
        and g.sort_values("nic.rx.rx_frames")["receiver_cpu"].is_monotonic_decreasing).all()
        and (df["throughput_gbps"] > 3).all()),
    # QCN holds the queue near Q_eq at 50 us and swings wider at 350 us (past tau*).
    ("qcn_stability.py", lambda df: df[df["rp"] == "QCN"].set_index("rtt_us").pipe(
        lambda q: q.loc[50, "empty_share"] < 0.01 and q.loc[50, "queue_p50"] > 11
        and q.loc[350, "swing_pkts"] > q.loc[50, "swing_pkts"])),
    # Two transports x two border buffers finish; both carry inter-DC traffic.
    ("wan_buffer_sizing.py", lambda df: len(df) == 4 and (df["wan_use"] > 0.2).all()
        and (df["intra_small_flows"] > 10).all()),
])
def test_example_runs_and_writes_png(script, check, tmp_path):
    ex = tmp_path / "examples"
    ex.mkdir()
    shutil.copy(ROOT / "examples" / script, ex / script)
    env = dict(os.environ, QUICK="1", WORKERS="2")
    p = subprocess.run([sys.executable, str(ex / script)], capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    stem = script[:-3]
    png = ex / "out" / f"{stem}.png"
    assert png.read_bytes()[:4] == b"\x89PNG" and png.stat().st_size > 20_000
    df = pd.read_csv(ex / "out" / f"{stem}.csv")
    assert (df["status"] == "ok").all() and check(df)
