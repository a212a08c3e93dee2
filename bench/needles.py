"""Needles for the recall quality benchmark: planted memories, their queries, the judge.

    cases = plant(root, per_class=10)      # writes the needle memories into a corpus root
    table = evaluate(db, config, cases)    # recall@10, top-1, precision@10 per class

Every needle uses words the corpus never holds (made-up English roots from syllables
the corpus does not use, Chinese characters outside its vocabulary), so the judge knows
exactly which memories are relevant. Each class puts the needle (old: one to three
years) against distractors that the old ranking let win: fresh, pinned, often recalled
memories holding a strict subset of the query's terms.

Classes:

* ``zh-2``: a two-character Chinese word; distractors hold both characters, apart.
* ``zh-phrase``: a four-character phrase; distractors hold two of its three bigrams.
* ``mixed``: an English word and a Chinese word; distractors hold one of them.
* ``english``: two English words, written inflected in the needle (``zorquims``).
* ``frontmatter``: one word only in ``load_when``, one only in the summary.
* ``old-exact``: three words, all in a three-year-old memory; a fresh memory with two.
* ``pinned-weak``: an old exact match against a pinned, recalled one holding one word.
* ``correction``: an old note and a correction of it written one to seven days ago,
  same words: the correction must come first (recency still matters).
* ``old-strong``: an old memory about the word (summary and body) against a fresh one
  that mentions it once in a long body: the old one must come first.
* ``common``: two or three of the corpus's common words, at times with stop words
  ("what is the cache of ..."): precision only (many memories are relevant).

Judge: a memory is *relevant* to a needle when it holds every needle word (any of its
forms, see :func:`bench.corpus.forms`; a Chinese word as a substring). recall@10 is the
share of the relevant memories in the first ten; top-1 is whether the first result is
the class's expected memory; precision@10 is the share of the returned results (at most
ten) that hold at least one of the query's content words, in one of its forms as
written: what stemming, stop words and bigrams must not dilute.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench.corpus import BASE_MS, DAY_MS, EN, forms

CLASSES = (
    "zh-2", "zh-phrase", "mixed", "english", "frontmatter", "old-exact", "pinned-weak",
    "correction", "old-strong", "common",
)  # fmt: skip
RARE_ZH = "鲲鹏麒麟貔貅饕餮魑魅魍魉犇骉羴龘靐燚鑫淼焱垚赑屃狻猊睚眦蒲牢嘲风"
_SYLLABLES = [
    "zor",
    "quim",
    "vex",
    "dra",
    "plo",
    "snek",
    "gri",
    "tza",
    "fep",
    "yul",
    "brak",
    "chom",
]
_STOP = ("the", "is", "a", "of", "to", "in", "and", "what", "when")
_WORD_RE = re.compile(r"[^\W\d_]+|\d+")
CASES_FILE = ".needles.json"
YEAR_MS = 365 * DAY_MS


@dataclass
class Case:
    cls: str
    query: str
    words: list[str]  # the needle words (English roots or Chinese words) a relevant memory holds
    relevant: list[str] = field(default_factory=list)  # ids
    top: str | None = None  # the id that must come first


class _Planter:
    def __init__(self, root: Path, rng: random.Random) -> None:
        self.root, self.rng = root, rng
        self.en_pool = [a + b for a in _SYLLABLES for b in _SYLLABLES if a != b]
        rng.shuffle(self.en_pool)
        chars = list(RARE_ZH)
        self.zh_pool = [a + b for a in chars for b in chars if a != b]
        rng.shuffle(self.zh_pool)
        self.number = 0
        self.words: set[str] = set()

    def en(self) -> str:
        return self.en_pool.pop()

    def zh(self, after: str = "") -> str:
        """A word whose bigrams (itself, reversed, and where it joins ``after``) no other
        needle holds: distractors write both orders, phrases join two words."""
        while True:
            word = self.zh_pool.pop()
            grams = {word, word[::-1]} | ({after[-1] + word[0]} if after else set())
            if not grams & self.words:
                self.words |= grams
                return word

    def filler(self, k: int) -> str:
        return " ".join(self.rng.choice(EN) for _ in range(k))

    def write(self, body: str, *, age_ms: int, summary: str | None = None, pinned: bool = False,
              load_when: list[str] | None = None) -> str:  # fmt: skip
        self.number += 1
        memory_id = f"facts/needles/n{self.number:04d}"
        updated = BASE_MS - age_ms
        lines = ["---", f"id: {memory_id}", "kind: fact",
                 f"summary: {summary or self.filler(6)}",
                 f"created: {updated}", f"updated: {updated}"]  # fmt: skip
        if load_when:
            lines.append(f"load_when: [{', '.join(load_when)}]")
        if pinned:
            lines.append("pinned: true")
        path = self.root / f"{memory_id}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join([*lines, "---", body, ""]), encoding="utf-8")
        return memory_id

    def old(self) -> int:
        return self.rng.randint(365, 3 * 365) * DAY_MS

    def fresh(self) -> int:
        return self.rng.randint(0, 3) * DAY_MS


def plant(root: Path, per_class: int = 10, seed: int = 0) -> list[Case]:
    """Write the needle memories under ``root`` (``facts/needles/``) and their cases."""
    rng = random.Random(seed + 15)
    p = _Planter(root, rng)
    cases: list[Case] = []
    hits: dict[str, int] = {}
    for _ in range(per_class):
        cases += _one_of_each(p, rng, hits)
    (root / CASES_FILE).write_text(
        json.dumps({"cases": [asdict(c) for c in cases], "hits": hits}), encoding="utf-8"
    )
    return cases


def _one_of_each(p: _Planter, rng: random.Random, hits: dict[str, int]) -> list[Case]:  # noqa: PLR0915
    f = p.filler
    out: list[Case] = []
    # zh-2
    w = p.zh()
    needle = p.write(f"{f(8)} {w}的配置 {f(8)}", age_ms=p.old())
    p.write(f"{w[0]}的 {f(6)} 和{w[1]} {f(4)}", age_ms=p.fresh(), pinned=True)
    p.write(f"{w[1]}{w[0]} {f(6)}", age_ms=p.fresh())
    out.append(Case("zh-2", w, [w], [needle], needle))
    # zh-phrase: abcd; distractors hold ab+cd and abc
    a = p.zh()
    b = p.zh(after=a)
    phrase = a + b
    needle = p.write(f"{f(6)} {phrase}要注意 {f(6)}", age_ms=p.old())
    p.write(f"{a} {f(3)} {b} {f(3)}", age_ms=p.fresh(), pinned=True)
    d = p.write(f"{phrase[:3]} {f(5)}", age_ms=p.fresh(), summary=phrase[:3])
    hits[d] = 300
    out.append(Case("zh-phrase", phrase, [a, b], [needle], needle))
    # mixed
    e, w = p.en(), p.zh()
    needle = p.write(f"{f(5)} {rng.choice(forms(e))} {w}超时 {f(5)}", age_ms=p.old())
    d = p.write(f"{e} {f(6)}", age_ms=p.fresh(), summary=f"{e} {e}")
    hits[d] = 200
    p.write(f"{w} {f(6)}", age_ms=p.fresh(), pinned=True)
    out.append(Case("mixed", f"{e} {w}", [e, w], [needle], needle))
    # english: inflected in the needle
    e1, e2 = p.en(), p.en()
    needle = p.write(f"{f(6)} {forms(e1)[1]} {f(3)} {forms(e2)[3]} {f(6)}", age_ms=p.old())
    d = p.write(f"{e1} {f(6)} {e1}", age_ms=p.fresh(), summary=f"{e1} {f(3)}")
    hits[d] = 100
    p.write(f"{f(4)} {e2} {f(4)}", age_ms=p.fresh(), pinned=True)
    out.append(Case("english", f"{e1} {e2}", [e1, e2], [needle], needle))
    # frontmatter only
    e1, e2 = p.en(), p.en()
    needle = p.write(f(12), age_ms=p.old(), summary=f"{f(3)} {e2} {f(2)}", load_when=[e1])
    p.write(f"{f(5)} {e1} {f(5)}", age_ms=p.fresh())
    d = p.write(f"{f(5)} {e2} {f(5)}", age_ms=p.fresh(), pinned=True)
    hits[d] = 50
    out.append(Case("frontmatter", f"{e1} {e2}", [e1, e2], [needle], needle))
    # old exact vs new partial
    e1, e2, e3 = p.en(), p.en(), p.en()
    needle = p.write(f"{f(5)} {e1} {f(2)} {e2} {f(2)} {e3} {f(5)}", age_ms=3 * YEAR_MS)
    d = p.write(f"{e1} {e2} {f(4)} {e1} {e2}", age_ms=0, summary=f"{e1} {e2}")
    hits[d] = 500
    out.append(Case("old-exact", f"{e1} {e2} {e3}", [e1, e2, e3], [needle], needle))
    # pinned weak vs old exact
    e1, e2 = p.en(), p.en()
    needle = p.write(f"{f(6)} {e1} {f(4)} {e2} {f(6)}", age_ms=p.old())
    d = p.write(f"{e1} {e1} {f(3)}", age_ms=p.old(), summary=f"{e1} {e1}", pinned=True)
    hits[d] = 1000
    out.append(Case("pinned-weak", f"{e1} {e2}", [e1, e2], [needle], needle))
    # correction: yesterday's correction of an old note, the same words
    e1, e2 = p.en(), p.en()
    note = p.write(f"{e1} {e2} {f(8)}", age_ms=p.old(), summary=f"{e1} {e2} {f(3)}")
    fix = p.write(f"{e1} {e2} {f(8)} corrected", age_ms=rng.randint(1, 7) * DAY_MS,
                  summary=f"{e1} {e2} {f(3)}")  # fmt: skip
    out.append(Case("correction", f"{e1} {e2}", [e1, e2], [note, fix], fix))
    # old strong vs new weak
    e1 = p.en()
    strong = p.write(f"{e1} {f(6)} {e1} {f(4)}", age_ms=p.old(), summary=f"{e1} {f(4)}")
    weak = p.write(f"{f(30)} {e1} {f(30)}", age_ms=2 * DAY_MS)
    out.append(Case("old-strong", e1, [e1], [strong, weak], strong))
    return out


def load(root: Path) -> tuple[list[Case], dict[str, int]]:
    data = json.loads((root / CASES_FILE).read_text(encoding="utf-8"))
    return [Case(**c) for c in data["cases"]], data["hits"]


def common_cases(count: int, seed: int = 3) -> list[Case]:
    """Common-word queries, some with stop words, judged for precision only."""
    rng = random.Random(seed)
    top = EN[:120]
    cases = []
    for i in range(count):
        words = rng.sample(top, 2 + i % 2)
        query = " ".join(words)
        if i % 3 == 0:
            query = f"what {_STOP[1]} the {words[0]} of {' '.join(words[1:])}"
        cases.append(Case("common", query, words))
    return cases


def _holds(text_words: set[str], text: str, word: str) -> bool:
    if not word.isascii():
        return word in text
    return any(form in text_words for form in forms(word))


def evaluate(db: Any, config: Any, cases: list[Case]) -> dict[str, dict[str, float]]:
    """recall@10, top-1 and precision@10 per class (``nan`` where a class has no target),
    at the corpus's "now" (its ages are relative to it)."""
    from memoryd.index import recall

    sums: dict[str, dict[str, list[float]]] = {}
    for case in cases:
        hits = recall(db, config, case.query, config.roots, limit=10, bump=False, now_ms=BASE_MS)
        got = [h.id for h in hits]
        row = sums.setdefault(case.cls, {"recall": [], "top1": [], "precision": []})
        if case.relevant:
            row["recall"].append(len(set(got) & set(case.relevant)) / len(case.relevant))
        if case.top:
            row["top1"].append(float(bool(got) and got[0] == case.top))
        if hits:
            good = 0
            for hit in hits:
                assert hit.row is not None  # recall's hits hold their rows
                text = "\n".join([hit.id, hit.summary or "", *hit.row.load_when, hit.body]).lower()
                words = set(_WORD_RE.findall(text))
                good += any(_holds(words, text, w) for w in case.words)
            row["precision"].append(good / len(hits))
    return {
        cls: {k: (sum(v) / len(v) if v else float("nan")) for k, v in row.items()}
        for cls, row in sums.items()
    }
