"""Reading one YAML file into composed nodes, and the checked reads of those nodes that every key goes through.

Whatever the bytes, reading ends in a node tree or in one SchemaError whose text is one line, `file:line: key: why`:
- lines are counted as `grep -n` counts them (one per '\\n'), also in files with CR or CR CR LF line ends, and never
  past the file's last line;
- nesting depth, aliases and file size are bounded, so a hostile file cannot exhaust the stack or memory;
- the parser's own wording ("expected <block end>, but found ...") is rewritten into plain words;
- every int a solution file gives lands in a C int, so reads refuse ints outside int32 and ints not written in decimal
  (YAML 1.1 reads `010` as 8 and `1:30` as 90).
schema.py gives these reads their meaning; the message format is in docs/yaml.md.
"""
from __future__ import annotations

import difflib
import re
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

import yaml

MAX_FILE_BYTES = 4 << 20
MAX_DEPTH = 32           # a solution file needs 6 levels
MAX_ALIASES = 256
INT_MIN, INT_MAX = -(2 ** 31), 2 ** 31 - 1

_INT_TAG = "tag:yaml.org,2002:int"
_DECIMAL = re.compile(r"[-+]?(0|[1-9][0-9]*)")
_PLAIN_KEY = re.compile(r"[\w.\[\]]+")


class SchemaError(ValueError):
    """A solution file is invalid. str(error) is one line: `file:line: key: why`."""


def mark_line(mark) -> int:
    """The 1-based line of a mark, counting '\\n' only (PyYAML also counts a lone '\\r' as a line break)."""
    buffer = getattr(mark, "buffer", None)
    if isinstance(buffer, str) and mark.index is not None:
        return buffer.count("\n", 0, mark.index) + 1
    return mark.line + 1


def node_line(node) -> int:
    return mark_line(node.start_mark)


def line_count(text: str) -> int:
    """Lines of a file as editors show them: one per '\\n', plus an unterminated last line; 1 for an empty file."""
    return max(1, text.count("\n") + (0 if text.endswith("\n") else 1))


def hint(word: str, known) -> str:
    close = difflib.get_close_matches(word, list(known), n=1)
    return f"did you mean {close[0]}?" if close else "one of " + ", ".join(known)


def plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def short(text: str, limit: int = 48) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


def one_line(text: str) -> str:
    """Control characters and line separators spelled as escapes: a message stays one line."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader with bounded nesting (its composer recurses per level) and a bounded number of aliases."""

    def __init__(self, text: str):
        super().__init__(text)
        self.depth = 0
        self.aliases = 0

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            self.aliases += 1
            if self.aliases > MAX_ALIASES:
                raise yaml.composer.ComposerError(None, None, f"more than {MAX_ALIASES} aliases (*name)",
                                                  self.peek_event().start_mark)
            return super().compose_node(parent, index)
        if self.depth >= MAX_DEPTH:
            raise yaml.composer.ComposerError(None, None, f"nesting deeper than {MAX_DEPTH} levels",
                                              self.peek_event().start_mark)
        self.depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


# The parser's messages in plain words: (words in its context or problem, what to say, blame the context's line).
_PLAIN = (
    ("found character '\\t' that cannot start any token", "tab character used for indentation; indent with spaces",
     False),
    ("that cannot start any token", "character {found} cannot start a value here", False),
    ("while scanning a quoted scalar", "unclosed quote", True),
    ("while scanning a double-quoted scalar", "bad escape in a double-quoted string", False),
    ("could not find expected ':'", "a key without ':', or bad indentation", True),
    ("mapping values are not allowed here", "unexpected ':' (bad indentation, or text with ': ' that needs quotes)",
     False),
    ("expected <block end>", "bad indentation", False),
    ("invalid indentation or unclosed", "bad indentation or unclosed '[' or '{'", False),
    ("expected ',' or ']'", "unclosed '[' or a missing ','", True),
    ("expected ',' or '}'", "unclosed '{' or a missing ','", True),
    ("sequence entries are not allowed here", "a list item ('- ') where none may start (bad indentation?)", False),
    ("mapping keys are not allowed here", "a key where none may start (bad indentation?)", False),
    ("expected the node content", "expected a value, found {found}", False),
    ("expected '<document start>'", "text after the document's end (bad indentation?)", False),
    ("found unexpected document separator", "'---' or '...' inside a value", False),
    ("expected a single document", "a second document ('---'); a solution file holds one", False),
    ("found undefined alias", "alias {found} names no anchor", False),
    ("found duplicate anchor", "anchor {found} defined twice", False),
    ("while scanning an anchor", "bad anchor name", False),
    ("while scanning an alias", "bad alias name", False),
    ("tag", "bad tag", False),
    ("while scanning a block scalar", "bad block scalar (| or >) header", False),
    ("directive", "bad directive (a line starting with %)", False),
    ("YAML document", "unsupported YAML version", False),
    ("while scanning a simple key", "a key without ':', or bad indentation", True),
)


def _plain(exc: yaml.MarkedYAMLError) -> tuple:
    """(mark to blame, plain words) of a parser error."""
    context, problem = exc.context or "", str(exc.problem or "")
    found = re.search(r"'[^']*'", problem) or re.search(r"'[^']*'", context)
    for words, say, at_context in _PLAIN:
        if words in problem or words in context:
            mark = exc.context_mark if at_context and exc.context_mark else exc.problem_mark or exc.context_mark
            shown = found.group(0) if found else "?"
            shown = {"'<block end>'": "the end of a block", "'<stream end>'": "the end of the file"}.get(shown, shown)
            return mark, say.replace("{found}", shown.replace("<", "").replace(">", ""))
    why = f"{context}: {problem}" if context else problem
    return exc.problem_mark or exc.context_mark, " ".join(why.split())


SCHEMA_VERSION = 1  # the `schema:` every solution file (GEMM or attention) declares


class Reader:
    """Turns composed nodes into checked Python values; every failure names file, line and key."""

    def __init__(self, source: str, loader: yaml.SafeLoader, lines: int = 1 << 30):
        self.source = source
        self.loader = loader
        self.lines = lines

    def fail(self, at, key: str, why: str) -> NoReturn:
        line = at if isinstance(at, int) else node_line(at)
        line = min(max(line, 1), self.lines)
        shown = short(key, 80) if _PLAIN_KEY.fullmatch(key) else repr(short(key, 80))
        raise SchemaError(f"{self.source}:{line}: {one_line(shown)}: {one_line(why)}")

    def scalar(self, node, key: str):
        try:
            return self.loader.construct_object(node, deep=True)
        except yaml.constructor.ConstructorError as exc:
            problem = str(exc.problem)
            if "could not determine a constructor" in problem:
                self.fail(node, key, f"unknown tag {short(node.tag)}")
            self.fail(node, key, problem)
        except (ValueError, TypeError, KeyError, AttributeError, OverflowError):
            tag = node.tag.replace("tag:yaml.org,2002:", "!!")
            self.fail(node, key, f"{short(repr(node.value))} is not a valid {tag} value")

    def describe(self, node, key: str) -> str:
        if not isinstance(node, yaml.ScalarNode):
            return "a mapping" if isinstance(node, yaml.MappingNode) else "a list"
        value = self.scalar(node, key)
        if value is None or isinstance(value, str):
            return "null" if value is None else f"str {short(repr(value))}"
        return f"{type(value).__name__} {short(node.value)}"

    def top(self, doc, keys, required, expected: str) -> dict:
        """A solution file's top-level mapping: not empty (`expected` says what it holds), `schema:` this kiln's
        SCHEMA_VERSION, no key outside `keys`, every one of `required` present."""
        if doc is None:
            self.fail(1, "document", f"empty; expected a mapping with {expected}")
        top = self.mapping(doc, "document")
        if "schema" not in top:
            self.fail(doc, "schema", f"required key missing; this kiln reads schema: {SCHEMA_VERSION}")
        version = top["schema"][1]
        if self.int_(version, "schema") != SCHEMA_VERSION:
            self.fail(version, "schema", f"{version.value} is not supported; this kiln reads {SCHEMA_VERSION}")
        for name, (key_node, _value) in top.items():
            if name not in keys:
                self.fail(key_node, name, f"unknown key; {hint(name, keys)}")
        self.require(top, doc, required)
        return top

    def mapping(self, node, key: str, known=None, what: str = "key", prefix: str = "") -> dict:
        """{key: (key node, value node)} in YAML order; keys are strings, unique and (when known is given) known."""
        if not isinstance(node, yaml.MappingNode):
            self.fail(node, key, f"expected a mapping, got {self.describe(node, key)}")
        out = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                self.fail(key_node, key, "merge keys (<<) are not supported; use defaults or a fork's with")
            name = self.scalar(key_node, key) if isinstance(key_node, yaml.ScalarNode) else None
            if not isinstance(name, str):
                self.fail(key_node, key, f"keys must be strings, got {self.describe(key_node, key)}")
            label = f"{prefix}.{name}" if prefix else name
            if name in out:
                self.fail(key_node, label, f"duplicate key (first at line {node_line(out[name][0])})")
            if known is not None and name not in known:
                self.fail(key_node, label, f"unknown {what}; {hint(name, known)}")
            out[name] = (key_node, value_node)
        return out

    def once(self, seen: dict, value, node, key: str, shown: str) -> None:
        """Note where value was first given; a repeat is an error."""
        if value in seen:
            self.fail(node, key, f"{shown} listed twice (first at line {seen[value]})")
        seen[value] = node_line(node)

    def require(self, items: dict, node, names, prefix: str = "") -> None:
        for name in names:
            if name not in items:
                self.fail(node, f"{prefix}.{name}" if prefix else name, "required key missing")

    def seq(self, node, key: str) -> list:
        if not isinstance(node, yaml.SequenceNode):
            self.fail(node, key, f"expected a list, got {self.describe(node, key)}")
        return list(node.value)

    def one_or_more(self, node, key: str) -> list:
        """A scalar or a non-empty list of scalars, as a list of nodes."""
        nodes = list(node.value) if isinstance(node, yaml.SequenceNode) else [node]
        if not nodes:
            self.fail(node, key, "empty list")
        return nodes

    def int_(self, node, key: str) -> int:
        """An int written in decimal that fits a C int (int32)."""
        if isinstance(node, yaml.ScalarNode) and node.tag == _INT_TAG:
            text = node.value
            if not _DECIMAL.fullmatch(text):
                self.fail(node, key, f"write ints in decimal, got {short(text)}")
            if len(text) > 12 or not INT_MIN <= int(text) <= INT_MAX:
                self.fail(node, key, f"{short(text)} does not fit a 32-bit int (at most {INT_MAX})")
            return int(text)
        self.fail(node, key, f"expected an int, got {self.describe(node, key)}")

    def ints(self, node, key: str, count: int) -> tuple:
        if not isinstance(node, yaml.SequenceNode):
            self.fail(node, key, f"expected a list of {count} ints, got {self.describe(node, key)}")
        if len(node.value) != count:
            self.fail(node, key, f"expected a list of {count} ints, got {plural(len(node.value), 'item')}")
        return tuple(self.int_(item, key) for item in node.value)

    def choice(self, node, key: str, known, what: str) -> str:
        value = self.scalar(node, key) if isinstance(node, yaml.ScalarNode) else None
        if not isinstance(value, str):
            self.fail(node, key, f"expected a {what} name, got {self.describe(node, key)}")
        if value not in known:
            self.fail(node, key, f"unknown {what} {short(repr(value))}; {hint(value, known)}")
        return value

    def enum(self, node, key: str, cls, what: str):
        return cls(self.choice(node, key, [member.value for member in cls], what))

    def index(self, node, key: str, count: int) -> int:
        value = self.int_(node, key)
        if not 0 <= value < count:
            have = "1 solution (index 0)" if count == 1 else f"{count} solutions (indices 0..{count - 1})"
            self.fail(node, key, f"{value} is out of range; the file expands to {have}")
        return value


@contextmanager
def document(path, source: str, reader=Reader):
    """Yields (reader, root node or None) for the file at path; errors name `source`."""
    data = Path(path).read_bytes()
    if len(data) > MAX_FILE_BYTES:
        raise SchemaError(f"{source}:1: yaml: {len(data)} bytes; a solution file has at most {MAX_FILE_BYTES}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise SchemaError(f"{source}:{line}: yaml: not UTF-8 text") from None
    lines = line_count(text)
    loader = None
    try:
        try:
            loader = _Loader(text)
            root = loader.get_single_node()
        except yaml.MarkedYAMLError as exc:
            mark, why = _plain(exc)
            line = min(mark_line(mark), lines) if mark else 1
            raise SchemaError(f"{source}:{line}: yaml: {one_line(why)}") from None
        except yaml.reader.ReaderError as exc:
            line = text.count("\n", 0, exc.position) + 1
            code = exc.character if isinstance(exc.character, int) else ord(exc.character)
            raise SchemaError(f"{source}:{line}: yaml: special character U+{code:04X} is not allowed") from None
        yield reader(source, loader, lines), root
    finally:
        if loader is not None:
            loader.dispose()
