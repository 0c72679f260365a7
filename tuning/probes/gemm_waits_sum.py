#!/usr/bin/env python3
"""Summary of a KILN_PROBE_WAITS kiln_bench log (tuning/probes/gemm_waits_run.sh): the CTAs of the last launch,
whose records the shim prints at exit.

Each line: KWAIT cta C sm S g0 G g1 G cyc N prod W w1 W c0 W W W W c1 W W W W (globaltimer ns at the CTA's start
and end, its SM cycles, then mbarrier wait cycles of lane 0 of the producer warp, warp 1, and the consumer warps)."""
import statistics as st
import sys


def records(path):
    """The KWAIT records of a log, one a CTA (the shim keeps the last launch's)."""
    rows = []
    for line in open(path, errors="replace"):
        if not line.startswith("KWAIT"):
            continue
        f = line.split()
        rows.append(dict(cta=int(f[2]), sm=int(f[4]), g0=int(f[6]), g1=int(f[8]), cyc=int(f[10]), prod=int(f[12]),
                         w1=int(f[14]), c0=[int(x) for x in f[16:20]], c1=[int(x) for x in f[21:25]]))
    return rows


def main(path):
    L = records(path)
    if not L:
        print("  no KWAIT lines")
        return 0
    g0 = min(r["g0"] for r in L)
    span = (max(r["g1"] for r in L) - g0) / 1e3
    starts = [(r["g0"] - g0) / 1e3 for r in L]
    ends = [(r["g1"] - g0) / 1e3 for r in L]
    cyc = st.mean(r["cyc"] for r in L)
    prod = st.mean(r["prod"] for r in L)
    cons = st.mean(st.mean(r["c0"]) for r in L)
    print(f"  CTAs {len(L)}: span {span:.2f} us (CTA starts {min(starts):.2f}-{max(starts):.2f}, "
          f"ends {min(ends):.2f}-{max(ends):.2f}), CTA cycles {cyc:.0f} ({cyc / 1.98e3:.2f} us at 1.98 GHz)")
    busy = sorted(r["cyc"] - st.mean(r["c0"]) for r in L)
    print(f"  consumer busy (cycles less its waits): min {busy[0]:.0f} median {busy[len(busy) // 2]:.0f} max {busy[-1]:.0f}")
    print(f"  producer waits (empty) {prod:.0f} cyc ({prod / cyc:.0%}), consumer warp waits (full) {cons:.0f} cyc "
          f"({cons / cyc:.0%}), warp 1 {st.mean(r['w1'] for r in L):.0f}")
    if any(any(r["c1"]) for r in L):
        cons1 = st.mean(st.mean(r["c1"]) for r in L)
        print(f"  second consumer warpgroup's waits (full) {cons1:.0f} cyc ({cons1 / cyc:.0%})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
