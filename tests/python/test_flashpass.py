"""FlashPass (seed-002 §1.4, §2.4-§2.7; transport: flashpass): the sender's emulation packets
go through the switches' credit queues on the forward path, the receiver answers each with a
credit, and the sender sends the data of a credit at T + flashpass.t_wait. One flow carries
the data share of the link; with T_wait = 40 ms the Eq 4.1 set-up (Table 4.4) interleaves the
two flows' data instead of crushing it; bad input is named with its key; scenarios without
FlashPass are unchanged."""
import json

import pandas as pd
import pytest

from fabricsim.validation.credit import FP_CRUSH

ONE = """
name: flashpass_one
seed: 1
duration: 20ms
topology: {kind: dumbbell, host_rate: 10Gbps, link_delay: 5us, dumbbell: {hosts_per_side: 1}}
switch:
  credit_queue: {queue: 7}
flashpass: {t_wait: 100us}
traffic:
  flows:
    - {src: h0, dst: h1, transport: flashpass, trace: true}
"""
# Emulation rate of a 10G port: 84/(84+1538) of it.
EMU_BPS = 10e9 * 84 / 1622


def run(sim, path, text, *sets):
    path.mkdir(parents=True, exist_ok=True)
    (path / "s.yaml").write_text(text)
    sim(path / "s.yaml", *[a for s in sets for a in ("--set", s)], "--out", path / "r", "--quiet")
    return json.loads((path / "r" / "summary.json").read_text())


def test_one_flow_carries_the_data_share_of_the_link(sim, tmp_path):
    s = run(sim, tmp_path, ONE)
    f = s["flows"][0]
    assert f["transport"] == "flashpass"
    x = f["flashpass"]
    # Data from T_wait on: 1500 B IP packets at 1538/1622 of 10G = 9.248 Gb/s at most.
    t0 = x["first_data_us"] * 1e-6
    assert 99.9e-6 <= t0 < 102e-6
    ip_gbps = f["delivered_frames"] * 1500 * 8 / (s["sim_time_s"] - t0) / 1e9
    print(f"flashpass one flow: {ip_gbps:.3f} Gb/s of IP packets")
    assert 9.0 <= ip_gbps <= 9.25, ip_gbps
    assert s["frames"]["dropped"] == s["frames"]["dropped_by_cause"]["credit_dropped"]
    # The emulation packets use the forward credit queue (toward h1), the credits the reverse.
    fwd = s["switches"]["s1"]["ports"][0]["credit_queue"]
    assert fwd["credits_sent"] > 10000
    assert x["emulation_sent"] >= x["credits_received"] >= x["data_packets"] > 10000
    assert x["late_credits"] == 0 and x["retransmitted"] == 0
    assert x["cur_rate_bps"] == pytest.approx(EMU_BPS, rel=1e-3)
    tr = pd.read_csv(tmp_path / "r" / "traces" / "flow0.csv")
    assert list(tr.columns) == ["time_us", "emulation_rate_gbps", "e_out", "loss", "rtt_us"]
    assert len(tr) > 100 and tr.emulation_rate_gbps.max() <= EMU_BPS / 1e9 * 1.001


def test_delayed_credit_sending_carries_several_timestamps_per_credit(sim, tmp_path):
    """credit_batch: 4 with 100 us of T_wait on a 34 us path: every credit carries four
    consecutive timestamps, a quarter of the credit frames on the reverse path, and the data
    timeline is the unbatched one (first data at T_wait exactly, the same packets, none late)."""
    plain = run(sim, tmp_path / "plain", ONE)["flows"][0]["flashpass"]
    s = run(sim, tmp_path / "batch", ONE, "flashpass.credit_batch=4")
    x = s["flows"][0]["flashpass"]
    # Held ones at the end (up to 3) are answered but not yet sent.
    assert 4 * x["credit_frames"] <= x["credits_sent"] <= 4 * x["credit_frames"] + 3
    assert x["credits_sent"] == plain["credits_sent"]
    # The host's link-end credit queue starts empty (as the switches'): the first emulation
    # packet leaves one gap (1297.6 ns) late, and its T is when it leaves.
    assert x["first_data_us"] == pytest.approx(101.2976, abs=1e-6)
    assert x["first_data_us"] == plain["first_data_us"]
    assert x["data_packets"] == plain["data_packets"] and x["late_credits"] == 0
    assert s["flashpass"]["credit_frames"] == x["credit_frames"]
    # The reverse credit queue (toward the sender h0) carried the batched frames, the forward
    # one every emulation packet.
    rev = s["switches"]["s0"]["ports"][0]["credit_queue"]["credits_sent"]
    fwd = s["switches"]["s0"]["ports"][1]["credit_queue"]["credits_sent"]
    assert x["credit_frames"] - 2 <= rev <= x["credit_frames"] and fwd > 3.9 * rev
    assert "credit_frames" not in plain and "credit_frames" not in run(
        sim, tmp_path / "plain2", ONE)["flashpass"]


def test_delayed_credit_sending_does_not_hold_a_credit_without_slack(sim, tmp_path):
    # T_wait below the round trip: the credit is already late, each goes at once.
    text = ONE.replace("t_wait: 100us", "t_wait: 10us").replace("duration: 20ms", "duration: 2ms")
    x = run(sim, tmp_path, text, "flashpass.credit_batch=4")["flows"][0]["flashpass"]
    assert x["credit_frames"] == x["credits_sent"] > 1000


def test_t_wait_interleaves_the_data_of_mismatched_rtts(sim, tmp_path):
    """Table 4.4 (T_wait = 40 ms): flow 2 (RTT 20 ms, from 30 ms) emulates 30-52 ms (25 MB at the
    emulation rate), its data leaves 70-92 ms; the bottleneck queue stays at a few packets
    (ExpressPass: ~16 000)."""
    s = run(sim, tmp_path, FP_CRUSH)
    f1, f2 = (f["flashpass"] for f in s["flows"])
    print("flashpass crush: flow 1 data", f1["first_data_us"], f1["last_data_us"],
          "flow 2 data", f2["first_data_us"], f2["last_data_us"])
    gap_us = 1538 * 8 / 10e9 * 1e6 / (1538 / 1622)  # one packet time at the data share
    assert f2["first_data_us"] == pytest.approx(70_000, abs=gap_us) and f2["late_credits"] == 0
    assert 90_000 <= f2["last_data_us"] <= 96_000
    # Flow 1's idle RTT is 40.005 ms (switch and 1 us links): T_wait = 40 ms is 5 us short, its
    # credits all come late and send at once, i.e. at T + 40.005 ms.
    assert f1["first_data_us"] == pytest.approx(40_005, abs=gap_us)
    assert f1["late_credits"] == f1["data_packets"] == 17124
    peak = s["switches"]["sw"]["ports"][2]["queues"][0]["peak_frame_bytes"] / 1518
    print("flashpass crush: peak bottleneck queue", peak, "packets")
    # The data mimics the emulation packets' arrivals at the emulation queue, which holds up to
    # 8 of them: a queue of that order, not ExpressPass's ~16 000.
    assert peak <= 16
    assert all(f["fct_us"] > 0 and f["rx_bytes"] == 25_000_000 for f in s["flows"])
    assert s["frames"]["dropped"] == s["frames"]["dropped_by_cause"]["credit_dropped"]
    assert s["flashpass"]["completed"] == 2


OVER = """
name: flashpass_over
seed: 1
duration: 6ms
topology: {kind: dumbbell, host_rate: 10Gbps, link_delay: 5us, dumbbell: {hosts_per_side: 2}}
switch:
  credit_queue: {queue: 7, selective_drop: 2}
flashpass: {t_wait: 100us, over_provision: true}
traffic:
  flows:
    - {src: h0, dst: h2, transport: flashpass}
    - {src: h1, dst: h3, transport: flashpass, size: 1MB, start: 1ms}
"""


def test_over_provisioned_emulation_is_non_ect_and_dropped_first(sim, tmp_path):
    """Eq 4.2: once the emulation in flight covers the sized flow's rest, its further emulation
    packets go non-ECT; the shared credit queue drops them above 2 packets."""
    s = run(sim, tmp_path / "on", OVER)
    long, sized = (f["flashpass"] for f in s["flows"])
    print("over-provisioning:", sized, s["flows"][1]["fct_us"])
    assert sized["over_provisioned_sent"] > 0 and long["over_provisioned_sent"] == 0
    # Credits are told apart by the tag of the emulation packet they answer. The sized flow's
    # ordinary credits covered it (Eq 4.2 expects 10 % loss; fewer were lost), so every
    # over-provisioned credit came after its last packet was credited and most waste is theirs.
    assert 0 < sized["over_provisioned_credits"] <= sized["over_provisioned_sent"]
    assert sized["over_provisioned_wasted"] == sized["over_provisioned_credits"]
    ordinary_wasted = sized["credits_wasted"] - sized["over_provisioned_wasted"]
    assert 0 < ordinary_wasted < sized["over_provisioned_wasted"]
    assert long["over_provisioned_credits"] == long["over_provisioned_wasted"] == 0
    fp = s["flashpass"]
    assert fp["over_provisioned_wasted"] == sized["over_provisioned_wasted"]
    assert fp["ordinary_wasted_share"] == pytest.approx(
        (fp["credits_wasted"] - fp["over_provisioned_wasted"]) / fp["credits_received"])
    assert s["flows"][1]["rx_bytes"] == 1_000_000 and s["flows"][1]["fct_us"] > 0
    assert s["frames"]["dropped"] == s["frames"]["dropped_by_cause"]["credit_dropped"]
    off = run(sim, tmp_path / "off", OVER.replace(", over_provision: true", ""))
    assert off["flows"][1]["flashpass"]["over_provisioned_sent"] == 0
    assert off["flows"][1]["flashpass"]["over_provisioned_credits"] == 0
    assert off["flows"][1]["flashpass"]["pauses"] >= 1
    assert off["flows"][1]["rx_bytes"] == 1_000_000


NO_QUEUE = """
name: flashpass_no_queue
seed: 1
duration: 10ms
topology: {kind: dumbbell, host_rate: 10Gbps, link_delay: 5us, dumbbell: {hosts_per_side: 2}}
switch: {buffer: 200KB, port_cap: 100KB}
flashpass: {t_wait: 100us}
traffic:
  flows:
    - {src: h0, dst: h2, transport: flashpass, size: 2MB}
    - {src: h1, dst: h2, transport: flashpass, size: 2MB}
"""


def test_without_the_credit_queue_data_is_lost_and_recovered(sim, tmp_path):
    """No emulation queue: nothing limits the two flows' emulation, so their data overruns the
    bottleneck; the receiver's NACKs (go-back-N) bring every byte in."""
    s = run(sim, tmp_path, NO_QUEUE)
    assert s["frames"]["dropped_by_cause"]["port_cap"] > 100
    for f in s["flows"]:
        x = f["flashpass"]
        assert f["rx_bytes"] == 2_000_000 and f["fct_us"] > 0
        assert x["nacks_sent"] > 0 and x["retransmitted"] > 0 and x["out_of_order"] > 0


EARLY = """
name: flashpass_early
seed: 1
duration: 2ms
topology: {kind: dumbbell, host_rate: 10Gbps, link_delay: 5us, dumbbell: {hosts_per_side: 1}}
switch:
  credit_queue: {queue: 7}
flashpass: {t_wait: 50us, early_data: true}
traffic:
  flows:
    - {src: h0, dst: h1, transport: flashpass, size: 30KB, start: 10us}
"""


def test_early_data_sends_the_first_rtt_before_credits(sim, tmp_path):
    """FlashPass* (flashpass.early_data): a 30 KB flow fits in one BDP and goes at line rate at
    once (Aeolus's 44.6 us); without it the data waits T_wait for its credits."""
    s = run(sim, tmp_path / "on", EARLY)
    f = s["flows"][0]
    x = f["flashpass"]
    assert f["rx_bytes"] == 30_000 and f["fct_us"] == pytest.approx(44.5, abs=1.0)
    assert x["unscheduled_sent"] == x["unscheduled_delivered"] == 21 and x["probes"] == 1
    off = run(sim, tmp_path / "off", EARLY.replace(", early_data: true", ""))["flows"][0]
    assert "unscheduled_sent" not in off["flashpass"]
    assert off["fct_us"] > 50 + 30 and off["flashpass"]["first_data_us"] == pytest.approx(60.0)


def test_early_data_losses_are_found_by_the_probe_and_resent_on_credits(sim, tmp_path):
    """Seven 100 KB FlashPass* flows into one port, the data queue's ECN step dropping non-ECT
    above 2 packets: every dropped first-RTT packet is found by the probe's answer and resent
    once on a credit; nothing scheduled is dropped."""
    s = run(sim, tmp_path, EARLY.replace("hosts_per_side: 1", "hosts_per_side: 4")
            .replace("credit_queue: {queue: 7}",
                     "credit_queue: {queue: 7}\n  ecn: {mode: {0: step}, k: 2pkt, non_ect: drop}")
            .replace("duration: 2ms", "duration: 3ms")
            .replace("  flows:\n    - {src: h0, dst: h1, transport: flashpass, size: 30KB, start: 10us}",
                     "  generate:\n    - {pattern: many_to_one, transport: flashpass, size: 100KB}"))
    lost = 0
    for f in s["flows"]:
        x = f["flashpass"]
        assert f["rx_bytes"] == 100_000 and f["fct_us"] > 0
        assert x["unscheduled_lost"] == x["unscheduled_missing"] == x["retransmitted"]
        lost += x["unscheduled_lost"]
    assert len(s["flows"]) == 7 and lost > 50
    assert s["frames"]["dropped_by_cause"]["aqm_drop"] == lost


@pytest.mark.parametrize("setting, message", [
    ("flashpass.max_target=0.005", "flashpass.min_target: is larger than flashpass.max_target"),
    ("switch.credit_queue={selective_drop: 2}",
     "switch.credit_queue.selective_drop: is set but credit_queue.queue is not"),
    ("flashpass.over_provision=maybe", "flashpass.over_provision"),
    ("flashpass.early_data=true", "traffic.flows[0].size: must be set with flashpass.early_data"),
    ("flashpass.credit_batch=7", "flashpass.credit_batch: '7' is above the maximum 6"),
    ("flashpass.credit_batch=0", "flashpass.credit_batch"),
])
def test_bad_flashpass_input_names_the_key(sim, tmp_path, setting, message):
    (tmp_path / "s.yaml").write_text(ONE)
    p = sim(tmp_path / "s.yaml", "--set", setting, "--out", tmp_path / "r", check=False)
    assert p.returncode == 2 and message in p.stderr, p.stderr


def test_t_wait_below_the_rtt_warns_and_sends_late_credits_at_once(sim, tmp_path):
    (tmp_path / "s.yaml").write_text(ONE.replace("t_wait: 100us", "t_wait: 10us")
                                     .replace("duration: 20ms", "duration: 2ms"))
    p = sim(tmp_path / "s.yaml", "--out", tmp_path / "r", "--quiet")
    assert "warning: flashpass.t_wait: 10us is below the idle round trip of flow 0" in p.stderr, p.stderr
    x = json.loads((tmp_path / "r" / "summary.json").read_text())["flows"][0]["flashpass"]
    assert x["late_credits"] == x["data_packets"] > 1000


def test_t_wait_is_required(sim, tmp_path):
    (tmp_path / "s.yaml").write_text(ONE.replace("flashpass: {t_wait: 100us}\n", ""))
    p = sim(tmp_path / "s.yaml", "--out", tmp_path / "r", check=False)
    assert p.returncode == 2 and "flashpass.t_wait: is required with transport: flashpass" in p.stderr, p.stderr


def test_without_flashpass_no_section_appears(sim, tmp_path):
    s = run(sim, tmp_path, ONE.replace("transport: flashpass", "transport: xpass")
            .replace("flashpass: {t_wait: 100us}\n", ""))
    assert "flashpass" not in s and s["flows"][0]["transport"] == "xpass"
    echo = (tmp_path / "r" / "scenario.yaml")
    if echo.exists():
        assert "flashpass" not in echo.read_text()
