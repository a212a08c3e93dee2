"""How each source's kinds map to memoryd's (docs/transfer.md says the same in a table).

Iron rules are written only by people, so nothing an import brings in is ever a ``rule``:
a source's own rule, and any entry that reads like one (an imperative "always ...",
"never ...", "必须 ..."), lands as a ``rule-proposal`` that a person accepts with
``memoryd accept``.
"""

from __future__ import annotations

import re

RULE, PROPOSAL = "rule", "rule-proposal"
FACT, PREFERENCE, DECISION, PITFALL = "fact", "preference", "decision", "pitfall"

CLAUDE_CODE = {"user": PREFERENCE, "feedback": PREFERENCE, "project": FACT, "reference": FACT}
CLAUDE_MEM = {
    "decision": DECISION, "bugfix": PITFALL, "discovery": FACT, "feature": FACT,
    "refactor": FACT, "change": FACT,
}  # fmt: skip
CLINE = {"systemPatterns": DECISION}  # every other file of the memory bank holds facts
# memoryd's kinds as Claude Code's four types, for the export
TO_CLAUDE = {
    RULE: "feedback", PROPOSAL: "feedback", PREFERENCE: "feedback", DECISION: "project",
    PITFALL: "project", FACT: "project",
}  # fmt: skip
PREFERENCE_WORDS = ("preference", "preferences", "user_preferences", "personal")

_RULE_LIKE = re.compile(
    r"^(?:always|never|must|do not|don't|dont|only use|use only|avoid|prefer)\b"
    r"|^(?:必须|不要|禁止|务必|一律|永远|只用|不得|切勿|别)",
    re.IGNORECASE,
)


def rule_like(summary: str) -> bool:
    """Does this summary read as a rule (an imperative that starts it)?"""
    return bool(_RULE_LIKE.match(summary.strip().lstrip("-*• ").strip()))


def imported_kind(kind: str, summary: str) -> str:
    """The kind an imported memory is written with: a rule, or a preference or fact that
    reads like one, is a proposal; a decision or pitfall stays what it is."""
    if kind == RULE or (kind in (PREFERENCE, FACT) and rule_like(summary)):
        return PROPOSAL
    return kind


def claude_type_of(kind: str) -> str:
    """The Claude Code type an exported memory of ``kind`` gets."""
    return TO_CLAUDE.get(kind, "project")
