#!/usr/bin/env python3
"""Per kernel log of tuning/probes/mc_place_run.sh (KWAIT records: one a CTA of the last launch): how many SMs the
grid used, how the CTAs fall on the SMs' GPC-sized ranges, the spread of the CTAs' durations, and the waits.

    tar -xf place.tar -C /tmp/place && python3 tuning/probes/mc_place_sum.py /tmp/place/logs/*.txt
"""
import pathlib
import statistics as st
import sys

from gemm_waits_sum import records  # the KWAIT records (this folder)


def main(paths):
    for path in paths:
        rows = records(path)
        name = pathlib.Path(path).stem
        if not rows:
            print(f"{name}: no records")
            continue
        t0 = min(r["g0"] for r in rows)
        dur = sorted((r["g1"] - r["g0"]) / 1e3 for r in rows)
        span = (max(r["g1"] for r in rows) - t0) / 1e3
        starts = sorted((r["g0"] - t0) / 1e3 for r in rows)
        sms = sorted(r["sm"] for r in rows)
        # SM ids in blocks of 16 (a rough GPC-sized bucket; the real GPC map is not exposed)
        buckets = [0] * ((max(sms) // 16) + 1)
        for s in sms:
            buckets[s // 16] += 1
        pairs = {}
        for r in rows:
            pairs.setdefault(r["cta"] // 2, []).append(r["sm"])
        apart = [abs(v[0] - v[1]) for v in pairs.values() if len(v) == 2]
        prod = st.mean(r["prod"] / r["cyc"] for r in rows)
        cons = st.mean(st.mean(r["c0"]) / r["cyc"] for r in rows)
        print(f"{name}: {len(rows)} CTAs on {len(set(sms))} SMs (ids {sms[0]}-{sms[-1]}); span {span:.1f} us, "
              f"starts up to {starts[-1]:.1f} us; CTA us min {dur[0]:.1f} median {dur[len(dur) // 2]:.1f} "
              f"max {dur[-1]:.1f}; producer waits {prod:.0%}, consumer waits {cons:.0%}")
        print(f"    CTAs per 16 SM ids: {buckets}; SM id gap within CTA pairs (2b, 2b+1): "
              f"{'-' if not apart else f'median {st.median(apart)} max {max(apart)}'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
