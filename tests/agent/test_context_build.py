from __future__ import annotations

import pytest

from memoryd.injection import CUT, RootBlocks, Shown, build, cut_body, rules_left_out

GLOBAL = RootBlocks(
    "global",
    "/g",
    {
        "rules": ["## Iron rules", "", "- Never force-push main (`rules/no-force-push`)"],
        "directory": [
            "## Directory", "", "| folder | memories | what is in it |", "|---|---|---|",
            "| [rules/](rules/index.md) | 1 | Iron rules |", "| facts/ | 0 | Facts |",
        ],
        "routing": ["## Routing", "", "_No memory has `load_when` triggers yet._"],
    },
)  # fmt: skip
PROJECT = RootBlocks(
    "project",
    "/p/.memory",
    {
        "rules": ["## Iron rules", "", "- 部署只用 pnpm (`rules/pnpm`)"],
        "directory": ["## Directory", "", "| [pitfalls/](pitfalls/index.md) | 2 | 坑 |"],
        "routing": ["## Routing", "", "| when the task involves | load |", "|---|---|",
                    "| 分词 | `pitfalls/fts5` |"],
    },
)  # fmt: skip
HITS = [
    Shown("pitfalls/fts5", "project", "pitfall", "unicode61 把整段中文当一个 token",
          "第一行：实测查“部署”0 命中\n第二行：trigram 要求至少三个字符\n第三行：所以自己切二元组"),
    Shown("facts/deploy", "global", "fact", "Deploys run from the bastion", "Line one.\nLine two."),
    Shown("facts/other", "global", "fact", "Other", "More."),
]  # fmt: skip


def test_layers_come_in_order_global_rules_first() -> None:
    block = build([PROJECT, GLOBAL], HITS, max_chars=1200, max_entries=4, outline_chars=800)
    text = block.text
    assert text.startswith("<memory>\n## Iron rules")
    assert text.index("Never force-push main") < text.index("部署只用 pnpm")
    assert block.rules == [
        "- Never force-push main (`rules/no-force-push`) [global]",
        "- 部署只用 pnpm (`rules/pnpm`) [project]",
    ]
    assert (
        text.index("## Iron rules")
        < text.index("## Memory outline")
        < text.index("## Relevant memories")
    )
    assert "- rules/ (1): Iron rules\n" in text
    assert "facts/ (0)" not in text  # empty folders stay out of the outline
    assert "- 分词 → `pitfalls/fts5`" in text
    assert "#### Routing\n" in text.split("### project memory")[1]
    assert "#### Routing" not in text.split("### project memory")[0]  # no triggers: no block
    assert "|" not in text.split("## Memory outline")[1]
    assert "第三行：所以自己切二元组" in text and "Line two." in text
    assert text.endswith("</memory>\n")
    assert not block.cut


def test_same_inputs_same_bytes() -> None:
    one = build([GLOBAL, PROJECT], HITS, 1200, 4, 800).text
    two = build([PROJECT, GLOBAL], list(HITS), 1200, 4, 800).text
    assert one == two


def test_the_body_budget_cuts_at_a_line_boundary_with_a_marker() -> None:
    first_two = len("第一行：实测查“部署”0 命中\n第二行：trigram 要求至少三个字符")
    block = build([GLOBAL], HITS, max_chars=first_two + 1, max_entries=4, outline_chars=800)
    assert "第二行：trigram 要求至少三个字符\n" + CUT.format(id="pitfalls/fts5") in block.text
    assert "第三行" not in block.text
    assert "facts/deploy" not in block.text
    assert block.cut
    assert block.entries == [
        {"id": "pitfalls/fts5", "scope": "project", "kind": "pitfall",
         "summary": "unicode61 把整段中文当一个 token", "cut": True},
    ]  # fmt: skip


def test_max_entries_limits_the_bodies_and_rules_are_never_cut() -> None:
    block = build([GLOBAL, PROJECT], HITS, max_chars=1200, max_entries=1, outline_chars=0)
    assert [e["id"] for e in block.entries] == ["pitfalls/fts5"]
    assert "## Memory outline" not in block.text
    assert "部署只用 pnpm" in block.text and "Never force-push" in block.text


def test_the_outline_is_cut_with_a_marker() -> None:
    views = [GLOBAL, big_root("project", "/p/.memory", 30)]
    block = build(views, [], max_chars=1200, max_entries=4, outline_chars=400)
    assert "[… project outline cut: /p/.memory/ROOT.md has all of it]" in block.text
    assert block.cut_roots == ["/p/.memory"]  # the small global outline fits whole
    assert "## Relevant memories" not in block.text


def test_an_outline_with_no_room_left_is_announced() -> None:
    block = build([GLOBAL, PROJECT], [], max_chars=1200, max_entries=4, outline_chars=60)
    assert "## Memory outline" not in block.text
    assert "[… outline left out (size limit): each root's ROOT.md has it]" in block.text
    assert block.cut_roots == ["/p/.memory", "/g"]


def test_a_rule_already_shown_is_not_repeated_as_a_body() -> None:
    rule = Shown("rules/pnpm", "project", "rule", "部署只用 pnpm", "因为 lockfile 不兼容")
    block = build([PROJECT], [rule, HITS[1]], 1200, 4, 800)
    assert [e["id"] for e in block.entries] == ["facts/deploy"]


def test_total_body_text_stays_within_budget() -> None:
    for budget in range(0, 120, 7):
        block = build([], HITS, max_chars=budget, max_entries=4, outline_chars=0)
        if budget == 0:
            assert "## Relevant memories" not in block.text
            continue
        section = block.text.split("## Relevant memories", 1)[1].split("</memory>")[0]
        body_lines = [
            line for line in section.splitlines()[1:]
            if line and not line.startswith(("### ", "[… cut"))
        ]  # fmt: skip
        newlines_inside = len(body_lines) - len(block.entries)
        assert sum(len(line) for line in body_lines) + newlines_inside <= budget


def test_one_long_line_is_cut_inside_rather_than_dropped() -> None:
    text, cut = cut_body("alpha beta gamma delta", 12)
    assert (text, cut) == ("alpha beta", True)
    assert cut_body("short\nbody\n", 100) == ("short\nbody", False)


def big_root(scope: str, path: str, folders: int) -> RootBlocks:
    rows = [f"| [f{i:02}/](f{i:02}/index.md) | {i + 1} | folder number {i} of {scope} |"
            for i in range(folders)]  # fmt: skip
    head = ["## Directory", "", "| folder | memories | what is in it |", "|---|---|---|"]
    return RootBlocks(scope, path, {"directory": head + rows})


def test_the_project_outline_comes_first_and_each_root_gets_a_fair_part() -> None:
    project, global_ = big_root("project", "/p/.memory", 40), big_root("global", "/g", 40)
    block = build([global_, project], [], 1200, 4, outline_chars=800)
    outline = block.text.split("## Memory outline", 1)[1]
    assert outline.index("### project memory (/p/.memory)") < outline.index("### global memory")
    project_part, global_part = outline.split("### global memory")
    assert abs(len(project_part) - len(global_part)) < 120  # neither root eats the budget
    assert block.cut_roots == ["/p/.memory", "/g"]
    assert "[… project outline cut: /p/.memory/ROOT.md has all of it]" in outline
    assert "[… global outline cut: /g/ROOT.md has all of it]" in outline


def test_a_small_root_leaves_its_share_to_the_next() -> None:
    project, global_ = big_root("project", "/p/.memory", 1), big_root("global", "/g", 40)
    block = build([project, global_], [], 1200, 4, outline_chars=800)
    assert block.cut_roots == ["/g"]
    outline = block.text.split("## Memory outline", 1)[1].split("</memory>")[0]
    assert len(outline) > 650  # the global root used what the project left


def test_the_current_goal_is_part_of_the_block() -> None:
    project = RootBlocks(
        "project", "/p/.memory", PROJECT.blocks, ["Ship the 2.0 sync engine", "by March"]
    )
    text = build([GLOBAL, project], [], 1200, 4, 800).text
    assert (
        "\n\n## Current goal\n### project (/p/.memory)\nShip the 2.0 sync engine\nby March\n"
        in text
    )
    assert (
        text.index("## Iron rules")
        < text.index("## Current goal")
        < text.index("## Memory outline")
    )
    assert "## Current goal" not in build([GLOBAL, PROJECT], [], 1200, 4, 800).text


def many_rules(count: int) -> RootBlocks:
    rules = [f"- Rule number {i} says something long enough to matter (`rules/r{i:03}`)"
             for i in range(count)]  # fmt: skip
    return RootBlocks("global", "/g", {"rules": ["## Iron rules", "", *rules]})


@pytest.mark.parametrize("total", [2000, 5000, 8000, 9999])
def test_the_block_never_exceeds_the_total(total: int) -> None:
    hits = [Shown(f"facts/x{i}", "global", "fact", "summary " * 20, "body line\n" * 200)
            for i in range(6)]  # fmt: skip
    views = [many_rules(40), big_root("project", "/p/.memory", 80)]
    for body_chars in (0, 1200, 50_000):
        block = build(views, hits, body_chars, 6, 5000, total_chars=total)
        assert len(block.text) <= total


def test_rules_over_the_budget_are_counted_and_pointed_to() -> None:
    block = build([many_rules(200), PROJECT], HITS, 1200, 4, 800, total_chars=8000)
    assert len(block.text) <= 8000
    assert block.rules_left_out > 0
    shown = [line for line in block.text.splitlines() if line.startswith("- Rule number")]
    assert len(shown) + block.rules_left_out == 201  # the project's one rule is left out too
    notice = (
        f"[… {block.rules_left_out} iron rule(s) left out: over injection.max_total_chars (8000); "
        "all are in /g/ROOT.md, /p/.memory/ROOT.md]"
    )
    assert notice in block.text
    assert block.cut
    assert rules_left_out([many_rules(200), PROJECT], 8000) == block.rules_left_out
    assert rules_left_out([many_rules(10), PROJECT], 8000) == 0


def test_bodies_that_do_not_fit_the_total_are_announced() -> None:
    hits = [Shown(f"facts/x{i}", "global", "fact", "s", "line\n" * 50) for i in range(4)]
    block = build([many_rules(95)], hits, 50_000, 4, 0, total_chars=8000)
    assert len(block.text) <= 8000
    assert "more relevant memor" in block.text and "left out (size limit)" in block.text
