"""The parking_lot and multi_dc generators (issue 16): their shape, names and roles, per-link
rates and delays (WAN pairs), WAN loss on the WAN links only, and bad input named with its
key."""
import json

import pytest

MULTI_DC = """
name: mdc
seed: 1
duration: 40ms
topology:
  kind: multi_dc
  host_rate: 10Gbps
  link_delay: 1us
  multi_dc: {dcs: 3, leaves: 2, spines: 2, hosts_per_leaf: 2, borders: 2, fabric_rate: 40Gbps,
             wan_rate: 100Gbps, wan_delays: [5ms, 10ms, 15ms]}
switch_profiles:
  - {name: deep, roles: [border], buffer: 64MB}
traffic:
  flows:
    - {src: dc0_h0, dst: dc1_h3, process: cbr, rate: 1Gbps}
    - {src: dc0_h1, dst: dc2_h0, process: cbr, rate: 1Gbps}
    - {src: dc1_h2, dst: dc2_h1, process: cbr, rate: 1Gbps}
    - {src: dc2_h2, dst: dc2_h1, process: cbr, rate: 1Gbps}
results: {per_queue_series: false}
"""

PARKING_LOT = """
name: pl
seed: 1
duration: 5ms
topology: {kind: parking_lot, link_delay: 1us,
           parking_lot: {switches: 4, hosts_per_switch: 2, chain_rate: 1Gbps, chain_delay: 50us}}
traffic:
  flows:
    - {src: s0_h0, dst: s3_h0, process: cbr, rate: 100Mbps}
    - {src: s1_h1, dst: s2_h1, process: cbr, rate: 100Mbps}
"""


def run(sim, tmp_path, text, *sets, check=True):
    (tmp_path / "s.yaml").write_text(text)
    p = sim(tmp_path / "s.yaml", *[a for s in sets for a in ("--set", s)], "--out", tmp_path / "r",
            "--quiet", check=check)
    if not check:
        return p
    return json.loads((tmp_path / "r" / "summary.json").read_text())


@pytest.fixture(scope="module")
def mdc(sim, tmp_path_factory):
    return run(sim, tmp_path_factory.mktemp("mdc"), MULTI_DC)


def test_multi_dc_names_roles_and_profiles(mdc):
    sw = mdc["switches"]
    assert sorted(sw) == sorted(f"dc{d}_{k}" for d in range(3)
                                for k in ("leaf0", "leaf1", "spine0", "spine1", "border0", "border1"))
    assert len(mdc["nics"]) == 3 * 2 * 2
    assert sw["dc1_border1"]["profile"] == "deep" and sw["dc1_border1"]["buffer_bytes"] == 64_000_000
    assert sw["dc1_leaf0"]["profile"] == "default"
    # Border: one port per spine, one WAN port per other DC.
    assert len(sw["dc0_border0"]["ports"]) == 2 + 2
    assert len(sw["dc0_spine0"]["ports"]) == 2 + 2  # leaves + borders


def test_multi_dc_wan_pairs_have_their_delays_and_rates(mdc):
    links = mdc["links"]
    wan = {k: v for k, v in links.items() if "border" in k and k.count("border") == 2}
    assert len(wan) == 3 * 2 * 2  # three pairs, two borders each, two directions
    lat = {f["dst"]: f["latency_mean_us"] for f in mdc["flows"]}
    # dc0 -> dc1: 5 ms, dc0 -> dc2: 10 ms, dc1 -> dc2: 15 ms, plus a few us inside the DCs.
    assert 5000 < lat["dc1_h3"] < 5030
    assert 10000 < [f for f in mdc["flows"] if f["id"] == 1][0]["latency_mean_us"] < 10030
    assert 15000 < [f for f in mdc["flows"] if f["id"] == 2][0]["latency_mean_us"] < 15030
    assert [f for f in mdc["flows"] if f["id"] == 3][0]["latency_mean_us"] < 30  # intra-DC
    assert all(f["delivered_frames"] > 0 for f in mdc["flows"])


def test_wan_loss_hits_the_wan_links_only(sim, tmp_path):
    s = run(sim, tmp_path, MULTI_DC, "topology.multi_dc.wan_ber=1e-6")
    lost = {k: v["drops"]["fcs_error"] + v.get("corrupted", 0) for k, v in s["links"].items()}
    assert sum(v for k, v in lost.items() if k.count("border") == 2) > 0
    assert sum(v for k, v in lost.items() if k.count("border") != 2) == 0
    assert s["frames"]["dropped_by_cause"]["fcs_error"] > 0
    intra = [f for f in s["flows"] if f["id"] == 3][0]
    assert intra["sent_frames"] - intra["delivered_frames"] < 10  # in flight only


def test_parking_lot_shape_and_delays(sim, tmp_path):
    s = run(sim, tmp_path, PARKING_LOT)
    assert sorted(s["switches"]) == ["s0", "s1", "s2", "s3"]
    assert [len(s["switches"][f"s{i}"]["ports"]) for i in range(4)] == [3, 4, 4, 3]
    lat = [f["latency_mean_us"] for f in s["flows"]]
    # s0 -> s3 crosses three 50 us chain links at 1G (12.3 us per frame each), s1 -> s2 one.
    assert 150 + 3 * 12.3 < lat[0] < 150 + 3 * 12.3 + 10
    assert 50 + 12.3 < lat[1] < 50 + 12.3 + 8


@pytest.mark.parametrize("text, setting, message", [
    (MULTI_DC, "topology.multi_dc.wan_delays=[5ms, 10ms]",
     "topology.multi_dc.wan_delays: lists 2 delays; 3 DCs have 3 pairs"),
    (MULTI_DC, "topology.multi_dc.wan_delays=[5ms, 0ms, 1ms]",
     "topology.multi_dc.wan_delays[1]: must be positive"),
    (MULTI_DC, "topology.multi_dc.wan_delays=[5ms, 10parsecs, 1ms]", "topology.multi_dc.wan_delays[1]:"),
    (MULTI_DC, "topology.multi_dc.dcs=1", "topology.multi_dc.dcs: '1' is below the minimum 2"),
    (MULTI_DC, "topology.multi_dc.wan_rate=0bps", "topology.multi_dc.wan_rate: '0bps' is below the minimum 1Mbps"),
    (PARKING_LOT, "topology.parking_lot.chain_rate=10bps",
     "topology.parking_lot.chain_rate: '10bps' is below the minimum 1Mbps"),
    (MULTI_DC, "topology.multi_dc.wan_ber=0.1", "topology.multi_dc.wan_ber: '0.1' is above the maximum"),
    (PARKING_LOT, "topology.parking_lot.switches=1", "topology.parking_lot.switches: '1' is below the minimum 2"),
])
def test_bad_topology_input_names_the_key(sim, tmp_path, text, setting, message):
    p = run(sim, tmp_path, text, setting, check=False)
    assert p.returncode == 2 and message in p.stderr, p.stderr
