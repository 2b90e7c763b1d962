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
import re
import shutil
import tempfile
import time
from collections.abc import Mapping

from ._native import ConfigError, make_config_error, native
from .config import make_source, validate_source, with_overrides
from .errors import Interrupted, RunError
from .results import Result, run_metrics, summary_metrics

__all__ = ["sweep", "expand_grid", "point_key", "check_grid_keys", "sweep_jobs"]

CACHE_VERSION = 2


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


def check_grid_keys(points):
    """Raises ConfigError for a grid key that is no parameter or section of the schema."""
    params = {p["path"] for p in native.schema()}
    sections = {path[:i] for path in params for i, c in enumerate(path) if c == "."}
    for key in dict.fromkeys(k for p in points for k in p):
        spath = re.sub(r"\[\d+\]", "[]", key)
        if spath not in params and spath not in sections:
            raise make_config_error(f"{key}: unknown key (not a parameter; see fabricsim.explain())", key,
                                    "unknown key (not a parameter; see fabricsim.explain())")


def simulator_version():
    """This package's version and the extension's: part of every cache key."""
    from . import __version__
    return f"{__version__}/{native.__version__}"


def point_key(source, seed):
    """Cache key of one run: the simulator version, the scenario text, the content of the files
    it refers to, the overrides and the seed (and the cache format)."""
    files = sorted((source.get("files") or {}).values())
    h = hashlib.sha256(json.dumps({"v": CACHE_VERSION, "sim": simulator_version(), "config": source["config"],
                                   "name": source["name"], "files": files, "overrides": source["overrides"],
                                   "seed": seed}, sort_keys=True).encode())
    return h.hexdigest()[:24]


def _row_metrics(summary, out_dir, metrics):
    m = summary_metrics(summary)
    if metrics is not None:
        m.update(metrics(Result(out_dir, summary=summary)))
    return m


def _task(source, out_dir, keep, timeout, metrics, overwrite=False):
    """Runs on the executor: one isolated run, returns the row's result part."""
    from .runner import run_isolated

    t0 = time.perf_counter()
    tmp = None
    if out_dir is None:
        out_dir = tmp = tempfile.mkdtemp(prefix="fabricsim-sweep-")
    res = {"status": "ok", "error": None, "metrics": {}, "run": {}}
    try:
        timing = {}
        summary = run_isolated(source, out_dir, timeout=timeout, timing=timing, overwrite=overwrite)
        if summary.get("complete") is False:  # stopped by a signal: partial results, never cached
            res.update(status="interrupted", error=f"interrupted ({summary.get('stop_reason', 'signal')})")
        res["metrics"] = _row_metrics(summary, out_dir, metrics)
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


def _cached(cache, key, metrics):
    """The row part of a finished run in the cache, its metrics computed again from the kept run
    folder (so that a changed metrics function or a newer summary_metrics applies); None if
    the run is not there."""
    entry, folder = os.path.join(cache, key + ".json"), os.path.join(cache, "runs", key)
    if not (os.path.exists(entry) and os.path.exists(os.path.join(folder, "summary.json"))):
        return None
    with open(entry, encoding="utf-8") as f:
        res = json.load(f)
    r = Result(folder)
    res.update(status="ok", error=None, metrics={})
    try:
        res["metrics"] = _row_metrics(r.summary, folder, metrics)
    except Exception as e:  # noqa: BLE001 - a failing metrics function: one row
        res.update(status="error", error=f"{type(e).__name__}: {e}")
    res["run"]["run.out"] = folder
    res["run"]["run.cached"] = True
    return res


def sweep_jobs(config, grid, repeats=1, overrides=None):
    """The sweep's runs before anything runs: (points, [(row prefix, source, seed, validation
    error or None)]). Raises ConfigError for an unknown grid key; an invalid value is that
    point's error."""
    points = expand_grid(grid)
    check_grid_keys(points)
    base = make_source(config, overrides)
    jobs = []
    for point in points:
        try:
            src = with_overrides(base, point)
            info = validate_source(src)
            seed0, err = info["seed"], None
            if info["files"]:
                src["files"] = info["files"]
        except ConfigError as e:
            seed0, err = None, str(e)
        for r in range(repeats):
            seed = None if seed0 is None else seed0 + r
            row = dict(point, repeat=r, seed=seed)
            jobs.append((row, None if err else with_overrides(src, [f"seed={seed}"]), seed, err))
    return points, jobs


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
    or a list of {dotted key: value} points; numbers are in the schema's base units (config.
    config_value). A grid key that is no parameter raises ConfigError before anything runs; an
    invalid value is that point's config_error row. Repeat r uses seed = (the point's seed) + r.
    workers: parallel runs with the default executor (default: CPU count). executor: any
    concurrent.futures.Executor (e.g. dask.distributed Client.get_executor()); the function
    and its arguments it receives are picklable. cache_dir: each finished run is stored there
    (an entry, and its results folder under runs/), and a repeated call skips it, computing its
    metrics again from the kept folder; the key includes the simulator version. Failed runs are
    retried. overrides: applied to every point before the grid values. timeout: seconds per run.
    metrics: optional f(Result) -> dict of extra columns, evaluated where the run happened (for
    cached runs: in this process). keep_results: keep the results folders of an uncached sweep
    (column run.out). Ctrl-C stops the runs in flight and raises fabricsim.Interrupted whose
    `partial` is the DataFrame so far (stopped and unstarted points: status "interrupted").

    Columns: the grid keys, repeat, seed, status ("ok", "config_error", "crash", "timeout",
    "error", "interrupted"), error, the summary metrics (results.summary_metrics), then
    run-varying columns (host_perf.*, run.elapsed_s, run.out, run.cached), which determinism
    checks must leave out.
    """
    import pandas as pd

    points, jobs = sweep_jobs(config, grid, repeats, overrides)
    cache = None
    if cache_dir is not None:
        cache = os.path.abspath(os.fspath(cache_dir))
        os.makedirs(os.path.join(cache, "runs"), exist_ok=True)

    results = [None] * len(jobs)
    keys = [None] * len(jobs)
    pending = []
    for i, (row, src, seed, err) in enumerate(jobs):
        if err is not None:
            results[i] = {"status": "config_error", "error": err, "metrics": {}, "run": {"run.cached": False}}
            continue
        keys[i] = point_key(src, seed)
        if cache is not None:
            results[i] = _cached(cache, keys[i], metrics)
        if results[i] is None:
            pending.append(i)

    bar = _progress(len(pending), progress, "fabricsim sweep")
    own = executor is None
    ex = executor or cf.ThreadPoolExecutor(max_workers=workers or os.cpu_count() or 1,
                                           thread_name_prefix="fabricsim-sweep")

    def record(i, res):
        res["run"]["run.cached"] = False
        results[i] = res
        if cache is not None and res["status"] == "ok":
            tmp = os.path.join(cache, keys[i] + ".json.tmp")
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump({"status": "ok", "run": res["run"]}, f)  # metrics are recomputed on loading
            os.replace(tmp, os.path.join(cache, keys[i] + ".json"))
        if bar is not None:
            bar.update(1)
            if res["status"] != "ok":
                bar.set_postfix_str(f"failed: {sum(1 for r in results if r and r['status'] != 'ok')}")

    futures = {}
    interrupted = False
    try:
        for i in pending:
            out = os.path.join(cache, "runs", keys[i]) if cache is not None else None
            # A retry reuses the folder of the failed attempt.
            retry = out is not None and os.path.isdir(out) and bool(os.listdir(out))
            futures[ex.submit(_task, jobs[i][1], out, keep_results, timeout, metrics, retry)] = i
        for fut in cf.as_completed(futures):
            i = futures[fut]
            try:
                res = fut.result()
            except BaseException as e:  # noqa: BLE001 - the executor itself failed for this point
                res = {"status": "error", "error": f"{type(e).__name__}: {e}", "metrics": {}, "run": {}}
            record(i, res)
    except KeyboardInterrupt:
        interrupted = True
        _stop(futures)
        for fut, i in futures.items():
            if results[i] is not None:
                continue
            try:
                res = fut.result(timeout=0)
            except BaseException:  # noqa: BLE001 - cancelled, still running, or the executor failed
                res = None
            if res is None:
                res = {"status": "interrupted", "error": "interrupted before it started", "metrics": {}, "run": {}}
            elif res["status"] != "ok":  # stopped (partial results or killed): not cached
                res.update(status="interrupted", error=res["error"] or "interrupted")
            record(i, res)  # a run that finished in time is an ordinary (cached) row
        raise Interrupted("fabricsim.sweep interrupted", _frame(points, jobs, results)) from None
    finally:
        if bar is not None:
            bar.close()
        if own:
            ex.shutdown(wait=not interrupted, cancel_futures=True)
    return _frame(points, jobs, results)


def _stop(futures, deadline_s=2.0):
    """Ctrl-C: cancels the runs not started and stops those in flight (again, for a task that
    was just starting one) until every future is done or the deadline passes."""
    from .runner import interrupt_all
    for fut in futures:
        fut.cancel()
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        interrupt_all(grace=min(1.0, max(0.0, end - time.monotonic())))
        _, running = cf.wait(futures, timeout=0.05)
        if not running:
            break


def _frame(points, jobs, results):
    import pandas as pd

    rows = []
    for (row, _, _, _), res in zip(jobs, results):
        res = res or {"status": "interrupted", "error": "interrupted", "metrics": {}, "run": {}}
        rows.append({**row, "status": res["status"], "error": res["error"], **res["metrics"], **res["run"]})
    df = pd.DataFrame(rows)
    for c in ("repeat", "seed"):
        if c in df:
            df[c] = df[c].astype("Int64")
    front = list(points[0].keys()) if points else []
    front = list(dict.fromkeys(front + ["repeat", "seed", "status", "error"]))
    varying = [c for c in df.columns if c.startswith(("host_perf.", "run."))]
    middle = [c for c in df.columns if c not in front and c not in varying]
    return df[[c for c in front if c in df.columns] + middle + varying]


def deterministic_columns(df):
    """The columns of a sweep DataFrame that must be identical for identical config + seed."""
    return [c for c in df.columns if not c.startswith(("host_perf.", "run."))]
