"""Structure-aware scenario fuzzing of the configuration check (`fabricsim-sim validate`).

    python -m fabricsim.fuzz --cases 2000 --seed 1 --out fuzz-out

Each case takes a shipped scenario (platforms/scenarios/*.yaml), applies 1-3 mutations drawn
from a `random.Random` seeded with (seed, case index) - wrong types, mangled units, range edges,
missing and unknown keys, duplicated list entries, broken topologies, huge values, deep nesting,
swapped sections - and runs `fabricsim-sim validate` on the result (never a simulation). A
clean verdict is exit 0 (valid) or exit 2 with a configuration error on stderr. Anything else
is a failure: a signal, a hang (the per-case timeout), another exit code, a traceback, a C++
"terminate called" / assertion / sanitizer report, or an exit 2 whose message is empty or shows
a raw C++ exception (std::out_of_range, basic_string, ...). Each failure leaves its mutated
YAML and stderr in --out; `--seed S --case I` regenerates exactly that case. A development
tool: it needs PyYAML (requirements-dev.txt), which the package itself does not.
"""
import argparse
import collections
import copy
import dataclasses
import hashlib
import math
import os
import pathlib
import random
import re
import signal
import subprocess
import sys
import tempfile
import time

import yaml

__all__ = ["MUTATORS", "Case", "Failure", "Report", "classify", "generate", "main", "run"]


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # libyaml's emitter: 10^5 items in ms
    def ignore_aliases(self, data):
        return True  # a list grown by repeating one entry is written out in full, not as an alias

# --- mutations ------------------------------------------------------------------------------
# Each takes the document (dicts, lists, scalars as PyYAML loads them) and the case's rng,
# changes the document in place and returns a short description, or None if the document has
# nothing it applies to (the case then draws another mutation).

_ROOT = "<root>"


def _walk(node, path=""):
    """(parent, key, value, path) of every node below `node`, depth first, in document order."""
    if isinstance(node, dict):
        items = list(node.items())
    elif isinstance(node, list):
        items = list(enumerate(node))
    else:
        return
    for k, v in items:
        p = f"{path}[{k}]" if isinstance(node, list) else (f"{path}.{k}" if path else str(k))
        yield node, k, v, _short(p)
        yield from _walk(v, p)


def _short(path):
    return path if len(path) <= 80 else f"{path[:38]}...{path[-38:]}"


def _scalars(doc):
    return [n for n in _walk(doc) if not isinstance(n[2], (dict, list))]


def _containers(doc, kind=(dict, list)):
    """(container, path) of the root and every nested dict/list of type `kind`."""
    out = [(doc, _ROOT)] if isinstance(doc, kind) else []
    return out + [(v, p) for _, _, v, p in _walk(doc) if isinstance(v, kind)]


_QUANTITY = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-z%]+)\s*$")


def _quantities(doc):
    return [n for n in _scalars(doc) if isinstance(n[2], str) and _QUANTITY.match(n[2])]


def change_type(doc, rng):
    """A scalar (or a whole section) becomes a value of another type; numbers in strings and
    strings holding numbers go back and forth."""
    nodes = list(_walk(doc))
    if not nodes:
        return None
    parent, key, value, path = rng.choice(nodes)
    if isinstance(value, str):
        m = _QUANTITY.match(value) or re.match(r"^\s*([-+]?\d+\.?\d*)", value)
        number = float(m.group(1)) if m else 7
        options = [int(number), number, [value], {"value": value}, True, None]
    elif isinstance(value, bool):
        options = [str(value).lower(), int(value), "yes", [value], None]
    elif isinstance(value, (int, float)):
        options = [str(value), f"{value}", [value], {"value": value}, bool(value), None, float(value)]
    elif value is None:
        options = [0, "", "null", [], {}]
    else:  # a section or list turned into a scalar, or the other container
        options = [0, "x", True, None, [] if isinstance(value, dict) else {}]
    new = rng.choice(options)
    parent[key] = new
    return f"change_type {path}: {type(value).__name__} -> {new!r:.40}"


_UNIT_MANGLES = [
    lambda n, u: f"{n}{u[:-1]}z" if len(u) > 1 else f"{n}{u}z",  # 10Gbps -> 10Gbpz
    lambda n, u: f"-{n.lstrip('+-')}{u}",
    lambda n, u: f"1e400{u}",
    lambda n, u: f"1e-400{u}",
    lambda n, u: f"0x10{u}",
    lambda n, u: "",
    lambda n, u: u,  # no number
    lambda n, u: n,  # no unit
    lambda n, u: f"{n}{u.upper()}",
    lambda n, u: f"{n} {u}",
    lambda n, u: f"{n}{u}{n}{u}",
    lambda n, u: f"{n}\u00b5{u}",  # micro sign
    lambda n, u: f"\uff11\uff10{u}",  # full-width digits
    lambda n, u: f"{n}{u}\u200b",  # zero-width space
    lambda n, u: f"nan{u}",
    lambda n, u: f"inf{u}",
    lambda n, u: f"1_000{u}",
    lambda n, u: f"{n}.{u}",
    lambda n, u: f"{n}%",
]


def mangle_unit(doc, rng):
    """A quantity with a unit ("10Gbps", "5us", "4MiB") gets a broken unit or number."""
    nodes = _quantities(doc)
    if not nodes:
        return None
    parent, key, value, path = rng.choice(nodes)
    number, unit = _QUANTITY.match(value).groups()
    parent[key] = rng.choice(_UNIT_MANGLES)(number, unit)
    return f"mangle_unit {path}: {value!r} -> {parent[key]!r}"


_EDGES = [0, -1, 1, 2**31 - 1, 2**31, 2**32, 2**63 - 1, 2**63, 2**64, 2**64 + 1, -2**63, 1e308, -1e308,
          5e-324, math.nan, math.inf, -math.inf, 0.5]


def range_edge(doc, rng):
    """A number (plain or in a quantity) becomes a range edge: 0, -1, 2^31, 2^63, 2^64, 1e308,
    nan, inf."""
    nodes = [n for n in _scalars(doc) if isinstance(n[2], (int, float)) and not isinstance(n[2], bool)]
    nodes += _quantities(doc)
    if not nodes:
        return None
    parent, key, value, path = rng.choice(nodes)
    edge = rng.choice(_EDGES)
    if isinstance(value, str):
        unit = _QUANTITY.match(value).group(2)
        text = "nan" if isinstance(edge, float) and math.isnan(edge) else ("inf" if edge == math.inf else
                                                                          "-inf" if edge == -math.inf else edge)
        parent[key] = f"{text}{unit}"
    else:
        parent[key] = edge
    return f"range_edge {path}: {value!r} -> {parent[key]!r}"


def delete_key(doc, rng):
    """A key (or list entry) disappears, required or not."""
    nodes = list(_walk(doc))
    if not nodes:
        return None
    parent, key, _, path = rng.choice(nodes)
    del parent[key]
    return f"delete_key {path}"


_UNKNOWN_KEYS = ["bogus", "", "Name", "duration ", "d\u00fcr\u00e4tion", "buffer", "seed", "kind", "enabled",
                 "0", 1, None, True, 1.5, "a" * 300, "x.y", "flows[0]"]


def add_unknown_key(doc, rng):
    """An unknown key (typos, non-string keys, a key of another section) at the top level or in
    a nested section."""
    dicts = _containers(doc, dict)
    if not dicts:
        return None
    target, path = dicts[0] if rng.random() < 0.3 else rng.choice(dicts)
    key = rng.choice(_UNKNOWN_KEYS)
    if key in target:
        key = f"{key}_extra"
    target[key] = rng.choice([1, "x", "10Gbps", True, None, [1, 2], {"k": 1}])
    return f"add_unknown_key {path}: {key!r:.40}"


def duplicate_list_entry(doc, rng):
    """A list entry (a flow, a link, a profile, a pcap port) appears twice."""
    lists = [(c, p) for c, p in _containers(doc, list) if c]
    if not lists:
        return None
    target, path = rng.choice(lists)
    i = rng.randrange(len(target))
    target.insert(i + 1, copy.deepcopy(target[i]))
    return f"duplicate_list_entry {path}[{i}]"


def _as_custom(topo):
    """A custom topology with the node names of `topo`'s generator where they are simple
    (dumbbell, incast), else one switch sw0 with hosts h0..h7."""
    kind = topo.get("kind", "dumbbell")
    if kind == "custom" and isinstance(topo.get("links"), list):
        return topo
    if kind == "incast" and isinstance(topo.get("incast"), dict) and isinstance(topo["incast"].get("hosts"), int):
        n = max(2, min(topo["incast"]["hosts"], 64))
        switches = [{"name": "tor", "ports": n}]
        hosts = [f"h{i}" for i in range(n)]
        links = [{"a": h, "b": f"tor:{i}"} for i, h in enumerate(hosts)]
    elif kind == "dumbbell":
        n = 2
        if isinstance(topo.get("dumbbell"), dict) and isinstance(topo["dumbbell"].get("hosts_per_side"), int):
            n = max(1, min(topo["dumbbell"]["hosts_per_side"], 32))
        switches = [{"name": "s0", "ports": n + 1}, {"name": "s1", "ports": n + 1}]
        hosts = [f"h{i}" for i in range(2 * n)]
        links = [{"a": h, "b": f"s{i // n}:{i % n}"} for i, h in enumerate(hosts)] + [{"a": f"s0:{n}", "b": f"s1:{n}"}]
    else:
        switches = [{"name": "sw0", "ports": 8}]
        hosts = [f"h{i}" for i in range(8)]
        links = [{"a": h, "b": f"sw0:{i}"} for i, h in enumerate(hosts)]
    keep = {k: v for k, v in topo.items() if k in ("host_rate", "link_delay", "cable_length")}
    return dict(kind="custom", **keep, switches=switches, hosts=[{"name": h} for h in hosts], links=links)


def topology_edit(doc, rng):
    """A custom topology (a generator's is rewritten as one first) gets a defect: a link to a
    node that does not exist, a self-link, a duplicate node name, a link with missing fields, a
    bad port; or a generator gets another kind or zero/huge counts."""
    if not isinstance(doc, dict):
        return None
    topo = doc.get("topology")
    if not isinstance(topo, dict):
        topo = doc["topology"] = {"kind": "dumbbell"}
    if topo.get("kind", "dumbbell") != "custom" and rng.random() < 0.25:
        generators = ["dumbbell", "incast", "leaf_spine", "fat_tree", "parking_lot", "multi_dc", "custom"]
        what = rng.choice(["kind", "count"])
        if what == "kind":
            topo["kind"] = rng.choice(generators)
            return f"topology_edit kind -> {topo['kind']}"
        sections = [k for k, v in topo.items() if isinstance(v, dict) and v]
        if not sections:
            return None
        section = topo[rng.choice(sections)]
        field = rng.choice(sorted(section, key=str))
        section[field] = rng.choice([0, 1, 4096, 10**6, -1])
        return f"topology_edit {field} -> {section[field]}"
    topo = doc["topology"] = _as_custom(topo)
    switches, hosts, links = topo.setdefault("switches", []), topo.setdefault("hosts", []), topo.setdefault("links", [])
    if not all(isinstance(x, list) for x in (switches, hosts, links)):
        return None
    names = [n["name"] for n in switches + hosts if isinstance(n, dict) and isinstance(n.get("name"), str)]
    sw = next((s for s in switches if isinstance(s, dict) and isinstance(s.get("name"), str)), None)
    node = rng.choice(names) if names else "h0"
    port = f"{sw['name']}:0" if sw else "sw0:0"
    defects = {
        "dangling_host": lambda: links.append({"a": node, "b": "ghost"}),
        "dangling_switch": lambda: links.append({"a": "nosuch:0", "b": node}),
        "self_link_host": lambda: links.append({"a": node, "b": node}),
        "self_link_port": lambda: links.append({"a": port, "b": port}),
        "self_link_switch": lambda: links.append({"a": port, "b": port[:-1] + "1"}),
        "duplicate_switch": lambda: switches.append(copy.deepcopy(sw or {"name": "sw0", "ports": 1})),
        "duplicate_host": lambda: hosts.append({"name": node}),
        "host_named_like_switch": lambda: hosts.append({"name": port.split(":")[0]}),
        "link_missing_a": lambda: links.append({"b": node}),
        "link_missing_both": lambda: links.append({}),
        "link_not_a_map": lambda: links.append(node),
        "port_out_of_range": lambda: links.append({"a": port[:-1] + "999", "b": "h_extra"}),
        "bad_port_text": lambda: links.append({"a": rng.choice([port[:-2], port + ":0", ":0", port[:-1] + "-1",
                                                               port[:-1] + "x", port[:-1] + "18446744073709551616"]),
                                               "b": node}),
        "port_used_twice": lambda: links.append(copy.deepcopy(links[0]) if links else {"a": port, "b": node}),
        "zero_ports": lambda: sw is not None and sw.__setitem__("ports", 0),
        "no_links": lambda: links.clear(),
        "bad_node_name": lambda: hosts.append({"name": rng.choice(["a b", "a/b", "", "x" * 300, "h:0", "\u00e9"])}),
    }
    name = rng.choice(sorted(defects))
    defects[name]()
    return f"topology_edit {name}"


def huge_value(doc, rng):
    """A list grows to 10^5 entries (10^3 if they are maps: flows, links and hosts cost the
    check milliseconds each), or a scalar becomes a 10^5-character string or number. The last
    mutation of its case: the grown list repeats one object, which later mutations would
    multiply."""
    lists = [(c, p) for c, p in _containers(doc, list) if c and len(dump(c[0])) < 400]
    scalars = _scalars(doc)
    if lists and (not scalars or rng.random() < 0.5):
        target, path = rng.choice(lists)
        n = 10**3 if isinstance(target[0], (dict, list)) else 10**5
        if re.match(r"traffic\.(workload|generate|incast)\b", path):
            n = 20  # each entry expands into thousands of flows
        target.extend([target[0]] * (n - len(target)))
        return f"huge_value {path}: {len(target)} entries"
    if not scalars:
        return None
    parent, key, value, path = rng.choice(scalars)
    unit = _QUANTITY.match(value).group(2) if isinstance(value, str) and _QUANTITY.match(value) else ""
    parent[key] = rng.choice(["9" * 10**5 + unit, "x" * 10**5, "1" + "0" * 400 + unit, "0." + "0" * 10**4 + "1" + unit])
    return f"huge_value {path}: {len(parent[key])} characters"


def deep_nesting(doc, rng):
    """A value becomes a 200-deep nest of maps or lists."""
    nodes = list(_walk(doc))
    if not nodes:
        return None
    parent, key, _, path = rng.choice(nodes)
    inner, as_list = 1, rng.random() < 0.5
    for _ in range(200):
        inner = [inner] if as_list else {"a": inner}
    parent[key] = inner
    return f"deep_nesting {path}: 200 {'lists' if as_list else 'maps'}"


def swap_sections(doc, rng):
    """Two sections (at the top level or inside one section) trade contents, or one takes a copy
    of another's."""
    dicts = [(c, p) for c, p in _containers(doc, dict) if len(c) >= 2]
    if not dicts:
        return None
    target, path = dicts[0] if rng.random() < 0.5 and dicts[0][0] is doc else rng.choice(dicts)
    a, b = rng.sample(sorted(target, key=str), 2)
    if rng.random() < 0.5:
        target[a], target[b] = target[b], target[a]
        return f"swap_sections {path}: {a} <-> {b}"
    target[a] = copy.deepcopy(target[b])
    return f"swap_sections {path}: {a} := {b}"


MUTATORS = [change_type, mangle_unit, range_edge, delete_key, add_unknown_key, duplicate_list_entry,
            topology_edit, huge_value, deep_nesting, swap_sections]

# --- cases ----------------------------------------------------------------------------------


@dataclasses.dataclass
class Case:
    index: int
    scenario: str
    mutations: list
    text: str

    @property
    def digest(self):
        return hashlib.sha256(self.text.encode()).hexdigest()


def dump(doc):
    if sys.getrecursionlimit() < 10000:
        sys.setrecursionlimit(10000)  # a nest inside a nest is 400+ levels, three frames each
    return yaml.dump(doc, Dumper=_Dumper, sort_keys=False, allow_unicode=True, default_flow_style=None, width=120)


def load_scenarios(directory=None):
    """{name: document} of the shipped scenarios (or of every *.yaml in `directory`)."""
    if directory is None:
        from . import scenarios
        paths = {n: scenarios.path(n) for n in scenarios.names()}
    else:
        paths = {p.stem: p for p in sorted(pathlib.Path(directory).glob("*.yaml"))}
    if not paths:
        raise FileNotFoundError(f"no scenarios found{f' in {directory}' if directory else ''}")
    return {n: yaml.safe_load(pathlib.Path(p).read_text()) for n, p in sorted(paths.items())}


def make_case(seed, index, docs):
    """Case `index` of `seed`: its own rng, so any case regenerates alone."""
    rng = random.Random(f"fabricsim-fuzz/{seed}/{index}")
    name = rng.choice(sorted(docs))
    doc = copy.deepcopy(docs[name])
    mutations = []
    for _ in range(rng.randint(1, 3)):
        for _attempt in range(20):
            mutate = rng.choice(MUTATORS)
            what = mutate(doc, rng)
            if what is not None:
                mutations.append(what)
                break
        if mutate is huge_value:
            break
    return Case(index, name, mutations, dump(doc))


def generate(seed, count, docs, start=0):
    """Cases start..start+count-1 of `seed`."""
    for i in range(start, start + count):
        yield make_case(seed, i, docs)

# --- verdicts -------------------------------------------------------------------------------


# What the output may never contain: an uncaught exception (SystemC's sc_elab_and_sim reports
# one escaping sc_main as "Error: (E549) uncaught exception" on stdout), a failed assertion, a
# sanitizer report.
_CRASH_TEXT = ["Traceback (most recent call last)", "terminate called", "uncaught exception", "Assertion",
               "AddressSanitizer", "UndefinedBehaviorSanitizer", "runtime error:", "Segmentation fault",
               "core dumped"]
# A raw C++ exception reaching the user: its type or a standard library what() text.
_LEAK = re.compile(r"std::|basic_string|\bout_of_range\b|\binvalid_argument\b|\bbad_alloc\b|\bbad_\w+_access\b|"
                   r"\bbad_any_cast\b|\bstoi\b|\bstoul\b|\bstoull\b|\bstoll\b|\bstod\b|\bstof\b|_M_\w+|"
                   r"\bvector::|\bmap::at\b|\bYAML::")


def _signal_name(returncode):
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def classify(returncode, stderr, timed_out=False, stdout=""):
    """The failure kind of one validate run, or None if it is a clean verdict."""
    if timed_out:
        return "hang"
    if returncode < 0:
        return f"signal {_signal_name(returncode).removeprefix('signal ')}"
    for text in _CRASH_TEXT:
        if text in stderr or text in stdout:
            return f"output: {text}"
    if returncode not in (0, 2):
        return f"exit {returncode}"
    if returncode == 2:
        if not stderr.strip():
            return "exit 2 without a message"
        m = _LEAK.search(stderr)
        if m:
            return f"leaked C++ exception: {m.group(0)}"
    return None


@dataclasses.dataclass
class Failure:
    case: Case
    kind: str
    returncode: object
    stderr: str
    stdout: str = ""
    reproducer: pathlib.Path = None
    known: str = None  # the finding file of a matching allow-list entry


@dataclasses.dataclass
class Report:
    seed: int
    cases: int = 0
    exit_codes: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    mutations: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    failures: list = dataclasses.field(default_factory=list)
    seconds: float = 0.0

    @property
    def new_failures(self):
        return [f for f in self.failures if f.known is None]

    def text(self):
        lines = [f"fabricsim fuzz: seed {self.seed}, {self.cases} cases in {self.seconds:.1f} s",
                 "exit codes: " + ", ".join(f"{k}: {v}" for k, v in sorted(self.exit_codes.items(), key=str)),
                 "mutations: " + ", ".join(f"{k}: {v}" for k, v in sorted(self.mutations.items()))]
        lines.append(f"failures: {len(self.new_failures)}"
                     + (f" (and {len(self.failures) - len(self.new_failures)} known)" if self.failures else ""))
        for f in self.failures:
            first = (f.stderr.strip() or f.stdout.strip()).splitlines()[:1]
            lines.append(f"  case {f.case.index} ({f.case.scenario}): {f.kind}"
                         + (f" [known: {f.known}]" if f.known else "") + f" -> {f.reproducer}")
            lines.append(f"    mutations: {'; '.join(f.case.mutations)}")
            if first:
                lines.append(f"    stderr: {first[0][:200]}")
        return "\n".join(lines)


def _match_known(failure, known):
    for entry in known or ():
        if entry["kind"] == failure.kind and re.search(entry["output"], failure.stderr + failure.stdout) and \
                any(re.search(entry.get("mutation", ""), m) for m in failure.case.mutations):
            return entry["file"]
    return None


def _write_reproducer(out, seed, case, failure, sim):
    out.mkdir(parents=True, exist_ok=True)
    stem = out / f"seed{seed}-case{case.index}"
    header = (f"# fabricsim fuzz reproducer: seed {seed}, case {case.index}, from {case.scenario}.yaml\n"
              f"# failure: {failure.kind} (exit {failure.returncode})\n"
              + "".join(f"# mutation: {m[:200]}\n" for m in case.mutations)
              + f"# reproduce: {sim} validate {stem}.yaml\n")
    pathlib.Path(f"{stem}.yaml").write_text(header + case.text)
    pathlib.Path(f"{stem}.stderr").write_text(failure.stderr)
    if failure.stdout:
        pathlib.Path(f"{stem}.stdout").write_text(failure.stdout)
    return pathlib.Path(f"{stem}.yaml")


def _child_limits(memory_mb):
    def limit():  # in the child: a config that allocates without bound fails there, not here
        import resource
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a crash per case, but no core files
        if memory_mb:
            resource.setrlimit(resource.RLIMIT_AS, (memory_mb << 20, memory_mb << 20))
    return limit


def check(sim, text, timeout, workdir, memory_mb=2048):
    """(returncode, stderr, timed_out, stdout) of `sim validate` on `text`."""
    path = pathlib.Path(workdir) / "case.yaml"
    path.write_text(text)
    env = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
    try:
        p = subprocess.run([str(sim), "validate", str(path)], capture_output=True, env=env, timeout=timeout,
                           cwd=workdir, stdin=subprocess.DEVNULL, preexec_fn=_child_limits(memory_mb))
    except subprocess.TimeoutExpired as e:
        return None, (e.stderr or b"").decode(errors="replace"), True, (e.stdout or b"").decode(errors="replace")
    return p.returncode, p.stderr.decode(errors="replace"), False, p.stdout.decode(errors="replace")


def run(sim, cases=500, seed=1, out="fuzz-out", timeout=10.0, start=0, scenarios=None, known=None,
        max_failures=None, memory_mb=2048, log=None):
    """Fuzz `sim validate` with `cases` cases of `seed`; returns a Report. `known`: allow-list
    entries {"kind", "output" (regex on stderr + stdout), "file", optional "mutation" (regex on one
    of the case's mutations)} of recorded findings, reported but not new.
    `memory_mb`: address-space limit of each check (0: none, e.g. for a sanitizer build)."""
    docs = load_scenarios(scenarios)
    report, t0 = Report(seed), time.monotonic()
    out = pathlib.Path(out)
    with tempfile.TemporaryDirectory(prefix="fabricsim-fuzz-") as work:
        for case in generate(seed, cases, docs, start):
            rc, stderr, timed_out, stdout = check(sim, case.text, timeout, work, memory_mb)
            report.cases += 1
            report.exit_codes["timeout" if timed_out else _signal_name(rc) if rc < 0 else rc] += 1
            report.mutations.update(m.split()[0] for m in case.mutations)
            kind = classify(rc, stderr, timed_out, stdout)
            if kind is None:
                continue
            f = Failure(case, kind, rc, stderr, stdout)
            f.known = _match_known(f, known)
            f.reproducer = _write_reproducer(out, seed, case, f, sim)
            report.failures.append(f)
            if log:
                print(f"case {case.index}: {kind} -> {f.reproducer}", file=log, flush=True)
            if max_failures is not None and len(report.new_failures) >= max_failures:
                break
    report.seconds = time.monotonic() - t0
    return report


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m fabricsim.fuzz", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=500, help="number of cases (default 500)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the mutations (default 1)")
    ap.add_argument("--case", type=int, default=None, help="run only this case index of the seed")
    ap.add_argument("--sim", default=None, help="fabricsim-sim binary (default: $FABRICSIM_SIM, the package's, "
                                                "the checkout's build)")
    ap.add_argument("--out", default="fuzz-out", help="directory for reproducers (default fuzz-out)")
    ap.add_argument("--timeout", type=float, default=10.0, help="seconds per case before it counts as a hang")
    ap.add_argument("--scenarios", default=None, help="directory of seed scenarios (default: the shipped ones)")
    ap.add_argument("--max-failures", type=int, default=None, help="stop after this many failures")
    ap.add_argument("--memory-mb", type=int, default=2048,
                    help="address-space limit of each check in MiB (default 2048; 0 = none, for ASan builds)")
    ap.add_argument("--print", action="store_true", help="print the mutated documents instead of running them")
    args = ap.parse_args(argv)
    start, count = (args.case, 1) if args.case is not None else (0, args.cases)
    if args.print:
        for c in generate(args.seed, count, load_scenarios(args.scenarios), start):
            print(f"# case {c.index} from {c.scenario}: {'; '.join(c.mutations)}\n{c.text}---")
        return 0
    if args.sim is None:
        from ._sim import binary
        args.sim = binary()
    report = run(args.sim, count, args.seed, args.out, args.timeout, start, args.scenarios,
                 max_failures=args.max_failures, memory_mb=args.memory_mb, log=sys.stderr)
    print(report.text())
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
