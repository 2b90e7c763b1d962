class RunError(RuntimeError):
    """A simulation that did not finish: the worker crashed, timed out, raised or was interrupted."""

    def __init__(self, message, kind="error"):
        super().__init__(message)
        self.kind = kind  # "crash", "timeout", "error" or "interrupted"


class Interrupted(KeyboardInterrupt):
    """Ctrl-C stopped run() or sweep(). `partial`: what was finished - the Result of the stopped
    run (if it wrote its results) or the sweep's DataFrame (stopped points have status
    "interrupted")."""

    def __init__(self, message, partial=None):
        super().__init__(message)
        self.partial = partial


Interrupted.__module__ = RunError.__module__ = "fabricsim"
