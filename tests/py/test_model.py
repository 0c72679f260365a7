"""kiln's vocabulary: names round-trip through decode, every enum is in every table, golden names stay put."""
import dataclasses
import itertools
import random

import pytest

from kilngen.model import (AMD_INFO, ARCH_INFO, DTYPE_BY_CODE, DTYPE_INFO, FAMILIES, FAMILY_VENDOR, FAMILY_WAVE,
                           KIND_INFO, LAYOUT_INFO, PARAM, PARAM_FIELDS, PARAMS, Arch, DType, Family, Kind, LaunchKind,
                           Layout, NameError_, Problem, Solution, Vendor, as_dict, decode, fnv1a64, kind_of)

FP8 = {DType.E4M3, DType.E5M2, DType.E4M3FNUZ, DType.E5M2FNUZ}
HALF = {DType.F16, DType.BF16}


def expected_kind(a, b):
    """kind_of written out again, from the definitions of the kinds."""
    if a in FP8 and b in FP8:
        return Kind.FP8_SCALED
    if a in HALF and b in FP8:
        return Kind.MIXED_W8
    if a in HALF and a == b:
        return Kind.GEMM
    return None


def problems():
    """Every problem type decode can meet, in a fixed order."""
    for a, b, d, layout in itertools.product(DType, DType, DType, Layout):
        kind = kind_of(a, b)
        if kind is not None:
            yield Problem(kind, a, b, d, layout)
        if kind_of(a, b, Kind.FP8_BLOCK) is not None:
            yield Problem(Kind.FP8_BLOCK, a, b, d, layout)


def random_params(rng: random.Random) -> dict:
    values = {}
    for p in PARAMS:
        draw = lambda low: rng.choice((low, 1, 2, 3, 8, 16, 32, 64, 96, 128, 256, 4096, rng.randrange(1, 100000)))
        values[p.field] = tuple(draw(1) for _ in range(p.count)) if p.count > 1 else draw(0)
    return values


def golden():
    return Solution(arch=Arch.SM90, family=Family.MMA,
                    problem=Problem(Kind.FP8_SCALED, DType.E4M3, DType.E4M3, DType.BF16, Layout.TN),
                    mt=(128, 256, 128), wg=(2, 4), mi=(16, 8, 32), pgr=4, plr=0, su=32, sus=256, sum=0, lpa=0,
                    lpb=0, lxs=1, gsu=1, wgm=8, vwa=16, vwb=16, ldsb=0, tlds=1, lbspp=0, wsgr=0, occ=0, pk=0)


GOLDEN_NAME = ("Cijk_Alik_Bljk_F8F8B_MT128x256x128_WG2x4_MI16x8x32_PGR4_PLR0_SU32_SUS256_SUM0_LPA0_LPB0_LXS1_GSU1_"
               "WGM8_VWA16_VWB16_LDSB0_TLDS1_LBSPP0_WSGR0_OCC0_PK0_PR0_MC0_SAB0_MMA_SM90")


# --- names ---------------------------------------------------------------------------------------------------------

def test_golden_name():
    assert golden().name == GOLDEN_NAME


def test_golden_names_of_other_kinds():
    mixed = dataclasses.replace(golden(), arch=Arch.SM89, mi=(16, 8, 16), problem=Problem(
        Kind.MIXED_W8, DType.BF16, DType.E5M2, DType.BF16, Layout.TN))
    assert mixed.name == ("Cijk_Alik_Bljk_BB8BP_MT128x256x128_WG2x4_MI16x8x16_PGR4_PLR0_SU32_SUS256_SUM0_LPA0_"
                          "LPB0_LXS1_GSU1_WGM8_VWA16_VWB16_LDSB0_TLDS1_LBSPP0_WSGR0_OCC0_PK0_PR0_MC0_SAB0_MMA_SM89")
    gemm = dataclasses.replace(golden(), arch=Arch.SM80, mi=(16, 8, 16), gsu=4, problem=Problem(
        Kind.GEMM, DType.F16, DType.F16, DType.F32, Layout.NN))
    assert gemm.name == ("Cijk_Alik_Bjlk_HHS_MT128x256x128_WG2x4_MI16x8x16_PGR4_PLR0_SU32_SUS256_SUM0_LPA0_LPB0_"
                         "LXS1_GSU4_WGM8_VWA16_VWB16_LDSB0_TLDS1_LBSPP0_WSGR0_OCC0_PK0_PR0_MC0_SAB0_MMA_SM80")
    fnuz = dataclasses.replace(golden(), arch=Arch.GFX942, family=Family.MFMA, mi=(32, 32, 16), pgr=2, ldsb=1, occ=2,
                               problem=Problem(Kind.FP8_SCALED, DType.E4M3FNUZ, DType.E5M2FNUZ, DType.F16, Layout.TN))
    assert fnuz.name == ("Cijk_Alik_Bljk_F8NB8NH_MT128x256x128_WG2x4_MI32x32x16_PGR2_PLR0_SU32_SUS256_SUM0_LPA0_"
                         "LPB0_LXS1_GSU1_WGM8_VWA16_VWB16_LDSB1_TLDS1_LBSPP0_WSGR0_OCC2_PK0_PR0_MC0_SAB0_MFMA_GFX942")
    wmma = dataclasses.replace(golden(), arch=Arch.GFX1151, family=Family.WMMA, mi=(16, 16, 16), tlds=1, wsgr=1,
                               problem=Problem(Kind.MIXED_W8, DType.F16, DType.E4M3, DType.F16, Layout.TN))
    assert wmma.name == ("Cijk_Alik_Bljk_HF8HP_MT128x256x128_WG2x4_MI16x16x16_PGR4_PLR0_SU32_SUS256_SUM0_LPA0_"
                         "LPB0_LXS1_GSU1_WGM8_VWA16_VWB16_LDSB0_TLDS1_LBSPP0_WSGR1_OCC0_PK0_PR0_MC0_SAB0_WMMA_GFX1151")
    assert decode(fnuz.name) == fnuz and decode(wmma.name) == wmma


def test_decode_golden():
    assert decode(GOLDEN_NAME) == golden()


def test_round_trip_every_problem_arch_and_family():
    rng = random.Random(20261122)
    count = 0
    for arch, family, problem in itertools.product(Arch, Family, problems()):
        sol = Solution(arch=arch, family=family, problem=problem, **random_params(rng))
        assert decode(sol.name) == sol, sol.name
        count += 1
    # 16 fp8 x fp8 (twice: tensor/vector and block scales), 8 mixed, 2 gemm operand pairs; 7 outputs; 2 layouts;
    # every arch and family.
    assert count == (26 + 16) * len(DType) * len(Layout) * len(Arch) * len(Family)


@pytest.mark.parametrize("field", PARAM_FIELDS)
def test_round_trip_each_parameter(field):
    count = PARAM[field].count
    for value in (0, 1, 7, 16, 100, 65536, 2 ** 40):
        if count > 1 and value == 0:
            continue
        v = (value,) * count if count > 1 else value
        sol = dataclasses.replace(golden(), **{field: v})
        assert decode(sol.name) == sol
    if count > 1:
        sol = dataclasses.replace(golden(), **{field: tuple(range(3, 3 + count))})
        assert decode(sol.name) == sol


def test_names_are_distinct():
    rng = random.Random(7)
    sols = {Solution(arch=Arch.SM90, family=Family.MMA, problem=p, **random_params(rng)) for p in problems()}
    assert len({s.name for s in sols}) == len(sols)
    single = [dataclasses.replace(golden(), **{f: (v + 1 if isinstance(v, int) else tuple(x + 1 for x in v))})
              for f, v in ((f, getattr(golden(), f)) for f in PARAM_FIELDS)]
    assert len({s.name for s in single} | {GOLDEN_NAME}) == len(PARAM_FIELDS) + 1


BAD_NAMES = [
    ("", "too few tokens"),
    ("Cijk_Alik_Bljk_F8F8B_MT128x256x128_MMA_SM90", "too few tokens"),
    (GOLDEN_NAME.replace("Bljk", "Bxyz"), "unknown index order Cijk_Alik_Bxyz"),
    (GOLDEN_NAME.replace("F8F8B_", "F8F8Q_"), "unknown type token F8F8Q"),
    (GOLDEN_NAME.replace("F8F8B_", "SSS_"), "types SSS make no kiln problem kind"),
    (GOLDEN_NAME.replace("F8F8B_", "HF8H_"), "types HF8H make no kiln problem kind"),
    (GOLDEN_NAME.replace("F8F8B_", "F8F8BP_"), "types F8F8BP make no kiln problem kind"),
    (GOLDEN_NAME.replace("F8F8B_", "HBH_"), "types HBH make no kiln problem kind"),
    (GOLDEN_NAME.replace("_WG2x4_", "_WX2x4_"), "expected WG... got WX2x4"),
    (GOLDEN_NAME.replace("MT128x256x128", "MT128x256"), "bad value in MT128x256"),
    (GOLDEN_NAME.replace("PGR4", "PGR4x4"), "bad value in PGR4x4"),
    (GOLDEN_NAME.replace("PGR4", "PGR"), "bad value in PGR"),
    (GOLDEN_NAME.replace("PGR4", "PGR-4"), "bad value in PGR-4"),
    (GOLDEN_NAME.replace("MT128", "MT\u00b2"), "bad value in MT\u00b2x256x128"),
    (GOLDEN_NAME.replace("MT128", "MT\u0661\u0662\u0668"), "bad value in MT\u0661\u0662\u0668x256x128"),
    (GOLDEN_NAME.replace("PGR4", "PGR04"), "not in canonical form (re-encodes as"),
    (GOLDEN_NAME.replace("_MMA_", "_Mma_"), "not in canonical form"),
    (GOLDEN_NAME.replace("SM90", "sm90"), "not in canonical form"),
    (GOLDEN_NAME.replace("_MMA_", "_XMMA_"), "'xmma' is not a valid Family"),
    (GOLDEN_NAME.replace("_MMA_", "_Wmma_"), "not in canonical form"),
    (GOLDEN_NAME.replace("_OCC0_", "_OC0_"), "expected OCC... got OC0"),
    (GOLDEN_NAME.replace("_LDSB0_", "_LDS0_"), "expected LDSB... got LDS0"),
    (GOLDEN_NAME.replace("_LDSB0_TLDS1_LBSPP0_WSGR0_OCC0_", "_"), "too few tokens"),  # a name from before mfma/wmma
    (GOLDEN_NAME.replace("SM90", "SM100"), "'sm100' is not a valid Arch"),
    (GOLDEN_NAME + "_X", "expected family and arch at the end"),
    (GOLDEN_NAME.replace("_MMA_SM90", "_MMA"), "too few tokens"),
    (GOLDEN_NAME.replace("_WG2x4_", "_WG0x4_"), "WG0x4: values must be positive"),
]


@pytest.mark.parametrize("name,why", BAD_NAMES, ids=[f"bad{i}" for i in range(len(BAD_NAMES))])
def test_decode_rejects(name, why):
    with pytest.raises(NameError_) as info:
        decode(name)
    assert str(info.value).startswith(f"{name}: ")
    assert why in str(info.value)


def test_as_dict():
    d = as_dict(golden())
    assert d["name"] == GOLDEN_NAME and d["kind"] == "fp8_scaled" and d["mt"] == [128, 256, 128]
    assert d["threads"] == 256 and d["lds_bytes"] == 5 * (128 + 256) * 128 and d["align_a"] == 16
    assert set(PARAM_FIELDS) <= d.keys()


# --- tables --------------------------------------------------------------------------------------------------------

def test_every_enum_member_is_in_every_table():
    assert DTYPE_INFO.keys() == set(DType)
    assert ARCH_INFO.keys() == set(Arch)
    assert LAYOUT_INFO.keys() == set(Layout)
    assert FAMILY_VENDOR.keys() == set(Family)
    assert FAMILY_WAVE.keys() == set(Family)
    assert AMD_INFO.keys() == {a for a in Arch if ARCH_INFO[a].vendor is Vendor.AMD}
    assert {f for info in ARCH_INFO.values() for f in info.families} == set(Family)
    assert all(FAMILY_VENDOR[f] is info.vendor for info in ARCH_INFO.values() for f in info.families)
    assert set(FAMILY_VENDOR.values()) <= set(Vendor)
    assert {info.vendor for info in ARCH_INFO.values()} == set(Vendor)


def test_table_spellings_are_distinct():
    for table, fields in ((DTYPE_INFO, ("code", "c_enum", "device_type")), (ARCH_INFO, ("offload",)),
                          (LAYOUT_INFO, ("index_code", "c_enum"))):
        for field in fields:
            spellings = [getattr(info, field) for info in table.values()]
            assert len(set(spellings)) == len(spellings), field
    assert DTYPE_BY_CODE == {info.code: dt for dt, info in DTYPE_INFO.items()}


def test_table_values_are_sane():
    for dt, info in DTYPE_INFO.items():
        assert info.bytes in (1, 2, 4) and info.fp8 in ("", "ocp", "fnuz")
        assert (info.bytes == 1) == (dt in FP8) == bool(info.fp8)
        assert info.c_enum == "KILN_DTYPE_" + dt.name
    for arch, info in ARCH_INFO.items():
        assert info.fp8_formats in ("ocp", "fnuz") and info.lds_limit > 0
        assert info.offload.replace("_", "").startswith(arch.value)
    for layout, info in LAYOUT_INFO.items():
        assert info.c_enum == "KILN_LAYOUT_" + layout.name and info.index_code.startswith("Cijk_Alik_B")


def test_every_type_code_decodes():
    for problem in problems():
        sol = dataclasses.replace(golden(), problem=problem)
        assert decode(sol.name).problem == problem


def test_kind_of_covers_every_pair():
    kinds = {(a, b): kind_of(a, b) for a, b in itertools.product(DType, DType)}
    assert kinds == {(a, b): expected_kind(a, b) for a, b in itertools.product(DType, DType)}
    counts = {kind: sum(1 for k in kinds.values() if k is kind) for kind in list(Kind) + [None]}
    assert counts == {Kind.FP8_SCALED: 16, Kind.MIXED_W8: 8, Kind.GEMM: 2, Kind.FP8_BLOCK: 0, Kind.FP8_GROUPED: 0,
                      Kind.FP8_BLOCK_GROUPED: 0, None: 49 - 26}
    # the declared kinds: the types alone never make them, declared they take the same pairs as fp8_scaled
    for kind in (Kind.FP8_BLOCK, Kind.FP8_GROUPED, Kind.FP8_BLOCK_GROUPED):
        declared = {(a, b) for a, b in itertools.product(DType, DType) if kind_of(a, b, kind)}
        assert declared == {pair for pair, k in kinds.items() if k is Kind.FP8_SCALED}, kind


def test_params_match_solution_fields():
    fields = [f.name for f in dataclasses.fields(Solution)]
    assert fields == ["arch", "family", "problem"] + list(PARAM_FIELDS)
    prefixes = [p.token for p in PARAMS]
    assert len(set(prefixes)) == len(prefixes)
    # Values are digits and "x", so a prefix of letters alone can never swallow part of a value.
    assert all(p.isalpha() and p.isupper() for p in prefixes)


def test_derived_quantities():
    sol = golden()
    assert sol.threads == 32 * 2 * 4 and sol.stages == 5
    assert sol.lds_row_bytes("a") == 128 and sol.lds_row_bytes("b") == 128
    padded = dataclasses.replace(sol, problem=Problem(Kind.MIXED_W8, DType.F16, DType.E4M3, DType.F16, Layout.TN),
                                 lpa=16, lpb=32, mi=(16, 8, 16), pgr=1)
    assert padded.lds_bytes == 2 * (128 * (128 * 2 + 16) + 256 * (128 + 32))
    assert padded.align_a == 8 and padded.align_b == 16
    assert padded.upcast and padded.mma_type is DType.F16 and padded.problem.b_prepacked
    assert not sol.upcast and sol.mma_type is DType.E4M3


def test_derived_quantities_of_the_amd_families():
    mfma = dataclasses.replace(golden(), arch=Arch.GFX942, family=Family.MFMA, mi=(32, 32, 16), pgr=1, su=0, sus=0,
                               problem=Problem(Kind.FP8_SCALED, DType.E4M3FNUZ, DType.E4M3FNUZ, DType.BF16, Layout.TN))
    assert mfma.wave == 64 and mfma.threads == 64 * 8 and mfma.stages == 2
    assert mfma.native_fp8 and not mfma.upcast and mfma.lds_bytes == 2 * (128 + 256) * 128
    assert dataclasses.replace(mfma, ldsb=1).stages == 1 and dataclasses.replace(mfma, pgr=0).stages == 1
    widened = dataclasses.replace(mfma, mi=(32, 32, 8))
    assert not widened.native_fp8 and widened.upcast and widened.mma_type is DType.F16
    wmma = dataclasses.replace(golden(), arch=Arch.GFX1151, family=Family.WMMA, mi=(16, 16, 16), pgr=2)
    assert wmma.wave == 32 and wmma.threads == 256 and not wmma.native_fp8 and wmma.mma_type is DType.F16
    assert dataclasses.replace(wmma, arch=Arch.GFX1201).native_fp8
    nn = dataclasses.replace(mfma, mi=(32, 32, 8), tlds=0, lpa=16, lpb=32,
                             problem=Problem(Kind.GEMM, DType.F16, DType.F16, DType.F16, Layout.NN))
    assert nn.lds_shape("a") == (128, 256, 16) and nn.lds_shape("b") == (128, 512, 32)
    assert not nn.lds_unroll_major("a") and not nn.lds_unroll_major("b")
    assert nn.lds_bytes == 2 * (128 * (256 + 16) + 128 * (512 + 32))


# --- hashing -------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text,value", [
    ("", 0xCBF29CE484222325),
    ("a", 0xAF63DC4C8601EC8C),
    ("foobar", 0x85944171F73967E8),
])
def test_fnv1a64_known_values(text, value):
    assert fnv1a64(text) == value


def test_fnv1a64_of_golden_name_is_stable():
    # The runtime's tables carry this hash; it must not change while the name does not.
    assert fnv1a64(GOLDEN_NAME) == 0x2C8F776353376D66


# --- the parameter catalogue -----------------------------------------------------------------------------------------

def test_catalogue_values_fit_their_c_types():
    from kilngen.params import C_TYPE_RANGE
    for p in PARAMS:
        low, high = C_TYPE_RANGE[p.c_type]
        assert low <= min(p.allowed) and max(p.allowed) <= high, p.field
        assert p.default is None or p.default in p.allowed, p.field


def test_catalogue_fixed_values_name_real_families():
    for p in PARAMS:
        families = [f for f, _v, _w in p.fixed]
        assert len(set(families)) == len(families) and set(families) <= set(Family), p.field
        assert all(why and v in p.allowed for _f, v, why in p.fixed), p.field
        assert set(p.uses) | set(families) == set(Family)


def test_every_family_and_kind_has_one_record():
    assert FAMILIES.keys() == set(Family) and KIND_INFO.keys() == set(Kind)
    assert all(spec.family is f and spec.wave in (32, 64, 128) for f, spec in FAMILIES.items())
    assert {spec.launch for spec in FAMILIES.values()} == set(LaunchKind)
    assert all(set(spec.layouts) <= set(Layout) and spec.layouts for spec in FAMILIES.values())
    assert all(spec.layouts and set(spec.layouts) <= set(Layout) for spec in KIND_INFO.values())


def test_naming_doc_table_is_current():
    from pathlib import Path

    from kilngen import naming_doc
    page = Path(__file__).resolve().parents[2] / "docs" / "naming.md"
    text = page.read_text()
    assert naming_doc.BEGIN in text, "docs/naming.md has no generated parameter table; run kiln-gen docs"
    assert naming_doc.update(text) == text, "docs/naming.md's parameter table is stale; run kiln-gen docs"
    assert all(f"| {p.token} | `{p.field}` |" in text for p in PARAMS)


def test_wgmma_shape_rules_run_before_derivation():
    """A zero in wg or mt is blamed on its key, before the wgmma instruction is derived from the tile."""
    from kilngen.families import check
    mixed = Problem(Kind.MIXED_W8, DType.F16, DType.E4M3, DType.F16, Layout.TN)
    sol = dataclasses.replace(golden(), family=Family.WGMMA, problem=mixed, mt=(0, 128, 128), wg=(1, 1),
                              mi=(64, 128, 16), plr=0, lxs=1, pgr=2, su=0, sus=0)
    assert check(sol) == ("mt", "[0, 128, 128] must be positive")
    assert check(dataclasses.replace(sol, mt=(128, 128, 128), wg=(0, 1)))[0] == "wg"
    valid = dataclasses.replace(golden(), pgr=2)
    assert check(valid) is None
    assert check(dataclasses.replace(valid, su=1 << 40)) == ("su", "1099511627776 is not 0 or a power of two up to 1024")
    assert check(dataclasses.replace(valid, sus=1 << 40))[0] == "sus"


def test_wgmma_promoted_split_rule():
    """pr 1 above 64 accumulators a thread is split promotion (column-half sums, the half-width wgmma); 64x256
    consumers (128 accumulators, the halves one after the other) pass the register rule, more do not."""
    from kilngen import wgmma
    from kilngen.families import check
    fp8 = Problem(Kind.FP8_SCALED, DType.E4M3, DType.E4M3, DType.BF16, Layout.TN)
    base = dataclasses.replace(golden(), family=Family.WGMMA, problem=fp8, mt=(128, 256, 128), wg=(2, 1),
                               mi=(64, 256, 32), plr=0, lxs=1, pgr=2, su=0, sus=0, pk=1, pr=1)
    assert check(base) is None and wgmma.split(base)
    assert wgmma.half_asm(base)[0] == 128  # half of the consumer's 256 columns
    mid = dataclasses.replace(base, mt=(128, 192, 128), mi=(64, 192, 32))  # 96: both halves at once
    assert check(mid) is None and wgmma.split(mid) and wgmma.half_asm(mid)[0] == 96
    small = dataclasses.replace(base, mt=(128, 128, 128), mi=(64, 128, 32))  # 64: two K-tile sums, no split
    assert check(small) is None and not wgmma.split(small) and wgmma.half_asm(small) == ()
    big = dataclasses.replace(base, mt=(256, 192, 128), mi=(64, 192, 32))  # 128x192 consumers: 192 accumulators
    key, why = check(big)
    assert key == "mt" and "192 f32 accumulators" in why and "at most 128" in why
    assert not wgmma.split(dataclasses.replace(base, pr=0))  # fast accumulation: one sum over all of K


def test_wgmma_direct_rule():
    """wsgr 1 makes a prepacked-weight mma.sync tile a direct-load kernel: no producer warpgroup (128 threads a wg
    unit), shared memory for every warp's sums only, no TMA store, and the rule keeps its in-flight loads and sums
    within the registers its threads may have; any other tile with wsgr 1 is refused, and so are the mma family's."""
    from kilngen import wgmma
    from kilngen.families import check
    from kilngen.render import solution_row
    mixed = Problem(Kind.MIXED_W8, DType.F16, DType.E4M3, DType.F16, Layout.TN)
    base = dataclasses.replace(golden(), family=Family.WGMMA, problem=mixed, mt=(8, 32, 128), wg=(1, 2),
                               mi=(16, 8, 16), plr=0, lxs=1, pgr=1, su=0, sus=0, gsu=1, pk=0, mc=0, wsgr=1)
    assert check(base) is None and wgmma.direct(base) and wgmma.sync(base)
    assert wgmma.threads(base) == 256  # two warpgroups of loading warps, no producer
    assert wgmma.lds_bytes(base) == 8 * 8 * 32 * 4  # each of 8 warps' f32 sums of the 8 x 32 tile
    assert solution_row(base)["tma_store"] == 0 and not wgmma.tma_store(base)
    assert wgmma.threads(dataclasses.replace(base, wsgr=0)) == 384  # the ring kernel: + the producer
    four = dataclasses.replace(base, mt=(8, 16, 128), wg=(1, 4))
    assert check(four) is None and wgmma.threads(four) == 512
    # loads of two batches (2 x 2 x 2 x (2 + 2) x 4 = 128) + sums at most 128 - 48 registers for 512 threads
    key, why = check(dataclasses.replace(four, mt=(16, 16, 128), pgr=2))
    assert key == "wsgr" and "pgr must be 1..4" in why and "at most 80 for 512 threads" in why
    key, why = check(dataclasses.replace(base, mi=(64, 8, 16)))  # a wgmma decode tile
    assert key == "wsgr" and "mma.sync" in why
    key, why = check(dataclasses.replace(base, mt=(8, 48, 128)))
    assert key == "wsgr" and "MT1 in [16, 32, 64]" in why
    key, why = check(dataclasses.replace(base, pk=1))
    assert key == "wsgr" and "pk, mc and su must be 0" in why
    mma = dataclasses.replace(golden(), pgr=2)
    assert mma.family is Family.MMA and check(mma) is None
    key, why = check(dataclasses.replace(mma, wsgr=1))  # the mma family reads each tile with the workgroup
    assert key == "wsgr" and "mma family" in why


def test_wgmma_prepacked_tma_store_rule():
    """Prepacked-weight tiles store D through the copy engine (wgmma.swap_tma) where each consumer's tokens and weights
    are whole 64 x 64 boxes of a 16-bit D and its sub-tile fits beside the ring; the shared memory counts the sub-tile,
    and the table row says so (the runtime maps D for a prepacked B only then)."""
    from kilngen import wgmma
    from kilngen.render import solution_row
    mixed = Problem(Kind.MIXED_W8, DType.F16, DType.E4M3, DType.F16, Layout.TN)
    base = dataclasses.replace(golden(), family=Family.WGMMA, problem=mixed, mt=(128, 256, 128), wg=(1, 2),
                               mi=(64, 128, 16), plr=0, lxs=1, pgr=1, su=0, sus=0)
    assert wgmma.swap_tma(base) and solution_row(base)["tma_store"] == 1
    # two stages of 32 + 32 KiB, two 128 x 128 f16 sub-tiles, 2 x 8 bytes of barriers, 1 KiB of alignment
    assert wgmma.lds_bytes(base) == 2 * 65536 + 2 * 32768 + 16 * 2 + 1024
    deep = dataclasses.replace(base, pgr=2)  # three stages leave no room for the sub-tiles: the staged epilogue
    assert not wgmma.swap_tma(deep) and solution_row(deep)["tma_store"] == 0
    assert wgmma.lds_bytes(deep) == 3 * 65536 + 2 * 128 * 128 + 16 * 3 + 1024
    decode = dataclasses.replace(base, mt=(16, 128, 128), mi=(64, 16, 16), pgr=8)  # 16 tokens: not a whole box
    assert not wgmma.swap_tma(decode)
    f32 = dataclasses.replace(base, problem=dataclasses.replace(mixed, d=DType.F32))
    assert not wgmma.swap_tma(f32)
    split = dataclasses.replace(base, mt=(64, 64, 128), wg=(1, 1), mi=(64, 64, 16), pgr=6, gsu=2)
    assert not wgmma.swap_tma(split)  # split-K through the workspace writes f32 partials
    assert wgmma.swap_tma(dataclasses.replace(split, gsu=1))


def test_wgmma_prepacked_weights_register_rule():
    """Prepacked-weight tiles: two K-tiles of widened weights beside the accumulators up to 160 registers; past that
    the weights are widened one 16-K group ahead (wgmma.fine, two groups' registers), which lets the 128-weight-row
    consumers of the 128x256 prefill tile in; the 128x256 tile on one consumer (256 accumulators) stays out."""
    from kilngen import wgmma
    from kilngen.families import check
    mixed = Problem(Kind.MIXED_W8, DType.F16, DType.E4M3, DType.F16, Layout.TN)
    base = dataclasses.replace(golden(), family=Family.WGMMA, problem=mixed, mt=(128, 128, 128), wg=(1, 2),
                               mi=(64, 128, 16), plr=0, lxs=1, pgr=2, su=0, sus=0)
    assert check(base) is None and not wgmma.fine(base)  # 64 accumulators + 64 weight registers
    big = dataclasses.replace(base, mt=(128, 256, 128))
    assert check(big) is None and wgmma.fine(big)  # 128 accumulators + 2 x 2 x 4 weight registers
    assert wgmma._frags(big) == 128 and wgmma._frags(big, True) == 16
    one = dataclasses.replace(big, wg=(1, 1), mi=(64, 128, 16))
    field, why = check(one)
    assert field and "256 f32 accumulators + 32 weight registers" in why, why
    decode = dataclasses.replace(base, mt=(16, 256, 128), mi=(64, 16, 16), pgr=4)
    assert check(decode) is None and not wgmma.fine(decode)  # 16 accumulators + 128 weight registers


def test_wgmma_swap_ab_rule():
    """sab 1 on an SS kernel computes D^T: the weights (B's rows, the tile's columns) on wgmma's M side, the tokens
    (the tile's rows) on its N side in steps of 8; fp8 operand types swap places in the instruction, promotion works as
    unswapped (split halves along the tokens), the prepacked-weight epilogue (swap_tma) stores D, and nothing reads
    weights through registers."""
    from kilngen import wgmma
    from kilngen.families import check
    from kilngen.render import solution_row
    fp8 = Problem(Kind.FP8_SCALED, DType.E4M3, DType.E5M2, DType.BF16, Layout.TN)
    base = dataclasses.replace(golden(), family=Family.WGMMA, problem=fp8, mt=(96, 128, 128), wg=(1, 2),
                               mi=(64, 96, 32), plr=0, lxs=1, pgr=4, su=0, sus=0, pk=1, pr=1, sab=1)
    assert check(base) is None and wgmma.swap(base) and not wgmma.rs(base) and wgmma.promoted(base)
    assert base.name.endswith("_PR1_MC0_SAB1_WGMMA_SM90") and decode(base.name) == base
    assert wgmma.shape(base) == (64, 96, 32) and not wgmma.split(base)  # 48 accumulators: two K-tile sums
    n, _params, lines, _outs, _ins = wgmma.asm(base)
    assert n == 96 and "m64n96k32.f32.e5m2.e4m3" in lines[2] and '"l"(a)' in _ins  # A is the problem's B (e5m2)
    assert "m64n96k32.f32.e4m3.e5m2" in wgmma.asm(dataclasses.replace(base, sab=0, mt=(128, 96, 128), wg=(2, 1)))[2][2]
    wide = dataclasses.replace(base, mt=(160, 128, 128), mi=(64, 160, 32))  # 80 accumulators: split, 80-token halves
    assert check(wide) is None and wgmma.split(wide) and wgmma.half_asm(wide)[0] == 80
    key, why = check(dataclasses.replace(base, mt=(152, 128, 128), mi=(64, 152, 32)))  # halves of 76 tokens
    assert key == "sab" and "multiple of 16" in why
    box = dataclasses.replace(base, mt=(128, 128, 128), mi=(64, 128, 32), pgr=3)  # whole 64 x 64 boxes of D
    assert wgmma.swap_tma(box) and not wgmma.tma_d(box) and solution_row(box)["tma_store"] == 1
    assert not wgmma.swap_tma(base)  # 96 tokens: the staged epilogue
    key, why = check(dataclasses.replace(base, mt=(96, 96, 128), mi=(64, 96, 32)))  # 48 weights a consumer
    assert key == "mt" and "multiple of 64 (wgmma M)" in why
    assert check(dataclasses.replace(base, mc=1))[0] == "mc"
    assert check(dataclasses.replace(base, mc=3, gsu=2, pk=0)) is None
    mixed = Problem(Kind.MIXED_W8, DType.F16, DType.E4M3, DType.F16, Layout.TN)
    assert check(dataclasses.replace(base, problem=mixed, pr=0, mi=(64, 96, 16)))[0] == "sab"
