"""`memoryd mcp`: the agent tools over the Model Context Protocol (stdio).

Five tools, named ``memory_*`` on purpose: a generic name such as ``write``,
``read`` or ``status`` shadows the harness's own tool of that name (one
session lost the ability to create files that way). The descriptions teach
the model how to search: one to three rare words, a hit is authoritative, and
on zero results retry with fewer, rarer words before concluding anything
(:mod:`memoryd.agent.mcp_texts` holds them and the prompts' texts).

Calls from here are agent calls: an iron rule becomes a rule-proposal, and an
iron rule is neither superseded nor forgotten. Needs the official ``mcp`` SDK (and the
pydantic it brings), which the default install carries; a broken environment without them
gets one line naming the install command, never a traceback (the SDK is imported, guarded,
in :mod:`memoryd.agent.mcp_answers`, with the tools' annotations and answer models).

What a client relies on beyond the tools: the server's version, titles, annotations
(``readOnlyHint`` on recall, inspect and context, ``destructiveHint`` on forget,
``idempotentHint`` where calling twice changes nothing more), arguments checked
strictly before the SDK's lax validator sees them (:mod:`memoryd.agent.mcp_args`),
one resource per root, its ROOT.md, served as advertised, and two prompts
(``memory-recall``, ``memory-remember``: Claude Code offers them as slash commands).

Each tool's answer is its text and, beside it, ``structuredContent`` as its
``outputSchema`` says. The structure holds the same text first (``text``): Claude Code
hands the model ``structuredContent`` alone when a tool gives both, so the text the
tools were written for must be in it, and the rest (ids, paths, scores) is short. Recall's
text, cut to what Claude Code shows the model, is :mod:`memoryd.agent.recall_text`'s.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

from memoryd import __version__, locate, workdir
from memoryd.agent import citing, context, forget, mcp_args, remember, upkeep
from memoryd.agent.mcp_answers import (
    DELETES,
    READ_ONLY,
    WRITES,
    Answer,
    CallToolResult,
    ContextAnswer,
    Field,
    ForgetAnswer,
    MCPServer,
    RecallAnswer,
    RememberAnswer,
    Structured,
    TextContent,
)
from memoryd.agent.mcp_texts import (
    CONTEXT,
    FORGET,
    INSPECT,
    INSTRUCTIONS,
    RECALL,
    RECALL_PROMPT,
    REMEMBER,
    REMEMBER_DEFAULT,
    REMEMBER_PROMPT,
)
from memoryd.agent.recall_text import format_hits
from memoryd.app import App
from memoryd.errors import MemorydError, UsageError
from memoryd.index.hitview import provenance
from memoryd.inspection import inspect_text

log = logging.getLogger(__name__)

NAME = "memoryd"
Scope = Literal["global", "team", "project"]


class Tools:
    """The tool bodies, one lock around them: each call runs to completion alone."""

    def __init__(self, app: App, main: Path | None) -> None:
        self.app = app
        self.lock = threading.Lock()
        self.client: str | None = None  # what the client called itself (initialize's clientInfo)
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
        wanted = [root for root in roots if scope in (None, root.scope)]
        locate.refuse_missing(self.app, wanted, "nothing was searched")
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
        cleared += "".join(f"\nROOT.md was not updated (tell the user): {w}" for w in gone.warnings)
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


class StrictServer(MCPServer):
    """MCPServer whose tool calls are checked by :func:`mcp_args.check` first."""

    schemas: dict[str, dict[str, Any]] | None = None
    tools: Tools | None = None

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Any = None
    ) -> Any:  # fmt: skip
        if self.tools is not None and self.tools.client is None:
            self.tools.client = client_name(context)  # the agent a memory it writes names
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


def client_name(context: Any) -> str | None:
    """The name the client gave in its ``initialize`` request (``clientInfo.name``: Claude
    Code says ``claude-code``), None when the request carries none."""
    try:
        name = context.session.client_params.client_info.name
    except (AttributeError, ValueError):  # no context, no session, no initialize params
        return None
    return name if isinstance(name, str) and name.strip() else None


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
    server.tools = tools
    add_root_resources(server, app)
    _add_recall_tool(server, tools)
    _add_reading_tools(server, tools)
    _add_writing_tools(server, tools)
    _add_prompts(server)
    return server


def _add_recall_tool(server: MCPServer, tools: Tools) -> None:
    """memory_recall: each tool's schema beside its body, as in the two below."""

    @server.tool(
        name="memory_recall",
        title="Recall memories",
        description=RECALL,
        annotations=READ_ONLY,
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


def _add_reading_tools(server: MCPServer, tools: Tools) -> None:
    """memory_inspect and memory_context."""

    @server.tool(
        name="memory_inspect",
        title="Inspect the memory",
        description=INSPECT,
        annotations=READ_ONLY,
        structured_output=True,
    )
    def memory_inspect() -> Annotated[CallToolResult, Answer]:
        return tools.call(tools.inspect)

    @server.tool(
        name="memory_context",
        title="The memory block for a task",
        description=CONTEXT,
        annotations=READ_ONLY,
        structured_output=True,
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


def _add_writing_tools(server: MCPServer, tools: Tools) -> None:
    """memory_remember and memory_forget."""

    @server.tool(
        name="memory_remember",
        title="Remember a memory",
        description=REMEMBER,
        annotations=WRITES,
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
            force=force, agent=True, id=id, cites=tuple(cites), client=tools.client,
        )  # fmt: skip
        return tools.call(lambda: tools.remember(request))

    @server.tool(
        name="memory_forget",
        title="Forget a memory",
        description=FORGET,
        annotations=DELETES,
        structured_output=True,
    )
    def memory_forget(
        id: Annotated[str, Field(description="the memory id, e.g. pitfalls/sqlite-cjk")],
        scope: Annotated[Scope | None, Field(description="when the id is in both roots")] = None,
    ) -> Annotated[CallToolResult, ForgetAnswer]:
        return tools.call(lambda: tools.forget(id, scope))


def _add_prompts(server: MCPServer) -> None:
    """``memory-recall`` and ``memory-remember``: Claude Code offers them as slash commands."""

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
        what: Annotated[
            str, Field(description="what to remember (default: what was settled)")
        ] = "",
    ) -> str:
        return REMEMBER_PROMPT.format(what=what.strip() or REMEMBER_DEFAULT)


def serve(app: App, main: Path | None) -> None:
    """Run the server on stdin/stdout until the client closes it."""
    build_server(app, main).run("stdio")
