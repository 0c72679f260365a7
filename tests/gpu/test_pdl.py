"""Programmatic dependent launch (run.c, launch_overlapped; kiln_gemm_wgmma.h, OVERLAP): a wgmma kernel may begin
while the stream's previous kernel still runs, so every chain below makes each call depend on the one before it
both ways: it reads the buffer the previous call wrote (read after write) and writes the buffer the previous call
read (write after read), with torch's own kernels (plain launches) between some of them. The chain runs back to back
with no synchronization, overlapped launches on (the default), several times, and must give the same bits as the
same calls made one at a time with a synchronize after each and KILN_PDL=0 (the same kernels: the selection does not
depend on either). The last value is also checked against a float64 reference of the chain."""
from __future__ import annotations

import os

import pytest

import kilntest as kt
from kilntest import DType, Layout, kiln, torch

pytestmark = pytest.mark.gpu

STEPS = 8


def _chain(step, x0, bufs, sync: bool):
    """Runs `step(i, src, dst)` STEPS times, src/dst alternating between bufs (x0 copied into bufs[0] first)."""
    bufs[0].copy_(x0)
    for i in range(STEPS):
        src, dst = bufs[i % 2], bufs[(i + 1) % 2]
        step(i, src, dst)
        if sync:
            torch.cuda.synchronize()
    return bufs[STEPS % 2].clone()


def _compare(step, x0, bufs, ref, tol, what):
    os.environ["KILN_PDL"] = "0"
    try:
        plain = _chain(step, x0, bufs, sync=True)
    finally:
        os.environ.pop("KILN_PDL", None)
    for rep in range(3):
        bufs[1].fill_(float("nan"))  # the buffers' old contents must never show through
        got = _chain(step, x0, bufs, sync=False)
        torch.cuda.synchronize()
        same = torch.equal(got.view(torch.int16), plain.view(torch.int16))
        assert same, (f"{what}: overlapped chain (run {rep}) differs from the synchronized one at "
                      f"{int((got != plain).sum())} of {got.numel()} elements")
    err = kt.rel_l2(plain, ref)
    assert err <= tol, f"{what}: relative L2 {err:.3e} against the float64 chain (tolerance {tol})"


@pytest.mark.parametrize("m", [1, 16, 200])
@pytest.mark.parametrize("dtype", [DType.BF16, DType.F16])
def test_gemm_chain(m, dtype):
    combo = (dtype, dtype, dtype, Layout.TN, False)
    kt.require_combo(combo)
    k = 1024
    td = kt.tdt(dtype)
    ws = [(torch.randn(k, k, device="cuda") / k ** 0.5).to(td) for _ in range(STEPS)]  # [N, K]: b = w.t() is TN
    x0 = torch.randn(m, k, device="cuda").to(td)
    bufs = [torch.empty(m, k, device="cuda", dtype=td) for _ in range(2)]

    def step(i, src, dst):
        kiln.gemm(src, ws[i].t(), out=dst)
        if i == 3:
            dst.mul_(0.5)  # a torch kernel (plain launch) between two overlapped ones, in place

    ref = x0.double()
    for i in range(STEPS):
        ref = ref @ ws[i].double().t()
        if i == 3:
            ref = ref * 0.5
    _compare(step, x0, bufs, ref, 3e-2, f"gemm {kt.name_of(dtype)} m={m}")


@pytest.mark.parametrize("m", [1, 16, 130])
def test_mixed_chain(m):
    """The decode case overlapped launches are for: f16 activations through fp8 weights, layer after layer."""
    combo = (DType.F16, DType.E4M3, DType.F16, Layout.TN, True)
    kt.require_combo(combo)
    k = 2048
    ws, packed, scales = [], [], []
    for _ in range(STEPS):
        w = torch.randn(k, k, device="cuda") / k ** 0.5
        s = (w.abs().amax(dim=1).clamp_min(1e-8) / 448.0).float()
        q = (w / s[:, None]).to(torch.float8_e4m3fn)
        ws.append(q.double() * s.double()[:, None])
        packed.append(kiln.prepack_b(q.t()))
        scales.append(s)
    bias = torch.randn(k, device="cuda", dtype=torch.float16) * 0.1
    x0 = torch.randn(m, k, device="cuda", dtype=torch.float16)
    bufs = [torch.empty(m, k, device="cuda", dtype=torch.float16) for _ in range(2)]

    def step(i, src, dst):
        kiln.mixed_mm(src, packed[i], scale_b=scales[i], bias=bias, out=dst)

    ref = x0.double()
    for i in range(STEPS):
        ref = ref @ ws[i].t() + bias.double()
    _compare(step, x0, bufs, ref, 3e-2, f"mixed m={m}")
