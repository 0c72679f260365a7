"""Probe: sm_90 code objects after ptxas: the scheduling hints of long float add / multiply-add runs.

Each sm_90 instruction is 16 bytes, two little-endian 64-bit words. The low word's bits 0-11 are the opcode, 12-15
the guard predicate; the high word's bits 41-44 are the stall count, bit 45 the yield hint, 46-51 the scoreboards
set, 52-57 those waited on and 58-61 the operand-reuse flags (slots a, b, c and a fourth). Only the yield and reuse
bits are touched here, and only on register-form FFMA / FADD: both are hints to the issue logic (reuse: keep this
operand in the reuse cache for the next instruction; the yield bit: whether the scheduler may switch to another warp
after this one), so a change can make a kernel slower or faster but never changes what it computes.

Why it was tried: a consumer warp that folds a wgmma batch into its accumulators runs 32-128 FFMA / FADD back to
back, and the other consumer warpgroup's warp on the same scheduler waits to issue its wgmma meanwhile. What ptxas
(CUDA 13) already emits there: bit 45 set on every other fold and clear between, with operand reuse on the FFMA
that passes the block scale to the next. Measured on the H100 (tuning/results/probe_sass_yield_h100.txt): every
fold of the run "switch" (no reuse, yield bit clear) 1-5 % slower, half of each run 1-3 %, every fold "stay"
8-13 %; ptxas's alternation is the best of the four. Attention with every run "switch": no steady gain (head dim 256
2.4 % and 64 1.8 % slower, 128 level but for one noisy causal round; outputs bitwise equal). A probe tool, not a
build step.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

OP_MASK = 0xFFF
OP_FFMA = 0x223   # FFMA Rd, Ra, Rb, Rc
OP_FADD = 0x221   # FADD Rd, Ra, Rb
YIELD = 1 << 45
REUSE = 0xF << 58


class SassError(ValueError):
    pass


@dataclass
class Section:
    name: str
    offset: int
    size: int
    flags: int


def sections(elf: bytes) -> list[Section]:
    """The section headers of a 64-bit little-endian ELF (a cubin)."""
    if elf[:4] != b"\x7fELF" or elf[4] != 2 or elf[5] != 1:
        raise SassError("not a 64-bit little-endian ELF")
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    if shentsize != 64 or shoff + shnum * 64 > len(elf) or shstrndx >= shnum:
        raise SassError("bad section header table")
    raw = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * 64) for i in range(shnum)]
    stroff, strsize = raw[shstrndx][4], raw[shstrndx][5]
    strtab = elf[stroff:stroff + strsize]
    out = []
    for name, _type, flags, _addr, off, size, *_ in raw:
        end = strtab.find(b"\0", name)
        out.append(Section(strtab[name:end].decode("latin-1"), off, size, flags))
    return out


def text_sections(elf: bytes) -> list[Section]:
    return [s for s in sections(elf) if s.name.startswith(".text.") and s.flags & 0x4 and s.size % 16 == 0]


def words(elf: bytes, sec: Section) -> list[tuple[int, int]]:
    return [struct.unpack_from("<QQ", elf, sec.offset + i) for i in range(0, sec.size, 16)]


def is_float_fold(lo: int) -> bool:
    """Register-form FFMA or FADD: what a promotion or a scaled fold is made of."""
    return (lo & OP_MASK) in (OP_FFMA, OP_FADD)


def runs(ws: list[tuple[int, int]], min_len: int, max_gap: int) -> list[list[int]]:
    """Index lists of float-fold runs: at least min_len FFMA / FADD, with at most max_gap other instructions between
    two of them."""
    out, cur, gap = [], [], 0
    for i, (lo, _hi) in enumerate(ws):
        if is_float_fold(lo):
            cur.append(i)
            gap = 0
        elif cur:
            gap += 1
            if gap > max_gap:
                if len(cur) >= min_len:
                    out.append(cur)
                cur, gap = [], 0
    if len(cur) >= min_len:
        out.append(cur)
    return out


@dataclass(frozen=True)
class Rule:
    """What to do with the FFMA / FADD of dense runs (at least min_len of them, at most max_gap other instructions
    between two, folds at least `density` of the span), in the first `share` of each run:
    mode "switch": clear the reuse flags and the yield bit (the scheduler may switch warps after each);
    mode "stay": set the yield bit, flags kept (the warp keeps issuing)."""
    mode: str = "switch"
    share: float = 1.0
    min_len: int = 16
    max_gap: int = 4
    density: float = 0.75


def interleave(elf: bytes, rule: Rule) -> tuple[bytes, dict[str, int]]:
    """The code object with the rule applied to every kernel, and how many instructions changed per kernel."""
    if rule.mode not in ("switch", "stay"):
        raise SassError(f"unknown mode {rule.mode!r}")
    out = bytearray(elf)
    changed = {}
    for sec in text_sections(elf):
        ws = words(elf, sec)
        n = 0
        for run in runs(ws, rule.min_len, rule.max_gap):
            if len(run) < rule.density * (run[-1] - run[0] + 1):
                continue
            for i in run[:max(1, int(len(run) * rule.share))]:
                lo, hi = ws[i]
                new = (hi & ~REUSE & ~YIELD) if rule.mode == "switch" else (hi | YIELD)
                if new != hi:
                    struct.pack_into("<QQ", out, sec.offset + 16 * i, lo, new)
                    n += 1
        changed[sec.name[len(".text."):]] = n
    return bytes(out), changed


def elf_end(data: bytes, start: int) -> int:
    """Where the cubin that starts at `start` ends (its section header table is last), or -1 if it is not one."""
    if data[start:start + 4] != b"\x7fELF" or data[start + 4] != 2:
        return -1
    if struct.unpack_from("<H", data, start + 18)[0] != 190:  # e_machine: EM_CUDA
        return -1
    shoff, = struct.unpack_from("<Q", data, start + 0x28)
    shnum, = struct.unpack_from("<H", data, start + 0x3C)
    end = start + shoff + 64 * shnum
    return end if end <= len(data) else -1


def patch_embedded(data: bytes, rule: Rule) -> tuple[bytes, dict[str, int]]:
    """Every sm_90a cubin held inside `data` (a code object, or a library that embeds them), the rule applied."""
    out, changed, pos = bytearray(data), {}, 0
    while (pos := data.find(b"\x7fELF", pos)) >= 0:
        end = elf_end(data, pos)
        if end < 0:
            pos += 4
            continue
        blob = data[pos:end]
        new, ch = interleave(blob, rule)
        out[pos:end] = new
        changed.update(ch)
        pos = end
    return bytes(out), changed
