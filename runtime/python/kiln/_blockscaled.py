"""Block-scaled fp8 GEMM (kiln.h "Block scales", KILN_SCALE_BLOCK): kiln.block_scaled_mm on torch tensors, the
scale layouts it reads, conversions between them, and the float64 reference.

    xq, sx = kiln.quantize_per_token_group(x)        # x [M, K] -> e4m3 [M, K], sx [M, ceil(K/128)] (M-major)
    wq, sw = kiln.quantize_per_block(w)              # w [N, K] -> e4m3 [N, K], sw [ceil(N/128), ceil(K/128)]
    y = kiln.block_scaled_mm(xq, wq.t(), sx, sw)     # y[m, n] = sum_g sx[m, g] * sw[n // 128, g] * (xq_g @ wq_g^T)

K is cut into groups of 128 (the last one may be shorter). scale_a is [M, G] (G = ceil(K/128)), one float per row
and group (1x128). scale_b is one float per group and per block of 128 columns (128x128) or per column (1x128), given
either as kiln orders it, [ceil(N/128), G] or [N, G], or as torch._scaled_mm's blockwise mode takes it, the
transposed view [G, ceil(N/128)] or [G, N]. Any strides: they are passed to the kernel as they are (a dimension of
size 1 has no meaningful stride; it gets kiln_problem_init's). docs/block-scaled.md describes the layouts.

Telling the layouts apart (scale_b_layout): the shape decides where only one reading fits; where several fit (a
square scale_b) kiln takes the one whose memory is the usual one for that granularity, K-major for 128x128 (kiln's
default, DeepGEMM's and torch's alike) and N-major for 1x128 (kiln's quantizer, DeepGEMM's and torch's), and
otherwise asks for b_block= (128 or 1) and scale_b_order= ("nk": [N side, G], "kn": [G, N side]).

The layout logic works on (shape, strides) tuples and needs neither torch nor the library; the rest needs torch.
"""
from __future__ import annotations

from dataclasses import dataclass

from ._capi import DType, ScaleMode

GROUP = 128            # KILN_SCALE_GROUP: K elements per scale group
TMA_ALIGN_FLOATS = 4   # DeepGEMM pads an MN-major scale column to 16 bytes
B_BLOCKS = (128, 1)    # scale_b_block_n values kiln takes: 128x128 blocks, or one scale per column (1x128)
B_ORDERS = ("nk", "kn")
LAYOUT_NAMES = ("kiln", "torch", "deepgemm", "mn-major", "k-major")
WHAT = "block_scaled_mm"


def groups_of(k: int) -> int:
    """Scale groups along K: ceil(k / 128)."""
    return -(-k // GROUP)


def align(x: int, multiple: int) -> int:
    return -(-x // multiple) * multiple


def _dims(shape, strides, what: str) -> tuple:
    shape, strides = tuple(int(v) for v in shape), tuple(int(v) for v in strides)
    if len(shape) != 2 or len(strides) != 2:
        raise ValueError(f"{what}: want a 2-D scale tensor, got shape {shape}")
    if any(s < 0 for s in strides):
        raise ValueError(f"{what}: strides {strides} must not be negative")
    return shape, strides


def _meaningful(size: int, stride: int, default: int) -> int:
    """A stride as the kernel gets it: the tensor's, or kiln_problem_init's where the dimension has one index."""
    return stride if size > 1 else default


def scale_a_strides(shape, strides, m: int, k: int, what: str = "scale_a") -> tuple:
    """(scale_a_stride_m, scale_a_stride_k) of a scale_a [M, ceil(K/128)] float32 with these strides (elements).

    torch's 1x128 scale_a ([M, G], strides (1, M)) is kiln's default; DeepGEMM's is [M, G] with strides
    (1, align(M, 4)); a row-major [M, G] works too (slower: a warp's rows are then G floats apart)."""
    shape, strides = _dims(shape, strides, what)
    g = groups_of(k)
    if shape != (m, g):
        raise ValueError(f"{what}: want [M, ceil(K/128)] = [{m}, {g}] (one float per row of A and group of 128 "
                         f"along K), got {list(shape)}")
    return _meaningful(m, strides[0], 1), _meaningful(g, strides[1], m)


@dataclass(frozen=True)
class ScaleBLayout:
    """How kiln reads a scale_b tensor: scale_b(n, g) = s[(n // block_n) * stride_n + g * stride_k]. order says
    which way round the tensor is: "nk" ([N side, G], kiln's) or "kn" ([G, N side], torch._scaled_mm's)."""
    block_n: int
    stride_n: int
    stride_k: int
    order: str

    def semantic_key(self, n: int, g: int) -> tuple:
        """Equal for two readings that fetch the same float for every (n, g) of the problem."""
        rows = -(-n // self.block_n)
        return (self.block_n if rows > 1 else 0, self.stride_n if rows > 1 else 0, self.stride_k if g > 1 else 0)

    def usual(self) -> bool:
        """The memory every convention uses for this granularity: K-major 128x128 blocks, N-major 1x128 columns."""
        return self.stride_k == 1 if self.block_n == GROUP else self.stride_n == 1


def _choices(value, allowed, what: str) -> tuple:
    if value is None:
        return tuple(allowed)
    if value not in allowed or isinstance(value, bool):
        raise ValueError(f"{what}={value!r} is not one of {', '.join(map(repr, allowed))}")
    return (value,)


def scale_b_layout(shape, strides, n: int, k: int, b_block=None, order=None, what: str = "scale_b") -> ScaleBLayout:
    """The reading of a scale_b tensor (module docstring): its shape among [ceil(N/128), G], [N, G] and their
    transposes, b_block= / scale_b_order= where given, and the usual memory where the shape leaves a choice."""
    shape, strides = _dims(shape, strides, what)
    g = groups_of(k)
    blocks = _choices(b_block, B_BLOCKS, f"{WHAT}: b_block")
    orders = _choices(order, B_ORDERS, f"{WHAT}: scale_b_order")
    found = {}
    for block in blocks:
        rows = -(-n // block)
        for o in orders:
            want = (rows, g) if o == "nk" else (g, rows)
            if shape != want:
                continue
            s_n, s_k = strides if o == "nk" else strides[::-1]
            cand = ScaleBLayout(block, _meaningful(rows, s_n, g), _meaningful(g, s_k, 1), o)
            found.setdefault(cand.semantic_key(n, g), cand)  # first wins: 128 before 1, "nk" before "kn"
    if not found:
        forms = []
        for block in blocks:
            rows = -(-n // block)
            name = "128x128" if block == GROUP else "1x128"
            forms += [f"{list(f)} ({name}, {o})" for o, f in (("nk", (rows, g)), ("kn", (g, rows))) if o in orders]
        raise ValueError(f"{what}: shape {list(shape)} fits none of the block-scale forms for N={n}, K={k}: "
                         f"{', '.join(forms)}")
    cands = list(found.values())
    if len(cands) > 1:
        usual = [c for c in cands if c.usual()]
        if len(usual) != 1:
            raise ValueError(f"{what}: shape {list(shape)} with strides {list(strides)} can be read "
                             f"{len(cands)} ways for N={n}, K={k}; pass b_block= (128 or 1) and scale_b_order= "
                             f"('nk': [N side, groups], 'kn': [groups, N side])")
        cands = usual
    return cands[0]


# ---- torch: the op ----

def _torch(what: str):
    from ._tensors import torch_module
    return torch_module(what)


def _check_scale_tensor(s, name: str, device) -> None:
    torch = _torch(WHAT)
    if not isinstance(s, torch.Tensor):
        raise TypeError(f"{WHAT}: {name} must be a float32 torch.Tensor, got {type(s).__name__}")
    if s.dtype != torch.float32:
        raise TypeError(f"{WHAT}: {name} must be float32, got {s.dtype}")
    if s.device != device:
        raise ValueError(f"{WHAT}: {name} is on {s.device}, expected {device} (every operand on one device)")


def _plan_block_scaled_mm(a, b, scale_a, scale_b, *, out_dtype=None, bias=None, b_block=None, scale_b_order=None,
                          out=None):
    from . import _ops
    from ._handle import make_problem
    from ._tensors import (bias_of, kiln_dtype, matrix_mn, operand_a, operand_b, output, require_tensor,
                           same_device)
    from ._types import FP8_DTYPES

    require_tensor(a, WHAT, "a")
    require_tensor(b, WHAT, "b")
    require_tensor(out, WHAT, "out", optional=True)
    a_type, b_type = kiln_dtype(a, what="a"), kiln_dtype(b, what="b")
    if a_type not in FP8_DTYPES or b_type not in FP8_DTYPES:
        raise TypeError(f"{WHAT} takes fp8 A and B (got {a.dtype}, {b.dtype}); quantize with "
                        f"kiln.quantize_per_token_group / kiln.quantize_per_block")
    if a.dim() != 2 or b.dim() != 2:
        raise ValueError(f"{WHAT}: A [M, K] and B [K, N] are 2-D (block-scaled GEMMs take one batch), got "
                         f"{tuple(a.shape)} and {tuple(b.shape)}")
    _, m, k, lda, stride_a = operand_a(a, a_type)
    _, kb, n, layout, ldb, stride_b = operand_b(b, b_type, None)
    if kb != k:
        raise ValueError(f"{WHAT}: A is [{m}, {k}] but B is [{kb}, {n}]")
    same_device(a.device, {"b": b, "bias": bias, "out": out}, WHAT)
    _check_scale_tensor(scale_a, "scale_a", a.device)
    _check_scale_tensor(scale_b, "scale_b", a.device)
    sa_m, sa_k = scale_a_strides(scale_a.shape, scale_a.stride(), m, k)
    sb = scale_b_layout(scale_b.shape, scale_b.stride(), n, k, b_block, scale_b_order)
    out, d_type = output(out, out_dtype, DType.BF16, (), m, n, a.device)
    ldd, stride_d = matrix_mn(out, 1, m, n, d_type, "out")
    bias, bias_type = bias_of(bias, n, a.device, WHAT)
    p = make_problem(a_type, b_type, d_type, layout, m, n, k, lda=lda, ldb=ldb, ldc=ldd, ldd=ldd, stride_a=stride_a,
                     stride_b=stride_b, stride_c=stride_d, stride_d=stride_d, scale_a=ScaleMode.BLOCK,
                     scale_b=ScaleMode.BLOCK, scale_a_stride_m=sa_m, scale_a_stride_k=sa_k,
                     scale_b_stride_n=sb.stride_n, scale_b_stride_k=sb.stride_k, scale_b_block_n=sb.block_n,
                     has_bias=bias is not None, bias_type=bias_type)
    return _ops._finish(p, out, a, b, None, scale_a, scale_b, bias)


def _key(a, b, scale_a, scale_b, out_dtype, bias, b_block, scale_b_order, out, algo) -> tuple:
    from ._fastpath import tensor_key, value_key
    from ._ops import _algo_key
    return (WHAT, tensor_key(a), tensor_key(b), tensor_key(scale_a), tensor_key(scale_b),
            None if out_dtype is None else value_key(out_dtype), None if bias is None else tensor_key(bias),
            None if b_block is None else value_key(b_block),
            None if scale_b_order is None else value_key(scale_b_order), None if out is None else tensor_key(out),
            None if algo is None else _algo_key(algo))


def block_scaled_mm(a, b, scale_a, scale_b, *, out_dtype=None, bias=None, b_block=None, scale_b_order=None, out=None,
                    algo=None):
    """D = sum over K groups g of (A_g @ B_g) * scale_a[m, g] * scale_b(n, g) (+ bias[n]), each group summed in f32.

    a: fp8 [M, K] row-major; b: fp8 [K, N] column-major (b = w.t() of a row-major weight w [N, K]), as for
    torch._scaled_mm. scale_a: float32 [M, ceil(K/128)]; scale_b: float32 [ceil(N/128), ceil(K/128)] (128x128) or
    [N, ceil(K/128)] (1x128), or either transposed as torch._scaled_mm takes them; any strides (module docstring).
    out_dtype: bfloat16 (default), float16 or float32; bias: [N] float32/float16/bfloat16. One batch."""
    from . import _fastpath, _ops
    try:
        key = _key(a, b, scale_a, scale_b, out_dtype, bias, b_block, scale_b_order, out, algo)
        pp = _fastpath.plans.get(key)
    except Exception:  # noqa: BLE001 -- a call that cannot be keyed goes the whole way, which says what is wrong
        key = pp = None
    if pp is not None:
        d = _fastpath.run_cached(pp, a, b, None, scale_a, scale_b, bias, out, 1.0, 0.0)
        if d is not None:
            return d
    plan = _plan_block_scaled_mm(a, b, scale_a, scale_b, out_dtype=out_dtype, bias=bias, b_block=b_block,
                                 scale_b_order=scale_b_order, out=out)
    return _ops._run_whole(plan, algo, WHAT, key)


def _register_with_ops() -> None:
    """kiln.plan / query / algos / explain take block_scaled_mm like the other ops (their tables live in _ops)."""
    from . import _ops
    _ops._PLANNERS[WHAT] = _plan_block_scaled_mm
    _ops._OPS[block_scaled_mm] = WHAT


# ---- torch: layouts and the reference ----

def _operand_rows(operand: str, b_block) -> str:
    if operand == "a":
        return "a"
    if operand != "b":
        raise ValueError(f"scale_layout: operand={operand!r} is not 'a' or 'b'")
    if b_block not in B_BLOCKS:
        raise ValueError(f"scale_layout: b_block={b_block!r} is not 128 or 1")
    return "b128" if b_block == GROUP else "b1"


def scale_layout(scale, to: str, *, operand: str = "a", b_block: int = GROUP):
    """A copy of a block-scale tensor in another layout, same values. `scale` is in kiln's orientation, [rows, G]
    (rows = M for operand "a"; ceil(N/128) or N for operand "b" with b_block 128 or 1), any strides; to convert
    from torch's orientation of scale_b, pass scale_b.t().

    to: "kiln"      kiln_problem_init's layout: A and 1x128 B MN-major (strides (1, rows)), 128x128 B K-major
        "torch"     what torch._scaled_mm's blockwise mode takes: A as "kiln"; B transposed, [G, rows]
        "deepgemm"  A and 1x128 B MN-major with columns padded to 16 bytes (strides (1, align(rows, 4)));
                    128x128 B K-major
        "mn-major"  [rows, G], strides (1, rows);  "k-major": [rows, G] row-major
    Every result is a valid scale argument of block_scaled_mm."""
    torch = _torch("scale_layout")
    if not isinstance(scale, torch.Tensor):
        raise TypeError(f"scale_layout: scale must be a torch.Tensor, got {type(scale).__name__}")
    if scale.dim() != 2:
        raise ValueError(f"scale_layout: want a 2-D [rows, groups] scale, got shape {tuple(scale.shape)}")
    if to not in LAYOUT_NAMES:
        raise ValueError(f"scale_layout: to={to!r} is not one of {', '.join(LAYOUT_NAMES)}")
    kind = _operand_rows(operand, b_block)
    rows, g = scale.shape

    def mn_major(pad_to: int = 1):
        buf = scale.new_zeros((g, align(rows, pad_to) if rows else 0))
        view = buf[:, :rows].t()
        view.copy_(scale)
        return view

    if to == "k-major":
        return scale.contiguous()
    if to == "mn-major":
        return mn_major()
    if kind == "b128":
        kmajor = scale.contiguous()
        return kmajor.t() if to == "torch" else kmajor
    if to == "deepgemm":
        return mn_major(TMA_ALIGN_FLOATS)
    return mn_major().t() if (to == "torch" and kind == "b1") else mn_major()


def block_scaled_reference(a, b, scale_a, scale_b, *, bias=None, b_block=None, scale_b_order=None):
    """float64 [M, N] of what block_scaled_mm computes from these very tensors: each group of 128 along K (the last
    one shorter) summed in float64, times its scale_a and scale_b, added up; plus bias. Arguments as for
    block_scaled_mm (b is [K, N]); the scales are read through the same layout rules, by torch indexing."""
    torch = _torch("block_scaled_reference")
    m, k = a.shape
    kb, n = b.shape
    if kb != k:
        raise ValueError(f"block_scaled_reference: A is [{m}, {k}] but B is [{kb}, {n}]")
    scale_a_strides(scale_a.shape, scale_a.stride(), m, k)
    lay = scale_b_layout(scale_b.shape, scale_b.stride(), n, k, b_block, scale_b_order)
    g = groups_of(k)
    a64 = a.float().double()
    b64 = b.float().double()
    sa = scale_a.double()
    sb = (scale_b if lay.order == "nk" else scale_b.t()).double()  # [rows, G]
    if lay.block_n != 1:
        sb = sb.repeat_interleave(lay.block_n, dim=0)[:n]
    acc = torch.zeros((m, n), dtype=torch.float64, device=a.device)
    for gi in range(g):
        lo, hi = gi * GROUP, min(k, (gi + 1) * GROUP)
        part = a64[:, lo:hi] @ b64[lo:hi, :]
        acc += part * sa[:, gi:gi + 1] * sb[:, gi].reshape(1, n)
    if bias is not None:
        acc += bias.double().reshape(1, n)
    return acc


__all__ = ["B_BLOCKS", "B_ORDERS", "GROUP", "LAYOUT_NAMES", "ScaleBLayout", "TMA_ALIGN_FLOATS", "align",
           "block_scaled_mm", "block_scaled_reference", "groups_of", "scale_a_strides", "scale_b_layout",
           "scale_layout"]
