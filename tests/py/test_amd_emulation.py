"""The AMD kernels run on the CPU: each generated kernel source compiles for the host with tests/emu/amd_emu.h (AMD
builtins -> an emulator of the MFMA/WMMA lane layouts as the ISA documents give them, one OS thread per work-item,
real workgroup barriers, a lagging wave to expose missing ones) and must match a float64 reference on every element of
five problems: odd sizes with a K tail, batch 2, C, bias, per-row/column scales and GELU; M = 1 and K = one DepthU;
two tiles of M with SiLU; K = 0 (no K tiles: A and B are NULL, D = act(beta * C + bias)) with batch 2, C, bias and
ReLU, and K = 0 with alpha only (D = 0). Prepacked B comes from the runtime's kiln_prepack_b.

Block-scaled fp8 kernels (emulate.cpp: scales per row and 128-K group of A, per 128-column block or column of B, 2^-10
.. 2^10, against a reference that sums each group alone) run four more problems: N over several column blocks, K with a
partial last group, B's blocks 128 or 1 wide, A's scales M-major or K-major.

Grouped (MoE) kernels (emulate.cpp, MODE and INDEX arguments) run their own problems on the grid the runtime launches
(a bound on the walk's tiles, so workgroups past the last group start and must leave): contiguous groups with an empty
group, a 1-row group, groups that are not whole tiles, a decreasing offset (an empty group) and rows after the last
end; masked groups with counts 0, partial, above M and negative; tensor or per-row/column scales with a bias row per
group, block scales both ways round. D starts as NaN and every row outside the groups must still be NaN. k-grouped
problems (MODE 3, the MoE weight gradient: A [M, K] and B [N, K] one matrix each, D [GROUPS, M, N]) run on their
exact grid (GROUPS * tiles_m * tiles_n) with K ends that make empty groups (0, negative, a decrease, K again), a
128-column group, ends off the 128 grid (rounded down, the reference too), an end past K and a last group ending at a
K that is no multiple of 128, and K = 0; per-group row/column scales [GROUPS, M] and [GROUPS, N] with a bias row per
group, tensor scales, and block scales over all of K (group strides 0) with B's blocks 128 and 1 wide. Every element of
every D[g] is checked: an empty group's D[g] is act(bias), or 0, never NaN.

CI emulates every params.yaml variant, every block-scaled and grouped solution (of its file's first output type) and
the first and fallback solution of every other AMD solution file; KILN_EMU_ALL=1 emulates every AMD kernel."""
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kilngen.model import ARCH_INFO, Kind, Vendor, decode

REPO = Path(__file__).resolve().parents[2]
CXX = shutil.which("clang++-19")
CC = shutil.which("clang-19")
pytestmark = pytest.mark.skipif(not (CXX and CC), reason="clang-19 not installed (.ci/deps.sh installs it)")


def selected() -> list:
    from kilngen.schema import load_tree
    names = []
    for sf in load_tree(REPO):
        if ARCH_INFO[sf.arch].vendor is not Vendor.AMD:
            continue
        for li, logic in enumerate(sf.logics):
            for i, sol in enumerate(logic.solutions):
                every = os.environ.get("KILN_EMU_ALL") or sf.source.endswith("/params.yaml")
                # the emulator is the block-scaled and grouped kernels' only run here
                own = li == 0 and (sol.problem.spec.block_scales or sol.problem.spec.grouped)
                if every or own or (li == 0 and i in (0, logic.fallback)):
                    names.append(sol.name)
    return sorted(set(names))


KERNELS = selected() if CXX else []


def grouped_shapes(sol) -> list:
    """(M, N, K, GROUPS, ACT, EPILOGUE, SEED, MODE, *INDEX) of a grouped kernel (emulate.cpp)."""
    mt0, mt1, du = sol.mt
    # contiguous ends: empty, 1 row, a tile and a bit, a decreasing offset (empty), two tiles less 3; 9 rows after
    ends = [0, 1, mt0 + 8, mt0 + 4, 3 * mt0 + 5]
    t = ends[-1] + 9
    masked_m = mt0 + 13
    counts = [0, 5, masked_m + 40, mt0 + 1, -3]  # empty, partial, above M (M rows), a tile and 1, negative (empty)
    n, k = (259, 2 * du + 77) if sol.problem.spec.block_scales else (mt1 + 19, 3 * du + 26)
    # block scales: the seed's bits 4, 2, 8 pick 1-column B scales, K-major scale_a, K-major scale_b (emulate.cpp)
    out = [(t, n, k, 5, 2, 1, 8, 1, *ends), (t, n, k, 5, 0, 0, 6, 1, *ends),
           (2 * mt0 + 5, mt1, du, 2, 3, 1, 7, 1, 17, 2 * mt0 + 55),  # the last end past M: clamped to M
           (masked_m, n, k, 5, 0, 1, 2, 2, *counts), (masked_m, n, k, 5, 1, 0, 13, 2, *counts)]
    # k-grouped (MODE 3, the weight gradient): K ends over A [M, K] and B [N, K], D [5, M, N]; ends other than K are
    # rounded down to a multiple of 128. K = 3 * 128 + 77: the last group ends at K, off the 128 grid.
    kk = 3 * 128 + 77
    # empty, 128, an end off the grid (384 + 17 -> 384: 256 columns), a decrease (300 -> 256: empty), 77 to K
    k_ends = [0, 128, 384 + 17, 300, kk]
    # negative (empty), 218 -> 128, 128 again (empty), past K (-> K: 333 columns), K again (empty)
    k_ends2 = [-3, 128 + 90, 128, kk + 40, kk]
    km = mt0 + 5  # a partial second tile row
    # per-row/column scales per group and a bias row per group (block: B's scales 128x128, K-major), then tensor
    # scales and no bias (block: B's scales 1x128, K-major scale_a); K = 0: every group empty, D = act(bias), A and B
    # NULL
    out += [(km, n, kk, 5, 2, 1, 9, 3, *k_ends), (km, n, kk, 5, 0, 0, 6, 3, *k_ends2),
            (5, 7, 0, 3, 1, 1, 3, 3, 0, 128, 5)]
    return out


def shapes(name: str) -> list:
    sol = decode(name)
    if sol.problem.spec.grouped:
        return grouped_shapes(sol)
    mt0, mt1, du = sol.mt
    out = [(mt0 + 37, mt1 + 19, 3 * du + 26, 2, 2, 1, 11), (1, 7, du, 1, 0, 0, 5), (2 * mt0, mt1, 4 * du, 1, 3, 1, 3),
           (mt0 + 5, mt1 + 3, 0, 2, 1, 1, 17), (3, 5, 0, 1, 0, 0, 19)]
    if sol.problem.kind is Kind.FP8_BLOCK:
        # Block scales (emulate.cpp: seed & 4 picks 1-column B scales, seed & 2 a K-major scale_a, seed & 8 a K-major
        # scale_b): N over several 128-column blocks, K not a multiple of 128, each choice both ways.
        out += [(mt0 + 37, 301, 5 * du + 40, 1, 0, 1, 8), (mt0 + 37, 301, 5 * du + 40, 1, 0, 0, 6),
                (2 * mt0 + 3, 259, 2 * du + 77, 1, 1, 1, 2), (2 * mt0 + 3, 259, 2 * du + 77, 1, 0, 0, 12)]
    return out


def build_and_run(name: str, objects: list, out: Path) -> str:
    sol = decode(name)
    source = REPO / "generated" / sol.arch.value / f"{name}.hip"
    exe = out / name
    cmd = [CXX, "-std=c++20", "-O1", "-w", f"-D__{sol.arch.value}__", f"-DKILN_EMU_GSU={sol.gsu}",
           f'-DKILN_EMU_KERNEL_FILE="{source}"', f"-DKILN_EMU_KERNEL={name}", "-I", str(REPO / "tests" / "emu"),
           "-I", str(REPO / "device"), "-I", str(REPO / "runtime" / "include"),
           str(REPO / "tests" / "emu" / "emulate.cpp"), *objects, "-lpthread", "-o", str(exe)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        return f"compile failed: {proc.stderr[-2000:]}"
    report = []
    for shape in shapes(name):
        run = subprocess.run([str(exe), *map(str, shape)], capture_output=True, text=True, timeout=600)
        report.append(f"{shape[:4] if len(shape) == 7 else shape}: rc {run.returncode} {run.stdout.strip()} {run.stderr.strip()[-500:]}")
    return "\n".join(report)


def runtime_objects(out: Path) -> list:
    """The C runtime as libkiln holds it (every runtime/src file, the generated tables, no code objects): the emulator
    calls its fp8 conversions and kiln_prepack_b."""
    embed = out / "no_code_objects.c"
    (out / "no_code_objects.txt").write_text("")
    subprocess.run([sys.executable, str(REPO / "generator" / "kiln-gen"), "embed", "--list",
                    str(out / "no_code_objects.txt"), "--output", str(embed)], check=True)
    sources = [*sorted((REPO / "runtime" / "src").glob("*.c")), REPO / "generated" / "dispatch.c",
               REPO / "generated" / "attention.c", embed]
    objects = []
    for i, src in enumerate(sources):
        obj = out / f"rt{i}_{src.stem}.o"
        subprocess.run([CC, "-std=c11", "-O2", "-c", "-I", str(REPO / "runtime" / "include"), "-I",
                        str(REPO / "runtime" / "src"), "-I", str(REPO / "device" / "abi"), str(src), "-o", str(obj)],
                       check=True)
        objects.append(str(obj))
    return [*objects, "-ldl", "-lm"]


@pytest.fixture(scope="module")
def emulated(request, tmp_path_factory):
    # the kernels of the tests this session runs (-k "BG_ or BQG_" picks the grouped ones)
    mine = [getattr(item, "callspec", None) for item in request.session.items
            if getattr(item, "module", None) is request.module]
    names = sorted({c.params["name"] for c in mine if c is not None and "name" in c.params})
    out = tmp_path_factory.mktemp("emu")
    objects = runtime_objects(out)
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        futures = {name: pool.submit(build_and_run, name, objects, out) for name in names}
        return {name: f.result() for name, f in futures.items()}


def test_the_selection_covers_every_amd_arch_and_family():
    archs = {decode(n).arch for n in KERNELS}
    assert archs == {a for a in ARCH_INFO if ARCH_INFO[a].vendor is Vendor.AMD}
    assert len(KERNELS) >= 40


@pytest.mark.parametrize("name", KERNELS)
def test_kernel_matches_the_reference(emulated, name):
    report = emulated[name]
    lines = report.splitlines()
    # grouped kernels also print how many rows lie in a group ("rows R")
    assert len(lines) == len(shapes(name)) and all(re.search(r" rc 0 (rows [1-9]\d* )?max_rel_l2 ", line)
                                                   for line in lines), report
    for line in lines:
        assert float(re.search(r"max_rel_l2 (\S+)", line).group(1)) <= 1e-2
