"""FERA on the seed's multi-bottleneck topologies (seed-003 §3.5, §3.7; the generators of issue
16): a parking lot of two 10G chain links, with one-hop delays of 0.5 us and 50 us (the long
control loop), and the asymmetric topology whose right-most links are a shared 10G link and a
1G destination link. The thesis: FERA reaches max-min fairness and stays stable in both parking
lots, and gives 4.5 / 4.5 / 0.5 / 0.5 Gb/s in the asymmetric one ("This is optimal")."""
import json

import pytest

from fabricsim.validation.fera_bcn import ASYMMETRIC, PARKING_LOT, fera_regulators


def run(sim, path, text, *sets):
    path.mkdir(parents=True, exist_ok=True)
    (path / "s.yaml").write_text(text)
    sim(path / "s.yaml", *[a for s in sets for a in ("--set", s)], "--out", path / "r", "--quiet")
    return json.loads((path / "r" / "summary.json").read_text())


@pytest.mark.parametrize("hop_delay", ["0.5us", "50us"])
def test_parking_lot_reaches_max_min(sim, tmp_path, hop_delay):
    # The long flow s0_h0 -> s2_h0 crosses both chain links, each shared with one cross flow:
    # max-min gives every flow C/2.
    s = run(sim, tmp_path, PARKING_LOT, f"topology.parking_lot.chain_delay={hop_delay}")
    assert s["frames"]["dropped"] == 0
    for r in fera_regulators(s, ["s0_h0", "s0_h1", "s1_h1"]):
        assert r == pytest.approx(5.0, rel=0.01)
    got = [f["delivered_bytes"] * 8 / s["sim_time_s"] / 1e9 for f in s["flows"]]
    assert max(got) - min(got) < 0.1 and min(got) > 4.7, got


def test_asymmetric_topology_gives_the_optimal_split(sim, tmp_path):
    s = run(sim, tmp_path, ASYMMETRIC)
    assert s["frames"]["dropped"] == 0
    for r, want in zip(fera_regulators(s, ["st1", "st2", "st3", "st4"]), [4.5, 4.5, 0.5, 0.5]):
        assert r == pytest.approx(want, rel=0.01)
