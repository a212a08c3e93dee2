"""config.yaml read and checked: YAML to :class:`memoryd.config.sections.Config`.

An unknown key or a value of the wrong type is a :class:`ConfigError` naming the key and
the file; every problem of the file is told at once. The parsed data is kept in the
config cache (:mod:`memoryd.config.cache`), so a command whose config did not change
never imports PyYAML.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from memoryd.config.sections import (
    LAYOUTS,
    NOT_UTF8_ROOT,
    SCOPES,
    TEAM_NAME,
    WATCH_MODES,
    Config,
    RootConfig,
    SyncPolicy,
    default_policy,
    shown_path,
    utf8_path,
)
from memoryd.errors import ConfigError
from memoryd.paths import Paths
from memoryd.suggest import did_you_mean

CONFIG_CACHE = "config.marshal"  # in the cache folder: see memoryd.config.cache


def load_config(paths: Paths) -> Config:
    """Read ``config.yaml`` (absent means all defaults, with the default global root)."""
    from memoryd.config.cache import ConfigCache

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
        raise not_utf8(file, exc) from exc
    except OSError as exc:
        raise ConfigError(f"cannot read {file}: {exc}", hint="check its permissions") from exc
    return build_config(data, file, paths)


def not_utf8(file: Path, exc: UnicodeDecodeError) -> ConfigError:
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
    roots = tuple(dataclasses.replace(root, viewer=config.device) for root in roots)
    return dataclasses.replace(config, roots=roots, source=file)


def default_global(paths: Paths) -> RootConfig:
    return RootConfig(path=paths.default_global_root, layout="plugin", scope="global")


_ROOT_KEYS = ("layout", "path", "scope", "sync", "team", "watch")  # what a root's mapping may hold


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
                f"{shown_path(path)} {NOT_UTF8_ROOT}: rename the folder to a UTF-8 name and "
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
        team = self.team(item, key, scope, path)
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
        if policy.team_branch and not team:
            raise self.fail(
                f"{key}.sync.team_branch",
                "only a team root syncs through a proposals branch (add 'team: NAME', or "
                "remove team_branch)",
            )
        return RootConfig(
            path=Path(path), layout=layout, scope=scope, sync=policy, watch=watch, team=team
        )

    def team(self, item: dict[str, Any], key: str, scope: str, path: Path) -> str:
        """The team a root is shared with: its ``team`` name, or for scope ``team`` the
        folder's name when none is given ("" for a personal root)."""
        team = item.get("team", path.name if scope == "team" else "")
        if not isinstance(team, str) or not TEAM_NAME.fullmatch(team):
            raise self.fail(
                f"{key}.team", f"must be a name of letters, digits, '.', '_' or '-', got {team!r}"
            )
        if team and scope == "global":
            raise self.fail(
                f"{key}.team", "a global root is personal; a team root has scope team or project"
            )
        return team


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
