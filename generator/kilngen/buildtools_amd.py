"""AMD build step: compile one kernel into a code object and prove its resources and instructions statically.

Resources come from the compiler's -Rpass-analysis=kernel-resource-usage remarks (VGPRs, AGPRs, SGPRs, scratch,
occupancy, static LDS) and are checked against the code object's metadata notes (llvm-readelf --notes) and kernel
descriptor (the f32 denormal mode). LDS is the static size plus the dynamic LDS the runtime launches with
(Solution.lds_bytes, from the kernel's name; the kernel static_asserts its layout against the same number); occupancy is
the smaller of the compiler's (registers, workgroup size) and what that LDS allows. The disassembly (llvm-objdump -d)
gives the instruction mix of the whole kernel and of its main loop (the backward branch holding the most matrix
instructions). One line per function goes to the resources file; the build fails on scratch, spills, LDS over the arch
limit, occupancy under the solution's `occ`, or flushed f32 denormals.
"""
from __future__ import annotations

import re
import struct
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from . import attention
from .model import AMD_INFO, ARCH_INFO, FAMILIES, Arch, NameError_, decode, fnv1a64

# -nogpulib -nogpuinc: no ROCm device libraries or HIP headers (kiln_device.h spells the device vocabulary with clang
# builtins), so Debian's clang-19 and a ROCm hipcc compile the same source the same way.
FLAGS = ["-x", "hip", "--cuda-device-only", "--no-gpu-bundle-output", "-nogpulib", "-nogpuinc", "-O3", "-std=c++17",
         "-fno-gpu-flush-denormals-to-zero", "-Rpass-analysis=kernel-resource-usage"]


def amd_command(compiler: str, arch: Arch, include: str, source: str, output: str) -> list[str]:
    return [compiler, *FLAGS, f"--offload-arch={ARCH_INFO[arch].offload}", "-I", include, "-c", "-o", output, source]


def objdump_for(compiler: str) -> str:
    """llvm-objdump next to the compiler: clang-19 -> llvm-objdump-19, <rocm>/bin/hipcc -> <rocm>/llvm/bin/..."""
    path = Path(compiler)
    if m := re.match(r"clang(-\d+)?$", path.name):
        return str(path.with_name("llvm-objdump" + (m.group(1) or "")))
    if path.name == "hipcc":
        return str(path.parent.parent / "llvm" / "bin" / "llvm-objdump")
    return "llvm-objdump"


# --- compiler remarks ----------------------------------------------------------------------------------------------

_REMARK = re.compile(r"remark:\s+(Function Name|SGPRs|VGPRs|AGPRs|ScratchSize \[bytes/lane\]|Occupancy \[waves/SIMD\]|"
                     r"SGPRs Spill|VGPRs Spill|LDS Size \[bytes/block\]):\s*(\S+)")
_REMARK_KEYS = {"SGPRs": "sgprs", "VGPRs": "vgprs", "AGPRs": "agprs", "ScratchSize [bytes/lane]": "scratch",
                "Occupancy [waves/SIMD]": "occupancy_regs", "SGPRs Spill": "sgpr_spill", "VGPRs Spill": "vgpr_spill",
                "LDS Size [bytes/block]": "lds_static"}


def parse_remarks(text: str) -> dict[str, dict[str, int]]:
    """{function: {vgprs, agprs, sgprs, scratch, occupancy_regs, sgpr_spill, vgpr_spill, lds_static}}."""
    out: dict[str, dict[str, int]] = {}
    func = None
    for line in text.splitlines():
        m = _REMARK.search(line)
        if not m:
            continue
        key, value = m.groups()
        if key == "Function Name":
            func = value
            out[func] = {"agprs": 0}  # targets without AGPRs (RDNA) print no AGPR line
        elif func is not None:
            out[func][_REMARK_KEYS[key]] = int(value)
    return out


# --- code object: metadata notes and kernel descriptors ------------------------------------------------------------

def parse_notes(text: str) -> dict[str, dict[str, int]]:
    """Per kernel, from `llvm-readelf --notes` (amdhsa.kernels): AGPRs, spills, group (LDS) and private (scratch)
    segment sizes. Kernel keys sit at indentation 2 ("  - .key") or 4; deeper ones belong to .args."""
    wanted = {".agpr_count": "agprs", ".group_segment_fixed_size": "lds_static",
              ".private_segment_fixed_size": "scratch", ".vgpr_spill_count": "vgpr_spill",
              ".sgpr_spill_count": "sgpr_spill"}
    entries: list[dict] = []
    for line in text.splitlines():
        m = re.match(r"^(  - |    )(\.[a-z_]+):\s+(\S+)", line)
        if not m:
            continue
        if m.group(1) == "  - ":
            entries.append({})
        if not entries:
            continue
        key, value = m.group(2), m.group(3)
        if key == ".name":
            entries[-1]["_name"] = value
        elif key in wanted and value.isdigit():
            entries[-1][wanted[key]] = int(value)
    return {e.pop("_name"): e for e in entries if "_name" in e}


def kernel_descriptors(image: bytes) -> dict[str, bytes]:
    """The 64-byte kernel descriptor of each kernel (symbol `<name>.kd`) of an AMDGPU ELF code object."""
    if image[:4] != b"\x7fELF" or image[4] != 2:
        raise ValueError("not an ELF64 code object")
    shoff, = struct.unpack_from("<Q", image, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", image, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", image, shoff + i * shentsize) for i in range(shnum)]
    out = {}
    for sh in sections:
        if sh[1] != 2:  # SHT_SYMTAB
            continue
        strtab = sections[sh[6]]
        for off in range(0, sh[5], 24):
            name_off, _info, _other, shndx, value, size = struct.unpack_from("<IBBHQQ", image, sh[4] + off)
            start = strtab[4] + name_off
            name = image[start:image.index(b"\0", start)].decode()
            if name.endswith(".kd") and size == 64 and shndx < len(sections):
                sec = sections[shndx]
                at = sec[4] + value - sec[3]
                out[name[:-3]] = image[at:at + 64]
    return out


def f32_denorm_mode(kd: bytes) -> int:
    """COMPUTE_PGM_RSRC1.FLOAT_DENORM_MODE_32 (3 = f32 denormals kept)."""
    rsrc1, = struct.unpack_from("<I", kd, 48)
    return (rsrc1 >> 16) & 3


# --- disassembly -----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Inst:
    addr: int
    op: str          # normalized mnemonic
    target: int      # branch target address, -1 when not a branch


_FUNC_HDR = re.compile(r"^([0-9a-f]+) <([^>]+)>:$")
_INST = re.compile(r"^\s+([a-z_0-9]+)\b.*//\s*([0-9A-F]+):")
_TARGET = re.compile(r"<([^>+]+)(?:\+0x([0-9a-f]+))?>\s*$")

# RDNA spells some memory instructions differently from CDNA; counts use the CDNA names.
_MEM = r"^(global|buffer|flat)"
_SPELLING = ((r"^ds_load_", "ds_read_"), (r"^ds_store_", "ds_write_"), (r"_b128$", "_dwordx4"), (r"_b96$", "_dwordx3"),
             (_MEM + r"_(load|store)_b64$", r"\1_\2_dwordx2"), (_MEM + r"_(load|store)_b32$", r"\1_\2_dword"),
             (r"_u8$", "_ubyte"), (r"_i8$", "_sbyte"), (r"_u16$", "_ushort"), (r"_i16$", "_sshort"),
             (_MEM + r"_store_b8$", r"\1_store_byte"), (_MEM + r"_store_b16$", r"\1_store_short"), (r"_2addr_", "2_"),
             (r"_e(32|64)$", ""))


def normalize(op: str) -> str:
    for pattern, repl in _SPELLING:
        op = re.sub(pattern, repl, op)
    return op


def disassemble(text: str) -> dict[str, list[Inst]]:
    """{function: instructions} from `llvm-objdump -d` output."""
    out: dict[str, list[Inst]] = {}
    base: dict[str, int] = {}
    func = None
    for line in text.splitlines():
        if m := _FUNC_HDR.match(line):
            func = m.group(2)
            base[func] = int(m.group(1), 16)
            out[func] = []
            continue
        m = _INST.match(line)
        if not m or func is None or m.group(1) == "s_code_end":
            continue
        target = -1
        if m.group(1).startswith(("s_cbranch", "s_branch")) and (t := _TARGET.search(line)) and t.group(1) in base:
            target = base[t.group(1)] + int(t.group(2) or "0", 16)
        out[func].append(Inst(int(m.group(2), 16), normalize(m.group(1)), target))
    return out


# Memory-operation widths in bits, by normalized mnemonic suffix.
_WIDTH = {"ubyte": 8, "sbyte": 8, "byte": 8, "ushort": 16, "sshort": 16, "short": 16, "short_d16": 16,
          "short_d16_hi": 16, "ubyte_d16": 8, "ubyte_d16_hi": 8, "dword": 32, "dwordx2": 64, "dwordx3": 96,
          "dwordx4": 128, "u8": 8, "i8": 8, "u16": 16, "i16": 16, "b8": 8, "b16": 16, "b32": 32, "b64": 64, "b96": 96,
          "b128": 128, "u8_d16": 8, "u8_d16_hi": 8, "u16_d16": 16, "u16_d16_hi": 16, "i8_d16": 8}
WIDTHS = (8, 16, 32, 64, 96, 128)
MIX_KEYS = (("insts", "mfma", "wmma") + tuple(f"gload{w}" for w in WIDTHS) + tuple(f"gstore{w}" for w in WIDTHS)
            + tuple(f"dsread{w}" for w in WIDTHS) + tuple(f"dswrite{w}" for w in WIDTHS))


def _classify(op: str):
    """(mix key, count) of one instruction, or None."""
    if op.startswith("v_mfma"):
        return "mfma", 1
    if op.startswith("v_wmma"):
        return "wmma", 1
    m = re.match(_MEM + r"_(load|store)_(.+)$", op) or re.match(r"^ds_(read2?|write2?)(?:st64)?_(.+)$", op)
    if not m:
        return None
    if op.startswith("ds_"):
        kind, suffix = ("dsread" if m.group(1).startswith("read") else "dswrite"), m.group(2)
        times = 2 if m.group(1).endswith("2") else 1
    else:
        kind, suffix, times = ("gload" if m.group(2) == "load" else "gstore"), m.group(3), 1
    width = _WIDTH.get(suffix)
    return (f"{kind}{width}", times) if width in WIDTHS else None


def mix(insts) -> dict:
    """Counts by kind and width, and `sig`: a hash of the mnemonic sequence (two kernels whose instructions differ
    only in order, as PrefetchLocalRead makes them, get different signatures)."""
    counts = dict.fromkeys(MIX_KEYS, 0)
    counts["insts"] = len(insts)
    counts["sig"] = f"{fnv1a64(' '.join(i.op for i in insts)):016x}"
    for inst in insts:
        hit = _classify(inst.op)
        if hit:
            counts[hit[0]] += hit[1]
    return counts


_ENDS = ("s_endpgm", "s_setpc_b64")


def _blocks(insts: list) -> tuple[list, dict]:
    """Basic blocks (lists of instructions) and their successor indices."""
    if not insts:
        return [], {}
    leaders = {insts[0].addr} | {i.target for i in insts if i.target >= 0}
    leaders |= {insts[k + 1].addr for k, i in enumerate(insts[:-1]) if i.target >= 0 or i.op in _ENDS}
    blocks, start = [], 0
    for k in range(1, len(insts) + 1):
        if k == len(insts) or insts[k].addr in leaders:
            blocks.append(insts[start:k])
            start = k
    index = {blk[0].addr: n for n, blk in enumerate(blocks)}
    succ = {}
    for n, blk in enumerate(blocks):
        last, nxt = blk[-1], set()
        if last.target >= 0 and last.target in index:
            nxt.add(index[last.target])
        if last.op != "s_branch" and last.op not in _ENDS and n + 1 < len(blocks):
            nxt.add(n + 1)
        succ[n] = nxt
    return blocks, succ


def _idoms(succ: dict, count: int) -> dict:
    """Immediate dominators of the blocks reachable from block 0 (Cooper, Harvey and Kennedy)."""
    order, seen, stack = [], {0}, [(0, iter(sorted(succ.get(0, ()))))]
    while stack:  # iterative depth-first search for the postorder
        node, it = stack[-1]
        nxt = next((t for t in it if t not in seen), None)
        if nxt is None:
            order.append(node)
            stack.pop()
        else:
            seen.add(nxt)
            stack.append((nxt, iter(sorted(succ.get(nxt, ())))))
    rpo = order[::-1]
    number = {b: i for i, b in enumerate(rpo)}
    pred: dict = {b: [] for b in rpo}
    for b in rpo:
        for t in succ.get(b, ()):
            pred[t].append(b)
    idom = {0: 0}

    def meet(a, b):
        while a != b:
            while number[a] > number[b]:
                a = idom[a]
            while number[b] > number[a]:
                b = idom[b]
        return a

    changed = True
    while changed:
        changed = False
        for b in rpo[1:]:
            done = [p for p in pred[b] if p in idom]
            new = done[0]
            for p in done[1:]:
                new = meet(p, new)
            if idom.get(b) != new:
                idom[b], changed = new, True
    return idom


def _dominates(idom: dict, a: int, b: int) -> bool:
    while b != a and idom.get(b, a) != b:
        b = idom[b]
    return b == a


def main_loop(insts: list) -> list:
    """The instructions of the natural loop (a back edge latch -> header where the header dominates the latch, and
    every block that reaches the latch without passing the header) holding the most matrix instructions; of those,
    the smallest."""
    blocks, succ = _blocks(insts)
    idom = _idoms(succ, len(blocks))
    pred: dict = {n: set() for n in range(len(blocks))}
    for n, targets in succ.items():
        for t in targets:
            pred[t].add(n)
    best: list = []
    best_key = (0, 0)
    for latch, targets in succ.items():
        for header in targets:
            if latch not in idom or not _dominates(idom, header, latch):
                continue
            body, work = {header}, []
            if latch != header:
                body.add(latch)
                work.append(latch)
            while work:
                for p in pred[work.pop()]:
                    if p not in body:
                        body.add(p)
                        work.append(p)
            loop = [i for n in sorted(body) for i in blocks[n]]
            key = (sum(1 for x in loop if x.op.startswith(("v_mfma", "v_wmma"))), -len(loop))
            if not best or key > best_key:
                best, best_key = loop, key
    return best


# --- the resources line ----------------------------------------------------------------------------------------------

@dataclass
class AmdResources:
    function: str
    arch: str
    fields: dict = field(default_factory=dict)   # resources, occupancy
    whole: dict = field(default_factory=dict)    # instruction mix of the kernel
    loop: dict = field(default_factory=dict)     # ... of its main loop
    ops: tuple = ()                              # matrix-instruction mnemonics

    def line(self) -> str:
        parts = [f"function={self.function}", "vendor=amd", f"arch={self.arch}"]
        parts += [f"{k}={v}" for k, v in self.fields.items()]
        parts.append("ops=" + (",".join(self.ops) or "-"))
        parts += [f"{k}={v}" for k, v in self.whole.items()]
        parts += [f"loop_{k}={v}" for k, v in self.loop.items()]
        return " ".join(parts)


def parse_line(line: str) -> dict:
    """A resources-file line as {key: str}."""
    return dict(kv.split("=", 1) for kv in line.split())


def lds_occupancy(arch: Arch, lds: int, waves_per_wg: int) -> int:
    """Waves per SIMD that the workgroups fitting in a CU's (WGP's) LDS bring, averaged over its SIMDs."""
    info = AMD_INFO[arch]
    if lds <= 0:
        return info.max_waves_per_simd
    groups = info.lds_per_cu // lds
    if groups == 0:
        return 0
    return min(info.max_waves_per_simd, max(1, groups * waves_per_wg // info.simds_per_cu))


def _launch(function: str):
    """(dynamic LDS bytes, threads, occupancy target, matrix instructions it must hold or None) the runtime launches
    a kernel of this name with. Attention kernels (attention.py) name the fp8 MFMA their header's products need."""
    if attention.is_attention_name(function):
        try:
            sol = attention.decode(function)
        except attention.AttnNameError as exc:
            raise NameError_(str(exc)) from None
        return sol.lds_bytes, sol.threads, sol.occ, sol.spec.matrix_ops(sol)
    gemm = function[:-len("_reduce")] if function.endswith("_reduce") else function
    sol = decode(gemm)
    if function.endswith("_reduce"):
        return 0, 256, 0, None
    return sol.lds_bytes, sol.threads, sol.occ, None


def resources(arch: Arch, remarks: dict, notes: dict, kds: dict, listing: dict) -> tuple[list, list]:
    """(AmdResources per function, problems found)."""
    out, problems = [], []
    wave = FAMILIES[ARCH_INFO[arch].family].wave
    for func, r in remarks.items():
        try:
            dynamic, threads, target, want_ops = _launch(func)
        except NameError_ as exc:
            problems.append(f"{func}: not a kiln kernel name ({exc})")
            continue
        lds = r.get("lds_static", 0) + dynamic
        occ_lds = lds_occupancy(arch, lds, threads // wave)
        fields = {"vgprs": r["vgprs"], "agprs": r["agprs"], "sgprs": r["sgprs"], "scratch": r["scratch"],
                  "vgpr_spill": r.get("vgpr_spill", 0), "sgpr_spill": r.get("sgpr_spill", 0), "lds": lds,
                  "lds_static": r.get("lds_static", 0), "lds_limit": ARCH_INFO[arch].lds_limit, "threads": threads,
                  "occupancy": min(r["occupancy_regs"], occ_lds), "occupancy_regs": r["occupancy_regs"],
                  "occupancy_lds": occ_lds, "occ_target": target,
                  "denorm32": f32_denorm_mode(kds[func]) if func in kds else -1}
        note = notes.get(func, {})
        for key in ("agprs", "lds_static", "scratch", "vgpr_spill", "sgpr_spill"):
            if key in note and key in r and note[key] != r[key]:
                problems.append(f"{func}: {key} {r[key]} in the remarks but {note[key]} in the code object notes")
        insts = listing.get(func, [])
        ops = tuple(sorted({i.op for i in insts if i.op.startswith(("v_mfma", "v_wmma"))}))
        res = AmdResources(func, arch.value, fields, mix(insts), mix(main_loop(insts)), ops)
        out.append(res)
        f = res.fields
        if f["scratch"] or f["vgpr_spill"] or f["sgpr_spill"]:
            problems.append(f"{func}: {f['scratch']} bytes of scratch per lane ({f['vgpr_spill']} VGPRs, "
                            f"{f['sgpr_spill']} SGPRs spilled)")
        if f["lds"] > f["lds_limit"]:
            problems.append(f"{func}: {f['lds']} bytes of LDS; {arch.value} allows {f['lds_limit']}")
        if f["occupancy"] < max(1, target):
            problems.append(f"{func}: occupancy {f['occupancy']} waves/SIMD (registers {f['occupancy_regs']}, LDS "
                            f"{occ_lds}) is under the declared {max(1, target)}")
        if f["denorm32"] != 3:
            problems.append(f"{func}: f32 denormal mode {f['denorm32']}; fp8 subnormals would widen to 0")
        if want_ops is not None and set(ops) != want_ops:
            problems.append(f"{func}: matrix instructions {', '.join(ops) or 'none'}; expected "
                            f"{', '.join(sorted(want_ops))}")
    if not out:
        problems.append("no kernel-resource-usage remarks in the compiler output")
    return out, problems


def _run(cmd: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True)


def compile_kernel(arch: Arch, compiler: str, include: str, source: str, output: str, log: str,
                   objdump: str | None = None) -> int:
    proc = _run(amd_command(compiler, arch, include, source, output))
    text = proc.stdout + proc.stderr
    if proc.returncode != 0:
        sys.stderr.write(text)
        return proc.returncode
    objdump = objdump or objdump_for(compiler)
    readelf = str(Path(objdump).with_name(Path(objdump).name.replace("objdump", "readelf")))
    dis = _run([objdump, "-d", f"--mcpu={ARCH_INFO[arch].offload}", output])
    notes = _run([readelf, "--notes", output])
    if dis.returncode != 0 or notes.returncode != 0:
        sys.stderr.write(dis.stderr + notes.stderr)
        print(f"kiln compile: {source}: cannot read the code object with {objdump} / {readelf}", file=sys.stderr)
        Path(output).unlink(missing_ok=True)
        return 1
    found, problems = resources(arch, parse_remarks(text), parse_notes(notes.stdout),
                                kernel_descriptors(Path(output).read_bytes()), disassemble(dis.stdout))
    Path(log).write_text("".join(r.line() + "\n" for r in found))
    if problems:
        for why in problems:
            print(f"kiln compile: {source}: {why}", file=sys.stderr)
        Path(output).unlink(missing_ok=True)
        return 1
    return 0
