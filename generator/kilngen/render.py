"""Render solution files into generated/: one kernel source per solution, the C dispatch tables, the CMake lists.

Output is deterministic (sorted, no timestamps) and written only where it differs; stale files are removed."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import jinja2

from . import attention as attn
from . import wgmma
from .model import ARCH_INFO, DTYPE_INFO, FAMILIES, LAYOUT_INFO, PARAMS, Arch, DType, Kind, Solution, c_enum, fnv1a64

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
    swap: str           # wgmma: D computed transposed (prepacked weights, or sab 1)
    wgmma: tuple        # wgmma: (N, run() parameters, asm lines, outputs, inputs) of the instruction
    block_scales: str   # block-scaled fp8 (KILN_SCALE_BLOCK): promote every K-tile
    grouped: str        # grouped (MoE) GEMM: walk the groups' tiles (wgmma)
    split: str          # wgmma pr 1: the two sums in flight are column halves (the MmaH instruction)
    wgmma_half: tuple   # wgmma: the half-width instruction of split promotion (empty otherwise)
    overlap: str        # wgmma: griddepcontrol in the kernel, launched overlapped (kiln_solution.overlap)
    sync: str           # wgmma, prepacked weights: the warps issue mma.sync m16n8k16 instead of wgmma
    cluster: int = 1    # wgmma: CTAs per thread-block cluster (2 with multicast, gsu with split-K in a cluster)
    reduce: bool = False  # split-K through a workspace: the `<name>_reduce` kernel


def _cbool(v: bool) -> str:
    return "true" if v else "false"


def _amd_attrs(threads: int, occ: int) -> str:
    waves = f", amdgpu_waves_per_eu({occ})" if occ else ""
    return f"__attribute__((amdgpu_flat_work_group_size({threads}, {threads}){waves}))"


def kernel_view(sol: Solution) -> KernelView:
    pr = sol.problem
    ta, tb = DTYPE_INFO[pr.a].device_type, DTYPE_INFO[pr.b].device_type
    mma_op = sol.spec.mma_op(sol, ta, tb)
    constants = (("MT0", sol.mt[0]), ("MT1", sol.mt[1]), ("DU", sol.mt[2]), ("WG0", sol.wg[0]), ("WG1", sol.wg[1]))
    constants += tuple((p.field.upper(), getattr(sol, p.field)) for p in PARAMS if p.count == 1)
    return KernelView(
        name=sol.name, ta=ta, tb=tb, td=DTYPE_INFO[pr.d].device_type,
        t16=DTYPE_INFO[sol.mma_type if sol.mma_type in (DType.F16, DType.BF16) else DType.F16].device_type,
        mma_op=mma_op,
        upcast_a=_cbool(sol.upcast and bool(DTYPE_INFO[pr.a].fp8)),
        upcast_b=_cbool(sol.upcast and bool(DTYPE_INFO[pr.b].fp8)),
        b_kmajor=_cbool(pr.layout.value == "TN"), b_packed=_cbool(pr.b_prepacked),
        constants=constants, threads=sol.threads, gsu=sol.gsu, lds_bytes=sol.lds_bytes,
        attrs=_amd_attrs(sol.threads, sol.occ), reduce_attrs=_amd_attrs(KILN_REDUCE_THREADS, 0),
        swap=_cbool(sol.swap), wgmma=sol.spec.asm(sol), block_scales=_cbool(pr.spec.block_scales),
        grouped=_cbool(pr.spec.grouped), split=_cbool(sol.spec.split(sol)), wgmma_half=sol.spec.half_asm(sol),
        overlap=_cbool(sol.spec.overlap(sol)),
        sync=_cbool(sol.spec.sync(sol)), cluster=wgmma.cluster_size(sol), reduce=wgmma.reduces(sol))


def solution_row(sol: Solution) -> dict:
    pr = sol.problem
    return {
        "name": sol.name, "hash": f"0x{fnv1a64(sol.name):016x}ull", "arch": c_enum("ARCH", sol.arch),
        "family": c_enum("FAMILY", sol.family), "launch": c_enum("LAUNCH", sol.spec.launch),
        "kind": c_enum("KIND", pr.kind), "a": DTYPE_INFO[pr.a].c_enum, "b": DTYPE_INFO[pr.b].c_enum,
        "d": DTYPE_INFO[pr.d].c_enum, "layout": LAYOUT_INFO[pr.layout].c_enum, "prepacked": int(pr.b_prepacked),
        "mt0": sol.mt[0], "mt1": sol.mt[1], "du": sol.mt[2], "threads": sol.threads, "lds": sol.lds_bytes,
        "gsu": sol.gsu, "wgm": sol.wgm, "align_a": sol.align_a, "align_b": sol.align_b, "k_multiple": 1,
        "reduce": f'"{sol.name}_reduce"' if wgmma.reduces(sol) else "NULL", "persistent": sol.pk,
        "multicast": sol.mc,
        "fast_accum": int(sol.spec.fast_accum(sol)),
        "overlap": int(sol.spec.overlap(sol)),
        "tma_store": int(sol.spec.tma_store(sol)),
    }


def kernel_path(sol: Solution) -> str:
    return f"{sol.arch.value}/{sol.name}.hip"


def attention_order(files) -> list:
    """Every attention kernel of the files (attention_yaml.AttnFile), by arch in kiln's Arch order and then in file
    and YAML order: the order of the C table, whose earlier entries the runtime prefers."""
    rank = {arch: i for i, arch in enumerate(Arch)}
    return sorted((sol for af in files for sol in af.solutions), key=lambda s: rank[s.arch])


def render_attention(files, env: jinja2.Environment, out: dict) -> None:
    """The attention kernels' sources and generated/attention.c (always written: libkiln links it, empty or not)."""
    for af in files:
        for sol in af.solutions:
            template = env.get_template(attn.FAMILIES[sol.family].template)
            out[kernel_path(sol)] = template.render(source=af.source, k=attn.view(sol))
    rows = [attn.table_row(sol) for sol in attention_order(files)]
    out["attention.c"] = env.get_template("attention.c.j2").render(
        solutions=rows, sources=sorted(af.source for af in files))


def render_tree(files, templates: Path, attention=()) -> dict[str, str]:
    """All of generated/, as {relative path: text}: the GEMM kernels and tables of `files` (schema.SolutionFile) and
    the attention kernels and table of `attention` (attention_yaml.AttnFile)."""
    env = environment(templates)
    out: dict[str, str] = {}
    index: dict[str, int] = {}
    rows, logics = [], []
    for sf in files:
        template = env.get_template(FAMILIES[sf.family].template)
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
                "arch": c_enum("ARCH", logic.arch), "kind": c_enum("KIND", pr.kind), "source": sf.source,
                "a": DTYPE_INFO[pr.a].c_enum, "b": DTYPE_INFO[pr.b].c_enum, "d": DTYPE_INFO[pr.d].c_enum, "layout": LAYOUT_INFO[pr.layout].c_enum,
                "prepacked": int(pr.b_prepacked), "solutions": ids,
                "exact": [(m, n, k, ids[s]) for m, n, k, s in logic.exact],
                "timings": [(size, ["%.6e" % v if v is not None else "-1.0" for v in ms]) for size, ms in logic.timings],
                "neighbors": logic.neighbors, "fast_accum": int(logic.fast_accum), "timed_groups": logic.timed_groups,
                "waves_only": int(logic.share == 0),
                "distance": DISTANCE_C[logic.distance], "fallback": ids[logic.fallback],
            })
    sources = sorted({sf.source for sf in files})
    out["dispatch.c"] = env.get_template("dispatch.c.j2").render(solutions=rows, logics=logics, sources=sources)
    render_attention(attention, env, out)

    per_arch: dict[str, list[str]] = {a.value: [] for a in Arch}
    ci: dict[str, list[str]] = {a.value: [] for a in Arch}
    for sf in files:
        for logic, picks in zip(sf.logics, ci_picks(sf)):
            for i, sol in enumerate(logic.solutions):
                if sol.name not in per_arch[sol.arch.value]:
                    per_arch[sol.arch.value].append(sol.name)
                if i in picks and sol.name not in ci[sol.arch.value]:
                    ci[sol.arch.value].append(sol.name)
    for af in attention:
        for sol in af.solutions:
            per_arch[sol.arch.value].append(sol.name)
            if sol in af.ci:
                ci[sol.arch.value].append(sol.name)
    sources = sorted(sources + [af.source for af in attention])
    archs = [{"name": a.value, "vendor": ARCH_INFO[a].vendor.value, "offload": ARCH_INFO[a].offload,
              "kernels": sorted(per_arch[a.value]), "ci": sorted(ci[a.value])} for a in Arch]
    out["kernels.cmake"] = env.get_template("kernels.cmake.j2").render(archs=archs, sources=sources)
    return out


def ci_picks(sf) -> list:
    """For each problem (type combination) of a solution file, the indices of its solutions that CI builds compile:
    every `ci` index for the first problem; for each later one that brings a type (of A, B or D) or a layout no
    earlier pick has, the next `ci` index in turn; none for the rest. Every `ci` tile and every type and layout the
    file names is compiled, without the product of the two (an fp8 file's 12 type combinations times its ci tiles were
    most of the sm90 CI build)."""
    order = sorted(sf.ci)
    picks, seen, turn = [], set(), 0
    for j, logic in enumerate(sf.logics):
        pr = logic.problem
        types = {("a", pr.a), ("b", pr.b), ("d", pr.d), ("layout", pr.layout)}
        if j == 0:
            picks.append(frozenset(order))
        elif types - seen:
            turn += 1
            picks.append(frozenset({order[turn % len(order)]}))
        else:
            picks.append(frozenset())
        seen |= types
    return picks


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


