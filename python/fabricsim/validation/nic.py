"""The host receive path (issue 14; seed-000 Table 4.2): interrupt coalescing, NAPI and GRO on
platforms/scenarios/nic_rx_coalescing.yaml, the measures of tests/python/test_nic_oracles.py."""
from . import plots
from .core import Outcome, experiment, num

SEED = "seed-000-alizadeh-dctcp-hull-qcn.md"
# rx-frames -> (overrides, seed's (CPU %, Gbps, ACK ratio KB))
ROWS = {
    "0": ({"nic.rx.rx_frames": 0, "nic.rx.rx_usecs": "0s"}, (99.0, 7.7, 67.4)),
    "2": ({"nic.rx.rx_frames": 2}, (98.7, 9.3, 11.4)),
    "8": ({"nic.rx.rx_frames": 8}, (75.0, 9.5, 12.2)),
    "32": ({"nic.rx.rx_frames": 32}, (53.2, 9.5, 16.5)),
    "128": ({"nic.rx.rx_frames": 128}, (30.7, 9.5, 64.0)),
}


def measure(result):
    flow = result.summary["flows"][0]
    rx = result.summary["hosts"]["h1"]["rx_path"]
    return {"cpu": rx["cpu_utilisation"], "gbps": result.summary["goodput_bps"] / 1e9,
            "ack_kb": flow["rx_bytes"] / flow["ack_frames"] / 1e3, "per_irq": rx["frames_per_interrupt"]}


@experiment("nic-table-4-2", "NIC", "Interrupt coalescing: CPU, throughput, ACK ratio",
            SEED + " Table 4.2",
            "platforms/scenarios/nic_rx_coalescing.yaml: one 10G TCP flow into a receiver with "
            "interrupt coalescing, NAPI and GRO; rx-frames 0 (an interrupt per frame), 2, 8, 32, 128.",
            "CPU 99 / 98.7 / 75 / 53.2 / 30.7 %, 7.7 / 9.3 / 9.5 / 9.5 / 9.5 Gbps, ACK ratio 67.4 / "
            "11.4 / 12.2 / 16.5 / 64 KB",
            "CPU within 15 points (rx-frames 2-128) and falling with rx-frames; ACK ratio rising from 8 "
            "to 128; a saturated receiver (rx-frames 0) loses >= 0.5 Gbps but keeps >= 5",
            quick=True,
            reading="the model's loss at rx-frames 0 is ~0.8 Gbps, not the seed's 1.8 (docs/models/nic.md, "
                    "\"Table 4.2 end to end\"): the test asserts the direction and a floor, not the level.")
def table_4_2(ctx):
    import fabricsim
    path = fabricsim.scenarios.path("nic_rx_coalescing")
    t = {k: measure(ctx.run(path, f"rx{k}", overrides=o)) for k, (o, _) in ROWS.items()}
    ok = (t["8"]["ack_kb"] < t["32"]["ack_kb"] < t["128"]["ack_kb"]
          and t["0"]["cpu"] > t["2"]["cpu"] > t["8"]["cpu"] > t["32"]["cpu"] > t["128"]["cpu"]
          and all(abs(100 * t[k]["cpu"] - ROWS[k][1][0]) <= 15 for k in ("2", "8", "32", "128"))
          and all(t[k]["gbps"] >= 8.5 for k in ("2", "8", "32", "128"))
          and t["0"]["gbps"] < t["2"]["gbps"] < t["8"]["gbps"] and t["8"]["gbps"] - t["0"]["gbps"] >= 0.5
          and t["0"]["gbps"] >= 5.0)

    def plot(fig):
        ax = fig.add_subplot(121)
        ks = list(ROWS)
        ax.plot(ks, [100 * t[k]["cpu"] for k in ks], "o-", color=plots.SIM, label="FabricSim")
        ax.plot(ks, [ROWS[k][1][0] for k in ks], "s--", color=plots.PUB, label="Table 4.2")
        ax.set_xlabel("rx-frames")
        ax.set_ylabel("receiver CPU (%)")
        ax.legend(fontsize=8)
        ax2 = fig.add_subplot(122)
        ax2.plot(ks, [t[k]["gbps"] for k in ks], "o-", color=plots.SIM, label="FabricSim")
        ax2.plot(ks, [ROWS[k][1][1] for k in ks], "s--", color=plots.PUB, label="Table 4.2")
        ax2.set_xlabel("rx-frames")
        ax2.set_ylabel("throughput (Gbps)")
    text = "; ".join(f"rx-frames {k}: CPU {100 * r['cpu']:.1f} %, {r['gbps']:.2f} Gbps, ACK ratio {r['ack_kb']:.1f} KB"
                     for k, r in t.items())
    return Outcome(text, {k: {m: num(x) for m, x in r.items()} for k, r in t.items()}, ok, plot)
