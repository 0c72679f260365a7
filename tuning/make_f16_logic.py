#!/usr/bin/env python3
"""Writes the f16 GEMM logic (solutions/sm90/wgmma_gemm_f16.yaml) from the tuned bf16 one: the same solutions,
selection and timings with the problem's types set to f16. f16 and bf16 wgmma (m64nNk16) run at one rate and the
two kernels differ only in the instruction's operand type, so one tune serves both (tuning/sm90_gemm_bf16.yaml)."""
from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "solutions/sm90/wgmma_gemm_bf16.yaml"
DST = ROOT / "solutions/sm90/wgmma_gemm_f16.yaml"


def convert(text: str) -> str:
    head, sep, body = text.partition("\nschema: 1\n")
    if not sep:
        raise SystemExit(f"{SRC}: no 'schema: 1' line")
    problem = re.search(r"^problem:\n((?:  .*\n)+)", body, re.M)
    if not problem:
        raise SystemExit(f"{SRC}: no problem block")
    block = problem.group(1)
    new = block.replace("a: bf16", "a: f16").replace("b: bf16", "b: f16").replace("d: [bf16, f32]", "d: [f16, f32]")
    if new == block or "bf16" in new:
        raise SystemExit(f"{SRC}: the problem block is not the bf16 GEMM's:\n{block}")
    head = "\n".join(line for line in head.split("\n") if not line.startswith("# The f16 logic"))
    head = head.replace("bf16 x bf16 -> bf16,", "bf16 x bf16 -> bf16 (this f16 copy:\n# tuning/make_f16_logic.py),")
    return head + sep + body.replace(block, new, 1)


def main() -> int:
    out = convert(SRC.read_text())
    if "--check" in sys.argv[1:]:
        if DST.read_text() != out:
            print(f"{DST} is not {SRC} with f16 types: run tuning/make_f16_logic.py", file=sys.stderr)
            return 1
        return 0
    DST.write_text(out)
    print(f"wrote {DST.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
