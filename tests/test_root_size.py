"""ROOT.md stays small as memory grows: its compiled blocks are bounded, deterministically."""

from __future__ import annotations

import random

from memoryd.compile.blocks import (
    DIRECTORY_CHARS,
    ROUTING_CHARS,
    Entry,
    compile_entries,
    directory_lines,
    group,
    routing_lines,
)

LIMIT = 16 * 1024  # docs/compile.md: ROOT.md at 100k memories


def generated_root(n: int, seed: int) -> list[Entry]:
    """``n`` memories in 5 kinds × 40 folders (some nested), 3,000 triggers of Zipf-like
    popularity (English and Chinese), 30 iron rules."""
    rng = random.Random(seed)
    kinds = ["rules", "preferences", "decisions", "pitfalls", "facts"]
    triggers = [f"topic-{i}" for i in range(2000)] + [f"主题{i}" for i in range(1000)]
    weights = [1 / (r + 1) for r in range(len(triggers))]
    entries = []
    for number in range(n):
        kind = "rules" if number < 30 else kinds[1 + number % 4]
        folder = f"{kind}/{number % 40:02d}" + ("/deep" if number % 7 == 0 else "")
        name = f"memory-{number:06d}.md"
        load_when = tuple(dict.fromkeys(rng.choices(triggers, weights, k=rng.randint(0, 3))))
        entries.append(
            Entry(path=f"{folder}/{name}", id=f"{folder}/{name[:-3]}", kind=kind[:-1],
                  summary=f"memory {number} about {' '.join(load_when) or 'nothing'}",
                  load_when=load_when, superseded_by=None, folder=folder)
        )  # fmt: skip
    return entries


def test_root_md_stays_under_16_kb_at_100k_memories_and_is_deterministic() -> None:
    entries = generated_root(100_000, seed=15)
    compiled = compile_entries(entries, None, folders=())
    assert compiled.root_md is not None
    assert len(compiled.root_md) <= LIMIT, len(compiled.root_md)
    shuffled = list(entries)
    random.Random(1).shuffle(shuffled)
    assert compile_entries(shuffled, None, folders=()).root_md == compiled.root_md
    text = compiled.root_md.decode("utf-8")
    assert text.count("(`rules/") == 30  # every iron rule, never left out
    assert "| topic-0 | `" in text  # the trigger routing the most memories is kept
    assert " more triggers: each folder's index.md lists its memories" in text
    assert " more folders with " in text


def test_the_blocks_keep_what_routes_and_holds_the_most() -> None:
    entries = generated_root(20_000, seed=3)
    routing = routing_lines(entries)
    rows = [line for line in routing if line.startswith("| ") and "when the task" not in line]
    assert sum(len(line) + 1 for line in rows) <= ROUTING_CHARS
    kept = {line.split(" | ")[0][2:] for line in rows}
    counts: dict[str, int] = {}
    for entry in entries:
        for trigger in entry.load_when:
            counts[trigger] = counts.get(trigger, 0) + 1
    weakest_kept = min(counts[t] for t in kept)
    assert all(counts[t] <= weakest_kept for t in counts if t not in kept)
    assert any(line.endswith(" more |") for line in rows)  # a row names 3 ids, counts the rest
    directory = directory_lines(group(entries), {})
    folder_rows = [line for line in directory if line.startswith("| [")]
    assert sum(len(line) + 1 for line in folder_rows) <= DIRECTORY_CHARS


def test_a_small_root_is_listed_in_full() -> None:
    entries = generated_root(40, seed=4)
    text = (compile_entries(entries, None, folders=()).root_md or b"").decode("utf-8")
    assert "more triggers" not in text and "more folders" not in text
