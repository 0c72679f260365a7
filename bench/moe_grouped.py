"""The grouped MoE parts of bench_moe.py: kiln.grouped_mm on DeepGEMM's grouped workloads.

  contiguous     m-grouped contiguous (offs), G groups of M tokens: (4, 8192) and (8, 4096) x (N, K) in
                 (4096, 7168), (7168, 2048). Block scales (1x128 / 128x128) against DeepGEMM's published H800
                 TFLOP/s; rowwise scales against torch._scaled_grouped_mm (rowwise) measured here.
  masked         m-grouped masked (masked_m on the device, every group full): (1, 1024), (2, 512), (4, 256) x the
                 same (N, K); block scales against DeepGEMM's published H800 TFLOP/s.
  small_experts  many small experts, rowwise scales, contiguous: 32 groups x 128 tokens (N 4096) and 256 x 32
                 (N 2048), K 7168, against torch._scaled_grouped_mm.

Every side's result is checked against kiln.grouped_reference (float64, from the same fp8 tensors) before it is
timed; a wrong one is reported and not timed.
"""
from __future__ import annotations

GROUPED_NK = [(4096, 7168), (7168, 2048)]
# DeepGEMM's README (H800): m-grouped contiguous and masked TFLOP/s, in GROUPED_NK order per (groups, tokens).
DEEPGEMM_CONTIGUOUS = {(4, 8192): (1297, 1099), (8, 4096): (1288, 1093)}
DEEPGEMM_MASKED = {(1, 1024): (1233, 925), (2, 512): (1040, 916), (4, 256): (932, 815)}
SMALL_EXPERTS = [(32, 128, 4096, 7168), (256, 32, 2048, 7168)]


def published(part: str, g: int, m: int, n: int, k: int):
    table = DEEPGEMM_CONTIGUOUS if part == "contiguous" else DEEPGEMM_MASKED if part == "masked" else {}
    vals = table.get((g, m))
    return float(vals[GROUPED_NK.index((n, k))]) if vals and (n, k) in GROUPED_NK else None


def specs(part: str, Spec) -> list:
    if part == "small_experts":
        return [Spec(part, m, n, k, g) for g, m, n, k in SMALL_EXPERTS]
    table = DEEPGEMM_CONTIGUOUS if part == "contiguous" else DEEPGEMM_MASKED
    return [Spec(part, m, n, k, g) for (g, m) in table for n, k in GROUPED_NK]


def _quant_rows(x, torch):
    """Rowwise e4m3 with float32 scales (amax / 448 per row)."""
    amax = x.abs().amax(dim=-1, keepdim=True).float().clamp(min=1e-12)
    s = amax / 448.0
    return (x.float() / s).to(torch.float8_e4m3fn), s.squeeze(-1)


def make(spec, masked: bool, recipe: str, kiln, torch) -> dict:
    g, m, n, k = spec.groups, spec.m, spec.n, spec.k
    shape_a = (g, m, k) if masked else (g * m, k)
    x = torch.randn(shape_a, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(g, n, k, device="cuda", dtype=torch.bfloat16)
    if recipe == "block":
        a, sa = kiln.quantize_per_token_group(x.reshape(-1, k))
        sa = sa.reshape(g, m, -1) if masked else sa  # [G, M, G_k] view, M-major underneath
        a = a.reshape(shape_a)
        wq, sb = [], []
        for i in range(g):
            q, s = kiln.quantize_per_block(w[i])
            wq.append(q)
            sb.append(s)
        b, sb = torch.stack(wq), torch.stack(sb)
    else:
        a, sa = _quant_rows(x, torch)
        b, sb = _quant_rows(w, torch)
    index = (torch.full((g,), m, dtype=torch.int32, device="cuda") if masked
             else torch.arange(1, g + 1, dtype=torch.int32, device="cuda") * m)
    return {"a": a, "b": b, "sa": sa, "sb": sb, "index": index}


def _kw(s: dict, masked: bool) -> dict:
    return {"masked_m": s["index"]} if masked else {"offs": s["index"]}


def torch_grouped(s: dict, masked: bool, torch):
    """torch._scaled_grouped_mm rowwise: B as the [G, K, N] transposed view, scale_b [G, N]."""
    b = s["b"].transpose(1, 2)
    if masked:
        return torch._scaled_grouped_mm(s["a"], b, s["sa"], s["sb"], out_dtype=torch.bfloat16)
    return torch._scaled_grouped_mm(s["a"], b, s["sa"], s["sb"], offs=s["index"], out_dtype=torch.bfloat16)


def run(spec, args, h) -> dict:
    """h: the helpers of bench_moe (new_row, rel_l2_and_finite, wrong_result, time_fn, tflops, kiln, torch)."""
    kiln, torch = h.kiln, h.torch
    part = spec.part
    masked = part == "masked"
    row = h.new_row(spec)
    row["groups"] = spec.groups
    pub = published(part, spec.groups, spec.m, spec.n, spec.k)
    row["deepgemm_h800_tflops"] = pub
    recipes = (["block", "row"] if part == "contiguous" else ["block"] if part == "masked" else ["row"])
    for recipe in recipes:
        s = make(spec, masked, recipe, kiln, torch)
        out = torch.empty(s["a"].shape[:-1] + (spec.n,), dtype=torch.bfloat16, device="cuda")
        ref = kiln.grouped_reference(s["a"], s["b"], scale_a=s["sa"], scale_b=s["sb"], **_kw(s, masked))

        def ours(x, s=s, out=out):
            return kiln.grouped_mm(x["a"], x["b"], scale_a=x["sa"], scale_b=x["sb"], out=out, **_kw(x, masked))

        key = f"kiln_{recipe}"
        try:
            rel, finite = h.rel_l2_and_finite(ours(s), ref)
            row[key + "_rel_l2"] = rel
            bad = h.wrong_result(f"kiln {recipe}", rel, finite)
            if bad:
                row["error"] = bad
            else:
                row[key + "_kernel"] = kiln.query(kiln.grouped_mm, s["a"], s["b"], scale_a=s["sa"], scale_b=s["sb"],
                                                  out=out, k=1, **_kw(s, masked))[0].name
                t = h.time_fn(ours, [s], args.warmup, args.iters, args.budget_s)
                row[key + "_tflops"] = h.tflops(spec.flops, t["median_ms"])
        except Exception as exc:  # noqa: BLE001 - one broken shape must not hide the others
            row["error"] = f"kiln {recipe}: {type(exc).__name__}: {str(exc)[:300]}"
        if recipe == "row":
            try:
                theirs = torch_grouped(s, masked, torch)
                rel, finite = h.rel_l2_and_finite(theirs, ref)
                row["torch_rel_l2"] = rel
                bad = h.wrong_result("torch._scaled_grouped_mm", rel, finite)
                if bad:
                    row["torch_grouped"] = bad
                else:
                    t = h.time_fn(lambda x: torch_grouped(x, masked, torch), [s], args.warmup, args.iters,
                                  args.budget_s)
                    row["torch_tflops"] = h.tflops(spec.flops, t["median_ms"])
                    row["torch_grouped"] = "ok"
            except Exception as exc:  # noqa: BLE001
                row["torch_grouped"] = f"refused: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
        del s, ref, out
        torch.cuda.empty_cache()
    if pub and row.get("kiln_block_tflops"):
        row["ratio_vs_deepgemm"] = row["kiln_block_tflops"] / pub
    if row.get("kiln_row_tflops") and row.get("torch_tflops"):
        row["ratio_vs_torch"] = row["kiln_row_tflops"] / row["torch_tflops"]
    # the plot's bar: against DeepGEMM where it publishes the workload, else against torch
    ratio = row.get("ratio_vs_deepgemm", row.get("ratio_vs_torch"))
    if ratio is not None:
        row["ratio"] = ratio
    return row


def summary(rows, part: str, geomean) -> dict:
    rows = [r for r in rows if r["case"] == part]
    dg = [r["ratio_vs_deepgemm"] for r in rows if "ratio_vs_deepgemm" in r]
    vt = [r["ratio_vs_torch"] for r in rows if "ratio_vs_torch" in r]
    out = {}
    if part == "contiguous":
        out["contiguous_min_vs_deepgemm"] = min(dg, default=None)
        out["contiguous_geomean_vs_deepgemm"] = geomean(dg)
        out["contiguous_geomean_vs_torch_grouped"] = geomean(vt)
    elif part == "masked":
        out["masked_min_vs_deepgemm"] = min(dg, default=None)
        out["masked_geomean_vs_deepgemm"] = geomean(dg)
    else:
        out["small_experts_geomean_vs_torch_grouped"] = geomean(vt)
    out[f"{part}_failed"] = [r["label"] + ": " + r["error"] for r in rows if "error" in r]
    out[f"{part}_torch_grouped"] = sorted({r.get("torch_grouped", "not run").split(":")[0] for r in rows})
    return out


GOALS = {"contiguous": "vs DeepGEMM >= 1.0, vs torch grouped >= 1.3", "masked": "vs DeepGEMM >= 1.0",
         "small_experts": "vs torch grouped >= 1.5"}


def lines(s: dict, part: str, num) -> list:
    keys = [k for k in s if k.startswith(part) and not k.endswith(("_failed", "_torch_grouped"))]
    out = [f"{part}: " + ", ".join(f"{k} {num(s[k])}" for k in keys) + f" (goal: {GOALS[part]})",
           f"{part}: torch._scaled_grouped_mm: {s.get(part + '_torch_grouped')}"]
    out += [f"FAILED {f}" for f in s.get(f"{part}_failed", [])]
    return out


COLUMNS = (("shape", "label", "{}"), ("kiln block TFLOP/s", "kiln_block_tflops", "{:.0f}"),
           ("DeepGEMM H800", "deepgemm_h800_tflops", "{:.0f}"), ("kiln / DeepGEMM", "ratio_vs_deepgemm", "{:.2f}"),
           ("kiln rowwise TFLOP/s", "kiln_row_tflops", "{:.0f}"), ("torch grouped TFLOP/s", "torch_tflops", "{:.0f}"),
           ("kiln / torch", "ratio_vs_torch", "{:.2f}"), ("kiln block kernel", "kiln_block_kernel", "{}"),
           ("kiln row kernel", "kiln_row_kernel", "{}"))
