"""Parameter sweeps: one row per run, each run in its own worker process.

The default executor is a thread pool whose threads each start one fresh worker process per run
(runner.run_isolated), so a crash or a timeout costs one row, not the pool. Any
concurrent.futures.Executor works instead: a Dask `client.get_executor()` spreads the runs over
a cluster (each Dask worker then starts the per-run process itself).
"""
import concurrent.futures as cf
import hashlib
import itertools
import json
import os
import shutil
import tempfile
import time
from collections.abc import Mapping

from ._native import ConfigError
from .config import format_value, make_source, validate_source, with_overrides
from .errors import RunError
from .results import Result, run_metrics, summary_metrics

__all__ = ["sweep", "expand_grid", "point_key"]

CACHE_VERSION = 1


def expand_grid(grid):
    """A dict {dotted key: values} as its cartesian product (keys in order), or a list of dicts
    (explicit points, each {dotted key: value}) as is."""
    if isinstance(grid, Mapping):
        keys = list(grid)
        values = [list(v) if isinstance(v, (list, tuple, range)) or hasattr(v, "tolist") else [v]
                  for v in grid.values()]
        values = [v.tolist() if hasattr(v, "tolist") else v for v in values]
        return [dict(zip(keys, combo)) for combo in itertools.product(*values)]
    return [dict(p) for p in grid]


def point_key(source, seed):
    """Cache key of one run: the scenario text, overrides and seed (and the cache format)."""
    h = hashlib.sha256(json.dumps({"v": CACHE_VERSION, "config": source["config"], "name": source["name"],
                                   "overrides": source["overrides"], "seed": seed}, sort_keys=True).encode())
    return h.hexdigest()[:24]


def _task(source, out_dir, keep, timeout, metrics):
    """Runs on the executor: one isolated run, returns the row's result part."""
    from .runner import run_isolated

    t0 = time.perf_counter()
    tmp = None
    if out_dir is None:
        out_dir = tmp = tempfile.mkdtemp(prefix="fabricsim-sweep-")
    res = {"status": "ok", "error": None, "metrics": {}, "run": {}}
    try:
        timing = {}
        summary = run_isolated(source, out_dir, timeout=timeout, timing=timing)
        res["metrics"] = summary_metrics(summary)
        if metrics is not None:
            res["metrics"].update(metrics(Result(out_dir, summary=summary)))
        res["run"] = run_metrics(summary)
        res["run"]["run.worker_s"] = timing.get("worker_s")
    except RunError as e:
        res.update(status=e.kind, error=str(e))
    except ConfigError as e:
        res.update(status="config_error", error=str(e))
    except Exception as e:  # noqa: BLE001 - e.g. a failing metrics function: one row
        res.update(status="error", error=f"{type(e).__name__}: {e}")
    finally:
        if tmp is not None and not keep:
            shutil.rmtree(tmp, ignore_errors=True)
    res["run"]["run.elapsed_s"] = time.perf_counter() - t0
    res["run"]["run.out"] = out_dir if (keep or tmp is None) else None
    return res


def _progress(total, enabled, desc):
    if not enabled:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover
        return None
    return tqdm(total=total, desc=desc, unit="run", leave=True)


def sweep(config, grid, repeats=1, workers=None, executor=None, cache_dir=None, *, overrides=None, timeout=None,
          metrics=None, keep_results=False, progress=True):
    """Runs `config` at every point of `grid`, `repeats` times each; returns a tidy DataFrame.

    config: path, YAML string or dict (as run()). grid: {dotted key: values} (cartesian product)
    or a list of {dotted key: value} points. Repeat r uses seed = (the point's seed) + r.
    workers: parallel runs with the default executor (default: CPU count). executor: any
    concurrent.futures.Executor (e.g. dask.distributed Client.get_executor()); the function
    and its arguments it receives are picklable. cache_dir: each finished run is stored there
    (its row, and its results folder under runs/), and a repeated call skips it; failed runs are
    retried. overrides: applied to every point before the grid values. timeout: seconds per run.
    metrics: optional f(Result) -> dict of extra columns, evaluated where the run happened.
    keep_results: keep the results folders of an uncached sweep (column run.out).

    Columns: the grid keys, repeat, seed, status ("ok", "config_error", "crash", "timeout",
    "error"), error, the summary metrics (results.summary_metrics), then run-varying columns
    (host_perf.*, run.elapsed_s, run.out, run.cached), which determinism checks must leave out.
    """
    import pandas as pd

    points = expand_grid(grid)
    base = make_source(config, overrides)
    cache = None
    if cache_dir is not None:
        cache = os.path.abspath(os.fspath(cache_dir))
        os.makedirs(os.path.join(cache, "runs"), exist_ok=True)

    jobs = []  # (row prefix, source, key or None, validation error or None)
    for point in points:
        src = with_overrides(base, {k: v for k, v in point.items()})
        try:
            seed0 = validate_source(src)["seed"]
            err = None
        except ConfigError as e:
            seed0, err = None, str(e)
        for r in range(repeats):
            seed = None if seed0 is None else seed0 + r
            row = dict(point, repeat=r, seed=seed)
            if err is not None:
                jobs.append((row, None, None, err))
                continue
            s = with_overrides(src, [f"seed={seed}"])
            jobs.append((row, s, point_key(s, seed), None))

    results = [None] * len(jobs)
    pending = []
    for i, (row, src, key, err) in enumerate(jobs):
        if err is not None:
            results[i] = {"status": "config_error", "error": err, "metrics": {}, "run": {"run.cached": False}}
        elif cache is not None and os.path.exists(os.path.join(cache, key + ".json")):
            with open(os.path.join(cache, key + ".json"), encoding="utf-8") as f:
                results[i] = json.load(f)
            results[i]["run"]["run.cached"] = True
        else:
            pending.append(i)

    bar = _progress(len(pending), progress, "fabricsim sweep")
    own = executor is None
    ex = executor or cf.ThreadPoolExecutor(max_workers=workers or os.cpu_count() or 1,
                                           thread_name_prefix="fabricsim-sweep")
    try:
        futures = {}
        for i in pending:
            row, src, key, _ = jobs[i]
            out = os.path.join(cache, "runs", key) if cache is not None else None
            futures[ex.submit(_task, src, out, keep_results, timeout, metrics)] = i
        for fut in cf.as_completed(futures):
            i = futures[fut]
            try:
                res = fut.result()
            except BaseException as e:  # noqa: BLE001 - the executor itself failed for this point
                res = {"status": "error", "error": f"{type(e).__name__}: {e}", "metrics": {}, "run": {}}
            res["run"]["run.cached"] = False
            results[i] = res
            if cache is not None and res["status"] == "ok":
                key = jobs[i][2]
                tmp = os.path.join(cache, key + ".json.tmp")
                with open(tmp, "w", encoding="utf-8") as f:
                    json.dump(res, f)
                os.replace(tmp, os.path.join(cache, key + ".json"))
            if bar is not None:
                bar.update(1)
                if res["status"] != "ok":
                    bar.set_postfix_str(f"failed: {sum(1 for r in results if r and r['status'] != 'ok')}")
    finally:
        if bar is not None:
            bar.close()
        if own:
            ex.shutdown(wait=True, cancel_futures=True)

    rows = []
    for (row, _, _, _), res in zip(jobs, results):
        rows.append({**row, "status": res["status"], "error": res["error"], **res["metrics"], **res["run"]})
    df = pd.DataFrame(rows)
    for c in ("repeat", "seed"):
        df[c] = df[c].astype("Int64")
    front = list(points[0].keys()) if points else []
    front = list(dict.fromkeys(front + ["repeat", "seed", "status", "error"]))
    varying = [c for c in df.columns if c.startswith(("host_perf.", "run."))]
    middle = [c for c in df.columns if c not in front and c not in varying]
    return df[[c for c in front if c in df.columns] + middle + varying]


def deterministic_columns(df):
    """The columns of a sweep DataFrame that must be identical for identical config + seed."""
    return [c for c in df.columns if not c.startswith(("host_perf.", "run."))]


def format_cli_value(v):  # used by the CLI to echo grid values
    return format_value(v)
