"""results.vcd: trace.vcd is a VCD (pyvcd's tokenizer reads it) whose values, at every sample
time, are the time series' columns it traces; bad entries are refused before the run."""
import csv
import shutil
import subprocess

import pytest

vcd_reader = pytest.importorskip("vcd.reader")

# DCQCN incast, 2 ms: PFC pause state, XOFF, headroom, NIC limiter rates and the MMU pools move.
SETS = ["--set", "duration=2ms", "--set", "results.sample_interval=10us"]


def read_vcd(path):
    """{signal path: [(time, value), ...]} for every value change, scopes joined by '.'."""
    ids, changes, scope, time = {}, {}, [], 0
    with open(path, "rb") as f:
        for tok in vcd_reader.tokenize(f):
            k = tok.kind
            if k is vcd_reader.TokenKind.SCOPE:
                scope.append(tok.scope.ident)
            elif k is vcd_reader.TokenKind.UPSCOPE:
                scope.pop()
            elif k is vcd_reader.TokenKind.VAR:
                assert tok.var.id_code not in ids
                ids[tok.var.id_code] = ".".join(scope[1:] + [tok.var.reference])  # under "top"
                changes[ids[tok.var.id_code]] = []
            elif k is vcd_reader.TokenKind.TIMESCALE:
                assert (int(tok.timescale.magnitude), str(tok.timescale.unit.value)) == (1, "ps")
            elif k is vcd_reader.TokenKind.CHANGE_TIME:
                assert tok.time_change > time or not any(changes.values())
                time = tok.time_change
            elif k in (vcd_reader.TokenKind.CHANGE_VECTOR, vcd_reader.TokenKind.CHANGE_REAL):
                changes[ids[tok.data.id_code]].append((time, tok.data.value))
    return changes


def value_at(change_list, t):
    v = None
    for at, value in change_list:
        if at > t:
            break
        v = value
    return v


def test_vcd_values_are_the_time_series(sim, scenarios, tmp_path):
    out = tmp_path / "r"
    sim(scenarios / "dcqcn_incast.yaml", *SETS, "--set", "results.vcd=['*']", "--out", out, "--quiet")
    with open(out / "timeseries.csv") as f:
        rows = list(csv.reader(f))
    header, rows = rows[0], rows[1:]
    changes = read_vcd(out / "trace.vcd")
    assert list(changes) == header[1:]  # every column, in the time series' order
    assert any(n.endswith("_paused") for n in header) and any("_nic.dcqcn" in n or "_nic." in n for n in header)
    moved = 0
    for col, name in enumerate(header[1:], start=1):
        ch = changes[name]
        moved += len(ch) > 1
        # Only changes are dumped: no two successive entries hold the same value.
        assert all(a[1] != b[1] for a, b in zip(ch, ch[1:])), name
        for row in rows:
            t = round(float(row[0]) * 1e6)  # time_us -> ps (exact: at most 6 decimals)
            v = value_at(ch, t)
            assert v == (float(row[col]) if isinstance(v, float) else int(row[col])), (name, row[0])
    assert len(rows) == 200 and moved > 10


def test_vcd_selects_by_glob(sim, scenarios, tmp_path):
    out = tmp_path / "r"
    sim(scenarios / "dcqcn_incast.yaml", *SETS, "--set", "results.vcd=['tor.p0_frame_bytes', 'tor.*_paused']",
        "--out", out, "--quiet")
    header = (out / "timeseries.csv").read_text().splitlines()[0].split(",")
    want = [n for n in header if n == "tor.p0_frame_bytes" or (n.startswith("tor.") and n.endswith("_paused"))]
    assert len(want) > 2 and list(read_vcd(out / "trace.vcd")) == want


def test_no_vcd_without_the_key(sim, scenarios, tmp_path):
    sim(scenarios / "dcqcn_incast.yaml", *SETS, "--out", tmp_path / "r", "--quiet")
    assert not (tmp_path / "r" / "trace.vcd").exists()


@pytest.mark.parametrize("sets, message", [
    (["results.vcd=['tor.p0_frame_bytes', 'leaf9.*']"],
     "results.vcd[1]: 'leaf9.*' matches no time-series column of this platform"),
    (["results.vcd=['']"], "results.vcd[0]: is empty"),
    (["results.vcd=['tor.*']", "results.sample_interval=0s"],
     "results.vcd: needs results.sample_interval > 0"),
    (["results.vcd=5"], "results.vcd"),
])
def test_bad_vcd_entries_exit_2_naming_the_entry(sim, scenarios, tmp_path, sets, message):
    args = [a for s in sets for a in ("--set", s)]
    p = sim(scenarios / "dcqcn_incast.yaml", *SETS, *args, "--out", tmp_path / "r", check=False)
    assert p.returncode == 2, p.stderr
    assert message in p.stderr
    assert not (tmp_path / "r" / "summary.json").exists()


def test_the_output_limit_counts_the_vcd(sim, scenarios, tmp_path):
    """The time series alone fits 1 MiB, with every signal traced it does not: refused before
    the run, trace.vcd named among the parts."""
    sets = ["--set", "duration=200us", "--set", "results.sample_interval=1us",
            "--set", "results.max_output_bytes=1MiB"]
    assert "valid" in sim("validate", scenarios / "dcqcn_incast.yaml", *sets).stdout
    p = sim(scenarios / "dcqcn_incast.yaml", *sets, "--set", "results.vcd=['*']", "--out", tmp_path / "r",
            check=False)
    assert p.returncode == 2, p.stderr
    assert "results.max_output_bytes: the results would take about 2.38 MB" in p.stderr
    assert "trace.vcd up to 2.07 MB (148 signals of results.vcd)" in p.stderr
    assert not (tmp_path / "r" / "summary.json").exists()
    assert not (tmp_path / "r" / "trace.vcd").exists()


def test_gtkwave_converts_the_vcd(sim, scenarios, tmp_path):
    """GTKWave's vcd2fst parses the whole file (it fails on a malformed one)."""
    vcd2fst = shutil.which("vcd2fst")
    if not vcd2fst:
        pytest.skip("gtkwave's vcd2fst not installed")
    out = tmp_path / "r"
    sim(scenarios / "dcqcn_incast.yaml", *SETS, "--set", "results.vcd=['*']", "--out", out, "--quiet")
    p = subprocess.run([vcd2fst, str(out / "trace.vcd"), str(tmp_path / "t.fst")], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "t.fst").stat().st_size > 1000
