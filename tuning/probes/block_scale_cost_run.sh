#!/bin/bash
# Device: what the block-scaled 128x128 tile's scales cost. Times main's block kernel (block), builds of it from
# trees with tuning/patches/block_scale_probes.patch applied (timing only) and the promoted fp8 twin (fp8), each
# <name>.so.xz in $PACK (default build-probe/bgap_pack, as block_gap_run.sh; kiln_bench from there too):
#   block_ns   NVCC_APPEND_FLAGS=-DKILN_PROBE_NOSCALE=1: the consumers read no scales (scale 1, the promotion an add);
#   block_np   -DKILN_PROBE_NOSCALE=2: nor does the producer copy any;
#   block_npr  -DKILN_PROBE_NOSCALE=2 -DKILN_PROBE_PLAIN_RELEASE: and release_read gives the stage back as release
#              does, without membar.cta and the warp sync;
#   block_ord  no macro: a tree with the scale-order patch (readable at bdec311; deleted after its timing),
#              the producer issuing the scale copies after the operands' (results right);
#   block_nsb  -DKILN_PROBE_NOCOPY=1: no copy of B's scales (16 bytes a stage), the consumers reading stale ones;
#   block_nsa  -DKILN_PROBE_NOCOPY=2: no copy of A's (528 bytes a stage), likewise (both fail the check: timing only).
#   block_rel  -DKILN_PROBE_PLAIN_RELEASE alone: the scales copied and read, the stage given back without membar.cta
#              and the warp sync (may race: timing only; not in the default list, VARIANTS names it).
#   block_bg   -DKILN_PROBE_NOCOPY=1 -DKILN_PROBE_B_GLOBAL: no B-scale copy; each consumer reads its B scales of a
#              K-tile pair from global memory (__ldg) before waiting for the pair's stages (results right; not in the
#              default list).
#   block_c4x  -DKILN_PROBE_NOCOPY=3: both scale copies on every 4th K-tile only (the consumers read stale ones
#              between); block_c2x  =4: on every 2nd (timing only).
#   block_u / fp8_u  a tree whose kernels take the warpgroup index through a warp broadcast (uniform), no macro.
#   block_pd / fp8_pd  -DKILN_PROBE_PREDESC: issue_pair computes the pair's wgmma descriptor words before it waits
#              for the pair's stages (results right; the fp8 twin's pr 1 loop shares issue_pair).
#   block_far  -DKILN_PROBE_ACQREL_FENCE: release_read's membar.cta (fence.sc.cta) as fence.acq_rel.cta;
#   block_pdfar  both (results right).
# Builds named fp8* run the promoted fp8 kernel, the rest the block-scaled one (block_pair_kernel.sh).
# each built with  generator/kiln-gen tune tuning/probes/block_gap_block.yaml --stage build --work build-probe/bgap_<v>
# and packed as xz of build/libkiln.so.0.1.0. kiln_bench's block scales are 0.5 and 2.0 everywhere, so the scale-1
# probes pass its check too. kiln_bench cold L2, every run checked, ROUNDS rounds in rotated orders, then a table of
# means and of block's time over each (above 1: block slower).
#   VARIANTS="block_ns block_np" ROUNDS=2 OUT=... bash tuning/probes/block_scale_cost_run.sh
set -u
out=${OUT:-/tmp}/scost; mkdir -p $out
pack=${PACK:-build-probe/bgap_pack}
vs="block ${VARIANTS-block_ns block_np block_npr block_ord block_nsb block_nsa} fp8"
for d in $vs; do mkdir -p /tmp/sc_$d && python3 tuning/probes/unxz.py $pack/$d.so.xz /tmp/sc_$d/libkiln.so.0 || exit 1; done
. tuning/probes/block_pair_kernel.sh
S=${SIZES:-4096x7168x16384,4096x4096x7168,2048x7168x2048,4096x2112x7168,6144x24576x1536}
. tuning/probes/kb_rounds.sh
run_build() {
  pair_kernel "$1"
  LD_LIBRARY_PATH=/tmp/sc_$1 timeout 200 $pack/kiln_bench --a e4m3 --b e4m3 --d bf16 --layout TN $F --sizes $S \
      --solutions $K --iters 30 --warmup 5 --json "$2"
}
kb_rounds $out "$vs" ${ROUNDS:-2} run_build
python3 - $out $vs <<'PY'
import statistics as st, sys
sys.path.insert(0, 'tuning/probes')
from kb_rounds import load
d, ys = sys.argv[1], sys.argv[2:]
t = load(d, lambda r: '%sx%sx%s' % (r['m'], r['n'], r['k']))
print('size', *ys, *['block/' + y for y in ys[1:]], '(* a failed check: stale scales, timing only)')
for k, v in t.items():
    m = {y: st.mean(ms for ms, _ in v[y]) for y in ys if y in v}
    bad = {y for y in m if not all(ok for _, ok in v[y])}
    print(k, *['%.4f%s' % (m[y], '*' if y in bad else '') if y in m else '-' for y in ys],
          *['%.3f' % (m['block'] / m[y]) if y in m and 'block' in m else '-' for y in ys[1:]])
PY
