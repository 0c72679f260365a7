"""kiln: Python binding (ctypes + PyTorch) of libkiln's C API (runtime/include/kiln/kiln.h).

    import kiln
    d = kiln.scaled_mm(a_fp8, w_fp8.t(), scale_a, scale_b)   # w [N, K] row-major, like torch._scaled_mm
    w = kiln.prepack_b(weight_fp8.t())                       # weight [N, K] fp8 -> packed once
    y = kiln.mixed_mm(x_f16, w, scale_b=col_scale, bias=bias)
    y = kiln.gemm(a_bf16, b_bf16, c=c, alpha=2.0, beta=0.5)
    [info.name for info in kiln.query(kiln.gemm, a_bf16, b_bf16)], kiln.explain(kiln.gemm, a_bf16, b_bf16)

The library is found through $KILN_LIBRARY, else build/libkiln.so in the repository, else another build*/libkiln.so
there, else the system loader. It is loaded on first use, so importing kiln (and the pure helpers) needs neither
torch nor a GPU. The ctypes layer (make_problem, query_problem, explain_problem, set_arch, algo_by_name,
prepack_b_host with numpy) works without torch; the tensor functions raise TorchRequiredError (an ImportError) there.

Every value is checked before it reaches ctypes (TypeError for a wrong kind, ValueError naming the field for a value
its C type cannot hold). Every status other than success raises KilnError: .status is a kiln.Status, .text the
library's field-level account (kiln_last_error), .explanation the text of a failed explain. Runs go on torch's
current stream; workspace comes from torch's allocator. Handles (one per device) live until kiln.close().
A call whose key (every argument but the data pointers) ran before reuses that run's prepared plan instead of
planning again (_fastpath.py); kiln.set_arch() and kiln.close() forget the plans.

Without a GPU, kiln.set_arch("sm90") makes queries and explains answer for that arch:
    kiln.set_arch("sm90")
    print(kiln.explain_problem(kiln.make_problem(kiln.DType.E4M3, kiln.DType.E4M3, kiln.DType.BF16,
                                                 kiln.Layout.TN, 4096, 4096, 4096)))
"""
from ._capi import (API_VERSION, Activation, DType, KilnError, Layout, ScaleMode, Status, kiln_algo, kiln_args,
                    kiln_problem, last_error, library_available, library_path, load_library)
from ._handle import (AlgoInfo, algo_by_name, close, device_arch, explain_problem, handle, make_problem,
                      query_problem, set_arch)
from ._ops import (PREPACKED_LAYOUT, PackedB, Plan, TorchRequiredError, algos, explain, gemm, kiln_dtype, mixed_mm,
                   plan, prepack_b, prepack_b_host, query, scaled_mm, torch_dtype)
from ._prepack import PREPACK_PERM, packed_k, prepack_numpy, prepack_reference
from ._types import FP8_NAMES, TORCH_DTYPE_NAME

__all__ = [
    "API_VERSION", "Activation", "AlgoInfo", "DType", "FP8_NAMES", "KilnError", "Layout", "PREPACKED_LAYOUT",
    "PREPACK_PERM", "PackedB", "Plan", "ScaleMode", "Status", "TORCH_DTYPE_NAME", "TorchRequiredError",
    "algo_by_name", "algos", "close", "device_arch", "explain", "explain_problem", "gemm", "handle", "kiln_algo",
    "kiln_args", "kiln_dtype", "kiln_problem", "last_error", "library_available", "library_path", "load_library",
    "make_problem", "mixed_mm", "packed_k", "plan", "prepack_b", "prepack_b_host", "prepack_numpy",
    "prepack_reference", "query", "query_problem", "scaled_mm", "set_arch", "torch_dtype",
]
