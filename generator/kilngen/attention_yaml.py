"""YAML front end of the attention kernels: solutions/<arch>/attention/*.yaml are validated here, once, and become
frozen AttnSolutions. Errors are yamlread.SchemaError, one line `file:line: key: why` (docs/yaml.md).

The files sit one folder below the GEMM files so that the GEMM loader (schema.load_tree: solutions/*/*.yaml) never
reads them. A file:

    schema: 1
    arch: sm90
    family: mma
    problem: {kind: attention, qkv: [e4m3, e5m2], o: [bf16, f16]}
    solutions:
      - {head_dim: 128, bm: 128, bn: 64, warps: 8}

expands to every (qkv, o) pair times every entry, entries in YAML order: the runtime prefers the earlier of the
kernels that fit a problem's arch, types and head dim. The first kernel of each file is compiled in CI builds.
"""
from __future__ import annotations

import itertools
import os
from dataclasses import dataclass
from pathlib import Path

from .attention import ARCH_FAMILY, FAMILIES, OUTPUTS, PARAM, AttnSolution, qkv_types
from .vocab import ARCH_INFO, Arch, DType, Family, Kind
from .yamlread import Reader, SchemaError, document, hint, node_line

KIND = "attention"
MAX_SOLUTIONS = 256
GLOB = "solutions/*/attention/*.yaml"

_TOP_KEYS = ("schema", "arch", "family", "problem", "solutions")
_PROBLEM_KEYS = ("kind", "qkv", "o")


@dataclass(frozen=True)
class AttnFile:
    source: str          # path relative to the root, forward slashes
    arch: Arch
    family: Family
    solutions: tuple     # tuple[AttnSolution, ...]: product(qkv, o, entries), entries in YAML order
    lines: tuple         # the YAML line of the entry each solution came from

    @property
    def ci(self) -> tuple:
        """The kernels CI builds compile: the file's first."""
        return self.solutions[:1]


def _types(r: Reader, items: dict, key: str, allowed: tuple, why: str) -> list:
    out, seen = [], {}
    for node in r.one_or_more(items[key][1], f"problem.{key}"):
        dt = r.enum(node, f"problem.{key}", DType, "dtype")
        if dt not in allowed:
            r.fail(node, f"problem.{key}", f"{dt.value} {why}; use {' or '.join(t.value for t in allowed)}")
        r.once(seen, dt, node, f"problem.{key}", dt.value)
        out.append(dt)
    return out


def _problem(r: Reader, node, arch: Arch) -> tuple:
    items = r.mapping(node, "problem", _PROBLEM_KEYS, prefix="problem")
    r.require(items, node, _PROBLEM_KEYS, "problem")
    kind_node = items["kind"][1]
    if r.scalar(kind_node, "problem.kind") in [k.value for k in Kind]:
        r.fail(kind_node, "problem.kind", f"{kind_node.value} is a GEMM kind (solutions/<arch>/*.yaml); files under "
                                          f"solutions/<arch>/attention/ are kind: {KIND}")
    r.choice(kind_node, "problem.kind", (KIND,), "kind")
    speaks = ARCH_INFO[arch].fp8_formats.upper()
    qkv = _types(r, items, "qkv", qkv_types(arch), f"is not an fp8 type {arch.value} reads ({speaks} fp8 only)")
    o = _types(r, items, "o", OUTPUTS, "is not an attention output")
    return qkv, o


def _entry(r: Reader, node, label: str, family: Family) -> tuple:
    """({field: value}, {field: line}) of one solution entry, defaults filled in."""
    spec = FAMILIES[family]
    items = r.mapping(node, label, prefix=label)
    for name, (key_node, _value) in items.items():
        if name not in spec.fields:
            why = (f"not a parameter of the {family.value} family" if name in PARAM else "unknown parameter")
            r.fail(key_node, f"{label}.{name}", f"{why}; {hint(name, spec.fields)}")
    values, lines = {}, {}
    for field in spec.fields:
        if field in items:
            values[field] = r.int_(items[field][1], f"{label}.{field}")
            lines[field] = node_line(items[field][1])
        elif PARAM[field].default is None:
            r.fail(node, f"{label}.{field}", f"required key missing ({PARAM[field].doc})")
        else:
            values[field] = PARAM[field].default
            lines[field] = node_line(node)
    return values, lines


def _parse(r: Reader, doc) -> AttnFile:
    top = r.top(doc, _TOP_KEYS, _TOP_KEYS, "schema, arch, family, problem, solutions")

    arch_node = top["arch"][1]
    arch = r.enum(arch_node, "arch", Arch, "arch")
    if arch not in ARCH_FAMILY:
        r.fail(arch_node, "arch", f"{arch.value} has no attention kernels; archs: "
                                  f"{', '.join(a.value for a in ARCH_FAMILY)}")
    folder = r.source.split("/")
    if len(folder) == 4 and folder[0] == "solutions" and folder[1] != arch.value:
        r.fail(arch_node, "arch", f"{arch.value} in a file under solutions/{folder[1]}/")
    family_node = top["family"][1]
    family = r.enum(family_node, "family", Family, "family")
    if family not in ARCH_FAMILY[arch]:
        r.fail(family_node, "family", f"{arch.value}'s attention kernels are of the "
                                      f"{' or '.join(f.value for f in ARCH_FAMILY[arch])} "
                                      f"family, not {family.value}")
    qkv, outputs = _problem(r, top["problem"][1], arch)

    nodes = r.seq(top["solutions"][1], "solutions")
    if not nodes:
        r.fail(top["solutions"][1], "solutions", "empty list; give at least one solution")
    if len(nodes) * len(qkv) * len(outputs) > MAX_SOLUTIONS:
        r.fail(top["solutions"][1], "solutions", f"expands to more than {MAX_SOLUTIONS} kernels")
    entries, seen = [], {}
    for i, node in enumerate(nodes):
        label = f"solutions[{i}]"
        values, lines = _entry(r, node, label, family)
        first = AttnSolution(arch, family, qkv[0], outputs[0], **values)
        for field, why in first.problems():  # the rules do not depend on the types
            r.fail(lines.get(field, node_line(node)), f"{label}.{field}", why)
        key = tuple(sorted(values.items()))
        if key in seen:
            r.fail(node, label, f"the same kernel as solutions[{seen[key][0]}] (line {seen[key][1]})")
        seen[key] = (i, node_line(node))
        entries.append((node_line(node), values))
    sols, where = [], []
    for t8, to, (line, values) in itertools.product(qkv, outputs, entries):
        sol = AttnSolution(arch, family, t8, to, **values)
        assert not sol.problems(), sol.problems()
        sols.append(sol)
        where.append(line)
    return AttnFile(r.source, arch, family, tuple(sols), tuple(where))


def _relative(path, root) -> str:
    return Path(os.path.relpath(os.path.abspath(path), os.path.abspath(root))).as_posix()


def load_file(path, root) -> AttnFile:
    """Read and validate one attention file; errors name it relative to root."""
    with document(path, _relative(path, root)) as (reader, doc):
        return _parse(reader, doc)


def load_tree(root) -> list:
    """Every solutions/<arch>/attention/*.yaml under root, sorted by path. A kernel defined twice is an error."""
    paths = sorted(Path(root).glob(GLOB), key=lambda p: _relative(p, root))
    files = [load_file(path, root) for path in paths]
    where: dict = {}
    for af in files:
        for sol, line in zip(af.solutions, af.lines):
            if sol.name in where and where[sol.name][0] != af.source:
                other, other_line = where[sol.name]
                raise SchemaError(f"{af.source}:{line}: solutions: kernel {sol.name} is also defined in "
                                  f"{other}:{other_line}")
            where.setdefault(sol.name, (af.source, line))
    return files

