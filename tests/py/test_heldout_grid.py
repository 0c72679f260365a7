"""The held-out fp8 shapes (bench/heldout_shapes.txt) stay out of the tuning grid: no (m, n, k) of the list is a size
tuning/sm90_fp8.yaml measures or one the shipped logic (solutions/sm90/wgmma_fp8.yaml) holds, read with the
generator's own parsers. bench/heldout.py --self-check checks the same through its own reader."""
from __future__ import annotations

from pathlib import Path

from kilngen import schema, tune

REPO = Path(__file__).resolve().parents[2]
SHAPES = REPO / "bench" / "heldout_shapes.txt"


def heldout_shapes() -> list:
    out = []
    for line in SHAPES.read_text().splitlines():
        body, _, comment = line.partition("#")
        if body.strip():
            m, n, k = (int(v) for v in body.split())
            out.append((m, n, k, comment.strip()))
    return out


def tuned_sizes() -> set:
    sizes = set(tune.load(REPO / "tuning" / "sm90_fp8.yaml", REPO).sizes)
    logic = schema.load_file(REPO / "solutions" / "sm90" / "wgmma_fp8.yaml", REPO)
    for lg in logic.logics:
        sizes |= {(m, n, k) for m, n, k, _i in lg.exact}
        sizes |= {tuple(size) for size, _ms in lg.timings}
    return sizes


def test_heldout_shapes_are_not_tuned():
    tuned = tuned_sizes()
    inside = [s[:3] for s in heldout_shapes() if s[:3] in tuned]
    assert not inside, f"held-out shapes in the tuning grid: {inside}"


def test_heldout_list_covers_large_layers():
    shapes = heldout_shapes()
    assert len(shapes) >= 60 and len({s[:3] for s in shapes}) == len(shapes)
    assert all(src for *_mnk, src in shapes), "every shape names the layer it comes from"
    assert all(n % 16 == 0 and k % 16 == 0 for _m, n, k, _s in shapes)
    assert max(n for _m, n, _k, _s in shapes) >= 57344 and max(k for _m, _n, k, _s in shapes) >= 28672
    assert min(m for m, *_r in shapes) == 1 and max(m for m, *_r in shapes) >= 12000
    assert sum(n >= 28672 or k >= 16384 for _m, n, k, _s in shapes) >= 15


def test_grid_reaches_large_n_and_k():
    sizes = tune.load(REPO / "tuning" / "sm90_fp8.yaml", REPO).sizes
    assert max(n for _m, n, _k in sizes) >= 57344 and max(k for _m, _n, k in sizes) >= 28672
    ms = {m for m, _n, _k in sizes}
    assert {1, 16384} <= ms and any(m & (m - 1) for m in ms), "M from 1 to 16384, off-power-of-two values among them"


def test_heldout_bench_self_check():
    """bench/heldout.py's pure-Python parts (scoring, report, parts and their merge) on fake rows; no GPU."""
    import subprocess
    import sys
    r = subprocess.run([sys.executable, str(REPO / "bench" / "heldout.py"), "--self-check"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0 and "self-check passed" in r.stdout, r.stdout[-2000:] + r.stderr[-2000:]
