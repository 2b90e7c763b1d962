"""Aeolus on ExpressPass ("ExpressPass*", seed-002 §1.4-1.5, facts-mmu-credit-workload §3): the
first RTT goes at line rate before any credit, non-ECT, so switches drop it above their ECN step
(selective dropping) while credit-scheduled ECT data is only marked; a probe after the burst
finds what is missing and credits resend it. A small flow saves about one RTT; under incast only
unscheduled frames are dropped and every flow completes with exactly its bytes."""
import csv
import json

import pytest

IDLE = """
name: aeolus_idle
seed: 1
duration: 1ms
topology: {kind: dumbbell, host_rate: 10Gbps, link_delay: 5us, dumbbell: {hosts_per_side: 1}}
switch:
  credit_queue: {queue: 7}
xpass: {alpha: 1}
traffic:
  flows:
    - {src: h0, dst: h1, transport: xpass, size: 30KB, start: 10us}
"""


def run(sim, path, text, *sets):
    path.mkdir(parents=True, exist_ok=True)
    (path / "s.yaml").write_text(text)
    sim(path / "s.yaml", *[a for s in sets for a in ("--set", s)], "--out", path / "r", "--quiet")
    return json.loads((path / "r" / "summary.json").read_text())


def test_a_small_flow_on_an_idle_path_saves_one_rtt(sim, tmp_path):
    plain = run(sim, tmp_path / "plain", IDLE)["flows"][0]
    s = run(sim, tmp_path / "aeolus", IDLE, "xpass.aeolus=true")
    f = s["flows"][0]
    x = f["xpass"]
    assert f["rx_bytes"] == plain["rx_bytes"] == 30_000
    # 21 packets, all within the first-RTT budget (one BDP: 37.5 KB at 10G x 30 us): nothing
    # waits for a credit, nothing is lost, one probe.
    assert x["unscheduled_sent"] == x["unscheduled_delivered"] == 21 == x["packets"]
    assert x["unscheduled_lost"] == 0 and x["retransmitted"] == 0 and x["probes"] == 1
    # One way for a minimum frame: a data frame's fastest trip less the three store-and-forward
    # serialisations (NIC, two switches) of 1538 B instead of 84 B; the RTT is twice that.
    with open(tmp_path / "aeolus" / "r" / "flows.csv") as fh:
        latency_min = float(next(csv.DictReader(fh))["latency_min_us"])
    one_way = latency_min - 3 * (1.2304 - 0.0672)
    rtt = 2 * one_way
    # FCT = the train at line rate (20 x 1230.4 ns + the 878 B last frame) + the one-way trip
    # and the last frame's store-and-forward at the two switches.
    train = 20 * 1.2304 + 0.7024
    assert f["fct_us"] == pytest.approx(train + one_way + 2 * 0.7024, abs=1.5), f["fct_us"]
    # Plain ExpressPass (credits at the maximum from the start, alpha 1) waits one RTT for the
    # first credit and then paces at the credit rate (1297.6 ns per frame instead of 1230.4):
    # Aeolus saves that RTT, within 10 %.
    saving = plain["fct_us"] - f["fct_us"] - 21 * (1.2976 - 1.2304)
    assert saving == pytest.approx(rtt, rel=0.10), (plain["fct_us"], f["fct_us"], rtt)


@pytest.fixture(scope="module")
def incast(sim, scenarios, tmp_path_factory):
    out = tmp_path_factory.mktemp("aeolus") / "r"
    sim(scenarios / "aeolus_incast.yaml", "--out", out, "--quiet")
    return json.loads((out / "summary.json").read_text())


def test_incast_drops_only_unscheduled_frames_and_every_flow_completes(incast):
    s = incast
    fr = s["frames"]
    by = fr["dropped_by_cause"]
    assert by.get("aqm_drop", 0) > 0
    # Every AQM drop is an unscheduled data frame (the first-RTT ones the senders sent and the
    # receiver never got); nothing else is lost in the switch but credits.
    lost = sum(f["xpass"]["unscheduled_lost"] for f in s["flows"])
    assert by["aqm_drop"] == lost == s["xpass"]["unscheduled_lost"]
    assert fr["dropped"] == by["aqm_drop"] + by.get("credit_dropped", 0)
    # The probe found them and credits resent each once (no go-back-N).
    assert s["xpass"]["unscheduled_missing"] == lost
    assert s["xpass"]["retransmitted"] == lost
    assert all(f["fct_us"] > 0 for f in s["flows"])
    sizes = [4_000_000] + [60_000] * 8
    assert [f["rx_bytes"] for f in s["flows"]] == sizes
    assert s["xpass"]["completed"] == 9 and s["xpass"]["probes"] == 9
    assert fr["conserved"]
    assert s["config"]["xpass"]["aeolus"] is True


def test_a_burst_keeps_20us_of_frames_in_the_nic_queue_and_credits_take_over(sim, tmp_path):
    # A 1 MB first-RTT budget (685 packets): the burst keeps at most about 20 us of line-rate
    # frames in the NIC's one TX queue (16 at 10G) and refills it at half, so it never fills
    # the queue (a 64-frame one changes nothing) and credits that come meanwhile take the next
    # packets as scheduled ones.
    sets = ["xpass.aeolus=true", "xpass.aeolus_first_rtt=1MB", "traffic.flows[0].size=1MB",
            "duration=3ms"]
    big = run(sim, tmp_path / "big", IDLE, *sets)
    small = run(sim, tmp_path / "small", IDLE, *sets, "nic.tx_queue=64")
    for s in big, small:
        assert s["hosts"]["h0"]["tx_blocked"] == 0
        assert s["nics"]["h0_nic"]["tx_queue_peak"] == 17  # 16, and one frame sent on a credit
        assert s["frames"]["dropped"] == 0 and s["frames"]["conserved"]
    fb, fs = big["flows"][0], small["flows"][0]
    assert 16 < fb["xpass"]["unscheduled_sent"] == fs["xpass"]["unscheduled_sent"] < 685
    assert fb["xpass"]["packets"] == fs["xpass"]["packets"] == 685
    assert fb["rx_bytes"] == fs["rx_bytes"] == 1_000_000
    assert fs["fct_us"] == fb["fct_us"]


BURST_AND_CREDITS = """
name: aeolus_burst_and_credits
seed: 1
duration: 80ms
topology: {kind: dumbbell, host_rate: 1Gbps, link_delay: 1ms, dumbbell: {hosts_per_side: 2}}
switch:
  credit_queue: {queue: 7}
  ecn: {mode: {0: step}, k: 2pkt, non_ect: drop}
xpass: {aeolus: true, aeolus_first_rtt: 4MB}
traffic:
  flows:
    - {src: h2, dst: h0, transport: xpass, size: 3MB, start: 10us}
    - {src: h0, dst: h3, transport: xpass, size: 3MB, start: 10ms}
"""


def test_a_host_s_credits_and_data_do_not_wait_behind_its_own_burst(sim, tmp_path):
    # h0 receives a flow (it sends the credits) when its own flow starts with a first-RTT budget
    # of 3 MB (2055 packets, 25 ms at 1G). When the burst filled the NIC queue (1024 frames,
    # 12 ms), h0's credits waited behind it or were dropped at the NIC (727 nic_tx_queue_full,
    # the second flow unfinished at 80 ms); now the queue holds 8 burst frames at most (20 us at
    # 1G is under 8), and the credits and credited frames posted meanwhile.
    s = run(sim, tmp_path / "both", BURST_AND_CREDITS)
    assert s["frames"]["dropped_by_cause"]["nic_tx_queue_full"] == 0
    assert s["nics"]["h0_nic"]["tx_queue_peak"] <= 16
    assert all(f["fct_us"] > 0 and f["rx_bytes"] == 3_000_000 for f in s["flows"])
    assert max(f["fct_us"] for f in s["flows"]) < 40_000


def test_aeolus_off_keeps_todays_results(sim, scenarios, tmp_path):
    # The incast with aeolus off is plain ExpressPass, to the frame as before Aeolus existed
    # (numbers of the commit before it; the hosts' link-end credit queues came later: off). Its data is non-ECT, so K = 2 packets drops it too:
    # go-back-N resends.
    off = run(sim, tmp_path / "off", (scenarios / "aeolus_incast.yaml").read_text(),
              "xpass.aeolus=false", "nic.credit_queue=off")
    fr = off["frames"]
    assert (fr["sent"], fr["delivered"], fr["dropped"]) == (6674, 6317, 357)
    assert [f["fct_us"] for f in off["flows"]] == [4433.9602, 512.0592, 794.2712, 349.2022,
                                                    352.5352, 761.8312, 825.4132, 491.2972,
                                                    729.3912]
    x = off["xpass"]
    assert (x["credits_sent"], x["credits_wasted"], x["retransmitted"]) == (3509, 88, 55)
    assert "unscheduled_sent" not in x and "unscheduled_sent" not in off["flows"][1]["xpass"]


@pytest.mark.parametrize("setting, message", [
    ("xpass.aeolus_first_rtt=10KB", "xpass.aeolus_first_rtt: needs xpass.aeolus: true"),
    (["xpass.aeolus=true", "xpass.aeolus_first_rtt=0B"], "xpass.aeolus_first_rtt: '0B' is below the minimum"),
    (["xpass.aeolus=true", "xpass.aeolus_first_rtt=-5KB"], "xpass.aeolus_first_rtt"),
    (["xpass.aeolus=true", "LONG"], "traffic.flows[0].size: must be set with xpass.aeolus"),
])
def test_bad_aeolus_input_names_the_key(sim, tmp_path, setting, message):
    # LONG: the flow without a size (long-lived), which Aeolus refuses.
    long_lived = isinstance(setting, list) and "LONG" in setting
    if long_lived:
        setting = [x for x in setting if x != "LONG"]
    (tmp_path / "s.yaml").write_text(IDLE.replace(", size: 30KB", "") if long_lived else IDLE)
    sets = [a for s in ([setting] if isinstance(setting, str) else setting) for a in ("--set", s)]
    p = sim(tmp_path / "s.yaml", *sets, "--out", tmp_path / "r", check=False)
    assert p.returncode == 2 and message in p.stderr, p.stderr
