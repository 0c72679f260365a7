#!/bin/bash
# Device (~4 minutes): main's full library (build-probe/full) against its sass_patch.py --mode switch copy
# (build-probe/full_sw) on attention, tuning/probes/attn_ab_libs.py in alternating processes (ABBA), and whether
# the two give bitwise-equal outputs (the patch changes scheduling hints only).
#   OUT=... bash tuning/probes/sass_yield_attn.sh
set -u
export PYTHONUNBUFFERED=1
for d in full full_sw; do
  mkdir -p /tmp/al_$d && python3 tuning/probes/unxz.py build-probe/$d/libkiln.so.xz /tmp/al_$d/libkiln.so || exit 1
done
r=0
for d in full full_sw full_sw full; do
  r=$((r + 1))
  KILN_LIBRARY=/tmp/al_$d/libkiln.so OUT=$OUT timeout 120 python3 tuning/probes/attn_ab_libs.py ${d}_r$r \
      > $OUT/attn_${d}_r$r.txt 2>&1
  echo "$d r$r rc=$?"
done
python3 - $OUT <<'PY'
import glob, re, statistics as st, sys, torch
d = sys.argv[1]
t = {}
for f in sorted(glob.glob(d + '/attn_*_r*.txt')):
    for line in open(f):
        m = re.match(r'(\S+)_r\d\s+(\S+)\s+kernel\s+([\d.]+)\s+default\s+([\d.]+)', line)
        if m:
            t.setdefault(m.group(2), {}).setdefault(m.group(1), []).append((float(m.group(3)), float(m.group(4))))
print('shape  kernel TFLOP/s full / full_sw (ratio sw/full)   default full / full_sw (ratio)')
for k, v in t.items():
    a = [st.mean(x[i] for x in v.get('full', [(0, 0)])) for i in (0, 1)]
    b = [st.mean(x[i] for x in v.get('full_sw', [(0, 0)])) for i in (0, 1)]
    print(k, '%.1f / %.1f (%.3f)   %.1f / %.1f (%.3f)' % (a[0], b[0], b[0] / a[0] if a[0] else 0, a[1], b[1],
                                                        b[1] / a[1] if a[1] else 0))
o1, o2 = torch.load(d + '/outs_full_r1.pt'), torch.load(d + '/outs_full_sw_r2.pt')
print('bitwise equal outputs:', all(torch.equal(o1[k], o2[k]) for k in o1), len(o1))
PY
rm -f $OUT/*.pt
