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


def load_attention(root: Path):
    from .attention_yaml import load_tree as load
    return load(root)


def _tree(root: Path):
    from . import render
    files = load_tree(root)
    return files, render.render_tree(files, root / "templates", load_attention(root))


def cmd_generate(args) -> int:
    root = Path(args.root)
    files, tree = _tree(root)
    kernels = sum(1 for rel in tree if rel.endswith(".hip"))
    attention = len(load_attention(root))

    def progress(i, n, rel):
        if not args.quiet:
            print(f"kiln: [{i}/{n}] generated/{rel}", flush=True)

    from . import render
    written, removed = render.write_tree(root / "generated", tree, progress)
    print(f"kiln: {len(files)} solution files + {attention} attention files, {kernels} kernels; {written} files "
          f"written, {removed} removed, {len(tree) - written} unchanged")
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
    from . import naming_doc
    page = root / "docs" / "naming.md"
    if page.is_file() and naming_doc.update(page.read_text()) != page.read_text():
        print("kiln check: docs/naming.md's parameter table is stale; run `generator/kiln-gen docs`", file=sys.stderr)
        return 1
    print(f"kiln check: generated/ is up to date ({len(tree)} files)")
    return 0


def cmd_docs(args) -> int:
    from . import naming_doc
    page = Path(args.root) / "docs" / "naming.md"
    changed = naming_doc.write(page)
    print(f"kiln: docs/naming.md {'written' if changed else 'unchanged'}")
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
    for af in load_attention(Path(args.root)):
        if args.arch and af.arch.value != args.arch:
            continue
        for sol in af.ci if args.ci else af.solutions:
            print(f"{sol.name}  threads={sol.threads} lds={sol.lds_bytes} source={af.source}" if args.verbose
                  else sol.name)
    return 0


def cmd_decode(args) -> int:
    from . import attention
    try:
        params = (attention.as_dict(attention.decode(args.name)) if attention.is_attention_name(args.name)
                  else as_dict(decode(args.name)))
    except (NameError_, attention.AttnNameError) as exc:
        print(f"kiln decode: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(params, indent=2))
    else:
        width = max(len(k) for k in params)
        for key, value in params.items():
            print(f"{key:<{width}}  {value}")
    return 0


def _binding():
    """The Python binding's ctypes layer (runtime/python/kiln: _capi mirrors kiln.h, make_problem range-checks the
    fields), imported by path. It needs neither torch nor a GPU, so explain runs wherever the library was built."""
    path = str(REPO / "runtime" / "python")
    if path not in sys.path:
        sys.path.insert(0, path)
    from kiln import _capi, _handle
    return _capi, _handle


def cmd_explain(args) -> int:
    capi, binding = _binding()
    try:
        lib = capi.load_library(args.lib)
    except OSError as exc:
        print(f"kiln explain: {exc}; build the library first (README) or pass --lib", file=sys.stderr)
        return 2
    handle = capi.kiln_handle()
    try:
        capi.check(lib.kiln_create(ctypes.byref(handle)), "kiln_create")
        capi.check(lib.kiln_set_arch(handle, args.arch.encode()), "kiln_set_arch", f"arch {args.arch!r}", handle)
        a, b, d = (capi.DType[DType(v).name] for v in (args.a, args.b, args.d))
        fields = {"b_prepacked": 1} if args.prepacked else {}
        prob = binding.make_problem(a, b, d, capi.Layout[Layout(args.layout).name], args.m, args.n, args.k,
                                    **fields)
        status, text = capi.explain_text(handle, prob)
        print(text, end="" if text.endswith("\n") else "\n")  # also when the selection failed: it says why
        capi.check(status, "kiln_explain", "", handle)
    except (ValueError, TypeError) as exc:  # a size its C field cannot hold (make_problem's range checks)
        print(f"kiln explain: {exc}", file=sys.stderr)
        return 2
    except capi.KilnError as exc:
        print(f"kiln explain: {exc}", file=sys.stderr)
        return 1
    finally:
        if handle:
            lib.kiln_destroy(handle)
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
        tune.bench(t, work, part, args.budget_s, args.iters, args.warmup, args.retime_warm)
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
    sub.add_parser("docs", help="write the parameter table of docs/naming.md from the parameter catalogue")
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
    tu.add_argument("--retime-warm", action="store_true", help="bench: time again the sizes whose record was timed "
                    "with warm L2 (results from before kiln_bench's cold-L2 default) and replace them")
    tu.add_argument("--iters", type=int, default=10)
    tu.add_argument("--warmup", type=int, default=3)
    tu.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    tu.add_argument("--results", help="write: results JSON to use (default <work>/results.json)")
    ra = sub.add_parser("report-amd", help="write docs/amd-kernels.md from a build's AMD resource files")
    ra.add_argument("--build", required=True, help="the CMake build directory")
    ra.add_argument("--output", default=str(REPO / "docs" / "amd-kernels.md"))
    co = sub.add_parser("compile", help="(build step) compile one kernel (GEMM or attention) and check its resources")
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
                "explain": cmd_explain, "tune": cmd_tune, "docs": cmd_docs}[args.cmd](args)
    except ValueError as exc:
        from .schema import SchemaError
        from .tune import TuneError
        if not isinstance(exc, (SchemaError, TuneError)):
            raise
        print(exc, file=sys.stderr)  # one line: file:line: key: why
        return 2
