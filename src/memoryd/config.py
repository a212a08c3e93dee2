"""config.yaml: loaded once at the entry point into a frozen object, passed down.

Every section is a frozen dataclass; the loader walks the dataclass fields, so
adding a setting is adding a field with a default. An unknown key or a value
of the wrong type is a :class:`ConfigError` naming the key and the file.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memoryd.errors import ConfigError
from memoryd.fsutil import atomic_write
from memoryd.paths import Paths
from memoryd.suggest import did_you_mean

if TYPE_CHECKING:  # only registering a root edits the file: kept off every command's start-up
    from memoryd import config_edit

LAYOUTS = ("plugin", "layered", "claude")
CONFIG_CACHE = "config.marshal"  # in the cache folder: see memoryd.config_cache
SCOPES = ("global", "project")
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


PROJECT_SYNC = SyncPolicy(commit=False, push=False, pull=False)


@dataclass(frozen=True)
class RootConfig:
    """One memory root. Without an explicit ``sync``, the scope's default policy."""

    path: Path
    layout: str = "plugin"
    scope: str = "global"
    sync: SyncPolicy = None  # type: ignore[assignment]  # filled in by __post_init__
    watch: str = "auto"  # auto: poll on a network file system | events | polling
    given: str = field(default="", compare=False, repr=False)  # the path before resolving

    def __post_init__(self) -> None:
        # resolved once, here: a root reached through a symlink (a dotfiles repo; /tmp and
        # /var on macOS) must be the same path to git, the compiler, the index and sync
        object.__setattr__(self, "given", self.given or str(self.path))
        object.__setattr__(self, "path", Path(os.path.realpath(self.path)))
        if self.sync is None:
            object.__setattr__(self, "sync", default_policy(self.scope))  # type: ignore[unreachable]

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
    recall_boost_max: float = 0.5  # the hit-count boost tends to 1 + this
    max_file_bytes: int = 1024 * 1024
    duplicate_coverage: float = 0.8


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


def load_config(paths: Paths) -> Config:
    """Read ``config.yaml`` (absent means all defaults, with the default global root)."""
    from memoryd.config_cache import ConfigCache

    file = paths.config_file
    cache = ConfigCache(paths.cache_dir / CONFIG_CACHE)
    try:
        stamp, mtime = cache.stamp(file)
        data = cache.get(stamp)
        if data is None:
            data = _yaml_data(file.read_text(encoding="utf-8"), file)
            cache.put(stamp, mtime, data)
    except FileNotFoundError:
        return Config(roots=(default_global(paths),))
    except UnicodeDecodeError as exc:
        raise _not_utf8(file, exc) from exc
    except OSError as exc:
        raise ConfigError(f"cannot read {file}: {exc}", hint="check its permissions") from exc
    return build_config(data, file, paths)


def _not_utf8(file: Path, exc: UnicodeDecodeError) -> ConfigError:
    return ConfigError(
        f"{file} is not valid UTF-8 (byte {exc.start} is {exc.object[exc.start]:#04x})",
        hint=f"save {file} as UTF-8 in your editor (memoryd reads nothing else)",
    )


def parse_config(text: str, file: Path, paths: Paths) -> Config:
    return build_config(_yaml_data(text, file), file, paths)


def _yaml_data(text: str, file: Path) -> Any:
    import yaml  # 10 ms of imports, spared when the config cache answers

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(
            f"{_where(file, exc)}: not valid YAML: {_yaml_problem(exc)}",
            hint=f"fix that line of {file} (see docs/config.md), or move the file aside",
        ) from exc
    return {} if data is None else data


def _where(file: Path, exc: Exception) -> str:
    """``file:line:column`` of a YAML error (1-based), or the file alone."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    return f"{file}:{mark.line + 1}:{mark.column + 1}" if mark is not None else str(file)


def _yaml_problem(exc: Exception) -> str:
    problem = str(getattr(exc, "problem", None) or type(exc).__name__)
    if "'\\t'" in problem:
        return "YAML does not allow tabs; indent with spaces"
    return " ".join(problem.split())


def build_config(data: Any, file: Path, paths: Paths) -> Config:
    """The config that ``data`` (config.yaml, parsed) describes, validated."""
    if not isinstance(data, dict):
        raise ConfigError(f"{file}: the top level must be a mapping of settings")
    loader = _Loader(file)
    raw_roots = data.pop("roots", None)
    config: Config = loader.build(Config, data, "")
    if raw_roots is None:
        roots: tuple[RootConfig, ...] = (default_global(paths),)
    else:
        roots = loader.roots(raw_roots)
    loader.check()  # every problem of the file at once, not one edit at a time
    return dataclasses.replace(config, roots=roots, source=file)


def default_global(paths: Paths) -> RootConfig:
    return RootConfig(path=paths.default_global_root, layout="plugin", scope="global")


_ROOT_KEYS = ("layout", "path", "scope", "sync", "watch")  # what a root's mapping may hold


class _Loader:
    """Builds the config's classes from config.yaml's data, noting every problem and going
    on with the default in its place; :meth:`check` raises them as one error, each
    ``key: what is wrong``, so a file with three typos is fixed in one round."""

    def __init__(self, file: Path) -> None:
        self.file = file
        self.problems: list[str] = []
        self.hint = f"edit {file} (see docs/config.md)"

    def fail(self, key: str, message: str) -> ConfigError:
        return ConfigError(f"{self.file}: {key}: {message}", hint=self.hint)

    def note(self, key: str, message: str) -> None:
        self.problems.append(f"{key}: {message}")

    def check(self) -> None:
        if self.problems:
            raise ConfigError(f"{self.file}: " + "; ".join(self.problems), hint=self.hint)

    def build(self, cls: type[Any], data: Any, prefix: str) -> Any:
        if not isinstance(data, dict):
            self.note(prefix.rstrip(".") or "top level", "must be a mapping")
            return cls()
        fields = {f.name: f for f in dataclasses.fields(cls) if f.name not in ("source", "roots")}
        values: dict[str, Any] = {}
        for key, value in data.items():
            if key not in fields:
                keys = sorted({*fields, *(("roots",) if cls is Config else ())})
                guess = did_you_mean(key, keys) or f" (known keys here: {', '.join(keys)})"
                self.note(f"{prefix}{key}", f"unknown key{guess}")
                continue
            values[key] = self.convert(fields[key], value, f"{prefix}{key}")
        return cls(**values)

    def convert(self, spec: dataclasses.Field[Any], value: Any, key: str) -> Any:
        default = spec.default
        if default is dataclasses.MISSING and spec.default_factory is not dataclasses.MISSING:
            default = spec.default_factory()
        if dataclasses.is_dataclass(default):
            return self.build(type(default), value, key + ".")
        problem = _type_error(default, value)
        if problem:
            self.note(key, problem)
            return default
        if isinstance(value, int | float) and not isinstance(value, bool) and value < 0:
            self.note(key, f"must not be negative, got {value!r}")
            return default
        return float(value) if isinstance(default, float) else value

    def roots(self, raw: Any) -> tuple[RootConfig, ...]:
        if not isinstance(raw, list):
            self.note("roots", "must be a list of roots")
            return ()
        roots = []
        for number, item in enumerate(raw):
            try:
                roots.append(self.root(item, f"roots[{number}]"))
            except ConfigError as exc:  # this root's first problem; the others go on
                self.problems.append(exc.message.removeprefix(f"{self.file}: "))
        seen: set[Path] = set()
        for root in roots:
            if root.path in seen:
                self.note("roots", f"{root.path} is listed twice")
            seen.add(root.path)
        return tuple(roots)

    def root(self, item: Any, key: str) -> RootConfig:
        if not isinstance(item, dict):
            raise self.fail(key, "must be a mapping with at least 'path'")
        item = dict(item)
        unknown = set(item) - set(_ROOT_KEYS)
        if unknown:
            first = sorted(unknown)[0]
            guess = did_you_mean(first, _ROOT_KEYS) or f" (known: {', '.join(_ROOT_KEYS)})"
            raise self.fail(f"{key}.{first}", f"unknown key{guess}")
        raw_path = item.get("path")
        if not isinstance(raw_path, str) or not raw_path:
            raise self.fail(f"{key}.path", "is required and must be a string")
        path = Path(raw_path).expanduser()
        if not path.is_absolute():
            raise self.fail(
                f"{key}.path",
                f"must be an absolute path (or start with ~/), got {raw_path!r}",
            )
        if not utf8_path(path):
            raise self.fail(
                f"{key}.path",
                f"{_shown(path)} {NOT_UTF8_ROOT}: rename the folder to a UTF-8 name and "
                "write the new path here, or remove this root",
            )
        layout = item.get("layout", "plugin")
        if layout not in LAYOUTS:
            guess = did_you_mean(layout, LAYOUTS)
            raise self.fail(
                f"{key}.layout", f"must be one of {', '.join(LAYOUTS)}, got {layout!r}{guess}"
            )
        scope = item.get("scope", "global")
        if scope not in SCOPES:
            guess = did_you_mean(scope, SCOPES)
            raise self.fail(
                f"{key}.scope", f"must be one of {', '.join(SCOPES)}, got {scope!r}{guess}"
            )
        watch = item.get("watch", "auto")
        if watch not in WATCH_MODES:
            choices = ", ".join(WATCH_MODES)
            guess = did_you_mean(watch, WATCH_MODES)
            raise self.fail(f"{key}.watch", f"must be one of {choices}, got {watch!r}{guess}")
        base_policy = default_policy(scope)
        sync_raw = item.get("sync", {})
        if sync_raw is False:
            policy = dataclasses.replace(base_policy, commit=False, push=False, pull=False)
        elif sync_raw is True:
            policy = dataclasses.replace(base_policy, commit=True, push=True, pull=True)
        else:
            given = self.build(SyncPolicy, sync_raw, f"{key}.sync.")
            names = {f.name for f in dataclasses.fields(SyncPolicy)}
            given_keys = sync_raw if isinstance(sync_raw, dict) else {}  # else noted by build
            explicit = {k: getattr(given, k) for k in given_keys if k in names}
            policy = dataclasses.replace(base_policy, **explicit)
        return RootConfig(path=Path(path), layout=layout, scope=scope, sync=policy, watch=watch)


def _type_error(default: Any, value: Any) -> str | None:
    """Why ``value`` cannot stand where ``default`` does (None when it can)."""
    if isinstance(default, bool):
        ok, want = isinstance(value, bool), "true or false"
    elif isinstance(default, int):
        ok, want = isinstance(value, int) and not isinstance(value, bool), "a whole number"
    elif isinstance(default, float):
        ok, want = isinstance(value, int | float) and not isinstance(value, bool), "a number"
    elif isinstance(default, str):
        ok, want = isinstance(value, str) and bool(value), "a non-empty string"
    elif isinstance(default, dict):
        ok = isinstance(value, dict) and all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()
        )
        return None if ok else "must be a mapping of strings to strings"
    else:
        return None
    return None if ok else f"must be {want}, got {value!r}"


def root_to_yaml(root: RootConfig) -> dict[str, Any]:
    """The config.yaml entry for a root (sync settings only where they differ)."""
    # the path as config.yaml gave it: a root reached through a symlink stays so in the file
    entry: dict[str, Any] = {"path": root.given, "layout": root.layout, "scope": root.scope}
    base = default_policy(root.scope)
    diff = {
        f.name: getattr(root.sync, f.name)
        for f in dataclasses.fields(SyncPolicy)
        if getattr(root.sync, f.name) != getattr(base, f.name)
    }
    if diff:
        entry["sync"] = diff
    if root.watch != "auto":
        entry["watch"] = root.watch
    return entry


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
            f"{_shown(path)} {NOT_UTF8_ROOT}",
            hint="rename the folder to a UTF-8 name (e.g. mv it from a shell whose locale "
            "is UTF-8), then run this again",
        )


def _shown(path: Path) -> str:
    """``path`` with the bytes of a non-UTF-8 name as ``\\xe9`` (an error's only: the
    memory module is not imported for config.yaml's every read)."""
    from memoryd.memory import printable

    return printable(str(path))


def register_root(paths: Paths, config: Config, root: RootConfig) -> Config:
    """Add ``root`` to config.yaml (no-op when it is already there).

    The file is edited in place (see memoryd.config_edit): the user's comments and
    order stay; when that is impossible nothing is written and the error says what
    to add by hand.
    """
    from memoryd import config_edit

    if any(r.path == root.path for r in config.roots):
        return config
    refuse_non_utf8_root(root.path)
    roots = (*config.roots, root)
    file = paths.config_file
    text = _current_text(file)
    implied = "".join(_entry_text(r) for r in config.roots)
    want = [r.path for r in roots]
    change = config_edit.Change(file, text, want, _reader(file, paths))
    edited = config_edit.add_entry(change, _entry_text(root), implied)
    atomic_write(file, edited.encode("utf-8"))
    return dataclasses.replace(config, roots=roots, source=file)


def unregister_root(paths: Paths, config: Config, path: Path) -> Config:
    """Remove the root at ``path`` from config.yaml (no-op when it is not there)."""
    from memoryd import config_edit

    gone = [r for r in config.roots if r.path == path]
    if not gone:
        return config
    kept = tuple(r for r in config.roots if r.path != path)
    file = paths.config_file
    want = [r.path for r in kept]
    change = config_edit.Change(file, _current_text(file), want, _reader(file, paths))
    edited = config_edit.remove_entry(change, path, _entry_text(gone[0]))
    atomic_write(file, edited.encode("utf-8"))
    return dataclasses.replace(config, roots=kept, source=file)


def _current_text(file: Path) -> str:
    try:
        return file.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return ""
    except UnicodeDecodeError as exc:
        raise _not_utf8(file, exc) from exc


def _entry_text(root: RootConfig) -> str:
    """The root's config.yaml list item (``- path: ...``), block style."""
    import yaml

    return yaml.safe_dump(
        [root_to_yaml(root)], sort_keys=False, allow_unicode=True, default_flow_style=False
    )


def _reader(file: Path, paths: Paths) -> config_edit.Reader:
    def read(text: str) -> list[Path]:
        return [r.path for r in parse_config(text, file, paths).roots]

    return read
