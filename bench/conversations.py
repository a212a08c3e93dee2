"""Recall quality on public long-term conversation data, beside two plain lexical baselines.

    .venv/bin/python bench/conversations.py                 # the development sets
    .venv/bin/python bench/conversations.py --heldout       # LoCoMo and CMRC 2018 (acceptance)
    .venv/bin/python bench/conversations.py --mirror /work/.mirror --sets realtalk

memoryd's needle corpus (bench/needles.py) is its own invention; this bench asks questions
someone else wrote about conversations someone else had. Each set is stored as memoryd
stores it (one Markdown memory per dialog turn, per session event and per session, with the
session's date as ``created``/``updated``; a summary of the text's first sentence, as agents
write them), all conversations of a set in one root, then every question is recalled with
``limit=10``. A question is a hit at k when one of its evidence memories is among the first
k. In the same run the same texts are searched by

* ``fts5``: a bare SQLite FTS5 table, ``tokenize='porter unicode61'``, the question's words
  OR-joined, ``ORDER BY bm25``: what a plain SQLite search gives;
* ``bm25``: Okapi BM25 (k1 1.5, b 0.75) over lower-cased words, or for Chinese over each
  Han character and each bigram (the usual character+bigram baseline).

The data is fetched by :func:`fetch` (a shallow clone of the repository named in
:data:`SOURCES`, or an existing mirror with ``--mirror``) into a cache outside git
(``$XDG_CACHE_HOME/memoryd-bench``); bench/README.md names each source and its license.
LoCoMo and CMRC 2018 are held out: never tune on them (``--heldout`` runs only them).
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import functools
import io
import json
import math
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

DAY_MS = 86_400_000
KS = (1, 5, 10)


@dataclasses.dataclass(frozen=True)
class Source:
    """A public repository and the files of it a set is read from."""

    repo: str  # owner/name on GitHub
    files: tuple[str, ...]
    license: str


SOURCES = {
    "realtalk": Source(
        "danny911kr/REALTALK",
        tuple(
            f"data/{n}"
            for n in (
                "Chat_1_Emi_Elise.json",
                "Chat_2_Kevin_Elise.json",
                "Chat_3_Kevin_Paola.json",
                "Chat_4_Emi_Paola.json",
                "Chat_5_Nicolas_Nebraas.json",
                "Chat_6_Vanessa_Nicolas.json",
                "Chat_7_Nebraas_Vanessa.json",
                "Chat_8_Akib_Muhhamed.json",
                "Chat_9_Fahim_Akib.json",
                "Chat_10_Fahim_Muhhamed.json",
            )
        ),
        "no license file (the paper's data, read for evaluation only, never shipped)",
    ),
    "madial": Source(
        "hejunqing/MADial-Bench",
        (
            "data/en/MADial-Bench-en-memory.json",
            "data/en/MADial-Bench-en-dialogue.json",
            "data/ch/MADial-Bench-zh-memory.json",
            "data/ch/MADial-Bench-zh-dialogue.json",
        ),
        "MIT",
    ),
    "locomo": Source("snap-research/locomo", ("data/locomo10.zip",), "none stated"),
    "cmrc2018": Source("ymcui/cmrc2018", ("squad-style-data/cmrc2018_dev.json",), "CC BY-SA 4.0"),
}
DEVELOPMENT = ("realtalk", "madial")
HELD_OUT = ("locomo", "cmrc2018")


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "memoryd-bench"


def fetch(name: str, mirror: Path | None = None) -> Path:
    """The folder holding ``name``'s files, fetched once into :func:`cache_dir`: from
    ``mirror/<owner>+<name>/repo`` (a git directory) when there is one, else by a shallow
    clone of the public repository."""
    source = SOURCES[name]
    folder = cache_dir() / name
    if all((folder / f).is_file() for f in source.files):
        return folder
    git_dir = mirror / source.repo.replace("/", "+") / "repo" if mirror else None
    with tempfile.TemporaryDirectory() as scratch:
        if git_dir is None or not git_dir.is_dir():
            git_dir = Path(scratch) / "clone"
            url = f"https://github.com/{source.repo}.git"
            subprocess.run(
                ["git", "clone", "--bare", "--depth", "1", "--filter=blob:none", url, git_dir],
                check=True,
            )
        for file in source.files:
            data = subprocess.run(
                ["git", "--git-dir", str(git_dir), "show", f"HEAD:{file}"],
                check=True, capture_output=True,
            ).stdout  # fmt: skip
            (folder / file).parent.mkdir(parents=True, exist_ok=True)
            (folder / file).write_bytes(data)
    return folder


@dataclasses.dataclass
class Memory:
    key: str
    text: str
    when_ms: int


@dataclasses.dataclass
class Question:
    text: str
    kind: str
    evidence: set[str]
    when_ms: int = 0  # when asked (0: after every memory)


@dataclasses.dataclass
class Collection:
    """One set at one granularity: what one root holds, and the questions about it."""

    name: str
    lang: str
    granularity: str
    memories: list[Memory]
    questions: list[Question]


# --- loaders ---------------------------------------------------------------------------

LOCOMO_KINDS = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
REALTALK_KINDS = {1: "multi-hop", 2: "temporal", 3: "commonsense"}


def _date(text: str) -> int:
    for pattern in ("%I:%M %p on %d %B, %Y", "%d.%m.%Y, %H:%M:%S", "%Y-%m-%d"):
        try:
            return int(
                datetime.strptime(text.strip(), pattern).replace(tzinfo=UTC).timestamp() * 1000
            )
        except ValueError:
            continue
    raise ValueError(f"unknown date {text!r}")


def locomo_style(  # noqa: PLR0912 - one loop over the format's parts
    chats: list[dict[str, Any]], name: str, kinds: dict[int, str]
) -> list[Collection]:
    """LoCoMo's format (REALTALK uses it too): turns with ``dia_id``, per-session events or
    observations and summaries, questions with evidence ``dia_id`` lists."""
    turns: list[Memory] = []
    events: list[Memory] = []
    sessions: list[Memory] = []
    questions: dict[str, list[Question]] = {"turn": [], "event": [], "session": []}
    for c, chat in enumerate(chats):
        speakers = chat.get("name") or {}
        where: dict[str, int] = {}  # dia_id -> session number
        event_by_turn: dict[str, list[str]] = collections.defaultdict(list)
        numbers = sorted(
            int(m[1]) for k in chat if (m := re.fullmatch(r"session_(\d+)", k)) and chat[k]
        )
        for n in numbers:
            when = _date(chat[f"session_{n}_date_time"])
            lines = []
            for t in chat[f"session_{n}"]:
                text = t.get("clean_text") or t.get("text") or ""
                if t.get("blip_caption"):
                    text += f" [shares {t['blip_caption']}]"
                line = f"{speakers.get(t['speaker'], t['speaker'])}: {text}"
                where[t["dia_id"]] = n
                turns.append(Memory(f"{c}/{t['dia_id']}", line, when))
                lines.append(line)
            sessions.append(
                Memory(f"{c}/S{n}", chat.get(f"session_{n}_summary") or "\n".join(lines), when)
            )
            observed = chat.get(f"session_{n}_observation")
            if observed:  # LoCoMo: {speaker: [[text, dia_id], ...]}
                for i, (text, dia) in enumerate(x for items in observed.values() for x in items):
                    key = f"{c}/O{n}.{i}"
                    events.append(Memory(key, text, when))
                    for d in [dia] if isinstance(dia, str) else dia:
                        event_by_turn[d].append(key)
            else:  # REALTALK: {agent: [{"sub-event": text}, ...]}, tied to the session only
                for i, e in enumerate(
                    x for items in chat.get(f"events_session_{n}", {}).values() for x in items
                ):
                    events.append(Memory(f"{c}/E{n}.{i}", e["sub-event"], when))
        session_events = collections.defaultdict(set)
        for e in events:
            if e.key.startswith(f"{c}/E"):
                session_events[int(e.key.split("E")[1].split(".")[0])].add(e.key)
        last = max(_date(chat[f"session_{n}_date_time"]) for n in numbers)
        for qa in chat["qa"]:
            evidence = [d for d in _dia_ids(qa.get("evidence", [])) if d in where]
            if not evidence or qa.get("category") == 5:
                continue  # unanswerable by design (LoCoMo's adversarial questions)
            kind = kinds.get(qa.get("category", 0), str(qa.get("category")))
            text = qa["question"]
            questions["turn"].append(Question(text, kind, {f"{c}/{d}" for d in evidence}, last))
            questions["session"].append(
                Question(text, kind, {f"{c}/S{where[d]}" for d in evidence}, last)
            )
            if event_by_turn:
                keys = {k for d in evidence for k in event_by_turn.get(d, [])}
            else:
                keys = {k for d in evidence for k in session_events.get(where[d], set())}
            if keys:
                questions["event"].append(Question(text, kind, keys, last))
    return [
        Collection(name, "en", "turn", turns, questions["turn"]),
        Collection(name, "en", "event", events, questions["event"]),
        Collection(name, "en", "session", sessions, questions["session"]),
    ]


def _dia_ids(evidence: Iterable[str]) -> list[str]:
    """Evidence ids as written ("D1:3", at times "D1:3; D2:4" or "D1:3:5")."""
    out = []
    for item in evidence:
        for part in re.findall(r"D\d+:\d+", str(item)):
            out.append(part)
    return out


def load_realtalk(folder: Path) -> list[Collection]:
    chats = [json.loads((folder / f).read_text()) for f in SOURCES["realtalk"].files]
    return locomo_style(chats, "realtalk", REALTALK_KINDS)


def load_locomo(folder: Path) -> list[Collection]:
    archive = zipfile.ZipFile(io.BytesIO((folder / SOURCES["locomo"].files[0]).read_bytes()))
    names = sorted(n for n in archive.namelist() if n.endswith(".json"))
    chats = []
    for n in names:
        chat = json.loads(archive.read(n))
        chat["name"] = {}
        chats.append(chat)
    return locomo_style(chats, "locomo", LOCOMO_KINDS)


def _jsonl(path: Path) -> list[Any]:
    text = path.read_text()
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        data = [json.loads(line) for line in text.splitlines() if line.strip()]
    return data if isinstance(data, list) else [data]


def load_madial(folder: Path) -> list[Collection]:
    """MADial-Bench: events of a user's life (the memories) and dialogues in which the
    assistant should recall some; the question is what the user said before that turn."""
    out = []
    for lang, sub, tag in (("en", "en", "en"), ("zh", "ch", "zh")):
        memories = []
        for item in _jsonl(folder / f"data/{sub}/MADial-Bench-{tag}-memory.json"):
            for key, m in item.items():
                memories.append(Memory(str(key), m["event"], _date(m["time"])))
        questions = []
        for d in _jsonl(folder / f"data/{sub}/MADial-Bench-{tag}-dialogue.json"):
            turn = d["test-turn"][0]
            said = [
                re.sub(r'^<[^>]*>:\s*"?|"?\s*$', "", line)
                for line in d["dialogue"][1:turn]
                if not line.startswith("<Assistant>")
            ]
            questions.append(
                Question(" ".join(said), "dialogue", {str(r) for r in d["relevant-id"]})
            )
        out.append(Collection(f"madial-{lang}", lang, "event", memories, questions))
    return out


def load_cmrc(folder: Path) -> list[Collection]:
    data = json.loads((folder / SOURCES["cmrc2018"].files[0]).read_text())
    memories, questions = [], []
    base = _date("2023-01-01")
    for article in data["data"]:
        for paragraph in article["paragraphs"]:
            key = paragraph["id"]
            memories.append(Memory(key, paragraph["context"], base))
            for qa in paragraph["qas"]:
                questions.append(Question(qa["question"], "reading", {key}))
    return [Collection("cmrc2018", "zh", "paragraph", memories, questions)]


LOADERS: dict[str, Callable[[Path], list[Collection]]] = {
    "realtalk": load_realtalk,
    "madial": load_madial,
    "locomo": load_locomo,
    "cmrc2018": load_cmrc,
}


# --- systems ---------------------------------------------------------------------------

Ranker = Callable[[Question], list[str]]


def summary_of(text: str) -> str:
    """The text's first sentence, at most 100 characters: the summary agents write."""
    first = re.split(r"(?<=[.!?。！？])\s*", text.strip(), maxsplit=1)[0]
    return first[:100]


SEARCH_SETTINGS: list[str] = []  # --search key=value: config.yaml's search settings


def memoryd_ranker(
    col: Collection, scratch: Path, semantic: bool = False
) -> tuple[Ranker, Callable[[], None]]:
    """memoryd's recall over the collection written as a root of memories (``semantic``:
    with the semantic stage on; the cold index's time per memory is printed to stderr)."""
    root = scratch / "root"
    names: dict[str, str] = {}
    for i, m in enumerate(col.memories):
        name = f"m/{i // 1000:03d}/{i:06d}"
        names[name] = m.key
        path = root / f"{name}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            "---\n"
            f"id: {name}\n"
            "kind: fact\n"
            f"summary: {json.dumps(summary_of(m.text), ensure_ascii=False)}\n"
            f"created: {m.when_ms}\n"
            f"updated: {m.when_ms}\n"
            "---\n"
            f"{m.text}\n"
        )
    home = scratch / "home"
    home.mkdir()
    search = "".join(f"\n  {s}" for s in [*SEARCH_SETTINGS, *(["semantic: true"] * semantic)])
    (home / "config.yaml").write_text(
        f"roots:\n  - path: {root}\n    scope: global\n" + (f"search:{search}\n" if search else "")
    )
    os.environ["MEMORYD_HOME"] = str(home)
    from memoryd.config.loader import load_config
    from memoryd.index import open_index, recall, reconcile
    from memoryd.paths import resolve_paths

    paths = resolve_paths()
    config = load_config(paths)
    db = open_index(paths)
    started, cpu = time.perf_counter(), time.process_time()
    reconcile(db, config)
    cold = (time.perf_counter() - started) / len(col.memories) * 1000
    cold_cpu = (time.process_time() - cpu) / len(col.memories) * 1000
    print(
        f"({col.name} {col.granularity}: cold index {cold:.2f} ms a memory, "
        f"{cold_cpu:.2f} ms CPU"
        f"{' with the semantic stage' if semantic else ''})",
        file=sys.stderr,
    )
    last = max(m.when_ms for m in col.memories)

    def rank(q: Question) -> list[str]:
        now = max(q.when_ms, last) + DAY_MS
        hits = recall(db, config, q.text, config.roots, limit=10, bump=False, now_ms=now)
        return [names[h.id] for h in hits]

    return rank, db.close


_FTS_WORD = re.compile(r"\w+")


def fts5_ranker(col: Collection, scratch: Path) -> tuple[Ranker, Callable[[], None]]:
    """A bare FTS5 table (porter unicode61) and an OR-query of the question's words."""
    conn = sqlite3.connect(scratch / "bare.db")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(text, tokenize='porter unicode61')")
    conn.executemany(
        "INSERT INTO t(rowid, text) VALUES (?, ?)",
        ((i, m.text) for i, m in enumerate(col.memories)),
    )
    conn.commit()
    keys = [m.key for m in col.memories]

    def rank(q: Question) -> list[str]:
        words = dict.fromkeys(w.lower() for w in _FTS_WORD.findall(q.text))
        if not words:
            return []
        expression = " OR ".join(f'"{w}"' for w in words)
        rows = conn.execute(
            "SELECT rowid FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT 10", (expression,)
        )
        return [keys[r] for (r,) in rows]

    return rank, conn.close


_HAN = re.compile(r"[\u4e00-\u9fff]+")


def bm25_tokens(text: str, lang: str) -> list[str]:
    """Lower-cased words; for Chinese, each Han character and each bigram besides."""
    text = text.lower()
    if lang != "zh":
        return _FTS_WORD.findall(text)
    out = _FTS_WORD.findall(_HAN.sub(" ", text))
    for run in _HAN.findall(text):
        out += list(run)
        out += [run[i : i + 2] for i in range(len(run) - 1)]
    return out


def bm25_ranker(col: Collection, _scratch: Path) -> tuple[Ranker, Callable[[], None]]:
    """Okapi BM25 (k1 1.5, b 0.75, the rank_bm25 package's idf)."""
    k1, b = 1.5, 0.75
    docs = [collections.Counter(bm25_tokens(m.text, col.lang)) for m in col.memories]
    lengths = [sum(d.values()) for d in docs]
    average = sum(lengths) / max(1, len(lengths))
    postings: dict[str, list[int]] = collections.defaultdict(list)
    for i, d in enumerate(docs):
        for token in d:
            postings[token].append(i)
    n = len(docs)
    idf = {t: math.log((n - len(p) + 0.5) / (len(p) + 0.5) + 1) for t, p in postings.items()}
    keys = [m.key for m in col.memories]

    def rank(q: Question) -> list[str]:
        scores: dict[int, float] = collections.defaultdict(float)
        for token in set(bm25_tokens(q.text, col.lang)):
            for i in postings.get(token, ()):
                tf = docs[i][token]
                scores[i] += (
                    idf[token] * tf * (k1 + 1) / (tf + k1 * (1 - b + b * lengths[i] / average))
                )
        best = sorted(scores.items(), key=lambda s: (-s[1], s[0]))[:10]
        return [keys[i] for i, _ in best]

    return rank, lambda: None


SYSTEMS: dict[str, Callable[[Collection, Path], tuple[Ranker, Callable[[], None]]]] = {
    "memoryd": memoryd_ranker,
    "semantic": functools.partial(memoryd_ranker, semantic=True),
    "fts5": fts5_ranker,
    "bm25": bm25_ranker,
}


# --- scoring ---------------------------------------------------------------------------


def score(col: Collection, systems: Iterable[str]) -> dict[str, dict[str, list[list[bool]]]]:
    """For each system and question kind ("all" too), per question its hit at each k."""
    out: dict[str, dict[str, list[list[bool]]]] = {}
    for system in systems:
        with tempfile.TemporaryDirectory() as scratch:
            rank, close = SYSTEMS[system](col, Path(scratch))
            try:
                rows: dict[str, list[list[bool]]] = collections.defaultdict(list)
                for q in col.questions:
                    got = rank(q)
                    hit = [bool(q.evidence & set(got[:k])) for k in KS]
                    rows["all"].append(hit)
                    rows[q.kind].append(hit)
                out[system] = dict(rows)
            finally:
                close()
    return out


def _rates(hits: list[list[bool]]) -> str:
    return " / ".join(f"{sum(h[i] for h in hits) / len(hits):.3f}" for i in range(len(KS)))


def report(col: Collection, scores: dict[str, dict[str, list[list[bool]]]]) -> list[str]:
    """Table rows: the collection's overall line per system, then each kind's."""
    lines = []
    kinds = sorted(k for k in next(iter(scores.values())) if k != "all")
    kinds = ["all", *kinds] if len(kinds) > 1 else ["all"]
    for kind in kinds:
        cells = [_rates(scores[s][kind]) for s in scores]
        n = len(next(iter(scores.values()))[kind])
        label = f"{col.name} {col.granularity}" if kind == "all" else f"  {kind}"
        lines.append(f"| {label} | {len(col.memories)} | {n} | " + " | ".join(cells) + " |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--heldout", action="store_true", help="run LoCoMo and CMRC 2018 only")
    parser.add_argument("--sets", help="comma-separated set names (default: the development sets)")
    parser.add_argument("--granularity", help="only this granularity (turn, event, session...)")
    parser.add_argument("--mirror", type=Path, help="a folder of <owner>+<name>/repo git dirs")
    parser.add_argument("--systems", default="memoryd,fts5,bm25", help=f"of {', '.join(SYSTEMS)}")
    parser.add_argument(
        "--search", action="append", default=[], help="a search setting, e.g. score_floor=0"
    )
    args = parser.parse_args()
    SEARCH_SETTINGS.extend(s.replace("=", ": ", 1) for s in args.search)
    names = args.sets.split(",") if args.sets else list(HELD_OUT if args.heldout else DEVELOPMENT)
    systems = args.systems.split(",")
    print(f"hit@1 / hit@5 / hit@10 (sets: {', '.join(names)})\n")
    print(
        "| set, granularity / question type | memories | questions | " + " | ".join(systems) + " |"
    )
    print("|---|---:|---:|" + "---|" * len(systems))
    started = time.perf_counter()
    for name in names:
        for col in LOADERS[name](fetch(name, args.mirror)):
            if args.granularity and col.granularity != args.granularity:
                continue
            for line in report(col, score(col, systems)):
                print(line, flush=True)
    print(f"\n({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
