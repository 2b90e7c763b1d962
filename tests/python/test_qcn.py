"""802.1Qau congestion point in the switch (issue 15): the CP samples the congested queue as the
thesis preset says, and its CNMs reach the sampled frames' sources as 802.1Qau PDUs (checked in
the pcaps byte by byte: tshark has no CNM dissector). Bad QCN input is refused naming the key."""
import json
import struct

import pytest

SCENARIO = """
name: qcn_cp
seed: 3
duration: 4ms
topology: {kind: incast, host_rate: 10Gbps, link_delay: 10us, incast: {hosts: 11}}
switch:
  buffer: 4MB
  qcn: {mode: thesis}
traffic:
  generate:
    - {pattern: many_to_one, transport: udp, load: 0.2}
results: {sample_interval: 10us, pcap: [h0, tor:0, tor:1, tor:2, tor:3, tor:4, tor:5, tor:6, tor:7, tor:8, tor:9]}
"""
Q_EQ = 22 * 1500
CNM = 0x22E7


def frames(path):
    d = path.read_bytes()
    off = 24
    while off < len(d):
        _, _, incl, _ = struct.unpack("<IIII", d[off:off + 16])
        yield d[off + 16:off + 16 + incl]
        off += 16 + incl


@pytest.fixture(scope="module")
def run(sim, tmp_path_factory):
    d = tmp_path_factory.mktemp("qcn")
    (d / "s.yaml").write_text(SCENARIO)
    sim(d / "s.yaml", "--out", d / "r", "--quiet")
    return d / "r", json.loads((d / "r" / "summary.json").read_text())


def test_the_cp_samples_the_congested_queue_at_p_s(run):
    _, s = run
    (cp,) = [c for c in s["switches"]["tor"]["ports"][10]["qcn"] if c["frames"]]
    assert cp["queue"] == 0
    # Thesis sampling: each data frame with p_s = 1 % (binomial, 4 sigma).
    n = cp["frames"]
    assert abs(cp["samples"] - 0.01 * n) <= 4 * (0.01 * 0.99 * n) ** 0.5 + 1
    # Ten senders at 2x the port rate: the queue rises past Q_eq and stays above it, so almost
    # every sample is congestion; the histogram counts every sample by its qFb.
    assert sum(cp["qfb_histogram"]) == cp["samples"]
    assert cp["cnms"] == cp["samples"] - cp["uncongested_samples"] - cp["below_quantum_samples"]
    assert cp["cnms"] >= 0.8 * cp["samples"] > 0
    # CNMs join the frame balance as control frames: made by the switch, taken in by NICs.
    fr = s["frames"]
    assert fr["conserved"] and fr["control_sent"] == sum(
        c["cnms"] for port in s["switches"]["tor"]["ports"] for c in port.get("qcn", []))
    assert fr["control_received"] <= fr["control_sent"]
    # Other ports see no congestion: no CNM.
    for p, port in enumerate(s["switches"]["tor"]["ports"]):
        if p != 10:
            assert all(c["cnms"] == 0 for c in port.get("qcn", []))


def test_cnms_reach_the_sampled_sources_as_qau_pdus(run):
    out, s = run
    (cp,) = [c for c in s["switches"]["tor"]["ports"][10]["qcn"] if c["frames"]]
    # MACs as the data frames carry them (h0's first frame: to the receiver h10).
    data = next(frames(out / "h0.pcap"))
    receiver, h0 = data[0:6], data[6:12]
    seen = 0
    for h in range(10):
        for pkt in frames(out / f"tor.{h}.pcap"):
            if struct.unpack(">H", pkt[12:14])[0] != CNM:
                continue
            seen += 1
            pdu = pkt[14:]
            assert pkt[0:6] == h0[:5] + bytes([h0[5] + h])  # the source host's MAC
            assert pkt[6] == 0x06  # the CP's locally administered MAC
            word, cpid, qoff, qdelta, prio, da, msdu_len = struct.unpack(">HQhhH6sH", pdu[:24])
            assert word >> 12 == 0 and 1 <= word & 0x3F <= 63  # version 0, qFb
            assert cpid == cp["cpid"] and cpid & 0xFFFF == 10 << 8 | 0  # port 10, queue 0
            assert cpid >> 16 == int.from_bytes(pkt[6:12], "big")
            # Fb = -(Qoff + w Qdelta) < 0 in 64-octet units; qFb its magnitude in packets.
            fb = -(qoff + 2 * qdelta) * 64
            # (the fields are truncated to 64 octets, so allow one packet either way)
            assert fb < 0 and abs(min(63, -fb // 1500) - (word & 0x3F)) <= 1
            assert da == receiver and msdu_len == 1500 and prio == 0
            ip = pdu[24:24 + 20]  # the sampled frame's IPv4 header: from h to h10
            assert len(pdu) == 24 + 64 and ip[0] == 0x45
            assert ip[12:16] == bytes([10, 0, 0, h + 1]) and ip[16:20] == bytes([10, 0, 0, 11])
    # Every CNM the CP sent left the switch towards a source, but those still in the switch at
    # the end (at most a few: each waits only behind the sources' light reverse traffic).
    assert cp["cnms"] - 3 <= seen <= cp["cnms"] and seen > 20, (seen, cp["cnms"])


@pytest.mark.parametrize("setting, message", [
    ("switch.qcn.q_eq=8MB", "switch.qcn.q_eq: Q_eq 8000000B is not below switch.buffer (4000000B)"),
    ("switch.qcn.w=0", "switch.qcn.w: '0' is below the minimum"),
    ("switch.qcn.priorities=[]", "switch.qcn.priorities: lists no priority"),
    ("switch.qcn.msdu_octets=65", "switch.qcn.msdu_octets: '65' is above the maximum 64"),
    ("switch.qcn.lossless=true", "switch.qcn.lossless: CNPV priority 0 maps to queue 0, which is not "
     "lossless (switch.mmu.lossless_queues)"),
])
def test_bad_qcn_input_names_the_key(sim, tmp_path, setting, message):
    (tmp_path / "s.yaml").write_text(SCENARIO)
    p = sim(tmp_path / "s.yaml", "--set", setting, "--out", tmp_path / "r", check=False)
    assert p.returncode == 2 and message in p.stderr, p.stderr


def test_rp_rates_above_the_nic_line_rate_are_refused_at_load(sim, tmp_path):
    (tmp_path / "s.yaml").write_text(SCENARIO)
    p = sim(tmp_path / "s.yaml", "--set", "nic.qcn.mode=thesis", "--set", "nic.qcn.min_rate=20Gbps",
            "--out", tmp_path / "r", check=False)
    assert p.returncode == 2 and "nic.qcn.min_rate: host 'h0' (10Gbps):" in p.stderr, p.stderr


def test_a_lossless_cnpv_queue_satisfies_qcn_lossless(sim, tmp_path):
    # CNPV priority 3 on the lossless queue 3 passes the check; priority 0 would not.
    (tmp_path / "s.yaml").write_text(SCENARIO.replace(
        "qcn: {mode: thesis}",
        "qcn: {mode: thesis, lossless: true, priorities: [3]}\n  mmu: {lossless_queues: ['3'], lossless_pool: 1MB}"))
    p = sim("validate", tmp_path / "s.yaml", check=False)
    assert p.returncode == 0, p.stderr
    p = sim("validate", tmp_path / "s.yaml", "--set", "switch.qcn.priorities=[0, 3]", check=False)
    assert p.returncode == 2 and "switch.qcn.priorities: CNPV priority 0 maps to queue 0" in p.stderr


def test_qcn_keys_without_a_mode_are_refused(sim, tmp_path):
    (tmp_path / "s.yaml").write_text(SCENARIO.replace("qcn: {mode: thesis}", "qcn: {q_eq: 30KB}"))
    p = sim(tmp_path / "s.yaml", "--out", tmp_path / "r", check=False)
    assert p.returncode == 2 and "switch.qcn.q_eq: is set but qcn.mode is not" in p.stderr, p.stderr


LOOP = SCENARIO.replace("qcn: {mode: thesis}", "qcn: {mode: thesis}\nnic:\n  qcn: {mode: thesis}").replace(
    "load: 0.2", "load: 1.0").replace("duration: 4ms", "duration: 20ms").replace(
    "link_delay: 10us", "link_delay: 12us")


def test_cp_and_rp_close_the_loop_around_q_eq(sim, tmp_path):
    # Ten line-rate sources into one 10G port: each NIC's reaction point takes the CNMs of the
    # CP and cuts its source, so the port's queue settles near Q_eq instead of filling the
    # buffer (the open-loop UDP sources overflow their NIC queues instead: nic_tx_queue_full).
    import pandas as pd
    (tmp_path / "s.yaml").write_text(LOOP)
    sim(tmp_path / "s.yaml", "--out", tmp_path / "r", "--quiet")
    s = json.loads((tmp_path / "r" / "summary.json").read_text())
    fr = s["frames"]
    assert fr["conserved"] and fr["control_received"] > 0
    nics = [s["nics"][f"h{h}_nic"]["qcn"] for h in range(10)]
    assert sum(n["cnms_received"] for n in nics) == fr["control_received"]
    assert all(n["decreases"] > 0 and n["limiters_in_use"] == 1 for n in nics)
    # The sources share the port: each limiter well below the line rate, their sum near it.
    rates = [n["limiters"][0]["rate_bps"] for n in nics]
    assert max(rates) < 3e9 and 0.5e10 < sum(rates) < 2e10, rates
    ts = pd.read_csv(tmp_path / "r" / "timeseries.csv")
    q = ts[ts.time_us >= 5000]["tor.p10_frame_bytes"]
    assert 0.3 * Q_EQ <= q.median() <= 2 * Q_EQ, q.describe()
    assert fr["dropped_by_cause"]["port_cap"] < 0.2 * fr["dropped"]
