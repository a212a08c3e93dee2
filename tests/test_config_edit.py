"""Adding or removing a root edits only that root's lines, for every config people write."""

from __future__ import annotations

import difflib
import tempfile
from pathlib import Path

from hypothesis import given, seed
from hypothesis import strategies as st

from memoryd.config.edit import register_root, unregister_root
from memoryd.config.loader import load_config
from memoryd.config.sections import RootConfig
from memoryd.paths import resolve_paths

COMMENTS = st.sampled_from(["# mine", "# 同步设置", "  # indented note", "#"])


@st.composite
def config_text(draw: st.DrawFn) -> tuple[str, int]:
    """A hand-written config.yaml with a block ``roots:`` list; how many roots it lists."""
    indent = draw(st.sampled_from(["", "  ", "    "]))
    count = draw(st.integers(1, 4))
    items: list[str] = []
    for number in range(count):
        if draw(st.booleans()):
            items.append(draw(COMMENTS))
        items.append(f"{indent}- path: /m{number}" + draw(st.sampled_from(["", "  # why"])))
        extra = draw(
            st.sampled_from(["", "layout: plugin", "sync: {push: false}", "watch: polling"])
        )
        if extra:
            items.append(f"{indent}  {extra}")
    before = draw(st.lists(st.sampled_from(["device: laptop", "# top", ""]), max_size=3))
    after = draw(
        st.sampled_from(
            [[], ["search:", "  limit: 3"], ["", "# daemon", "daemon:", "  quiet_ms: 200"]]
        )
    )
    lines = [*before, "roots:" + draw(st.sampled_from(["", "   # the list"])), *items, *after]
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    return newline.join(lines) + newline, count


def ops(before: str, after: str) -> list[tuple[str, int, int]]:
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    found = difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes()
    return [(tag, i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in found if tag != "equal"]


@seed(1919)
@given(case=config_text(), which=st.integers(0, 3))
def test_an_added_root_is_one_inserted_entry_and_a_removed_one_only_its_lines(
    case: tuple[str, int], which: int
) -> None:
    with tempfile.TemporaryDirectory() as home:  # a fresh home (and config cache) per example
        check_edits(Path(home), *case, which)


def check_edits(home: Path, text: str, count: int, which: int) -> None:
    file = home / "config.yaml"
    file.write_bytes(text.encode())
    paths = resolve_paths({"MEMORYD_HOME": str(home), "HOME": str(home)})
    config = load_config(paths)
    new = RootConfig(path=Path("/p/.memory"), scope="project")
    register_root(paths, config, new)
    added = file.read_bytes().decode()
    assert ops(text, added) == [("insert", 0, 3)]
    assert [r.path for r in load_config(paths).roots] == [*(r.path for r in config.roots), new.path]
    gone = config.roots[which % count].path
    unregister_root(paths, load_config(paths), gone)
    removed = file.read_bytes().decode()
    assert [op[0] for op in ops(added, removed)] == ["delete"]
    assert [r.path for r in load_config(paths).roots] == [
        *(r.path for r in config.roots if r.path != gone),
        new.path,
    ]
