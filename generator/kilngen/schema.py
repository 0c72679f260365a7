"""YAML front end: solutions/<arch>/*.yaml are validated here, once, and become frozen typed objects.

Every error is a SchemaError whose message is one line, `file:line: key: why`: the file relative to the root, the
1-based line of the offending YAML node, the key it belongs to and why it is wrong. The format is in docs/yaml.md.
Nothing downstream of this module validates again: a SolutionFile holds only solutions that can be built.
"""
from __future__ import annotations

import itertools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import yaml

from .families import FAMILIES, check, default_mi  # noqa: F401  (check, default_mi: re-exported)
from .model import (ARCH_INFO, DTYPE_INFO, KIND_INFO, PARAM_FIELDS, PARAMS, Arch, DType, Family, Kind, Layout, Problem,
                    Solution, kind_of, kinds_text)
from .params import BUILTIN_DEFAULTS, REQUIRED_PARAMS  # noqa: F401  (re-exported)
from .rules import _fmt, _or, shape_problem
from .yamlread import SchemaError, Reader, document, node_line, plural  # noqa: F401  (SchemaError: re-exported)

DISTANCES = ("log_mnk", "linear_mnk")
# Bounds of what the selection logic lands in: m, n, k are int32 in the runtime; timings are C floats, and the
# runtime predicts from at most KILN_MODEL_MAX_NEIGHBORS (runtime/src/select.h) measured sizes.
MS_RANGE = (1e-6, 1e6)
MAX_NEIGHBORS = 16
MAX_TIMED_GROUPS = 65536  # selection.groups (kiln_bench --groups)
# Solutions one file may expand to (forks multiply): the generator renders each one.
MAX_SOLUTIONS = 1024

# Parameter values when neither the entry (its fork/with) nor `defaults` gives one come from the catalogue
# (params.py: BUILTIN_DEFAULTS); mt and wg have none; mi's follows from the family (FamilySpec.default_mi_for).
_PARAM_COUNT = {p.field: p.count for p in PARAMS}


@dataclass(frozen=True)
class Logic:
    """Selection logic of one problem type: its solutions (YAML order, forks expanded) and how to choose."""
    source: str
    arch: Arch
    problem: Problem
    solutions: tuple        # tuple[Solution, ...]
    exact: tuple            # tuple[(m, n, k, solution index), ...] in YAML order
    distance: str           # one of DISTANCES
    fallback: int
    timings: tuple = ()     # tuple[((m, n, k), (ms or None per solution)), ...]: measured times (kiln-gen tune)
    neighbors: int = 0      # with timings: predict from this many nearest measured sizes
    fast_accum: bool = False  # `accumulate: fast`: for problems that allow fp8 fast accumulation only
    timed_groups: int = 0   # grouped kinds: the groups the timings were measured with (selection.groups)
    share: int = 1          # with timings: 1 counts the unrounded grid share in the model's work, 0 the waves only


@dataclass(frozen=True)
class SolutionFile:
    source: str             # path relative to the root, with forward slashes
    arch: Arch
    family: Family
    problems: tuple         # tuple[Problem, ...], product(a, b, d, layout)
    logics: tuple           # tuple[Logic, ...], one per problem
    ci: frozenset           # solution indices compiled in CI builds
    lines: tuple = ()       # YAML line of the entry each solution index came from

    @property
    def solutions(self) -> tuple:
        return tuple(sol for logic in self.logics for sol in logic.solutions)


# --- reading YAML nodes -------------------------------------------------------------------------------------------

class _Set(NamedTuple):
    """A parameter value and the line of the node that gave it."""
    value: object
    line: int


_line = node_line


class _Reader(Reader):
    """yamlread.Reader plus the reads of solution parameters."""

    def param(self, field: str, node) -> _Set:
        count = _PARAM_COUNT[field]
        value = self.ints(node, field, count) if count > 1 else self.int_(node, field)
        return _Set(value, _line(node))

    def params(self, node, key: str, allow=()) -> dict:
        """A mapping of parameter values: {field: _Set}. Keys in allow are skipped (returned as nodes)."""
        items = self.mapping(node, key, known=PARAM_FIELDS + tuple(allow), what="parameter")
        return {name: (self.param(name, value) if name in PARAM_FIELDS else value)
                for name, (_key, value) in items.items()}


# --- the file -----------------------------------------------------------------------------------------------------

_TOP_KEYS = ("schema", "arch", "family", "problem", "defaults", "solutions", "selection", "ci")
_REQUIRED_TOP = ("schema", "arch", "family", "problem", "solutions", "selection")
_PROBLEM_KEYS = ("kind", "a", "b", "d", "layout", "accumulate")
ACCUMULATE = ("promoted", "fast")  # problem.accumulate: fp8 sums in FP32 (default), or wgmma's fast accumulation


class _Entry(NamedTuple):
    line: int
    label: str      # solutions[i]
    given: dict     # {field: _Set} from the entry or its fork/with


def _listed(r: _Reader, items: dict, name: str, cls, what: str) -> list:
    """[(node, value)] of a problem key: a scalar or a list, without repeats."""
    key, out, seen = f"problem.{name}", [], {}
    for node in r.one_or_more(items[name][1], key):
        value = r.enum(node, key, cls, what)
        r.once(seen, value, node, key, value.value)
        out.append((node, value))
    return out


def _problems(r: _Reader, node, arch: Arch, family: Family) -> tuple:
    items = r.mapping(node, "problem", _PROBLEM_KEYS, prefix="problem")
    r.require(items, node, ("a", "b", "d", "layout"), "problem")
    a, b, d, layouts = (_listed(r, items, name, cls, what) for name, cls, what in (
        ("a", DType, "dtype"), ("b", DType, "dtype"), ("d", DType, "dtype"), ("layout", Layout, "layout")))
    speaks = ARCH_INFO[arch].fp8_formats
    for key, operands in (("problem.a", a), ("problem.b", b)):
        for item, dt in operands:
            fp8 = DTYPE_INFO[dt].fp8
            if fp8 and fp8 != speaks:
                spoken = "/".join(t.value for t in DType if DTYPE_INFO[t].fp8 == speaks)
                r.fail(item, key, f"{dt.value} is an {fp8.upper()} fp8 format; {arch.value} takes "
                                  f"{speaks.upper()} {spoken} only")
    declared = None
    if "kind" in items:
        declared = r.enum(items["kind"][1], "problem.kind", Kind, "kind")
        implemented = FAMILIES[family].kinds
        if declared not in implemented:
            r.fail(items["kind"][1], "problem.kind", f"the {family.value} family has no {declared.value} kernels "
                                                     f"(it implements {', '.join(k.value for k in implemented)})")
    for (_an, ta), (bn, tb) in itertools.product(a, b):
        kind = kind_of(ta, tb, declared)
        if kind is None and declared is not None and KIND_INFO[declared].declared:
            r.fail(items["kind"][1], "problem.kind",
                   f"{declared.value} takes {KIND_INFO[declared].operands}, not {ta.value} x {tb.value}")
        if kind is None:
            r.fail(bn, "problem.b", f"{ta.value} x {tb.value} makes no kiln problem kind ({kinds_text()})")
        if declared is not None and declared is not kind:
            r.fail(items["kind"][1], "problem.kind",
                   f"{declared.value} does not match {ta.value} x {tb.value}, which is {kind.value}")
        outputs = KIND_INFO[kind].outputs(ta)
        for dn, td in d:
            if td not in outputs:
                r.fail(dn, "problem.d", f"{td.value} is not an output of {kind.value} {ta.value} x {tb.value}; "
                                        f"use {_or([t.value for t in outputs])}")
        allowed, reason = KIND_INFO[kind].layouts, KIND_INFO[kind].layout_reason
        for ln, layout in layouts:
            if layout not in allowed:
                r.fail(ln, "problem.layout", f"{layout.value}: {reason}")
    problems = tuple(Problem(kind_of(ta, tb, declared), ta, tb, td, lay)
                     for (_an, ta), (_bn, tb), (_dn, td), (_ln, lay) in itertools.product(a, b, d, layouts))
    fast = False
    if "accumulate" in items:
        node = items["accumulate"][1]
        fast = r.choice(node, "problem.accumulate", ACCUMULATE, "accumulation") == "fast"
        slow = next((p for p in problems if fast and (not p.both_fp8 or p.spec.block_scales)), None)
        if slow is not None:
            r.fail(node, "problem.accumulate", f"fast accumulation is for tensor/row-scaled fp8 x fp8; "
                                               f"{slow.kind.value} {slow.a.value} x {slow.b.value} has none")
    return problems, fast


def _promotion(r: _Reader, entries: list, per_problem: list, fast: bool, defaults: dict) -> None:
    """A logic for problems that want FP32 sums (no `accumulate: fast`) holds only kernels that give them."""
    if fast:
        return
    for sols in per_problem:
        for entry, sol in zip(entries, sols):
            if sol.spec.fast_accum(sol):
                setting = entry.given.get("pr") or defaults.get("pr")
                r.fail(setting.line if setting else entry.line, "pr",
                       "0 sums all of K in wgmma's reduced-precision fp8 accumulator; give pr 1..4 (FP32 "
                       "promotion every pr K-tiles), or mark the file's problem `accumulate: fast`")


def _fork(r: _Reader, node, fixed: dict) -> list:
    """The fork's expansion: product of its value lists in key order, each merged over the `with` values."""
    items = r.mapping(node, "fork", PARAM_FIELDS, what="parameter")
    if not items:
        r.fail(node, "fork", "empty fork; list at least one parameter")
    axes = []
    for field, (key_node, value_node) in items.items():
        if field in fixed:
            r.fail(key_node, field, f"given in both fork and with (with at line {fixed[field].line})")
        candidates = r.seq(value_node, field)
        if not candidates:
            r.fail(value_node, field, "empty fork list; give at least one value")
        values, seen = [], {}
        for candidate in candidates:
            values.append(r.param(field, candidate))
            r.once(seen, values[-1].value, candidate, field, _fmt(values[-1].value))
        axes.append((field, values))
    size = 1
    for _field, values in axes:
        size *= len(values)
    if size > MAX_SOLUTIONS:
        r.fail(node, "fork", f"expands to {size} solutions; a file may have at most {MAX_SOLUTIONS}")
    return [{**fixed, **dict(zip([field for field, _v in axes], combo))}
            for combo in itertools.product(*[values for _f, values in axes])]


def _entries(r: _Reader, node, defaults: dict) -> list:
    """Every solution entry, forks expanded, in YAML order."""
    nodes = r.seq(node, "solutions")
    if not nodes:
        r.fail(node, "solutions", "empty list; give at least one solution")
    out = []
    for i, entry in enumerate(nodes):
        label = f"solutions[{i}]"
        given = r.params(entry, label, allow=("fork", "with"))
        if "fork" in given:
            loose = [name for name in given if name not in ("fork", "with")]
            if loose:
                r.fail(given[loose[0]].line, loose[0], "a fork entry takes only fork and with; move it under with")
            fixed = r.params(given["with"], "with") if "with" in given else {}
            expansions = _fork(r, given["fork"], fixed)
        elif "with" in given:
            r.fail(given["with"], "with", "with belongs to a fork entry; put the parameters in the entry")
        else:
            expansions = [given]
        for params in expansions:
            for field in REQUIRED_PARAMS:
                if field not in params and field not in defaults:
                    r.fail(entry, field, "required; give it in the entry, its fork/with, or defaults")
            out.append(_Entry(_line(entry), label, params))
        if len(out) > MAX_SOLUTIONS:
            r.fail(entry, label, f"the file expands to more than {MAX_SOLUTIONS} solutions")
    return out


def _solution(r: _Reader, arch: Arch, family: Family, problem: Problem, entry: _Entry, defaults: dict) -> Solution:
    values, lines, defaulted = {}, {}, set()
    for field in PARAM_FIELDS:
        setting = entry.given.get(field) or defaults.get(field)
        if setting is None:
            setting = _Set(None if field == "mi" else BUILTIN_DEFAULTS[field], entry.line)
            defaulted.add(field)
        values[field], lines[field] = setting
    # The shapes first: what is derived below (mi, then every rule) divides by them.
    for field in ("mt", "wg", "mi"):
        why = shape_problem(field, values[field]) if values[field] is not None else None
        if why:
            r.fail(lines[field], field, why)
    if "mi" in defaulted:
        values["mi"] = FAMILIES[family].default_mi_for(
            Solution(arch=arch, family=family, problem=problem, **dict(values, mi=(0, 0, 0))))
    sol = Solution(arch=arch, family=family, problem=problem, **values)
    broken = check(sol)
    if broken:
        field, why = broken
        if field in defaulted:
            why += f" ({field} defaults to {_fmt(values[field])})"
        r.fail(lines[field], field, why)
    return sol


def _logic_solutions(r, arch, family, problem, entries, defaults) -> tuple:
    solutions, first = [], {}
    for entry in entries:
        sol = _solution(r, arch, family, problem, entry, defaults)
        if sol.name in first:
            earlier = first[sol.name]
            r.fail(entry.line, entry.label, f"duplicates the solution of {earlier.label} at line {earlier.line} "
                                            f"({sol.name[len(problem.code) + 1:]})")
        first[sol.name] = entry
        solutions.append(sol)
    return tuple(solutions)


def _ms(r: _Reader, node, key: str):
    value = r.scalar(node, key) if isinstance(node, yaml.ScalarNode) else "?"
    if value is None:
        return None
    low, high = MS_RANGE
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        r.fail(node, key, f"expected a time in ms in {low:g}..{high:g} or null, got {r.describe(node, key)}")
    return float(value)


def _size(r: _Reader, node, key: str) -> tuple:
    """[m, n, k]: each in 1..INT32_MAX (the runtime's problem sizes are int32)."""
    size = r.ints(node, key, 3)
    if min(size) <= 0:
        r.fail(node, key, f"{_fmt(size)} must be positive")
    return size


def _timings(r: _Reader, node, count: int) -> tuple:
    out, seen = [], {}
    for j, item in enumerate(r.seq(node, "selection.timings")):
        label = f"selection.timings[{j}]"
        fields = r.mapping(item, label, ("size", "ms"), prefix=label)
        r.require(fields, item, ("size", "ms"), label)
        size = _size(r, fields["size"][1], f"{label}.size")
        r.once(seen, size, fields["size"][1], f"{label}.size", _fmt(size))
        ms_nodes = r.seq(fields["ms"][1], f"{label}.ms")
        if len(ms_nodes) != count:
            r.fail(fields["ms"][1], f"{label}.ms", f"has {plural(len(ms_nodes), 'time')}; the file expands to "
                                                   f"{plural(count, 'solution')}")
        ms = tuple(_ms(r, m, f"{label}.ms") for m in ms_nodes)
        if all(v is None for v in ms):
            r.fail(fields["ms"][1], f"{label}.ms", "no solution has a time")
        out.append((size, ms))
    return tuple(out)


def _timed_int(r: _Reader, items: dict, key: str, timings: tuple, default: int, needs: str):
    """A `selection` integer that only a logic with timings takes: (value, its node), or (default, None) if absent."""
    if key not in items:
        return default, None
    node = items[key][1]
    value = r.int_(node, f"selection.{key}")
    if not timings:
        r.fail(node, f"selection.{key}", f"needs timings ({needs})")
    return value, node


def _selection(r: _Reader, node, count: int, grouped: bool):
    items = r.mapping(node, "selection", ("exact", "timings", "neighbors", "distance", "fallback", "groups", "share"),
                      prefix="selection")
    r.require(items, node, ("distance", "fallback"), "selection")
    exact, seen = [], {}
    for j, item in enumerate(r.seq(items["exact"][1], "selection.exact") if "exact" in items else ()):
        label = f"selection.exact[{j}]"
        fields = r.mapping(item, label, ("size", "solution"), prefix=label)
        r.require(fields, item, ("size", "solution"), label)
        size_node = fields["size"][1]
        size = _size(r, size_node, f"{label}.size")
        r.once(seen, size, size_node, f"{label}.size", _fmt(size))
        exact.append(size + (r.index(fields["solution"][1], f"{label}.solution", count),))
    distance = r.choice(items["distance"][1], "selection.distance", DISTANCES, "distance")
    fallback = r.index(items["fallback"][1], "selection.fallback", count)
    timings = _timings(r, items["timings"][1], count) if "timings" in items else ()
    neighbors, node = _timed_int(r, items, "neighbors", timings, 0, "the measured sizes it predicts from")
    if node is not None:
        most = min(len(timings), MAX_NEIGHBORS)
        if not 1 <= neighbors <= most:
            why = "the measured sizes" if most == len(timings) else "the most the runtime uses"
            r.fail(node, "selection.neighbors", f"{neighbors} must be in 1..{most} ({why})")
    elif timings:
        r.fail(items["timings"][1], "selection.timings", "timings need neighbors (how many nearest sizes predict)")
    if "groups" in items and not grouped:
        r.fail(items["groups"][1], "selection.groups",
               "is for grouped kinds (the group count their timings were measured with)")
    groups, node = _timed_int(r, items, "groups", timings, 0, "it says how many groups they were measured with")
    if node is not None and not 1 <= groups <= MAX_TIMED_GROUPS:
        r.fail(node, "selection.groups", f"{groups} must be in 1..{MAX_TIMED_GROUPS}")
    share, node = _timed_int(r, items, "share", timings, 1, "it shapes the model that predicts from them")
    if node is not None and share not in (0, 1):
        r.fail(node, "selection.share", f"{share} must be 0 (waves only) or 1 (waves and the grid's share)")
    return tuple(exact), distance, fallback, timings, neighbors, groups, share


def _ci(r: _Reader, node, count: int) -> frozenset:
    seen = {}
    for item in r.seq(node, "ci"):
        index = r.index(item, "ci", count)
        r.once(seen, index, item, "ci", str(index))
    return frozenset(seen)


def _parse(r: _Reader, doc) -> SolutionFile:
    top = r.top(doc, _TOP_KEYS, _REQUIRED_TOP, "schema, arch, family, problem, solutions, selection")

    arch = r.enum(top["arch"][1], "arch", Arch, "arch")
    folder = r.source.split("/")
    if len(folder) == 3 and folder[0] == "solutions" and folder[1] != arch.value:
        r.fail(top["arch"][1], "arch", f"{arch.value} in a file under solutions/{folder[1]}/")
    family_node = top["family"][1]
    family = r.enum(family_node, "family", Family, "family")
    spec = FAMILIES[family]
    if spec.vendor != ARCH_INFO[arch].vendor:
        r.fail(family_node, "family", f"family {family.value} is {spec.vendor.value}'s; "
                                      f"arch {arch.value} is {ARCH_INFO[arch].vendor.value}")
    if family not in ARCH_INFO[arch].families:
        runs_on = [a.value for a in Arch if family in ARCH_INFO[a].families]
        r.fail(family_node, "family", f"family {family.value} is for {_or(runs_on)}; arch {arch.value} takes "
                                      f"{_or([f.value for f in ARCH_INFO[arch].families])}")
    problems, fast = _problems(r, top["problem"][1], arch, family)
    refused = next((p.layout for p in problems if p.layout not in spec.layouts), None)
    if refused is not None:
        r.fail(top["problem"][1], "layout", f"the {family.value} family {spec.layout_reason}")
    defaults = r.params(top["defaults"][1], "defaults") if "defaults" in top else {}
    entries = _entries(r, top["solutions"][1], defaults)
    per_problem = [_logic_solutions(r, arch, family, p, entries, defaults) for p in problems]
    _promotion(r, entries, per_problem, fast, defaults)
    exact, distance, fallback, timings, neighbors, groups, share = _selection(
        r, top["selection"][1], len(entries), any(p.spec.grouped for p in problems))
    ci = _ci(r, top["ci"][1], len(entries)) if "ci" in top else frozenset({fallback})
    logics = tuple(Logic(r.source, arch, p, sols, exact, distance, fallback, timings, neighbors, fast, groups, share)
                   for p, sols in zip(problems, per_problem))
    return SolutionFile(r.source, arch, family, problems, logics, ci, tuple(e.line for e in entries))


def _relative(path, root) -> str:
    return Path(os.path.relpath(os.path.abspath(path), os.path.abspath(root))).as_posix()


def load_file(path, root) -> SolutionFile:
    """Read and validate one solution file. Errors name the file relative to root."""
    with document(path, _relative(path, root), _Reader) as (reader, doc):
        return _parse(reader, doc)


def load_tree(root) -> list:
    """Every solutions/<arch>/*.yaml under root, sorted by path. A kernel name defined twice is an error."""
    paths = sorted(Path(root).glob("solutions/*/*.yaml"), key=lambda p: _relative(p, root))
    files = [load_file(path, root) for path in paths]
    where = {}
    for sf in files:
        for logic in sf.logics:
            for index, sol in enumerate(logic.solutions):
                line = sf.lines[index]
                if sol.name in where and where[sol.name][0] != sf.source:
                    other, other_line = where[sol.name]
                    raise SchemaError(f"{sf.source}:{line}: solutions: kernel {sol.name} is also defined in "
                                      f"{other}:{other_line}")
                where.setdefault(sol.name, (sf.source, line))
    return files
