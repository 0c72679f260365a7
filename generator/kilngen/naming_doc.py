"""The parameter table of docs/naming.md, written from the catalogue (params.py) by `kiln-gen docs`.

The table sits between two marker lines; the rest of the page is hand-written. tests/py/test_model.py checks that
the committed page holds the table the catalogue gives."""
from __future__ import annotations

from pathlib import Path

from .params import PARAMS, Param

BEGIN = "<!-- parameter table: written from generator/kilngen/params.py by `kiln-gen docs`; do not edit by hand -->"
END = "<!-- end of the parameter table -->"


def _values(p: Param) -> str:
    if p.count > 1:
        return f"{p.count} ints, each {p.allowed.start}..{p.allowed[-1]}"
    return p.allowed_text


def _default(p: Param) -> str:
    if p.default is not None:
        return str(p.default)
    return "from the family" if p.field == "mi" else "required"


def _families(p: Param) -> str:
    used = ", ".join(f.value for f in p.uses)
    fixed = ", ".join(f"{f.value} {v}" for f, v, _w in p.fixed)
    return used + (f" (fixed: {fixed})" if fixed else "")


def table() -> str:
    """The generated block, markers included."""
    lines = [BEGIN, "", "| token | key | values | default | used by | meaning |", "|---|---|---|---|---|---|"]
    lines += [f"| {p.token} | `{p.field}` | {_values(p)} | {_default(p)} | {_families(p)} | {p.doc} |"
              for p in PARAMS]
    lines += ["", "A family that does not implement a parameter takes one fixed value; any other is an error:", ""]
    lines += [f"- `{p.field}` = {v} on {f.value}: the family {why}" for p in PARAMS for f, v, why in p.fixed]
    lines += ["", END]
    return "\n".join(lines)


def update(text: str) -> str:
    """text with the block between the markers replaced (appended when the page has none)."""
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        _old, tail = rest.split(END, 1)
        return head + table() + tail
    return text.rstrip("\n") + "\n\n" + table() + "\n"


def write(path: Path) -> bool:
    """Rewrite the page when its table is stale. Returns whether it changed."""
    text = path.read_text()
    new = update(text)
    if new != text:
        path.write_text(new)
    return new != text
