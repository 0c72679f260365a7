#!/bin/bash
# Device probe: sm90_pipe_chain.yaml built once per chain length of the two-K-tile promotion loop (c0: as shipped;
# c4, c8: -DKILN_PROBE_PIPE_CHAIN=4 / 8), timed in two rounds in alternating order; prints one table (ab_table.py,
# base c0). Results under ${OUT:-/tmp}/pipe_chain.
. "$(dirname "$0")/rounds.sh" pipe_chain
PROBE_JOBS=5
probe_variants sm90_pipe_chain KILN_PROBE_PIPE_CHAIN "${CHAINS:-0 4 8}"
