"""kiln: Python binding (ctypes + PyTorch) of libkiln's C API (runtime/include/kiln/kiln.h).

    import kiln
    d = kiln.scaled_mm(a_fp8, w_fp8.t(), scale_a, scale_b)   # w [N, K] row-major, like torch._scaled_mm
    w = kiln.prepack_b(weight_fp8.t())                       # weight [N, K] fp8 -> packed once
    y = kiln.mixed_mm(x_f16, w, scale_b=col_scale, bias=bias)
    y = kiln.gemm(a_bf16, b_bf16, c=c, alpha=2.0, beta=0.5)
    y = kiln.block_scaled_mm(x_fp8, w_fp8.t(), x_scale, w_scale)  # 1x128 / 128x128 block scales (docs/block-scaled.md)
    [info.name for info in kiln.query(kiln.gemm, a_bf16, b_bf16)], kiln.explain(kiln.gemm, a_bf16, b_bf16)

The library is found through $KILN_LIBRARY, else the path recorded when the package was installed with pip (or a
libkiln.so bundled into it), else, for the package in the source tree, build/libkiln.so in the repository or another
build*/libkiln.so there, else the system loader (_capi.library_candidates()). It is loaded on first use, so importing
kiln (and the pure helpers) needs neither torch nor a GPU. The ctypes layer (make_problem, query_problem,
explain_problem, set_arch, algo_by_name, prepack_b_host with numpy) works without torch; the tensor functions raise
TorchRequiredError (an ImportError) there.

Every value is checked before it reaches ctypes (TypeError for a wrong kind, ValueError naming the field for a value
its C type cannot hold). Every status other than success raises KilnError: .status is a kiln.Status, .text the
library's field-level account (kiln_last_error), .explanation the text of a failed explain. Runs go on torch's
current stream; workspace comes from torch's allocator. Handles (one per device) live until kiln.close().
A call whose key (every argument but the data pointers) ran before reuses that run's prepared plan instead of
planning again (_fastpath.py); kiln.set_arch() and kiln.close() forget the plans.

PyTorch integration (docs/python.md): torch.ops.kiln.scaled_mm / mixed_mm / gemm are torch.library operators with
fake kernels, for torch.compile(fullgraph=True) and torch.export (kiln.ops is that namespace; `import kiln` defines
them when torch is already imported, kiln.ops or kiln.register_torch_ops() otherwise); kiln.Fp8Linear.from_linear()
turns an nn.Linear into an fp8-weight layer; kiln.quantize_fp8() quantizes a weight with per-channel scales. The
ops, and kiln.scaled_mm & co., can be captured in CUDA graphs (after one warm-up call of each shape).

Without a GPU, kiln.set_arch("sm90") makes queries and explains answer for that arch:
    kiln.set_arch("sm90")
    print(kiln.explain_problem(kiln.make_problem(kiln.DType.E4M3, kiln.DType.E4M3, kiln.DType.BF16,
                                                 kiln.Layout.TN, 4096, 4096, 4096)))
"""
import sys

from ._capi import (API_VERSION, Activation, DType, GroupMode, KilnError, Layout, ScaleMode, Status, kiln_algo,
                    kiln_args, kiln_problem, last_error, library_available, library_path, load_library)
from ._handle import (AlgoInfo, algo_by_name, close, device_arch, explain_problem, handle, make_problem,
                      query_problem, set_arch)
from ._ops import (PREPACKED_LAYOUT, PackedB, Plan, TorchRequiredError, algos, explain, gemm, kiln_dtype, mixed_mm,
                   plan, prepack_b, prepack_b_host, query, scaled_mm, torch_dtype)
from ._prepack import PREPACK_PERM, packed_k, prepack_numpy, prepack_reference
from ._quant import quantize_fp8, quantize_per_block, quantize_per_token_group
from ._blockscaled import block_scaled_mm, block_scaled_reference, scale_layout
from ._grouped import grouped_mm, grouped_reference
from ._attention import PackedV, attention, attention_pack_v, attention_reference, quantize_qkv
from ._types import FP8_NAMES, TORCH_DTYPE_NAME
from . import _blockscaled, _grouped, _library

__all__ = [
    "API_VERSION", "Activation", "AlgoInfo", "DType", "FP8_NAMES", "GroupMode", "KilnError", "Layout", "PREPACKED_LAYOUT",
    "PREPACK_PERM", "PackedB", "PackedV", "Plan", "ScaleMode", "Status", "TORCH_DTYPE_NAME", "TorchRequiredError", "algo_by_name",
    "algos", "attention", "attention_pack_v", "attention_reference", "block_scaled_mm", "block_scaled_reference", "close", "device_arch",
    "explain", "explain_problem", "gemm", "grouped_mm", "grouped_reference", "quantize_qkv",
    "handle", "kiln_algo", "kiln_args", "kiln_dtype", "kiln_problem", "last_error", "library_available",
    "library_path", "load_library", "make_problem", "mixed_mm", "packed_k", "plan", "prepack_b", "prepack_b_host",
    "prepack_numpy", "prepack_reference", "quantize_fp8", "quantize_per_block", "quantize_per_token_group", "query",
    "query_problem", "register_torch_ops", "scale_layout", "scaled_mm", "set_arch", "torch_dtype",
]
# Not in __all__ (a star import must not need torch): kiln.ops, kiln.Fp8Linear, loaded on first use.


def register_torch_ops():
    """Define the torch.library operators kiln::scaled_mm, kiln::mixed_mm, kiln::gemm (once) and return the
    torch.ops.kiln namespace. TorchRequiredError without torch."""
    return _library.register()


def __getattr__(name):
    if name == "ops":
        return _library.register()
    if name == "Fp8Linear":
        from ._tensors import torch_module
        torch_module("Fp8Linear")
        from ._nn import Fp8Linear
        return Fp8Linear
    raise AttributeError(f"module 'kiln' has no attribute {name!r}")


def _register_if_torch_is_loaded() -> None:
    """Define the operators at import when torch is imported already (so torch.ops.kiln.* exists in the usual order,
    `import torch; import kiln`) without importing torch otherwise. A failure here is left for kiln.ops to raise."""
    torch = sys.modules.get("torch")
    if torch is None or not hasattr(torch, "library"):
        return
    try:
        _library.register()
    except Exception:  # noqa: BLE001 -- kiln.ops and Fp8Linear register again and raise what went wrong
        pass


_blockscaled._register_with_ops()
_grouped._register_with_ops()
_register_if_torch_is_loaded()
