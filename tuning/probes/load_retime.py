#!/usr/bin/env python3
"""Device: a tune's leading candidates timed again under sustained load, as bench_gemm / bench_moe time.

The tune (kiln_bench) times each candidate alone in a short burst with a cold L2. At large sizes the board then runs
near its power limit, and under a sustained load the order of the leading tiles can change (bench/NOTES.md, "The
picks under load": 128x256 picks lose 4-12 % to 128x128 / 128x192 tiles at 4096 x 7168 x 16384 and 4096 x 4096 x
7168 in two sessions). For every tuned size with M >= --min-m this times the candidates within --within of the size's
best tune time (at most --top of them) with bench_gemm.time_rotation: blocks of 5 calls a side, the order turned each
round, operand sets rotated so that L2 stays cold, every side the same call count. Each candidate is checked once
against a reference first (relative L2 <= 1e-2 on a NaN-poisoned output): torch._scaled_mm for --kind fp8 (the
promoted logic's problem, tuning/results/sm90_fp8_promoted_h100.json), kiln.block_scaled_reference for --kind block
(1x128 / 128x128 block scales as bench_moe makes them, tuning/results/sm90_fp8_block_h100.json).

    KILN_LIBRARY=... PYTHONPATH=runtime/python python3 tuning/probes/load_retime.py RESULTS_JSON OUT_JSON
        [--kind fp8|block] [--min-m 512] [--top 4] [--within 1.15] [--budget-s 1.2] [--time-limit-s 400]
        [--skip EARLIER_OUT_JSON]

--skip: sizes an earlier run (cut short by --time-limit-s) already timed are left out, so that a second device call
takes up where the first stopped; the two files' "sizes" together are the whole run.

OUT_JSON: {"device", "sizes": {"MxNxK": {"tune": {name: ms}, "load": {name: ms}, "runs": n}}}; the merge into the
results file is tuning/probes/load_retime_merge.py (no GPU)."""
import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import torch  # noqa: E402

import bench_gemm as bg  # noqa: E402
import bench_moe as bm  # noqa: E402
import kiln  # noqa: E402
from ab_table import short  # noqa: E402  (this script's folder is on sys.path when it runs)


def leaders(rows, top, within):
    ok = sorted((r for r in rows if r.get("pass") and r.get("ms")), key=lambda r: r["ms"])
    return [r for r in ok if r["ms"] <= ok[0]["ms"] * within][:top] if ok else []


def problem(kind, m, n, k):
    """(operand sets, reference output of set 0, call(set, algo, out))"""
    if kind == "block":
        sets = [bm.block_make(m, n, k) for _ in range(bg.n_sets_for(bm.block_set_bytes(m, n, k)))]
        s0 = sets[0]
        ref = kiln.block_scaled_reference(s0["a"], s0["b"], s0["sa"], s0["sb"])
        return sets, ref, lambda s, info, o: kiln.block_scaled_mm(s["a"], s["b"], s["sa"], s["sb"], out=o, algo=info)
    case = bg.fp8_case(bg.Spec("fp8", m, n, k), rowwise=False)
    sets = [case.make() for _ in range(bg.n_sets_for(case.set_bytes))]
    return sets, case.theirs(sets[0]), lambda s, info, o: kiln.scaled_mm(s["a"], s["b"], s["sa"], s["sb"], out=o,
                                                                          algo=info)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("out")
    ap.add_argument("--kind", choices=("fp8", "block"), default="fp8")
    ap.add_argument("--min-m", type=int, default=512)
    ap.add_argument("--top", type=int, default=4)
    ap.add_argument("--within", type=float, default=1.15)
    ap.add_argument("--budget-s", type=float, default=1.2)
    ap.add_argument("--time-limit-s", type=float, default=400.0)
    ap.add_argument("--skip", help="an earlier OUT_JSON whose sizes are left out")
    args = ap.parse_args()
    res = json.load(open(args.results))
    done = set(json.load(open(args.skip))["sizes"]) if args.skip else set()
    sizes = sorted((tuple(map(int, s.split("x"))), s) for s in res["sizes"] if s not in done)
    sizes = [(mnk, s) for mnk, s in sizes if mnk[0] >= args.min_m]
    out = {"device": torch.cuda.get_device_name(), "results": args.results, "kind": args.kind, "top": args.top,
           "within": args.within, "budget_s": args.budget_s, "sizes": {}}
    t0 = time.monotonic()
    for (m, n, k), key in sizes:
        if time.monotonic() - t0 > args.time_limit_s:
            print(f"time limit: {key} and later left out")
            break
        lead = leaders(res["sizes"][key], args.top, args.within)
        if len(lead) < 2:
            continue
        sets, ref, run = problem(args.kind, m, n, k)
        fns, names = [], []
        for r in lead:
            try:
                info = kiln.algo_by_name(r["name"])
            except kiln.KilnError:  # a tune candidate that no logic took: not in the library
                continue
            o = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")

            def call(s, info=info, o=o):
                return run(s, info, o)

            o.fill_(float("nan"))
            call(sets[0])
            err, finite = bm.rel_l2_and_finite(o, ref)
            if not (finite and err <= 1e-2):
                print(f"{key} {r['name']}: rel L2 {err:.3g}, left out")
                continue
            fns.append(call)
            names.append(r["name"])
        if len(fns) < 2:
            continue
        timed = bg.time_rotation(fns, sets, 5, 40, args.budget_s * len(fns), 5)
        row = {"tune": {r["name"]: r["ms"] for r in lead if r["name"] in names},
               "load": {nm: t["median_ms"] for nm, t in zip(names, timed)}, "runs": timed[0]["runs"]}
        out["sizes"][key] = row
        best_tune = min(row["tune"], key=row["tune"].get)
        best_load = min(row["load"], key=row["load"].get)
        print(f"{key}: tune best {short(best_tune)} {row['tune'][best_tune]:.4f} ms; under load "
              + ", ".join(f"{short(nm)} {ms:.4f}" for nm, ms in sorted(row["load"].items(), key=lambda x: x[1]))
              + ("" if best_tune == best_load else "  <- changes"), flush=True)
        del sets, ref
        torch.cuda.empty_cache()
    Path(args.out).write_text(json.dumps(out, indent=1, sort_keys=True))
    print(f"{len(out['sizes'])} sizes in {time.monotonic() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
