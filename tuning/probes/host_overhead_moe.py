"""Host time of kiln.block_scaled_mm and kiln.grouped_mm against their torch counterparts (cuBLASLt blockwise
torch._scaled_mm, torch._scaled_grouped_mm rowwise), and what a plain timing loop then sees, on small MoE shapes whose
kernels take tens of microseconds. Microseconds a call:
  host  CPU time of a call while the GPU is kept busy by a queued sleep (nothing waits on the device);
  loop  CUDA events around N back-to-back calls, nothing queued ahead, divided by N;
  gpu   bench_gemm.time_fn (events around each call, queued behind a GPU sleep: the kernels alone).
    KILN_LIBRARY=<libkiln.so> python3 tuning/probes/host_overhead_moe.py"""
import sys

import torch

sys.path.insert(0, "runtime/python")
sys.path.insert(0, "bench")
sys.path.insert(0, "tuning/probes")
import kiln  # noqa: E402
from host_timing import host_us, loop_us  # noqa: E402
import bench_moe as bm  # noqa: E402
import moe_grouped as mg  # noqa: E402
from bench_gemm import time_fn  # noqa: E402

N = 200
print(torch.cuda.get_device_name(), flush=True)




def row(label, sides):
    cells = []
    for name, fn in sides:
        try:
            cells.append(f"{name} host {host_us(fn, N):6.1f} loop {loop_us(fn, N):7.1f} gpu "
                         f"{time_fn(lambda _: fn(), [None], 5, 200, 0.5)['median_ms'] * 1e3:7.1f}")
        except Exception as exc:  # noqa: BLE001 - a side torch does not take: say so, keep the others
            cells.append(f"{name} error {type(exc).__name__}: {str(exc).splitlines()[0][:80]}")
    print(f"{label:24s} " + "  ".join(cells), flush=True)


for m, n, k in ((64, 2112, 7168), (128, 7168, 2048), (64, 7168, 2048)):
    s = bm.block_make(m, n, k)
    bm.pick_torch_layout([s], None)
    row(f"block {m}x{n}x{k}", [("kiln", lambda: kiln.block_scaled_mm(s["a"], s["b"], s["sa"], s["sb"])),
                               ("cublaslt", lambda: bm.torch_blockwise(s))])
for part, g, m, n, k in (("masked", 4, 256, 4096, 7168), ("masked", 8, 64, 2048, 2048),
                         ("contiguous", 8, 128, 4096, 2048), ("contiguous", 32, 32, 2048, 2048)):
    masked = part == "masked"
    spec = bm.Spec(part, m, n, k, g)
    blk = mg.make(spec, masked, "block", kiln, torch)
    rw = mg.make(spec, masked, "row", kiln, torch)
    row(f"{part} {g}x{m}x{n}x{k}",
        [("kiln_block", lambda: kiln.grouped_mm(blk["a"], blk["b"], scale_a=blk["sa"], scale_b=blk["sb"],
                                                **mg._kw(blk, masked))),
         ("kiln_row", lambda: kiln.grouped_mm(rw["a"], rw["b"], scale_a=rw["sa"], scale_b=rw["sb"],
                                              **mg._kw(rw, masked))),
         ("torch_row", lambda: mg.torch_grouped(rw, masked, torch))])
