"""The grouped GEMMs' tile walk (device/kiln_schedule.h, Schedule::of_group_index / group_has), compiled for the CPU
and run over random group sizes, tiles and persistent grid sizes (tests/emu/group_walk.cpp): every tile of every
group visited exactly once, with its rows, batch and B matrix, and nothing outside the groups. k-grouped problems
(GROUP_K): random K ends (empty, decreasing, negative, off the 128 grid, past K, a last end at K) over DepthU
16 .. 128, every (group, tile) once with the group's K tiles, A's batch and B's matrix 0 and D's batch the group."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CXX = shutil.which("clang++-19")


@pytest.mark.skipif(not CXX, reason="clang++-19 not installed (.ci/deps.sh installs it)")
def test_group_walk(tmp_path):
    exe = tmp_path / "group_walk"
    cmd = [CXX, "-std=c++20", "-O1", "-w", "-D__gfx942__", "-I", str(REPO / "tests" / "emu"), "-I",
           str(REPO / "device"), "-I", str(REPO / "runtime" / "include"), str(REPO / "tests" / "emu" / "group_walk.cpp"),
           "-lpthread", "-o", str(exe)]
    build = subprocess.run(cmd, capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-3000:]
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "0 failures" in run.stdout
