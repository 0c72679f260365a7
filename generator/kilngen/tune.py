"""kiln-gen tune: from a tuning YAML to a selection logic YAML.

    space (fork entries) --expand, drop what the rules or the named filters reject--> candidates
    candidates --render into <work>/generated, cmake + ninja--> a library holding only them, and kiln_bench
    sizes --kiln_bench, every candidate, checked and timed--> <work>/results.json (one record per size; resumable;
                                `l2` names the sizes timed with cold L2, kiln_bench's default: the others, from
                                files written before it, were timed warm and --retime-warm times them again)
    results --fastest passing candidate per size--> the logic YAML (`output:`), which `kiln-gen generate` builds

The tuning YAML (docs/tuning.md):
    schema: 1
    arch, family, problem       as in a solution file; the logic written covers every problem type of `problem`
    benchmark: {a, b, d}        the one problem type that is timed (default: the first of `problem`); a grouped kind
                                also `groups: G` (required) and `group_mode: contiguous|masked|k` (default
                                contiguous): kiln_bench times each size as G equal groups, the size being one group's
                                (rows per group, n, k), which is how selection sizes a grouped problem;
                                fp8_scaled and fp8_grouped also `scales: tensor|row` (default tensor): row times the
                                problems with row and column scales (kiln_bench --row-scales)
    defaults: {...}             parameters every candidate takes unless its entry says otherwise
    space: [...]                solution entries and fork entries, as in a solution file's `solutions`
    filters: [{name, drop}]     named filters: `drop` is an expression over the parameters (mt, wg, pgr, gsu, ...,
                                threads, lds_bytes, consumers); candidates for which it is true are dropped
    sizes: {exact: [[m, n, k], ...], product: {m: [...], nk: [[n, k], ...]}}
    selection: {distance: log_mnk, neighbors: 4}
                                the logic gets every winner's time at every size, and the runtime predicts a new
                                size's times from the `neighbors` nearest (select.c: the timing model); `share: 0`
                                (default 1) goes into the logic: the model counts waves without the grid's share
    output: solutions/<arch>/<file>.yaml
    ci: 3                       the logic's ci list: the fallback and the kernels winning most sizes, this many
"""
from __future__ import annotations

import ast
import itertools
import json
import math
import os
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

import yaml

from . import render, schema, yamlread
from .families import FAMILIES, check
from .model import (ARCH_INFO, KIND_INFO, PARAM_FIELDS, PARAMS, Arch, DType, Family, Kind, Layout, Problem, Solution,
                    decode, kind_of)
from .rules import K_GROUP_ALIGN, shape_problem

_PARAM_COUNT = {p.field: p.count for p in PARAMS}


class TuneError(ValueError):
    pass


# ---- the tuning file ----

@dataclass(frozen=True)
class Filter:
    name: str
    drop: str
    code: object


@dataclass(frozen=True)
class Tuning:
    source: str
    arch: Arch
    family: Family
    problem: dict           # the `problem` mapping, written back into the logic
    benchmark: Problem
    defaults: dict
    space: list
    filters: tuple
    sizes: tuple            # ((m, n, k), ...) in order, without repeats
    distance: str
    neighbors: int          # measured sizes the runtime's timing model predicts from
    output: str
    ci: int
    groups: int = 0         # grouped kinds: the equal groups each size is timed on (kiln_bench --groups)
    group_mode: str = ""    # and their layout (kiln_bench --group-mode)
    scales: str = "tensor"  # fp8 x fp8 tensor/row kinds: the scales timed (row: kiln_bench --row-scales)
    share: int = 1          # selection.share of the logic (select.c: 0 counts the waves only)


_ALLOWED_NODES = (ast.Expression, ast.BoolOp, ast.BinOp, ast.UnaryOp, ast.Compare, ast.Name, ast.Load, ast.Constant,
                  ast.Subscript, ast.And, ast.Or, ast.Not, ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod, ast.Div,
                  ast.USub, ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn, ast.Tuple, ast.List)
FILTER_NAMES = PARAM_FIELDS + ("threads", "lds_bytes", "consumers", "stages")


def _compile_filter(source: str, name: str, expr: str):
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError as exc:
        raise TuneError(f"{source}: filter {name}: cannot parse {expr!r}: {exc.msg}") from None
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED_NODES):
            raise TuneError(f"{source}: filter {name}: {type(node).__name__} is not allowed in a filter")
        if isinstance(node, ast.Name) and node.id not in FILTER_NAMES:
            raise TuneError(f"{source}: filter {name}: unknown name {node.id}; use {', '.join(FILTER_NAMES)}")
    return compile(tree, f"<filter {name}>", "eval")


def _filter_values(sol: Solution) -> dict:
    values = {f: getattr(sol, f) for f in PARAM_FIELDS}
    values.update(threads=sol.threads, lds_bytes=sol.lds_bytes, stages=sol.stages,
                  consumers=sol.consumers)
    return values


def _sizes(source: str, node) -> tuple:
    out = []
    for m, n, k in (node or {}).get("exact", []):
        out.append((int(m), int(n), int(k)))
    prod = (node or {}).get("product")
    if prod:
        for m in prod["m"]:
            for n, k in prod["nk"]:
                out.append((int(m), int(n), int(k)))
    if not out:
        raise TuneError(f"{source}: sizes: give exact sizes or a product")
    if any(v < 1 for s in out for v in s):
        raise TuneError(f"{source}: sizes: every m, n, k must be positive")
    return tuple(dict.fromkeys(out))


BENCHMARK_KEYS = ("a", "b", "d", "layout", "groups", "group_mode", "scales")
SCALES = ("tensor", "row")  # benchmark.scales: tensor scales, or row (A) and column (B) scales
GROUP_MODES = ("contiguous", "masked", "k")  # kiln_bench --group-mode
MAX_GROUPS = schema.MAX_TIMED_GROUPS  # kiln_bench --groups, and the written logic's selection.groups


ROW_SCALED_KINDS = (Kind.FP8_SCALED, Kind.FP8_GROUPED)  # problems with tensor or row/column scales


def _benchmark_settings(path: Path, source: str, kind: Kind) -> tuple:
    """(groups, group_mode, scales) of the `benchmark` mapping; (0, "") for the groups of a kind that is not grouped.
    Read from the YAML nodes, so that a bad value names file:line: key as solution files do."""
    try:
        with yamlread.document(path, source) as (r, root):
            top = r.mapping(root, "document")
            node = top["benchmark"][1] if "benchmark" in top else None
            empty = node is None or (isinstance(node, yaml.ScalarNode) and r.scalar(node, "benchmark") is None)
            items = {} if empty else r.mapping(node, "benchmark", BENCHMARK_KEYS, prefix="benchmark")
            scales = "tensor"
            if "scales" in items:
                if kind not in ROW_SCALED_KINDS:
                    r.fail(items["scales"][0], "benchmark.scales", f"{kind.value} takes no row scales; only "
                           + ", ".join(k.value for k in ROW_SCALED_KINDS) + " take it")
                scales = r.choice(items["scales"][1], "benchmark.scales", SCALES, "scale mode")
            if not KIND_INFO[kind].grouped:
                given = next((key for key in ("groups", "group_mode") if key in items), None)
                if given:
                    r.fail(items[given][0], f"benchmark.{given}", f"{kind.value} is not a grouped kind; only "
                           + ", ".join(k.value for k, spec in KIND_INFO.items() if spec.grouped) + " take it")
                return 0, "", scales
            if "groups" not in items:
                r.fail(top["benchmark"][0] if "benchmark" in top else top["problem"][0], "benchmark.groups",
                       f"required key missing: {kind.value} is grouped; give the groups each size is timed on")
            groups = r.int_(items["groups"][1], "benchmark.groups")
            if not 1 <= groups <= MAX_GROUPS:
                r.fail(items["groups"][1], "benchmark.groups", f"{groups}: want 1..{MAX_GROUPS}")
            mode = (r.choice(items["group_mode"][1], "benchmark.group_mode", GROUP_MODES, "group mode")
                    if "group_mode" in items else "contiguous")
            return groups, mode, scales
    except yamlread.SchemaError as exc:
        raise TuneError(str(exc)) from None


def load(path: Path, root: Path) -> Tuning:
    source = path.as_posix()
    if path.is_absolute() and path.resolve().is_relative_to(root.resolve()):
        source = path.resolve().relative_to(root.resolve()).as_posix()
    doc = yaml.safe_load(path.read_text())
    known = {"schema", "arch", "family", "problem", "benchmark", "defaults", "space", "filters", "sizes", "selection",
             "output", "ci"}
    if not isinstance(doc, dict):
        raise TuneError(f"{source}: expected a mapping")
    unknown = sorted(set(doc) - known)
    if unknown:
        raise TuneError(f"{source}: unknown keys {', '.join(unknown)}")
    for key in ("schema", "arch", "family", "problem", "space", "sizes", "output"):
        if key not in doc:
            raise TuneError(f"{source}: {key} is required")
    if doc["schema"] != 1:
        raise TuneError(f"{source}: schema must be 1")
    arch, family = Arch(doc["arch"]), Family(doc["family"])
    if family not in ARCH_INFO[arch].families:
        raise TuneError(f"{source}: family {family.value} does not run on {arch.value}")
    prob = doc["problem"]
    first = {k: (v[0] if isinstance(v, list) else v) for k, v in prob.items() if k in ("a", "b", "d", "layout")}
    bench = dict(first, **(doc.get("benchmark") or {}))
    a, b, d = DType(bench["a"]), DType(bench["b"]), DType(bench["d"])
    kind = kind_of(a, b, Kind(prob["kind"]) if "kind" in prob else None)
    if kind is None:
        raise TuneError(f"{source}: benchmark {a.value} x {b.value} is no kiln problem kind")
    benchmark = Problem(kind, a, b, d, Layout(bench.get("layout", first.get("layout", "TN"))))
    groups, group_mode, scales = _benchmark_settings(path, source, kind)
    sizes = _sizes(source, doc["sizes"])
    if group_mode == "k" and groups > 1:
        bad = next((s for s in sizes if s[2] % K_GROUP_ALIGN), None)
        if bad:
            raise TuneError(f"{source}: sizes: {'x'.join(map(str, bad))}: k-grouped sizes give K per group, a "
                            f"multiple of {K_GROUP_ALIGN} with more than one group (every group's end but the last is)")
    filters = tuple(Filter(f["name"], f["drop"], _compile_filter(source, f["name"], f["drop"]))
                    for f in doc.get("filters") or [])
    sel = doc.get("selection") or {}
    return Tuning(source, arch, family, prob, benchmark, dict(doc.get("defaults") or {}), list(doc["space"]), filters,
                  sizes, sel.get("distance", "log_mnk"), int(sel.get("neighbors", 4)), doc["output"],
                  int(doc.get("ci", 3)), groups, group_mode, scales, _share(source, sel))


def _share(source: str, sel: dict) -> int:
    share = sel.get("share", 1)
    if isinstance(share, bool) or share not in (0, 1):
        raise TuneError(f"{source}: selection.share: {share!r} must be 0 (the model counts waves only) or 1 (waves "
                        "and the grid's share, the default)")
    return int(share)


# ---- candidates ----

def _expand(entry: dict) -> list:
    if "fork" not in entry:
        return [dict(entry)]
    fork, fixed = entry["fork"], entry.get("with", {})
    keys = list(fork)
    return [dict(fixed, **dict(zip(keys, combo))) for combo in itertools.product(*(fork[k] for k in keys))]


def _as_value(field: str, value):
    return tuple(int(v) for v in value) if _PARAM_COUNT[field] > 1 else int(value)


def candidates(t: Tuning) -> tuple[list, dict]:
    """(valid candidate solutions for the benchmark problem, in space order without repeats,
    {reason: count} of the dropped ones: a rule's field or a filter's name)."""
    builtin = dict(schema.BUILTIN_DEFAULTS)
    out, dropped, seen = [], {}, set()
    for entry in t.space:
        for params in _expand(entry):
            values = {f: _as_value(f, v) for f, v in builtin.items()}
            values.update({f: _as_value(f, v) for f, v in t.defaults.items()})
            values.update({f: _as_value(f, v) for f, v in params.items()})
            unknown = sorted(set(values) - set(PARAM_FIELDS))
            if unknown:
                raise TuneError(f"{t.source}: space: unknown parameters {', '.join(unknown)}")
            derive = "mi" not in values and FAMILIES[t.family].mi_from_tile is not None
            if "mi" not in values:
                values["mi"] = (0, 0, 0)
            sol = Solution(arch=t.arch, family=t.family, problem=t.benchmark, **values)
            shape = next((f for f in ("mt", "wg") if shape_problem(f, values[f])), None)
            if derive and shape is None:
                sol = replace(sol, mi=FAMILIES[t.family].default_mi_for(sol))
            broken = (shape, "") if shape else check(sol)
            reason = f"rule:{broken[0]}" if broken else None
            if reason is None:
                env = _filter_values(sol)
                reason = next((f"filter:{f.name}" for f in t.filters if eval(f.code, {"__builtins__": {}}, env)), None)
            if reason:
                dropped[reason] = dropped.get(reason, 0) + 1
            elif sol.name not in seen:
                seen.add(sol.name)
                out.append(sol)
    if not out:
        raise TuneError(f"{t.source}: the space leaves no valid candidate ({dropped})")
    return out, dropped


def _mi_derived(t: Tuning, sol: Solution) -> bool:
    """Whether a written entry may leave mi out: the family derives it from the tile, and this solution names no
    other instruction (the wgmma family's mma.sync decode tiles name mi [16, 8, 16])."""
    fam = FAMILIES[t.family]
    return fam.mi_from_tile is not None and not fam.sync(sol)


def _entry_text(sol: Solution, omit_mi: bool) -> str:
    parts = []
    for field in PARAM_FIELDS:
        if field == "mi" and omit_mi:
            continue
        value = getattr(sol, field)
        if field not in ("mt", "wg", "mi") and value == schema.BUILTIN_DEFAULTS[field]:
            continue
        parts.append(f"{field}: " + (f"[{', '.join(map(str, value))}]" if isinstance(value, tuple) else str(value)))
    return "{" + ", ".join(parts) + "}"


def _problem_text(problem: dict) -> str:
    def one(v):
        return f"[{', '.join(v)}]" if isinstance(v, list) else str(v)
    return "\n".join(f"  {k}: {one(v)}" for k, v in problem.items())


def candidate_yaml(t: Tuning, sols: list) -> str:
    """A solution file holding every candidate for the benchmark problem type only (what the tuning library builds)."""
    pr = t.benchmark
    lines = [f"# kiln-gen tune candidates from {t.source}", "schema: 1", f"arch: {t.arch.value}",
             f"family: {t.family.value}", "problem:", f"  kind: {pr.kind.value}", f"  a: {pr.a.value}",
             f"  b: {pr.b.value}", f"  d: {pr.d.value}", f"  layout: {pr.layout.value}"]
    if "accumulate" in t.problem:
        lines.append(f"  accumulate: {t.problem['accumulate']}")
    lines.append("solutions:")
    lines += [f"  - {_entry_text(s, _mi_derived(t, s))}" for s in sols]
    lines += ["selection:", f"  distance: {t.distance}", "  fallback: 0", f"ci: [{', '.join(map(str, range(len(sols))))}]"]
    return "\n".join(lines) + "\n"


# ---- build and benchmark ----

def _run(cmd: list, log: Path, cwd: Path) -> None:
    with log.open("a") as f:
        f.write("$ " + " ".join(map(str, cmd)) + "\n")
        f.flush()
        rc = subprocess.run(cmd, cwd=cwd, stdout=f, stderr=subprocess.STDOUT).returncode
    if rc:
        raise TuneError(f"{' '.join(map(str, cmd[:3]))} ... failed (rc {rc}); see {log}")


def build(t: Tuning, root: Path, work: Path, jobs: int) -> list:
    sols, dropped = candidates(t)
    print(f"kiln tune: {len(sols)} candidates; dropped: "
          + (", ".join(f"{k} {v}" for k, v in sorted(dropped.items())) or "none"))
    cand = work / "solutions" / t.arch.value / "tune.yaml"
    cand.parent.mkdir(parents=True, exist_ok=True)
    cand.write_text(candidate_yaml(t, sols))
    sf = schema.load_file(cand, work)
    render.write_tree(work / "generated", render.render_tree([sf], root / "templates"))
    log = work / "build.log"
    _run(["cmake", "-S", str(root), "-B", str(work / "build"), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
          f"-DKILN_ARCHS={t.arch.value}", f"-DKILN_GENERATED_DIR={work / 'generated'}", "-DKILN_BUILD_TESTS=OFF",
          f"-DPython3_EXECUTABLE={sys.executable}"], log, root)
    _run(["cmake", "--build", str(work / "build"), "-j", str(jobs)], log, root)
    return sols


def _results_path(work: Path) -> Path:
    return work / "results.json"


def load_results(path: Path) -> dict:
    return json.loads(path.read_text()) if path.is_file() else {"sizes": {}}


def bench_command(t: Tuning, client: Path, size: tuple, iters: int, warmup: int, out: Path) -> list:
    """kiln_bench's command line for one size: every candidate, checked and timed. A grouped kind's size is one
    group's (rows per group, n, k), run as t.groups equal groups."""
    pr = t.benchmark
    cmd = [str(client), "--a", pr.a.value, "--b", pr.b.value, "--d", pr.d.value, "--layout", pr.layout.value,
           "--sizes", "x".join(map(str, size)), "--solutions", "all", "--iters", str(iters), "--warmup", str(warmup),
           "--json", str(out), "--quiet"]
    if pr.spec.block_scales:
        cmd.append("--block-scales")
    if t.problem.get("accumulate") == "fast":
        cmd.append("--fast-accum")
    if t.scales == "row":
        cmd.append("--row-scales")
    if t.groups:
        cmd += ["--groups", str(t.groups), "--group-mode", t.group_mode]
    return cmd


def cold_l2(results: dict, key: str) -> bool:
    """Whether the size's record was timed with cold L2 (kiln_bench's operand copies; results["l2"][key])."""
    return results.get("l2", {}).get(key) == "cold"


def bench(t: Tuning, work: Path, part: tuple, budget_s: float, iters: int, warmup: int,
          retime_warm: bool = False) -> dict:
    """Runs kiln_bench on the sizes of this part that have no record yet (retime_warm: or whose record was timed with
    warm L2, which the new one replaces); saves after each size."""
    path = _results_path(work)
    results = load_results(path)
    client = work / "build" / "kiln_bench"
    if not client.is_file():
        raise TuneError(f"{client} is missing: run the build stage first")
    held_scales = results.get("scales", "tensor")  # (files from before the key: tensor scales)
    if results["sizes"] and held_scales != t.scales:
        raise TuneError(f"{path} holds times with {held_scales} scales, not {t.scales}: use another --work")
    if t.scales != "tensor":
        results["scales"] = t.scales
    if t.groups:  # a grouped run's times hold for its groups and layout only: never mix two in one results file
        setting = {"groups": t.groups, "group_mode": t.group_mode}
        held = results.get("grouped", setting)
        if results["sizes"] and held != setting:
            raise TuneError(f"{path} holds times of {held['groups']} {held['group_mode']} groups, not {t.groups} "
                            f"{t.group_mode} groups: use another --work")
        results["grouped"] = setting
    i, n = part
    def wanted(key):
        return key not in results["sizes"] or (retime_warm and not cold_l2(results, key))
    todo = [s for j, s in enumerate(t.sizes) if j % n == i - 1 and wanted("x".join(map(str, s)))]
    start = time.monotonic()
    for count, (m, nn, k) in enumerate(todo):
        if time.monotonic() - start > budget_s:
            print(f"kiln tune: budget of {budget_s:.0f} s spent; {len(todo) - count} sizes left for the next run")
            break
        out = work / "last.json"
        out.unlink(missing_ok=True)  # a failed run must not leave the previous size's rows to be read
        rc = subprocess.run(bench_command(t, client, (m, nn, k), iters, warmup, out), capture_output=True, text=True)
        if rc.returncode == 2 or not out.is_file():
            raise TuneError(f"kiln_bench failed on {m}x{nn}x{k} (rc {rc.returncode}): {rc.stderr.strip()[-400:]}")
        doc = json.loads(out.read_text())
        rows = doc["rows"]
        results["sizes"][f"{m}x{nn}x{k}"] = [
            {"name": r["name"], "rank": r["rank"], "ms": r["ms"], "pass": bool(r["pass"])} for r in rows]
        results["device"] = doc.get("device", "")
        # (a kiln_bench from before the key timed warm)
        results.setdefault("l2", {})[f"{m}x{nn}x{k}"] = doc.get("problem", {}).get("l2", "warm")
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(results, indent=1, sort_keys=True))
        os.replace(tmp, path)
        best = min((r for r in rows if r["pass"]), key=lambda r: r["ms"], default=None)
        print(f"kiln tune: {m}x{nn}x{k}: {len(rows)} candidates, best "
              + (f"{best['ms']:.4f} ms {best['name']}" if best else "none passed"))
    return results


# ---- the logic ----

def winners(t: Tuning, results: dict) -> dict:
    """{(m, n, k): (best name, best ms, {name: ms})} over the passing candidates of each measured size."""
    out = {}
    for size in t.sizes:
        rows = results["sizes"].get("x".join(map(str, size)))
        ok = {r["name"]: r["ms"] for r in rows or () if r["pass"] and r["ms"] > 0}
        if ok:
            name = min(ok, key=lambda nm: (ok[nm], nm))
            out[size] = (name, ok[name], ok)
    return out


def _grouped_note(t: Tuning) -> list:
    if not t.groups:
        return []
    sized = "[m, n, k per group]" if t.group_mode == "k" else "[rows per group, n, k]"
    return [f"# Grouped: each size was timed as {t.groups} equal {t.group_mode} groups; sizes are {sized}, as the",
            "# runtime sizes a grouped problem (kiln_problem_select_m / _k)."]


def _l2_note(won: dict, results: dict) -> list:
    cold = sum(1 for (m, n, k) in won if cold_l2(results, f"{m}x{n}x{k}"))
    if cold == len(won):
        return ["# Every size was timed with cold L2 (kiln_bench: the runs cycle through operand copies of 150 MB)."]
    return [f"# {cold} of the {len(won)} sizes were timed with cold L2 (kiln_bench's operand copies of 150 MB), the "
            "others with warm", "# L2 (operands that fit stay in L2 from run to run; `--stage bench --retime-warm` "
            "times them again)."]


def logic_yaml(t: Tuning, results: dict) -> str:
    won = winners(t, results)
    if not won:
        raise TuneError("no measured size has a passing candidate: nothing to write")
    order, wins = [], {}
    for _size, (name, _ms, _all) in won.items():
        if name not in wins:
            order.append(name)
        wins[name] = wins.get(name, 0) + 1
    # Fallback: the winner whose geometric-mean slowdown against each size's best is smallest (sizes it never ran on
    # count as 4x), so that unmatched shapes land on a kernel that is good everywhere.
    def slowdown(name):
        logs = [math.log(all_.get(name, 4 * best) / best) for (_n, best, all_) in won.values()]
        return math.exp(sum(logs) / len(logs))
    fallback = min(order, key=lambda nm: (slowdown(nm), nm))
    index = {name: i for i, name in enumerate(order)}
    ranked = sorted(order, key=lambda nm: (-wins[nm], index[nm]))
    ci = [index[fallback]] + [index[nm] for nm in ranked if nm != fallback][: max(0, t.ci - 1)]
    measured = len(won)
    lines = [f"# Tuned by `kiln-gen tune {t.source}` on {results.get('device', 'unknown device')}: {measured} sizes "
             f"of {t.benchmark.a.value} x {t.benchmark.b.value} -> {t.benchmark.d.value}, every candidate checked and",
             "# timed by kiln_bench; each exact entry names the fastest. Regenerate with `kiln-gen generate`; retune rather",
             "# than edit. Other sizes: the runtime predicts each solution's time from the nearest measured sizes (timings,",
             "# distance log_mnk: kernel choice follows the orders of magnitude of M, N and K, so nearness is measured in",
             "# log2 space), scaled by the solution's waves and K iterations there, and takes the fastest prediction.",
             *_grouped_note(t),
             *_l2_note(won, results),
             *(["# The sizes were timed with row (A) and column (B) scales."] if t.scales == "row" else []),
             "schema: 1", f"arch: {t.arch.value}", f"family: {t.family.value}", "problem:", _problem_text(t.problem),
             "solutions:"]
    for name in order:
        sol = decode(name)
        lines.append(f"  - {_entry_text(sol, _mi_derived(t, sol))}  # {index[name]}: fastest on {wins[name]} "
                     f"size{'s' if wins[name] != 1 else ''}, geomean slowdown {slowdown(name):.3f}")
    lines += ["selection:", "  exact:"]
    for (m, n, k), (name, ms, all_) in won.items():
        second = sorted(v for nm, v in all_.items() if nm != name)
        margin = f", next {second[0] / ms:.2f}x" if second else ""
        lines.append(f"    - {{size: [{m}, {n}, {k}], solution: {index[name]}}}  # {ms:.4f} ms{margin}")
    lines.append(f"  timings:  # ms of solutions 0..{len(order) - 1} at each size (null: failed or not run)")
    for (m, n, k), (_name, _ms, all_) in won.items():
        ms = ", ".join(f"{all_[nm]:.5g}" if nm in all_ else "null" for nm in order)
        lines.append(f"    - {{size: [{m}, {n}, {k}], ms: [{ms}]}}")
    lines += [f"  neighbors: {min(t.neighbors, len(won))}"]
    if t.groups:  # the runtime's timing model counts every group's tiles (select.c, timed_groups)
        lines.append(f"  groups: {t.groups}  # the timings' equal groups ({t.group_mode})")
    if t.share != 1:  # the timing model's work without the grid's share (select.c, waves_only)
        lines.append(f"  share: {t.share}  # the model counts waves only (the tune's selection)")
    lines += [f"  distance: {t.distance}", f"  fallback: {index[fallback]}", f"ci: [{', '.join(map(str, ci))}]"]
    return "\n".join(lines) + "\n"


def write(t: Tuning, root: Path, results: dict) -> Path:
    text = logic_yaml(t, results)
    out = root / t.output
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(text)
    schema.load_file(tmp, root)  # what is written must load (rules, problem, indices)
    os.replace(tmp, out)
    return out
