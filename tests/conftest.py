"""Test isolation: every test runs with its own MEMORYD_HOME, HOME and git identity.

The autouse ``isolated_home`` fixture points memoryd (and git, and platformdirs)
at ``tmp_path``; ``_real_home_guard`` fails any test that nevertheless wrote
into the real home directory's memoryd-related folders.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

# CI runs the suite once, on a fresh clone (no example database) on a loaded 2-core
# machine: a property test must not fail because one example was slow.
settings.register_profile("memoryd", deadline=None)
settings.register_profile("thorough", deadline=None, max_examples=5000)
settings.load_profile(os.environ.get("MEMORYD_HYPOTHESIS_PROFILE", "memoryd"))

REAL_HOME = Path.home()
WATCHED = [
    ".config/memoryd", ".cache/memoryd", ".local/state/memoryd", ".local/share/memoryd",
    ".config/opencode/memory", ".local/share/mimocode", ".claude",
    ".config/systemd/user", "Library/LaunchAgents",
]  # fmt: skip


def _snapshot() -> dict[str, tuple[int, int]]:
    seen: dict[str, tuple[int, int]] = {}
    for rel in WATCHED:
        top = REAL_HOME / rel
        if not top.exists():
            continue
        for dirpath, _dirs, files in os.walk(top):
            for name in [".", *files]:
                path = Path(dirpath, name)
                try:
                    st = path.stat()
                except OSError:
                    continue
                seen[str(path)] = (st.st_mtime_ns, st.st_size)
    return seen


@pytest.fixture(scope="session")
def _real_home_before() -> dict[str, tuple[int, int]]:
    return _snapshot()


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, _real_home_before: dict[str, tuple[int, int]]
) -> Iterator[Path]:
    """MEMORYD_HOME, HOME, XDG folders and git's global config, all under tmp_path."""
    mhome = tmp_path / "memoryd-home"
    home = tmp_path / "home"
    home.mkdir()
    gitconfig = tmp_path / "gitconfig"
    gitconfig.write_text(
        "[user]\n\tname = Test User\n\temail = test@example.invalid\n"
        "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n"
    )
    env = {
        "MEMORYD_HOME": str(mhome),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_STATE_HOME": str(home / ".local/state"),
        "GIT_CONFIG_GLOBAL": str(gitconfig),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_TERMINAL_PROMPT": "0",
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    # an agent's markers (a developer running the suite from Claude Code or OpenCode) would
    # make every CLI call an agent's call (memoryd.agent.caller), and its session would be
    # written into every memory (memoryd.agent.proposal)
    from memoryd.agent.caller import AGENT_ENV, MARKERS
    from memoryd.layouts.visible import SESSION_ENV

    markers = (AGENT_ENV, *(name for name, _ in MARKERS), *SESSION_ENV)
    for key in ("MIMOCODE_HOME", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", *markers):
        monkeypatch.delenv(key, raising=False)
    yield mhome
    after = _snapshot()
    changed = sorted(p for p, v in after.items() if _real_home_before.get(p) != v)
    assert not changed, f"test wrote into the real home directory: {changed[:5]}"
