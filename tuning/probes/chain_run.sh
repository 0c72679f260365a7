#!/bin/bash
# Device probe: sm90_chain.yaml built once per split-pair chain length (-DKILN_PROBE_PAIR_CHAIN=1, 2, 4, 8; 1 is
# the loop that drains every K-tile), timed in two rounds in alternating order; prints one table (ab_table.py, base
# chain 1). Results under ${OUT:-/tmp}/chain.
. "$(dirname "$0")/rounds.sh" chain
PROBE_JOBS=4
probe_variants sm90_chain KILN_PROBE_PAIR_CHAIN "${CHAINS:-1 2 4 8}"
