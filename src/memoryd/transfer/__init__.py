"""Bringing memories in from the tools people use today, and giving them back.

A user arriving with memories in Claude Code, Codex, claude-mem, Serena, Cline's memory
bank, mem0/OpenMemory or Letta should not start from nothing, and should be able to
leave again. Each source format has one module in ``sources/``: a pure reader from the
source's files to a neutral list of :class:`~memoryd.transfer.candidate.Candidate`, which
never writes to the source. :mod:`memoryd.transfer.importing` passes every candidate
through remember's gate (secrets refused and reported, duplicates by term coverage
skipped and counted, ids memoryd never reads refused, an iron rule only ever a
``rule-proposal``) and writes what passes; the plan it writes from is the ``--dry-run``
listing (and what a UI shows before the user confirms). :mod:`memoryd.transfer.exporting`
gives a root back as Claude Code's memory folder or memoryd's own JSON Lines.
"""

SOURCES = ("claude-code", "codex", "claude-mem", "serena", "cline", "mem0", "letta", "jsonl")
FORMATS = ("claude-code", "jsonl")  # what an export writes
