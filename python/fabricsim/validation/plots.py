"""Small plotting helpers: simulated against published on one Figure (Agg, no pyplot)."""
import numpy as np

SIM = "#1f77b4"
PUB = "#d62728"


def bars(fig, labels, simulated, published, ylabel, title="", band=None):
    """Side-by-side bars per label; published None leaves its bar out. band: [(lo, hi)] per
    label, drawn as the tolerance around the published value."""
    ax = fig.add_subplot(111)
    x = np.arange(len(labels))
    ax.bar(x - 0.2, simulated, 0.4, color=SIM, label="FabricSim")
    pub = [np.nan if p is None else p for p in published]
    ax.bar(x + 0.2, pub, 0.4, color=PUB, label="published")
    if band:
        for i, b in enumerate(band):
            if b is not None:
                ax.errorbar(x[i] + 0.2, (b[0] + b[1]) / 2, yerr=(b[1] - b[0]) / 2, fmt="none",
                            ecolor="black", capsize=4)
    ax.set_xticks(x)
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    return ax


def series(fig, t, y, xlabel, ylabel, title="", hlines=(), label="FabricSim"):
    """One simulated time series with published levels as dashed lines: hlines [(y, label)]."""
    ax = fig.add_subplot(111)
    ax.plot(t, y, color=SIM, lw=0.7, label=label)
    for i, (v, lab) in enumerate(hlines):
        ax.axhline(v, color=PUB if i == 0 else "gray", ls="--", lw=1, label=lab)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    return ax


def save(fig, path):
    # No software version or date in the file: the same run gives the same bytes.
    fig.savefig(path, dpi=90, metadata={"Software": None})
