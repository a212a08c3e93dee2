"""The recall query a whole prompt gives the context block.

The hooks send recall the user's prompt as it is, and a prompt with a pasted log or
file holds thousands of distinct terms: each is one more OR branch of the FTS5 query,
so a 290 KB log kept ``memoryd context --hook`` busy about 3 s before the prompt went
out, and 580 KB about 9 s, next to the 10 s Claude Code's hook timeout gives it (OpenCode
waits as long as it takes). What a person asks stands at the start or the end of such a
paste, so the query keeps the prompt's first and last :data:`MAX_TERMS` ``// 2``
distinct terms, and the block says how many it left out.
"""

from __future__ import annotations

from dataclasses import dataclass

from memoryd.agent import upkeep

MAX_TERMS = 256  # distinct terms recall is given at most (about 0.1 s at 10k memories)


@dataclass(frozen=True)
class PromptQuery:
    """What recall searches for a prompt: ``text``, and how many of the prompt's
    ``total`` distinct terms it holds (``kept``)."""

    text: str
    kept: int
    total: int

    @property
    def left_out(self) -> int:
        return self.total - self.kept


def prompt_query(prompt: str, limit: int = MAX_TERMS) -> PromptQuery:
    """``prompt`` as it is when it has at most ``limit`` distinct terms, else the words of
    its first and last ``limit // 2`` terms (first-seen order, as recall reads them)."""
    forms = upkeep.query_words(prompt)
    if len(forms) <= limit:
        return PromptQuery(prompt, len(forms), len(forms))
    head = list(forms)[: limit - limit // 2]
    tail = _last_terms(prompt, set(forms), set(head), limit // 2)
    kept = [forms[term] for term in head] + [forms[term] for term in tail]
    return PromptQuery(" ".join(kept), len(kept), len(forms))


def _last_terms(prompt: str, known: set[str], taken: set[str], count: int) -> list[str]:
    """The ``count`` distinct terms of ``known`` nearest the end of ``prompt`` (not in
    ``taken``), in the order they stand there: read chunk by chunk from the end."""
    found: list[str] = []
    seen = set(taken)
    for chunk in reversed(prompt.split()):
        # a chunk of stop words alone gives them back: only the prompt's terms count
        fresh = [t for t in upkeep.query_words(chunk) if t in known and t not in seen]
        fresh = fresh[-(count - len(found)) :]
        found[:0] = fresh
        seen.update(fresh)
        if len(found) >= count:
            break
    return found
