"""atheris (libFuzzer) target for the in-process YAML -> config path:
fabricsim._fabricsim.validate(text, False), the check fabricsim.validate() and every run make.

    make fuzz                      # installs atheris into .venv, runs this for FUZZ_TIME seconds
    python fuzz/atheris_config.py fuzz/corpus -keep_seed=1 -max_total_time=600 -artifact_prefix=fuzz/artifacts/

A clean verdict returns (a valid scenario) or raises fabricsim.ConfigError. A finding is
anything else: another Python exception (a C++ exception other than config_error crosses
pybind11 as RuntimeError, IndexError, ValueError, MemoryError, ...), a signal, a hang
(-timeout) or running out of memory (-rss_limit_mb); libFuzzer writes the input to
<artifact_prefix>crash-*/timeout-*/oom-*, and `python fuzz/atheris_config.py FILE` replays it.

The corpus starts as the shipped scenarios (copied into an empty corpus directory). Half the
mutations are fabricsim.fuzz's structure-aware ones on the parsed YAML, half libFuzzer's byte
mutations (broken YAML syntax, anchors, tags, encodings). The extension is not built with
libFuzzer's coverage instrumentation, so this is a random mutational fuzzer without C++
coverage feedback.
"""
import pathlib
import random
import re
import shutil
import sys

import atheris
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[1]

# Not instrumented: the code under test is C++, and Python coverage of the package would only
# slow the mutator down (libFuzzer finds no coverage to follow either way; -keep_seed=1 keeps the
# seed corpus it would otherwise drop as uninteresting).
import fabricsim  # noqa: E402
from fabricsim import fuzz  # noqa: E402
from fabricsim._native import native  # noqa: E402


# Known findings, each with its reproducer in tests/python/fuzz_findings/: skipped so that the
# run goes on to new ones (exception type, message pattern). Delete an entry when its fix lands.
KNOWN = []


def test_one_input(data):
    try:
        native.validate(data, False)
    except fabricsim.ConfigError:
        pass  # a clean refusal; every other exception propagates and is a finding
    except Exception as e:
        if not any(type(e) is kind and re.search(text, str(e)) for kind, text in KNOWN):
            raise


def expanded_size_below(doc, budget):
    """Whether `doc` has fewer than `budget` nodes counting each alias use (a "billion laughs"
    input is small as text but not as a tree, and the mutators walk the tree)."""
    stack = [doc]
    while stack:
        budget -= 1
        if budget <= 0:
            return False
        x = stack.pop()
        if isinstance(x, dict):
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
    return True


def structured_mutation(data, max_size, seed):
    rng = random.Random(seed)
    if rng.random() < 0.5 and len(data) <= 65536:  # a grown document is mutated as bytes only
        try:
            doc = yaml.load(data, Loader=yaml.CSafeLoader)
            ok = isinstance(doc, (dict, list)) and expanded_size_below(doc, 10**5)  # the mutators walk it in ms
            what = rng.choice(fuzz.MUTATORS)(doc, rng) if ok else None
            if what is not None:
                text = fuzz.dump(doc).encode()
                if len(text) <= max_size:
                    return text
        except Exception:  # noqa: BLE001 - not YAML, not dumpable: fall back to bytes
            pass
    return atheris.Mutate(data, max_size)


def seed_corpus(argv):
    """Copy the shipped scenarios into the first corpus directory if it is empty or missing."""
    dirs = [a for a in argv[1:] if not a.startswith("-")]
    if not dirs or pathlib.Path(dirs[0]).is_file():
        return
    corpus = pathlib.Path(dirs[0])
    corpus.mkdir(parents=True, exist_ok=True)
    if not any(corpus.iterdir()):
        for f in sorted((ROOT / "platforms" / "scenarios").glob("*.yaml")):
            shutil.copy(f, corpus / f.name)


def main():
    seed_corpus(sys.argv)
    atheris.Setup(sys.argv, test_one_input, custom_mutator=structured_mutation)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
