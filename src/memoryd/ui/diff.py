"""A side-by-side line diff of two texts, as rows the page lays out in two columns.

The page shows a conflict copy beside the text at the path; ``difflib`` pairs the lines,
and each row says whether the two sides are equal, changed, or present on one side only.
"""

from __future__ import annotations

import difflib
from typing import Any

MAX_LINES = 5000  # a side longer than this is shown cut: a memory is a note, not a log


def side_by_side(left: str, right: str) -> list[dict[str, Any]]:
    """Rows ``{"op", "left", "right", "left_no", "right_no"}``; a missing side is None.

    ``op`` is ``equal``, ``change``, ``delete`` (left only) or ``insert`` (right only).
    """
    a = left.splitlines()[:MAX_LINES]
    b = right.splitlines()[:MAX_LINES]
    rows: list[dict[str, Any]] = []
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            rows += [_row("equal", a, i1 + k, b, j1 + k) for k in range(i2 - i1)]
            continue
        for k in range(max(i2 - i1, j2 - j1)):
            i = i1 + k if i1 + k < i2 else None
            j = j1 + k if j1 + k < j2 else None
            kind = (
                "change" if i is not None and j is not None else "delete" if j is None else "insert"
            )
            rows.append(_row(kind, a, i, b, j))
    return rows


def _row(op: str, a: list[str], i: int | None, b: list[str], j: int | None) -> dict[str, Any]:
    return {
        "op": op,
        "left": None if i is None else a[i],
        "right": None if j is None else b[j],
        "left_no": None if i is None else i + 1,
        "right_no": None if j is None else j + 1,
    }
