"""Host-side timings of one call, shared by the host-overhead probes (attn_host_overhead.py, attn_host_parts.py,
host_overhead_moe.py):
  host_us(fn, n)  CPU microseconds a call while the GPU is kept busy by a queued sleep (~1 s), so that no call waits
                  on the device (keep n calls' launches under the launch queue's depth, ~1000);
  loop_us(fn, n)  CUDA events around n back-to-back calls with nothing queued ahead, per call: what a plain benchmark
                  loop reads (the larger of the host's and the GPU's time a call).
Both run 5 untimed calls first."""
import time

import torch


def _warm(fn):
    for _ in range(5):
        fn()
    torch.cuda.synchronize()


def host_us(fn, n: int) -> float:
    _warm(fn)
    torch.cuda._sleep(2_000_000_000)
    t = time.perf_counter()
    for _ in range(n):
        fn()
    dt = time.perf_counter() - t
    torch.cuda.synchronize()
    return dt / n * 1e6


def loop_us(fn, n: int) -> float:
    _warm(fn)
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(n):
        fn()
    b.record()
    torch.cuda.synchronize()
    return a.elapsed_time(b) / n * 1e3
