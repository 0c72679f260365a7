"""kiln: Python binding (ctypes + PyTorch) of libkiln's C API (runtime/include/kiln/kiln.h).

    import kiln
    d = kiln.scaled_mm(a_fp8, w_fp8.t(), scale_a, scale_b)   # w [N, K] row-major, like torch._scaled_mm
    w = kiln.prepack_b(weight_fp8.t())                       # weight [N, K] fp8 -> packed once
    y = kiln.mixed_mm(x_f16, w, scale_b=col_scale, bias=bias)
    y = kiln.gemm(a_bf16, b_bf16, c=c, alpha=2.0, beta=0.5)
    [info.name for info in kiln.query(kiln.gemm, a_bf16, b_bf16)], kiln.explain(kiln.gemm, a_bf16, b_bf16)

The library is found through $KILN_LIBRARY, else build/libkiln.so in the repository, else the system loader. It is
loaded on first use, so importing kiln (and the pure helpers) needs neither torch nor a GPU. Every status other than
success raises KilnError, whose .status is a kiln.Status. Runs go on torch's current stream; workspace comes from
torch's allocator. Handles (one per device) live until kiln.close().
"""
from ._capi import (API_VERSION, Activation, DType, KilnError, Layout, ScaleMode, Status, kiln_algo, kiln_args,
                    kiln_problem, library_available, library_path, load_library)
from ._handle import (AlgoInfo, algo_by_name, close, device_arch, explain_problem, handle, make_problem,
                      query_problem)
from ._ops import (PREPACKED_LAYOUT, PackedB, Plan, algos, explain, gemm, kiln_dtype, mixed_mm, plan, prepack_b,
                   prepack_b_host, query, scaled_mm, torch_dtype)
from ._prepack import PREPACK_PERM, packed_k, prepack_numpy, prepack_reference
from ._types import FP8_NAMES, TORCH_DTYPE_NAME

__all__ = [
    "API_VERSION", "Activation", "AlgoInfo", "DType", "FP8_NAMES", "KilnError", "Layout", "PREPACKED_LAYOUT",
    "PREPACK_PERM", "PackedB", "Plan", "ScaleMode", "Status", "TORCH_DTYPE_NAME", "algo_by_name", "algos", "close",
    "device_arch", "explain", "explain_problem", "gemm", "handle", "kiln_algo", "kiln_args", "kiln_dtype",
    "kiln_problem", "library_available", "library_path", "load_library", "make_problem", "mixed_mm", "packed_k",
    "plan", "prepack_b", "prepack_b_host", "prepack_numpy", "prepack_reference", "query", "query_problem",
    "scaled_mm", "torch_dtype",
]
