"""Cost of running every simulation in its own worker process (docs/python.md), as JSON.

- per-run isolation overhead: wall time of the isolated run (fabricsim.run() after validation)
  minus the time the worker spent in the native run (validation, elaboration, sc_start, writing
  the results folder), i.e. process start, hand-over and reply; median over runs of a tiny
  scenario, after a warm-up run that starts the fork server. Also for the subprocess mode
  (used inside Dask workers), and the whole run() for reference.
- sweep speed-up: 8 short runs one after another vs on 2 workers.
"""
import json
import os
import statistics
import sys
import tempfile
import time

import fabricsim

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENARIO = os.path.join(ROOT, "platforms", "scenarios", "default.yaml")


def overhead(n, tmp, mode):
    os.environ["FABRICSIM_ISOLATION"] = mode
    fabricsim.run(SCENARIO, out=os.path.join(tmp, f"warm-{mode}"), overrides={"duration": "2ms"})
    over, inner, total = [], [], []
    for i in range(n):
        t0 = time.perf_counter()
        r = fabricsim.run(SCENARIO, out=os.path.join(tmp, f"{mode}{i}"), overrides={"duration": "2ms"})
        total.append(time.perf_counter() - t0)
        over.append(r.elapsed_s - r.worker_s)
        inner.append(r.worker_s)
    del os.environ["FABRICSIM_ISOLATION"]
    return statistics.median(over) * 1e3, statistics.median(inner) * 1e3, statistics.median(total) * 1e3


def sweep_ratio(duration):
    grid = {"seed": list(range(1, 9))}
    ov = {"duration": duration, "traffic.flows[4].process": "poisson"}
    t0 = time.perf_counter()
    seq = fabricsim.sweep(SCENARIO, grid, workers=1, overrides=ov, progress=False)
    t_seq = time.perf_counter() - t0
    t0 = time.perf_counter()
    par = fabricsim.sweep(SCENARIO, grid, workers=2, overrides=ov, progress=False)
    t_par = time.perf_counter() - t0
    cols = fabricsim.deterministic_columns(seq)
    assert seq[cols].equals(par[cols])
    return t_seq, t_par, float(seq["host_perf.wall_time_s"].mean())


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    with tempfile.TemporaryDirectory() as tmp:
        fs_ms, worker_ms, total_ms = overhead(n, tmp, "forkserver")
        sp_ms, _, _ = overhead(max(5, n // 4), tmp, "subprocess")
    t_seq, t_par, run_s = sweep_ratio("50ms")
    print(json.dumps({
        "isolation_overhead_ms_forkserver": round(fs_ms, 1),
        "isolation_overhead_ms_subprocess": round(sp_ms, 1),
        "tiny_run_native_in_worker_ms": round(worker_ms, 1),
        "tiny_run_whole_run_call_ms": round(total_ms, 1),
        "sweep_8_runs_sequential_s": round(t_seq, 2),
        "sweep_8_runs_2_workers_s": round(t_par, 2),
        "sweep_ratio_2_workers_over_sequential": round(t_par / t_seq, 3),
        "sweep_run_sim_wall_s": round(run_s, 3),
    }, indent=1))


if __name__ == "__main__":
    main()
