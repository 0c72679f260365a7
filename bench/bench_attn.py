#!/usr/bin/env python3
"""FP8 attention forward (kiln.attention) against torch SDPA in bf16 with the cuDNN and the flash backends, timed in
one process on the same device.

Shapes (B x H x S x D; the issue's list): 4x32x4096x128 and 1x16x16384x128 (causal and not), 2x16x8192x64,
2x8x8192x256 and the latency-bound 1x8x512x64. Inputs: bf16 randn; kiln gets them quantized to e4m3 with per-tensor
descales (kiln.quantize_qkv), SDPA the bf16 originals. Before timing, each side's output on the last 256 query rows
of one head (against every key) is checked against float64 exact attention (kiln: from the same fp8 values; SDPA:
from the bf16 values); the relative L2 and the largest error of both are recorded beside each other, and again on
inputs with outliers (0.1 % of the elements times 50). A second kiln timing reads a V packed once beforehand
(kiln.attention_pack_v: a KV cache); the first is kiln.attention as called, which packs V itself where that pays.
FLOPs: 4 * B * H * S * S * D (half of it causal).

Timing: bench_gemm.py's time_sides. The four sides (kiln, kiln with V packed once, cuDNN, flash) run in blocks of
5 calls, the order turned each round, for --budget-s seconds a side (at most --iters calls a side); medians of CUDA
event times. Each side thus runs under the clocks and the temperature of the others: at ~1 ms a call the H100 settles
below its boost clock within a second, and sides timed one after the other for 30 calls each (the method up to
afdc134) carried that drift into the ratios (rows whose V-packed-once time came out 5 % below the time of the same
kernel plus a pass). Problems whose call takes under --short-ms are timed a side at a time, --short-iters calls
queued behind a GPU sleep: in rotation the events of such calls timed the host's launches (a 1x8x512x64 call at
70-90 us against 10 us alone).

Summary (JSON "summary"): hd128_noncausal_vs_cudnn, hd128_causal_vs_cudnn, hd256_vs_cudnn, hd64_vs_cudnn,
small_512_vs_cudnn (kiln TFLOP/s / cuDNN TFLOP/s, geomean over the shapes of each class), and *_vs_flash alike;
*_packed_once_vs_cudnn with V packed beforehand; max_kiln_rel_l2 (and _outliers), max_sdpa_bf16_rel_l2 (and
_outliers): the largest relative L2 over the rows.

    python3 bench/bench_attn.py                      # -> bench/results/attn_<device>_<commit>.{json,md,png}
    python3 bench/bench_attn.py --dry-run            # the shapes, no torch needed
    python3 bench/bench_attn.py --self-check         # summary/table code on fake rows, no GPU
"""
from __future__ import annotations

import argparse
import math
import pathlib
import re
import sys
import tempfile
import time
from typing import NamedTuple

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "runtime" / "python"))
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import kiln  # noqa: E402
from bench_gemm import PLOT_LATER, geomean, git_commit, plot_cases, tflops, time_sides, write_report  # noqa: E402

try:
    import torch
except ImportError:  # --dry-run and --self-check still work
    torch = None


class Shape(NamedTuple):
    b: int
    h: int
    s: int
    d: int
    causal: bool

    @property
    def label(self) -> str:
        return f"{self.b}x{self.h}x{self.s}x{self.d}" + (" causal" if self.causal else "")

    @property
    def flops(self) -> float:
        return 4.0 * self.b * self.h * self.s * self.s * self.d * (0.5 if self.causal else 1.0)

    @property
    def cls(self) -> str:
        if self.s <= 512:
            return "small_512"
        if self.d == 128:
            return "hd128_causal" if self.causal else "hd128_noncausal"
        return f"hd{self.d}"


SHAPES = [Shape(4, 32, 4096, 128, False), Shape(4, 32, 4096, 128, True), Shape(1, 16, 16384, 128, False),
          Shape(1, 16, 16384, 128, True), Shape(2, 16, 8192, 64, False), Shape(2, 8, 8192, 256, False),
          Shape(1, 8, 512, 64, False)]
CLASSES = ("hd128_noncausal", "hd128_causal", "hd256", "hd64", "small_512")
GOALS = {"hd128_noncausal": 1.45, "hd128_causal": 1.4, "hd256": 1.5, "hd64": 1.3, "small_512": 1.0}


def sdpa(q, k, v, causal, backend):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    be = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION}[backend]
    with sdpa_kernel(be):  # (batch, heads, seq, dim) for SDPA
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)


def rel_l2(x, ref) -> float:
    return (torch.linalg.vector_norm(x.double() - ref) / torch.linalg.vector_norm(ref)).item()


def max_abs(x, ref) -> float:
    return (x.double() - ref).abs().max().item()


def with_outliers(x, gen):
    """Copies of the tensors x with 0.1 % of each one's elements (at least one, drawn with gen) times 50, as
    tests/gpu/test_attention.py makes them: the per-tensor descales then leave most values in the lower binades of
    fp8."""
    out = [t.clone() for t in x]
    for t in out:
        flat = t.view(-1)
        idx = torch.randint(0, flat.numel(), (max(1, flat.numel() // 1000),), device=t.device, generator=gen)
        flat[idx] *= 50
    return out


CHECK_ROWS = 256  # accuracy on the last query rows of one head: against every key, and causal rows see the most


def run_shape(sh: Shape, args) -> dict:
    row = {"case": sh.cls, "label": sh.label, "b": sh.b, "h": sh.h, "s": sh.s, "d": sh.d, "causal": sh.causal}
    x = [torch.randn(sh.b, sh.s, sh.h, sh.d, device="cuda", dtype=torch.bfloat16) for _ in range(3)]
    qf, kf, vf, (dq, dk, dv) = kiln.quantize_qkv(*x)
    out = torch.empty(sh.b, sh.s, sh.h, sh.d, dtype=torch.bfloat16, device="cuda")
    qt, kt_, vt = (t.transpose(1, 2).contiguous() for t in x)  # SDPA's layout
    sides = {}  # name -> fn(_), timed together below

    def ours(_):
        return kiln.attention(qf, kf, vf, q_descale=dq, k_descale=dk, v_descale=dv, causal=sh.causal, out=out)

    # accuracy on the last CHECK_ROWS query rows of head 0 of the first sequence against all its keys (float64 exact
    # attention of each side's own inputs; the reference aligns causal masks to the bottom right, so the last rows of
    # the queries see exactly the keys they see in the full problem)
    r = min(sh.s, CHECK_ROWS)
    try:
        ours(None)
        torch.cuda.synchronize()
        ref_k, _ = kiln.attention_reference(qf[:1, -r:, :1], kf[:1, :, :1], vf[:1, :, :1], q_descale=dq, k_descale=dk,
                                            v_descale=dv, causal=sh.causal)
        row["kiln_rel_l2"] = rel_l2(out[:1, -r:, :1], ref_k)
        row["kiln_max_abs_err"] = max_abs(out[:1, -r:, :1], ref_k)
        sides["kiln"] = ours
        row["kiln_kernel"] = None
    except Exception as exc:  # noqa: BLE001 - one broken shape must not hide the others
        row["error"] = f"kiln: {type(exc).__name__}: {str(exc)[:300]}"
    # the same with outliers in Q, K and V
    try:
        gen = torch.Generator(device="cuda")
        gen.manual_seed(7)
        xo = with_outliers(x, gen)
        qo, ko, vo, (oq, ok, ov) = kiln.quantize_qkv(*xo)
        got = kiln.attention(qo, ko, vo, q_descale=oq, k_descale=ok, v_descale=ov, causal=sh.causal)
        ref_o, _ = kiln.attention_reference(qo[:1, -r:, :1], ko[:1, :, :1], vo[:1, :, :1], q_descale=oq, k_descale=ok,
                                            v_descale=ov, causal=sh.causal)
        row["kiln_rel_l2_outliers"] = rel_l2(got[:1, -r:, :1], ref_o)
        row["kiln_max_abs_err_outliers"] = max_abs(got[:1, -r:, :1], ref_o)
        one = [t[:1, :, :1].transpose(1, 2).contiguous() for t in xo]
        got_b = sdpa(*one, sh.causal, "flash").transpose(1, 2)[:, -r:]
        ref_bo, _ = kiln.attention_reference(xo[0][:1, -r:, :1], xo[1][:1, :, :1], xo[2][:1, :, :1], causal=sh.causal)
        row["sdpa_bf16_rel_l2_outliers"] = rel_l2(got_b, ref_bo)
        del xo, qo, ko, vo, got, one
    except Exception as exc:  # noqa: BLE001 - informative columns; the timed rows stand without them
        row["outliers_error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
    # V packed once by the caller (a KV cache read by many calls): the packed-V kernels without the pass over V,
    # which the row above pays where kiln.attention packs V itself
    try:
        packed = kiln.attention_pack_v(vf)

        def ours_packed(_):
            return kiln.attention(qf, kf, packed, q_descale=dq, k_descale=dk, v_descale=dv, causal=sh.causal, out=out)

        ours_packed(None)
        sides["kiln_packed"] = ours_packed
    except kiln.KilnError:  # an arch without packed-V kernels: the column stays empty
        pass
    for backend in ("cudnn", "flash"):
        try:
            sdpa(qt, kt_, vt, sh.causal, backend)
            sides[backend] = lambda _, backend=backend: sdpa(qt, kt_, vt, sh.causal, backend)
        except Exception as exc:  # noqa: BLE001
            row[f"{backend}_error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
    if sides:
        torch.cuda.synchronize()
        times = time_sides(list(sides.values()), [None], args.warmup, args.iters, args.budget_s, args.short_ms,
                           args.short_iters)
        for name, t in zip(sides, times):
            row[f"{name}_ms"], row[f"{name}_tflops"] = t["median_ms"], tflops(sh.flops, t["median_ms"])
        row["timed_calls"] = times[0]["runs"]
    for backend in ("cudnn", "flash"):
        if f"{backend}_tflops" in row:
            if "kiln_tflops" in row:
                row[f"ratio_vs_{backend}"] = row["kiln_tflops"] / row[f"{backend}_tflops"]
            if "kiln_packed_tflops" in row:
                row[f"packed_ratio_vs_{backend}"] = row["kiln_packed_tflops"] / row[f"{backend}_tflops"]
    try:
        got = sdpa(qt[:1, :1], kt_[:1, :1], vt[:1, :1], sh.causal, "flash").transpose(1, 2)[:, -r:]
        ref_b, _ = kiln.attention_reference(x[0][:1, -r:, :1], x[1][:1, :, :1], x[2][:1, :, :1], causal=sh.causal)
        row["sdpa_bf16_rel_l2"] = rel_l2(got, ref_b)
        row["sdpa_bf16_max_abs_err"] = max_abs(got, ref_b)
    except Exception:  # noqa: BLE001 - the accuracy column is informative only
        pass
    if "ratio_vs_cudnn" in row:
        row["ratio"] = row["ratio_vs_cudnn"]
    return row


def summarize(rows) -> dict:
    out = {}
    for cls in CLASSES:
        for base in ("cudnn", "flash"):
            vals = [r[f"ratio_vs_{base}"] for r in rows if r["case"] == cls and f"ratio_vs_{base}" in r]
            out[f"{cls}_vs_{base}"] = geomean(vals)
        packed = [r["packed_ratio_vs_cudnn"] for r in rows if r["case"] == cls and "packed_ratio_vs_cudnn" in r]
        out[f"{cls}_packed_once_vs_cudnn"] = geomean(packed) if packed else None
    for key in ("kiln_rel_l2", "kiln_rel_l2_outliers", "sdpa_bf16_rel_l2", "sdpa_bf16_rel_l2_outliers"):
        vals = [r[key] for r in rows if r.get(key) is not None]
        out[f"max_{key}"] = max(vals) if vals else None
    out["failed"] = [r["label"] + ": " + r["error"] for r in rows if "error" in r]
    return out


def _num(v) -> str:
    return "n/a" if v is None else f"{v:.3f}"


def summary_lines(s: dict) -> list:
    lines = [f"{cls}: vs cuDNN {_num(s[f'{cls}_vs_cudnn'])} (goal >= {GOALS[cls]}), vs flash "
             f"{_num(s[f'{cls}_vs_flash'])}; V packed once by the caller: vs cuDNN "
             f"{_num(s.get(f'{cls}_packed_once_vs_cudnn'))}" for cls in CLASSES]
    lines.append(f"relative L2, the largest over the rows: kiln {_sci(s.get('max_kiln_rel_l2'))} (normal inputs; gate "
                 f"2.5e-2), {_sci(s.get('max_kiln_rel_l2_outliers'))} (outliers); bf16 SDPA "
                 f"{_sci(s.get('max_sdpa_bf16_rel_l2'))} / {_sci(s.get('max_sdpa_bf16_rel_l2_outliers'))}")
    return lines + [f"FAILED {f}" for f in s["failed"]]


def _sci(v) -> str:
    return "n/a" if v is None else f"{v:.1e}"


COLUMNS = (("shape", "label", "{}"), ("kiln TFLOP/s", "kiln_tflops", "{:.0f}"),
           ("kiln, V packed once", "kiln_packed_tflops", "{:.0f}"), ("cuDNN bf16", "cudnn_tflops",
           "{:.0f}"), ("flash bf16", "flash_tflops", "{:.0f}"), ("kiln / cuDNN", "ratio_vs_cudnn", "{:.2f}"),
           ("kiln / flash", "ratio_vs_flash", "{:.2f}"), ("kiln rel L2", "kiln_rel_l2", "{:.1e}"),
           ("kiln max err", "kiln_max_abs_err", "{:.1e}"), ("bf16 SDPA rel L2", "sdpa_bf16_rel_l2", "{:.1e}"),
           ("bf16 SDPA max err", "sdpa_bf16_max_abs_err", "{:.1e}"),
           ("kiln rel L2, outliers", "kiln_rel_l2_outliers", "{:.1e}"),
           ("kiln max err, outliers", "kiln_max_abs_err_outliers", "{:.1e}"),
           ("bf16 SDPA rel L2, outliers", "sdpa_bf16_rel_l2_outliers", "{:.1e}"))


def markdown(meta, rows, summary) -> str:
    lines = [f"# kiln FP8 attention forward: {meta['device']}", "",
             f"commit `{meta['commit']}`, torch {meta['torch']}, {meta['time_utc']}; kiln: e4m3 Q/K/V with per-tensor "
             f"descales -> bf16; baselines: torch SDPA in bf16 (cuDNN, flash backends)"
             + (f"; timing: {meta['timing']}" if meta.get("timing") else ""), "", "## Summary", ""]
    lines += [f"- {x}" for x in summary_lines(summary)]
    lines += ["", "| " + " | ".join(c[0] for c in COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for r in rows:
        cells = ["-" if r.get(k) is None else f.format(r[k]) for _t, k, f in COLUMNS]
        if "error" in r:
            cells[1] = "ERROR: " + r["error"][:120].replace("|", "/")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def write_outputs(base: pathlib.Path, meta, rows) -> dict:
    summary = summarize(rows)
    md = markdown(meta, rows, summary)

    write_report(base, {"meta": meta, "cases": rows, "summary": summary}, md, plot_cases(base),
                 summary_lines(summary), later=PLOT_LATER)
    return summary


def self_check() -> int:
    rows = []
    for i, sh in enumerate(SHAPES):
        row = {"case": sh.cls, "label": sh.label, "kiln_tflops": 600.0 + i, "cudnn_tflops": 500.0,
               "flash_tflops": 300.0}
        row["ratio_vs_cudnn"], row["ratio_vs_flash"] = row["kiln_tflops"] / 500.0, row["kiln_tflops"] / 300.0
        row["ratio"] = row["ratio_vs_cudnn"]
        rows.append(row)
    rows[-1] = {"case": "small_512", "label": SHAPES[-1].label, "error": "kiln: fake"}
    rows[0]["kiln_packed_tflops"], rows[0]["packed_ratio_vs_cudnn"] = 750.0, 1.5
    rows[0]["kiln_rel_l2"], rows[1]["kiln_rel_l2"], rows[1]["kiln_rel_l2_outliers"] = 1.7e-3, 1.8e-3, 4e-3
    s = summarize(rows)
    assert s["max_kiln_rel_l2"] == 1.8e-3 and s["max_kiln_rel_l2_outliers"] == 4e-3 and s["max_sdpa_bf16_rel_l2"] is None
    assert s["hd128_noncausal_packed_once_vs_cudnn"] == 1.5 and s["small_512_packed_once_vs_cudnn"] is None
    assert math.isclose(s["hd128_noncausal_vs_cudnn"], math.sqrt(600.0 / 500 * 602.0 / 500))
    assert s["small_512_vs_cudnn"] is None and len(s["failed"]) == 1
    with tempfile.TemporaryDirectory() as tmp:
        meta = {"device": "fake", "commit": "0", "torch": "-", "time_utc": "-"}
        write_outputs(pathlib.Path(tmp) / "attn_fake", meta, rows)
        assert (pathlib.Path(tmp) / "attn_fake.json").is_file()
    print("self-check passed")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--iters", type=int, default=400, help="calls a side at most")
    ap.add_argument("--short-iters", type=int, default=30, help="calls a side where a call takes under --short-ms")
    ap.add_argument("--short-ms", type=float, default=0.1)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--budget-s", type=float, default=1.0, help="GPU seconds a side and shape (at most)")
    ap.add_argument("--out-dir", default=str(REPO / "bench" / "results"))
    ap.add_argument("--name", default=None)
    ap.add_argument("--dry-run", action="store_true")
    ap.add_argument("--self-check", action="store_true")
    args = ap.parse_args(argv)
    if args.self_check:
        return self_check()
    if args.dry_run:
        for sh in SHAPES:
            print(f"  {sh.label:28s} {sh.flops / 1e12:8.2f} TFLOP  class {sh.cls}")
        return 0
    if torch is None or not torch.cuda.is_available():
        print("bench_attn: needs torch and a CUDA device (--dry-run and --self-check do not)", file=sys.stderr)
        return 2
    device = torch.cuda.get_device_name()
    meta = {"device": device, "commit": git_commit(), "torch": torch.__version__,
            "time_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "iters": args.iters,
            "timing": f"time_rotation: kiln, kiln V packed once, cuDNN, flash in blocks of 5 calls, {args.budget_s} s "
                      f"a side, at most {args.iters} calls (under {args.short_ms} ms a call: time_fn a side, "
                      f"{args.short_iters} calls)"}
    rows = []
    for sh in SHAPES:
        rows.append(run_shape(sh, args))
        print({k: v for k, v in rows[-1].items() if k in ("label", "kiln_tflops", "cudnn_tflops", "error")},
              flush=True)
        torch.cuda.empty_cache()
    name = args.name or "attn_" + re.sub(r"[^A-Za-z0-9]+", "-", device).strip("-").lower() + "_" + meta["commit"][:10]
    write_outputs(pathlib.Path(args.out_dir) / name, meta, rows)
    return 1 if any("error" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
