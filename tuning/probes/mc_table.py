#!/usr/bin/env python3
"""Per size, each candidate's time (us) by tile, pgr and multicast (mc), from bench/heldout.py's JSON (its
candidates) or kiln_bench's --json; with two files of either kind, both times and their ratio.

    python3 tuning/probes/mc_table.py tuning/results/probe_mid_mc_h100.json
    python3 tuning/probes/mc_table.py A.json B.json      # A's us, B's us, A / B
"""
from __future__ import annotations

import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "generator"))
from kilngen.model import decode  # noqa: E402


def form(name: str) -> str:
    s = decode(name)
    return f"{s.mt[0]}x{s.mt[1]} pgr{s.pgr} mc{s.mc}"


def times(path: str) -> dict:
    """{(size, form): us} from either JSON."""
    data = json.loads(pathlib.Path(path).read_text())
    out = {}
    for row in data["rows"]:
        size = f"{row['m']}x{row['n']}x{row['k']}"
        if "candidates" in row:  # heldout.py
            for c in row["candidates"]:
                if c.get("ok", True):
                    out[(size, form(c["name"]))] = c["ms"] * 1e3
        elif row.get("pass", True):  # kiln_bench
            out[(size, form(row["name"]))] = row["ms"] * 1e3
    return out


def main(argv: list[str]) -> int:
    if not 1 <= len(argv) <= 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    a = times(argv[0])
    b = times(argv[1]) if len(argv) == 2 else None
    for key in sorted(a, key=lambda k: (tuple(int(v) for v in k[0].split("x")), k[1])):
        line = f"{key[0]:>16}  {key[1]:<20} {a[key]:8.1f}"
        if b is not None and key in b:
            line += f" {b[key]:8.1f}  {a[key] / b[key]:5.2f}"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
