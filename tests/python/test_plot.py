"""fabricsim.plot: every plot returns a Figure with data on it and writes a PNG."""
import matplotlib
import pandas as pd
import pytest

import fabricsim
from fabricsim import plot

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def result(default_yaml, tmp_path_factory):
    return fabricsim.run(default_yaml, out=tmp_path_factory.mktemp("r"), overrides={"duration": "3ms"})


def _png(path):
    data = path.read_bytes()
    assert data[:8] == PNG and len(data) > 10_000
    return data


def test_backend_is_headless():
    assert matplotlib.get_backend().lower() == "agg"


def test_queue_occupancy(result, tmp_path):
    fig = plot.queue_occupancy(result, path=tmp_path / "q.png")
    ax = fig.axes[0]
    labels = [l.get_label() for l in ax.get_lines()]
    assert labels[0] == "s0:4"  # the busiest port first
    y = ax.get_lines()[0].get_ydata()
    assert 250 < y.max() <= 300  # KB, capped by port_cap
    _png(tmp_path / "q.png")
    fig = plot.queue_occupancy(result.timeseries, columns=r"^s0\.p4q0_frame_bytes$", path=tmp_path / "q0.png")
    assert [l.get_label() for l in fig.axes[0].get_lines()] == ["s0:4 q0"]


def test_fct_percentiles_and_cdf(result, tmp_path):
    flows = pd.DataFrame({"size_bytes": [2e3, 3e3, 5e4, 6e4, 7e4, 2e6], "fct_us": [10, 20, 100, 200, 300, 5000]})
    fig = plot.fct_percentiles(flows, path=tmp_path / "fct.png")
    bars = fig.axes[0].patches
    assert len(bars) == 2 * 3  # p50 and p99 for three decades
    assert max(b.get_height() for b in bars) == pytest.approx(5000)
    _png(tmp_path / "fct.png")
    plot.fct_percentiles(result, path=tmp_path / "fct2.png")  # open-loop flows: latency_max_us
    fig = plot.cdf({"a": [1, 2, 3], "b": [2, 4]}, path=tmp_path / "cdf.png", xlabel="us")
    assert len(fig.axes[0].get_lines()) == 2
    _png(tmp_path / "cdf.png")


def test_sweep_lines_and_heatmap(tmp_path):
    df = pd.DataFrame({"switch.buffer": ["2MiB", "2MiB", "16MiB", "16MiB", "4MiB", "4MiB"],
                       "fan_in": [8, 16, 8, 16, 8, 16], "drops": [10, 40, 0, 5, 4, 20],
                       "status": ["ok"] * 6})
    fig = plot.sweep_lines(df, "switch.buffer", "drops", hue="fan_in", path=tmp_path / "l.png")
    lines = fig.axes[0].get_lines()
    assert len(lines) == 2
    assert list(lines[1].get_ydata()) == [40, 20, 5]  # x sorted by size: 2MiB, 4MiB, 16MiB
    _png(tmp_path / "l.png")
    fig = plot.sweep_heatmap(df, "switch.buffer", "fan_in", "drops", path=tmp_path / "h.png")
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["2MiB", "4MiB", "16MiB"]
    _png(tmp_path / "h.png")
