"""`memoryd mcp`: the agent tools over the Model Context Protocol (stdio).

Five tools, named ``memory_*`` on purpose: a generic name such as ``write``,
``read`` or ``status`` shadows the harness's own tool of that name (one
session lost the ability to create files that way). The descriptions teach
the model how to search: one to three rare words, a hit is authoritative, and
on zero results retry with fewer, rarer words before concluding anything.

Calls from here are agent calls: an iron rule becomes a rule-proposal, and an
iron rule is neither superseded nor forgotten. Needs the official ``mcp`` SDK (and the
pydantic it brings), which the default install carries; a broken environment without them
gets one line naming the install command, never a traceback.

What a client relies on beyond the tools: the server's version, titles, annotations
(``readOnlyHint`` on recall, inspect and context, ``destructiveHint`` on forget,
``idempotentHint`` where calling twice changes nothing more), arguments checked
strictly before the SDK's lax validator sees them (:mod:`memoryd.agent.mcp_args`),
one resource per root, its ROOT.md, served as advertised, and two prompts
(``memory-recall``, ``memory-remember``: Claude Code offers them as slash commands).

Each tool's answer is its text and, beside it, ``structuredContent`` as its
``outputSchema`` says. The structure holds the same text first (``text``): Claude Code
hands the model ``structuredContent`` alone when a tool gives both, so the text the
tools were written for must be in it, and the rest (ids, paths, scores) is short.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from memoryd import __version__, locate, workdir
from memoryd.agent import citing, context, forget, mcp_args, remember, upkeep
from memoryd.app import App
from memoryd.errors import MemorydError, UsageError
from memoryd.index.hitview import provenance
from memoryd.injection import cut_body
from memoryd.inspection import INSPECT_CHARS, inspect_text

if TYPE_CHECKING:
    from memoryd.index.search import Hit

try:  # pydantic too: a missing one was an internal error ("please report it")
    from mcp.server.mcpserver import MCPServer
    from mcp.types import CallToolResult, TextContent, ToolAnnotations
    from pydantic import BaseModel, Field
except ImportError as exc:
    import shlex
    import sys

    missing = (exc.name or "mcp").partition(".")[0]
    raise MemorydError(
        f"the MCP server needs the official mcp SDK, which is not installed (no {missing})",
        hint=f"{shlex.quote(sys.executable)} -m pip install 'mcp>=2,<3' (memoryd's own "
        "Python), or reinstall memoryd: pipx reinstall memoryd",
    ) from exc

log = logging.getLogger(__name__)

NAME = "memoryd"
Scope = Literal["global", "team", "project"]

INSTRUCTIONS = """\
Long-term memory shared across sessions: plain Markdown files (a global root and this project's
.memory/ root). Before answering about this project's conventions, past decisions, pitfalls or the
user's preferences, search with memory_recall using one to three rare words. Save what stays true
and is not visible in the code with memory_remember; never store secrets or task state."""

RECALL = """\
Search long-term memory (the user's preferences, this project's decisions, pitfalls, facts).
How to search well:
- Use one to three rare, specific words: a library name, an error word, a component, a Chinese
  term such as 部署 or 分词. Leave out common words like config, params, database, issue, fix.
- A hit is authoritative: it is what was recorded; prefer it over guessing.
- Zero results do not prove nothing was recorded: retry with fewer, rarer words (or a synonym,
  or the other language), then widen with scope.
Each result has the id, scope, kind, summary, the matched terms with hit counts, and the body;
a file of another agent's layout (layered, claude) shows its type and scope_id instead of a kind,
and the type and scope_id filters narrow to them."""

REMEMBER = """\
Save one durable memory: a preference, an architecture decision with its reason, a non-obvious
pitfall with its root cause, a project fact. Not for things visible in the code, current task
state, branch names or one-off chat. Never include secrets (a memory with a credential is
refused). kind 'rule' (an iron rule) is saved as a 'rule-proposal' that a person must accept.
A memory already said by an existing one is refused naming it: supersede it instead
(supersedes=<its id>) or set force=true only when it really is different."""

FORGET = """\
Delete one memory by id (as memory_recall or memory_inspect shows it). Links other memories
had to it are cleared. Iron rules can only be removed by a person."""

INSPECT = """\
List every memory (id, kind, scope, summary) and run the consistency self-check (stale compiled
files, broken supersedes links, malformed frontmatter). Use it to find ids, to see rule-proposals
waiting for a person, and when recall results look wrong."""

CONTEXT = """\
The memory block for a prompt: iron rules, the outline of what memory exists (with routing
triggers), and the bodies of the best matches for the query. Use it at the start of a task when
the harness has not injected it already. After the context was rebuilt or compacted, call it with
rebuild=true and the session id: it returns the session checkpoint, the project's durable
knowledge, the session notes, the global memory and an index of memory files, each within its
token budget."""


RECALL_PROMPT = """\
Look up what memoryd's long-term memory holds about: {topic}

Call memory_recall with one to three rare words from it; when nothing matches, retry with fewer,
rarer words, a synonym or the other language before concluding nothing was recorded. Answer from
what the hits say and name the memory ids you relied on."""

REMEMBER_PROMPT = """\
Save to memoryd's long-term memory: {what}

Call memory_remember once per thing worth keeping: the kind (preference, decision, pitfall, fact;
a rule only as a proposal), a one-line summary, the details and the reason in the body, and
load_when trigger words. Leave out secrets, the current task's state and what the code shows."""

REMEMBER_DEFAULT = "what this conversation settled that will stay true"


class Tools:
    """The tool bodies, one lock around them: each call runs to completion alone."""

    def __init__(self, app: App, main: Path | None) -> None:
        self.app = app
        self.lock = threading.Lock()
        # the main work tree of the linked worktree the server started in: the project it
        # serves after that worktree is removed under the session (see memoryd.workdir)
        self.main = main

    def call(self, work: Callable[[], Structured]) -> CallToolResult:
        """Run one tool body; a refusal reaches the model as an error with the CLI's text
        (and no structure).

        When the project cannot be told (its folder is gone), every answer starts by saying
        so: the model would take the global memory alone for all there is."""
        with self.lock:
            try:
                self.app.reload_config()
                lost = workdir.settle(self.app, known=self.main)
                text, data = work()
                if lost is not None:
                    text = f"memoryd: {lost.message}; hint: {lost.hint}\n\n{text}"
            except MemorydError as exc:
                said = TextContent(type="text", text=str(exc))
                return CallToolResult(content=[said], is_error=True)
        return CallToolResult(
            content=[TextContent(type="text", text=text)], structured_content={"text": text, **data}
        )

    def recall(
        self, query: str, limit: int, *, kind: str | None, scope: Scope | None,
        type: str | None, scope_id: str | None, everywhere: bool = False,
    ) -> Structured:  # fmt: skip
        roots = locate.active_roots(self.app.config, self.app.cwd)
        hits = upkeep.search(
            self.app, roots, query, limit=limit, kind=kind, scope=scope, type=type,
            scope_id=scope_id, everywhere=everywhere,
        )  # fmt: skip
        cap = self.app.config.search.max_file_bytes
        checker = citing.Checker(self.app.cwd)
        listed = [
            {"id": h.id, "scope": h.scope, "kind": h.kind, "summary": h.summary,
             "score": float(f"{h.score:.6g}"), "path": str(h.path),
             "stale": citing.stale_reasons(checker.of_file(h.path)),
             **({"provenance": found} if (found := provenance(h)[0]) else {})}
            for h in hits
        ]  # fmt: skip
        return format_hits(query, hits, checker, cap), {"query": query, "hits": listed}

    def remember(self, request: remember.Request) -> Structured:
        outcome = remember.remember(self.app, request)
        lines = [f"Saved {outcome.id} ({outcome.scope} memory, kind {outcome.kind})."]
        if outcome.proposed:
            lines.append(
                "It is proposed to the team: only this device recalls it until a person "
                f"accepts it (memoryd accept {outcome.id})."
            )
        if outcome.supersedes:
            lines.append(f"It supersedes {outcome.supersedes}, which leaves recall.")
        if outcome.downgraded:
            lines.append(
                "Iron rules are written only by people: it was saved as a rule-proposal; "
                f"ask the user to run 'memoryd accept {outcome.id}' if it should be a rule."
            )
        lines += [f"ROOT.md was not updated (tell the user): {w}" for w in outcome.warnings]
        data = outcome.as_dict()
        del data["root"]
        return "\n".join(lines), data

    def forget(self, memory_id: str, scope: Scope | None) -> Structured:
        gone = forget.forget(self.app, memory_id, scope=scope, agent=True)
        cleared = f" Cleared links in {', '.join(gone.unlinked)}." if gone.unlinked else ""
        if gone.left:
            cleared += (
                f" Left the links in {', '.join(gone.left)}: their frontmatter does not parse"
                " (tell the user; memoryd inspect says where)."
            )
        if gone.linked_from:
            cleared += f" Still linked from the text of {', '.join(gone.linked_from)}."
        for other in gone.current_again:
            cleared += (
                f" {other} is current again: it was superseded by {gone.id}, so recall returns"
                " it (tell the user if it is out of date)."
            )
        data = {"id": gone.id, "path": str(gone.path), "unlinked": list(gone.unlinked),
                "current_again": list(gone.current_again)}  # fmt: skip
        return f"Forgot {gone.id} ({gone.path}).{cleared}", data

    def inspect(self) -> Structured:
        return inspect_text(self.app), {}

    def context(
        self, query: str, rebuild: bool, session: str | None, project_id: str | None
    ) -> Structured:
        if not rebuild:
            block = context.gather(self.app, query)
            return block.text, {"entries": block.entries, "cut": block.cut}
        from memoryd.agent.rebuild import gather

        if not session:
            raise UsageError("rebuild needs the session id", hint="pass session=<the session id>")
        text = gather(self.app, session, project_id).text or "(nothing to rebuild from)"
        return text, {"entries": [], "cut": False}


def format_hits(query: str, hits: list[Hit], checker: citing.Checker, cap: int) -> str:
    if not hits:
        return (
            f"No memory matched {query!r}. Zero results do not prove nothing was recorded: "
            "retry with fewer, rarer words (one or two), a synonym, or the other language."
        )
    parts = []
    for hit in hits:
        matched = ", ".join(f"{term}×{count}" for term, count in sorted(hit.terms.items()))
        head = f"## {hit.id} ({describe(hit)}, score {hit.score:.2f}"
        stale = citing.stale_reasons(checker.of_file(hit.path))
        warning = "".join(f"\nMAY BE STALE, check before trusting: {reason}" for reason in stale)
        _, by = provenance(hit)
        warning = f"\nTeam memory, {by}{warning}" if by else warning
        parts.append((hit, (
            f"{head}, matched: {matched or '-'})\n{hit.summary or '(no summary)'}{warning}\n\n"
            f"{context.shown_body(hit, cap).strip()}"
        )))  # fmt: skip
    return within(parts, RECALL_CHARS)


# What memory_recall answers at most: Claude Code keeps a longer tool answer out of the
# model's context (above about 50,000 characters it saves it to a file and shows the model
# its first 2 KB, so five runbooks of 14 KB reached the model as the start of the first).
RECALL_CHARS = INSPECT_CHARS
RECALL_CUT = "[… cut at the {limit}-character answer limit: the whole memory is {path}]"
RECALL_LEFT_OUT = (
    "[… {count} more matching memor{y} left out at the {limit}-character answer limit: "
    "{ids}; recall one with rarer words, or read its file]"
)
_MIN_ROOM = 200  # less room than this for a hit: it is left out, not cut to its heading


def within(parts: list[tuple[Hit, str]], limit: int) -> str:
    """The hits' texts, best first, in at most ``limit`` characters: whole while they fit,
    then the first that does not cut at a line (with where the whole memory is), then the
    ids of those left out. Each hit kept leaves room for the notice of those after it."""
    kept: list[str] = []
    used = 0
    for index, (hit, text) in enumerate(parts):
        after = _left_out(parts[index + 1 :], limit)
        reserve = len(after) + 2 if after else 0
        gap = 2 if kept else 0
        if used + gap + len(text) + reserve <= limit:
            kept.append(text)
            used += gap + len(text)
            continue
        marker = RECALL_CUT.format(limit=limit, path=hit.path)
        room = limit - used - gap - len(marker) - 1 - reserve
        left = parts[index + 1 :]
        if room >= _MIN_ROOM:
            head, _ = cut_body(text, room)
            kept.append(f"{head}\n{marker}")
        else:  # no room worth cutting to: this one is left out too
            left = parts[index:]
        notice = _left_out(left, limit)
        return "\n\n".join([*kept, *([notice] if notice else [])])
    return "\n\n".join(kept)


def _left_out(parts: list[tuple[Hit, str]], limit: int) -> str:
    if not parts:
        return ""
    ids = ", ".join(hit.id for hit, _ in parts)
    count = len(parts)
    return RECALL_LEFT_OUT.format(count=count, y="y" if count == 1 else "ies", limit=limit, ids=ids)


def describe(hit: Hit) -> str:
    """``scope kind`` for a memoryd memory; layout, type and scope_id for another layout's file."""
    row = hit.row if hit.layout != "plugin" else None  # memoryd's own: no row made
    if row is None:
        return f"{hit.scope} {hit.kind or 'memory'}"
    where = f", scope_id {row.scope_id}" if row.scope_id else ""
    return f"{hit.scope} {row.layout} file, type {row.type or 'free'}{where}"


READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
WRITES = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
DELETES = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
)


class Answer(BaseModel):
    """Every tool's structured answer: its text, as the model should read it."""

    text: str


class RecallHit(BaseModel):
    id: str
    scope: str
    kind: str | None
    summary: str | None
    score: float
    path: str
    stale: list[str]


class RecallAnswer(Answer):
    query: str
    hits: list[RecallHit]


class RememberAnswer(Answer):
    id: str
    path: str
    scope: str
    kind: str
    downgraded: bool
    supersedes: str | None


class ForgetAnswer(Answer):
    id: str
    path: str
    unlinked: list[str]
    current_again: list[str]


class ContextAnswer(Answer):
    entries: list[dict[str, Any]]
    cut: bool


Structured = tuple[str, dict[str, Any]]  # a tool body's text and the rest of its structure


class StrictServer(MCPServer):
    """MCPServer whose tool calls are checked by :func:`mcp_args.check` first."""

    schemas: dict[str, dict[str, Any]] | None = None

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Any = None
    ) -> Any:  # fmt: skip
        if self.schemas is None:
            self.schemas = {t.name: t.input_schema for t in await self.list_tools()}
        schema = self.schemas.get(name)
        if schema is not None:
            try:
                arguments = mcp_args.check(name, schema, arguments)
            except MemorydError as exc:
                text = TextContent(type="text", text=str(exc))
                return CallToolResult(content=[text], is_error=True)
        return await super().call_tool(name, arguments, context)


def add_root_resources(server: Any, app: App) -> None:
    """Each root's ROOT.md as ``memoryd://<scope>/ROOT.md``, read when the client asks.

    A config.yaml that does not load leaves them out (said once, on stderr) rather than
    keeping the server from starting: the client would drop memoryd for the whole session,
    while every tool call reloads config.yaml and so says what is wrong until it is fixed.
    """
    try:
        roots = locate.active_roots(app.config, app.cwd)
    except MemorydError as exc:
        log.warning("serving no ROOT.md resources this session: %s", exc)
        return
    for root in roots:
        path = root.path / "ROOT.md"
        if not path.is_file():
            continue

        server.resource(
            f"memoryd://{root.scope}/ROOT.md", name=f"{root.scope} ROOT.md",
            description=f"the compiled overview of the {root.scope} memory root ({root.path})",
            mime_type="text/markdown",
        )(_reader(path))  # fmt: skip


def _reader(path: Path) -> Callable[[], str]:
    def read() -> str:
        return path.read_text(encoding="utf-8", errors="replace")

    return read


def build_server(app: App, main: Path | None = None) -> Any:
    """The MCP server with the five memory tools (no transport attached). ``main``: the main
    work tree of the linked worktree the server started in (see :class:`Tools`), read by the
    caller before the SDK was imported (a session may remove its worktree meanwhile)."""
    tools = Tools(app, main)
    server = StrictServer(NAME, instructions=INSTRUCTIONS, version=__version__)
    add_root_resources(server, app)

    @server.tool(
        name="memory_recall", title="Recall memories", description=RECALL, annotations=READ_ONLY,
        structured_output=True,
    )
    def memory_recall(  # noqa: PLR0917 - one parameter per schema property
        query: Annotated[str, Field(description="one to three rare words", min_length=1)],
        limit: Annotated[int, Field(description="at most this many results", ge=1, le=50)] = 5,
        kind: Annotated[
            str | None, Field(description="only this kind: rule, preference, decision, ...")
        ] = None,
        scope: Annotated[
            Scope | None, Field(description="only the global or only the project root")
        ] = None,
        type: Annotated[
            str | None,
            Field(
                description="layered and claude layouts only: only files of this type (memory, "
                "checkpoint, progress, notes, free; Claude Code's user, feedback, project, "
                "reference); leaves memoryd's own memories out"
            ),
        ] = None,
        scope_id: Annotated[
            str | None,
            Field(
                description="layered and claude layouts only: only this scope id (a project id, "
                "a session id, or a Claude Code project folder such as -home-me-app); leaves "
                "memoryd's own memories out"
            ),
        ] = None,
        everywhere: Annotated[
            bool,
            Field(
                description="layered and claude layouts only: search every project's and "
                "session's folders, not only this project's, this session's and the global ones"
            ),
        ] = False,
    ) -> Annotated[CallToolResult, RecallAnswer]:
        def work() -> Structured:
            return tools.recall(
                query, limit, kind=kind, scope=scope, type=type, scope_id=scope_id,
                everywhere=everywhere,
            )  # fmt: skip

        return tools.call(work)

    @server.tool(
        name="memory_remember", title="Remember a memory", description=REMEMBER, annotations=WRITES,
        structured_output=True,
    )
    def memory_remember(  # noqa: PLR0917 - one parameter per schema property
        kind: Annotated[
            str, Field(description="preference, decision, pitfall, fact, or rule (proposed)")
        ],
        summary: Annotated[str, Field(description="one line: what to remember", min_length=1)],
        body: Annotated[str, Field(description="details: context, reason, root cause")] = "",
        load_when: Annotated[
            list[str], Field(description="trigger words: when should this be loaded")
        ] = [],  # noqa: B006 - pydantic copies defaults
        highlight: Annotated[str | None, Field(description="the one striking detail")] = None,
        pinned: Annotated[bool, Field(description="never decays in ranking")] = False,
        supersedes: Annotated[
            str | None, Field(description="id of the memory this one replaces")
        ] = None,
        scope: Annotated[
            Scope | None,
            Field(
                description="global (all projects), project, or team (shared with your "
                "team once a person accepts it); default: project when open"
            ),
        ] = None,
        force: Annotated[bool, Field(description="write even when a duplicate exists")] = False,
        id: Annotated[
            str | None, Field(description="an explicit id (category/name); default: from summary")
        ] = None,
        cites: Annotated[
            list[str],
            Field(
                description="files of this project the memory describes, as PATH or "
                "PATH:FIRST-LAST from the project's top folder; memoryd fingerprints the cited "
                "text and marks the memory stale when that text changes"
            ),
        ] = [],  # noqa: B006 - pydantic copies defaults
    ) -> Annotated[CallToolResult, RememberAnswer]:
        request = remember.Request(
            kind=kind, summary=summary, body=body, load_when=tuple(load_when),
            highlight=highlight, pinned=pinned, supersedes=supersedes, scope=scope,
            force=force, agent=True, id=id, cites=tuple(cites),
        )  # fmt: skip
        return tools.call(lambda: tools.remember(request))

    @server.tool(
        name="memory_forget", title="Forget a memory", description=FORGET, annotations=DELETES,
        structured_output=True,
    )
    def memory_forget(
        id: Annotated[str, Field(description="the memory id, e.g. pitfalls/sqlite-cjk")],
        scope: Annotated[Scope | None, Field(description="when the id is in both roots")] = None,
    ) -> Annotated[CallToolResult, ForgetAnswer]:
        return tools.call(lambda: tools.forget(id, scope))

    @server.tool(
        name="memory_inspect", title="Inspect the memory", description=INSPECT,
        annotations=READ_ONLY, structured_output=True,
    )
    def memory_inspect() -> Annotated[CallToolResult, Answer]:
        return tools.call(tools.inspect)

    @server.tool(
        name="memory_context", title="The memory block for a task", description=CONTEXT,
        annotations=READ_ONLY, structured_output=True,
    )
    def memory_context(
        query: Annotated[str, Field(description="the task or prompt to match memories to")] = "",
        rebuild: Annotated[
            bool, Field(description="the rebuild sections of the layered tree instead")
        ] = False,
        session: Annotated[str | None, Field(description="with rebuild: the session id")] = None,
        project_id: Annotated[
            str | None, Field(description="with rebuild: the project id (default: this project's)")
        ] = None,
    ) -> Annotated[CallToolResult, ContextAnswer]:
        return tools.call(lambda: tools.context(query, rebuild, session, project_id))

    @server.prompt(
        name="memory-recall", title="Recall from memory",
        description="Look a topic up in long-term memory and answer from what it holds",
    )  # fmt: skip
    def recall_prompt(topic: Annotated[str, Field(description="what to look up")]) -> str:
        return RECALL_PROMPT.format(topic=topic)

    @server.prompt(
        name="memory-remember", title="Remember this",
        description="Save what stays true (a decision, a pitfall, a preference) to memory",
    )  # fmt: skip
    def remember_prompt(
        what: Annotated[str, Field(description="what to remember (default: what was settled)")]
        = "",
    ) -> str:
        return REMEMBER_PROMPT.format(what=what.strip() or REMEMBER_DEFAULT)

    return server


def serve(app: App, main: Path | None) -> None:
    """Run the server on stdin/stdout until the client closes it."""
    build_server(app, main).run("stdio")
