"""Every kernel of the device arch's solution table, forced with algo=: for each problem type the table lists, every
candidate kiln_query returns (all of them, not only the top KILN_TEST_TOPK) runs on a few probe shapes and passes the
gate. Then every kernel the table names for this arch must have been reached. (Named test_zz_ so that it runs last and
the coverage check also counts the kernels the other modules ran.)"""
from __future__ import annotations

import pytest

import kilntest as kt

import test_gemm
import test_mixed_mm
import test_scaled_mm

pytestmark = pytest.mark.gpu

PROBES = [(256, 256, 256), (333, 517, 1400), (1024, 1024, 1024), (2, 96, 160, 512)]
_swept = set()


def _runner(combo):
    a, b, _d, _lay, packed = combo
    if packed:
        return test_mixed_mm.run_mixed
    if a in test_scaled_mm.FP8:
        return test_scaled_mm.run_fp8
    return test_gemm.run_gemm


@pytest.mark.parametrize("combo", kt.all_claimed_combos(), ids=kt.combo_id)
def test_every_candidate(combo):
    if combo not in kt.claimed_combos(kt.arch()):
        pytest.skip(f"{kt.combo_id(combo)} is not in the table for {kt.arch()}")
    kt.require_combo(combo)
    run = _runner(combo)
    for shape in PROBES:
        run(shape, combo, algo="each")
        if run is test_scaled_mm.run_fp8:  # the fast-accumulation kernels run only for problems that allow it
            run(shape, combo, algo="each", fast=True)
    _swept.add(combo)


def test_every_table_kernel_reached():
    claimed = kt.claimed_combos(kt.arch())
    if not claimed:
        pytest.skip(f"no kernels named under {kt.GENERATED} for {kt.arch()}")
    if _swept != claimed:
        pytest.skip("the per-problem sweep did not run for every problem type (deselected or failed)")
    missing = sorted(kt.claimed_names(kt.arch()) - kt.EXERCISED)
    assert not missing, (f"{len(missing)} table kernels never ran (kiln_query never offered them for the probe "
                         f"shapes): " + ", ".join(missing))
