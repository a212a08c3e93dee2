"""config.yaml's sections: every section a frozen dataclass, with its defaults.

:mod:`memoryd.config.loader` walks the dataclass fields, so adding a setting is adding a
field with a default here. Loaded once at the entry point into a frozen :class:`Config`,
passed down. No YAML here: a command that only reads settings imports this and the
config cache, never PyYAML.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from memoryd.errors import ConfigError

LAYOUTS = ("plugin", "layered", "claude")
SCOPES = ("global", "team", "project")
TEAM_NAME = re.compile(r"(?:[A-Za-z0-9][A-Za-z0-9._-]{0,63})?")  # "" for a personal root
TEAMS_DIR = "teams"  # <config folder>/teams/NAME: the clones `memoryd init --team` makes
WATCH_MODES = ("auto", "events", "polling")  # see memoryd.daemon.watch


@dataclass(frozen=True)
class SyncPolicy:
    """How one root travels through git. Defaults depend on the root's scope."""

    commit: bool = True  # auto-commit local changes
    push: bool = True
    pull: bool = True
    remote: str = "origin"
    debounce_s: float = 30.0  # wait this long after a batch before a sync cycle
    mass_delete_share: float = 0.5  # pause when a cycle deletes more than this share
    mass_delete_min: int = 3  # ...and at least this many memories
    stale_lock_s: float = 60.0  # a git lock this old is moved aside (told while a git may hold it)
    backup_keep_days: float = 90.0  # replay backup refs older than this are deleted; 0: never
    ahead_warn_s: float = 900.0  # commits not pushed for this long are a problem; 0: never
    # a team root reviewed as pull requests: push to memoryd/proposals/<user>/<device>,
    # only fetch main (memoryd.sync.proposals)
    team_branch: bool = False


PROJECT_SYNC = SyncPolicy(commit=False, push=False, pull=False)


@dataclass(frozen=True)
class RootConfig:
    """One memory root. Without an explicit ``sync``, the scope's default policy."""

    path: Path
    layout: str = "plugin"
    scope: str = "global"
    sync: SyncPolicy = None  # type: ignore[assignment]  # filled in by __post_init__
    watch: str = "auto"  # auto: poll on a network file system | events | polling
    team: str = ""  # a team root's name: what agents write here is proposed (docs/team.md)
    # this device's name (config.yaml's device): its own proposals are the ones it indexes
    viewer: str = field(default="", compare=False, repr=False)
    given: str = field(default="", compare=False, repr=False)  # the path before resolving

    def __post_init__(self) -> None:
        # resolved once, here: a root reached through a symlink (a dotfiles repo; /tmp and
        # /var on macOS) must be the same path to git, the compiler, the index and sync
        object.__setattr__(self, "given", self.given or str(self.path))
        object.__setattr__(self, "path", Path(os.path.realpath(self.path)))
        if self.sync is None:
            object.__setattr__(self, "sync", default_policy(self.scope))  # type: ignore[unreachable]

    @property
    def is_team(self) -> bool:
        """Shared with a team: agents' writes are proposals, reviewed by a person."""
        return bool(self.team)

    def resolves_now(self) -> str:
        """Where the configured path leads today: not ``path`` once a symlink was put in
        its place, retargeted or replaced by a folder (a long-running daemon must see it)."""
        return os.path.realpath(self.given)


def default_policy(scope: str) -> SyncPolicy:
    return PROJECT_SYNC if scope == "project" else SyncPolicy()


@dataclass(frozen=True)
class SearchConfig:
    """How recall ranks and cuts its hits (see docs/search.md)."""

    limit: int = 10
    score_floor: float = 0.15
    half_life_days: float = 14.0
    decay_floor: float = 0.65  # the time decay never lowers a score below this share
    project_prior: float = 1.0
    global_prior: float = 0.5
    team_prior: float = 0.75  # a team root ranks between the project and the global root
    recall_boost_max: float = 0.5  # the hit-count boost tends to 1 + this
    max_file_bytes: int = 1024 * 1024
    duplicate_coverage: float = 0.8
    semantic: bool = False  # the embedding stage (pip install 'memoryd[semantic]')


@dataclass(frozen=True)
class InjectionConfig:
    """How much ``memoryd context`` injects into a prompt."""

    max_chars: int = 1200
    max_entries: int = 4
    outline_chars: int = 800  # the outline layer of `memoryd context`, shared fairly by the roots
    # The whole block, iron rules first: Claude Code stops inlining a hook's output above 10,000.
    max_total_chars: int = 8000


@dataclass(frozen=True)
class RebuildConfig:
    """Token budgets of ``memoryd context --rebuild`` (see memoryd.agent.budget for tokens)."""

    checkpoint_tokens: int = 11000  # sessions/<sid>/checkpoint.md
    project_tokens: int = 10000  # projects/<pid>/MEMORY.md
    notes_tokens: int = 6000  # sessions/<sid>/notes.md
    global_tokens: int = 6000  # global/MEMORY.md
    index_tokens: int = 500  # the list of memory keys for this session, project and global


@dataclass(frozen=True)
class ExtractConfig:
    """Auto-extraction from agents' session transcripts (see memoryd.extract)."""

    command: str = ""  # the extractor: a shell command reading stdin, answering JSON; "" = off
    settle_ms: int = 20000  # a session's turn has ended after this much quiet
    min_turns: int = 4  # a session needs this many user turns before anything is extracted
    min_chars: int = 200  # ...and this many characters of new conversation
    max_chars: int = 60000  # at most this much of the newest conversation goes to the command
    max_memories: int = 8  # at most this many memories written from one extraction
    timeout_s: float = 180.0  # the command is killed after this long
    claude: bool = True  # watch Claude Code's transcripts (~/.claude/projects/<slug>/*.jsonl)
    opencode: bool = True  # watch OpenCode's sessions (<XDG data>/opencode)


@dataclass(frozen=True)
class CompileConfig:
    """What the compiler writes into ROOT.md and index.md beyond the memories."""

    folder_descriptions: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class DaemonConfig:
    """The daemon's batching and polling intervals."""

    quiet_ms: int = 150
    max_wait_ms: int = 1000
    burst_files: int = 500  # a batch larger than this becomes one reconcile
    reconcile_interval_s: float = 600.0
    sync_interval_s: float = 300.0  # periodic pull
    poll_interval_s: float = 1.0  # when falling back to polling
    root_check_s: float = 2.0  # how often to look for roots that vanished or came back
    inspect_after_s: float = 20.0  # inspect's findings for the page, this long after a batch


@dataclass(frozen=True)
class LayeredConfig:
    """The layered memory tree (layout: layered)."""

    disable_write: bool = False  # `memoryd guard` refuses every write into the tree


def default_device() -> str:
    return os.uname().nodename.split(".")[0] or "device"  # gethostname(), without socket


@dataclass(frozen=True)
class Config:
    """The whole of config.yaml, every section filled in with its defaults."""

    device: str = field(default_factory=default_device)
    roots: tuple[RootConfig, ...] = ()
    search: SearchConfig = field(default_factory=SearchConfig)
    injection: InjectionConfig = field(default_factory=InjectionConfig)
    rebuild: RebuildConfig = field(default_factory=RebuildConfig)
    extract: ExtractConfig = field(default_factory=ExtractConfig)
    compile: CompileConfig = field(default_factory=CompileConfig)
    daemon: DaemonConfig = field(default_factory=DaemonConfig)
    layered: LayeredConfig = field(default_factory=LayeredConfig)
    source: Path | None = field(default=None, compare=False)

    def root_for(self, path: Path) -> RootConfig | None:
        """The configured root that contains ``path`` (the deepest one)."""
        best: RootConfig | None = None
        for root in self.roots:
            inside = path == root.path or root.path in path.parents
            if inside and (best is None or len(root.path.parts) > len(best.path.parts)):
                best = root
        return best


NOT_UTF8_ROOT = "is not valid UTF-8, so the search index cannot hold the memories in it"


def utf8_path(path: Path) -> bool:
    """Can ``path`` be kept in the index (SQLite text is UTF-8)? A folder name in Latin-1
    bytes reaches Python as lone surrogates, which no UTF-8 text can hold."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def refuse_non_utf8_root(path: Path) -> None:
    """Refuse, before anything is created, a root the index could never hold: registered,
    it made every recall, remember and the daemon fail on its path."""
    if not utf8_path(path):
        raise ConfigError(
            f"{shown_path(path)} {NOT_UTF8_ROOT}",
            hint="rename the folder to a UTF-8 name (e.g. mv it from a shell whose locale "
            "is UTF-8), then run this again",
        )


def shown_path(path: Path) -> str:
    """``path`` with the bytes of a non-UTF-8 name as ``\\xe9`` (an error's only: the
    memory module is not imported for config.yaml's every read)."""
    from memoryd.memory import printable

    return printable(str(path))
