#!/usr/bin/env python3
"""Programmatic dependent launch, measured where it acts: chains of kiln calls that follow one another on a stream
with no event between them (a model's layers, CUDA graphs). bench_gemm and bench_w8 put events around every call, so
they time each kernel alone and show none of it.

For each shape: CHAIN calls, each on its own operand set (so that weights come from HBM, as a model's layers do),
between two events; the per-call mean over REPEATS chains, median. The same chain runs with KILN_PDL=1 and
KILN_PDL=0 (the runtime reads it at every launch), alternated, in one process; the cuBLAS chain (F.linear with f16
weights for the weight-only rows, torch._scaled_mm for the fp8 rows) is timed beside them.

    python3 bench/pdl_chain.py [--chain 16] [--repeats 30]

Prints one line per shape: us per call with and without, their ratio (> 1: overlapped launches are faster), and the
baseline's. Writes nothing.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_gemm as bg  # noqa: E402

torch, kiln = bg.torch, bg.kiln

DECODE = [(1, 8192, 8192), (16, 8192, 8192), (1, 4096, 14336), (16, 28672, 4096)]
FP8 = [(64, 2112, 7168), (128, 4096, 7168), (64, 7168, 2048)]


def chain_us(fn, sets, chain: int, repeats: int) -> float:
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(repeats)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(repeats)]
    for i in range(chain):  # warm-up
        fn(sets[i % len(sets)])
    for r in range(repeats):
        starts[r].record()
        for i in range(chain):
            fn(sets[i % len(sets)])
        ends[r].record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends)) * 1e3 / chain


def pdl_pair(fn, sets, chain: int, repeats: int) -> tuple:
    on, off = [], []
    for _ in range(3):  # alternated, so that clocks and thermals drift into both
        os.environ["KILN_PDL"] = "1"
        on.append(chain_us(fn, sets, chain, repeats))
        os.environ["KILN_PDL"] = "0"
        off.append(chain_us(fn, sets, chain, repeats))
    os.environ.pop("KILN_PDL", None)
    return statistics.median(on), statistics.median(off)


def decode_sets(m, n, k, count):
    sets = []
    for _ in range(count):
        w = torch.randn(n, k, device="cuda") * 0.05
        scale = (w.abs().amax(dim=1).clamp_min(1e-8) / 448.0).float()
        wq = (w / scale[:, None]).to(torch.float8_e4m3fn)
        sets.append({"x": torch.randn(m, k, device="cuda", dtype=torch.float16), "packed": kiln.prepack_b(wq.t()),
                     "scale": scale, "bias": torch.randn(n, device="cuda", dtype=torch.float16) * 0.1,
                     "w16": (wq.float() * scale[:, None]).half()})
        del w, wq
    return sets


def fp8_sets(m, n, k, count):
    one = torch.ones((), device="cuda")
    return [{"a": torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn),
             "b": torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn), "s": one} for _ in range(count)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--chain", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=30)
    args = ap.parse_args(argv)
    if torch is None or not torch.cuda.is_available():
        print("pdl_chain: needs torch with a GPU", file=sys.stderr)
        return 2
    print(f"{'shape':<28} {'PDL on us':>10} {'off us':>10} {'off/on':>7} {'cuBLAS us':>10}")
    for m, n, k in DECODE:
        sets = decode_sets(m, n, k, min(args.chain, bg.n_sets_for(n * k)))
        out = torch.empty(m, n, dtype=torch.float16, device="cuda")
        ours = lambda s: kiln.mixed_mm(s["x"], s["packed"], scale_b=s["scale"], bias=s["bias"], out=out)  # noqa
        theirs = lambda s: torch.nn.functional.linear(s["x"], s["w16"], s["bias"])  # noqa: E731
        on, off = pdl_pair(ours, sets, args.chain, args.repeats)
        base = chain_us(theirs, sets, args.chain, args.repeats)
        print(f"{'mixed ' + f'{m}x{n}x{k}':<28} {on:10.1f} {off:10.1f} {off / on:7.3f} {base:10.1f}")
        del sets
    for m, n, k in FP8:
        sets = fp8_sets(m, n, k, min(args.chain, bg.n_sets_for(n * k)))
        ours = lambda s: kiln.scaled_mm(s["a"], s["b"].t(), s["s"], s["s"], out_dtype=torch.bfloat16)  # noqa
        theirs = lambda s: torch._scaled_mm(s["a"], s["b"].t(), s["s"], s["s"], out_dtype=torch.bfloat16)  # noqa
        on, off = pdl_pair(ours, sets, args.chain, args.repeats)
        base = chain_us(theirs, sets, args.chain, args.repeats)
        print(f"{'fp8 ' + f'{m}x{n}x{k}':<28} {on:10.1f} {off:10.1f} {off / on:7.3f} {base:10.1f}")
        del sets
    return 0


if __name__ == "__main__":
    sys.exit(main())
