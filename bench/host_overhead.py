#!/usr/bin/env python3
"""Host time per call of the binding's ops against torch._scaled_mm, in one process (issue 11's target:
kiln.scaled_mm <= 1.25x torch._scaled_mm).

Each row times --calls calls of one op on a tiny problem (M x N x K = --shape, default 16x16x32) with
time.perf_counter and no synchronization inside the timed loop: what the host spends per call, output allocation
included, while the GPU runs behind it. Rows (fp8 e4m3 with 1-element float32 scales, bf16 out):
  kiln.scaled_mm                       a [M, K] e4m3, w.t() of [N, K] e4m3, scale_a, scale_b
  torch._scaled_mm                     the same operands (cuBLASLt)
  kiln.scaled_mm, plan cache off       the whole way every call (planning, kiln_query's cache, the run): the
                                       binding's per-call cost without the plan cache
  kiln.gemm / torch.mm                 bf16 a [M, K] @ w.t() of [N, K]
  kiln.mixed_mm                        f16 x [M, K], prepack_b(w.t()) e4m3, scale_b [N]
Each row runs --warmup calls first; then --reps rounds each time every row once (rows interleaved, a synchronize
between rounds and never inside one), and the row's figure is the median over rounds (min alongside). Each kiln op's
output is also compared once with torch's (relative L2; the cached run is compared bitwise with the whole way).

Summary (JSON "summary", printed last): host_overhead_ratio_vs_torch = kiln.scaled_mm us / torch._scaled_mm us
(median; target <= 1.25, meets_target), gemm_ratio_vs_torch_mm, plan_cache_speedup (cache off us / on us), and the
us per call of each kiln op.

--cpu-stub times the binding's Python path without a GPU: CPU tensors, kiln.set_arch("sm90") on the device-less
handle, the CUDA-only check lifted and the stream fetch stubbed; kiln_run is called for real, and the library checks
the problem, the arguments and the algo before it answers NO_DEVICE, which is ignored. There is no torch row then
(host_overhead_ratio_vs_torch is null).

    python3 bench/host_overhead.py                     # GPU -> bench/results/host_overhead_<device>_<commit>.json
    python3 bench/host_overhead.py --calls 2000 --reps 15 --out /tmp/host.json
    KILN_BINDING_DIR=/tmp/kiln-old/runtime/python KILN_LIBRARY=$PWD/build/libkiln.so python3 bench/host_overhead.py
                                                       # another checkout's binding (e.g. before the cache)
    python3 bench/host_overhead.py --cpu-stub          # no GPU: the binding's path, kiln_run answering NO_DEVICE
    python3 bench/host_overhead.py --self-check        # table and summary code on fake numbers; no torch, no GPU
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import statistics
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent
# $KILN_BINDING_DIR times another checkout's binding (its runtime/python) in this script, e.g. the one before the
# plan cache; a binding without kiln._fastpath has no "plan cache off" row.
sys.path.insert(0, os.environ.get("KILN_BINDING_DIR") or str(REPO / "runtime" / "python"))
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import kiln  # noqa: E402
from bench_gemm import git_commit  # noqa: E402

try:
    import torch
except ImportError:  # --help and --self-check still work
    torch = None

TARGET_RATIO = 1.25
ROWS = ("kiln.scaled_mm", "torch._scaled_mm", "kiln.scaled_mm, plan cache off", "kiln.gemm", "torch.mm",
        "kiln.mixed_mm")
COLUMNS = (("op", "op", "{}"), ("us/call (median)", "us_median", "{:.2f}"), ("min", "us_min", "{:.2f}"),
           ("vs torch._scaled_mm", "vs_torch", "{:.2f}x"), ("check", "check", "{}"))


# ---- what is timed ----

def make_calls(shape, device: str) -> dict:
    """{row name: zero-argument callable}; on the CPU (cpu-stub) fp8 is uint8 with a_fp8/b_fp8 and there is no torch
    row."""
    m, n, k = shape
    gen = torch.Generator(device="cpu").manual_seed(11)
    u8 = lambda rows, cols: torch.randint(1, 120, (rows, cols), dtype=torch.uint8, generator=gen)
    a_u8, w_u8 = u8(m, k).to(device), u8(n, k).to(device)
    one = torch.ones((), dtype=torch.float32, device=device)
    cols = torch.rand(n, dtype=torch.float32, generator=gen).to(device) + 0.5
    x = (torch.randn(m, k, generator=gen) / 4).to(device)
    w16 = (torch.randn(n, k, generator=gen) / 4).to(device)
    fp8 = getattr(torch, "float8_e4m3fn", None)
    if device == "cpu" or fp8 is None:
        a, w, kw = a_u8, w_u8, dict(a_fp8="e4m3", b_fp8="e4m3")
    else:
        a, w, kw = a_u8.view(fp8), w_u8.view(fp8), {}
    packed = kiln.prepack_b(w_u8.t(), fp8="e4m3")
    xb, wb, xh = x.to(torch.bfloat16), w16.to(torch.bfloat16), x.to(torch.float16)
    calls = {
        "kiln.scaled_mm": lambda: kiln.scaled_mm(a, w.t(), one, one, out_dtype=torch.bfloat16, **kw),
        "kiln.gemm": lambda: kiln.gemm(xb, wb.t()),
        "kiln.mixed_mm": lambda: kiln.mixed_mm(xh, packed, scale_b=cols),
    }
    if hasattr(kiln, "_fastpath"):
        calls["kiln.scaled_mm, plan cache off"] = lambda: _uncached(kiln.scaled_mm, a, w.t(), one, one,
                                                                    out_dtype=torch.bfloat16, **kw)
    if device != "cpu":
        calls["torch._scaled_mm"] = lambda: torch._scaled_mm(a, w.t(), one, one, out_dtype=torch.bfloat16)
        calls["torch.mm"] = lambda: torch.mm(xb, wb.t())
    return {name: calls[name] for name in ROWS if name in calls}


def _uncached(op, *args, **kwargs):
    """op with an empty plan cache of size 0 in place of the binding's: every call goes the whole way."""
    ops = kiln._ops
    saved, ops._plans = ops._plans, _NO_PLANS
    try:
        return op(*args, **kwargs)
    finally:
        ops._plans = saved


_NO_PLANS = kiln._fastpath.PlanCache(size=0) if hasattr(kiln, "_fastpath") else None


def checks(calls: dict) -> dict:
    """Per kiln row: 'rel <x>' against the torch row of the same maths, and 'same' when the cached run's output is
    bitwise the whole way's."""
    out = {}
    ref = {"kiln.scaled_mm": "torch._scaled_mm", "kiln.gemm": "torch.mm"}
    for name, fn in calls.items():
        if not name.startswith("kiln."):
            continue
        try:
            fn()  # the first call of the key goes the whole way and caches its plan; the next one runs that plan
            got = fn().float()
            text = []
            if name == "kiln.scaled_mm" and "kiln.scaled_mm, plan cache off" in calls:
                whole = calls["kiln.scaled_mm, plan cache off"]().float()
                text.append("same" if torch.equal(got, whole) else "DIFFERS from the whole way")
            if ref.get(name) in calls:
                want = calls[ref[name]]()
                want = (want[0] if isinstance(want, tuple) else want).float()  # older torch: (out, amax)
                text.append(f"rel {float((got - want).norm() / want.norm().clamp_min(1e-30)):.1e}")
            out[name] = ", ".join(text) or "ran"
        except Exception as exc:  # noqa: BLE001 -- a failing op is a row's finding, not the run's end
            out[name] = f"error: {type(exc).__name__}: {exc}"[:200]
    return out


def time_rows(calls: dict, n: int, reps: int, warmup: int, sync) -> dict:
    """{row: [us per call, one per round]}: rounds interleave the rows; sync() runs between rounds, never inside."""
    for fn in calls.values():
        for _ in range(warmup):
            fn()
    sync()
    per = {name: [] for name in calls}
    clock = time.perf_counter
    for _ in range(reps):
        for name, fn in calls.items():
            sync()
            t0 = clock()
            for _ in range(n):
                fn()
            per[name].append((clock() - t0) / n * 1e6)
    sync()
    return per


# ---- table and summary (pure Python: --self-check runs them on fake numbers) ----

def make_rows(per: dict, check: dict) -> list:
    torch_us = statistics.median(per["torch._scaled_mm"]) if per.get("torch._scaled_mm") else None
    rows = []
    for name in ROWS:
        if name not in per:
            if str(check.get(name, "")).startswith("error"):  # failed its check: not timed, but listed
                rows.append({"op": name, "us_median": None, "us_min": None, "us_rounds": [], "vs_torch": None,
                             "check": check[name]})
            continue
        med = statistics.median(per[name])
        rows.append({"op": name, "us_median": med, "us_min": min(per[name]), "us_rounds": per[name],
                     "vs_torch": med / torch_us if torch_us else None, "check": check.get(name, "")})
    return rows


def summary(rows: list) -> dict:
    us = {r["op"]: r["us_median"] for r in rows if r["us_median"] is not None}
    ratio = lambda a, b: round(us[a] / us[b], 3) if a in us and b in us and us[b] > 0 else None  # noqa: E731
    host = ratio("kiln.scaled_mm", "torch._scaled_mm")
    return {
        "host_overhead_ratio_vs_torch": host,
        "target_ratio": TARGET_RATIO,
        "meets_target": None if host is None else host <= TARGET_RATIO,
        "gemm_ratio_vs_torch_mm": ratio("kiln.gemm", "torch.mm"),
        "plan_cache_speedup": ratio("kiln.scaled_mm, plan cache off", "kiln.scaled_mm"),
        "kiln_scaled_mm_us": round(us["kiln.scaled_mm"], 2) if "kiln.scaled_mm" in us else None,
        "torch_scaled_mm_us": round(us["torch._scaled_mm"], 2) if "torch._scaled_mm" in us else None,
        "kiln_gemm_us": round(us["kiln.gemm"], 2) if "kiln.gemm" in us else None,
        "kiln_mixed_mm_us": round(us["kiln.mixed_mm"], 2) if "kiln.mixed_mm" in us else None,
    }


def table(rows: list) -> str:
    def cell(row, key, fmt):
        value = row.get(key)
        return "n/a" if value is None or value == "" else fmt.format(value)
    head = [title for title, _k, _f in COLUMNS]
    body = [[cell(r, key, fmt) for _t, key, fmt in COLUMNS] for r in rows]
    widths = [max(len(x) for x in col) for col in zip(head, *body)]
    lines = ["| " + " | ".join(h.ljust(w) for h, w in zip(head, widths)) + " |",
             "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    lines += ["| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |" for r in body]
    return "\n".join(lines)


def write_outputs(path: pathlib.Path, meta: dict, rows: list) -> dict:
    summ = summary(rows)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"meta": meta, "rows": rows, "summary": summ}, indent=2, sort_keys=True) + "\n")
    print(table(rows))
    print("summary: " + json.dumps(summ, sort_keys=True))
    print(f"wrote {path}")
    return summ


def self_check() -> int:
    fake = {"kiln.scaled_mm": [24.0, 23.0, 25.0], "torch._scaled_mm": [30.0, 31.0, 29.5],
            "kiln.scaled_mm, plan cache off": [120.0, 118.0, 121.0], "kiln.gemm": [20.0, 21.0, 19.0],
            "torch.mm": [10.0, 10.0, 10.0], "kiln.mixed_mm": [22.0, 22.0, 23.0]}
    rows = make_rows(fake, {"kiln.scaled_mm": "same, rel 1.0e-03"})
    assert [r["op"] for r in rows] == list(ROWS)
    with tempfile.TemporaryDirectory() as tmp:
        summ = write_outputs(pathlib.Path(tmp) / "sub" / "fake.json", {"fake": True}, rows)
        data = json.loads((pathlib.Path(tmp) / "sub" / "fake.json").read_text())
    assert data["summary"] == summ
    assert summ["host_overhead_ratio_vs_torch"] == round(24.0 / 30.0, 3) and summ["meets_target"] is True
    assert summ["plan_cache_speedup"] == round(120.0 / 24.0, 3) and summ["gemm_ratio_vs_torch_mm"] == 2.0
    slow = make_rows({**fake, "kiln.scaled_mm": [40.0]}, {})
    assert summary(slow)["meets_target"] is False
    stub = summary(make_rows({k: v for k, v in fake.items() if k.startswith("kiln.")}, {}))
    assert stub["host_overhead_ratio_vs_torch"] is None and stub["meets_target"] is None
    assert "n/a" in table(make_rows({"kiln.gemm": [1.0]}, {}))
    failed = make_rows({k: v for k, v in fake.items() if k != "kiln.mixed_mm"}, {"kiln.mixed_mm": "error: boom"})
    assert failed[-1]["op"] == "kiln.mixed_mm" and summary(failed)["kiln_mixed_mm_us"] is None
    assert "error: boom" in table(failed)
    print("self-check passed")
    return 0


# ---- main ----

def cpu_stub() -> dict:
    """Lift what needs CUDA so that the ops run on CPU tensors to a real kiln_run that answers NO_DEVICE."""
    if not hasattr(kiln, "_fastpath"):
        raise SystemExit("--cpu-stub needs a binding with kiln._fastpath (this one is older)")
    from kiln import _fastpath, _handle
    if kiln.device_arch(-1) != "none":
        raise SystemExit("--cpu-stub is for machines without a GPU: kiln sees one here, and kiln_run would launch "
                         "with CPU pointers")
    kiln.set_arch("sm90", device_index=-1)
    _handle.require_runnable = lambda device, where: None
    _fastpath._stream = lambda index: 0
    real = _fastpath._bind_run()
    _fastpath._run = lambda *args: (real(*args), 0)[1]
    return {"mode": "cpu-stub: kiln_run on the device-less handle (sm90), status ignored; stream fetch stubbed"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shape", default="16x16x32", help="MxNxK of the tiny problem (default 16x16x32)")
    ap.add_argument("--calls", type=int, default=2000, help="calls per timed round (default 2000)")
    ap.add_argument("--reps", type=int, default=11, help="timed rounds per row (default 11; median reported)")
    ap.add_argument("--warmup", type=int, default=200, help="untimed calls per row first (default 200)")
    ap.add_argument("--out", help="JSON path (default bench/results/host_overhead_<device>_<commit>.json)")
    ap.add_argument("--cpu-stub", action="store_true", help="no GPU: time the binding's path on CPU tensors")
    ap.add_argument("--self-check", action="store_true", help="check the table/summary code on fake numbers")
    args = ap.parse_args()
    if args.self_check:
        return self_check()
    match = re.fullmatch(r"(\d+)x(\d+)x(\d+)", args.shape)
    if not match:
        raise SystemExit(f"--shape: {args.shape!r} is not MxNxK")
    shape = tuple(int(v) for v in match.groups())
    if torch is None:
        print("host_overhead: needs torch", file=sys.stderr)
        return 2
    meta = {"commit": git_commit(), "torch": torch.__version__, "shape": list(shape), "calls": args.calls,
            "reps": args.reps, "warmup": args.warmup, "python": sys.version.split()[0],
            "time_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    if args.cpu_stub:
        meta.update(cpu_stub(), device="cpu")
        device, sync = "cpu", (lambda: None)
    else:
        if not torch.cuda.is_available():
            print("host_overhead: needs a CUDA device (or --cpu-stub)", file=sys.stderr)
            return 2
        device, sync = "cuda", torch.cuda.synchronize
        meta.update(device=torch.cuda.get_device_name(), cuda=torch.version.cuda)
    kiln.load_library()
    meta["kiln_library"] = kiln.library_path()
    calls = make_calls(shape, device)
    check = checks(calls) if device != "cpu" else {}
    timed = {name: fn for name, fn in calls.items() if not str(check.get(name, "")).startswith("error")}
    per = time_rows(timed, args.calls, args.reps, args.warmup, sync)
    meta["plan_cache_entries"] = len(kiln._fastpath.plans) if hasattr(kiln, "_fastpath") else None
    meta["binding"] = str(pathlib.Path(kiln.__file__).parent)
    rows = make_rows(per, check)
    name = "host_overhead_" + re.sub(r"[^A-Za-z0-9]+", "-", meta["device"]).strip("-").lower() + "_" + \
        meta["commit"][:10]
    write_outputs(pathlib.Path(args.out) if args.out else REPO / "bench" / "results" / (name + ".json"), meta, rows)
    return 1 if any(str(r["check"]).startswith("error") or "DIFFERS" in str(r["check"]) for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
