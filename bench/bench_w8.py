#!/usr/bin/env python3
"""Weight-only fp8 for inference (f16 activations x prepacked fp8 weights, kiln.mixed_mm) against what users run
today, every baseline timed in the same process.

Cases (weights [N, K] quantized per output channel; kiln: mixed_mm(x, prepacked, scale_b=scale[N], bias=bias[N])):
  decode   M in {1, 16} x (N, K) in NK          vs cuBLAS f16: F.linear(x, W16, bias) with W16 the dequantized
  m64_128  M in {64, 128} x NK                    weights in f16 (twice kiln's weight bytes)
  prefill  8192^3 (e4m3, e5m2) and M = 4096 x NK  vs torch.compile of (x @ W.to(f16).T) * scale + bias (cast, GEMM,
                                                  epilogue: the three kernels the fused kernel replaces)
  host     host microseconds per call, kiln.scaled_mm vs torch._scaled_mm (bench/host_overhead.py's rows)
  mlp      a Llama-3-8B MLP block (4096 -> 14336 gate/up, SiLU, 14336 -> 4096 down) built from kiln.Fp8Linear vs
           the same nn.Linear layers in f16, tokens in {1, 16}, eager and replayed from a CUDA graph
  group    per-group weight scales (one per output channel and 128 of K; scale_b [N, K/128]): group_decode M in
           {1, 16} x NK vs cuBLAS f16 as decode; group_prefill 8192^3 and 4096 x (4096, 14336) vs torch.compile of
           (x @ (W.to(f16) * scale expanded over K).T) + bias
NK = (8192, 8192), (28672, 4096), (4096, 14336), (57344, 8192).

ratio = baseline ms / kiln ms (> 1: kiln is faster). GPU times are medians of event-timed calls queued behind a
GPU sleep, rotating through enough input sets to keep the weights out of L2; kiln and the baseline are timed in
alternating blocks of 5 calls (bench_gemm.time_pair), so that both run under the same clocks (the power-limited
prefill rows moved by up to 10 % between two back-to-back timing runs).

Summary (JSON "summary", printed last): decode_m1_16_geomean_vs_f16, decode_m64_128_geomean_vs_f16,
prefill_8192_e4m3_vs_compile, prefill_8192_e5m2_vs_compile, prefill_m4096_min_vs_compile,
host_overhead_ratio_vs_torch, mlp_block_ratio {batch1_eager, batch1_graph, batch16_eager, batch16_graph},
decode_weight_tbps (the best fp8 weight bandwidth of the decode rows), group_decode_m1_16_geomean_vs_f16,
group_prefill_8192_vs_compile and group_time_vs_channel (geomean of kiln's per-group ms over its per-channel ms on
the decode shapes and 8192^3: what the group scales cost).

    python3 bench/bench_w8.py                     # -> bench/results/w8_<device>_<commit>.{json,md,png}
    python3 bench/bench_w8.py --cases decode --out /tmp/w8
    python3 bench/bench_w8.py --cases decode,m64_128 --nk 6144x4096,4096x4096 --out /tmp/w8_layers  # other shapes
    python3 bench/bench_w8.py --self-check        # summary, table and plot code on fake rows; no torch, no GPU
"""
from __future__ import annotations

import argparse
import pathlib
import re
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "runtime" / "python"))
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import kiln  # noqa: E402
from bench_gemm import (PLOT_LATER, geomean, git_commit, n_sets_for, plot_cases, rel_l2, tflops,  # noqa: E402
                        time_pair, write_report)

try:
    import torch
except ImportError:  # --help and --self-check still work
    torch = None

NK = ((8192, 8192), (28672, 4096), (4096, 14336), (57344, 8192))
CASES = ("decode", "m64_128", "prefill", "host", "mlp", "group")
MLP_HIDDEN, MLP_INTER = 4096, 14336
MLP_TOKENS = (1, 16)


class Spec:
    def __init__(self, case, m, n, k, fmt="e4m3"):
        self.case, self.m, self.n, self.k, self.fmt = case, m, n, k, fmt

    @property
    def label(self):
        return f"{self.case} {self.m}x{self.n}x{self.k} {self.fmt}"


def specs_for(cases, nk=NK) -> list:
    """The rows of these cases; nk replaces NK (--nk: shapes the repo's numbers were not tuned or reported on)."""
    out = []
    if "decode" in cases:
        out += [Spec("decode", m, n, k) for m in (1, 16) for n, k in nk]
    if "m64_128" in cases:
        out += [Spec("m64_128", m, n, k) for m in (64, 128) for n, k in nk]
    if "prefill" in cases:
        out += [Spec("prefill", 8192, 8192, 8192, fmt) for fmt in ("e4m3", "e5m2")]
        out += [Spec("prefill", 4096, n, k) for n, k in nk]
    if "group" in cases:
        out += [Spec("group_decode", m, n, k) for m in (1, 16) for n, k in nk]
        out += [Spec("group_prefill", 8192, 8192, 8192), Spec("group_prefill", 4096, 4096, 14336)]
    return out


# ---- GEMM rows ----

def _fp8(fmt):
    return getattr(torch, kiln.TORCH_DTYPE_NAME[kiln.FP8_NAMES[fmt]])


def _quantized(n, k, fmt):
    """A weight [N, K] quantized per output channel: (fp8 [N, K], scale f32 [N]) with W ~= fp8 * scale."""
    w = torch.randn(n, k, device="cuda") * 0.05
    amax = w.abs().amax(dim=1).clamp_min(1e-8)
    scale = amax / torch.finfo(_fp8(fmt)).max
    return (w / scale[:, None]).to(_fp8(fmt)), scale.float()


def _quantized_group(n, k, fmt):
    """A weight [N, K] quantized per output channel and 128 of K: (fp8 [N, K], scale f32 [N, K/128])."""
    w = torch.randn(n, k, device="cuda") * 0.05
    amax = w.reshape(n, k // 128, 128).abs().amax(dim=2).clamp_min(1e-8)
    scale = amax / torch.finfo(_fp8(fmt)).max
    return (w / scale.repeat_interleave(128, dim=1)).to(_fp8(fmt)), scale.float()


def _compiled_epilogue(x, wq, scale, bias):
    return (x @ wq.to(torch.float16).t()) * scale + bias


def _compiled_group(x, wq, scale, bias):
    return x @ (wq.to(torch.float16) * scale.repeat_interleave(128, dim=1)).t() + bias


_COMPILED = {}


def gemm_row(spec: Spec, args) -> dict:
    m, n, k = spec.m, spec.n, spec.k
    row = {"case": spec.case, "label": spec.label, "m": m, "n": n, "k": k, "b_format": spec.fmt}
    try:
        prefill = spec.case in ("prefill", "group_prefill")
        group = spec.case.startswith("group")
        weight_bytes = n * k * (2 if not prefill else 1)

        def make():
            wq, scale = (_quantized_group if group else _quantized)(n, k, spec.fmt)
            # prefill: activations / 256 so that the baseline's f16 GEMM of unscaled fp8 weights (up to 57344 in e5m2)
            # stays finite before its scale is applied (kiln scales in f32 and would not overflow either way)
            x = torch.randn(m, k, device="cuda", dtype=torch.float16) / (256 if spec.case == "prefill" else 1)
            s = {"x": x, "wq": wq, "scale": scale,
                 "bias": torch.randn(n, device="cuda", dtype=torch.float16) * 0.1,
                 "packed": kiln.prepack_b(wq.t())}
            if prefill:
                s["scale16"] = scale.half()
            elif group:
                s["w16"] = (wq.float() * scale.repeat_interleave(128, dim=1)).half()
            else:
                s["w16"] = (wq.float() * scale[:, None]).half()
            return s

        sets = [make() for _ in range(n_sets_for(weight_bytes))]
        out = torch.empty(m, n, dtype=torch.float16, device="cuda")
        ours = lambda s: kiln.mixed_mm(s["x"], s["packed"], scale_b=s["scale"], bias=s["bias"], out=out)  # noqa
        if spec.case == "prefill":
            fn = _COMPILED.setdefault("fn", torch.compile(_compiled_epilogue, dynamic=False))
            theirs = lambda s: fn(s["x"], s["wq"], s["scale16"], s["bias"])  # noqa: E731
            row["baseline"] = "torch.compile (cast + GEMM + scale/bias)"
        elif spec.case == "group_prefill":
            fn = _COMPILED.setdefault("group", torch.compile(_compiled_group, dynamic=False))
            theirs = lambda s: fn(s["x"], s["wq"], s["scale16"], s["bias"])  # noqa: E731
            row["baseline"] = "torch.compile (cast x group scale + GEMM + bias)"
        else:
            theirs = lambda s: torch.nn.functional.linear(s["x"], s["w16"], s["bias"])  # noqa: E731
            row["baseline"] = "cuBLAS f16 (F.linear, f16 weights)"
        row["input_sets"] = len(sets)
        row["kiln_kernel"] = kiln.query(kiln.mixed_mm, sets[0]["x"], sets[0]["packed"], scale_b=sets[0]["scale"],
                                        bias=sets[0]["bias"], out=out, k=1)[0].name
        mine = ours(sets[0]).clone()
        row["rel_l2"] = rel_l2(mine, theirs(sets[0]))
        del mine
        t_k, t_b = time_pair(ours, theirs, sets, args.warmup, args.iters, 2 * args.budget_s)
        row.update(kiln_ms=t_k["median_ms"], base_ms=t_b["median_ms"], ratio=t_b["median_ms"] / t_k["median_ms"],
                   kiln_min_ms=t_k["min_ms"], base_min_ms=t_b["min_ms"],
                   kiln_tflops=tflops(2.0 * m * n * k, t_k["median_ms"]),
                   base_tflops=tflops(2.0 * m * n * k, t_b["median_ms"]),
                   kiln_weight_tbps=n * k / (t_k["median_ms"] * 1e-3) / 1e12)
    except Exception as exc:  # noqa: BLE001 - one broken row must not hide the others
        row["error"] = f"{type(exc).__name__}: {exc}"[:300]
    return row


# ---- host time per call ----

def host_rows(args) -> dict:
    import host_overhead as ho
    calls = ho.make_calls((16, 16, 32), "cuda")
    check = ho.checks(calls)
    timed = {name: fn for name, fn in calls.items() if not str(check.get(name, "")).startswith("error")}
    per = ho.time_rows(timed, args.host_calls, args.host_reps, 200, torch.cuda.synchronize)
    rows = ho.make_rows(per, check)
    return {"rows": rows, "summary": ho.summary(rows)}


# ---- the MLP block ----

class _Mlp(torch.nn.Module if torch is not None else object):
    def __init__(self, gate, up, down):
        super().__init__()
        self.gate, self.up, self.down = gate, up, down

    def forward(self, x):
        return self.down(torch.nn.functional.silu(self.gate(x)) * self.up(x))


def _graphed(fn, x):
    """fn(x) captured into a CUDA graph (after a warm-up on a side stream); returns (replay, static output)."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            fn(x)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y = fn(x)
    return graph.replay, y


def mlp_rows(args) -> list:
    torch.manual_seed(0)
    lin = lambda i, o: torch.nn.Linear(i, o, bias=False, device="cuda", dtype=torch.float16)  # noqa: E731
    with torch.no_grad():
        ref = _Mlp(lin(MLP_HIDDEN, MLP_INTER), lin(MLP_HIDDEN, MLP_INTER), lin(MLP_INTER, MLP_HIDDEN))
        for layer in (ref.gate, ref.up, ref.down):
            layer.weight.mul_(0.5)
        fp8 = _Mlp(*(kiln.Fp8Linear.from_linear(layer, fp8="e4m3") for layer in (ref.gate, ref.up, ref.down)))
    rows = []
    for tokens in MLP_TOKENS:
        x = torch.randn(tokens, MLP_HIDDEN, device="cuda", dtype=torch.float16)
        for mode in ("eager", "graph"):
            row = {"case": "mlp", "label": f"mlp llama3-8b {tokens} tok {mode}", "m": tokens, "n": MLP_HIDDEN,
                   "k": MLP_INTER, "mode": mode, "baseline": "nn.Linear f16"}
            try:
                with torch.no_grad():
                    if mode == "eager":
                        f_k, f_b = (lambda _s: fp8(x)), (lambda _s: ref(x))
                        y_k, y_b = fp8(x), ref(x)
                    else:
                        r_k, y_k = _graphed(fp8, x)
                        r_b, y_b = _graphed(ref, x)
                        f_k, f_b = (lambda _s: r_k()), (lambda _s: r_b())
                        r_k()
                        r_b()
                    torch.cuda.synchronize()
                    row["rel_l2"] = rel_l2(y_k, y_b)
                    t_k, t_b = time_pair(f_k, f_b, [None], args.warmup, args.iters, 2 * args.budget_s)
                row.update(kiln_ms=t_k["median_ms"], base_ms=t_b["median_ms"],
                           ratio=t_b["median_ms"] / t_k["median_ms"])
            except Exception as exc:  # noqa: BLE001
                row["error"] = f"{type(exc).__name__}: {exc}"[:300]
            rows.append(row)
    return rows


# ---- summary, table ----

def summarize(rows, host: dict | None) -> dict:
    ok = [r for r in rows if "error" not in r and r.get("ratio")]

    def ratios(case, pred=lambda r: True):
        return [r["ratio"] for r in ok if r["case"] == case and pred(r)]

    def one(pred):
        hits = [r["ratio"] for r in ok if pred(r)]
        return hits[0] if hits else None

    p4096 = ratios("prefill", lambda r: r["m"] == 4096)
    decode_bw = [r["kiln_weight_tbps"] for r in ok if r["case"] == "decode" and "kiln_weight_tbps" in r]
    return {
        "decode_m1_16_geomean_vs_f16": geomean(ratios("decode")),
        "decode_m1_16_shapes": len(ratios("decode")),
        "decode_m64_128_geomean_vs_f16": geomean(ratios("m64_128")),
        "decode_m64_128_shapes": len(ratios("m64_128")),
        "prefill_8192_e4m3_vs_compile": one(lambda r: r["case"] == "prefill" and r["m"] == 8192
                                            and r["b_format"] == "e4m3"),
        "prefill_8192_e5m2_vs_compile": one(lambda r: r["case"] == "prefill" and r["m"] == 8192
                                            and r["b_format"] == "e5m2"),
        "prefill_m4096_min_vs_compile": min(p4096) if p4096 else None,
        "prefill_m4096_geomean_vs_compile": geomean(p4096),
        "decode_weight_tbps": max(decode_bw) if decode_bw else None,
        "host_overhead_ratio_vs_torch": (host or {}).get("summary", {}).get("host_overhead_ratio_vs_torch"),
        "mlp_block_ratio": {f"batch{r['m']}_{r['mode']}": r["ratio"] for r in ok if r["case"] == "mlp"},
        "group_decode_m1_16_geomean_vs_f16": geomean(ratios("group_decode")),
        "group_prefill_8192_vs_compile": one(lambda r: r["case"] == "group_prefill" and r["m"] == 8192),
        "group_time_vs_channel": geomean(_group_costs(ok)),
    }


def _group_costs(ok) -> list:
    """kiln's per-group ms / its per-channel ms, e4m3, on each shape timed both ways."""
    channel = {(r["m"], r["n"], r["k"]): r["kiln_ms"] for r in ok
               if r["case"] in ("decode", "prefill") and r["b_format"] == "e4m3"}
    return [r["kiln_ms"] / channel[(r["m"], r["n"], r["k"])] for r in ok
            if r["case"].startswith("group") and (r["m"], r["n"], r["k"]) in channel]


def _num(v, fmt="{:.3f}"):
    return "n/a" if v is None else fmt.format(v)


def _vs(v, target: float, at_most: bool = False) -> str:
    """The value to 3 decimals, or to 5 where those would hide which side of the target it is on, and the verdict."""
    if v is None:
        return "n/a"
    text = f"{v:.3f}"
    if float(text) == target and v != target:
        text = f"{v:.5f}"
    met = v <= target if at_most else v >= target
    return f"{text} ({'meets' if met else 'misses'} {'<=' if at_most else '>='} {target})"


def summary_lines(s: dict) -> list:
    mlp = ", ".join(f"{k} {_num(v)}" for k, v in s["mlp_block_ratio"].items()) or "n/a"
    return [f"decode M in {{1, 16}} vs cuBLAS f16: geomean {_vs(s['decode_m1_16_geomean_vs_f16'], 1.8)}, "
            f"{s['decode_m1_16_shapes']} shapes; best weight bandwidth "
            f"{_num(s['decode_weight_tbps'], '{:.2f}')} TB/s",
            f"M in {{64, 128}} vs cuBLAS f16: geomean {_vs(s['decode_m64_128_geomean_vs_f16'], 1.3)}, "
            f"{s['decode_m64_128_shapes']} shapes",
            f"prefill 8192^3 vs torch.compile: e4m3 {_vs(s['prefill_8192_e4m3_vs_compile'], 1.10)}, e5m2 "
            f"{_vs(s['prefill_8192_e5m2_vs_compile'], 1.10)}; M = 4096 min "
            f"{_vs(s['prefill_m4096_min_vs_compile'], 1.0)}, geomean "
            f"{_num(s['prefill_m4096_geomean_vs_compile'])}",
            f"host time per call, kiln.scaled_mm / torch._scaled_mm: "
            f"{_vs(s['host_overhead_ratio_vs_torch'], 1.25, at_most=True)}",
            f"Llama-3-8B MLP block, nn.Linear f16 ms / Fp8Linear ms: {mlp}",
            f"per-group weight scales: decode M in {{1, 16}} vs cuBLAS f16 "
            f"{_num(s['group_decode_m1_16_geomean_vs_f16'])}, 8192^3 vs torch.compile "
            f"{_num(s['group_prefill_8192_vs_compile'])}; kiln group ms / kiln per-channel ms "
            f"{_num(s['group_time_vs_channel'])}"]


COLUMNS = (("case", "label", "{}"), ("kiln ms", "kiln_ms", "{:.4f}"), ("baseline ms", "base_ms", "{:.4f}"),
           ("ratio", "ratio", "{:.3f}"), ("kiln TB/s (fp8 weights)", "kiln_weight_tbps", "{:.2f}"),
           ("rel L2", "rel_l2", "{:.1e}"), ("baseline", "baseline", "{}"))


def table_rows(rows) -> list:
    out = []
    for r in rows:
        if "error" in r:
            out.append([r["label"], "error", r["error"][:80], "", "", "", r.get("baseline", "")])
            continue
        out.append([fmt.format(r[key]) if r.get(key) is not None else "" for _t, key, fmt in COLUMNS])
    return out


def markdown(meta, rows, summary, host) -> str:
    lines = [f"# kiln weight-only fp8 benchmark: {meta['device']}", "",
             f"commit `{meta['commit']}`, torch {meta['torch']}, CUDA {meta['cuda']}, median of up to "
             f"{meta['iters']} runs after {meta['warmup']} warm-up, {meta['time_utc']}", ""]
    if meta.get("nk") and [tuple(t) for t in meta["nk"]] != list(NK):
        lines += ["(N, K) of the rows (--nk): " + ", ".join(f"{n}x{k}" for n, k in meta["nk"]), ""]
    lines += ["## Summary", ""]
    lines += [f"- {line}" for line in summary_lines(summary)]
    lines += ["", "ratio = baseline ms / kiln ms (> 1: kiln is faster).", "",
              "| " + " | ".join(t for t, _k, _f in COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(cells) + " |" for cells in table_rows(rows)]
    if host:
        lines += ["", "## Host time per call (16x16x32, no sync in the timed loop)", "",
                  "| op | us/call (median) | vs torch._scaled_mm |", "|---|---|---|"]
        lines += [f"| {r['op']} | {_num(r['us_median'], '{:.2f}')} | {_num(r['vs_torch'], '{:.2f}')} |"
                  for r in host["rows"]]
    lines += ["", "Kernels kiln chose (kiln.query top 1):", ""]
    lines += [f"- {r['label']}: `{r['kiln_kernel']}`" for r in rows if r.get("kiln_kernel")]
    return "\n".join(lines) + "\n"


def write_outputs(base: pathlib.Path, meta, rows, host) -> dict:
    summary = summarize(rows, host)
    md = markdown(meta, rows, summary, host)
    print()
    print(md)

    write_report(base, {"meta": meta, "cases": rows, "host": host, "summary": summary}, md, plot_cases(base),
                 summary_lines(summary), later=PLOT_LATER)
    return summary


def self_check() -> int:
    """Summary, table and JSON on fake rows (ratio 2.0 at decode, 1.5 at M 64/128, prefill 1.2 / 0.9, one failed
    row); no torch, no GPU."""
    rows = []
    for spec in specs_for(("decode", "m64_128", "prefill", "group")):
        row = {"case": spec.case, "label": spec.label, "m": spec.m, "n": spec.n, "k": spec.k, "b_format": spec.fmt,
               "kiln_ms": 1.1 if spec.case.startswith("group") else 1.0, "base_ms": 1.0, "baseline": "fake",
               "kiln_weight_tbps": 2.5, "rel_l2": 1e-3}
        row["ratio"] = {"decode": 2.0, "m64_128": 1.5, "group_decode": 1.8}.get(spec.case,
                                                                                1.2 if spec.m == 8192 else 0.9)
        rows.append(row)
    rows[0] = dict(rows[0], error="RuntimeError: fake")
    rows += [{"case": "mlp", "label": f"mlp {t} {mode}", "m": t, "n": MLP_HIDDEN, "k": MLP_INTER, "mode": mode,
              "kiln_ms": 1.0, "base_ms": 1.4, "ratio": 1.4} for t in MLP_TOKENS for mode in ("eager", "graph")]
    host = {"rows": [{"op": "kiln.scaled_mm", "us_median": 10.0, "vs_torch": 1.1}],
            "summary": {"host_overhead_ratio_vs_torch": 1.1}}
    meta = {"device": "fake", "commit": "0" * 7, "torch": "-", "cuda": "-", "iters": 1, "warmup": 1,
            "time_utc": "-"}
    with tempfile.TemporaryDirectory() as tmp:
        s = write_outputs(pathlib.Path(tmp) / "w8_fake", meta, rows, host)
        assert (pathlib.Path(tmp) / "w8_fake.json").exists() and (pathlib.Path(tmp) / "w8_fake.md").exists()
    assert abs(s["decode_m1_16_geomean_vs_f16"] - 2.0) < 1e-9 and s["decode_m1_16_shapes"] == 7, s
    assert abs(s["decode_m64_128_geomean_vs_f16"] - 1.5) < 1e-9 and s["decode_m64_128_shapes"] == 8, s
    assert s["prefill_8192_e4m3_vs_compile"] == 1.2 and s["prefill_8192_e5m2_vs_compile"] == 1.2, s
    assert s["prefill_m4096_min_vs_compile"] == 0.9 and s["host_overhead_ratio_vs_torch"] == 1.1, s
    assert s["mlp_block_ratio"] == {"batch1_eager": 1.4, "batch1_graph": 1.4, "batch16_eager": 1.4,
                                    "batch16_graph": 1.4}, s
    assert abs(s["group_decode_m1_16_geomean_vs_f16"] - 1.8) < 1e-9 and s["group_prefill_8192_vs_compile"] == 1.2, s
    # group rows 1.1 ms over channel rows 1.0 on the 7 decode shapes left (one failed) and 2 prefill shapes
    assert abs(s["group_time_vs_channel"] - 1.1) < 1e-9, s
    print("self-check passed")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default=",".join(CASES), help=f"comma-separated subset of {','.join(CASES)}")
    ap.add_argument("--nk", default=None, help="NxK,NxK,...: the (N, K) of the decode, m64_128, prefill M = 4096 and "
                    "group_decode rows instead of NK (other layer shapes)")
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--budget-s", type=float, default=0.5, help="seconds of timed calls per side and row")
    ap.add_argument("--host-calls", type=int, default=2000)
    ap.add_argument("--host-reps", type=int, default=7)
    ap.add_argument("--out", help="output base path (default bench/results/w8_<device>_<commit>)")
    ap.add_argument("--self-check", action="store_true")
    args = ap.parse_args(argv)
    if args.self_check:
        return self_check()
    cases = [c for c in args.cases.split(",") if c]
    bad = [c for c in cases if c not in CASES]
    if bad:
        ap.error(f"unknown case(s) {bad}; choose from {CASES}")
    nk = NK
    if args.nk:
        try:
            nk = tuple(tuple(int(v) for v in item.lower().split("x")) for item in args.nk.split(",") if item)
        except ValueError:
            nk = ()
        if not nk or any(len(t) != 2 or min(t) < 1 for t in nk):
            ap.error(f"--nk {args.nk!r}: expected NxK[,NxK...] with positive N and K")
    if torch is None or not torch.cuda.is_available():
        print("bench_w8: needs torch and a CUDA device", file=sys.stderr)
        return 2
    kiln.load_library()
    meta = {"device": torch.cuda.get_device_name(), "commit": git_commit(), "torch": torch.__version__,
            "cuda": torch.version.cuda, "iters": args.iters, "warmup": args.warmup, "budget_s": args.budget_s,
            "kiln_library": kiln.library_path(), "time_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "nk": [list(t) for t in nk]}
    rows = []
    for spec in specs_for(cases, nk):
        rows.append(gemm_row(spec, args))
        r = rows[-1]
        print(f"{spec.label}: " + (r["error"] if "error" in r else f"ratio {r['ratio']:.3f} ({r['kiln_ms']:.4f} ms "
                                   f"vs {r['base_ms']:.4f} ms) {r['kiln_kernel']}"), flush=True)
        torch.cuda.empty_cache()
    host = None
    if "host" in cases:
        try:
            host = host_rows(args)
        except Exception as exc:  # noqa: BLE001
            host = {"rows": [], "summary": {}, "error": f"{type(exc).__name__}: {exc}"}
    if "mlp" in cases:
        rows += mlp_rows(args)
    device = re.sub(r"[^A-Za-z0-9]+", "-", meta["device"]).strip("-").lower()
    base = pathlib.Path(args.out) if args.out else REPO / "bench" / "results" / f"w8_{device}_{meta['commit'][:7]}"
    write_outputs(base, meta, rows, host)
    return 0


if __name__ == "__main__":
    sys.exit(main())
