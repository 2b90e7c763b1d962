"""Oracle (issue 13): zero loss iff enough headroom. headroom_incast.yaml at two speeds and two
cable lengths: with the headroom calculator's value per port no lossless frame is lost over
several seeds and the peak headroom use reaches the bound; one MTU (8 cells of 208 B) less
loses lossless frames as headroom_exhausted."""
from concurrent.futures import ThreadPoolExecutor

import pytest

import fabricsim
from fabricsim.validation.pfc import COMBOS, MTU_CELLS, lossless_pgs, overrides

SEEDS = [1, 2, 3]


def run_all(jobs):
    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(lambda j: fabricsim.run(j[0], seed=j[1], overrides=j[2]).summary, jobs))


@pytest.fixture(scope="module")
def calculated(scenarios):
    jobs = [(scenarios / "headroom_incast.yaml", s, overrides(*c)) for c in COMBOS for s in SEEDS]
    results = run_all(jobs)
    return {c: results[i * len(SEEDS):(i + 1) * len(SEEDS)] for i, c in enumerate(COMBOS)}


@pytest.mark.parametrize("combo", COMBOS, ids=[f"{c[0]}-{c[1]}m" for c in COMBOS])
def test_calculated_headroom_loses_nothing_and_is_reached(calculated, combo):
    reached = False
    for summary in calculated[combo]:
        assert summary["frames"]["dropped"] == 0, summary["frames"]["dropped_by_cause"]
        pgs = lossless_pgs(summary)
        assert len(pgs) == 2  # both senders' ports were paused
        assert all(peak <= limit for limit, peak in pgs)
        reached = reached or any(peak == limit for limit, peak in pgs)
        xoffs = [p["flow_control"]["xoff_sent"][3] for p in summary["switches"]["tor"]["ports"]]
        assert sum(xoffs) > 100  # the incast cycles through XOFF and XON
    assert reached, "the calculator's bound is never reached: it is not tight"


@pytest.mark.parametrize("combo", COMBOS, ids=[f"{c[0]}-{c[1]}m" for c in COMBOS])
def test_one_mtu_less_headroom_drops(calculated, scenarios, combo):
    limit = lossless_pgs(calculated[combo][0])[0][0]
    smaller = f"{(limit - MTU_CELLS) * 208}B"
    summary = fabricsim.run(scenarios / "headroom_incast.yaml", seed=1, overrides=overrides(
        *combo, **{"switch.flow_control.headroom": "configured",
                   "switch.mmu.pg_headroom": {3: smaller}})).summary
    by_cause = summary["frames"]["dropped_by_cause"]
    assert by_cause["headroom_exhausted"] > 0
    assert summary["frames"]["dropped"] == by_cause["headroom_exhausted"]


def test_headroom_check_refuses_less_than_the_calculator(scenarios):
    with pytest.raises(fabricsim.ConfigError) as e:
        fabricsim.validate(scenarios / "headroom_incast.yaml", overrides={
            "switch.flow_control.headroom": "configured", "switch.flow_control.headroom_check": True,
            "switch.mmu.pg_headroom": {3: "8320B"}})
    assert "switch.mmu.pg_headroom" in str(e.value)
    assert "needs 9984B" in str(e.value)
