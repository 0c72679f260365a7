"""Render solution files into generated/: one kernel source per solution, the C dispatch tables, the CMake lists.

Output is deterministic (sorted, no timestamps) and written only where it differs; stale files are removed."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import jinja2

from .model import AMD_INFO, ARCH_INFO, DTYPE_INFO, LAYOUT_INFO, PARAMS, Arch, DType, Family, Solution, fnv1a64

# Per family: its kernel template.
FAMILY_TEMPLATE = {Family.MMA: "kernel_mma.hip.j2", Family.MFMA: "kernel_mfma.hip.j2",
                   Family.WMMA: "kernel_wmma.hip.j2", Family.WGMMA: "kernel_wgmma.hip.j2"}
assert FAMILY_TEMPLATE.keys() == set(Family)

# WMMA op generation (kiln_gemm_wmma.h) per matrix-core ISA of the wmma archs.
WMMA_GEN = {"rdna3": 11, "rdna4": 12}
assert {AMD_INFO[a].matrix_isa for a in Arch if ARCH_INFO[a].family is Family.WMMA} == WMMA_GEN.keys()

KILN_REDUCE_THREADS = 256  # kiln_abi.h

DISTANCE_C = {"log_mnk": "KILN_DISTANCE_LOG_MNK", "linear_mnk": "KILN_DISTANCE_LINEAR_MNK"}


def environment(templates: Path) -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(templates)), undefined=jinja2.StrictUndefined,
                              trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True, autoescape=False)


@dataclass(frozen=True)
class KernelView:
    """Everything a kernel template substitutes, computed here so templates stay free of logic."""
    name: str
    ta: str
    tb: str
    td: str
    t16: str
    mma_op: str
    upcast_a: str
    upcast_b: str
    b_kmajor: str
    b_packed: str
    constants: tuple
    threads: int
    gsu: int
    lds_bytes: int
    attrs: str          # AMD: kernel attributes (workgroup size, occupancy target)
    reduce_attrs: str   # AMD: the split-K reduce kernel's
    swap: str           # wgmma: weights are the register operand (mixed_w8)
    wgmma: tuple        # wgmma: (N, run() parameters, asm lines, outputs, inputs) of the instruction


def _cbool(v: bool) -> str:
    return "true" if v else "false"


def _op(sol: Solution, ta: str, tb: str) -> str:
    """The matrix-instruction type of the family's device header."""
    bf16 = sol.mma_type is DType.BF16
    if sol.family is Family.MMA:
        return f"kiln::MmaF8<{ta}, {tb}>" if sol.native_fp8 else "kiln::MmaBF16" if bf16 else "kiln::MmaF16"
    if sol.family is Family.MFMA:
        m = sol.mi[0]
        return f"kiln::MfmaF8<{m}, {ta}, {tb}>" if sol.native_fp8 else f"kiln::Mfma{'BF16' if bf16 else 'F16'}<{m}>"
    if sol.family is Family.WGMMA:
        return ""  # the instruction is spelled out in the kernel (_wgmma)
    gen = WMMA_GEN[AMD_INFO[sol.arch].matrix_isa]
    return f"kiln::WmmaF8<{ta}, {tb}>" if sol.native_fp8 else f"kiln::Wmma{'BF16' if bf16 else 'F16'}<{gen}>"


# PTX operand type names of wgmma.
_WGMMA_PTX = {DType.F16: "f16", DType.BF16: "bf16", DType.E4M3: "e4m3", DType.E5M2: "e5m2"}


def _wgmma(sol: Solution) -> tuple:
    """One wgmma.mma_async with its N/2 accumulator operands: shared-memory A and B descriptors, or (swap) the
    widened weights as four A registers. scale-d = 0 starts the sum (first K step of a tile)."""
    if sol.family is not Family.WGMMA:
        return ()
    _m, n, k = sol.mi
    regs = n // 2
    acc = ", ".join(f"%{i}" for i in range(regs))
    outputs = ", ".join(f'"+f"(d[{i}])' for i in range(regs))
    if sol.swap:
        t = _WGMMA_PTX[sol.problem.a]
        params = f"float (&d)[{regs}], const uint32_t (&a)[4], uint64_t b, int scale_d"
        a_ops = "{" + ", ".join(f"%{regs + i}" for i in range(4)) + "}"
        body = f"wgmma.mma_async.sync.aligned.m64n{n}k{k}.f32.{t}.{t} {{{acc}}}, {a_ops}, %{regs + 4}, p, 1, 1, 0;"
        scale = regs + 5
        inputs = '"r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(scale_d)'
    else:
        pr = sol.problem
        ta, tb = (_WGMMA_PTX[pr.a], _WGMMA_PTX[pr.b]) if sol.native_fp8 else (_WGMMA_PTX[sol.mma_type],) * 2
        imm = ", 1, 1" if sol.native_fp8 else ", 1, 1, 0, 0"  # 16-bit types also take the transpose flags
        params = f"float (&d)[{regs}], uint64_t a, uint64_t b, int scale_d"
        body = f"wgmma.mma_async.sync.aligned.m64n{n}k{k}.f32.{ta}.{tb} {{{acc}}}, %{regs}, %{regs + 1}, p{imm};"
        scale = regs + 2
        inputs = '"l"(a), "l"(b), "r"(scale_d)'
    lines = ("{\\n.reg .pred p;\\n", f"setp.ne.b32 p, %{scale}, 0;\\n", body + "\\n", "}\\n")
    return (n, params, lines, outputs, inputs)


def _amd_attrs(threads: int, occ: int) -> str:
    waves = f", amdgpu_waves_per_eu({occ})" if occ else ""
    return f"__attribute__((amdgpu_flat_work_group_size({threads}, {threads}){waves}))"


def kernel_view(sol: Solution) -> KernelView:
    pr = sol.problem
    ta, tb = DTYPE_INFO[pr.a].device_type, DTYPE_INFO[pr.b].device_type
    mma_op = _op(sol, ta, tb)
    constants = (("MT0", sol.mt[0]), ("MT1", sol.mt[1]), ("DU", sol.mt[2]), ("WG0", sol.wg[0]), ("WG1", sol.wg[1]))
    constants += tuple((f.upper(), getattr(sol, f)) for f, _p, n, _d in PARAMS if n == 1)
    return KernelView(
        name=sol.name, ta=ta, tb=tb, td=DTYPE_INFO[pr.d].device_type,
        t16=DTYPE_INFO[sol.mma_type if sol.mma_type in (DType.F16, DType.BF16) else DType.F16].device_type,
        mma_op=mma_op,
        upcast_a=_cbool(sol.upcast and bool(DTYPE_INFO[pr.a].fp8)),
        upcast_b=_cbool(sol.upcast and bool(DTYPE_INFO[pr.b].fp8)),
        b_kmajor=_cbool(pr.layout.value == "TN"), b_packed=_cbool(pr.b_prepacked),
        constants=constants, threads=sol.threads, gsu=sol.gsu, lds_bytes=sol.lds_bytes,
        attrs=_amd_attrs(sol.threads, sol.occ), reduce_attrs=_amd_attrs(KILN_REDUCE_THREADS, 0),
        swap=_cbool(sol.swap), wgmma=_wgmma(sol))


def solution_row(sol: Solution) -> dict:
    pr = sol.problem
    return {
        "name": sol.name, "hash": f"0x{fnv1a64(sol.name):016x}ull", "arch": sol.arch.value,
        "family": sol.family.value, "a": DTYPE_INFO[pr.a].c_enum, "b": DTYPE_INFO[pr.b].c_enum,
        "d": DTYPE_INFO[pr.d].c_enum, "layout": LAYOUT_INFO[pr.layout].c_enum, "prepacked": int(pr.b_prepacked),
        "mt0": sol.mt[0], "mt1": sol.mt[1], "du": sol.mt[2], "threads": sol.threads, "lds": sol.lds_bytes,
        "gsu": sol.gsu, "wgm": sol.wgm, "align_a": sol.align_a, "align_b": sol.align_b, "k_multiple": 1,
        "reduce": f'"{sol.name}_reduce"' if sol.gsu > 1 else "NULL", "persistent": sol.pk,
    }


def kernel_path(sol: Solution) -> str:
    return f"{sol.arch.value}/{sol.name}.hip"


def render_tree(files, templates: Path) -> dict[str, str]:
    """All of generated/, as {relative path: text}."""
    env = environment(templates)
    out: dict[str, str] = {}
    index: dict[str, int] = {}
    rows, logics = [], []
    for sf in files:
        template = env.get_template(FAMILY_TEMPLATE[sf.family])
        for logic in sf.logics:
            ids = []
            for sol in logic.solutions:
                if sol.name not in index:
                    index[sol.name] = len(rows)
                    rows.append(solution_row(sol))
                    out[kernel_path(sol)] = template.render(source=sf.source, k=kernel_view(sol))
                ids.append(index[sol.name])
            pr = logic.problem
            logics.append({
                "arch": logic.arch.value, "source": sf.source, "a": DTYPE_INFO[pr.a].c_enum,
                "b": DTYPE_INFO[pr.b].c_enum, "d": DTYPE_INFO[pr.d].c_enum, "layout": LAYOUT_INFO[pr.layout].c_enum,
                "prepacked": int(pr.b_prepacked), "solutions": ids,
                "exact": [(m, n, k, ids[s]) for m, n, k, s in logic.exact],
                "timings": [(size, ["%.6e" % v if v is not None else "-1.0" for v in ms]) for size, ms in logic.timings],
                "neighbors": logic.neighbors,
                "distance": DISTANCE_C[logic.distance], "fallback": ids[logic.fallback],
            })
    sources = sorted({sf.source for sf in files})
    out["dispatch.c"] = env.get_template("dispatch.c.j2").render(solutions=rows, logics=logics, sources=sources)

    per_arch: dict[str, list[str]] = {a.value: [] for a in Arch}
    ci: dict[str, list[str]] = {a.value: [] for a in Arch}
    for sf in files:
        for logic in sf.logics:
            for i, sol in enumerate(logic.solutions):
                if sol.name not in per_arch[sol.arch.value]:
                    per_arch[sol.arch.value].append(sol.name)
                if i in sf.ci and sol.name not in ci[sol.arch.value]:
                    ci[sol.arch.value].append(sol.name)
    archs = [{"name": a.value, "vendor": ARCH_INFO[a].vendor.value, "offload": ARCH_INFO[a].offload,
              "kernels": sorted(per_arch[a.value]), "ci": sorted(ci[a.value])} for a in Arch]
    out["kernels.cmake"] = env.get_template("kernels.cmake.j2").render(archs=archs, sources=sources)
    return out


def stale_and_missing(generated: Path, tree: dict[str, str]) -> tuple[list[str], list[str]]:
    """(paths whose content differs or that are missing, paths on disk that the tree no longer has)."""
    differ = []
    for rel, text in sorted(tree.items()):
        p = generated / rel
        if not p.is_file() or p.read_text() != text:
            differ.append(rel)
    extra = []
    if generated.is_dir():
        for p in sorted(generated.rglob("*")):
            if p.is_file():
                rel = p.relative_to(generated).as_posix()
                if rel not in tree:
                    extra.append(rel)
    return differ, extra


def write_tree(generated: Path, tree: dict[str, str], progress=None) -> tuple[int, int]:
    """Write files that differ, delete stale ones. Returns (written, removed)."""
    differ, extra = stale_and_missing(generated, tree)
    for i, rel in enumerate(differ):
        p = generated / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_suffix(p.suffix + ".tmp")
        tmp.write_text(tree[rel])
        os.replace(tmp, p)
        if progress:
            progress(i + 1, len(differ), rel)
    for rel in extra:
        (generated / rel).unlink()
    for d in sorted((p for p in generated.rglob("*") if p.is_dir()), reverse=True):
        if not any(d.iterdir()):
            d.rmdir()
    return len(differ), len(extra)


