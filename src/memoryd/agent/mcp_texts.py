"""What the MCP server says to the model before any call: its instructions, each tool's
description and the two prompts' texts.

Plain strings, no import: the wording is what teaches the model how to search (one to three
rare words, a hit is authoritative, on zero results retry with fewer, rarer words before
concluding anything), so it is read and changed apart from the tools' bodies
(:mod:`memoryd.agent.mcp_server`).
"""

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
