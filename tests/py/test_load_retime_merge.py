"""tuning/probes/load_retime_merge.py: load times enter a tune's results only where they change the pick by enough,
on the tune run's scale, and leave every other candidate and size alone."""
import importlib.util
from pathlib import Path

SPEC = importlib.util.spec_from_file_location(
    "load_retime_merge", Path(__file__).resolve().parents[2] / "tuning" / "probes" / "load_retime_merge.py")
merge_mod = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(merge_mod)


def results():
    rows = lambda *t: [{"name": n, "ms": ms, "pass": True, "rank": i} for i, (n, ms) in enumerate(t)]  # noqa: E731
    return {"sizes": {"4096x4096x4096": rows(("big", 1.00), ("mid", 1.02), ("small", 1.05), ("slow", 1.40)),
                      "512x4096x4096": rows(("big", 0.20), ("mid", 0.21)),
                      "64x4096x4096": rows(("tiny", 0.01))}}


def test_a_faster_leader_under_load_takes_the_pick_on_the_tune_scale():
    res = results()
    load = {"sizes": {"4096x4096x4096": {"tune": {"big": 1.00, "mid": 1.02, "small": 1.05},
                                        "load": {"big": 1.20, "mid": 1.10, "small": 1.26}}}}
    changed = merge_mod.merge(res, load, 0.02)
    assert [c[:3] for c in changed] == [("4096x4096x4096", "big", "mid")]
    ms = {r["name"]: r["ms"] for r in res["sizes"]["4096x4096x4096"]}
    assert ms["big"] == 1.0                                  # the tune-best keeps its tune time
    assert abs(ms["mid"] - 1.10 / 1.20) < 1e-6               # the others: load order on the tune scale
    assert abs(ms["small"] - 1.26 / 1.20) < 1e-6
    assert ms["slow"] == 1.40                                # not retimed: untouched
    assert min(ms, key=ms.get) == "mid"
    assert res["sizes"]["512x4096x4096"] == results()["sizes"]["512x4096x4096"]


def test_gains_below_the_threshold_and_unchanged_picks_leave_the_size_alone():
    res = results()
    load = {"sizes": {"4096x4096x4096": {"tune": {"big": 1.00, "mid": 1.02}, "load": {"big": 1.00, "mid": 0.99}},
                      "512x4096x4096": {"tune": {"big": 0.20, "mid": 0.21}, "load": {"big": 0.20, "mid": 0.22}}}}
    assert merge_mod.merge(res, load, 0.02) == []
    assert res == results()


def _run_main(tmp_path, monkeypatch, parts):
    res_path = tmp_path / "results.json"
    res_path.write_text(merge_mod.json.dumps(results()))
    paths = []
    for i, sizes in enumerate(parts):
        paths.append(tmp_path / f"load_{i}.json")
        paths[-1].write_text(merge_mod.json.dumps({"sizes": sizes}))
    monkeypatch.setattr("sys.argv", ["load_retime_merge.py", str(res_path), *map(str, paths)])
    monkeypatch.syspath_prepend(str(Path(merge_mod.__file__).parent))  # (as when the script runs: ab_table)
    return merge_mod.main(), merge_mod.json.loads(res_path.read_text())


def test_the_parts_of_a_run_cut_by_its_time_limit_merge_as_one(tmp_path, monkeypatch):
    first = {"4096x4096x4096": {"tune": {"big": 1.00, "mid": 1.02}, "load": {"big": 1.20, "mid": 1.10}}}
    second = {"512x4096x4096": {"tune": {"big": 0.20, "mid": 0.21}, "load": {"big": 0.25, "mid": 0.22}}}
    rc, res = _run_main(tmp_path, monkeypatch, [first, second])
    assert rc == 0
    for size in ("4096x4096x4096", "512x4096x4096"):            # both parts' sizes moved their picks
        ms = {r["name"]: r["ms"] for r in res["sizes"][size]}
        assert min(ms, key=ms.get) == "mid"


def test_a_size_in_two_parts_is_refused_and_the_results_file_is_left_alone(tmp_path, monkeypatch):
    part = {"4096x4096x4096": {"tune": {"big": 1.00, "mid": 1.02}, "load": {"big": 1.20, "mid": 1.10}}}
    rc, res = _run_main(tmp_path, monkeypatch, [part, part])
    assert rc == 2
    assert res == results()
