"""The grouped MoE parts of bench_moe.py: kiln.grouped_mm on DeepGEMM's grouped workloads.

  contiguous     m-grouped contiguous (offs), G groups of M tokens: (4, 8192) and (8, 4096) x (N, K) in
                 (4096, 7168), (7168, 2048). Block scales (1x128 / 128x128) against DeepGEMM's published H800
                 TFLOP/s; rowwise scales against torch._scaled_grouped_mm (rowwise) measured here.
  masked         m-grouped masked (masked_m on the device, every group full): (1, 1024), (2, 512), (4, 256) x the
                 same (N, K); block scales against DeepGEMM's published H800 TFLOP/s.
  small_experts  many small experts, rowwise scales, contiguous: 32 groups x 128 tokens (N 4096) and 256 x 32
                 (N 2048), K 7168, against torch._scaled_grouped_mm.
  k_grouped      k-grouped (the MoE weight gradient: the groups' tokens are K, D [G, M, N]): G groups of uneven
                 token counts (multiples of 128, mean K_G) x (M, N) in (4096, 7168), (7168, 2048). Block scales
                 (1x128 on both, the weight-gradient recipe): kiln's TFLOP/s (no published figure to compare);
                 rowwise scales per group against torch._scaled_grouped_mm's 2-D x 2-D form measured here.

Every side's result is checked against kiln.grouped_reference (float64, from the same fp8 tensors) before it is
timed; a wrong one is reported and not timed.
"""
from __future__ import annotations

GROUPED_NK = [(4096, 7168), (7168, 2048)]
# DeepGEMM's README (H800): m-grouped contiguous and masked TFLOP/s, in GROUPED_NK order per (groups, tokens).
DEEPGEMM_CONTIGUOUS = {(4, 8192): (1297, 1099), (8, 4096): (1288, 1093)}
DEEPGEMM_MASKED = {(1, 1024): (1233, 925), (2, 512): (1040, 916), (4, 256): (932, 815)}
SMALL_EXPERTS = [(32, 128, 4096, 7168), (256, 32, 2048, 7168)]
# (groups, mean tokens per group, M, N) of the weight-gradient GEMM: D[g] = dY_g^T X_g, K = the group's tokens.
K_GROUPED = [(4, 8192, 4096, 7168), (4, 8192, 7168, 2048), (8, 4096, 4096, 7168), (8, 4096, 7168, 2048)]
CHECK_ROWS, CHECK_COLS = 256, 384  # the part of each group's D checked against float64 (k_grouped)


def k_sizes(g: int, mean: int) -> list:
    """Uneven token counts, multiples of 128, summing to g * mean (a fixed pattern: the runs are reproducible)."""
    steps = [(-1) ** i * (i % 3 + 1) * 4 for i in range(g)]
    steps[-1] -= sum(steps)
    return [mean + 128 * d for d in steps]


def published(part: str, g: int, m: int, n: int, k: int):
    table = DEEPGEMM_CONTIGUOUS if part == "contiguous" else DEEPGEMM_MASKED if part == "masked" else {}
    vals = table.get((g, m))
    return float(vals[GROUPED_NK.index((n, k))]) if vals and (n, k) in GROUPED_NK else None


def specs(part: str, Spec) -> list:
    if part == "k_grouped":
        return [Spec(part, m, n, g * kk, g) for g, kk, m, n in K_GROUPED]
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


def make_k_grouped(spec, recipe: str, kiln, torch) -> dict:
    """A [M, K] and B [N, K] whose K columns are the groups' tokens; scales 1x128 on both (block) or one per row and
    group of A and per column and group of B (rowwise)."""
    g, m, n, k = spec.groups, spec.m, spec.n, spec.k
    sizes = k_sizes(g, k // g)
    ends = torch.tensor(sizes, dtype=torch.int32, device="cuda").cumsum(0).to(torch.int32)
    x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    y = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    if recipe == "block":
        a, sa = kiln.quantize_per_token_group(x)
        b, sb = kiln.quantize_per_token_group(y)
    else:
        qa, qb, sa, sb = [], [], [], []
        for lo, hi in zip([0] + ends.tolist()[:-1], ends.tolist()):
            for src, q, sc in ((x, qa, sa), (y, qb, sb)):
                v, s = _quant_rows(src[:, lo:hi], torch)
                q.append(v)
                sc.append(s)
        a, b = torch.cat(qa, dim=1).contiguous(), torch.cat(qb, dim=1).contiguous()
        sa, sb = torch.stack(sa), torch.stack(sb)  # [G, M], [G, N]
    return {"a": a, "b": b, "sa": sa, "sb": sb, "index": ends}


def torch_k_grouped(s: dict, torch):
    """torch._scaled_grouped_mm, 2-D x 2-D (groups along K): B as the [K, N] column-major view, scales [G * M],
    [G * N]."""
    return torch._scaled_grouped_mm(s["a"], s["b"].t(), s["sa"].reshape(-1), s["sb"].reshape(-1), offs=s["index"],
                                    out_dtype=torch.bfloat16)


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
    recipes = (["block", "row"] if part in ("contiguous", "k_grouped") else ["block"] if part == "masked" else ["row"])
    k_grouped = part == "k_grouped"
    if k_grouped:
        row["group_tokens"] = k_sizes(spec.groups, spec.k // spec.groups)
    for recipe in recipes:
        s = make_k_grouped(spec, recipe, kiln, torch) if k_grouped else make(spec, masked, recipe, kiln, torch)
        shape = (spec.groups, spec.m, spec.n) if k_grouped else s["a"].shape[:-1] + (spec.n,)
        out = torch.empty(shape, dtype=torch.bfloat16, device="cuda")
        if k_grouped:  # float64 over all of K is slow at these sizes: D's first CHECK_ROWS x CHECK_COLS of each group
            sub = ({"sa": s["sa"][:CHECK_ROWS], "sb": s["sb"][:CHECK_COLS]} if recipe == "block"  # [M|N, K/128]
                   else {"sa": s["sa"][:, :CHECK_ROWS], "sb": s["sb"][:, :CHECK_COLS]})              # [G, M|N]
            ref = kiln.grouped_reference(s["a"][:CHECK_ROWS], s["b"][:CHECK_COLS], scale_a=sub["sa"],
                                         scale_b=sub["sb"], offs=s["index"])
        else:
            ref = kiln.grouped_reference(s["a"], s["b"], scale_a=s["sa"], scale_b=s["sb"], **_kw(s, masked))
        checked = (lambda y: y[:, :CHECK_ROWS, :CHECK_COLS]) if k_grouped else (lambda y: y)

        def ours(x, s=s, out=out):
            return kiln.grouped_mm(x["a"], x["b"], scale_a=x["sa"], scale_b=x["sb"], out=out, **_kw(x, masked))

        key = f"kiln_{recipe}"
        try:
            rel, finite = h.rel_l2_and_finite(checked(ours(s)), ref)
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
            theirs_fn = (lambda x: torch_k_grouped(x, torch)) if k_grouped else (lambda x: torch_grouped(x, masked,
                                                                                                        torch))
            try:
                theirs = theirs_fn(s)
                rel, finite = h.rel_l2_and_finite(checked(theirs), ref)
                row["torch_rel_l2"] = rel
                bad = h.wrong_result("torch._scaled_grouped_mm", rel, finite)
                if bad:
                    row["torch_grouped"] = bad
                else:
                    t = h.time_fn(theirs_fn, [s], args.warmup, args.iters, args.budget_s)
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
    elif part == "k_grouped":
        out["k_grouped_geomean_vs_torch_grouped"] = geomean(vt)
        out["k_grouped_block_tflops_min"] = min((r["kiln_block_tflops"] for r in rows if "kiln_block_tflops" in r),
                                                default=None)
    else:
        out["small_experts_geomean_vs_torch_grouped"] = geomean(vt)
    out[f"{part}_failed"] = [r["label"] + ": " + r["error"] for r in rows if "error" in r]
    out[f"{part}_torch_grouped"] = sorted({r.get("torch_grouped", "not run").split(":")[0] for r in rows})
    return out


GOALS = {"contiguous": "vs DeepGEMM >= 1.0, vs torch grouped >= 1.3", "masked": "vs DeepGEMM >= 1.0",
         "small_experts": "vs torch grouped >= 1.5", "k_grouped": "none set; vs torch grouped > 1"}


def lines(s: dict, part: str, num) -> list:
    keys = [k for k in s if k.startswith(part) and k not in (f"{part}_failed", f"{part}_torch_grouped")]
    out = [f"{part}: " + ", ".join(f"{k} {num(s[k])}" for k in keys) + f" (goal: {GOALS[part]})",
           f"{part}: torch._scaled_grouped_mm: {s.get(part + '_torch_grouped')}"]
    out += [f"FAILED {f}" for f in s.get(f"{part}_failed", [])]
    return out


COLUMNS = (("shape", "label", "{}"), ("kiln block TFLOP/s", "kiln_block_tflops", "{:.0f}"),
           ("DeepGEMM H800", "deepgemm_h800_tflops", "{:.0f}"), ("kiln / DeepGEMM", "ratio_vs_deepgemm", "{:.2f}"),
           ("kiln rowwise TFLOP/s", "kiln_row_tflops", "{:.0f}"), ("torch grouped TFLOP/s", "torch_tflops", "{:.0f}"),
           ("kiln / torch", "ratio_vs_torch", "{:.2f}"), ("kiln block kernel", "kiln_block_kernel", "{}"),
           ("kiln row kernel", "kiln_row_kernel", "{}"))
