"""kiln-gen tune without a GPU: the tuning file, the candidate space and its filters, and the logic written from a
results file (the GPU stages are exercised on the device)."""
from __future__ import annotations

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
