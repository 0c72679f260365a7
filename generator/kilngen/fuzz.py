"""The YAML fuzz test. Each mutant of a shipped solution file (yamlfuzz.py) must either
- fail to load with a SchemaError of one line `file:line: key: why`, 1 <= line <= the file's line count, or
- load into solutions whose generated code is what their names say: every name decodes back to its solution, every
  kernel's `static constexpr int` constants fit int32 and equal the decoded name's values, and the rendered dispatch
  table compiles with -Wall -Wextra -Werror (an overflowing literal or a non-finite float is an error there).
Any other exception is a failure ("traceback"), as is an accepted mutant whose output is wrong ("broken").

    PYTHONPATH=generator python3 -m kilngen.fuzz                 # 2,000 mutants, seed 1 (CI's test: 1,000)
    PYTHONPATH=generator python3 -m kilngen.fuzz --seconds 600   # long mode (or KILN_FUZZ_SECONDS=600)
    PYTHONPATH=generator python3 -m kilngen.fuzz --only 1234     # one mutant again, written out with its result

Failing mutants are saved (with what was done to them and the failure) under a temporary folder that is printed.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from . import model, render, schema
from .yamlfuzz import mutant

INT32 = (-(2 ** 31), 2 ** 31 - 1)
MUTANT_SECONDS = 20          # one mutant's load + render; longer is a hang
BATCH = 40                   # dispatch tables per compiler run
_CONST = re.compile(r"static\s+constexpr\s+int\s+(\w+)\s*=\s*(-?\d+)\s*;")
_DEFINED = re.compile(r"^(?:static\s+)?const\b[^=;(]*?\b([A-Za-z_]\w*)\s*(?:\[[^\]]*\])?\s*=", re.M)


class _Hang(BaseException):
    pass


def line_count(data: bytes) -> int:
    """Lines as `grep -n` numbers them: one per LF, plus an unterminated last line; at least 1."""
    return max(1, data.count(b"\n") + (0 if data.endswith(b"\n") else 1))


def message_problem(message: str, source: str, data: bytes):
    """Why a SchemaError's text breaks the format, or None."""
    if len(message.splitlines()) != 1 or message != message.strip("\r\n"):
        return "not one line"
    m = re.fullmatch(rf"{re.escape(source)}:(\d+): ([\w.\[\]]+|'.*'|\".*\"): (\S.*)", message)
    if not m:
        return "not `file:line: key: why`"
    if not 1 <= int(m.group(1)) <= line_count(data):
        return f"line {m.group(1)} is outside 1..{line_count(data)}"
    return None


def _param_counts() -> dict:
    """{field: value count} of every solution parameter (model.PARAMS rows or catalogue records)."""
    out = {}
    for p in model.PARAMS:
        if isinstance(p, tuple):
            out[p[0]] = p[2]
        else:
            out[p.field] = p.count
    return out


def expected_constants(sol) -> dict:
    """The kernel constants a solution's name fixes: the tile, the warp grid and every scalar parameter."""
    out = {"MT0": sol.mt[0], "MT1": sol.mt[1], "DU": sol.mt[2], "WG0": sol.wg[0], "WG1": sol.wg[1]}
    for name, count in _param_counts().items():
        if count == 1:
            out[name.upper()] = getattr(sol, name)
    return out


def kernel_problem(name: str, text: str):
    """Why a rendered kernel differs from its name, or None."""
    try:
        sol = model.decode(name)
    except ValueError as exc:
        return f"name does not decode: {exc}"
    found = _CONST.findall(text)
    for const, value in found:
        if not INT32[0] <= int(value) <= INT32[1]:
            return f"constexpr int {const} = {value} does not fit int32"
    have = {}
    for const, value in found:
        have.setdefault(const, int(value))
    for const, value in expected_constants(sol).items():
        if const not in have:
            return f"no constant {const} (the name says {value})"
        if have[const] != value:
            return f"{const} = {have[const]} but the name says {value}"
    return None


def renamed(text: str, tag: str) -> str:
    """A dispatch table whose file-scope definitions carry a prefix, so that many fit in one translation unit."""
    names = sorted(set(_DEFINED.findall(text)), key=len, reverse=True)
    if not names:
        return text
    return re.sub(r"\b(" + "|".join(names) + r")\b", lambda m: tag + m.group(1), text)


@dataclass
class Figures:
    tried: int = 0
    rejected: int = 0
    accepted: int = 0
    tracebacks: int = 0
    broken: int = 0
    tables: int = 0          # distinct dispatch tables compiled
    kernels: int = 0         # distinct kernel sources checked
    failures: list = field(default_factory=list)

    def line(self, seed: int, seconds: float) -> str:
        return (f"yaml fuzz, seed {seed}: {self.tried} mutants in {seconds:.1f} s: {self.rejected} rejected, "
                f"{self.accepted} accepted ({self.tables} distinct dispatch tables compiled, {self.kernels} distinct "
                f"kernels checked); {self.tracebacks} tracebacks, {self.broken} broken accepted")


class Fuzzer:
    def __init__(self, repo: Path, seed: int, work: Path, say=print):
        self.repo, self.seed, self.work, self.say = repo, seed, work, say
        self.bases = [(p.relative_to(repo).as_posix(), p.read_bytes())
                      for p in sorted(repo.glob("solutions/*/*.yaml"))]
        if not self.bases:
            raise SystemExit(f"{repo}: no solutions/*/*.yaml to mutate")
        self.templates = repo / "templates"
        self.root = work / "root"
        self.figures = Figures()
        self.seen_tables, self.seen_kernels = set(), set()
        self.pending = []    # (mutant number, dispatch.c)
        self.cc = os.environ.get("CC") or shutil.which("gcc") or shutil.which("cc")
        self.includes = [f"-I{repo / d}" for d in ("runtime/src", "runtime/include", "device/abi", "device",
                                                    "templates/device") if (repo / d).is_dir()]

    # --- one mutant ---

    def fail(self, kind: str, i: int, rel: str, what: str, data: bytes, detail: str) -> None:
        if kind == "traceback":
            self.figures.tracebacks += 1
        else:
            self.figures.broken += 1
        folder = self.work / "failures"
        folder.mkdir(parents=True, exist_ok=True)
        saved = folder / f"{i}.yaml"
        saved.write_bytes(data)
        (folder / f"{i}.txt").write_text(f"mutant {i} of {rel} (seed {self.seed}): {what}\n{kind}: {detail}\n")
        self.figures.failures.append((i, kind, rel, what, detail))
        lines = detail.strip().splitlines() or [""]
        first = next((line for line in lines if "error" in line and "warnings being treated" not in line), lines[-1])
        self.say(f"FAIL {kind}: mutant {i} of {rel}: {what}: {first}\n  saved as {saved}; again: "
                 f"PYTHONPATH=generator python3 -m kilngen.fuzz --seed {self.seed} --only {i}")

    def run_one(self, i: int) -> str:
        rel, what, data = mutant(self.bases, self.seed, i)
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        self.figures.tried += 1
        signal.setitimer(signal.ITIMER_REAL, MUTANT_SECONDS)
        try:
            try:
                sf = schema.load_file(path, self.root)
            except schema.SchemaError as exc:
                why = message_problem(str(exc), rel, data)
                if why:
                    self.fail("traceback", i, rel, what, data, f"{why}: {str(exc)!r}")
                    return "bad message"
                self.figures.rejected += 1
                return str(exc)
            self.figures.accepted += 1
            return self.check_output(i, rel, what, data, sf)
        except _Hang:
            self.fail("traceback", i, rel, what, data, f"took more than {MUTANT_SECONDS} s")
            return "hang"
        except Exception:  # noqa: BLE001  (any exception is the finding)
            self.fail("traceback", i, rel, what, data, traceback.format_exc())
            return "traceback"
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)

    def check_output(self, i, rel, what, data, sf) -> str:
        for sol in sf.solutions:
            try:
                back = model.decode(sol.name)
            except ValueError as exc:
                self.fail("broken", i, rel, what, data, f"{sol.name} does not decode: {exc}")
                return "broken"
            if back != sol:
                self.fail("broken", i, rel, what, data, f"{sol.name} decodes to another solution")
                return "broken"
        try:
            tree = render.render_tree([sf], self.templates)
        except Exception:  # noqa: BLE001
            self.fail("traceback", i, rel, what, data, traceback.format_exc())
            return "traceback"
        for path, text in tree.items():
            if path in ("dispatch.c", "attention.c", "kernels.cmake"):
                continue
            digest = hashlib.sha1(text.encode()).digest()
            if digest in self.seen_kernels:
                continue
            why = kernel_problem(Path(path).stem, text)
            if why:
                self.fail("broken", i, rel, what, data, f"{path}: {why}")
                return "broken"
            self.seen_kernels.add(digest)
            self.figures.kernels += 1
        table = tree["dispatch.c"]
        digest = hashlib.sha1(table.encode()).digest()
        if digest not in self.seen_tables:
            self.seen_tables.add(digest)
            self.pending.append((i, rel, what, data, table))
            if len(self.pending) >= BATCH:
                self.compile_pending()
        return "accepted"

    # --- compiling dispatch tables ---

    def compile(self, source: str, name: str) -> str:
        """The compiler's complaint about one translation unit, or ""."""
        path = self.work / name
        path.write_text(source)
        run = subprocess.run([self.cc, "-fsyntax-only", "-std=c11", "-Wall", "-Wextra", "-Werror", *self.includes,
                              str(path)], capture_output=True, text=True)
        return "" if run.returncode == 0 else (run.stderr or run.stdout or "failed").strip()

    def compile_pending(self) -> None:
        batch, self.pending = self.pending, []
        if not batch or not self.cc:
            return
        unit = "\n".join(renamed(table, f"m{i}_") for i, _r, _w, _d, table in batch)
        if self.compile(unit, "batch.c"):
            for i, rel, what, data, table in batch:  # find the culprits one by one
                complaint = self.compile(table, "dispatch.c")
                if complaint:
                    self.fail("broken", i, rel, what, data, f"dispatch.c does not compile:\n{complaint}")
                    self.figures.tables -= 1
        self.figures.tables += len(batch)


def _alarm(_signum, _frame):
    raise _Hang()


def run(repo: Path, seed: int = 1, count: int = 2000, seconds: float = 0.0, work: Path = None, say=print) -> Figures:
    """Fuzz `count` mutants, or for `seconds` when that is longer. Returns the figures (printed too)."""
    own = work is None
    work = Path(tempfile.mkdtemp(prefix="kiln-yaml-fuzz-")) if own else work
    fuzzer = Fuzzer(repo, seed, work, say)
    environment, cache = render.environment, {}
    render.environment = lambda templates: cache.setdefault(str(templates), environment(templates))
    old = signal.signal(signal.SIGALRM, _alarm)
    start = last = time.monotonic()
    try:
        i = 0
        while i < count or time.monotonic() - start < seconds:
            fuzzer.run_one(i)
            i += 1
            if seconds and time.monotonic() - last >= 60:
                last = time.monotonic()
                say(fuzzer.figures.line(seed, last - start) + " (so far)")
        fuzzer.compile_pending()
    finally:
        signal.signal(signal.SIGALRM, old)
        render.environment = environment
    figures = fuzzer.figures
    say(figures.line(seed, time.monotonic() - start))
    if not fuzzer.cc:
        say("no C compiler found (gcc, cc or $CC): dispatch tables were not compiled")
    if figures.failures:
        say(f"failing mutants are in {work / 'failures'}")
    elif own:
        shutil.rmtree(work, ignore_errors=True)
    return figures


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m kilngen.fuzz", description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=2000, help="mutants to try (default 2000)")
    ap.add_argument("--seconds", type=float, default=float(os.environ.get("KILN_FUZZ_SECONDS", 0) or 0),
                    help="keep going this long (default $KILN_FUZZ_SECONDS or 0)")
    ap.add_argument("--only", type=int, help="make mutant N again, write it out and show its result")
    ap.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[2], help="the kiln checkout")
    args = ap.parse_args(argv)
    if args.only is not None:
        work = Path(tempfile.mkdtemp(prefix="kiln-yaml-fuzz-"))
        fuzzer = Fuzzer(args.root, args.seed, work)
        rel, what, data = mutant(fuzzer.bases, args.seed, args.only)
        old = signal.signal(signal.SIGALRM, _alarm)
        result = fuzzer.run_one(args.only)
        fuzzer.compile_pending()
        signal.signal(signal.SIGALRM, old)
        print(f"mutant {args.only} of {rel}: {what}\nwritten to {fuzzer.root / rel}\nresult: {result}")
        return 1 if fuzzer.figures.failures else 0
    figures = run(args.root, args.seed, args.count, args.seconds)
    return 1 if figures.tracebacks or figures.broken else 0


if __name__ == "__main__":
    sys.exit(main())
