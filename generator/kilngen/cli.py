"""kiln-gen: generate | check | list | decode | explain | tune | report-amd (and the build steps compile | embed that
CMake runs)."""
from __future__ import annotations

import argparse
import ctypes
import json
import os
import sys
from pathlib import Path

from . import buildtools
from .model import DTYPE_INFO, LAYOUT_INFO, DType, Layout, NameError_, as_dict, decode

# The YAML front end (and PyYAML) loads only for commands that read solutions/: the build steps run without it.

REPO = Path(__file__).resolve().parents[2]


def load_tree(root: Path):
    from .schema import load_tree as load
    return load(root)


def _tree(root: Path):
    from . import render
    files = load_tree(root)
    return files, render.render_tree(files, root / "templates")


def cmd_generate(args) -> int:
    root = Path(args.root)
    files, tree = _tree(root)
    kernels = sum(1 for rel in tree if rel.endswith(".hip"))

    def progress(i, n, rel):
        if not args.quiet:
            print(f"kiln: [{i}/{n}] generated/{rel}", flush=True)

    from . import render
    written, removed = render.write_tree(root / "generated", tree, progress)
    print(f"kiln: {len(files)} solution files, {kernels} kernels; {written} files written, {removed} removed, "
          f"{len(tree) - written} unchanged")
    return 0


def cmd_check(args) -> int:
    root = Path(args.root)
    from . import render
    _files, tree = _tree(root)
    differ, extra = render.stale_and_missing(root / "generated", tree)
    for rel in differ:
        print(f"kiln check: generated/{rel} is stale or missing", file=sys.stderr)
    for rel in extra:
        print(f"kiln check: generated/{rel} is not produced by the solutions any more", file=sys.stderr)
    if differ or extra:
        print("kiln check: run `generator/kiln-gen generate` and commit generated/", file=sys.stderr)
        return 1
    print(f"kiln check: generated/ is up to date ({len(tree)} files)")
    return 0


def cmd_list(args) -> int:
    files = load_tree(Path(args.root))
    for sf in files:
        if args.arch and sf.arch.value != args.arch:
            continue
        for logic in sf.logics:
            for i, sol in enumerate(logic.solutions):
                if args.ci and i not in sf.ci:
                    continue
                if args.verbose:
                    print(f"{sol.name}  threads={sol.threads} lds={sol.lds_bytes} source={sf.source}")
                else:
                    print(sol.name)
    return 0


def cmd_decode(args) -> int:
    try:
        sol = decode(args.name)
    except NameError_ as exc:
        print(f"kiln decode: {exc}", file=sys.stderr)
        return 2
    params = as_dict(sol)
    if args.json:
        print(json.dumps(params, indent=2))
    else:
        width = max(len(k) for k in params)
        for key, value in params.items():
            print(f"{key:<{width}}  {value}")
    return 0


class _Problem(ctypes.Structure):
    _fields_ = ([(f, ctypes.c_int) for f in ("a_type", "b_type", "d_type", "layout")]
                + [(f, ctypes.c_int64) for f in ("m", "n", "k", "batch", "lda", "ldb", "ldc", "ldd", "stride_a",
                                                  "stride_b", "stride_c", "stride_d")]
                + [(f, ctypes.c_int) for f in ("scale_a", "scale_b", "has_bias", "bias_type", "has_c",
                                               "activation", "b_prepacked")])


def _c_enum(table_value: str) -> int:
    order = ["KILN_DTYPE_F32", "KILN_DTYPE_F16", "KILN_DTYPE_BF16", "KILN_DTYPE_E4M3", "KILN_DTYPE_E5M2",
             "KILN_DTYPE_E4M3FNUZ", "KILN_DTYPE_E5M2FNUZ", "KILN_LAYOUT_TN", "KILN_LAYOUT_NN"]
    i = order.index(table_value)
    return i if i < 7 else i - 7


def cmd_explain(args) -> int:
    lib_path = args.lib or os.environ.get("KILN_LIBRARY") or str(REPO / "build" / "libkiln.so")
    if not Path(lib_path).is_file():
        print(f"kiln explain: {lib_path} not found: build the library first (README) or pass --lib", file=sys.stderr)
        return 2
    lib = ctypes.CDLL(lib_path)
    handle = ctypes.c_void_p()
    status = lib.kiln_create(ctypes.byref(handle))
    if status == 0:
        status = lib.kiln_set_arch(handle, args.arch.encode())
    a, b, d = DType(args.a), DType(args.b), DType(args.d)
    layout = Layout(args.layout)
    prob = _Problem()
    if status == 0:
        status = lib.kiln_problem_init(ctypes.byref(prob), _c_enum(DTYPE_INFO[a].c_enum), _c_enum(DTYPE_INFO[b].c_enum),
                                       _c_enum(DTYPE_INFO[d].c_enum), _c_enum(LAYOUT_INFO[layout].c_enum),
                                       ctypes.c_int64(args.m), ctypes.c_int64(args.n), ctypes.c_int64(args.k))
    if status == 0 and args.prepacked:
        prob.b_prepacked = 1
        prob.ldb = (args.k + 15) // 16 * 16
        prob.stride_b = prob.ldb * args.n
    buf = ctypes.create_string_buffer(1 << 16)
    if status == 0:
        status = lib.kiln_explain(handle, ctypes.byref(prob), None, buf, ctypes.c_size_t(len(buf)))
    lib.kiln_status_string.restype = ctypes.c_char_p
    if handle:
        lib.kiln_destroy(handle)
    if status != 0:
        print(f"kiln explain: {lib.kiln_status_string(status).decode()}", file=sys.stderr)
        return 1
    print(buf.value.decode())
    return 0


def cmd_tune(args) -> int:
    from . import tune
    root = Path(args.root)
    t = tune.load(Path(args.tuning), root)
    work = Path(args.work or root / "build-tune" / Path(args.tuning).stem).resolve()
    work.mkdir(parents=True, exist_ok=True)
    stages = ("build", "bench", "write") if args.stage == "all" else (args.stage,)
    if args.stage == "candidates":
        sols, dropped = tune.candidates(t)
        for sol in sols:
            print(sol.name)
        print(f"kiln tune: {len(sols)} candidates, {len(t.sizes)} sizes; dropped: {dropped or 'none'}", file=sys.stderr)
        return 0
    if "build" in stages:
        tune.build(t, root, work, args.jobs)
    if "bench" in stages:
        part = tuple(int(v) for v in args.part.split("/"))
        tune.bench(t, work, part, args.budget_s, args.iters, args.warmup)
    if "write" in stages:
        results = tune.load_results(Path(args.results) if args.results else work / "results.json")
        done = sum(1 for s in t.sizes if "x".join(map(str, s)) in results["sizes"])
        out = tune.write(t, root, results)
        print(f"kiln tune: wrote {out.relative_to(root)} from {done} of {len(t.sizes)} sizes; "
              f"run `generator/kiln-gen generate` to rebuild the library")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="kiln-gen", description=__doc__)
    ap.add_argument("--root", default=str(REPO), help="repository root holding solutions/, templates/, generated/")
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate", help="render generated/ from solutions/ and templates/")
    g.add_argument("--quiet", action="store_true")
    sub.add_parser("check", help="exit 1 when generated/ differs from what generate would write")
    ls = sub.add_parser("list", help="kernel names")
    ls.add_argument("--arch")
    ls.add_argument("--ci", action="store_true", help="only the CI subset")
    ls.add_argument("--verbose", "-v", action="store_true")
    dc = sub.add_parser("decode", help="kernel name -> parameters")
    dc.add_argument("name")
    dc.add_argument("--json", action="store_true")
    ex = sub.add_parser("explain", help="which solution a size gets, and why (needs the built library)")
    ex.add_argument("--arch", required=True)
    ex.add_argument("--a", required=True, choices=[t.value for t in DType])
    ex.add_argument("--b", required=True, choices=[t.value for t in DType])
    ex.add_argument("--d", required=True, choices=[t.value for t in DType])
    ex.add_argument("--layout", default="TN", choices=[x.value for x in Layout])
    ex.add_argument("--prepacked", action="store_true", help="B from kiln_prepack_b (f16/bf16 x fp8)")
    ex.add_argument("--lib")
    for dim in ("m", "n", "k"):
        ex.add_argument(dim, type=int)
    tu = sub.add_parser("tune", help="tuning YAML -> candidates, build, kiln_bench on the GPU, selection logic YAML")
    tu.add_argument("tuning", help="the tuning YAML (tuning/*.yaml)")
    tu.add_argument("--stage", default="all", choices=("all", "candidates", "build", "bench", "write"))
    tu.add_argument("--work", help="working folder (default build-tune/<tuning file stem>)")
    tu.add_argument("--part", default="1/1", help="bench only sizes i, i+n, ... of the list (i/n), to split a run")
    tu.add_argument("--budget-s", type=float, default=float("inf"), help="stop benchmarking after this many seconds "
                    "(results so far are kept; the next run goes on)")
    tu.add_argument("--iters", type=int, default=10)
    tu.add_argument("--warmup", type=int, default=3)
    tu.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    tu.add_argument("--results", help="write: results JSON to use (default <work>/results.json)")
    ra = sub.add_parser("report-amd", help="write docs/amd-kernels.md from a build's AMD resource files")
    ra.add_argument("--build", required=True, help="the CMake build directory")
    ra.add_argument("--output", default=str(REPO / "docs" / "amd-kernels.md"))
    co = sub.add_parser("compile", help="(build step) compile one kernel and check its resources")
    for opt in ("arch", "compiler", "include", "source", "output", "log"):
        co.add_argument(f"--{opt}", required=True)
    co.add_argument("--objdump", help="AMD: llvm-objdump for the instruction mix (default: next to the compiler)")
    em = sub.add_parser("embed", help="(build step) embed code objects into a C file")
    em.add_argument("--list", required=True)
    em.add_argument("--output", required=True)
    args = ap.parse_args(argv)
    try:
        if args.cmd == "compile":
            return buildtools.compile_kernel(args.arch, args.compiler, args.include, args.source, args.output,
                                             args.log, args.objdump)
        if args.cmd == "embed":
            return buildtools.embed(args.list, args.output)
        if args.cmd == "report-amd":
            from .report import cmd_report_amd
            return cmd_report_amd(args.build, args.output, Path(args.root))
        return {"generate": cmd_generate, "check": cmd_check, "list": cmd_list, "decode": cmd_decode,
                "explain": cmd_explain, "tune": cmd_tune}[args.cmd](args)
    except ValueError as exc:
        from .schema import SchemaError
        from .tune import TuneError
        if not isinstance(exc, (SchemaError, TuneError)):
            raise
        print(exc, file=sys.stderr)  # one line: file:line: key: why
        return 2
