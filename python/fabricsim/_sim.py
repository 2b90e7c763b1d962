"""The `fabricsim-sim` console script: runs the C++ simulator binary shipped in the package."""
import os
import pathlib
import sys


def binary():
    """Path of fabricsim-sim: $FABRICSIM_SIM, the package's bin/ (installed), or a checkout's build."""
    import fabricsim
    env = os.environ.get("FABRICSIM_SIM")
    candidates = [pathlib.Path(env)] if env else []
    candidates += [pathlib.Path(p) / "bin" / "fabricsim-sim" for p in fabricsim.__path__]
    # a development tree: <build>/python/fabricsim next to <build>/platforms/fabricsim-sim
    candidates += [pathlib.Path(p).parents[1] / "platforms" / "fabricsim-sim" for p in fabricsim.__path__]
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return c
    raise FileNotFoundError("fabricsim-sim is not installed with this package (pip install . installs it; "
                            "in a checkout run `make build`)")


def main():
    try:
        exe = str(binary())
    except FileNotFoundError as e:
        print(f"fabricsim-sim: {e}", file=sys.stderr)
        return 2
    os.environ.setdefault("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1")
    os.execv(exe, [exe, *sys.argv[1:]])


if __name__ == "__main__":
    sys.exit(main())
