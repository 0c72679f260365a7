"""The wgmma family's two epilogues give the same D: the TMA-store one (alpha and tensor scales, D mapped) and the
staged one (KILN_TMA_STORE=0 turns the map off; kiln_run reads it per call). Bit for bit, since both compute
acc * (alpha * sa * sb) in f32 and convert once, on shapes that stress the copy engine's clipping: partial tiles in M
and N (N a multiple of 8 so that D's rows are whole 16-byte units), one row, batches with a padded batch stride, and
every output type. Each kernel the query offers runs on both paths (the gate and untouched padding on each)."""
from __future__ import annotations

import os

import pytest

import kilntest as kt
from kilntest import DType, Layout, kiln, torch

pytestmark = pytest.mark.gpu

SHAPES = [(1000, 1000, 512), (129, 264, 128), (1, 520, 256), (4096, 8, 384), (3, 77, 136, 256), (2, 300, 1024, 640)]
OUT = [DType.BF16, DType.F16, DType.F32]


def _operands(shape):
    batch, m, n, k = kt.split_shape(shape)
    a = kt.randn_fp8(kt.mk(batch, m, k), torch.float8_e4m3fn, extra_rows=1 if batch else 0)
    b = kt.b_operand(k, n, torch.float8_e4m3fn, Layout.TN, batch, extra_rows=2 if batch else 0)
    return batch, m, n, a, b, kt.positive(()), kt.positive(())


def _run(algo, a, b, sa, sb, out, staged: bool):
    old = os.environ.get("KILN_TMA_STORE")
    os.environ["KILN_TMA_STORE"] = "0" if staged else "1"
    try:
        return kiln.scaled_mm(a, b, sa, sb, out=out, algo=algo)
    finally:
        if old is None:
            del os.environ["KILN_TMA_STORE"]
        else:
            os.environ["KILN_TMA_STORE"] = old


@pytest.mark.parametrize("d", OUT, ids=lambda d: d.name)
@pytest.mark.parametrize("shape", SHAPES, ids=kt.shape_id)
def test_tma_store_matches_staged(shape, d):
    combo = (DType.E4M3, DType.E4M3, d, Layout.TN, False)
    kt.require_combo(combo)
    batch, m, n, a, b, sa, sb = _operands(shape)
    ref = kt.reference(a, b, sa=sa, sb=sb)
    make_out = lambda: kt.poisoned(m, n, kt.tdt(d), batch)  # noqa: E731
    offered = kiln.query(kiln.scaled_mm, a, b, sa, sb, out=make_out(), k=kt.SWEEP_K)
    algos = [al for al in offered if "WGMMA" in al.name]
    if not algos:
        pytest.skip(f"no wgmma kernel offered for {kt.shape_id(shape)} -> {d.name}")
    for al in algos:
        what = f"{kt.shape_id(shape)} -> {d.name} {al.name}"
        outs = []
        for staged in (False, True):
            out = _run(al, a, b, sa, sb, make_out(), staged)
            kt.check(out, ref, kt.TOL_FP8, f"{what} staged={staged}")
            kt.untouched_outside(out, f"{what} staged={staged}")
            outs.append(out)
        itype = {2: torch.int16, 4: torch.int32}[outs[0].element_size()]
        assert torch.equal(outs[0].view(itype), outs[1].view(itype)), f"{what}: the two epilogues differ"
