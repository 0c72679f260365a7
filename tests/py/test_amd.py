"""The AMD kernels, proven statically (there is no AMD GPU here): every kernel of a build has a code object whose
resources (from the compiler's kernel-resource-usage remarks, cross-checked against the code object's notes) show no
scratch or spills, LDS within the arch's limit and occupancy at least the YAML's `occ`; its disassembly has the intended
MFMA/WMMA instruction in the main loop, with as many global loads and LDS writes per K tile as the solution's read plan
says (for the prepacked-fp8-B kernels: B read as 16-byte vectors of bytes, no 16-bit global load and no store in the
loop, a byte-sized B tile in LDS). The parsers get unit tests on recorded tool output; one kernel is compiled here when
clang-19 is installed; the build checks read KILN_BUILD_DIR (test.sh sets it after building)."""
import math
import os
import re
import shutil
from pathlib import Path

import pytest

from kilngen import buildtools_amd as ba
from kilngen.attention import is_attention_name
from kilngen.model import AMD_INFO, ARCH_INFO, DTYPE_INFO, Arch, DType, Family, Kind, Vendor, decode

REPO = Path(__file__).resolve().parents[2]
CLANG = shutil.which("clang-19")
OBJDUMP = shutil.which("llvm-objdump-19")
BUILD = os.environ.get("KILN_BUILD_DIR")
AMD_ARCHS = [a for a in Arch if ARCH_INFO[a].vendor is Vendor.AMD]


# --- what a kernel's name says its code must contain ---------------------------------------------------------------

_FP8_NAME = {DType.E4M3FNUZ: "fp8", DType.E5M2FNUZ: "bf8", DType.E4M3: "fp8", DType.E5M2: "bf8"}


def expected_op(sol) -> str:
    """The matrix instruction's mnemonic as llvm-objdump prints it."""
    m, n, k = sol.mi
    t = sol.mma_type
    if sol.native_fp8:
        kind = "mfma" if sol.family is Family.MFMA else "wmma"
        return f"v_{kind}_f32_{m}x{n}x{k}_{_FP8_NAME[sol.problem.a]}_{_FP8_NAME[sol.problem.b]}"
    if sol.family is Family.WMMA:
        return f"v_wmma_f32_16x16x16_{t.value}"
    if AMD_INFO[sol.arch].matrix_isa == "cdna2":  # gfx90a spells them without the underscore, bf16 as the _1k form
        return f"v_mfma_f32_{m}x{n}x{k}{t.value}" + ("_1k" if t is DType.BF16 else "")
    return f"v_mfma_f32_{m}x{n}x{k}_{t.value}"


def mma_per_tile(sol) -> int:
    """Matrix instructions per K tile per wave."""
    return (sol.mt[0] // sol.wg[0] // sol.mi[0]) * (sol.mt[1] // sol.wg[1] // sol.mi[1]) * (sol.mt[2] // sol.mi[2])


def reads_per_thread(sol, operand: str) -> int:
    """Global reads of one K tile a thread issues (kiln_amd_lds.h ReadPlan, written out again)."""
    tile = sol.mt[0] if operand == "a" else sol.mt[1]
    dt = sol.problem.a if operand == "a" else sol.problem.b
    vw = sol.vwa if operand == "a" else sol.vwb
    total = tile * sol.mt[2] * DTYPE_INFO[dt].bytes // vw
    waves = sol.wg[0] * sol.wg[1]
    return math.ceil(total / waves / sol.wave) if sol.wsgr else math.ceil(total / sol.threads)


def per_tile(sol) -> dict:
    """Loop mix keys -> count per K tile: the wide global loads (reads of >= 4 bytes; narrower ones share their width
    with the byte-wise edge path) and the LDS writes of reads that keep their orientation. A block-scaled kernel's
    K tile also carries its scales (MT0 + MT1 floats, kiln_amd_gemm.h): one 4-byte load and LDS write per float."""
    out: dict = {}
    for op in ("a", "b"):
        vw = sol.vwa if op == "a" else sol.vwb
        if vw >= 4:
            out[f"gload{8 * vw}"] = out.get(f"gload{8 * vw}", 0) + reads_per_thread(sol, op)
        straight = sol.lds_unroll_major(op) == (op == "a" or sol.problem.layout.value == "TN")
        if straight:
            out[f"dswrite{8 * vw}"] = out.get(f"dswrite{8 * vw}", 0) + reads_per_thread(sol, op)
    if sol.problem.spec.block_scales:
        scales = math.ceil((sol.mt[0] + sol.mt[1]) / sol.threads)
        for key in ("gload32", "dswrite32"):
            out[key] = out.get(key, 0) + scales
    return out


def test_expected_ops_cover_every_committed_amd_kernel():
    from kilngen.schema import load_tree
    ops = {expected_op(s) for f in load_tree(REPO) for s in f.solutions if ARCH_INFO[s.arch].vendor is Vendor.AMD}
    assert {"v_mfma_f32_32x32x16_fp8_fp8", "v_mfma_f32_16x16x32_bf8_fp8", "v_mfma_f32_32x32x8f16",
            "v_mfma_f32_32x32x8bf16_1k", "v_mfma_f32_32x32x8_f16", "v_wmma_f32_16x16x16_f16",
            "v_wmma_f32_16x16x16_bf16", "v_wmma_f32_16x16x16_fp8_bf8"} <= ops


# --- the parsers, on recorded tool output --------------------------------------------------------------------------

REMARKS = """k.hip:3:1: remark: Function Name: kern [-Rpass-analysis=kernel-resource-usage]
k.hip:3:1: remark:     SGPRs: 70 [-Rpass-analysis=kernel-resource-usage]
k.hip:3:1: remark:     VGPRs: 83 [-Rpass-analysis=kernel-resource-usage]
k.hip:3:1: remark:     AGPRs: 128 [-Rpass-analysis=kernel-resource-usage]
k.hip:3:1: remark:     ScratchSize [bytes/lane]: 0 [-Rpass-analysis=kernel-resource-usage]
k.hip:3:1: remark:     Dynamic Stack: False [-Rpass-analysis=kernel-resource-usage]
k.hip:3:1: remark:     Occupancy [waves/SIMD]: 2 [-Rpass-analysis=kernel-resource-usage]
k.hip:3:1: remark:     SGPRs Spill: 0 [-Rpass-analysis=kernel-resource-usage]
k.hip:3:1: remark:     VGPRs Spill: 3 [-Rpass-analysis=kernel-resource-usage]
k.hip:3:1: remark:     LDS Size [bytes/block]: 512 [-Rpass-analysis=kernel-resource-usage]
k.hip:9:1: remark: Function Name: rdna [-Rpass-analysis=kernel-resource-usage]
k.hip:9:1: remark:     SGPRs: 2 [-Rpass-analysis=kernel-resource-usage]
k.hip:9:1: remark:     VGPRs: 17 [-Rpass-analysis=kernel-resource-usage]
k.hip:9:1: remark:     ScratchSize [bytes/lane]: 16 [-Rpass-analysis=kernel-resource-usage]
k.hip:9:1: remark:     Occupancy [waves/SIMD]: 16 [-Rpass-analysis=kernel-resource-usage]
"""

NOTES = """amdhsa.kernels:
  - .agpr_count:     128
    .args:
      - .offset:         0
        .name:           p
        .size:           184
    .group_segment_fixed_size: 512
    .name:           kern
    .private_segment_fixed_size: 0
    .sgpr_spill_count: 0
    .vgpr_spill_count: 3
  - .agpr_count:     0
    .group_segment_fixed_size: 0
    .name:           rdna
    .private_segment_fixed_size: 16
amdhsa.target:   amdgcn-amd-amdhsa--gfx942
"""


def test_parse_remarks():
    r = ba.parse_remarks(REMARKS)
    assert r["kern"] == {"agprs": 128, "sgprs": 70, "vgprs": 83, "scratch": 0, "occupancy_regs": 2, "sgpr_spill": 0,
                         "vgpr_spill": 3, "lds_static": 512}
    assert r["rdna"] == {"agprs": 0, "sgprs": 2, "vgprs": 17, "scratch": 16, "occupancy_regs": 16}


def test_parse_notes_skips_the_arguments():
    notes = ba.parse_notes(NOTES)
    assert notes == {"kern": {"agprs": 128, "lds_static": 512, "scratch": 0, "sgpr_spill": 0, "vgpr_spill": 3},
                     "rdna": {"agprs": 0, "lds_static": 0, "scratch": 16}}


DISASM = """
0000000000001600 <k>:
	s_load_dword s6, s[0:1], 0x10                              // 000000001600: C0020180 00000010
	s_cbranch_scc1 9                                           // 000000001604: BF850009 <k+0x24>
	global_load_dwordx4 v[8:11], v[6:7], off                   // 000000001608: DC5C9FF8 087F0006
	ds_write_b128 v1, v[8:11]                                  // 000000001610: D9BE0000 00000801
	ds_read2_b64 v[2:5], v1 offset1:8                          // 000000001618: D8EE0000 02000001
	v_mfma_f32_16x16x32_fp8_fp8 v[2:5], v[8:9], v[10:11], v[2:5]// 00000000161C: D3F30002 040A1508
	s_cbranch_scc0 65526                                       // 000000001620: BF84FFF6 <k+0x8>
	global_store_short v0, v1, s[4:5]                          // 000000001624: DC708000 00040100
	s_endpgm                                                   // 000000001628: BF810000

0000000000001700 <r>:
	global_load_b128 v[1:4], v0, s[0:1]                        // 000000001700: DC5C9FF8 087F0006
	ds_store_b8 v1, v0                                         // 000000001708: D8780000 00000001
	ds_load_2addr_b32 v[1:2], v0 offset1:4                      // 000000001710: D8780000 00000001
	v_wmma_f32_16x16x16_f16 v[1:8], v[9:16], v[17:24], v[1:8]  // 000000001718: CC404001 1C061309
	s_code_end                                                 // 000000001720: BF9F0000
"""


def test_disassembly_mix_and_main_loop():
    listing = ba.disassemble(DISASM)
    k = listing["k"]
    assert [i.op for i in k][:3] == ["s_load_dword", "s_cbranch_scc1", "global_load_dwordx4"]
    assert k[1].target == 0x1624 and k[6].target == 0x1608
    whole, loop = ba.mix(k), ba.mix(ba.main_loop(k))
    assert whole["gload128"] == 1 and whole["gstore16"] == 1 and whole["mfma"] == 1 and whole["dsread64"] == 2
    assert re.fullmatch(r"[0-9a-f]{16}", whole["sig"]) and whole["sig"] != loop["sig"]
    assert loop["insts"] == 5 and loop["mfma"] == 1 and loop["gload128"] == 1 and loop["gstore16"] == 0
    r = ba.mix(listing["r"])  # RDNA spellings count under the CDNA names
    assert r["gload128"] == 1 and r["dswrite8"] == 1 and r["dsread32"] == 2 and r["wmma"] == 1 and r["insts"] == 4
    assert ba.main_loop(listing["r"]) == []


def test_lds_occupancy():
    assert ba.lds_occupancy(Arch.GFX942, 32768, 4) == 2          # 2 workgroups of 4 waves on 4 SIMDs
    assert ba.lds_occupancy(Arch.GFX942, 65536, 4) == 1
    assert ba.lds_occupancy(Arch.GFX942, 0, 4) == 8
    assert ba.lds_occupancy(Arch.GFX942, 70000, 4) == 0
    assert ba.lds_occupancy(Arch.GFX1151, 49152, 8) == 4         # RDNA: 128 KiB per WGP
    assert ba.lds_occupancy(Arch.GFX1201, 65536, 2) == 1


def test_objdump_next_to_the_compiler():
    assert ba.objdump_for("/usr/bin/clang-19") == "/usr/bin/llvm-objdump-19"
    assert ba.objdump_for("/opt/rocm/bin/hipcc") == "/opt/rocm/llvm/bin/llvm-objdump"


# --- one kernel compiled here ----------------------------------------------------------------------------------------

def check_kernel(fields: dict, function: str):
    """The checks every AMD GEMM kernel's resources line must pass."""
    sol = decode(function)
    assert fields["scratch"] == fields["vgpr_spill"] == fields["sgpr_spill"] == "0", function
    assert int(fields["lds"]) == int(fields["lds_static"]) + sol.lds_bytes <= ARCH_INFO[sol.arch].lds_limit
    assert int(fields["occupancy"]) >= max(1, sol.occ) and int(fields["occ_target"]) == sol.occ
    assert fields["denorm32"] == "3", "f32 denormals must be kept (fp8 subnormals widen through f32)"
    assert fields["ops"] == expected_op(sol), f"{function}: {fields['ops']}"
    key = "loop_mfma" if sol.family is Family.MFMA else "loop_wmma"
    loop_mma, tile = int(fields[key]), mma_per_tile(sol)
    assert loop_mma > 0 and loop_mma % tile == 0, f"{function}: {loop_mma} matrix instructions in the main loop"
    tiles = loop_mma // tile  # K tiles the loop body computes (the body is unrolled by the buffer parity)
    for k, count in per_tile(sol).items():
        assert int(fields[f"loop_{k}"]) == tiles * count, f"{function}: loop {k} {fields[f'loop_{k}']}, want {count}"
    if sol.problem.b_prepacked:
        # B stays fp8 bytes: 16-byte global reads, a one-byte-per-value LDS tile, no 16-bit global load or any store
        # in the loop (no f16 copy of B is made).
        assert sol.vwb == 16 and sol.lds_shape("b")[:2] == (sol.mt[1], sol.mt[2]), "B rows in LDS: DepthU bytes"
        a16 = tiles * reads_per_thread(sol, "a") if sol.vwa == 2 else 0  # A read one f16 at a time
        assert fields["loop_gload16"] == str(a16), f"{function}: 16-bit global loads besides A's"
        assert all(fields[f"loop_gstore{w}"] == "0" for w in ba.WIDTHS), function


@pytest.mark.skipif(not (CLANG and OBJDUMP), reason="clang-19 / llvm-objdump-19 not installed (.ci/deps.sh installs "
                                                     "clang-19 lld-19 llvm-19)")
def test_reference_design_compiles_here(tmp_path):
    """The f16 x prepacked e4m3 WMMA kernel of gfx1151, compiled and checked without the build."""
    from kilngen.schema import load_file
    sol = load_file(REPO / "solutions" / "gfx1151" / "mixed_f16.yaml", REPO).solutions[0]
    source = REPO / "generated" / "gfx1151" / f"{sol.name}.hip"
    out, log = tmp_path / "k.co", tmp_path / "k.txt"
    assert ba.compile_kernel(Arch.GFX1151, CLANG, str(REPO / "device"), str(source), str(out), str(log),
                             OBJDUMP) == 0
    lines = [ba.parse_line(line) for line in log.read_text().splitlines()]
    assert [f["function"] for f in lines] == [sol.name]
    check_kernel(lines[0], sol.name)


# --- every AMD kernel of a build -------------------------------------------------------------------------------------

def built_lines() -> dict:
    """{function: fields} of every AMD resources file under KILN_BUILD_DIR."""
    out = {}
    for arch in AMD_ARCHS:
        for log in sorted(Path(BUILD or ".", "code", arch.value).glob("*.resources.txt")) if BUILD else ():
            for line in log.read_text().splitlines():
                fields = ba.parse_line(line)
                out[fields["function"]] = fields
    return out


LINES = built_lines()
GEMMS = sorted(f for f in LINES if not f.endswith("_reduce") and not is_attention_name(f))  # attention: test_attention_gen
needs_build = pytest.mark.skipif(not LINES, reason="no AMD kernels built: KILN_BUILD_DIR unset (test.sh sets it) or "
                                                   "no AMD compiler in the build")


def _cache(key: str) -> str:
    m = re.search(rf"^{key}:\w+=(.*)$", Path(BUILD, "CMakeCache.txt").read_text(), re.M)
    return m.group(1) if m else ""


@needs_build
def test_every_amd_kernel_of_the_built_archs_has_a_code_object():
    """CI builds every AMD kernel (KILN_CI_ALL_AMD), not only the ci subset."""
    text = (REPO / "generated" / "kernels.cmake").read_text()
    subset_only = _cache("KILN_CI_SUBSET") in ("ON", "TRUE", "1") and _cache("KILN_CI_ALL_AMD") in ("OFF", "FALSE", "0")
    for arch in AMD_ARCHS:
        folder = Path(BUILD, "code", arch.value)
        if not folder.is_dir():
            continue
        listed = re.search(rf"set\(KILN_KERNELS_{'CI_' if subset_only else ''}{arch.value}\n(.*?)\)", text, re.S)
        names = listed.group(1).split()
        assert names
        for name in names:
            assert (folder / f"{name}.co").is_file(), f"{arch.value}: no code object for {name}"
            assert name in LINES, f"{arch.value}: no resources for {name}"
            if not is_attention_name(name) and decode(name).gsu > 1:
                assert f"{name}_reduce" in LINES


@needs_build
@pytest.mark.parametrize("function", GEMMS)
def test_built_kernel(function):
    check_kernel(LINES[function], function)


@needs_build
def test_every_parameter_changes_the_emitted_code():
    """The params.yaml kernels (one variant per Tensile parameter value) differ pairwise in their instruction
    sequence: no parameter value is a no-op in the generated code."""
    from kilngen.schema import load_tree
    for sf in load_tree(REPO):
        if ARCH_INFO[sf.arch].vendor is not Vendor.AMD or not sf.source.endswith("/params.yaml"):
            continue
        sigs = {name: LINES[name]["sig"] for name in (s.name for s in sf.solutions) if name in LINES}
        if len(sigs) < len(sf.solutions):
            continue  # a CI subset build
        assert len(set(sigs.values())) == len(sigs), f"{sf.source}: two variants compile to the same instructions"


@needs_build
def test_reduce_kernels_are_clean():
    for function, fields in LINES.items():
        if function.endswith("_reduce"):
            assert fields["scratch"] == fields["vgpr_spill"] == fields["sgpr_spill"] == "0" and fields["lds"] == "0"
            assert fields["ops"] == "-"


@pytest.mark.skipif(not (CLANG and OBJDUMP), reason="clang-19 / llvm-objdump-19 not installed (.ci/deps.sh installs "
                                                     "clang-19 lld-19 llvm-19)")
def test_block_scaled_kernels_compile_here(tmp_path):
    """Every block-scaled fp8 kernel of gfx942 (fp8_block.yaml), compiled and checked without the build: no scratch or
    spills, LDS and occupancy, the fp8 MFMA in the main loop, and each K tile's scales read and written to LDS with it
    (per_tile); the split-K kernels' reduce kernels are clean."""
    from kilngen.schema import load_file
    sols = load_file(REPO / "solutions" / "gfx942" / "fp8_block.yaml", REPO).solutions
    assert sols and all(s.problem.kind is Kind.FP8_BLOCK for s in sols)
    assert {s.mt[0] for s in sols} >= {16, 64, 128}, "decode, mid and large tiles"
    for sol in sols:
        source = REPO / "generated" / "gfx942" / f"{sol.name}.hip"
        out, log = tmp_path / f"{sol.name}.co", tmp_path / f"{sol.name}.txt"
        assert ba.compile_kernel(Arch.GFX942, CLANG, str(REPO / "device"), str(source), str(out), str(log),
                                 OBJDUMP) == 0, log.read_text() if log.exists() else sol.name
        lines = {f["function"]: f for f in (ba.parse_line(x) for x in log.read_text().splitlines())}
        check_kernel(lines[sol.name], sol.name)
        assert int(lines[sol.name]["loop_gload32"]) > 0, f"{sol.name}: no scale reads in the main loop"
        if sol.gsu > 1:
            reduce = lines[f"{sol.name}_reduce"]
            assert reduce["scratch"] == reduce["vgpr_spill"] == reduce["sgpr_spill"] == "0" and reduce["lds"] == "0"


@pytest.mark.skipif(not (CLANG and OBJDUMP), reason="clang-19 / llvm-objdump-19 not installed (.ci/deps.sh installs "
                                                     "clang-19 lld-19 llvm-19)")
@pytest.mark.parametrize("source", ["fp8_grouped.yaml", "fp8_block_grouped.yaml"])
def test_grouped_kernels_compile_here(tmp_path, source):
    """Every grouped (MoE) kernel of gfx942, compiled and checked without the build: no scratch or spills, LDS and
    occupancy, the fp8 MFMA in the main loop with the read plan's loads and LDS writes per K tile (block-scaled: and
    their scales)."""
    from kilngen.schema import load_file
    sols = load_file(REPO / "solutions" / "gfx942" / source, REPO).solutions
    assert sols and all(s.problem.spec.grouped and s.gsu == 1 for s in sols)
    assert {s.mt[0] for s in sols} >= {32, 128} or {s.mt[0] for s in sols} >= {16, 128}, "small and large groups"
    for sol in sols:
        out, log = tmp_path / f"{sol.name}.co", tmp_path / f"{sol.name}.txt"
        assert ba.compile_kernel(Arch.GFX942, CLANG, str(REPO / "device"),
                                 str(REPO / "generated" / "gfx942" / f"{sol.name}.hip"), str(out), str(log),
                                 OBJDUMP) == 0, log.read_text() if log.exists() else sol.name
        lines = {f["function"]: f for f in (ba.parse_line(x) for x in log.read_text().splitlines())}
        assert list(lines) == [sol.name], "no split-K reduce kernel"
        check_kernel(lines[sol.name], sol.name)
        assert lines[sol.name]["ops"].endswith("_fp8_fp8"), lines[sol.name]["ops"]


FP8_MFMA_KINDS = (Kind.FP8_BLOCK, Kind.FP8_GROUPED, Kind.FP8_BLOCK_GROUPED)


def test_no_block_scaled_or_grouped_kernels_without_an_fp8_mfma():
    """gfx90a (CDNA2) has no fp8 MFMA: the generator refuses block-scaled and grouped solutions for it (bad_yaml/
    kind_block_gfx90a.yaml; rules._mfma_fp8_arch), so its library has none of these kernels and kiln_query answers
    NOT_SUPPORTED (test_block_scaled_host.py, test_grouped_host.py)."""
    from kilngen.schema import load_tree
    kinds = {(s.arch, s.problem.kind) for f in load_tree(REPO) for s in f.solutions}
    assert all((Arch.GFX942, k) in kinds for k in FP8_MFMA_KINDS)
    assert not any((arch, k) in kinds for arch in AMD_ARCHS if not ARCH_INFO[arch].fp8_mma for k in FP8_MFMA_KINDS)
