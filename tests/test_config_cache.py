"""The parsed-config cache: used only while config.yaml is unchanged, validated every time."""

from __future__ import annotations

import functools
import os
import time
from pathlib import Path

import pytest

from memoryd.config import cache as config_cache
from memoryd.config import loader as config_module
from memoryd.config.cache import ConfigCache
from memoryd.config.loader import CONFIG_CACHE, load_config
from memoryd.errors import ConfigError
from memoryd.paths import Paths, resolve_paths


def write_settled(file: Path, text: str, age: float = 60) -> None:
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(text, encoding="utf-8")
    past = time.time() - age
    os.utime(file, (past, past))


def no_yaml(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(text: str, file: Path) -> None:
        raise AssertionError("config.yaml was parsed, not read from the cache")

    monkeypatch.setattr(config_module, "_yaml_data", refuse)


@pytest.fixture
def paths(isolated_home: Path) -> Paths:
    return resolve_paths()


def test_a_settled_config_is_read_from_the_cache(
    paths: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_settled(paths.config_file, "search:\n  limit: 7\n")
    first = load_config(paths)
    assert (paths.cache_dir / CONFIG_CACHE).is_file()
    no_yaml(monkeypatch)
    second = load_config(paths)
    assert second == first
    assert second.search.limit == 7


def test_an_edit_of_the_same_size_and_mtime_is_seen(paths: Paths) -> None:
    write_settled(paths.config_file, "search:\n  limit: 7\n")
    assert load_config(paths).search.limit == 7
    stat = paths.config_file.stat()
    paths.config_file.write_text("search:\n  limit: 8\n", encoding="utf-8")
    os.utime(paths.config_file, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # only ctime moved
    assert load_config(paths).search.limit == 8


def test_a_config_written_just_now_is_not_cached(
    paths: Paths, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_settled(paths.config_file, "search:\n  limit: 7\n", age=0)
    # read in the moment it was written, even when a loaded machine stalls this test for
    # longer than the racy window (2 s): the cache's clock stands at the write
    written = paths.config_file.stat().st_mtime
    monkeypatch.setattr(
        config_cache, "ConfigCache", functools.partial(ConfigCache, clock=lambda: written)
    )
    assert load_config(paths).search.limit == 7
    assert not (paths.cache_dir / CONFIG_CACHE).exists()


def test_a_damaged_cache_is_a_miss(paths: Paths) -> None:
    write_settled(paths.config_file, "search:\n  limit: 7\n")
    paths.cache_dir.mkdir(parents=True)
    (paths.cache_dir / CONFIG_CACHE).write_bytes(b"\x00not marshal")
    assert load_config(paths).search.limit == 7
    assert load_config(paths).search.limit == 7  # and the cache was rewritten


def test_a_cached_config_is_still_validated(paths: Paths, monkeypatch: pytest.MonkeyPatch) -> None:
    write_settled(paths.config_file, "search:\n  limit: many\n")
    for _ in range(2):
        with pytest.raises(ConfigError, match=r"search\.limit: must be a whole number"):
            load_config(paths)
        no_yaml(monkeypatch)


def test_an_unwritable_cache_only_costs_the_parse(paths: Paths) -> None:
    write_settled(paths.config_file, "search:\n  limit: 7\n")
    paths.cache_dir.parent.mkdir(parents=True, exist_ok=True)
    paths.cache_dir.write_text("a file where the cache folder should be")
    assert load_config(paths).search.limit == 7
    assert load_config(paths).search.limit == 7
