# Sourced by the probe scripts that time packed builds with kiln_bench in rounds (block_scale_cost_run.sh,
# tma_group_run.sh). kb_rounds OUT "BUILDS" ROUNDS RUN: ROUNDS rounds over the builds, the order turned by one each
# round (A B C, B C A, ...); each step calls `RUN BUILD JSON` (a function of the script: one kiln_bench run writing
# JSON), its output in OUT/<build>_r<round>.txt, its JSON OUT/<build>_r<round>.json (kb_rounds.py reads them).
kb_rounds() {
  local out=$1 order=$2 rounds=$3 run=$4 r y
  for r in $(seq "$rounds"); do
    for y in $order; do
      "$run" "$y" "$out/${y}_r$r.json" > "$out/${y}_r$r.txt" 2>&1
      echo "$y r$r rc=$?"
    done
    order="$(echo $order | cut -d' ' -f2-) $(echo $order | cut -d' ' -f1)"  # rotate
  done
}
