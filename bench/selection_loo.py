#!/usr/bin/env python3
"""Leave-one-size-out check of the runtime's timing model on a tune's raw results, without a GPU.

A tune (`kiln-gen tune`) times every candidate at every size of its grid; the logic it writes keeps the winners and
their times, and for a size that is not in the grid the runtime predicts each winner's time from the nearest measured
sizes (runtime/src/select.c, rank_model). This script asks how good that prediction is on sizes the logic did not
see: for each size S of the results, it builds the logic the tune would write from the other sizes (solutions: their
winners; timings: those winners' times there), predicts every solution's time at S as select.c does, and compares
the predicted pick's measured time at S with the best candidate's there.

    python3 bench/selection_loo.py tuning/results/sm90_fp8_promoted_h100.json [--neighbors 4] [--sms 132]

The model, mirrored from select.c (keep the two in step): the `neighbors` measured sizes nearest in log2 (M, N, K)
space; predicted ms = exp(sum_i w_i log(ms_i * work(S) / work(size_i)) / sum_i w_i), w_i = 1 / (d_i + 1/8);
work = (ceil(tiles * gsu / SMs) + tiles * gsu / SMs) * (ceil(ceil(K / DepthU) / gsu) + 1), tiles rounded up to pairs
along M (mc 1) or N (mc 2); a solution without a time at the nearest measured size is left out where another has one
(select.c: the others there would be predicted from it, that one only from farther sizes), the share term left out (`--share 0`, or a replayed logic with `selection.share: 0`:
select.c's waves_only). Exact entries are not used (the size left out has none). Grouped results are out of scope (their sizes are
per group and the work counts every group's tiles).

Prints per-size misses (pick slower than 1.10 x best) and a summary: the fraction of sizes whose pick is within
10% of the best, and the mean and worst pick/best. `--json` writes the rows and the summary.
"""
from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path

MISS_FACTOR = 1.10
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "generator"))
from kilngen import schema  # noqa: E402  (the generator's loader: the same parse the build uses)
from kilngen.model import decode  # noqa: E402


def geometry(name: str) -> tuple:
    """(MT0, MT1, DepthU, GSU, MC) of a kernel, from its name."""
    sol = decode(name)
    return (*sol.mt, sol.gsu, sol.mc)


def log2_pos(v: int) -> float:
    return math.log2(v if v > 1 else 1)


def distance(a: tuple, b: tuple) -> float:
    return math.sqrt(sum((log2_pos(x) - log2_pos(y)) ** 2 for x, y in zip(a, b)))


SHARE = 1.0  # the unrounded share of the grid in work (select.c model_work); 0 gives the model before 2026-11-27
NEAREST = True  # only solutions timed at the nearest measured size are predicted (False: the model before ccabfcf)


def work(geo: tuple, m: int, n: int, k: int, sms: int, share: float = None) -> float:
    """select.c model_work; share None: SHARE (a logic with selection.share 0 passes 0: waves_only)."""
    mt0, mt1, du, gsu, mc = geo
    tm, tn = -(-m // mt0), -(-n // mt1)
    if mc == 1:
        tm = 2 * -(-tm // 2)
    if mc == 2:
        tn = 2 * -(-tn // 2)
    tiles = tm * tn * gsu
    kiters = math.ceil(-(-k // du) / gsu)
    return (math.ceil(tiles / sms) + (SHARE if share is None else share) * tiles / sms) * (kiters + 1.0)


def passing(rows) -> dict:
    return {r["name"]: r["ms"] for r in rows or () if r.get("pass") and r.get("ms", 0) > 0}


def predict(size: tuple, solutions: list, timings: dict, neighbors: int, sms: int, share: float = None) -> dict:
    """{name: predicted ms at size} from timings {measured size: {name: ms}} (select.c rank_model)."""
    near = sorted(timings, key=lambda s: distance(size, s))[:neighbors]
    out = {}
    for name in solutions:
        geo = geometry(name)
        here = work(geo, *size, sms, share)
        num = den = 0.0
        for s in near:
            ms = timings[s].get(name, 0.0)
            if not ms > 0:
                continue
            w = 1.0 / (distance(size, s) + 0.125)
            num += w * math.log(ms * here / work(geo, *s, sms, share))
            den += w
        if den > 0:
            out[name] = math.exp(num / den)
    # a solution never timed at the nearest measured size is not predicted from farther ones, unless none was
    nearest = timings[near[0]] if near and NEAREST else {}
    return {nm: ms for nm, ms in out.items() if nearest.get(nm, 0.0) > 0} or out


def leave_one_out(results: dict, neighbors: int, sms: int) -> list:
    measured = {}
    for key, rows in results["sizes"].items():
        ok = passing(rows)
        if ok:
            measured[tuple(int(v) for v in key.split("x"))] = ok
    best_of = {s: min(t, key=lambda nm: (t[nm], nm)) for s, t in measured.items()}  # as tune.winners
    rows = []
    for size, times in sorted(measured.items()):
        others = {s: t for s, t in measured.items() if s != size}
        winners = sorted({best_of[s] for s in others})
        timings = {s: {nm: t[nm] for nm in winners if nm in t} for s, t in others.items()}
        pred = predict(size, winners, timings, neighbors, sms)
        pick = min(pred, key=lambda nm: (pred[nm], nm)) if pred else None
        best = best_of[size]
        pick_ms = times.get(pick) if pick else None
        rows.append({"size": list(size), "pick": pick, "pick_ms": pick_ms, "best": best, "best_ms": times[best],
                     "ratio": pick_ms / times[best] if pick_ms else None})
    return rows


def norm(name: str) -> str:
    """A kernel name without the PR, MC and SAB tokens, which older results lack."""
    return re.sub(r"_(PR|MC|SAB)\d", "", name)


def logic_of(path: Path, problem: str = "e4m3,e4m3,bf16") -> tuple:
    """(solution names, {size: {name: ms}}, exact sizes, neighbors, share) of the logic of a solutions YAML for the
    problem types a,b,d (share: its selection.share, 0 or 1)."""
    root = path.resolve().parents[2]  # solutions/<arch>/<file>.yaml
    a, b, d = problem.split(",")
    sf = schema.load_file(path.resolve(), root)
    lg = next(lg for lg in sf.logics if (lg.problem.a.value, lg.problem.b.value, lg.problem.d.value) == (a, b, d))
    names = [s.name for s in lg.solutions]
    timings = {tuple(size): {names[i]: ms for i, ms in enumerate(row) if ms and ms > 0} for size, row in lg.timings}
    return names, timings, {tuple(e[:3]) for e in lg.exact}, lg.neighbors, lg.share


def replay(heldout: dict, logic: tuple, sms: int) -> list:
    """The model's pick at each held-out shape (bench/heldout.py rows: every candidate timed there) from the logic's
    timings, against the best candidate there and the pick the runtime made when the rows were measured."""
    names, timings, exact, neighbors, share = logic
    rows = []
    for r in heldout["rows"]:
        size = (r["m"], r["n"], r["k"])
        cand = {norm(c["name"]): c["ms"] for c in r.get("candidates", ()) if c.get("ok")}
        if size in exact or not cand or not r.get("best_ms"):
            continue
        pred = predict(size, names, timings, neighbors, sms, 0.0 if share == 0 else None)
        pick = min(pred, key=lambda nm: (pred[nm], nm)) if pred else None
        pick_ms = cand.get(norm(pick)) if pick else None
        rows.append({"size": list(size), "pick": pick, "pick_ms": pick_ms, "best": r["best"], "best_ms": r["best_ms"],
                     "ratio": pick_ms / r["best_ms"] if pick_ms else None,
                     "runtime_pick_then": r.get("pick"),
                     "agrees_with_then": bool(pick and r.get("pick") and norm(pick) == norm(r["pick"]))})
    return rows


def summarize(rows: list) -> dict:
    ratios = [r["ratio"] for r in rows if r["ratio"]]
    hits = sum(1 for x in ratios if x <= MISS_FACTOR)
    return {"sizes": len(rows), "hits": hits, "frac_pick_within_10pct": hits / len(rows) if rows else 0.0,
            "mean_pick_over_best": sum(ratios) / len(ratios) if ratios else None,
            "max_pick_over_best": max(ratios) if ratios else None,
            "unpredicted": sum(1 for r in rows if not r["ratio"])}


def short(name: str) -> str:
    m = re.search(r"_(MT.*?_MI[0-9x]+)_.*?(GSU\d+).*?(PK\d).*?(MC\d)", name or "")
    return " ".join(m.groups()) if m else str(name)


def main(argv=None) -> int:
    global SHARE
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", nargs="*", help="tune results JSON (tuning/results/*.json)")
    ap.add_argument("--heldout", default=None, help="a bench/heldout.py JSON to replay instead (with --logic)")
    ap.add_argument("--logic", default=None, help="the solutions YAML whose timings the held-out run's library had")
    ap.add_argument("--problem", default="e4m3,e4m3,bf16", help="the logic's a,b,d types (--heldout)")
    ap.add_argument("--share", type=float, default=SHARE, help="the grid share in work (0: the earlier model)")
    ap.add_argument("--neighbors", type=int, default=4, help="the logic's selection.neighbors (default 4)")
    ap.add_argument("--sms", type=int, default=132, help="SMs the model counts waves on (the H100 SXM: 132)")
    ap.add_argument("--json", default=None, help="write the rows and summaries here")
    ap.add_argument("--quiet", action="store_true", help="summaries only")
    args = ap.parse_args(argv)
    SHARE = args.share
    report = {}
    if args.heldout:
        if not args.logic:
            ap.error("--heldout needs --logic")
        rows = replay(json.loads(Path(args.heldout).read_text()), logic_of(Path(args.logic), args.problem), args.sms)
        summary = summarize(rows)
        summary["agrees_with_then"] = sum(r["agrees_with_then"] for r in rows)
        report[args.heldout] = {"summary": summary, "rows": rows}
        print(f"{args.heldout}: {summary['hits']}/{summary['sizes']} picks within 10% of the best, mean pick/best "
              f"{summary['mean_pick_over_best']:.4f}, max {summary['max_pick_over_best']:.3f}; the same pick as the "
              f"runtime then on {summary['agrees_with_then']}")
    elif not args.results:
        ap.error("give tune results, or --heldout and --logic")
    for path in args.results:
        results = json.loads(Path(path).read_text())
        rows = leave_one_out(results, args.neighbors, args.sms)
        summary = summarize(rows)
        report[path] = {"summary": summary, "rows": rows}
        if not args.quiet:
            for r in rows:
                if r["ratio"] is None or r["ratio"] > MISS_FACTOR:
                    ratio = f"{r['ratio']:.2f}" if r["ratio"] else "none"
                    print(f"  miss {'x'.join(map(str, r['size']))}: pick {short(r['pick'])} {ratio}x best "
                          f"({short(r['best'])})")
        mean = summary["mean_pick_over_best"]
        print(f"{path}: {summary['hits']}/{summary['sizes']} picks within 10% of the best "
              f"({100 * summary['frac_pick_within_10pct']:.1f}%), mean pick/best "
              f"{mean:.3f}, max {summary['max_pick_over_best']:.3f}" if mean else f"{path}: no prediction")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
