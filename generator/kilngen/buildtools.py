"""Build steps CMake runs: compile one kernel into a code object (checking its resources), embed code objects in C.
NVIDIA kernels are compiled here (nvcc, ptxas -v); AMD kernels in buildtools_amd.py."""
from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from .model import ARCH_INFO, Arch, Vendor


@dataclass(frozen=True)
class Resources:
    function: str
    registers: int
    spill_stores: int
    spill_loads: int
    stack: int
    wgmma_serialized: bool = False  # ptxas C7513: it serialized the function's wgmma (their overlap is lost)

    def line(self) -> str:
        return (f"function={self.function} registers={self.registers} spill_stores={self.spill_stores} "
                f"spill_loads={self.spill_loads} stack={self.stack} wgmma_serialized={int(self.wgmma_serialized)}")


_FUNC = re.compile(r"Compiling entry function '([^']+)'")
_SPILL = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_REGS = re.compile(r"Used (\d+) registers")
_SERIAL = re.compile(r"wgmma\.mma_async instructions are serialized.*in the function '([^']+)'")


def parse_ptxas(text: str) -> list[Resources]:
    """Per-function resources from `ptxas -v` output, and whether ptxas serialized a function's wgmma (C7513)."""
    out, func, spill = [], None, (0, 0, 0)
    serialized = set(_SERIAL.findall(text))
    for line in text.splitlines():
        if m := _FUNC.search(line):
            func, spill = m.group(1), (0, 0, 0)
        elif (m := _SPILL.search(line)) and func:
            spill = tuple(int(g) for g in m.groups())
        elif (m := _REGS.search(line)) and func:
            out.append(Resources(func, int(m.group(1)), spill[1], spill[2], spill[0], func in serialized))
            func = None
    return out


def nvcc_command(compiler: str, arch: Arch, include: str, source: str, output: str) -> list[str]:
    target = ARCH_INFO[arch].offload.replace("sm_", "")
    return [compiler, "-x", "cu", "-std=c++17", "-O3", "-cubin", f"-gencode=arch=compute_{target},code=sm_{target}",
            "-Xptxas", "-v", "-Xptxas", "-warn-spills", "-I", include, "-o", output, source]


def compile_kernel(arch: str, compiler: str, include: str, source: str, output: str, log: str,
                   objdump: str | None = None) -> int:
    a = Arch(arch)
    if ARCH_INFO[a].vendor is Vendor.AMD:
        from . import buildtools_amd
        return buildtools_amd.compile_kernel(a, compiler, include, source, output, log, objdump)
    proc = subprocess.run(nvcc_command(compiler, a, include, source, output), capture_output=True, text=True)
    text = proc.stdout + proc.stderr
    if proc.returncode != 0:
        sys.stderr.write(text)
        return proc.returncode
    resources = parse_ptxas(text)
    Path(log).write_text("".join(r.line() + "\n" for r in resources))
    for r in resources:  # reported (the log and here), not refused: the kernel is right, only slower
        if r.wgmma_serialized:
            print(f"kiln compile: {source}: {r.function}: ptxas serialized its wgmma (C7513)", file=sys.stderr)
    bad = [r for r in resources if r.spill_stores or r.spill_loads or r.stack]
    if not resources or bad:
        sys.stderr.write(text)
        what = "; ".join(f"{r.function}: {r.spill_stores} B spilled, {r.stack} B stack" for r in bad)
        print(f"kiln compile: {source}: {what or 'no ptxas resource report'}", file=sys.stderr)
        Path(output).unlink(missing_ok=True)
        return 1
    return 0


def embed(list_file: str, output: str) -> int:
    """Write a C file holding every code object named in list_file, sorted by kernel name."""
    paths = sorted((Path(p) for p in Path(list_file).read_text().split() if p), key=lambda p: p.stem)
    lines = ['/* Code objects embedded by kiln at build time. */', '#include "table.h"', ""]
    for i, p in enumerate(paths):
        data = p.read_bytes()
        lines.append(f"static const unsigned char co{i}[{len(data)}] = {{")
        for off in range(0, len(data), 24):
            lines.append("    " + ",".join(str(b) for b in data[off:off + 24]) + ",")
        lines.append("};")
    lines.append("const kiln_code_object kiln_code_objects[] = {")
    for i, p in enumerate(paths):
        lines.append(f'    {{"{p.stem}", co{i}, sizeof co{i}}},')
    if not paths:
        lines.append("    {0, 0, 0},")
    lines.append("};")
    lines.append(f"const int kiln_num_code_objects = {len(paths)};")
    text = "\n".join(lines) + "\n"
    out = Path(output)
    if not out.is_file() or out.read_text() != text:
        out.write_text(text)
    return 0
