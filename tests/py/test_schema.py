"""The YAML front end: every bad file in bad_yaml/ fails with its expected message; good files load as intended.

Each tests/py/bad_yaml/*.yaml breaks one thing; its first line is `# expect: <message>`, the exact SchemaError
text when loaded with tests/py as the root (so sources read `bad_yaml/<file>.yaml`).
"""
import dataclasses
import re
import textwrap
from pathlib import Path

import pytest

from kilngen import schema
from kilngen.model import ARCH_INFO, FAMILIES, KIND_INFO, Arch, DType, Family, Kind, Layout, Problem, Vendor
from kilngen.schema import SchemaError, load_file, load_tree

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
BAD = sorted((HERE / "bad_yaml").glob("*.yaml"))


def expectation(path: Path) -> str:
    first = path.open("rb").readline().decode().rstrip("\n")
    assert first.startswith("# expect: "), f"{path.name}: first line must be '# expect: <message>'"
    return first[len("# expect: "):]


def test_corpus_is_large_enough():
    assert len(BAD) >= 30


@pytest.mark.parametrize("path", BAD, ids=[p.stem for p in BAD])
def test_bad_yaml(path):
    with pytest.raises(SchemaError) as info:
        load_file(path, HERE)
    assert str(info.value) == expectation(path)


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


FP8 = """\
    schema: 1
    arch: sm90
    family: mma
    problem:
      a: [e4m3, e5m2]
      b: e4m3
      d: [bf16, f32]
      layout: TN
    defaults: {pgr: 3, lxs: 0}
    solutions:
      - {mt: [128, 128, 64], wg: [2, 2], pgr: 1}
      - fork:
          mt: [[128, 256, 64], [64, 128, 128]]
          wgm: [4, 1, 16]
        with: {wg: [2, 4], pgr: 2}
      - {mt: [64, 64, 64], wg: [1, 1], mi: [16, 8, 16]}
    selection:
      exact:
        - {size: [4096, 4096, 4096], solution: 2}
        - {size: [1, 8192, 8192], solution: 7}
      distance: linear_mnk
      fallback: 7
"""


@pytest.fixture
def fp8(tmp_path):
    return load_file(write(tmp_path, "solutions/sm90/fp8.yaml", FP8), tmp_path)


def test_fork_expands_in_key_order(fp8):
    sols = fp8.logics[0].solutions
    assert len(sols) == 1 + 2 * 3 + 1
    assert [(s.mt, s.wgm) for s in sols[1:7]] == [
        ((128, 256, 64), 4), ((128, 256, 64), 1), ((128, 256, 64), 16),
        ((64, 128, 128), 4), ((64, 128, 128), 1), ((64, 128, 128), 16)]
    assert all(s.wg == (2, 4) for s in sols[1:7])
    assert fp8.lines == (11, 12, 12, 12, 12, 12, 12, 16)


def test_values_come_from_entry_then_with_then_defaults_then_builtin(fp8):
    first, forked, last = fp8.logics[0].solutions[0], fp8.logics[0].solutions[1], fp8.logics[0].solutions[7]
    assert first.pgr == 1 and forked.pgr == 2 and last.pgr == 3          # entry, with, defaults
    assert {s.lxs for s in fp8.solutions} == {0}                          # defaults
    assert first.wgm == 8 and first.vwa == 16 and first.gsu == 1          # built-in
    assert first.mi == (16, 8, 32) and last.mi == (16, 8, 16)             # fp8 mma default, explicit


def test_problem_product_and_logics(fp8):
    expect = [Problem(Kind.FP8_SCALED, a, DType.E4M3, d, Layout.TN)
              for a in (DType.E4M3, DType.E5M2) for d in (DType.BF16, DType.F32)]
    assert list(fp8.problems) == expect
    assert [lg.problem for lg in fp8.logics] == expect
    for logic in fp8.logics:
        assert logic.source == "solutions/sm90/fp8.yaml" and logic.arch is Arch.SM90
        assert all(s.problem == logic.problem and s.arch is Arch.SM90 and s.family is Family.MMA
                   for s in logic.solutions)
        assert logic.exact == ((4096, 4096, 4096, 2), (1, 8192, 8192, 7))
        assert logic.distance == "linear_mnk" and logic.fallback == 7
    assert len(fp8.solutions) == 4 * 8
    assert len({s.name for s in fp8.solutions}) == 32


def test_ci_defaults_to_fallback(fp8, tmp_path):
    assert fp8.ci == frozenset({7})
    explicit = load_file(write(tmp_path, "solutions/sm90/ci.yaml", FP8 + "    ci: [0, 3]\n"), tmp_path)
    assert explicit.ci == frozenset({0, 3})


def test_objects_are_frozen(fp8):
    with pytest.raises(dataclasses.FrozenInstanceError):
        fp8.ci = frozenset()
    with pytest.raises(dataclasses.FrozenInstanceError):
        fp8.logics[0].fallback = 0
    assert isinstance(fp8.logics[0].solutions[0].mt, tuple)


def mixed(arch="sm90"):
    return f"""\
        schema: 1
        arch: {arch}
        family: mma
        problem: {{kind: mixed_w8, a: [f16, bf16], b: e4m3, d: f16, layout: TN}}
        solutions:
          - {{mt: [128, 128, 64], wg: [2, 2]}}
        selection: {{distance: log_mnk, fallback: 0}}
    """


def test_mi_default_follows_operands_and_arch(tmp_path):
    assert load_file(write(tmp_path, "m.yaml", mixed()), tmp_path).solutions[0].mi == (16, 8, 16)
    sm80 = FP8.replace("sm90", "sm80").replace(", mi: [16, 8, 16]", "")
    assert {s.mi for s in load_file(write(tmp_path, "a.yaml", sm80), tmp_path).solutions} == {(16, 8, 16)}
    assert schema.default_mi(Arch.SM89, DType.E5M2, DType.E4M3) == (16, 8, 32)
    assert schema.default_mi(Arch.SM89, DType.BF16, DType.E4M3) == (16, 8, 16)


def test_mixed_problem_names_are_prepacked(tmp_path):
    sf = load_file(write(tmp_path, "m.yaml", mixed()), tmp_path)
    assert [p.kind for p in sf.problems] == [Kind.MIXED_W8, Kind.MIXED_W8]
    assert sf.solutions[0].name.startswith("Cijk_Alik_Bljk_HF8HP_MT128x128x64_")


def test_load_tree_sorted_and_duplicates_across_files(tmp_path):
    write(tmp_path, "solutions/sm90/b.yaml", mixed())
    write(tmp_path, "solutions/sm89/z.yaml", mixed("sm89"))
    write(tmp_path, "solutions/sm90/a.yaml", FP8)
    write(tmp_path, "solutions/sm90/notes.txt", "not yaml")
    assert [f.source for f in load_tree(tmp_path)] == [
        "solutions/sm89/z.yaml", "solutions/sm90/a.yaml", "solutions/sm90/b.yaml"]
    write(tmp_path, "solutions/sm90/c.yaml", mixed().replace("mixed_w8, a: [f16, bf16]", "mixed_w8, a: bf16"))
    with pytest.raises(SchemaError) as info:
        load_tree(tmp_path)
    assert str(info.value) == ("solutions/sm90/c.yaml:6: solutions: kernel "
                               "Cijk_Alik_Bljk_BF8HP_MT128x128x64_WG2x2_MI16x8x16_PGR2_PLR0_SU0_SUS0_SUM0_LPA0_LPB0_"
                               "LXS1_GSU1_WGM8_VWA16_VWB16_LDSB0_TLDS1_LBSPP0_WSGR0_OCC0_PK0_PR0_MC0_SAB0_MMA_SM90 is also defined in "
                               "solutions/sm90/b.yaml:6")


def test_arch_must_match_its_folder(tmp_path):
    with pytest.raises(SchemaError) as info:
        load_file(write(tmp_path, "solutions/sm89/fp8.yaml", FP8), tmp_path)
    assert str(info.value) == "solutions/sm89/fp8.yaml:2: arch: sm90 in a file under solutions/sm89/"


@pytest.mark.parametrize("arch,dtype,message", [
    ("gfx942", "e4m3", "e4m3 is an OCP fp8 format; gfx942 takes FNUZ e4m3fnuz/e5m2fnuz only"),
    ("gfx90a", "e5m2", "e5m2 is an OCP fp8 format; gfx90a takes FNUZ e4m3fnuz/e5m2fnuz only"),
    ("gfx1201", "e4m3fnuz", "e4m3fnuz is an FNUZ fp8 format; gfx1201 takes OCP e4m3/e5m2 only"),
    ("gfx1151", "e5m2fnuz", "e5m2fnuz is an FNUZ fp8 format; gfx1151 takes OCP e4m3/e5m2 only"),
])
def test_fp8_formats_on_amd(tmp_path, arch, dtype, message):
    family = ARCH_INFO[Arch(arch)].family.value
    text = (FP8.replace("arch: sm90", f"arch: {arch}").replace("family: mma", f"family: {family}")
            .replace("a: [e4m3, e5m2]", f"a: {dtype}"))
    with pytest.raises(SchemaError) as info:
        load_file(write(tmp_path, "x.yaml", text), tmp_path)
    assert str(info.value) == f"x.yaml:5: problem.a: {message}"


def amd(arch, family, problem, solutions, defaults="{}"):
    return f"""\
        schema: 1
        arch: {arch}
        family: {family}
        problem: {problem}
        defaults: {defaults}
        solutions:
          - {solutions}
        selection: {{distance: log_mnk, fallback: 0}}
    """


def test_fnuz_fp8_mfma_on_gfx942(tmp_path):
    text = amd("gfx942", "mfma", "{a: e4m3fnuz, b: e5m2fnuz, d: f16, layout: TN}", "{mt: [128, 128, 64], wg: [2, 2]}")
    sf = load_file(write(tmp_path, "x.yaml", text), tmp_path)
    sol = sf.solutions[0]
    assert sf.problems == (Problem(Kind.FP8_SCALED, DType.E4M3FNUZ, DType.E5M2FNUZ, DType.F16, Layout.TN),)
    assert sol.mi == (32, 32, 16) and sol.native_fp8 and not sol.upcast and sol.threads == 256
    assert sol.lds_bytes == 2 * 2 * 128 * 64 <= ARCH_INFO[Arch.GFX942].lds_limit
    assert sol.name.endswith("_LDSB0_TLDS1_LBSPP0_WSGR0_OCC0_PK0_PR0_MC0_SAB0_MFMA_GFX942")


@pytest.mark.parametrize("arch,family,a,b,mi,native", [
    ("gfx942", "mfma", "e4m3fnuz", "e4m3fnuz", (32, 32, 16), True),
    ("gfx90a", "mfma", "e4m3fnuz", "e5m2fnuz", (32, 32, 8), False),   # no fp8 MFMA: widened to f16
    ("gfx942", "mfma", "f16", "e4m3fnuz", (32, 32, 8), False),        # mixed_w8
    ("gfx1201", "wmma", "e5m2", "e4m3", (16, 16, 16), True),
    ("gfx1151", "wmma", "e4m3", "e4m3", (16, 16, 16), False),         # no fp8 WMMA: widened
    ("gfx1151", "wmma", "bf16", "e5m2", (16, 16, 16), False),
])
def test_amd_default_mi_and_widening(tmp_path, arch, family, a, b, mi, native):
    kind = "mixed_w8" if a in ("f16", "bf16") else "fp8_scaled"
    d = a if kind == "mixed_w8" else "bf16"
    text = amd(arch, family, f"{{kind: {kind}, a: {a}, b: {b}, d: {d}, layout: TN}}", "{mt: [64, 64, 64], wg: [2, 2]}")
    sol = load_file(write(tmp_path, "x.yaml", text), tmp_path).solutions[0]
    assert sol.mi == mi and sol.native_fp8 is native and sol.upcast is not native
    assert sol.mma_type.value == (a if native else "bf16" if a == "bf16" else "f16")


def test_amd_lds_layouts(tmp_path):
    """Two LDS buffers behind the VGPR prefetch, one without it or with 1LDSBuffer; TransposeLDS 0 stores K-major
    operands as DepthU rows; LdsBlockSizePerPad pads per block instead of per row."""
    text = amd("gfx942", "mfma", "{a: f16, b: f16, d: f16, layout: [TN, NN]}", "{mt: [128, 64, 32], wg: [2, 2]}",
               "{lxs: 0}")
    tn, nn = load_file(write(tmp_path, "x.yaml", text), tmp_path).solutions
    assert tn.stages == 2 and tn.lds_bytes == 2 * (128 + 64) * 32 * 2
    assert dataclasses.replace(tn, pgr=0).stages == 1 and dataclasses.replace(tn, ldsb=1).stages == 1
    assert tn.lds_shape("a") == (128, 64, 0) and nn.lds_shape("b") == (32, 128, 0)
    t0 = dataclasses.replace(tn, tlds=0, lpa=16)
    assert t0.lds_shape("a") == (32, 256, 16) and t0.lds_tile_bytes("a") == 32 * (256 + 16)
    blocks = dataclasses.replace(tn, lpa=16, lbspp=256)
    assert blocks.lds_tile_bytes("a") == 128 * 64 + (128 * 64 // 256) * 16
    assert schema.check(dataclasses.replace(tn, ldsb=1)) is None


def test_mma_takes_only_the_defaults_of_the_amd_parameters(fp8):
    sol = fp8.solutions[0]
    assert (sol.ldsb, sol.tlds, sol.lbspp, sol.wsgr, sol.occ) == (0, 1, 0, 0, 0)
    for field, value in (("ldsb", 1), ("tlds", 0), ("lbspp", 128), ("wsgr", 1), ("occ", 2)):
        field_, why = schema.check(dataclasses.replace(sol, **{field: value}))
        assert field_ == field and why.startswith("mma family ") and why.endswith(f"{field} must be "
                                                                                    f"{getattr(sol, field)}")


def test_committed_amd_solutions_cover_every_amd_arch():
    files = load_tree(REPO)
    archs = {sf.arch for sf in files if ARCH_INFO[sf.arch].vendor is Vendor.AMD}
    assert archs == {a for a in Arch if ARCH_INFO[a].vendor is Vendor.AMD}
    kinds = {(sf.arch, p.kind) for sf in files for p in sf.problems}
    for arch in archs:  # every kind its families implement (block-scaled and grouped fp8 where the arch has an fp8 MFMA)
        implemented = {k for f in ARCH_INFO[arch].families for k in FAMILIES[f].kinds
                       if not (KIND_INFO[k].block_scales or KIND_INFO[k].grouped) or ARCH_INFO[arch].fp8_mma}
        assert {(arch, k) for k in implemented} <= kinds, arch
    assert all(sf.ci < frozenset(range(len(sf.lines))) or len(sf.lines) == 1 for sf in files
               if ARCH_INFO[sf.arch].vendor is Vendor.AMD), "every AMD file names a ci subset"


def test_gemm_takes_both_layouts(tmp_path):
    text = mixed().replace("kind: mixed_w8, a: [f16, bf16], b: e4m3, d: f16, layout: TN",
                           "kind: gemm, a: bf16, b: bf16, d: [bf16, f32], layout: [TN, NN]")
    sf = load_file(write(tmp_path, "g.yaml", text), tmp_path)
    assert [(p.d, p.layout) for p in sf.problems] == [
        (DType.BF16, Layout.TN), (DType.BF16, Layout.NN), (DType.F32, Layout.TN), (DType.F32, Layout.NN)]
    assert sf.solutions[0].mma_type is DType.BF16


def test_check_accepts_every_loaded_solution(fp8):
    assert all(schema.check(s) is None for s in fp8.solutions)
    broken = dataclasses.replace(fp8.solutions[0], pgr=16)
    assert schema.check(broken) == ("pgr", "16 is not in 0..15")


def test_docs_example_loads(tmp_path):
    doc = (REPO / "docs" / "yaml.md").read_text()
    example = re.search(r"```yaml\n(.*?)```", doc, re.S).group(1)
    sf = load_file(write(tmp_path, "solutions/sm90/fp8.yaml", example), tmp_path)
    assert len(sf.problems) == 6 and all(len(lg.solutions) == 5 for lg in sf.logics)
    assert [(s.mt, s.pgr) for s in sf.logics[0].solutions[1:]] == [
        ((128, 256, 64), 1), ((128, 256, 64), 3), ((64, 128, 64), 1), ((64, 128, 64), 3)]
    assert sf.ci == frozenset({0, 3})


def test_committed_solution_tree_loads():
    if not (REPO / "solutions").is_dir():
        pytest.skip("no solutions/ tree yet")
    files = load_tree(REPO)
    assert files and all(f.logics for f in files)


def test_shipped_logics_give_fp32_sums_unless_fast():
    """Every shipped logic without `accumulate: fast` holds only kernels that sum in FP32 (promoted wgmma fp8, or any
    other family/kind); the sm90 tensor-scaled fp8 types have both a promoted and a fast logic."""
    repo = Path(__file__).resolve().parents[2]
    seen = {}
    for sf in load_tree(repo):
        for lg in sf.logics:
            if not lg.fast_accum:
                assert not any(s.spec.fast_accum(s) for s in lg.solutions), sf.source
            if sf.arch.value == "sm90" and lg.problem.kind.value == "fp8_scaled" and sf.family.value == "wgmma":
                seen.setdefault((lg.problem.a, lg.problem.b, lg.problem.d), set()).add(lg.fast_accum)
    assert seen and all(v == {False, True} for v in seen.values()), seen
