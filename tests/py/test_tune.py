"""kiln-gen tune without a GPU: the tuning file, the candidate space and its filters, and the logic written from a
results file (the GPU stages are exercised on the device)."""
from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path

import pytest

from kilngen import schema, tune

REPO = Path(__file__).resolve().parents[2]
TUNING = REPO / "tuning" / "sm90_fp8.yaml"


def load():
    return tune.load(TUNING, REPO)


def test_shipped_tuning_file_expands_to_valid_candidates():
    t = load()
    sols, dropped = tune.candidates(t)
    assert len(sols) >= 16 and len({s.name for s in sols}) == len(sols)
    assert all(s.problem == t.benchmark for s in sols)
    assert dropped and all(k.startswith(("rule:", "filter:")) for k in dropped)
    assert len(t.sizes) >= 100 and len(set(t.sizes)) == len(t.sizes)
    assert {m for m, _n, _k in t.sizes} >= {1, 16384}


def test_named_filter_drops_what_it_names():
    t = load()
    keep = replace(t, filters=())
    all_sols, _ = tune.candidates(keep)
    sols, dropped = tune.candidates(t)
    big_split = [s for s in all_sols if s.gsu > 1 and s.mt[0] * s.mt[1] > 16384]
    assert dropped.get("filter:split_k_for_small_tiles", 0) == len(big_split)
    assert not any(s.gsu > 1 and s.mt[0] * s.mt[1] > 16384 for s in sols)


@pytest.mark.parametrize("expr, why", [("__import__('os')", "not allowed"), ("foo > 1", "unknown name foo"),
                                       ("gsu >", "cannot parse")])
def test_bad_filter_is_refused(tmp_path, expr, why):
    text = TUNING.read_text().replace('drop: "gsu > 1 and mt[0] * mt[1] > 16384"', f'drop: "{expr}"')
    p = tmp_path / "t.yaml"
    p.write_text(text)
    with pytest.raises(tune.TuneError, match=why):
        tune.load(p, tmp_path)


def test_the_promoted_tune_writes_its_share(tmp_path):
    """selection.share 0 in the promoted fp8 tune goes into the logic it writes (select.c: waves_only), and the
    committed logic was written so."""
    t = tune.load(REPO / "tuning" / "sm90_fp8_promoted.yaml", REPO)
    assert t.share == 0
    results = json.loads((REPO / "tuning" / "results" / "sm90_fp8_promoted_h100.json").read_text())
    out = tmp_path / "solutions" / "sm90" / "logic.yaml"
    out.parent.mkdir(parents=True)
    out.write_text(tune.logic_yaml(t, results))
    assert {lg.share for lg in schema.load_file(out, tmp_path).logics} == {0}
    assert out.read_text() == (REPO / t.output).read_text()
    t1 = replace(t, share=1)
    assert "share:" not in tune.logic_yaml(t1, results)


@pytest.mark.parametrize("value", ["2", "true", "0.5"])
def test_bad_share_is_refused(tmp_path, value):
    text = (REPO / "tuning" / "sm90_fp8_promoted.yaml").read_text().replace("share: 0}", f"share: {value}}}")
    assert f"share: {value}}}" in text
    p = tmp_path / "t.yaml"
    p.write_text(text)
    with pytest.raises(tune.TuneError, match=r"selection.share: .* must be 0 .* or 1"):
        tune.load(p, tmp_path)


def fake_results(t, sols, sizes, seed=3):
    rng = random.Random(seed)
    return {"device": "fake", "sizes": {"x".join(map(str, s)): [
        {"name": x.name, "rank": i, "ms": rng.uniform(1.0, 2.0), "pass": i != 1} for i, x in enumerate(sols)]
        for s in sizes}}


def test_logic_names_each_sizes_fastest_and_loads(tmp_path):
    t = load()
    sols, _ = tune.candidates(t)
    sizes = t.sizes[:25]
    res = fake_results(t, sols, sizes)
    out = tmp_path / "solutions" / "sm90" / "wgmma_fp8.yaml"
    out.parent.mkdir(parents=True)
    out.write_text(tune.logic_yaml(t, res))
    sf = schema.load_file(out, tmp_path)
    logic = sf.logics[0]
    assert len(logic.exact) == len(sizes)
    for m, n, k, idx in logic.exact:
        rows = {r["name"]: r["ms"] for r in res["sizes"][f"{m}x{n}x{k}"] if r["pass"]}
        assert logic.solutions[idx].name == min(rows, key=rows.get)
    # the failing candidate never wins; every logic of the file (one per problem type) has the same entries
    assert sols[1].name not in {s.name for s in logic.solutions}
    assert len(sf.logics) == 12 and len({len(lg.exact) for lg in sf.logics}) == 1


def test_unmeasured_results_are_refused():
    t = load()
    with pytest.raises(tune.TuneError, match="no measured size"):
        tune.logic_yaml(t, {"sizes": {}})


@pytest.mark.parametrize("name,fast", [("sm90_fp8.yaml", True), ("sm90_fp8_fast.yaml", True),
                                       ("sm90_fp8_promoted.yaml", False)])
def test_accumulation_of_the_shipped_tuning_files(tmp_path, name, fast):
    """The fast files' candidates are pr 0 and their candidate file and logic say `accumulate: fast` (else the
    promotion rule refuses them); the promoted file's candidates all promote, and its logic is not fast."""
    t = tune.load(REPO / "tuning" / name, REPO)
    sols, _ = tune.candidates(t)
    assert all((s.pr == 0) == fast for s in sols)
    cand = tmp_path / "solutions" / "sm90" / "tune.yaml"
    cand.parent.mkdir(parents=True)
    cand.write_text(tune.candidate_yaml(t, sols))
    assert ("accumulate: fast" in cand.read_text()) == fast
    assert all(lg.fast_accum == fast for lg in schema.load_file(cand, tmp_path).logics)
    out = tmp_path / "solutions" / "sm90" / "logic.yaml"
    out.write_text(tune.logic_yaml(t, fake_results(t, sols, t.sizes[:6])))
    assert all(lg.fast_accum == fast for lg in schema.load_file(out, tmp_path).logics)


GROUPED = {"sm90_fp8_grouped.yaml": "fp8_grouped", "sm90_fp8_block_grouped.yaml": "fp8_block_grouped"}


@pytest.mark.parametrize("name", sorted(GROUPED))
def test_grouped_tuning_files(tmp_path, name):
    """The grouped files expand to valid grouped candidates (gsu 1, DepthU 128) that include the shipped logic's
    solutions; their candidate file and a logic written from fake results load, with the sizes as given."""
    t = tune.load(REPO / "tuning" / name, REPO)
    assert t.benchmark.kind.value == GROUPED[name] and t.groups == 8 and t.group_mode == "contiguous"
    sols, dropped = tune.candidates(t)
    assert not dropped and all(s.gsu == 1 and s.mt[2] == 128 and s.problem == t.benchmark for s in sols)
    shipped = schema.load_file(REPO / t.output, REPO)
    shipped_names = {s.name for lg in shipped.logics for s in lg.solutions if lg.problem == t.benchmark}
    assert shipped_names and shipped_names <= {s.name for s in sols}
    cand = tmp_path / "solutions" / "sm90" / "tune.yaml"
    cand.parent.mkdir(parents=True)
    cand.write_text(tune.candidate_yaml(t, sols))
    assert all(lg.problem.kind == t.benchmark.kind for lg in schema.load_file(cand, tmp_path).logics)
    out = tmp_path / "solutions" / "sm90" / "logic.yaml"
    text = tune.logic_yaml(t, fake_results(t, sols, t.sizes))
    assert "timed as 8 equal contiguous groups" in text
    out.write_text(text)
    logic = schema.load_file(out, tmp_path).logics[0]
    assert [e[:3] for e in logic.exact] == list(t.sizes)
    assert logic.timed_groups == 8  # selection.groups: the runtime's model counts every group's tiles


def grouped_tuning(tmp_path, benchmark: str, name: str = "sm90_fp8_grouped.yaml"):
    text = (REPO / "tuning" / name).read_text()
    old = next(line for line in text.splitlines() if line.startswith("benchmark:"))
    p = tmp_path / "t.yaml"
    p.write_text(text.replace(old, benchmark))
    return p, text.splitlines().index(old) + 1


@pytest.mark.parametrize("mode, block", [("contiguous", False), ("masked", True), ("k", False)])
def test_grouped_bench_command(tmp_path, mode, block):
    name = "sm90_fp8_block_grouped.yaml" if block else "sm90_fp8_grouped.yaml"
    p, _ = grouped_tuning(tmp_path, f"benchmark: {{a: e4m3, b: e4m3, d: bf16, groups: 4, group_mode: {mode}}}", name)
    t = tune.load(p, tmp_path)
    cmd = tune.bench_command(t, Path("kiln_bench"), (32, 4096, 7168), 10, 3, Path("out.json"))
    assert cmd[cmd.index("--sizes") + 1] == "32x4096x7168"  # the logic's size as it is: rows per group, n, k
    assert cmd[cmd.index("--groups") + 1] == "4" and cmd[cmd.index("--group-mode") + 1] == mode
    assert ("--block-scales" in cmd) == block and "--fast-accum" not in cmd


def test_group_mode_defaults_to_contiguous_and_dense_runs_ungrouped(tmp_path):
    p, _ = grouped_tuning(tmp_path, "benchmark: {a: e4m3, b: e4m3, d: bf16, groups: 2}")
    t = tune.load(p, tmp_path)
    assert (t.groups, t.group_mode) == (2, "contiguous")
    dense = tune.load(REPO / "tuning" / "sm90_fp8_block.yaml", REPO)
    cmd = tune.bench_command(dense, Path("kiln_bench"), (1, 2, 3), 10, 3, Path("out.json"))
    assert "--groups" not in cmd and "--group-mode" not in cmd and "--block-scales" in cmd


@pytest.mark.parametrize("benchmark, key, why", [
    ("{a: e4m3, b: e4m3, d: bf16, groups: 0}", "benchmark.groups", "0: want 1..65536"),
    ("{a: e4m3, b: e4m3, d: bf16, groups: eight}", "benchmark.groups", "expected an int"),
    ("{a: e4m3, b: e4m3, d: bf16, groups: 8, group_mode: ragged}", "benchmark.group_mode",
     "unknown group mode 'ragged'"),
    ("{a: e4m3, b: e4m3, d: bf16, groups: 8, group_mode: 2}", "benchmark.group_mode", "expected a group mode name"),
    ("{a: e4m3, b: e4m3, d: bf16}", "benchmark.groups", "required key missing"),
    ("{a: e4m3, b: e4m3, d: bf16, groups: 8, grups: 2}", "benchmark.grups", "did you mean groups?"),
])
def test_bad_grouped_benchmark_is_refused_with_its_line(tmp_path, benchmark, key, why):
    p, line = grouped_tuning(tmp_path, f"benchmark: {benchmark}")
    with pytest.raises(tune.TuneError) as err:
        tune.load(p, tmp_path)
    assert str(err.value).startswith(f"t.yaml:{line}: {key}: ") and why in str(err.value)


def test_groups_on_a_dense_kind_and_unaligned_k_groups_are_refused(tmp_path):
    text = (REPO / "tuning" / "sm90_fp8_block.yaml").read_text()
    p = tmp_path / "t.yaml"
    p.write_text(text.replace("benchmark: {a: e4m3, b: e4m3, d: bf16}",
                              "benchmark: {a: e4m3, b: e4m3, d: bf16, group_mode: masked}"))
    line = p.read_text().splitlines().index("benchmark: {a: e4m3, b: e4m3, d: bf16, group_mode: masked}") + 1
    with pytest.raises(tune.TuneError, match=rf"^t.yaml:{line}: benchmark.group_mode: fp8_block_scaled is not a "
                                             "grouped kind"):
        tune.load(p, tmp_path)
    p, _ = grouped_tuning(tmp_path, "benchmark: {a: e4m3, b: e4m3, d: bf16, groups: 8, group_mode: k}")
    p.write_text(p.read_text().replace("[7168, 2048]", "[7168, 2000]"))
    with pytest.raises(tune.TuneError, match="16x7168x2000: k-grouped sizes give K per group, a multiple of 128"):
        tune.load(p, tmp_path)


def test_grouped_bench_stage_runs_the_client_and_keeps_its_groups(tmp_path):
    """The bench stage with a stand-in client: each size's command line carries the groups, the results file
    remembers them, and a file of other groups is not resumed."""
    p, _ = grouped_tuning(tmp_path, "benchmark: {a: e4m3, b: e4m3, d: bf16, groups: 4, group_mode: masked}")
    t = replace(tune.load(p, tmp_path), sizes=((32, 4096, 7168), (64, 2048, 7168)))
    client = tmp_path / "work" / "build" / "kiln_bench"
    client.parent.mkdir(parents=True)
    client.write_text("#!/usr/bin/env python3\nimport json, sys\na = sys.argv\n"
                      "open(a[0] + '.log', 'a').write(' '.join(a[1:]) + '\\n')\n"
                      "json.dump({'device': 'stand-in', 'rows': [{'name': 'k0', 'rank': 0, 'ms': 1.0, 'pass': True}]},"
                      " open(a[a.index('--json') + 1], 'w'))\n")
    client.chmod(0o755)
    results = tune.bench(t, tmp_path / "work", (1, 1), float("inf"), 2, 1)
    assert sorted(results["sizes"]) == ["32x4096x7168", "64x2048x7168"]
    assert results["grouped"] == {"groups": 4, "group_mode": "masked"}
    calls = (tmp_path / "work" / "build" / "kiln_bench.log").read_text().splitlines()
    assert len(calls) == 2 and all("--groups 4 --group-mode masked" in c for c in calls)
    other = replace(t, group_mode="contiguous", sizes=t.sizes + ((128, 4096, 7168),))
    with pytest.raises(tune.TuneError, match="holds times of 4 masked groups, not 4 contiguous groups"):
        tune.bench(other, tmp_path / "work", (1, 1), float("inf"), 2, 1)


def test_row_scales_benchmark(tmp_path):
    """benchmark.scales: row times row/column-scaled problems (kiln_bench --row-scales), the results file remembers it
    and is not resumed with tensor-scale times, the logic says so; other kinds and values are refused with their line."""
    p, _ = grouped_tuning(tmp_path, "benchmark: {a: e4m3, b: e4m3, d: bf16, groups: 4, scales: row}")
    t = replace(tune.load(p, tmp_path), sizes=((32, 4096, 7168),))
    assert t.scales == "row"
    cmd = tune.bench_command(t, Path("kiln_bench"), (32, 4096, 7168), 10, 3, Path("out.json"))
    assert "--row-scales" in cmd and "--block-scales" not in cmd
    tensor = tune.load(REPO / "tuning" / "sm90_fp8_grouped.yaml", REPO)
    assert tensor.scales == "tensor"
    assert "--row-scales" not in tune.bench_command(tensor, Path("kiln_bench"), (1, 2, 3), 10, 3, Path("o.json"))
    client = tmp_path / "work" / "build" / "kiln_bench"
    client.parent.mkdir(parents=True)
    client.write_text("#!/usr/bin/env python3\nimport json, sys\na = sys.argv\n"
                      "json.dump({'device': 'stand-in', 'rows': [{'name': 'k0', 'rank': 0, 'ms': 1.0, 'pass': True}]},"
                      " open(a[a.index('--json') + 1], 'w'))\n")
    client.chmod(0o755)
    assert tune.bench(t, tmp_path / "work", (1, 1), float("inf"), 2, 1)["scales"] == "row"
    with pytest.raises(tune.TuneError, match="holds times with row scales, not tensor"):
        tune.bench(replace(t, scales="tensor", sizes=((64, 4096, 7168),)), tmp_path / "work", (1, 1), float("inf"),
                   2, 1)
    for benchmark, name, why in (
            ("{a: e4m3, b: e4m3, d: bf16, groups: 4, scales: column}", "sm90_fp8_grouped.yaml",
             "benchmark.scales: unknown scale mode 'column'"),
            ("{a: e4m3, b: e4m3, d: bf16, groups: 4, scales: row}", "sm90_fp8_block_grouped.yaml",
             "benchmark.scales: fp8_block_grouped takes no row scales; only fp8_scaled, fp8_grouped take it")):
        p, line = grouped_tuning(tmp_path, f"benchmark: {benchmark}", name)
        with pytest.raises(tune.TuneError) as err:
            tune.load(p, tmp_path)
        assert str(err.value).startswith(f"t.yaml:{line}: ") and why in str(err.value), str(err.value)


def test_bench_records_l2_and_retimes_warm_sizes(tmp_path):
    """Each size's record says whether kiln_bench timed it with cold L2 (its JSON's problem.l2; a client from before
    the key timed warm); --retime-warm times the warm and the missing sizes again and keeps the cold ones; the logic
    says how many of its sizes were timed cold."""
    p, _ = grouped_tuning(tmp_path, "benchmark: {a: e4m3, b: e4m3, d: bf16, groups: 4}")
    t = replace(tune.load(p, tmp_path), sizes=((32, 4096, 7168), (64, 2048, 7168), (128, 4096, 7168)))
    work = tmp_path / "work"
    name = tune.candidates(t)[0][0].name
    client = work / "build" / "kiln_bench"
    client.parent.mkdir(parents=True)
    client.write_text("#!/usr/bin/env python3\nimport json, sys\na = sys.argv\n"
                      "open(a[0] + '.log', 'a').write(a[a.index('--sizes') + 1] + '\\n')\n"
                      f"json.dump({{'device': 'stand-in', 'problem': {{'l2': 'cold'}}, 'rows': [{{'name': '{name}', "
                      "'rank': 0, 'ms': 2.0, 'pass': True}]}, open(a[a.index('--json') + 1], 'w'))\n")
    client.chmod(0o755)
    old = {"device": "stand-in", "grouped": {"groups": 4, "group_mode": "contiguous"},
           "sizes": {"32x4096x7168": [{"name": name, "rank": 0, "ms": 1.0, "pass": True}],
                     "64x2048x7168": [{"name": name, "rank": 0, "ms": 1.0, "pass": True}]},
           "l2": {"64x2048x7168": "cold"}}
    (work / "results.json").write_text(json.dumps(old))
    results = tune.bench(t, work, (1, 1), float("inf"), 2, 1)  # resumes: only the missing size
    assert (work / "build" / "kiln_bench.log").read_text().split() == ["128x4096x7168"]
    assert results["l2"] == {"64x2048x7168": "cold", "128x4096x7168": "cold"}
    assert results["sizes"]["32x4096x7168"][0]["ms"] == 1.0
    note = [line for line in tune.logic_yaml(t, results).splitlines() if "cold L2" in line]
    assert note and note[0].startswith("# 2 of the 3 sizes were timed with cold L2"), note
    results = tune.bench(t, work, (1, 1), float("inf"), 2, 1, retime_warm=True)  # the warm one, replaced
    assert (work / "build" / "kiln_bench.log").read_text().split() == ["128x4096x7168", "32x4096x7168"]
    assert results["sizes"]["32x4096x7168"][0]["ms"] == 2.0 and all(v == "cold" for v in results["l2"].values())
    assert any(line.startswith("# Every size was timed with cold L2") for line in tune.logic_yaml(t, results).splitlines())


def test_gemm_bf16_tuning_and_the_f16_logic():
    """The 16-bit GEMM tune: its candidates hold every solution of the shipped bf16 logic (so a retune can pick
    each again), and the shipped f16 logic is the bf16 one with f16 types (tuning/make_f16_logic.py --check), whose
    solutions compile to the same tiles."""
    import subprocess
    import sys
    t = tune.load(REPO / "tuning" / "sm90_gemm_bf16.yaml", REPO)
    sols, dropped = tune.candidates(t)
    assert not dropped
    shipped = schema.load_file(REPO / t.output, REPO)
    strip = lambda name: name.replace("_BBB_", "_").replace("_BBS_", "_")  # noqa: E731 - the D type token
    cands = {strip(s.name) for s in sols}
    assert {strip(s.name) for lg in shipped.logics for s in lg.solutions} <= cands
    rc = subprocess.run([sys.executable, str(REPO / "tuning" / "make_f16_logic.py"), "--check"], capture_output=True,
                        text=True)
    assert rc.returncode == 0, rc.stderr
    f16 = schema.load_file(REPO / "solutions" / "sm90" / "wgmma_gemm_f16.yaml", REPO)
    assert {lg.problem.a.value for lg in f16.logics} == {"f16"}
    geometry = lambda doc: sorted(s.name.split("_", 4)[4] for lg in doc.logics for s in lg.solutions)  # noqa: E731
    assert geometry(f16) == geometry(shipped)
