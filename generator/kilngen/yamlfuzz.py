"""Mutations of solution files: what an adversarial or careless user could write, made from the shipped files.

`mutant(bases, seed, i)` is a pure function of its arguments (a random.Random seeded with "seed:i"), so any mutant
can be made again from its number. fuzz.py runs them through the loader, the renderer and a C compiler.
"""
from __future__ import annotations

import random
import re

# Keys a solution file uses, and a few it does not: typos replace a key with one of these.
KEYS = ("schema", "arch", "family", "problem", "kind", "a", "b", "d", "layout", "defaults", "solutions", "selection",
        "ci", "fork", "with", "exact", "timings", "neighbors", "groups", "distance", "fallback", "size", "ms", "solution", "mt",
        "wg", "mi", "pgr", "plr", "su", "sus", "sum", "lpa", "lpb", "lxs", "gsu", "wgm", "vwa", "vwb", "ldsb", "tlds",
        "lbspp", "wsgr", "occ", "pk", "<<", "1", "null", "true", "'mt'", '"a\\nb"', "? [1]")

# Values a number (or any scalar) is replaced with: bounds of the C types, YAML 1.1 spellings, other types.
VALUES = ("0", "-1", "-64", "1", "2", "3", "7", "16", "64", "256", "2147483647", "2147483648", "-2147483649",
          "4294967296", "9223372036854775807", "9223372036854775808", "18446744073709551616", "1099511627776",
          "1" + "0" * 30, "9" * 5000, "1.5", "0.0", "-0.5", "128.0", ".inf", "-.inf", ".nan", "1.0e+308",
          "1.0e+39", "3.5e+38", "1.0e-45", "1.0e-300", "1.0e-7", "0x10", "010", "0o17", "0b101", "1_000", "1:30",
          "+8", "true", "no", "null", "~", "abc", "'128'", '"64"', "[]", "{}", "[1, 2]", "[128, 128, 64]",
          "{a: 1}", "!!str 64", "!!float 64", "!!int 0x10", "!!binary AAAA", "!!timestamp x", "!!bool maybe",
          "!!python/object:os.system x", "!unknown 1", "2001-12-14", "*nope", "&anchor 64", "|\n  64", "'", '"',
          "e4m3", "TN", "sm90", "mma", "log_mnk")

# Numbers a number is replaced with: the edges of int32, int64 and float, and the spellings YAML 1.1 reads as numbers.
NUMBERS = ("0", "-1", "1", "2147483647", "2147483648", "-2147483648", "4294967296", "9223372036854775808",
           "18446744073709551616", "1099511627776", "1" + "0" * 30, ".inf", "-.inf", ".nan", "1.0e+39", "3.4e+38",
           "1.0e-45", "1.0e-9", "0.0", "1.5", "1e5", "0x40", "0100", "1:04", "1_024")

_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?=:[ \n])")
_VALUE = re.compile(r"(?<=[:\[,{-] )([^\s,\[\]{}#][^,\[\]{}#\n]*?)(?=\s*(?:[,\]}\n]|#|$))")
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![\w.])")
_FLOW_LIST = re.compile(r"\[([^\[\]\n]+)\]")


def _pick(rng: random.Random, pattern: re.Pattern, text: str):
    found = list(pattern.finditer(text))
    return rng.choice(found) if found else None


def _splice(text: str, match, new: str) -> str:
    return text[:match.start()] + new + text[match.end():]


def _lines(text: str) -> list:
    return text.split("\n")


# --- mutators: (rng, text) -> (what was done, new text) -----------------------------------------------------------

def delete_line(rng, text):
    lines = _lines(text)
    i = rng.randrange(len(lines))
    return f"delete line {i + 1}", "\n".join(lines[:i] + lines[i + 1:])


def duplicate_line(rng, text):
    lines = _lines(text)
    i = rng.randrange(len(lines))
    return f"duplicate line {i + 1}", "\n".join(lines[:i + 1] + lines[i:])


def typo_key(rng, text):
    m = _pick(rng, _KEY, text)
    if not m:
        return "no key", text
    key = m.group(1)
    how = rng.randrange(5)
    if how == 0 and len(key) > 1:
        i = rng.randrange(len(key))
        new = key[:i] + key[i + 1:]
    elif how == 1 and len(key) > 1:
        i = rng.randrange(len(key) - 1)
        new = key[:i] + key[i + 1] + key[i] + key[i + 2:]
    elif how == 2:
        new = key + rng.choice("sx_1")
    elif how == 3:
        new = key.upper()
    else:
        new = rng.choice(KEYS)
    return f"key {key!r} -> {new!r}", _splice(text, m, new)


def delete_flow_item(rng, text):
    m = _pick(rng, re.compile(r"(?<=[{,] )[a-z]+: [^,{}]+?(?:, |(?=}))"), text)
    return ("no flow mapping", text) if not m else (f"delete {m.group(0)!r}", _splice(text, m, ""))


def duplicate_flow_item(rng, text):
    m = _pick(rng, re.compile(r"(?<=[{\[,] )[^,{}\[\]\n]+?(?:, )"), text)
    return ("no flow item", text) if not m else (f"repeat {m.group(0)!r}", _splice(text, m, m.group(0) * 2))


def swap_values(rng, text):
    found = list(_VALUE.finditer(text))
    if len(found) < 2:
        return "no values", text
    a, b = sorted(rng.sample(found, 2), key=lambda m: m.start())
    new = text[:a.start()] + b.group(1) + text[a.end():b.start()] + a.group(1) + text[b.end():]
    return f"swap {a.group(1)!r} and {b.group(1)!r}", new


def replace_value(rng, text):
    m = _pick(rng, _VALUE, text)
    if not m:
        return "no values", text
    new = rng.choice(VALUES)
    return f"value {m.group(1)!r} -> {new!r}", _splice(text, m, new)


def replace_number(rng, text):
    m = _pick(rng, _NUMBER, text)
    if not m:
        return "no numbers", text
    old = m.group(0)
    if rng.random() < 0.6:
        new = rng.choice(NUMBERS if rng.random() < 0.7 else VALUES)
    else:
        x = float(old)
        new = rng.choice([str(int(x) * 2), str(int(x) // 2), str(int(x) + 1), str(-int(x)), str(int(x) * 1024),
                          repr(x + 0.5), str(int(x) * 2 ** 32)])
    return f"number {old} -> {short_repr(new)}", _splice(text, m, new)


_SETTING = re.compile(r"(?<=[{,] )([a-z_]+): (\[[^\[\]\n]*\]|[^,{}\[\]\n#]+)")


def edge_setting(rng, text):
    """One value of a `key: value` in a flow mapping (a parameter, a size, an index), or one of its list's items,
    set to an edge number."""
    m = _pick(rng, _SETTING, text)
    if not m:
        return "no settings", text
    key, value = m.group(1), m.group(2)
    edge = rng.choice(NUMBERS[:12] + ("0", "-1", "1"))
    if value.startswith("["):
        items = [item.strip() for item in value[1:-1].split(",")]
        items[rng.randrange(len(items))] = edge
        edge = "[" + ", ".join(items) + "]"
    return f"{key}: {value} -> {short_repr(edge)}", text[:m.start()] + f"{key}: {edge}" + text[m.end():]


def nest(rng, text):
    m = _pick(rng, _VALUE, text)
    if not m:
        return "no values", text
    depth = rng.choice((2, 6, 31, 32, 33, 100, 600, 5000))
    if rng.random() < 0.5:
        new = "[" * depth + m.group(1) + "]" * depth
    else:
        new = "{a: " * depth + m.group(1) + "}" * depth
    return f"nest {m.group(1)!r} {depth} deep", _splice(text, m, new)


def nest_block(rng, text):
    depth = rng.choice((10, 40, 600))
    block = "".join("  " * i + "- \n" for i in range(depth)) + "  " * depth + "- 1\n"
    return f"block list {depth} deep under selection", text.replace("selection:\n", "selection:\n  bomb:\n" +
                                                                     "".join("    " + line + "\n" for line in
                                                                             block.splitlines()), 1)


def alias_bomb(rng, text):
    levels, fan = rng.choice(((4, 4), (9, 9), (12, 10), (30, 2), (3, 300)))
    lines = [f"b0: &b0 [{', '.join(['1'] * fan)}]"]
    lines += [f"b{i}: &b{i} [{', '.join([f'*b{i - 1}'] * fan)}]" for i in range(1, levels)]
    target = f"*b{levels - 1}"
    body = text
    m = _pick(rng, _VALUE, text)
    if m and rng.random() < 0.5:
        body = _splice(text, m, target)
    return f"alias bomb {levels} levels x {fan}", "\n".join(lines) + "\n" + body


def tabs(rng, text):
    lines = _lines(text)
    indented = [i for i, line in enumerate(lines) if line.startswith(" ")]
    if indented and rng.random() < 0.7:
        i = rng.choice(indented)
        lines[i] = "\t" + lines[i].lstrip(" ")
        return f"tab indents line {i + 1}", "\n".join(lines)
    at = rng.randrange(len(text) + 1)
    return f"tab at {at}", text[:at] + "\t" + text[at:]


def line_ends(rng, text):
    end = rng.choice(("\r\n", "\r", "\r\r\n", "\n\r", "\x85", "\u2028"))
    if rng.random() < 0.6:
        return f"line ends {end!r}", text.replace("\n", end)
    lines = _lines(text)
    i = rng.randrange(len(lines))
    lines[i] += end
    return f"line {i + 1} ends {end!r}", "\n".join(lines)


def indent(rng, text):
    lines = _lines(text)
    i = rng.randrange(len(lines))
    lines[i] = (" " + lines[i]) if rng.random() < 0.5 or not lines[i].startswith(" ") else lines[i][1:]
    return f"indent line {i + 1}", "\n".join(lines)


def insert_token(rng, text):
    token = rng.choice((": ", "- ", "{", "}", "[", "]", '"', "'", "&a ", "*a", "!!str ", "%YAML 1.1\n", "---\n",
                        "...\n", "# ", "|", ">", "? ", ",", "\\", "@", "`", "\0", "\x07", "\ufeff", "\ud800"))
    at = rng.randrange(len(text) + 1)
    return f"insert {token!r} at {at}", text[:at] + token + text[at:]


def structure(rng, text):
    how = rng.randrange(10)
    if how == 0:
        return "BOM", "\ufeff" + text
    if how == 1:
        return "empty", ""
    if how == 2:
        return "comments only", "".join(f"# {line}\n" for line in _lines(text))
    if how == 3:
        return "a list document", "- 1\n- [2, 3]\n"
    if how == 4:
        return "a scalar document", rng.choice(("hello\n", "42\n", "~\n", "'schema: 1'\n"))
    if how == 5:
        return "two documents", text + "\n---\n" + rng.choice((text, "1\n"))
    if how == 6:
        return "YAML 2.0 directive", "%YAML 2.0\n---\n" + text
    if how == 7:
        return "document end marker", text + "\n...\n"
    if how == 8:
        return "NUL", text.replace("\n", "\n\0", 1)
    return "every line a list item", "".join(f"- {line}\n" for line in _lines(text))


TEXT_MUTATORS = (delete_line, duplicate_line, typo_key, delete_flow_item, duplicate_flow_item, swap_values,
                 replace_value, replace_number, replace_number, edge_setting, edge_setting, nest, nest_block,
                 alias_bomb, tabs, line_ends, indent, insert_token, structure)


# --- byte mutators: (rng, data) -> (what, new data) -----------------------------------------------------------------

def truncate(rng, data):
    at = rng.randrange(len(data) + 1)
    return f"truncate at byte {at}", data[:at]


def invalid_utf8(rng, data):
    junk = rng.choice((b"\x80", b"\xc3", b"\xff", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf"))
    at = rng.randrange(len(data) + 1)
    return f"bytes {junk!r} at {at}", data[:at] + junk + data[at:]


def flip_bits(rng, data):
    if not data:
        return "nothing to flip", data
    out = bytearray(data)
    where = []
    for _ in range(rng.randint(1, 4)):
        at = rng.randrange(len(out))
        out[at] ^= 1 << rng.randrange(8)
        where.append(at)
    return f"bit flips at {where}", bytes(out)


BYTE_MUTATORS = (truncate, invalid_utf8, flip_bits)


def short_repr(text: str) -> str:
    return repr(text) if len(text) <= 40 else repr(text[:37]) + "..."


def mutant(bases, seed: int, i: int) -> tuple:
    """The i-th mutant: (base's path relative to the root, description, bytes). 1 to 3 mutations, text ones first."""
    rng = random.Random(f"{seed}:{i}")
    rel, data = rng.choices(bases, [len(data) ** 0.5 for _rel, data in bases])[0]
    text = data.decode("utf-8")
    done = []
    count = rng.choices((1, 2, 3), (70, 20, 10))[0]
    mutators = [rng.choice(TEXT_MUTATORS + BYTE_MUTATORS) for _ in range(count)]
    mutators.sort(key=lambda m: m in BYTE_MUTATORS)
    out = None
    for mutate in mutators:
        if mutate in BYTE_MUTATORS:
            if out is None:
                out = text.encode("utf-8", "surrogatepass")
            what, out = mutate(rng, out)
        else:
            what, text = mutate(rng, text)
        done.append(what)
    if out is None:
        out = text.encode("utf-8", "surrogatepass")
    return rel, "; ".join(done), out
