"""kiln's ops as PyTorch operators: torch.ops.kiln.scaled_mm, torch.ops.kiln.mixed_mm, torch.ops.kiln.gemm.

Each is a torch.library custom op whose CUDA kernel is the kiln function of the same name (_ops.py) and whose fake
(meta) kernel gives the output's shape, dtype and device without running anything, so that torch.compile
(fullgraph=True), torch.export and FakeTensor tracing see through a model that calls them. They take only what an
operator schema can carry: tensors, numbers, strings and dtypes. So mixed_mm takes a PackedB as its three parts
(packed.data, packed.k, packed.fp8), scales are float32 tensors (None for none), and there is no out= or algo=.

    y = torch.ops.kiln.scaled_mm(a_fp8, w_fp8.t(), scale_a, scale_b, bias=bias, out_dtype=torch.bfloat16)
    w = kiln.prepack_b(weight_fp8.t())
    y = torch.ops.kiln.mixed_mm(x, w.data, w.k, w.fp8, scale_b=col_scale, bias=bias)
    y = torch.ops.kiln.gemm(a, b, c=c, alpha=2.0, beta=0.5)

register() defines them once per process; `import kiln` calls it when torch is already imported, and kiln.ops (the
torch.ops.kiln namespace) calls it otherwise. It is not on the path of kiln.scaled_mm & co., which stay the cheaper
call in eager code (no dispatcher, no autograd layer). The ops have no autograd formula: a backward through one
raises. Their tensors are taken with exactly the strides they have (the needs_exact_strides tag): kiln tells a TN B
from an NN B by its strides, so a compiler must not re-layout them.
"""
from __future__ import annotations

import inspect
import threading

from . import _ops
from ._prepack import packed_k
from ._tensors import torch_module
from ._types import FP8_NAMES

NAMESPACE = "kiln"

# name -> schema. Argument names and order follow the kiln function, but every tensor is positional (custom ops take
# no keyword-only tensors; a call may still name them: scale_b=, bias=, c=); the other options are keyword-only.
SCHEMAS = {
    "scaled_mm": "(Tensor a, Tensor b, Tensor? scale_a, Tensor? scale_b, Tensor? bias=None, *, "
                 "ScalarType? out_dtype=None, str? activation=None, str? a_fp8=None, str? b_fp8=None, "
                 "bool use_fast_accum=False) -> Tensor",
    "mixed_mm": "(Tensor a, Tensor packed_b, int k, str fp8, Tensor? scale_b=None, Tensor? bias=None, *, "
                "ScalarType? out_dtype=None, str? activation=None) -> Tensor",
    "gemm": "(Tensor a, Tensor b, Tensor? c=None, Tensor? bias=None, *, float alpha=1.0, float beta=0.0, "
            "str? activation=None, ScalarType? out_dtype=None) -> Tensor",
}


# ---- the CUDA kernels: the kiln functions ----

def _scaled_mm(a, b, scale_a, scale_b, bias=None, *, out_dtype=None, activation=None, a_fp8=None, b_fp8=None,
               use_fast_accum=False):
    return _ops.scaled_mm(a, b, scale_a, scale_b, bias=bias, out_dtype=out_dtype, activation=activation,
                          a_fp8=a_fp8, b_fp8=b_fp8, use_fast_accum=use_fast_accum)


def _mixed_mm(a, packed_b, k, fp8, scale_b=None, bias=None, *, out_dtype=None, activation=None):
    return _ops.mixed_mm(a, packed_of(packed_b, k, fp8), scale_b=scale_b, bias=bias, out_dtype=out_dtype,
                         activation=activation)


def _gemm(a, b, c=None, bias=None, *, alpha=1.0, beta=0.0, activation=None, out_dtype=None):
    return _ops.gemm(a, b, c=c, alpha=alpha, beta=beta, bias=bias, activation=activation, out_dtype=out_dtype)


def packed_of(data, k: int, fp8: str) -> _ops.PackedB:
    """The PackedB whose parts the mixed_mm op was given (checked: fp8 names a format, data is [N, packed_k(k)])."""
    if not isinstance(fp8, str) or fp8.lower() not in FP8_NAMES:
        raise ValueError(f"kiln::mixed_mm: fp8={fp8!r} is not one of {sorted(FP8_NAMES)}")
    if data.dim() != 2 or data.shape[1] != packed_k(k):
        raise ValueError(f"kiln::mixed_mm: packed_b of shape {tuple(data.shape)} is not a prepack of K={k} "
                         f"(want [N, {packed_k(k)}])")
    return _ops.PackedB(data, FP8_NAMES[fp8.lower()], k, data.shape[0])


# ---- the fake kernels: output shape, dtype and device only (sizes may be symbolic) ----

def _mm_shape(torch, a, b, op: str) -> tuple:
    torch._check(a.dim() in (2, 3) and b.dim() == a.dim(),
                 lambda: f"kiln::{op}: A {tuple(a.shape)} and B {tuple(b.shape)} must both be 2-D or both 3-D")
    torch._check(a.shape[-1] == b.shape[-2], lambda: f"kiln::{op}: A is {tuple(a.shape)} but B is {tuple(b.shape)}")
    if a.dim() == 3:
        torch._check(a.shape[0] == b.shape[0], lambda: f"kiln::{op}: batch of A {a.shape[0]} != B {b.shape[0]}")
        return (a.shape[0], a.shape[1], b.shape[2])
    return (a.shape[0], b.shape[1])


def _scaled_mm_fake(a, b, scale_a, scale_b, bias=None, *, out_dtype=None, activation=None, a_fp8=None,
                    b_fp8=None, use_fast_accum=False):
    torch = torch_module("ops")
    dtype = torch.bfloat16 if out_dtype is None else out_dtype
    return a.new_empty(_mm_shape(torch, a, b, "scaled_mm"), dtype=dtype)


def _mixed_mm_fake(a, packed_b, k, fp8, scale_b=None, bias=None, *, out_dtype=None, activation=None):
    torch = torch_module("ops")
    torch._check(a.dim() >= 2, lambda: f"kiln::mixed_mm: want A as [..., M, K], got {tuple(a.shape)}")
    torch._check(a.shape[-1] == k, lambda: f"kiln::mixed_mm: A has K={a.shape[-1]}, the packed B has K={k}")
    torch._check(packed_b.dim() == 2 and packed_b.shape[-1] == packed_k(k),
                 lambda: f"kiln::mixed_mm: packed_b {tuple(packed_b.shape)} is not a prepack of K={k}")
    return a.new_empty((*a.shape[:-1], packed_b.shape[0]), dtype=a.dtype if out_dtype is None else out_dtype)


def _gemm_fake(a, b, c=None, bias=None, *, alpha=1.0, beta=0.0, activation=None, out_dtype=None):
    torch = torch_module("ops")
    return a.new_empty(_mm_shape(torch, a, b, "gemm"), dtype=a.dtype if out_dtype is None else out_dtype)


KERNELS = {"scaled_mm": (_scaled_mm, _scaled_mm_fake), "mixed_mm": (_mixed_mm, _mixed_mm_fake),
           "gemm": (_gemm, _gemm_fake)}
assert KERNELS.keys() == SCHEMAS.keys()


# ---- registration, once ----

_defs = {}  # name -> torch.library.CustomOpDef (kept: the definitions live as long as the process)
_done = False
_lock = threading.Lock()


def _defined(torch, name: str) -> bool:
    """Whether kiln::name exists already (defined by an earlier copy of this module, e.g. after importlib.reload)."""
    try:
        getattr(getattr(torch.ops, NAMESPACE), name)
    except (AttributeError, RuntimeError):
        return False
    return True


def _tags(torch) -> dict:
    """tags= for custom_op where this torch takes it: needs_exact_strides (the default of current torch, said
    explicitly because kiln reads B's layout from its strides)."""
    tag = getattr(torch.Tag, "needs_exact_strides", None) or getattr(torch.Tag, "needs_fixed_stride_order", None)
    if tag is None or "tags" not in inspect.signature(torch.library.custom_op).parameters:
        return {}
    return {"tags": (tag,)}


def register():
    """Define kiln::scaled_mm, kiln::mixed_mm and kiln::gemm (once; later calls return at once) and return the
    torch.ops.kiln namespace. TorchRequiredError without torch."""
    global _done
    torch = torch_module("ops")
    if _done:
        return getattr(torch.ops, NAMESPACE)
    with _lock:
        if not _done:
            tags = _tags(torch)
            for name, schema in SCHEMAS.items():
                if _defined(torch, name):
                    continue
                impl, fake = KERNELS[name]
                op = torch.library.custom_op(f"{NAMESPACE}::{name}", impl, mutates_args=(), device_types="cuda",
                                             schema=schema, **tags)
                op.register_fake(fake)
                _defs[name] = op
            _done = True
    return getattr(torch.ops, NAMESPACE)


def registered() -> bool:
    return _done


__all__ = ["NAMESPACE", "SCHEMAS", "packed_of", "register", "registered"]
