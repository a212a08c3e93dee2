"""The CLI's start-up footprint: what ``memoryd recall`` imports, and only its own parser."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memoryd.app import App
from memoryd.commands import build_parser, command_word
from memoryd.paths import resolve_paths
from memoryd.runlock import DaemonLock
from tests.daemon.harness import DaemonProcess
from tests.helpers import run_cli
from tests.index.conftest import write_memory

# Never on the recall path: the daemon's and sync's libraries, PyYAML once the config is
# cached, OpenSSL when no file is read, and any other command's module.
HEAVY = ("git", "watchdog", "apscheduler", "yaml", "hashlib", "_hashlib", "mcp")


# memoryd's own modules that only a write needs: a read never loads them (nor, when no hit
# cites code, the citation checks).
WRITE_ONLY = (
    "memoryd.config.edit", "memoryd.compile.writer", "memoryd.agent.remember",
    "memoryd.agent.citing", "memoryd.cites.check", "memoryd.cites.citation",
    "memoryd.compile.blocks",  # the compiler: a settled read (every prompt's hook) never compiles
)  # fmt: skip

PROBE = (
    "import sys\n"
    "from memoryd.cli import main\n"
    "code = main()\n"
    "sys.stderr.write('modules: ' + ' '.join(sorted(sys.modules)) + '\\n')\n"
    "raise SystemExit(code)\n"
)


# What the console script's entry point (memoryd.entry) runs for a settled `memoryd recall`:
# the lean path, which imports none of these (each costs more than the query itself).
LEAN_NEVER = (
    "memoryd.cli", "argparse", "logging", "pathlib", "typing", "dataclasses", "inspect",
    "tempfile", "contextlib", "platformdirs", "yaml", "memoryd.app",
    "memoryd.config.sections", "memoryd.config.loader",  # the lean path reads config.snapshot
    "memoryd.index.db", "memoryd.index.search", "memoryd.index.reconcile", "memoryd.roots",
    "_socket",  # no socket file, no daemon to ask: memoryd.recall_client does not import it
    "re", "enum",  # a query is cut without a regex (memoryd.index.tokenizer._tokens)
    "importlib", "warnings",  # memoryd.index loads its names without importlib
    "memoryd.errors",  # ten classes to make: memoryd.runlock.running_pid needs none
)  # fmt: skip
ENTRY_PROBE = PROBE.replace("from memoryd.cli import main", "from memoryd.entry import main")

# Everything a recall answered by the daemon (memoryd.recall_client) imports beyond what a
# bare interpreter has loaded before its script runs: the socket module's C half (the
# socket module itself imports enum, selectors and more), four small modules (not even
# __future__: a tenth of what they cost) and gc.
SOCKET_CLIENT = (
    "_socket", "memoryd", "memoryd.entry", "memoryd.homedirs", "memoryd.recall_client",
    "gc",  # built in: a recall runs without the cyclic collector (memoryd.entry)
)  # fmt: skip
BARE_PROBE = "import sys\nsys.stderr.write('modules: ' + ' '.join(sorted(sys.modules)) + '\\n')\n"


def imported_modules(*args: str, cwd: Path, probe: str = PROBE) -> set[str]:
    """Every module a real ``memoryd`` process has imported when its command is done."""
    done = subprocess.run(
        [sys.executable, "-c", probe, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    last = done.stderr.splitlines()[-1]
    assert last.startswith("modules: ")
    return set(last.removeprefix("modules: ").split())


@pytest.fixture
def settled_home(isolated_home: Path, tmp_path: Path) -> Path:
    """An initialised home with one indexed memory and a config written a while ago."""
    assert run_cli("init").returncode == 0
    root = isolated_home / "memory"
    write_memory(root, "pitfalls/deploy.md", "部署脚本用 pnpm")
    past = time.time() - 60  # settled: neither re-read by the racy-mtime guard nor uncached
    for file in [*root.glob("**/*.md"), resolve_paths().config_file]:
        os.utime(file, (past, past))
    first = run_cli("recall", "pnpm", cwd=tmp_path)  # indexes the file, caches the config
    assert "pnpm" in first.stdout, first.stderr
    for file in root.glob("**/*.md"):  # the compiled files that recall just rewrote, settled
        os.utime(file, (past, past))
    assert run_cli("recall", "pnpm", cwd=tmp_path).returncode == 0  # their fingerprints
    return isolated_home


@pytest.mark.parametrize("daemon", [False, True], ids=["reconciling", "daemon-running"])
@pytest.mark.parametrize("command", ["recall", "context"])  # context: every prompt's hook
def test_reads_import_nothing_heavy(
    settled_home: Path, tmp_path: Path, daemon: bool, command: str
) -> None:
    if daemon:
        with DaemonLock(resolve_paths().lock_file):
            modules = imported_modules(command, "pnpm", cwd=tmp_path)
    else:
        modules = imported_modules(command, "pnpm", cwd=tmp_path)
    assert "memoryd.index.search" in modules  # the probe sees the read path's imports
    heavy = {m for m in modules if m.split(".")[0] in HEAVY}
    assert heavy == set()
    commands = {m for m in modules if m.startswith("memoryd.commands.")}
    assert commands == {f"memoryd.commands.{command}"}
    writers = {m for m in modules if m in WRITE_ONLY}
    assert writers == set()


@pytest.mark.parametrize("daemon", [False, True], ids=["reconciling", "daemon-running"])
def test_the_console_scripts_recall_takes_the_lean_path(
    settled_home: Path, tmp_path: Path, daemon: bool
) -> None:
    assert run_cli("recall", "pnpm", cwd=tmp_path).returncode == 0  # checks the index file
    if daemon:
        with DaemonLock(resolve_paths().lock_file):
            modules = imported_modules("recall", "pnpm", cwd=tmp_path, probe=ENTRY_PROBE)
    else:
        modules = imported_modules("recall", "pnpm", cwd=tmp_path, probe=ENTRY_PROBE)
    assert {"memoryd.lean_recall", "memoryd.index.fetch", "memoryd.index.ranking"} <= modules
    assert sorted(modules.intersection(LEAN_NEVER)) == []
    heavy = {m for m in modules if m.split(".")[0] in HEAVY}
    assert heavy == set()


def test_a_recall_the_daemon_answers_imports_only_the_socket_client(
    settled_home: Path, tmp_path: Path
) -> None:
    assert run_cli("recall", "pnpm", cwd=tmp_path).returncode == 0  # checks the index file
    bare = imported_modules(cwd=tmp_path, probe=BARE_PROBE)
    daemon = DaemonProcess(tmp_path)
    try:
        daemon.wait_serving(App(), tmp_path / "scratch")
        modules = imported_modules("recall", "pnpm", cwd=tmp_path, probe=ENTRY_PROBE)
        assert daemon.terminate() == 0
    finally:
        daemon.kill()
    assert sorted(modules - bare) == sorted(SOCKET_CLIENT)


def test_the_console_script_and_python_m_use_the_entry_point() -> None:
    import tomllib

    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    assert pyproject["project"]["scripts"]["memoryd"] == "memoryd.entry:main"
    main_module = Path(__file__).parents[1] / "src" / "memoryd" / "__main__.py"
    assert "from memoryd.entry import main" in main_module.read_text()


def test_a_new_file_is_read_with_what_reading_needs(settled_home: Path, tmp_path: Path) -> None:
    root = settled_home / "memory"
    write_memory(root, "pitfalls/yarn.md", "yarn berry breaks pnp", summary="yarn trouble")
    modules = imported_modules("recall", "yarn", cwd=tmp_path)
    assert "hashlib" in modules  # the content hash, loaded on demand
    assert "yaml" not in modules  # flat frontmatter is read by memoryd.frontmatter
    assert "git" not in modules
    found = run_cli("recall", "yarn", cwd=tmp_path)
    assert "yarn trouble" in found.stdout


SYNC = ("memoryd.sync", "memoryd.conflicts", "memoryd.held")  # sync's code, and its leaves
IDENTIFY = f"""
import sys
SYNC = {SYNC!r}
from memoryd.config.sections import RootConfig
from memoryd.index.layout import identify
from memoryd.memory import parse
for name in sys.argv[1:]:
    identify(RootConfig(path="/r"), name, parse(b"body"))
print(" ".join(m for m in sys.modules if m.startswith(SYNC)))
"""


def test_indexing_asks_sync_code_only_for_a_conflict_copy(settled_home: Path, tmp_path: Path) -> None:
    """Indexing asks memoryd.conflicts which memory a file belongs to only for a file
    named like a conflict copy (3 ms of imports for every other recall that reconciles).
    A reindex also compiles, which asks sync which files it holds back: never git."""

    def sync_modules(*names: str) -> str:
        done = subprocess.run(
            [sys.executable, "-c", IDENTIFY, *names],
            capture_output=True, text=True, timeout=60, check=True,
        )  # fmt: skip
        return done.stdout.strip()

    assert sync_modules("pitfalls/yarn.md") == ""
    assert "memoryd.conflicts" in sync_modules("pitfalls/yarn.conflict-l-20261129T233000Z.md")
    root = settled_home / "memory"
    write_memory(root, "pitfalls/yarn.md", "yarn berry breaks pnp", summary="yarn trouble")
    modules = imported_modules("reindex", "--full", cwd=tmp_path)
    assert {m for m in modules if m.startswith((*SYNC, "git", "memoryd.gitcli"))} == {
        "memoryd.conflicts", "memoryd.held",
    }  # fmt: skip
    copy = root / "pitfalls/yarn.conflict-laptop-20261129T233000Z.md"
    copy.write_bytes((root / "pitfalls/yarn.md").read_bytes())
    assert run_cli("reindex", cwd=tmp_path).returncode == 0
    found = run_cli("recall", "yarn", "--json", cwd=tmp_path)
    assert sorted(hit["id"] for hit in json.loads(found.stdout)) == [
        "pitfalls/yarn", "pitfalls/yarn.conflict-laptop-20261129T233000Z",
    ]  # fmt: skip


def test_command_word_skips_options_but_not_help() -> None:
    assert command_word(["-v", "recall", "x"]) == "recall"
    assert command_word(["recall", "-h"]) == "recall"
    assert command_word(["-h", "recall"]) is None
    assert command_word(["--", "recall"]) is None
    assert command_word(["--version"]) is None


@pytest.mark.parametrize(
    ("argv", "command"),
    [(["recall", "x"], "recall"), (["accept", "ID"], "accept"), (["status"], "status")],
)
def test_a_parser_for_one_command_parses_it(argv: list[str], command: str) -> None:
    args = build_parser(argv).parse_args(argv)
    assert args.command == command
    assert callable(args.handler)


def test_help_and_unknown_commands_still_list_every_command() -> None:
    listing = run_cli("--help")
    assert listing.returncode == 0
    for name in ("recall", "remember", "accept", "sync", "run", "status"):
        assert name in listing.stdout
    unknown = run_cli("nosuchcommand")
    assert unknown.returncode == 2
    assert "invalid choice: 'nosuchcommand'" in unknown.stderr
    assert "recall" in unknown.stderr and "sync" in unknown.stderr


# What `memoryd status` never needs: telling sync's problems reads the conflict list and the
# sync state files; only `memoryd sync` runs the engine (and the git plumbing under it).
STATUS_NEVER = ("memoryd.sync.engine", "memoryd.sync.commit", "memoryd.sync.backups")


def test_status_reports_sync_problems_without_the_sync_engine(
    settled_home: Path, tmp_path: Path
) -> None:
    daemon = DaemonProcess(tmp_path)
    try:
        daemon.wait_serving(App(), tmp_path / "scratch")
        modules = imported_modules("status", cwd=tmp_path)
        assert daemon.terminate() == 0
    finally:
        daemon.kill()
    assert {"memoryd.commands.status", "memoryd.sync.report"} <= modules
    assert sorted(modules.intersection(STATUS_NEVER)) == []
