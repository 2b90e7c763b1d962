"""One simulation per fresh process.

SystemC elaborates once per process, and a crash or a hang must not take the caller down, so a
run is a child process that does exactly one simulation: forked from a fork server that has
preloaded the extension (cheap: no interpreter start, no imports), or, inside a daemonic process
(which may not have multiprocessing children, e.g. a Dask worker), a fresh interpreter started
with subprocess. The parent never elaborates.
"""
import json
import multiprocessing as mp
import multiprocessing.connection
import os
import subprocess
import sys
import tempfile
import threading
import time

from . import _worker
from ._native import make_config_error
from .config import make_source, validate_source
from .errors import RunError

__all__ = ["run", "run_isolated"]

_ctx = None
_ctx_lock = threading.Lock()
_start_lock = threading.Lock()


def _forkserver():
    global _ctx
    with _ctx_lock:
        if _ctx is None:
            ctx = mp.get_context("forkserver")
            ctx.set_forkserver_preload(["fabricsim._worker"])
            _ctx = ctx
        return _ctx


def isolation_mode():
    """"forkserver", or "subprocess" in daemonic processes or with FABRICSIM_ISOLATION=subprocess."""
    forced = os.environ.get("FABRICSIM_ISOLATION", "")
    if forced in ("forkserver", "subprocess"):
        return forced
    return "subprocess" if mp.current_process().daemon else "forkserver"


def _decode(reply, timing):
    if reply[0] == "ok":
        if timing is not None:
            timing["worker_s"] = reply[2]
        return json.loads(reply[1])
    if reply[0] == "config_error":
        raise make_config_error(reply[1], reply[2], reply[3])
    raise RunError(reply[1], "error")


def _run_forkserver(source, out_dir, timeout, run_ahead):
    ctx = _forkserver()
    r, w = ctx.Pipe(duplex=False)
    p = ctx.Process(target=_worker.child_main, args=(w, source, out_dir, run_ahead), name="fabricsim-run",
                    daemon=True)
    with _start_lock:
        p.start()
    w.close()
    try:
        ready = mp.connection.wait([r, p.sentinel], timeout)
        if not ready:
            raise RunError(f"timed out after {timeout} s", "timeout")
        reply = None
        if r.poll():
            try:
                reply = r.recv()
            except EOFError:
                reply = None
        p.join()
        if reply is None:
            code = p.exitcode
            how = f"signal {-code}" if code is not None and code < 0 else f"exit status {code}"
            raise RunError(f"worker process died ({how})", "crash")
        return reply
    finally:
        r.close()
        if p.is_alive():
            p.kill()
            p.join()


def _run_subprocess(source, out_dir, timeout, run_ahead):
    env = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1",
               PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    job = json.dumps({"source": source, "out": out_dir, "run_ahead": run_ahead})
    with tempfile.TemporaryDirectory(prefix="fabricsim-reply-") as td:
        reply_path = os.path.join(td, "reply.json")
        try:
            p = subprocess.run([sys.executable, "-m", "fabricsim._worker", reply_path], input=job, text=True,
                               capture_output=True, timeout=timeout, env=env)
        except subprocess.TimeoutExpired:
            raise RunError(f"timed out after {timeout} s", "timeout") from None
        if not os.path.exists(reply_path):
            code = p.returncode
            how = f"signal {-code}" if code < 0 else f"exit status {code}"
            tail = p.stderr.strip().splitlines()[-3:]
            raise RunError(f"worker process died ({how})" + (": " + " | ".join(tail) if tail else ""), "crash")
        with open(reply_path, encoding="utf-8") as f:
            return json.load(f)


def run_isolated(source, out_dir, timeout=None, run_ahead=True, timing=None):
    """Simulates `source` (see config.make_source) in a fresh process; returns the summary dict.

    Raises ConfigError for a configuration the schema rejects and RunError if the worker
    crashed, timed out or failed. `timing` (a dict) receives worker_s: the time the worker spent
    in the native run (validation, elaboration, simulation, writing the results folder)."""
    os.makedirs(out_dir, exist_ok=True)
    out_dir = os.path.abspath(out_dir)
    if isolation_mode() == "subprocess":
        reply = _run_subprocess(source, out_dir, timeout, run_ahead)
    else:
        reply = _run_forkserver(source, out_dir, timeout, run_ahead)
    return _decode(reply, timing)


def run(config, out=None, seed=None, *, overrides=None, timeout=None, run_ahead=True):
    """Runs one scenario in a fresh worker process and returns its Result.

    config: scenario path, YAML string or nested dict (the CLI's schema and errors).
    out: results folder (default: a new temporary folder, kept; see Result.path).
    seed: replaces the scenario's seed. overrides: {dotted key: value} or ["key=value", ...],
    applied like the CLI's --set. timeout: seconds, then the worker is killed (RunError).
    Raises ConfigError (a ValueError naming the key) before any process is started.
    """
    from .results import Result

    source = make_source(config, overrides, seed)
    info = validate_source(source)  # in this process; nothing is elaborated
    if out is None:
        out = tempfile.mkdtemp(prefix=f"fabricsim-{info['name']}-")
    t0 = time.perf_counter()
    timing = {}
    summary = run_isolated(source, out, timeout=timeout, run_ahead=run_ahead, timing=timing)
    return Result(out, summary=summary, elapsed_s=time.perf_counter() - t0, worker_s=timing.get("worker_s"))
