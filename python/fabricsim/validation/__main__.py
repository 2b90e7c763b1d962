"""python -m fabricsim.validation [--quick] [--out DIR] [--only ID ...] [--jobs N] [--list]"""
import argparse
import sys

from . import experiments
from .report import run


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m fabricsim.validation",
                                description="Runs the oracle experiments and writes the validation report.")
    p.add_argument("--quick", action="store_true", help="one or two cheap experiments per family")
    p.add_argument("--out", default=None,
                   help="report folder (default docs/validation, or build/validation-quick with --quick)")
    p.add_argument("--only", nargs="+", metavar="ID", help="only these experiments")
    p.add_argument("--jobs", type=int, default=2, help="experiments run at once (default 2)")
    p.add_argument("--work", default=None, help="keep the runs' results folders here")
    p.add_argument("--list", action="store_true", help="list the experiments and exit")
    a = p.parse_args(argv)
    unknown = set(a.only or ()) - {e.id for e in experiments()}
    if unknown:
        p.error("no experiment " + ", ".join(sorted(unknown)) + " (see --list)")
    if a.list:
        for e in experiments(quick=a.quick, only=a.only):
            print(f"{e.id:24s} {'quick' if e.quick else '     '} {e.family}: {e.title}")
        return 0
    out = a.out or ("build/validation-quick" if a.quick else "docs/validation")
    done = run(out, quick=a.quick, only=a.only, jobs=a.jobs, work=a.work)
    bad = [i for i, (e, o, _) in done.items() if e.status(o.passed) == "FAIL"]
    if bad:
        print("FAIL: " + " ".join(bad), file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
