"""Every rule finds its secret in a realistic note; every look-alike stays quiet."""

from __future__ import annotations

import pytest

from memoryd.secrets.scanner import scan
from tests.secrets.secret_cases import Case, negatives, positives

POSITIVES = positives()
NEGATIVES = negatives()


def _covered(case: Case) -> bool:
    lines = case.text.split("\n")
    for f in scan(case.text):
        if f.rule == case.rule and lines[f.line - 1][f.start - 1 : f.end - 1] == case.secret:
            return True
    return False


@pytest.mark.parametrize("case", POSITIVES, ids=[c.id for c in POSITIVES])
def test_finds_the_secret(case: Case) -> None:
    assert _covered(case), [(f.rule, f.line, f.start, f.end) for f in scan(case.text)]


@pytest.mark.parametrize("case", NEGATIVES, ids=[c.id for c in NEGATIVES])
def test_stays_quiet_on_look_alikes(case: Case) -> None:
    assert scan(case.text) == []
