# Sourced by the probe run scripts (wgm_run.sh, depth_run.sh, chain_run.sh) as `. rounds.sh NAME`: sets root (the
# repository) and out (${OUT:-/tmp}/NAME, where logs and rounds go), and gives the steps of a probe: build a probe YAML
# with the tune's build stage, time it with its bench stage.
set -u
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
out=${OUT:-/tmp}/$1
mkdir -p "$out"

# probe_build PROBE WORK LABEL [FLAGS]: builds tuning/probes/PROBE.yaml into WORK (NVCC_APPEND_FLAGS=FLAGS when given),
# log $out/build_LABEL.log; meant to run in the background, several at once.
probe_build() {
  local flags=${4:-}
  NVCC_APPEND_FLAGS="$flags" "$root/generator/kiln-gen" tune "$root/tuning/probes/$1.yaml" --stage build \
      --work "$2" --jobs "${PROBE_JOBS:-8}" > "$out/build_$3.log" 2>&1 || echo "build $3 failed"
}

# probe_bench PROBE WORK LABEL DEST: one round: times every candidate of WORK's build (kiln_bench, 30 iterations),
# log appended to $out/bench_LABEL.log, the round's results.json copied to $out/DEST.
probe_bench() {
  rm -f "$2/results.json"
  "$root/generator/kiln-gen" tune "$root/tuning/probes/$1.yaml" --stage bench --work "$2" --iters 30 \
      >> "$out/bench_$3.log" 2>&1 && cp "$2/results.json" "$out/$4"
}

# probe_variants PROBE MACRO VALUES: builds tuning/probes/PROBE.yaml once per value (-DMACRO=value; 0 builds it as
# shipped) into /tmp/PROBE_c<value>, times the builds in two rounds (the second in reverse order) and prints the
# table of the best times, base the first value (ab_table.py; $out/table.txt).
probe_variants() {
  local p=$1 macro=$2 values=$3 v r order flags rev
  for v in $values; do
    flags=""; [ "$v" != 0 ] && flags="-D$macro=$v"
    probe_build "$p" "/tmp/${p}_c$v" "c$v" "$flags" &
  done
  wait
  rev=$(echo $values | tr ' ' '\n' | tac | tr '\n' ' ')
  for r in 1 2; do
    order=$values; [ $r = 2 ] && order=$rev
    for v in $order; do probe_bench "$p" "/tmp/${p}_c$v" "c$v" "${p}_c${v}_r$r.json"; done
  done
  python3 "$root/tuning/probes/ab_table.py" "$out" "$p" -- $(for v in $values; do printf "c%s " "$v"; done) \
      | tee "$out/table.txt"
}
