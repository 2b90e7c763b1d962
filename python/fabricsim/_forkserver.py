"""The fork server, started by runner.py as `python -m fabricsim._forkserver`.

It preloads fabricsim._worker and the extension (never the user's __main__, so scripts need no
`if __name__ == "__main__":`), then forks one child per run; the child simulates once, writes
its reply (a pickle) to a pipe and exits, and the server reports the reply with the child's
exit status. Single-threaded (a select loop), so forking is safe.

Protocol on the server's stdin/stdout (pipes to the client); every message is a 4-byte
big-endian length and a pickle:
    client -> server   ("run", id, job)      job: source, out, run_ahead, overwrite
                       ("kill", id, signum)
    server -> client   (id, reply pickle or None, returncode)   returncode as Popen's (-N: signal N)
On EOF on stdin (the client exited or closed it) the server kills its children and exits;
children die with the server (PR_SET_PDEATHSIG).
"""
import os
import pickle
import selectors
import signal
import struct
import sys

HEADER = struct.Struct("!I")


_prctl = None


def _load_prctl():
    global _prctl
    if _prctl is None:
        try:
            import ctypes
            _prctl = ctypes.CDLL(None, use_errno=True).prctl
        except (OSError, AttributeError):  # pragma: no cover - not Linux
            _prctl = False
    return _prctl


def set_pdeathsig(sig=signal.SIGKILL):
    """Asks Linux to send `sig` to this process when its parent exits (best effort elsewhere)."""
    prctl = _load_prctl()
    if prctl:
        prctl(1, int(sig), 0, 0, 0)  # PR_SET_PDEATHSIG


def frame(msg):
    data = pickle.dumps(msg, protocol=pickle.HIGHEST_PROTOCOL)
    return HEADER.pack(len(data)) + data


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _child(job, reply_fd, close_fds, server_pid):
    """In the forked child: one simulation, its reply on reply_fd, then _exit."""
    code = 1
    try:
        set_pdeathsig()
        if os.getppid() != server_pid:  # the server died between fork and prctl
            os._exit(1)
        for fd in close_fds:
            os.close(fd)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        from . import _worker
        reply = _worker.execute(job["source"], job["out"], job.get("run_ahead", True), job.get("overwrite", False))
        _write_all(reply_fd, pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL))
        code = 0
    finally:
        os._exit(code)


def serve(in_fd, out_fd):
    from . import _worker  # noqa: F401 - preload: the extension and SystemC, once for every child
    _load_prctl()

    sel = selectors.DefaultSelector()
    sel.register(in_fd, selectors.EVENT_READ)
    children = {}  # reply fd -> [run id, pid, received bytes]
    pids = {}  # run id -> pid (until reaped, so a pid is never reused under us)
    inbuf = bytearray()
    me = os.getpid()

    def send(msg):
        _write_all(out_fd, frame(msg))

    def start(run_id, job):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            _child(job, w, [in_fd, out_fd, *children], me)
        os.close(w)
        children[r] = [run_id, pid, bytearray()]
        pids[run_id] = pid
        sel.register(r, selectors.EVENT_READ)

    def finish(fd):
        run_id, pid, data = children.pop(fd)
        sel.unregister(fd)
        os.close(fd)
        _, status = os.waitpid(pid, 0)
        pids.pop(run_id, None)
        code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        send((run_id, bytes(data) if data else None, code))

    try:
        while True:
            for key, _ in sel.select():
                fd = key.fd
                if fd == in_fd:
                    chunk = os.read(in_fd, 1 << 16)
                    if not chunk:
                        return
                    inbuf += chunk
                    while len(inbuf) >= HEADER.size:
                        (n,) = HEADER.unpack_from(inbuf)
                        if len(inbuf) < HEADER.size + n:
                            break
                        op, run_id, arg = pickle.loads(bytes(inbuf[HEADER.size:HEADER.size + n]))
                        del inbuf[:HEADER.size + n]
                        if op == "run":
                            start(run_id, arg)
                        elif op == "kill" and run_id in pids:
                            os.kill(pids[run_id], arg)
                else:
                    chunk = os.read(fd, 1 << 16)
                    if chunk:
                        children[fd][2] += chunk
                    else:
                        finish(fd)
    except BrokenPipeError:  # the client is gone
        return
    finally:
        for pid in pids.values():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for pid in pids.values():
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


def main():
    # The protocol moves to private descriptors; fd 0 becomes /dev/null and fd 1 the client's
    # stderr, so that anything a run prints goes there and not into the protocol.
    in_fd, out_fd = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the client decides what an interrupt stops
    serve(in_fd, out_fd)
    return 0


if __name__ == "__main__":
    sys.exit(main())
