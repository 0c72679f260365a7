"""The YAML fuzz test (kilngen/fuzz.py) in its CI size, and checks that its checker sees what it must.

CI runs 1,000 mutants of the shipped solution files, seed 1, ~2.5 minutes on one core (KILN_FUZZ_COUNT,
KILN_FUZZ_SEED and KILN_FUZZ_SECONDS change that; the command-line default is 2,000 and the long mode
`KILN_FUZZ_SECONDS=600`). The figures are printed whether or not it passes.
"""
import os
import shutil
import textwrap
from pathlib import Path

import pytest

from kilngen import fuzz, render, schema
from kilngen.yamlfuzz import mutant
from kilngen.schema import SchemaError, load_file

REPO = Path(__file__).resolve().parents[2]
CC = os.environ.get("CC") or shutil.which("gcc") or shutil.which("cc")


def test_fuzz_mutants_load_or_fail_in_one_line(capsys, tmp_path):
    count = int(os.environ.get("KILN_FUZZ_COUNT", 1000))
    seconds = float(os.environ.get("KILN_FUZZ_SECONDS", 0) or 0)
    lines = []
    figures = fuzz.run(REPO, int(os.environ.get("KILN_FUZZ_SEED", 1)), count, seconds, tmp_path, lines.append)
    with capsys.disabled():
        print("\n" + "\n".join(lines))
    assert figures.tried >= count
    assert figures.rejected and figures.accepted
    assert (figures.tracebacks, figures.broken) == (0, 0), figures.failures[:5]
    if CC:
        assert figures.tables > 0


def bases():
    return [(p.relative_to(REPO).as_posix(), p.read_bytes()) for p in sorted(REPO.glob("solutions/*/*.yaml"))]


def test_mutants_are_reproducible():
    b = bases()
    assert [mutant(b, 7, i) for i in range(50)] == [mutant(b, 7, i) for i in range(50)]
    assert len({mutant(b, 7, i)[2] for i in range(50)}) > 40


def test_message_format_is_checked():
    data = b"a\nb\n"
    assert fuzz.message_problem("x.yaml:2: mt: bad", "x.yaml", data) is None
    assert fuzz.message_problem("x.yaml:2: 'a b': bad", "x.yaml", data) is None
    assert fuzz.message_problem("x.yaml:3: mt: bad", "x.yaml", data) == "line 3 is outside 1..2"
    assert fuzz.message_problem("x.yaml:0: mt: bad", "x.yaml", data) == "line 0 is outside 1..2"
    assert fuzz.message_problem("x.yaml:1: mt: bad\nmore", "x.yaml", data) == "not one line"
    assert fuzz.message_problem("x.yaml:1: bad", "x.yaml", data) == "not `file:line: key: why`"
    assert fuzz.line_count(b"") == 1 and fuzz.line_count(b"a\r\r\nb") == 2 and fuzz.line_count(b"a\rb\r") == 1


@pytest.fixture(scope="module")
def rendered():
    sf = load_file(REPO / "solutions/sm90/mixed_f16.yaml", REPO)
    return render.render_tree([sf], REPO / "templates")


def test_kernel_constants_are_checked_against_the_name(rendered):
    path, text = next((p, t) for p, t in rendered.items() if p not in ("dispatch.c", "kernels.cmake"))
    name = Path(path).stem
    assert fuzz.kernel_problem(name, text) is None
    assert "SU" in fuzz.expected_constants(fuzz.model.decode(name))
    wrapped = text.replace("static constexpr int SU = 0;", "static constexpr int SU = 1099511627776;")
    assert wrapped != text and "does not fit int32" in fuzz.kernel_problem(name, wrapped)
    assert fuzz.kernel_problem(name, text.replace("int SU = 0;", "int SU = 32;")) == "SU = 32 but the name says 0"


@pytest.mark.skipif(not CC, reason="no C compiler")
def test_dispatch_tables_compile_together_and_bad_literals_do_not(rendered, tmp_path):
    fuzzer = fuzz.Fuzzer(REPO, 1, tmp_path)
    table = rendered["dispatch.c"]
    assert fuzzer.compile(fuzz.renamed(table, "m1_") + fuzz.renamed(table, "m2_"), "two.c") == ""
    for bad in ("const float kiln_probe = inff;", "const int64_t kiln_probe[] = {18446744073709551616};",
                "const float kiln_probe = 1.000000e+39f;", "const int kiln_probe = 4294967296;"):
        assert fuzzer.compile(table + bad + "\n", "bad.c"), bad


GOOD = ("schema: 1\narch: sm90\nfamily: mma\nproblem: {a: f16, b: f16, d: f16, layout: TN}\n"
        "solutions:\n  - {mt: [64, 64, 64], wg: [2, 2]}\nselection: {distance: log_mnk, fallback: 0}\n")


@pytest.mark.parametrize("text,message", [
    ("\ufeff" + GOOD, None),
    ("", "x.yaml:1: document: empty; expected a mapping with schema, arch, family, problem, solutions, selection"),
    ("- [1]\n", "x.yaml:1: document: expected a mapping, got a list"),
    ("schema: 1\n\0", "x.yaml:2: yaml: special character U+0000 is not allowed"),
    ("schema: 1\r\r\narch: [\r\r\n", "x.yaml:2: yaml: expected a value, found the end of the file"),
    ("schema: 1\n" + "a: " + "[" * 10000, "x.yaml:2: yaml: nesting deeper than 32 levels"),
    ("? [1]\n: 2\n", "x.yaml:1: document: keys must be strings, got a list"),
    (GOOD.replace("arch: sm90", 'arch: "\\u2028"'), "x.yaml:2: arch: unknown arch '\\u2028'; one of sm90, sm89, sm80, "
                                                     "gfx942, gfx90a, gfx1151, gfx1201"),
    (GOOD.replace("\n", "\r\r\n").replace("fallback: 0", "fallback: 1"),
     "x.yaml:7: selection.fallback: 1 is out of range; the file expands to 1 solution (index 0)"),
    (GOOD.replace("\n", "\r").replace("fallback: 0", "fallback: 1"),
     "x.yaml:1: selection.fallback: 1 is out of range; the file expands to 1 solution (index 0)"),
])
def test_hostile_files(tmp_path, text, message):
    path = tmp_path / "x.yaml"
    path.write_bytes(text.encode("utf-8"))
    if message is None:
        assert load_file(path, tmp_path).solutions
        return
    with pytest.raises(SchemaError) as info:
        load_file(path, tmp_path)
    assert str(info.value) == message


def test_error_lines_never_pass_the_end(tmp_path):
    text = textwrap.dedent("""\
        schema: 1
        arch: sm90
        family: mma
        problem: {a: f16, b: f16, d: f16, layout: TN}
        solutions:
          - {mt: [64, 64, 64], wg: [2, 2]}
        selection: {distance: log_mnk, fallback: 'x""")
    path = tmp_path / "x.yaml"
    path.write_text(text)
    with pytest.raises(SchemaError) as info:
        load_file(path, tmp_path)
    assert str(info.value) == "x.yaml:7: yaml: unclosed quote"
    assert schema.MAX_SOLUTIONS >= 1024
