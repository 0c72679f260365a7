"""Invalid calls return an error status (KilnError) and launch nothing: the poisoned output stays all NaN."""
from __future__ import annotations

import ctypes

import pytest

import kilntest as kt
from kilntest import DType, Layout, kiln, torch

pytestmark = pytest.mark.gpu

FP8_TN = (DType.E4M3, DType.E4M3, DType.BF16, Layout.TN, False)


def _shifted_fp8(rows, cols, shift=1):
    """A [rows, cols] e4m3 tensor whose data pointer is `shift` bytes past a 16-byte boundary (ld stays aligned)."""
    flat = kt.fp8_values((rows * cols + 16,), torch.float8_e4m3fn)
    return flat[shift:shift + rows * cols].view(rows, cols)


def _fp8_inputs(m, n, k, shift_a=0, shift_b=0):
    a = _shifted_fp8(m, k, shift_a) if shift_a else kt.fp8_values((m, k), torch.float8_e4m3fn)
    w = _shifted_fp8(n, k, shift_b) if shift_b else kt.fp8_values((n, k), torch.float8_e4m3fn)
    return a, w.t(), kt.positive(()), kt.positive(())


def _strict_algo(m, n, k, operand):
    """A candidate for the aligned problem that needs more than 1-element alignment of `operand` ('a' or 'b')."""
    a, b, sa, sb = _fp8_inputs(m, n, k)
    for info in kiln.query(kiln.scaled_mm, a, b, sa, sb, k=64):
        sol = kt.decode(info.name)
        if (sol.align_a if operand == "a" else sol.align_b) > 1:
            return info
    pytest.skip(f"no {operand}-aligned candidate: every kernel takes any alignment")


@pytest.mark.parametrize("operand", ["a", "b"])
def test_misaligned_pointer_with_forced_algo(operand):
    kt.require_combo(FP8_TN)
    m, n, k = 256, 256, 512
    algo = _strict_algo(m, n, k, operand)
    a, b, sa, sb = _fp8_inputs(m, n, k, shift_a=1 if operand == "a" else 0, shift_b=1 if operand == "b" else 0)
    out = kt.poisoned(m, n, torch.bfloat16)
    with pytest.raises(kiln.KilnError) as info:
        kiln.scaled_mm(a, b, sa, sb, out=out, algo=algo)
    assert info.value.status == kiln.Status.MISALIGNED, str(info.value)
    torch.cuda.synchronize()
    assert kt.all_nan(out), "a refused call wrote its output"


@pytest.mark.parametrize("operand", ["a", "b"])
def test_misaligned_pointer_auto(operand):
    """Without algo=, kiln either picks a kernel that takes the alignment (and is right) or refuses with
    MISALIGNED and leaves the output alone."""
    kt.require_combo(FP8_TN)
    m, n, k = 200, 136, 320
    a, b, sa, sb = _fp8_inputs(m, n, k, shift_a=1 if operand == "a" else 0, shift_b=1 if operand == "b" else 0)
    out = kt.poisoned(m, n, torch.bfloat16)
    try:
        infos = kiln.query(kiln.scaled_mm, a, b, sa, sb, out=out, k=1)
        kiln.scaled_mm(a, b, sa, sb, out=out)
    except kiln.KilnError as exc:
        assert exc.status == kiln.Status.MISALIGNED, str(exc)
        torch.cuda.synchronize()
        assert kt.all_nan(out)
        return
    sol = kt.decode(infos[0].name)
    assert (sol.align_a if operand == "a" else sol.align_b) == 1, f"{infos[0].name} accepted a misaligned pointer"
    kt.EXERCISED.add(infos[0].name)
    kt.check(out, kt.reference(a, b, sa=sa, sb=sb), kt.TOL_FP8, f"misaligned {operand} via {infos[0].name}")


def test_unsupported_type_mix():
    a = kt.randn_half((64, 64), torch.float16)
    b = kt.randn_half((64, 64), torch.bfloat16)
    out = kt.poisoned(64, 64, torch.float16)
    with pytest.raises(kiln.KilnError) as info:
        kiln.gemm(a, b, out=out)
    assert info.value.status in (kiln.Status.NOT_SUPPORTED, kiln.Status.NO_SOLUTION), str(info.value)
    torch.cuda.synchronize()
    assert kt.all_nan(out)


def test_algo_of_another_problem():
    kt.require_combo(FP8_TN)
    a, b, sa, sb = _fp8_inputs(128, 128, 128)
    fp8_algo = kiln.query(kiln.scaled_mm, a, b, sa, sb, k=1)[0]
    x = kt.randn_half((128, 128), torch.float16)
    y = kt.randn_half((128, 128), torch.float16)
    out = kt.poisoned(128, 128, torch.float16)
    with pytest.raises(kiln.KilnError) as info:
        kiln.gemm(x, y, out=out, algo=fp8_algo)
    assert info.value.status == kiln.Status.INVALID_ALGO, str(info.value)
    torch.cuda.synchronize()
    assert kt.all_nan(out)


def test_split_k_without_workspace():
    """An algo with gsu > 1 run with no workspace: WORKSPACE_TOO_SMALL, nothing written."""
    kt.require_combo(FP8_TN)
    m, n, k = 128, 128, 4096
    a, b, sa, sb = _fp8_inputs(m, n, k)
    out = kt.poisoned(m, n, torch.bfloat16)
    cands = [i for i in kiln.query(kiln.scaled_mm, a, b, sa, sb, out=out, k=64) if i.gsu > 1]
    # a split reduced in a thread-block cluster (_MC3_) adds its partial tiles in distributed shared memory and
    # needs none; every other split needs gsu * m * n floats
    for i in cands:
        assert (i.workspace_bytes == 0) == ("_MC3_" in i.name), i
    split = [i for i in cands if "_MC3_" not in i.name]
    if not split:
        pytest.skip("no split-K candidate with a workspace for this problem")
    assert split[0].workspace_bytes >= split[0].gsu * m * n * 4
    plan = kiln.plan(kiln.scaled_mm, a, b, sa, sb, out=out)
    stream = torch.cuda.current_stream().cuda_stream
    status = kiln.load_library().kiln_run(kiln.handle(), ctypes.byref(plan.problem), ctypes.byref(split[0].algo),
                                          ctypes.byref(plan.args), None, 0, stream)
    assert status == kiln.Status.WORKSPACE_TOO_SMALL
    torch.cuda.synchronize()
    assert kt.all_nan(out)


def test_invalid_leading_dimension():
    p = kiln.make_problem(DType.F16, DType.F16, DType.F16, Layout.NN, 64, 64, 64, ldb=32)  # NN needs ldb >= n
    with pytest.raises(kiln.KilnError) as info:
        kiln.query_problem(p)
    assert info.value.status == kiln.Status.INVALID_VALUE, str(info.value)
    if hasattr(kiln.load_library(), "kiln_last_error"):  # the field and value, not just the status
        assert "ldb" in info.value.text and info.value.text in str(info.value), str(info.value)


def test_values_checked_before_ctypes():
    """A value its C field cannot hold is refused by the binding (ctypes would wrap 2**64 + 64 to 64)."""
    with pytest.raises(ValueError, match="m = 18446744073709551680"):
        kiln.make_problem(DType.E4M3, DType.E4M3, DType.BF16, Layout.TN, 2**64 + 64, 64, 64)
    with pytest.raises(ValueError, match="gemm: alpha"):
        x = kt.randn_half((64, 64), torch.float16)
        kiln.gemm(x, x, alpha=1e39)


def test_non_tensor_arguments():
    a = kt.fp8_values((64, 64), torch.float8_e4m3fn)
    sa = kt.positive(())
    with pytest.raises(TypeError, match=r"^scaled_mm: b must be a torch\.Tensor, got NoneType$"):
        kiln.scaled_mm(a, None, sa, sa)
    with pytest.raises(TypeError, match=r"scaled_mm: scale_b must be None, a number or a float32 torch\.Tensor"):
        kiln.scaled_mm(a, a.t(), sa, "1")
    with pytest.raises(TypeError, match=r"gemm: c must be a torch\.Tensor or None, got list"):
        x = kt.randn_half((64, 64), torch.float16)
        kiln.gemm(x, x, c=[[0.0]], beta=1.0)
    with pytest.raises(TypeError, match="out_dtype"):
        kiln.scaled_mm(a, a.t(), sa, sa, out_dtype="bf16")


def test_binding_rejects_bad_arguments():
    a = kt.fp8_values((64, 64), torch.float8_e4m3fn)
    sa = kt.positive(())
    with pytest.raises(ValueError, match="scale_b"):
        kiln.scaled_mm(a, a.t(), sa, kt.positive((3,)))
    with pytest.raises(TypeError, match="float32"):
        kiln.scaled_mm(a, a.t(), sa, torch.ones((), dtype=torch.float16, device="cuda"))
    with pytest.raises(TypeError, match="fp8"):
        kiln.scaled_mm(torch.randn(64, 64, device="cuda", dtype=torch.float16), a.t(), sa, sa)
    with pytest.raises(ValueError, match="activation"):
        kiln.scaled_mm(a, a.t(), sa, sa, activation="tanh")
    with pytest.raises(ValueError, match="K="):
        kiln.mixed_mm(torch.randn(8, 32, device="cuda", dtype=torch.float16), kiln.prepack_b(a))
