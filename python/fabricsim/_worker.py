"""Runs one simulation in this process and reports back. Preloaded by the fork server
(_forkserver.py; so it stays light: no pandas) and run as `python -m fabricsim._worker REPLY`
in subprocess mode (inside daemonic processes such as Dask workers)."""
import json
import os
import sys
import time
import traceback

os.environ.setdefault("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1")

from ._native import native  # noqa: E402


def execute(source, out_dir, run_ahead=True, overwrite=False):
    """Returns ("ok", summary_json, seconds in native.run) | ("config_error", message, key, reason) |
    ("error", text)."""
    fault = source.get("_fault_on")  # test hook: this override makes the worker die like a crash
    if fault is not None and fault in source["overrides"]:
        os.abort()
    # The newer arguments only when used, so that the call stays the plain one otherwise.
    extra = {k: source[k] for k in ("base_dir", "files") if source.get(k)}
    if overwrite:
        extra["overwrite"] = True
    try:
        t0 = time.perf_counter()
        text = native.run(source["config"], source["is_file"], list(source["overrides"]), source["name"], out_dir,
                          run_ahead, **extra)
        return ("ok", text, time.perf_counter() - t0)
    except native.ConfigError as e:
        return ("config_error", str(e), getattr(e, "key", ""), getattr(e, "reason", ""))
    except BaseException as e:  # noqa: BLE001 - everything goes back to the parent
        return ("error", f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=3)}")


def main(argv):
    """Subprocess mode: the job (JSON) on stdin, the reply (JSON) written to argv[1]; argv[2] is
    the parent's pid: this process dies with it."""
    from ._forkserver import set_pdeathsig
    set_pdeathsig()
    if len(argv) > 2 and os.getppid() != int(argv[2]):
        return 1
    job = json.load(sys.stdin)
    reply = execute(job["source"], job["out"], job.get("run_ahead", True), job.get("overwrite", False))
    tmp = argv[1] + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(reply, f)
    os.replace(tmp, argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
