"""`fabricsim` command line: run, sweep, explain, validate, plot, headroom (mirrors the Python API).

Exit status: 0 success, 1 a run failed (or frames were not conserved; for sweep: any point
failed), 2 bad configuration or usage, as fabricsim-sim; 130 interrupted (Ctrl-C).
"""
import argparse
import json
import os
import sys

PROG = "fabricsim"


def _scalar(text):
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def _grid(items):
    grid = {}
    for item in items or []:
        if "=" not in item:
            raise SystemExit(f"{PROG}: --grid needs key=v1,v2,..., got '{item}'")
        key, values = item.split("=", 1)
        grid[key.strip()] = [_scalar(v.strip()) for v in values.split(",") if v.strip()]
    return grid


def _add_config_args(p):
    p.add_argument("config", help="scenario YAML file")
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                   help="override a parameter (repeatable), e.g. switch.buffer=8MiB")


def _parser():
    from . import __version__
    from ._native import native
    ap = argparse.ArgumentParser(prog=PROG, description="FabricSim: data-center switch/NIC simulation")
    ap.add_argument("--version", action="version", version=f"{PROG} {__version__} (native module {native.__version__})")
    sub = ap.add_subparsers(dest="cmd", required=True)

    p = sub.add_parser("run", help="run one scenario in a fresh worker process")
    _add_config_args(p)
    p.add_argument("--seed", type=int)
    p.add_argument("--out", help="results folder (default results/<name>); must be empty unless --overwrite")
    p.add_argument("--overwrite", action="store_true", help="clear a non-empty results folder first")
    p.add_argument("--timeout", type=float, help="seconds before the run is killed")
    p.add_argument("--quiet", action="store_true", help="print nothing on success")
    p.add_argument("--json", action="store_true", help="print the flat metrics as JSON")

    p = sub.add_parser("sweep", help="run a parameter grid; one CSV row per run")
    _add_config_args(p)
    p.add_argument("--grid", action="append", required=True, metavar="KEY=V1,V2,...",
                   help="a swept parameter and its values (repeatable: cartesian product)")
    p.add_argument("--repeats", type=int, default=1, help="runs per point, seeds seed..seed+repeats-1")
    p.add_argument("--workers", type=int, help="parallel runs (default: CPU count)")
    p.add_argument("--cache", help="cache folder: an interrupted sweep resumes from it")
    p.add_argument("--timeout", type=float, help="seconds per run")
    p.add_argument("--csv", help="write the rows to this CSV file")
    p.add_argument("--dask", metavar="ADDRESS", help="run on a Dask scheduler (tcp://host:8786)")
    p.add_argument("--columns", default="frames.dropped,latency_us.p99,goodput_bps",
                   help="metric columns to print (comma-separated)")
    p.add_argument("--no-progress", action="store_true")

    p = sub.add_parser("explain", help="print parameters with default, unit, range and help")
    p.add_argument("key", nargs="?", default="")

    p = sub.add_parser("headroom", help="PFC headroom (XOFF_TH) of one lossless port and priority group",
                       description="Options take units as in scenarios (100Gbps, 3us, 9216B); defaults are "
                                   "given as [model / sonic], '-' = not an input of that method.")
    for o in native.headroom_options():
        flag = "--" + o["name"].replace("_", "-")
        model, sonic = o["model_default"] or "none", o["sonic_default"] or "none"
        p.add_argument(flag, dest="hr_" + o["name"], metavar="VALUE", help=f"{o['help']} [{model} / {sonic}]")
    p.add_argument("--json", action="store_true", help="print the result as JSON")

    p = sub.add_parser("validate", help="check a scenario without running it")
    _add_config_args(p)

    p = sub.add_parser("plot", help="plot a results folder or a sweep CSV to PNG")
    p.add_argument("kind", choices=["queue", "fct", "cdf", "lines", "heatmap"])
    p.add_argument("source", help="results folder (queue, fct, cdf) or sweep CSV (lines, heatmap)")
    p.add_argument("-o", "--out", required=True, help="PNG file")
    p.add_argument("--columns", help="queue: regex of time-series columns")
    p.add_argument("--column", default="latency_max_us", help="cdf: flows column")
    p.add_argument("--x")
    p.add_argument("--y")
    p.add_argument("--hue")
    p.add_argument("--value", help="heatmap: the metric column")
    p.add_argument("--title")
    return ap


def _config_error(e):
    print(f"{PROG}: configuration error: {e}", file=sys.stderr)
    return 2


def cmd_run(a):
    import fabricsim
    from ._native import native
    from .results import summary_metrics

    out = a.out
    if out is None:
        out = "results/" + fabricsim.validate(a.config, a.sets, a.seed)["name"]
    r = fabricsim.run(a.config, out=out, seed=a.seed, overrides=a.sets, timeout=a.timeout, overwrite=a.overwrite)
    if a.json:
        print(json.dumps(summary_metrics(r.summary), indent=1))
    elif not a.quiet:
        print(native.format_summary(json.dumps(r.summary)), end="")
        print(f"\n  results written to {out}/")
    return 0 if r.summary["frames"]["conserved"] else 1


def cmd_sweep(a):
    import fabricsim
    from .sweeps import sweep_jobs

    grid = _grid(a.grid)
    # Every point is validated before anything runs: an invalid one is a usage error (exit 2).
    _, jobs = sweep_jobs(a.config, grid, a.repeats, a.sets)
    bad = {json.dumps(row_point(row)): err for row, _, _, err in jobs if err is not None}
    if bad:
        for point, err in bad.items():
            print(f"{PROG}: configuration error at {point}: {err}", file=sys.stderr)
        print(f"{PROG}: {len(bad)} invalid grid point(s); nothing was run", file=sys.stderr)
        return 2
    executor, client = None, None
    if a.dask:
        from dask.distributed import Client
        client = Client(a.dask)
        executor = client.get_executor()
    try:
        df = fabricsim.sweep(a.config, grid, repeats=a.repeats, workers=a.workers, executor=executor,
                             cache_dir=a.cache, overrides=a.sets, timeout=a.timeout, progress=not a.no_progress)
    except fabricsim.Interrupted as e:
        if a.csv:
            e.partial.to_csv(a.csv, index=False)
        raise
    finally:
        if client is not None:
            client.close()
    if a.csv:
        df.to_csv(a.csv, index=False)
    cols = list(df.columns[: df.columns.get_loc("error") + 1])
    cols += [c for c in a.columns.split(",") if c in df.columns]
    import pandas as pd
    with pd.option_context("display.width", 200, "display.max_columns", 20, "display.max_colwidth", 60):
        print(df[cols].to_string(index=False))
    failed = int((df["status"] != "ok").sum())
    print(f"\n{len(df)} runs, {failed} failed" + (f"; rows written to {a.csv}" if a.csv else ""))
    return 1 if failed else 0


def row_point(row):
    return {k: v for k, v in row.items() if k not in ("repeat", "seed")}


def cmd_explain(a):
    from ._native import native
    text = native.explain(a.key)
    if text is None:
        print(f"{PROG}: no parameter matches '{a.key}'", file=sys.stderr)
        return 2
    print(text, end="")
    return 0


def cmd_validate(a):
    import fabricsim
    info = fabricsim.validate(a.config, a.sets)
    print(f"{a.config}: valid ({info['counts']})")
    return 0


def cmd_headroom(a):
    from ._native import ConfigError, native
    options = {k[3:]: v for k, v in vars(a).items() if k.startswith("hr_") and v is not None}
    try:
        if a.json:
            print(json.dumps(native.headroom(options), indent=2))
        else:
            print(native.format_headroom(options), end="")
    except ConfigError as e:
        print(f"{PROG} headroom: --{e.key.replace('_', '-')}: {e.reason}", file=sys.stderr)
        return 2
    return 0


def cmd_plot(a):
    from . import plot
    from .results import load_result
    if a.kind in ("lines", "heatmap"):
        import pandas as pd
        df = pd.read_csv(a.source)
        if not a.x or not a.y:
            raise SystemExit(f"{PROG}: plot {a.kind} needs --x and --y")
        if a.kind == "lines":
            plot.sweep_lines(df, a.x, a.y, hue=a.hue, path=a.out, title=a.title)
        else:
            if not a.value:
                raise SystemExit(f"{PROG}: plot heatmap needs --value")
            plot.sweep_heatmap(df, a.x, a.y, a.value, path=a.out, title=a.title)
    else:
        r = load_result(a.source)
        if a.kind == "queue":
            plot.queue_occupancy(r, columns=a.columns, path=a.out, title=a.title)
        elif a.kind == "fct":
            plot.fct_percentiles(r, path=a.out, title=a.title)
        else:
            plot.cdf(r.flows, column=a.column, path=a.out, title=a.title)
    print(f"wrote {a.out}")
    return 0


def main(argv=None):
    try:
        code = _main(argv)
        sys.stdout.flush()  # here, so that a closed pipe is caught below and not at exit
        return code
    except BrokenPipeError:
        # `fabricsim ... | head`: the reader left. No traceback, and no second error when Python
        # flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141  # as a process killed by SIGPIPE (fabricsim-sim) reports in a shell


def _main(argv):
    a = _parser().parse_args(argv)
    from ._native import ConfigError
    from .errors import RunError
    try:
        return {"run": cmd_run, "sweep": cmd_sweep, "explain": cmd_explain, "validate": cmd_validate,
                "plot": cmd_plot, "headroom": cmd_headroom}[a.cmd](a)
    except ConfigError as e:
        return _config_error(e)
    except RunError as e:
        print(f"{PROG}: run failed ({e.kind}): {e}", file=sys.stderr)
        return 1
    except (FileNotFoundError, FileExistsError, KeyError) as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
