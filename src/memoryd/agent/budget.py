"""Token budgets: estimating how many tokens a text costs, and cutting it to fit.

memoryd ships no model tokenizer (each model has its own, and none is a
dependency worth having), so tokens are estimated, and the estimate leans high:

* every wide character (Unicode East Asian Width W or F: Han, Kana, Hangul,
  CJK punctuation such as 。「」 and full-width forms such as ，) counts as one
  token: current tokenizers spend about 0.7 to 1.5 tokens on a Chinese
  character, most often one;
* every other character counts as a quarter token (about four characters of
  English or code per token), rounded up per text.

So 11000 tokens is about 11000 Chinese characters or 44000 English ones. A cut
keeps whole lines while their estimates, added up, fit the budget together with
the marker line that says where the rest is; only a first line longer than the
whole budget is cut inside the line.
"""

from __future__ import annotations

import math
from unicodedata import east_asian_width

CHARS_PER_TOKEN = 4
_FIRST_WIDE = "\u1100"  # no character below Hangul Jamo is wide


def estimate(text: str) -> int:
    """Estimated tokens of ``text``: one per CJK character, a quarter per other character."""
    if text.isascii():
        return math.ceil(len(text) / CHARS_PER_TOKEN)
    wide = sum(1 for c in text if c >= _FIRST_WIDE and east_asian_width(c) in "WF")
    return wide + math.ceil((len(text) - wide) / CHARS_PER_TOKEN)


def line_cost(line: str) -> int:
    """What a line costs inside a cut text (its newline included)."""
    return estimate(line + "\n")


def cut(text: str, budget: int, marker: str) -> tuple[str, bool]:
    """``text`` within ``budget`` estimated tokens, ``marker`` on its own line when cut.

    Whole lines are kept while they fit with the marker; the result (marker
    included) never costs more than ``budget``. When not even the marker fits,
    the result is empty and counts as cut.
    """
    body = text.strip("\n")
    if not body:
        return "", False
    lines = body.split("\n")
    if sum(line_cost(line) for line in lines) <= budget:
        return body, False
    room = budget - line_cost(marker)
    if room <= 0:
        return "", True
    kept: list[str] = []
    used = 0
    for line in lines:
        cost = line_cost(line)
        if used + cost > room:
            break
        kept.append(line)
        used += cost
    if not kept:
        kept = [_head(lines[0], room)]
    return "\n".join([*kept, marker]) if kept[0] else marker, True


def _head(line: str, room: int) -> str:
    """The longest start of ``line`` within ``room`` tokens, ended at a space when near one."""
    low, high = 0, len(line)
    while low < high:  # the longest prefix whose cost fits (cost grows with length)
        middle = (low + high + 1) // 2
        if line_cost(line[:middle]) <= room:
            low = middle
        else:
            high = middle - 1
    head = line[:low]
    space = head.rfind(" ")
    return head[:space] if space > low // 2 else head
