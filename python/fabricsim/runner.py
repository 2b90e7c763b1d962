"""One simulation per fresh process.

SystemC elaborates once per process, and a crash or a hang must not take the caller down, so a
run is a child process that does exactly one simulation: forked from our fork server
(`python -m fabricsim._forkserver`, which has preloaded the extension and never imports the
user's __main__), or, inside a daemonic process (e.g. a Dask worker) or with
FABRICSIM_ISOLATION=subprocess, a fresh interpreter per run. The parent never elaborates.

Every run in flight is registered, so that an interrupt (Ctrl-C) stops them all: SIGTERM (the
native run then writes what it has and returns a summary with complete = false), SIGKILL after
a grace period.
"""
import atexit
import itertools
import json
import os
import pickle
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import weakref

from ._forkserver import HEADER, frame
from ._native import make_config_error
from .config import make_source, validate_source
from .errors import Interrupted, RunError

__all__ = ["run", "run_isolated", "interrupt_all"]

GRACE_S = 1.0  # after SIGTERM, how long an interrupted run may take to write its partial results


def isolation_mode():
    """"forkserver", or "subprocess" in daemonic processes or with FABRICSIM_ISOLATION=subprocess."""
    forced = os.environ.get("FABRICSIM_ISOLATION", "")
    if forced in ("forkserver", "subprocess"):
        return forced
    import multiprocessing as mp
    return "subprocess" if mp.current_process().daemon else "forkserver"


def _child_env():
    return dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1",
                PYTHONPATH=os.pathsep.join(p for p in sys.path if p))


def _how(code):
    return f"signal {-code}" if code is not None and code < 0 else f"exit status {code}"


class _Call:
    """One run in flight: set when the reply (or the child's death) arrives."""

    def __init__(self):
        self.done = threading.Event()
        self.reply = None
        self.code = None
        self.interrupted = False  # stopped by interrupt_all
        self.kill = None  # callable(signum)

    def finish(self, reply, code):
        self.reply, self.code = reply, code
        self.done.set()


_active = set()  # every _Call in flight in this process
_active_lock = threading.Lock()


class _ForkServer:
    """Client side of _forkserver.py: requests on its stdin, a reader thread dispatches replies."""

    def __init__(self):
        self.owner = os.getpid()
        self.proc = subprocess.Popen([sys.executable, "-m", "fabricsim._forkserver"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=_child_env(), start_new_session=True)
        self.ids = itertools.count()
        self.calls = {}
        self.lock = threading.Lock()
        self.alive = True
        threading.Thread(target=self._read, name="fabricsim-forkserver", daemon=True).start()

    def _read(self):
        f = self.proc.stdout
        while True:
            head = f.read(HEADER.size)
            if len(head) < HEADER.size:
                break
            (n,) = HEADER.unpack(head)
            run_id, reply, code = pickle.loads(f.read(n))
            with self.lock:
                call = self.calls.pop(run_id, None)
            if call is not None:
                call.finish(pickle.loads(reply) if reply else None, code)
        with self.lock:  # the server is gone: whatever was in flight died with it
            self.alive = False
            calls, self.calls = list(self.calls.values()), {}
        for call in calls:
            call.finish(None, self.proc.wait())

    def _send(self, msg):
        data = frame(msg)
        with self.lock:
            if not self.alive:
                raise BrokenPipeError
            self.proc.stdin.write(data)
            self.proc.stdin.flush()

    def submit(self, job):
        call = _Call()
        run_id = next(self.ids)
        with self.lock:
            self.calls[run_id] = call

        def kill(sig):
            try:
                self._send(("kill", run_id, sig))
            except (BrokenPipeError, OSError):
                pass
        call.kill = kill
        try:
            self._send(("run", run_id, job))
        except (BrokenPipeError, OSError):
            with self.lock:
                self.calls.pop(run_id, None)
            raise
        return call

    def close(self):
        """Closes the server's stdin: it kills its children and exits."""
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


_server = None
_server_lock = threading.Lock()


def _fork_server():
    global _server
    with _server_lock:
        # A new one after a fork of this process (the pipes belong to the parent) or if it died.
        if _server is None or _server.owner != os.getpid() or not _server.alive:
            _server = _ForkServer()
        return _server


def shutdown_fork_server():
    """Stops the fork server (a later run starts a new one); its children are killed."""
    global _server
    with _server_lock:
        server, _server = _server, None
    if server is not None and server.owner == os.getpid():
        server.close()


atexit.register(shutdown_fork_server)


def _start_forkserver(job):
    for attempt in (0, 1):
        server = _fork_server()
        try:
            return server.submit(job)
        except (BrokenPipeError, OSError):
            if attempt:
                raise RunError("the fabricsim fork server could not be started", "crash") from None


def _start_subprocess(job, reply_path):
    call = _Call()
    p = subprocess.Popen([sys.executable, "-m", "fabricsim._worker", reply_path, str(os.getpid())],
                         stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                         env=_child_env(), start_new_session=True)

    def kill(sig):
        try:
            p.send_signal(sig)
        except OSError:
            pass

    def wait():
        _, err = p.communicate(json.dumps(job))
        reply = None
        if os.path.exists(reply_path):
            with open(reply_path, encoding="utf-8") as f:
                reply = json.load(f)
        call.stderr = err
        call.finish(reply, p.returncode)
    call.kill = kill
    threading.Thread(target=wait, name="fabricsim-subprocess", daemon=True).start()
    return call


def _wait(call, timeout):
    """Waits for the reply; kills the child on timeout or when this thread is interrupted."""
    try:
        if not call.done.wait(timeout):
            call.kill(signal.SIGKILL)
            call.done.wait()
            raise RunError(f"timed out after {timeout} s", "timeout")
    except KeyboardInterrupt:
        interrupt_all()
        raise


def interrupt_all(grace=GRACE_S):
    """Stops every run in flight in this process: SIGTERM, then SIGKILL after `grace` seconds.
    Their replies (partial summaries, or deaths) still reach their callers, marked interrupted."""
    with _active_lock:
        calls = list(_active)
    for c in calls:
        c.interrupted = True
        c.kill(signal.SIGTERM)
    deadline = time.monotonic() + grace
    for c in calls:
        if not c.done.wait(max(0.0, deadline - time.monotonic())):
            c.kill(signal.SIGKILL)
    for c in calls:
        c.done.wait(1.0)


def _decode(call, timing):
    reply = call.reply
    if reply is None:
        tail = (getattr(call, "stderr", "") or "").strip().splitlines()[-3:]
        if call.interrupted:
            raise RunError(f"interrupted (worker {_how(call.code)})", "interrupted")
        raise RunError(f"worker process died ({_how(call.code)})" + (": " + " | ".join(tail) if tail else ""),
                       "crash")
    if reply[0] == "ok":
        if timing is not None:
            timing["worker_s"] = reply[2]
        return json.loads(reply[1])
    if reply[0] == "config_error":
        raise make_config_error(reply[1], reply[2], reply[3])
    raise RunError(reply[1], "interrupted" if call.interrupted else "error")


def run_isolated(source, out_dir, timeout=None, run_ahead=True, timing=None, overwrite=False):
    """Simulates `source` (see config.make_source) in a fresh process; returns the summary dict.

    Raises ConfigError for a configuration the schema rejects and RunError if the worker
    crashed, timed out, failed or was interrupted (kind "interrupted"; a run that the signal
    reached inside the simulation instead returns its partial summary, complete = false).
    `timing` (a dict) receives worker_s: the time the worker spent in the native run
    (validation, elaboration, simulation, writing the results folder). With
    results.format: parquet the tables are converted here, in the process that ran the run.
    """
    os.makedirs(out_dir, exist_ok=True)
    out_dir = os.path.abspath(out_dir)
    job = {"source": source, "out": out_dir, "run_ahead": run_ahead, "overwrite": overwrite}
    tmp = None
    if isolation_mode() == "subprocess":
        tmp = tempfile.mkdtemp(prefix="fabricsim-reply-")
        call = _start_subprocess(job, os.path.join(tmp, "reply.json"))
    else:
        call = _start_forkserver(job)
    with _active_lock:
        _active.add(call)
    try:
        _wait(call, timeout)
    finally:
        with _active_lock:
            _active.discard(call)
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    summary = _decode(call, timing)
    if (summary.get("config", {}).get("results", {}).get("format") == "parquet"):
        from .results import convert_to_parquet
        convert_to_parquet(out_dir)
    return summary


def _non_empty(path):
    try:
        with os.scandir(path) as it:
            return any(True for _ in it)
    except (FileNotFoundError, NotADirectoryError):
        return False


def run(config, out=None, seed=None, *, overrides=None, timeout=None, run_ahead=True, overwrite=False, keep=False):
    """Runs one scenario in a fresh worker process and returns its Result.

    config: scenario path, YAML string or nested dict (the CLI's schema and errors).
    out: results folder. A non-empty one is refused (FileExistsError) unless overwrite=True,
    which clears it. Without out, a new temporary folder that is deleted when the Result is
    garbage-collected or at exit, unless keep=True (see Result.path).
    seed: replaces the scenario's seed. overrides: {dotted key: value} or ["key=value", ...],
    applied like the CLI's --set. timeout: seconds, then the worker is killed (RunError).
    Raises ConfigError (a ValueError naming the key) before any process is started. Ctrl-C
    stops the run and raises fabricsim.Interrupted (a KeyboardInterrupt) whose `partial` is
    the Result of what was written, if the run got that far.
    """
    from .results import Result

    source = make_source(config, overrides, seed)
    info = validate_source(source)  # in this process; nothing is elaborated
    if info["files"]:
        source["files"] = info["files"]
    temporary = out is None
    if temporary:
        out = tempfile.mkdtemp(prefix=f"fabricsim-{info['name']}-")
    elif _non_empty(out) and not overwrite:
        raise FileExistsError(f"{os.fspath(out)}: results folder is not empty (a folder holds one run; "
                              "pass overwrite=True to replace it)")
    t0 = time.perf_counter()
    timing = {}
    try:
        summary = run_isolated(source, out, timeout=timeout, run_ahead=run_ahead, timing=timing,
                               overwrite=overwrite and not temporary)
    except KeyboardInterrupt:
        partial = Result(out) if os.path.exists(os.path.join(out, "summary.json")) else None
        if temporary and not keep and partial is None:
            shutil.rmtree(out, ignore_errors=True)
        elif temporary and not keep:
            weakref.finalize(partial, shutil.rmtree, out, True)
        raise Interrupted("fabricsim.run interrupted", partial) from None
    except BaseException:
        if temporary and not keep:
            shutil.rmtree(out, ignore_errors=True)
        raise
    result = Result(out, summary=summary, elapsed_s=time.perf_counter() - t0, worker_s=timing.get("worker_s"))
    if temporary and not keep:
        weakref.finalize(result, shutil.rmtree, out, True)  # Result reads lazily: the folder lives as long
    return result
