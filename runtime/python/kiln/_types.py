"""Spellings of kiln's axes on the Python side: one table per spelling, each checked for completeness.

Torch dtypes are named by attribute (``"float8_e4m3fn"``) so the tables load, and are tested, without torch.
"""
from __future__ import annotations

from ._capi import Activation, DType, Layout

# kiln dtype -> attribute of the torch module holding it.
TORCH_DTYPE_NAME = {
    DType.F32: "float32",
    DType.F16: "float16",
    DType.BF16: "bfloat16",
    DType.E4M3: "float8_e4m3fn",
    DType.E5M2: "float8_e5m2",
    DType.E4M3FNUZ: "float8_e4m3fnuz",
    DType.E5M2FNUZ: "float8_e5m2fnuz",
}
assert TORCH_DTYPE_NAME.keys() == set(DType)
DTYPE_BY_TORCH_NAME = {name: dt for dt, name in TORCH_DTYPE_NAME.items()}
assert len(DTYPE_BY_TORCH_NAME) == len(DType)

DTYPE_BYTES = {
    DType.F32: 4, DType.F16: 2, DType.BF16: 2,
    DType.E4M3: 1, DType.E5M2: 1, DType.E4M3FNUZ: 1, DType.E5M2FNUZ: 1,
}
assert DTYPE_BYTES.keys() == set(DType)

FP8_DTYPES = frozenset({DType.E4M3, DType.E5M2, DType.E4M3FNUZ, DType.E5M2FNUZ})
HALF_DTYPES = frozenset({DType.F16, DType.BF16})
BIAS_DTYPES = frozenset({DType.F32, DType.F16, DType.BF16})  # kiln.h: bias_type is f32, f16 or bf16
assert FP8_DTYPES == {dt for dt, size in DTYPE_BYTES.items() if size == 1}

# fp8= / a_fp8= / b_fp8= overrides that give raw torch.uint8 bytes their meaning.
FP8_NAMES = {
    "e4m3": DType.E4M3,
    "e4m3fn": DType.E4M3,
    "e5m2": DType.E5M2,
    "e4m3fnuz": DType.E4M3FNUZ,
    "e5m2fnuz": DType.E5M2FNUZ,
}
assert set(FP8_NAMES.values()) == FP8_DTYPES
# The one name of each fp8 dtype that the ops and modules write (the fp8= argument of kiln::mixed_mm, Fp8Linear).
FP8_NAME = {DType.E4M3: "e4m3", DType.E5M2: "e5m2", DType.E4M3FNUZ: "e4m3fnuz", DType.E5M2FNUZ: "e5m2fnuz"}
assert FP8_NAME.keys() == FP8_DTYPES and all(FP8_NAMES[name] == dt for dt, name in FP8_NAME.items())

ACTIVATION_NAMES = {
    None: Activation.NONE,
    "none": Activation.NONE,
    "relu": Activation.RELU,
    "gelu": Activation.GELU,
    "silu": Activation.SILU,
}
assert set(ACTIVATION_NAMES.values()) == set(Activation)

LAYOUT_NAMES = {"TN": Layout.TN, "NN": Layout.NN}
assert set(LAYOUT_NAMES.values()) == set(Layout)

VECTOR_BYTES = 16  # the widest global access kiln kernels make; used to pick a harmless ld for a single row


def dtype_from_name(torch_name: str, fp8: str | None = None, what: str = "tensor") -> DType:
    """kiln dtype of a tensor whose torch dtype is ``torch.<torch_name>``; ``fp8`` names raw uint8 bytes."""
    if fp8 is not None:
        if not isinstance(fp8, str):
            raise TypeError(f"{what}: fp8= takes a name such as 'e4m3', got {type(fp8).__name__}")
        key = fp8.lower()
        if key not in FP8_NAMES:
            raise ValueError(f"{what}: fp8={fp8!r} is not one of {sorted(FP8_NAMES)}")
        want = FP8_NAMES[key]
        if torch_name == "uint8":
            return want
        have = DTYPE_BY_TORCH_NAME.get(torch_name)
        if have != want:
            raise TypeError(f"{what}: fp8={fp8!r} given for a torch.{torch_name} tensor; the override is only for "
                            f"torch.uint8 bytes (or must agree with the tensor's own fp8 dtype)")
        return want
    if torch_name == "uint8":
        raise TypeError(f"{what}: torch.uint8 holds raw bytes; say which fp8 format they are with "
                        f"fp8= one of {sorted(set(FP8_NAMES) - {'e4m3fn'})}")
    dt = DTYPE_BY_TORCH_NAME.get(torch_name)
    if dt is None:
        raise TypeError(f"{what}: torch.{torch_name} is not a kiln dtype "
                        f"(kiln takes {', '.join('torch.' + n for n in TORCH_DTYPE_NAME.values())})")
    return dt


def activation_from_name(act) -> Activation:
    if isinstance(act, Activation):
        return act
    if act is not None and not isinstance(act, str):
        raise TypeError(f"activation= takes None, a name or a kiln.Activation, got {type(act).__name__}")
    key = act.lower() if isinstance(act, str) else act
    if key not in ACTIVATION_NAMES:
        raise ValueError(f"activation={act!r} is not one of None, 'none', 'relu', 'gelu', 'silu'")
    return ACTIVATION_NAMES[key]


def layout_from_name(layout) -> Layout | None:
    if layout is None or isinstance(layout, Layout):
        return layout
    if not isinstance(layout, str):
        raise TypeError(f"layout= takes None, 'TN', 'NN' or a kiln.Layout, got {type(layout).__name__}")
    key = layout.upper()
    if key not in LAYOUT_NAMES:
        raise ValueError(f"layout={layout!r} is not one of None, 'TN', 'NN'")
    return LAYOUT_NAMES[key]


def round_up(x: int, multiple: int) -> int:
    return (x + multiple - 1) // multiple * multiple


def single_row_ld(row_elems: int, dt: DType) -> int:
    """A leading dimension for a matrix of one row: any value >= the row is equivalent, so pick one that keeps the
    16-byte alignment predicates of the kernels satisfied instead of the meaningless stride torch reports."""
    return round_up(max(row_elems, 1), max(1, VECTOR_BYTES // DTYPE_BYTES[dt]))


def infer_b_layout(k: int, n: int, stride_k: int, stride_n: int, b_type: DType, layout=None, what: str = "b"):
    """(layout, ldb) of B(k, n) given as a [K, N] view with strides (stride_k, stride_n), in elements.

    TN: storage [n][k] (unit stride along k), ldb = stride_n. NN: storage [k][n] (unit stride along n),
    ldb = stride_k. A size-1 dimension has no meaningful stride, so it never decides the layout by itself. An empty
    B (k or n = 0) has no storage order at all: it is TN unless a layout is forced (every problem kind takes TN).
    """
    layout = layout_from_name(layout)
    if k == 0 or n == 0:
        layout = Layout.TN if layout is None else layout
        return layout, single_row_ld(k if layout == Layout.TN else n, b_type)
    tn_ok = stride_k == 1 or k == 1
    nn_ok = stride_n == 1 or n == 1
    if layout is None:
        if stride_k == 1 and k > 1:
            layout = Layout.TN
        elif stride_n == 1 and n > 1:
            layout = Layout.NN
        elif tn_ok:  # one row of [N][K] storage (k == 1) or one column with unit stride along k
            layout = Layout.TN
        elif nn_ok:  # one column (n == 1) of [K][N] storage
            layout = Layout.NN
        else:
            raise ValueError(f"{what}: B(k, n) of shape [{k}, {n}] has strides ({stride_k}, {stride_n}); kiln needs "
                             f"unit stride along K (TN, storage [N][K]) or along N (NN, storage [K][N])")
    if layout == Layout.TN:
        if not tn_ok:
            raise ValueError(f"{what}: layout TN needs unit stride along K; strides are ({stride_k}, {stride_n})")
        return layout, (stride_n if n > 1 else single_row_ld(k, b_type))
    if not nn_ok:
        raise ValueError(f"{what}: layout NN needs unit stride along N; strides are ({stride_k}, {stride_n})")
    return layout, (stride_k if k > 1 else single_row_ld(n, b_type))
