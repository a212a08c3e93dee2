"""The memory model: a Markdown file with optional YAML frontmatter.

Pure functions of bytes. ``parse`` never raises on bad input: malformed YAML,
an unclosed fence or undecodable bytes come back as :class:`Problem` records
with the raw bytes kept, so a caller can still index the body and report the
file. ``render`` of an untouched memory returns the original bytes exactly;
an edited one is re-serialised with the original newline style and BOM.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from memoryd.errors import MemorydError
from memoryd.frontmatter import load_flat, load_lines, load_simple, pyyaml_load
from memoryd.yamlproblem import duplicate_keys, yaml_problem

BOM = b"\xef\xbb\xbf"
ENCODING = "encoding"  # the problem code of a file that is not valid UTF-8
# What Windows PowerShell's '>' (and Notepad's 'Unicode') write: UTF-16 after its byte order
# mark. Every other byte is a NUL, which made such a memory 'a binary file, not Markdown'.
UTF16 = (
    "is UTF-16 text (as Windows PowerShell's > writes it): memoryd reads it, but edits only "
    "UTF-8 files"
)
_UTF16_BOMS = {b"\xff\xfe": "utf-16-le", b"\xfe\xff": "utf-16-be"}
DUPLICATE = "duplicate"  # the problem code of a key written twice: duplicate.<key>
FENCE = "---"
_OPENING = FENCE + "\n"  # the first line of a frontmatter
# Anything below this many "epoch milliseconds" is before March 1973: seconds.
MIN_EPOCH_MS = 100_000_000_000
# The kinds memoryd knows and the folder each one's memories are kept in; any other
# lowercase word is a kind too, kept in a folder of its own name (memoryd remember).
KIND_FOLDERS = {
    "rule": "rules",
    "rule-proposal": "proposals",  # not rules/: nothing there may read as an iron rule
    "preference": "preferences",
    "decision": "decisions",
    "pitfall": "pitfalls",
    "fact": "facts",
}
KIND_OF_FOLDER = {folder: kind for kind, folder in KIND_FOLDERS.items()}
# The frontmatter keys memoryd reads, and how people also spell them ('Summary',
# 'load-when', 'LoadWhen'): a key so spelled is an unknown field, kept but never read,
# so validate() names the key memoryd reads instead.
FIELDS = frozenset(
    {"id", "kind", "summary", "highlight", "created", "updated", "load_when", "pinned",
     "supersedes", "superseded_by", "sync", "status", "author", "device", "session", "agent",
     "accepted_by", "accepted"}
)  # fmt: skip
SPELLING = "spelling"  # the problem code of a field spelled another way: spelling.<key>

# yaml is imported where a frontmatter is read or written: 10 ms that a recall
# reading no file (and a daemon's CLI) does without.


@dataclass(frozen=True)
class Problem:
    """Something wrong with one memory, phrased for the user."""

    code: str
    message: str


@dataclass(frozen=True)
class _Source:
    """A memory file's bytes and its parsed frontmatter."""

    raw: bytes
    meta: dict[Any, Any]
    body: str
    newline: str
    bom: bool


@dataclass(frozen=True)
class Memory:
    """One memory file. ``meta`` is the frontmatter mapping (empty when none)."""

    meta: dict[Any, Any] = field(default_factory=dict)
    body: str = ""
    problems: tuple[Problem, ...] = ()
    newline: str = "\n"
    bom: bool = False
    source: _Source | None = field(default=None, compare=False, repr=False)

    # -- typed, lenient accessors: a wrong type reads as "absent"; validate() reports it
    def text(self, name: str) -> str | None:
        value = self.meta.get(name)
        return value if isinstance(value, str) else None

    def integer(self, name: str) -> int | None:
        value = self.meta.get(name)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    def strings(self, name: str) -> tuple[str, ...]:
        value = self.meta.get(name)
        if isinstance(value, str):
            return (value,)
        if isinstance(value, list):
            if all(type(v) is str for v in value):
                return tuple(value)  # the usual list: no conversion to make
            return tuple(str(v) for v in value if isinstance(v, str | int | float))
        return ()

    @property
    def id(self) -> str | None:
        return self.text("id")

    @property
    def kind(self) -> str | None:
        return self.text("kind")

    @property
    def summary(self) -> str | None:
        return self.text("summary")

    @property
    def highlight(self) -> str | None:
        return self.text("highlight")

    @property
    def created(self) -> int | None:
        return epoch_ms(self.meta.get("created"))

    @property
    def updated(self) -> int | None:
        return epoch_ms(self.meta.get("updated"))

    @property
    def load_when(self) -> tuple[str, ...]:
        return self.strings("load_when")

    @property
    def pinned(self) -> bool:
        return self.meta.get("pinned") is True

    @property
    def supersedes(self) -> tuple[str, ...]:
        return self.strings("supersedes")

    @property
    def superseded_by(self) -> str | None:
        return self.text("superseded_by")

    @property
    def sync(self) -> bool:
        return self.meta.get("sync") is not False

    @property
    def malformed(self) -> bool:
        return any(p.code.startswith("frontmatter.") for p in self.problems)

    def with_fields(self, **changes: Any) -> Memory:
        """A copy with frontmatter fields set (``None`` removes a field)."""
        meta = dict(self.meta)
        for key, value in changes.items():
            if value is None:
                meta.pop(key, None)
            else:
                meta[key] = value
        return replace(self, meta=meta)

    def with_body(self, body: str) -> Memory:
        return replace(self, body=body)


def parse(raw: bytes, *, keep_source: bool = True) -> Memory:
    """Parse a memory file. Never raises; problems are recorded on the result.

    ``keep_source=False`` (the index, which never renders what it reads) keeps neither the
    bytes nor a copy of the frontmatter for :func:`render` to compare against.
    """
    problems: list[Problem] = []
    bom = raw.startswith(BOM)
    payload = raw[len(BOM) :] if bom else raw
    codec = utf16_codec(raw)
    if codec is not None:  # read, as the secret scan reads it; render() refuses to rewrite it
        text = raw[2:].decode(codec, errors="replace")
        problems.append(Problem(ENCODING, UTF16))
    else:
        try:
            text = payload.decode("utf-8")
        except UnicodeDecodeError:
            text = payload.decode("utf-8", errors="replace")
            problems.append(Problem(ENCODING, "not valid UTF-8; read with replacement characters"))
    first_end = text.find("\n")
    first_line = text if first_end < 0 else text[:first_end]
    newline = "\r\n" if first_line.endswith("\r") else "\n"
    meta, body, fm_problems = _split(text)
    problems.extend(fm_problems)
    source = _Source(raw, _copy(meta), body, newline, bom) if keep_source else None
    return Memory(meta, body, tuple(problems), newline, bom, source)


# Where str.splitlines() ends a line besides "\n". A text with none of them (nearly every
# file) is split with str.find instead of a list of its lines (_split_lines).
_OTHER_BREAKS = ("\r", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")


def is_fence(line: str, marks: tuple[str, ...] = (FENCE,)) -> bool:
    """Is ``line`` (with its line break or without) a fence: one of ``marks`` with nothing
    after it but spaces and tabs? Editors leave those, and Jekyll and python-frontmatter
    read such a line as a fence: an exact match made a person's whole frontmatter body."""
    return line.rstrip("\r\n").rstrip(" \t") in marks


CLOSING = (FENCE, "...")


def _split(text: str) -> tuple[dict[Any, Any], str, list[Problem]]:
    """The frontmatter mapping, the body and the frontmatter's problems.

    Only the text up to the closing fence that ``str.find`` sees is searched for the
    other line breaks: beyond it they change nothing (the body is the rest of the text,
    line by line or not), and a body is most of a file. A frontmatter that
    :func:`~memoryd.frontmatter.load_flat` reads has none (they are not printable), and
    the fences around it are plain: it needs no search. A first line that is not exactly
    ``---`` (spaces after it, a CR) is read line by line: it is rare.
    """
    if not text.startswith(FENCE):
        return {}, text, []  # no first line of "---", however lines end
    if not text.startswith(_OPENING):
        return _split_lines(text)
    end = _closing_fence(text)
    after = -1 if end < 0 else _line_end(text, end + 4)
    if end >= 0 and (after == end + 5 or after == end + 4):  # '---' and a line break or EOF
        flat = load_flat(text[4 : end + 1])
        if flat is not None:
            return flat, text[after:], []
    head = text if end < 0 else text[:after]
    if end < 0 or any(mark in head for mark in _OTHER_BREAKS):
        return _split_lines(text)
    meta, problems = _load_yaml(text[4 : end + 1], load_lines)  # load_flat said no above
    return meta, text[after:], problems


def _line_end(text: str, start: int) -> int:
    """Where the line holding ``start`` ends: after its "\\n", or the end of the text."""
    at = text.find("\n", start)
    return len(text) if at < 0 else at + 1


def _closing_fence(text: str) -> int:
    """Where the line break before the first ``---`` or ``...`` line after the first is
    (a ``...`` line is looked for only before the ``---`` one: not through the body)."""
    dashes = _fence_line(text, "\n---", len(text))
    dots = _fence_line(text, "\n...", dashes + 3 if dashes >= 0 else len(text))
    return dots if dots >= 0 else dashes


def _fence_line(text: str, fence: str, limit: int) -> int:
    """The first ``fence`` (a line break and three marks) that is a whole line, but for
    spaces and tabs after it, wholly before ``limit``, or -1."""
    at = text.find(fence, 3, limit)
    while at >= 0 and at + 4 < len(text) and text[at + 4] != "\n":
        if text[at + 4] in " \t" and not text[at + 4 : _line_end(text, at + 4)].strip(" \t\n"):
            return at
        at = text.find(fence, at + 1, limit)
    return at


def _split_lines(text: str) -> tuple[dict[Any, Any], str, list[Problem]]:
    """:func:`_split` for any text: line by line, as str.splitlines() ends lines."""
    lines = text.splitlines(keepends=True)
    if not lines or not is_fence(lines[0]) or not lines[0].endswith("\n"):
        return {}, text, []
    for number, line in enumerate(lines[1:], start=1):
        if is_fence(line, CLOSING):
            yaml_text = "".join(lines[1:number])
            body = "".join(lines[number + 1 :])
            meta, problems = _load_yaml(yaml_text)
            return meta, body, problems
    return {}, text, [Problem("frontmatter.unclosed", "frontmatter has no closing '---' line")]


def _copy(meta: dict[Any, Any]) -> dict[Any, Any]:
    """A deep copy (``render`` compares against it), cheap for the usual flat mapping."""
    if all(type(v) in _ATOMS or (type(v) is list and _atoms(v)) for v in meta.values()):
        return {k: list(v) if type(v) is list else v for k, v in meta.items()}
    return copy.deepcopy(meta)


_ATOMS = frozenset({str, int, bool, float, type(None)})


def _atoms(values: list[Any]) -> bool:
    return all(type(v) in _ATOMS for v in values)


def _load_yaml(
    yaml_text: str, simple_reader: Callable[[str], dict[str, Any] | None] = load_simple
) -> tuple[dict[Any, Any], list[Problem]]:
    """The frontmatter's mapping and problems: ``simple_reader`` (the usual shapes, read
    without PyYAML's constructors) first, PyYAML for the rest."""
    simple = simple_reader(yaml_text)
    if simple is not None:
        return simple, []
    import yaml

    try:
        loaded = pyyaml_load(yaml_text)  # safe; an impossible date stays text
    except yaml.YAMLError as exc:
        return {}, [Problem("frontmatter.yaml", yaml_problem(exc, yaml_text))]
    except ValueError as exc:  # a value YAML recognises but cannot build (a date cannot)
        return {}, [Problem("frontmatter.yaml", f"malformed YAML: {exc}")]
    if loaded is None:
        return {}, []
    if not isinstance(loaded, dict):
        kind = type(loaded).__name__
        return {}, [Problem("frontmatter.shape", f"frontmatter is a {kind}, not a mapping")]
    duplicates = duplicate_keys(yaml_text)  # the fast readers decline a repeated key
    return loaded, [Problem(f"{DUPLICATE}.{key}", text) for key, text in duplicates]


def render(memory: Memory) -> bytes:
    """Serialise a memory. Untouched memories come back byte for byte."""
    src = memory.source
    if (
        src is not None
        and memory.meta == src.meta
        and memory.body == src.body
        and memory.newline == src.newline
        and memory.bom == src.bom
    ):
        return src.raw
    if memory.malformed and src is not None and memory.meta != src.meta:
        raise MemorydError(
            "cannot rewrite a memory whose frontmatter is malformed",
            hint="fix the YAML between the '---' lines by hand first (memoryd inspect shows where)",
        )
    if src is not None and any(p.message == UTF16 for p in memory.problems):
        raise MemorydError(
            "cannot rewrite a memory that is UTF-16 text: memoryd writes only UTF-8",
            hint="save it as UTF-8 first (iconv -f UTF-16 -t UTF-8)",
        )
    if src is not None and any(p.code == ENCODING for p in memory.problems):
        raise MemorydError(  # its text was read with replacement characters
            "cannot rewrite a memory that is not valid UTF-8: its other bytes would be lost",
            hint="save the file as UTF-8 first (e.g. iconv -f latin1 -t utf-8)",
        )
    text = memory.body
    # An empty frontmatter keeps a body that starts with '---' from reading as one.
    if memory.meta or is_fence(text.split("\n", 1)[0]):
        dumped = _dump(memory.meta) if memory.meta else ""
        front = f"{FENCE}\n{dumped}{FENCE}\n"
        if memory.newline != "\n":
            front = front.replace("\n", memory.newline)
        text = front + text
    data = text.encode("utf-8")
    return BOM + data if memory.bom else data


def _dump(meta: dict[Any, Any]) -> str:
    import yaml

    dumper: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump(
        meta,
        Dumper=dumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=10_000,
    )


BINARY = "binary file"  # Scanned.error of a memory-named file that is not text
NOT_REGULAR = "not a regular file"  # why a FIFO or device named like a memory is never read
_BINARY_SNIFF = 8000  # git's heuristic: a NUL byte in the first 8000 bytes means binary


def looks_binary(raw: bytes) -> bool:
    """Is this file's content binary (an image or archive named ``*.md``), not text?"""
    return b"\0" in raw[:_BINARY_SNIFF] and utf16_codec(raw) is None


def utf16_codec(raw: bytes) -> str | None:
    """The codec of UTF-16 text after its byte order mark (not UTF-32's), or None."""
    codec = _UTF16_BOMS.get(raw[:2])
    return None if codec is None or raw.startswith(b"\xff\xfe\0\0") else codec


def new_memory(meta: Mapping[str, Any], body: str) -> Memory:
    """A memory that has no file yet. ``body`` gets a trailing newline."""
    if body and not body.endswith("\n"):
        body += "\n"
    return Memory(meta=dict(meta), body=body)


CONTROL_CODES = (*range(0x20), 0x7F)  # C0 and DEL: what breaks a line of a name
_CONTROLS = {c: f"\\x{c:02x}" for c in CONTROL_CODES}


def shown_name(text: str) -> str:
    """A file name or an id as one line of valid UTF-8: a control character (a newline, a
    tab) as ``\\x0a``, a byte of a name that is not UTF-8 as ``\\xe9``.

    A name is the one text of a memory that no frontmatter rule flattens, and a file
    name may hold a newline: written raw into ROOT.md, index.md or a commit message it
    would break its line, and a marker on the next could end a compiled block.
    """
    if text.isprintable():  # nearly every name (a C check): no control, no lone surrogate
        return text
    return printable(escape_controls(text))


def escape_controls(text: str) -> str:
    """``text`` with each control character as ``\\x0a`` (the rest as it is)."""
    return text.translate(_CONTROLS)


def printable(text: str) -> str:
    """``text`` with the bytes of a non-UTF-8 file name shown as ``\\xe9`` (valid UTF-8)."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def id_for_path(relative: str) -> str:
    """The plugin-layout id of a file: its root-relative POSIX path without ``.md``."""
    return relative[:-3] if relative.endswith(".md") else relative


def epoch_ms(value: Any) -> int | None:
    """Epoch milliseconds from what ``created``/``updated`` hold: an integer (memoryd writes
    those), or an ISO 8601 date or date-time as people write them (``2024-03-05``,
    ``2024-03-05T10:00:00Z``; YAML reads unquoted ones as dates). A time without a zone
    is UTC. None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    import datetime as dt  # only for the dates people write

    if isinstance(value, str):
        try:
            value = dt.datetime.fromisoformat(value.strip())
        except ValueError:
            return None
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        value = dt.datetime(value.year, value.month, value.day)
    if not isinstance(value, dt.datetime):
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    return int(value.timestamp() * 1000)
