#!/usr/bin/env python3
"""Bar plot of a bench_gemm.py results JSON: ratio = baseline ms / kiln ms per shape (linear axis), grouped and
coloured by case, with a line at 1.0 (above it kiln is faster). Failed rows show as an "x" on the axis.

    python3 bench/plot_bench.py bench/results/<device>_<commit>.json out.png

Only plot() needs matplotlib (Agg backend); reading the rows does not.
"""
from __future__ import annotations

import json
import pathlib
import re
import sys


def load(results_json_path) -> tuple:
    """(meta, rows) of a results file. Rows of the older format (case = label, family = case, baseline_ms) are
    renamed to the current keys."""
    data = json.loads(pathlib.Path(results_json_path).read_text())
    rows = []
    for r in data.get("cases", []):
        r = dict(r)
        if "family" in r:
            r["label"], r["case"] = r["case"], r.pop("family")
            r.setdefault("base_ms", r.get("baseline_ms"))
        if "m" not in r:
            shape = re.search(r"(\d+)x(\d+)x(\d+)", r.get("label", ""))
            r.update(zip("mnk", map(int, shape.groups())) if shape else {})
        rows.append(r)
    return data.get("meta", {}), rows


def tick_label(r: dict) -> str:
    shape = f"{r['m']}x{r['n']}x{r['k']}" if "m" in r else r.get("label", "?")
    old_label = re.search(r"x (e4m3|e5m2) ", r.get("label", ""))  # mixed rows of the older format
    fmt = r.get("b_format") or (old_label.group(1) if old_label else None)
    return f"{shape} {fmt}" if fmt else shape


def groups(rows) -> list:
    """[(case, [(tick label, ratio or None for a failed row)])] in the order the cases first appear."""
    out = {}
    for r in rows:
        ratio = r.get("ratio") if "error" not in r else None
        out.setdefault(r["case"], []).append((tick_label(r), ratio))
    return list(out.items())


def plot(results_json_path, png_path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    meta, rows = load(results_json_path)
    grouped = groups(rows)
    n_bars = sum(len(bars) for _case, bars in grouped)
    ratios = [v for _case, bars in grouped for _t, v in bars if v is not None]
    top = max([1.0] + ratios) * 1.18

    fig, ax = plt.subplots(figsize=(max(8.0, 0.32 * n_bars + 2.5), 6.0))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    x, ticks, tick_labels = 0, [], []
    for gi, (case, bars) in enumerate(grouped):
        color = colors[gi % len(colors)]
        xs = list(range(x, x + len(bars)))
        heights = [v if v is not None else 0.0 for _t, v in bars]
        ax.bar(xs, heights, width=0.8, color=color)
        for xi, (_t, v) in zip(xs, bars):
            if v is None:
                ax.text(xi, 0, "x", ha="center", va="bottom", color="red", fontsize=9, fontweight="bold")
            else:
                ax.text(xi, v + top * 0.01, f"{v:.2f}", ha="center", va="bottom", fontsize=6, rotation=90)
        ax.text((xs[0] + xs[-1]) / 2, top * 0.97, case, ha="center", va="top", fontsize=9, color=color)
        if gi:
            ax.axvline(x - 1, color="0.8", linewidth=0.8)
        ticks += xs
        tick_labels += [t for t, _v in bars]
        x += len(bars) + 1  # one empty slot between cases
    ax.axhline(1.0, color="black", linestyle="--", linewidth=1.0)
    ax.set_xticks(ticks)
    ax.set_xticklabels(tick_labels, rotation=90, fontsize=7)
    ax.set_xlim(-0.8, max(x - 1, 1) - 0.2)
    ax.set_ylim(0, top)
    ax.set_ylabel("ratio = baseline ms / kiln ms  (> 1: kiln faster)")
    ax.set_title(f"kiln vs baseline, {meta.get('device', '?')}, commit {str(meta.get('commit', '?'))[:10]}\n"
                 "dashed line: 1.0 (kiln as fast as the baseline)", fontsize=10)
    fig.tight_layout()
    fig.savefig(png_path, dpi=130)
    plt.close(fig)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2 or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    plot(argv[0], argv[1])
    print(f"wrote {argv[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
