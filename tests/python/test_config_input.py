"""Reading a scenario: re-runnable config echoes, repeated keys, locale-independent numbers,
path-safe names and scenario-relative files shipped with the run."""
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest
import yaml

import fabricsim
from fabricsim._native import native
from conftest import ROOT, deterministic

def sim_in(cwd, *args, check=True):
    """fabricsim-sim run in `cwd` (the conftest `sim` runs in the test's cwd)."""
    exe = os.environ.get("FABRICSIM_SIM", str(ROOT / "build" / "platforms" / "fabricsim-sim"))
    env = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
    p = subprocess.run([exe, *map(str, args)], capture_output=True, text=True, env=env, cwd=cwd, timeout=60)
    assert not check or p.returncode == 0, p.stderr
    return p


# Each shipped scenario shortened to well under a second of simulation.
SHORT_DURATION = {"default": "2ms", "incast_dctcp": "20ms", "leaf_spine_profiles": "1ms",
                  "mqecn_static_flows": "5ms", "websearch_leaf_spine": "3ms", "pause_cycle": "2ms",
                  "pfc_storm": "20ms", "headroom_incast": "1ms",
                  "pfc_spreading": "2ms", "dcqcn_two_flows": "2ms", "dcqcn_incast": "1ms",
                  "dcqcn_spreading": "2ms", "hull_fat_tree": "2ms", "nic_rx_coalescing": "5ms",
                  "nic_lso_bursts": "12ms", "hull_testbed": "300ms", "qcn_stability": "5ms",
                  "bcn_join": "20ms", "hotspot_8021qau": "21ms", "rcp_ap": "200ms",
                  "qcn_buffer_sizing": "20ms", "xpass_dumbbell": "12ms",
                  "aeolus_incast": "3ms", "gemini_sawtooth": "20ms", "chip_packet_rate": "20us"}


def test_every_shipped_scenario_is_shortened_here(scenarios):
    assert sorted(p.stem for p in scenarios.glob("*.yaml")) == sorted(SHORT_DURATION)


@pytest.mark.parametrize("name", sorted(SHORT_DURATION))
def test_the_config_echo_runs_again_with_an_identical_summary(sim, scenarios, tmp_path, name):
    sim(scenarios / f"{name}.yaml", "--set", f"duration={SHORT_DURATION[name]}", "--out", tmp_path / "first",
        "--quiet")
    first = json.loads((tmp_path / "first" / "summary.json").read_text())
    # (a) the summary's "config" (JSON is YAML); (b) config.yaml as a YAML 1.1 reader types it.
    from_summary = tmp_path / "from_summary.yaml"
    from_summary.write_text(json.dumps(first["config"]))
    from_config_yaml = tmp_path / "from_config_yaml.yaml"
    from_config_yaml.write_text(json.dumps(yaml.safe_load((tmp_path / "first" / "config.yaml").read_text())))
    for echo in (from_summary, from_config_yaml):
        out = tmp_path / echo.stem
        sim(echo, "--out", out, "--quiet")
        again = json.loads((out / "summary.json").read_text())
        assert deterministic(again) == deterministic(first), echo.name
        assert (out / "flows.csv").read_bytes() == (tmp_path / "first" / "flows.csv").read_bytes()
    assert first["scenario"] == name and first["config"]["name"] == name


def test_the_echo_types_choices_as_strings():
    cfg = fabricsim.validate({"switch": {"ecn": {"mode": "off"}}, "traffic": {"flows": [
        {"src": "h0", "dst": "h1", "ecn": "yes", "dscp": 10}]}})["config"]
    assert cfg["switch"]["ecn"]["mode"] == "off"
    assert cfg["traffic"]["flows"][0]["ecn"] is True and cfg["traffic"]["flows"][0]["dscp"] == 10
    assert cfg["switch"]["mmu"]["pg_alpha"] == 8.0 and cfg["seed"] == 1 and cfg["name"] == "scenario"


def test_a_repeated_key_is_refused_naming_both_lines(sim, tmp_path):
    f = tmp_path / "dup.yaml"
    f.write_text("duration: 1ms\nswitch:\n  ecn:\n    mode: step\n  buffer: 1MiB\n  ecn: {mode: off}\n")
    p = sim(f, check=False)
    assert p.returncode == 2
    assert p.stderr.strip() == f"fabricsim-sim: configuration error: switch.ecn: duplicate key (lines 3 and 6 of {f})"
    with pytest.raises(fabricsim.ConfigError) as ei:
        fabricsim.validate("seed: 1\nseed: 2\n")
    assert str(ei.value) == "seed: duplicate key (lines 1 and 2)" and ei.value.key == "seed"
    with pytest.raises(fabricsim.ConfigError, match=r"^topology\.incast\.hosts: duplicate key \(line 1, columns"):
        fabricsim.validate({}, overrides=["topology.incast={hosts: 4, hosts: 5}"])


@pytest.mark.parametrize("text, message", [
    ('duration: 1ms\n"": 3\n', "at the top level: a key is empty or null ('' or ~); every key needs a name"),
    ("duration: 1ms\n~: 3\n", "at the top level: a key is empty or null ('' or ~); every key needs a name"),
    ('switch:\n  mmu:\n    "": 1\n', "switch.mmu: a key is empty or null ('' or ~); every key needs a name"),
    ("switch: " + "[" * 600 + "]" * 600 + "\n",
     "line 1: YAML nested deeper than 500 levels, the parser's limit (no scenario needs that many)"),
])
def test_empty_keys_and_deep_nesting_are_named(text, message):
    with pytest.raises(fabricsim.ConfigError) as ei:
        fabricsim.validate(text)
    assert str(ei.value) == message


@pytest.mark.parametrize("overrides, message", [
    ({"topology.host_rate": "0x10Gbps"}, "topology.host_rate: '0x10Gbps' is hexadecimal; write a decimal number"),
    ({"seed": "0x10"}, "seed: '0x10' is not a decimal integer"),
    ({"seed": "010"}, "seed: '010' has a leading zero (octal is not accepted)"),
    ({"phy.ber": "1,5"}, "phy.ber: '1,5' is not a decimal number"),
    ({"duration": "infms"}, "duration: 'infms' does not start with a decimal number"),
])
def test_numbers_are_strict_decimal(overrides, message):
    with pytest.raises(fabricsim.ConfigError) as ei:
        fabricsim.validate({}, overrides=overrides)
    assert str(ei.value) == message


def test_scientific_notation_is_decimal():
    assert fabricsim.validate({"duration": "1e3us", "phy": {"ber": "1e-12"}})["config"]["phy"]["ber"] == 1e-12


LOCALE_CHECK = """
import locale, sys
import fabricsim
locale.setlocale(locale.LC_ALL, "de_DE.UTF-8")
assert locale.localeconv()["decimal_point"] == ","
fabricsim.validate({"duration": "1.5ms"})
try:
    fabricsim.validate({"duration": "1,5ms"})
except fabricsim.ConfigError as e:
    print(e.key)
"""


def test_numbers_parse_the_same_under_a_comma_decimal_locale(tmp_path):
    localedef = shutil.which("localedef")
    if not localedef or not pathlib.Path("/usr/share/i18n/locales/de_DE").exists():
        pytest.skip("localedef or the locale sources (Debian package 'locales') are missing")
    subprocess.run([localedef, "-i", "de_DE", "-f", "UTF-8", str(tmp_path / "de_DE.UTF-8")], check=True,
                   capture_output=True)
    env = dict(os.environ, LOCPATH=str(tmp_path))
    p = subprocess.run([sys.executable, "-c", LOCALE_CHECK], env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout == "duration\n"


def test_an_unsafe_name_is_refused_and_a_file_stem_is_made_safe(scenarios, tmp_path):
    p = sim_in(tmp_path, scenarios / "default.yaml", "--set", "name=../../x", check=False)
    assert p.returncode == 2
    assert "name: '../../x' starts with '.'" in p.stderr
    assert list(tmp_path.iterdir()) == []
    odd = tmp_path / "my run, 2.yaml"
    odd.write_text("duration: 100us\n")
    sim_in(tmp_path, odd, "--quiet")
    summary = json.loads((tmp_path / "results" / "my_run__2" / "summary.json").read_text())
    assert summary["scenario"] == "my_run__2" and summary["config"]["name"] == "my_run__2"
    assert fabricsim.validate(odd)["name"] == "my_run__2"


CSV = "size_bytes,cdf\n1000,0\n1000,0.5\n20000,1\n"
WORKLOAD = "duration: 1ms\ntraffic:\n  workload: [{sizes: my.csv, load: 0.2}]\n"


def test_a_workload_csv_resolves_against_the_scenario_file(tmp_path):
    (tmp_path / "scn").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "scn" / "my.csv").write_text(CSV)
    (tmp_path / "scn" / "w.yaml").write_text(WORKLOAD)
    sim_in(tmp_path / "elsewhere", tmp_path / "scn" / "w.yaml", "--out", tmp_path / "out", "--quiet")
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["config"]["traffic"]["workload"][0]["sizes"] == str(tmp_path / "scn" / "my.csv")
    assert len(summary["flows"]) > 0


def test_given_files_replace_the_disk(tmp_path):
    csv = tmp_path / "my.csv"
    csv.write_text(CSV)
    d = native.validate(WORKLOAD, False, [], "w", str(tmp_path))
    assert d["files"] == {str(csv): CSV}
    csv.unlink()
    with pytest.raises(fabricsim.ConfigError, match=r"^traffic\.workload\[0\]\.sizes: cannot read "):
        native.validate(WORKLOAD, False, [], "w", str(tmp_path))
    again = native.validate(WORKLOAD, False, [], "w", base_dir=str(tmp_path), files=d["files"])
    assert again["counts"] == d["counts"] and again["files"] == d["files"]
    assert json.loads(again["config_json"])["traffic"]["workload"][0]["sizes"] == str(csv)
