class RunError(RuntimeError):
    """A simulation that did not finish: the worker crashed, timed out or raised."""

    def __init__(self, message, kind="error"):
        super().__init__(message)
        self.kind = kind  # "crash", "timeout" or "error"
