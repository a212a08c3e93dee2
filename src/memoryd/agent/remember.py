"""Writing a new memory: what `memoryd remember` and `memory_remember` do.

Every refusal happens before the first write, so a refused memory leaves no
trace: a secret, a duplicate of one existing memory, an id that exists, an
unknown or already replaced ``supersedes``. Iron rules are written only by
people: an agent's ``rule`` becomes a ``rule-proposal`` that a person accepts.
"""

from __future__ import annotations

import re
import time
import unicodedata
from collections.abc import Container, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memoryd import locate, safepath
from memoryd.agent import citing, gate, upkeep
from memoryd.agent.proposal import origin, provenance
from memoryd.app import App
from memoryd.config.sections import RootConfig
from memoryd.errors import (
    MemorydError,
    PathError,
    Refused,
    UsageError,
)
from memoryd.frontmatter_edit import edit_fields
from memoryd.fsutil import atomic_write
from memoryd.memory import KIND_FOLDERS, KIND_OF_FOLDER, Memory, new_memory, render
from memoryd.suggest import closest
from memoryd.team import is_proposed

if TYPE_CHECKING:
    pass

CATEGORY = KIND_FOLDERS
RULE, PROPOSAL = "rule", "rule-proposal"
SLUG_MAX = 60
_KIND_RE = re.compile(r"[a-z][a-z0-9-]{0,39}")


@dataclass(frozen=True)
class Request:
    kind: str
    summary: str
    body: str = ""
    id: str | None = None
    load_when: tuple[str, ...] = ()
    highlight: str | None = None
    pinned: bool = False
    supersedes: str | None = None
    scope: str | None = None
    force: bool = False
    agent: bool = False
    cites: tuple[str, ...] = ()  # PATH[:A-B] specs, fingerprinted when written
    session: str | None = None  # the agent's session, when the caller knows it
    client: str | None = None  # the agent's name as its MCP client says it
    extracted_from: str | None = None  # the transcript the extraction read it from


@dataclass(frozen=True)
class Outcome:
    id: str
    path: Path
    root: Path
    scope: str
    kind: str
    downgraded: bool
    supersedes: str | None
    warnings: tuple[str, ...] = ()  # saved, but ROOT.md could not be compiled: why, and the fix
    proposed: bool = False  # a team proposal: seen on this device only until a person accepts

    def as_dict(self) -> dict[str, Any]:
        data = {
            "id": self.id, "path": str(self.path), "root": str(self.root), "scope": self.scope,
            "kind": self.kind, "downgraded": self.downgraded, "supersedes": self.supersedes,
        }  # fmt: skip
        return {**data, "proposed": True} if self.proposed else data


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def category_for(kind: str) -> str:
    """rule→rules ... fact→facts; any other kind gets a folder of its own name."""
    return CATEGORY.get(kind, kind)


def agent_kind(kind: str, agent: bool) -> tuple[str, bool]:
    """The kind actually written, and whether an agent's iron rule was downgraded."""
    if agent and kind == RULE:
        return PROPOSAL, True
    return kind, False


def slugify(summary: str) -> str:
    """A file name from a summary's words: letters and digits of any script, Latin accents
    dropped (``café`` is ``cafe``), NFC so every file system spells it alike; a summary
    with no letter at all falls back to a stable hash. Chinese stays Chinese: an opaque
    ``m-6bea74be31`` said nothing, and a mixed summary lost its Chinese words."""
    kept, latin = [], False
    for char in unicodedata.normalize("NFKD", summary):
        if unicodedata.category(char) != "Mn":
            latin = char.isascii()
        if not (latin and unicodedata.category(char) == "Mn"):  # が keeps its dakuten
            kept.append(char)
    bare = "".join(kept)
    words = re.findall(r"[^\W_]+", unicodedata.normalize("NFC", bare).lower())
    slug = ""
    for word in words:
        candidate = f"{slug}-{word}" if slug else word[:SLUG_MAX]  # a long run of Chinese
        if len(candidate) > SLUG_MAX:
            break
        slug = candidate
    if slug:
        return slug
    import hashlib

    return "m-" + hashlib.sha1(summary.encode("utf-8")).hexdigest()[:10]


def unique_id(root: Path, category: str, slug: str, taken: Container[str] = ()) -> str:
    """``category/slug``, with ``-2``, ``-3``... when that file exists (or the id is in
    ``taken``: an import's ids not written yet)."""
    number = 1
    while True:
        name = slug if number == 1 else f"{slug}-{number}"
        memory_id = f"{category}/{name}"
        if memory_id not in taken and not (root / f"{memory_id}.md").exists():
            return memory_id
        number += 1


def check_request(request: Request) -> None:
    if not _KIND_RE.fullmatch(request.kind):
        raise UsageError(
            f"kind {request.kind!r} is not a lowercase word",
            hint="use rule, preference, decision, pitfall or fact (or another lowercase word)",
        )
    kind = KIND_OF_FOLDER.get(request.kind)
    if kind is not None:  # "rules" would land in rules/ and yet never be an iron rule
        raise UsageError(
            f"kind {request.kind!r} is the name of a folder, not a kind",
            hint=f"use kind {kind!r}: memories of kind {kind} are kept in {request.kind}/",
        )
    guess = (
        None
        if request.force or request.kind in KIND_FOLDERS
        else closest(request.kind, KIND_FOLDERS)
    )
    if guess is not None:  # "rul" would land in rul/ and never be an iron rule
        raise UsageError(
            f"kind {request.kind!r} is not one of memoryd's kinds: did you mean {guess!r}?",
            hint=f"use kind {guess!r}, or pass --force to start a kind of your own",
        )
    summary = request.summary.strip()
    if not summary or "\n" in summary:
        raise UsageError(
            "the summary must be one non-empty line",
            hint="put the details in the body; the summary is what lists and routing show",
        )
    _refuse_non_utf8(request)


def _refuse_non_utf8(request: Request) -> None:
    """Every text of the request is UTF-8 (a memory file is): a byte that is not arrives as
    a lone surrogate (``surrogateescape``, how Python reads argv and memoryd reads stdin)
    and would fail the write."""
    texts = {
        "the summary": request.summary, "the body": request.body, "the id": request.id or "",
        "the highlight": request.highlight or "", "a --load-when": "".join(request.load_when),
        "--supersedes": request.supersedes or "", "a --cite": "".join(request.cites),
    }  # fmt: skip
    for name, text in texts.items():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            byte = ord(text[exc.start]) - 0xDC00
            shown = f"byte 0x{byte:02x}" if 0x80 <= byte <= 0xFF else repr(text[exc.start])
            raise UsageError(
                f"{name} is not valid UTF-8 ({shown} at character {exc.start + 1})",
                hint="convert it to UTF-8 first, e.g. iconv -f latin1 -t utf-8 FILE | "
                "memoryd remember ... -",
            ) from None


def load_when_words(given: Sequence[str]) -> list[str]:
    """The triggers ``given``, each also split at commas (``部署,pnpm``: two triggers, as a
    comma-separated list reads; ASCII, full-width and ideographic commas alike)."""
    return [w.strip() for raw in given for w in _COMMAS.split(raw) if w.strip()]


_COMMAS = re.compile("[,\uff0c\u3001]")


def build_memory(
    request: Request, memory_id: str, kind: str, stamp: int, cites: list[str] | None = None
) -> Memory:
    meta: dict[str, Any] = {"id": memory_id, "kind": kind, "summary": request.summary.strip()}
    if request.highlight:
        meta["highlight"] = request.highlight.strip()
    meta["created"] = stamp
    meta["updated"] = stamp
    if request.load_when:
        meta["load_when"] = load_when_words(request.load_when)
    if request.pinned:
        meta["pinned"] = True
    if request.supersedes:
        meta["supersedes"] = request.supersedes
    if cites:
        meta["cites"] = cites
    return new_memory(meta, request.body.strip("\n"))


def remember(app: App, request: Request, stamp: int | None = None) -> Outcome:
    """Write one memory; refusals raise :class:`Refused` before anything is written."""
    check_request(request)
    root, roots = locate.write_target(app, request.scope)
    kind, downgraded = agent_kind(request.kind, request.agent)
    memory_id = _new_id(root, request, kind)
    if request.agent:
        _refuse_rules_folder(memory_id)
    try:  # an id refused for where it points is a bad --id like any other: exit 2
        path = safepath.inside(root.path, memory_id, ".md")
    except PathError as exc:
        raise UsageError(exc.message, hint=exc.hint) from None
    gate.refuse_unseen(root.path, memory_id, path)
    _refuse_existing(root, memory_id, path)
    old = _old_memory(root, request) if request.supersedes else None
    cites = citing.anchor(app, request.cites, root.scope)
    stamp = stamp or now_ms()
    memory = build_memory(request, memory_id, kind, stamp, cites)
    # where it came from; in a team root also who wrote it, and an agent's waits for a person
    fields: dict[str, Any] = (
        provenance(app, root, agent=request.agent, stamp=stamp, session=request.session,
                   client=request.client)
        if root.is_team
        else origin(app, agent=request.agent, session=request.session, client=request.client)
    )  # fmt: skip
    if request.extracted_from:
        fields["extracted_from"] = request.extracted_from
    memory = memory.with_fields(**fields)
    data = render(memory)
    gate.refuse_oversized(data, app.config.search.max_file_bytes)
    gate.refuse_secrets(root, path, data, agent=request.agent)
    if not request.force:
        gate.refuse_duplicate(app, roots, content_text(request), old)
    old_data = None if old is None else _superseded(old, memory_id)  # before any write
    atomic_write(path, data)
    changed = [path]
    if old is not None and old_data is not None:
        atomic_write(old.path, old_data)
        changed.append(old.path)
    warnings = tuple(upkeep.refresh_written(app, root, changed))
    proposed = is_proposed(memory.meta)
    return Outcome(
        memory_id, path, root.path, root.scope, kind, downgraded, request.supersedes, warnings,
        proposed,
    )  # fmt: skip


def _new_id(root: RootConfig, request: Request, kind: str) -> str:
    if request.id:
        raw = locate.normal_id(request.id)
        *folders, name = raw.replace("\\", "/").split("/")
        if name in ("", "."):  # pitfalls/, pitfalls/. or .
            folder = "/".join(f for f in folders if f not in ("", ".")) or category_for(kind)
            raise UsageError(
                f"refusing id {raw!r}: an id names a file, not a folder",
                hint=f"add the memory's name ({folder}/NAME), or leave the id out "
                "to name it from the summary",
            )
        spelled = _as_path_says(raw)
        return spelled if "/" in spelled else f"{category_for(kind)}/{spelled}"
    return unique_id(root.path, category_for(kind), slugify(request.summary))


def _as_path_says(memory_id: str) -> str:
    """The id spelled as the file's path gives it back (``a//b``, ``a/./b`` and ``a\\b`` are
    ``a/b``), so the frontmatter's id matches its path, as inspect checks. An absolute id or
    one with ``..`` stays as it is: the path guard refuses it in its own words."""
    parts = memory_id.replace("\\", "/").split("/")
    if memory_id.startswith(("/", "\\")) or ".." in parts:
        return memory_id
    return "/".join(part for part in parts if part not in ("", "."))


def content_text(request: Request) -> str:
    """What a memory says (not its bookkeeping): the text the duplicate check compares."""
    parts = [request.summary, request.highlight or "", *request.load_when, request.body]
    return "\n".join(part for part in parts if part)


def _refuse_rules_folder(memory_id: str) -> None:
    """An agent's memory never lands in rules/, which holds only the iron rules people wrote."""
    if memory_id.split("/", 1)[0].lower() == category_for(RULE):
        name = memory_id.split("/", 1)[-1]
        raise Refused(
            f"refusing to remember: {memory_id!r} is under rules/, and agents never write there "
            "(it holds the iron rules people wrote)",
            hint=f"leave the id out, or use proposals/{name}: a person can accept a proposal "
            "with memoryd accept",
        )


def _refuse_existing(root: RootConfig, memory_id: str, path: Path) -> None:
    if path.exists() or path.is_symlink():
        raise Refused(
            f"refusing to remember: a memory with id {memory_id!r} already exists ({path})",
            hint=f"pass --supersedes {memory_id} to replace it, or edit {path}",
        )


def _old_memory(root: RootConfig, request: Request) -> locate.Found:
    old_id = locate.normal_id(request.supersedes or "")
    found = locate.find_in(root, old_id)
    if found is None:
        raise Refused(
            f"refusing to remember: --supersedes {old_id!r} names no memory in {root.path}",
            hint="memoryd inspect lists the ids; the replaced memory must be in the same root "
            "(choose it with --scope)",
        )
    if found.memory.superseded_by:
        newer = found.memory.superseded_by
        raise Refused(
            f"refusing to remember: {old_id!r} is already superseded by {newer!r}",
            hint=f"supersede {newer} instead",
        )
    if request.agent and found.memory.pinned:
        raise Refused(
            f"refusing to remember: {old_id!r} is pinned, and a pinned memory is never "
            "replaced automatically",
            hint=f"save the new memory without supersedes, or ask the user to run "
            f"'memoryd remember --supersedes {old_id}'",
        )
    if request.agent and found.memory.kind == RULE:
        raise Refused(
            f"refusing to remember: {old_id!r} is an iron rule, and only a person changes those",
            hint="save a rule-proposal without supersedes; a person can accept it "
            "(memoryd accept ID) and retire the old rule",
        )
    return found


def _superseded(old: locate.Found, memory_id: str) -> bytes:
    """The replaced file's bytes with ``superseded_by:`` set, or a refusal naming it (its
    frontmatter does not parse, or it is not UTF-8): the new memory is not written then,
    where it was written and the command still failed, and a retry met a duplicate."""
    try:
        return edit_fields(old.memory, {"superseded_by": memory_id})
    except MemorydError as exc:
        raise Refused(
            f"refusing to remember: --supersedes {old.id!r}: memoryd {exc.message} ({old.path})",
            hint=exc.hint,
        ) from exc
