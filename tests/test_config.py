from __future__ import annotations

from pathlib import Path

import pytest

from memoryd.config.edit import register_root, unregister_root
from memoryd.config.loader import load_config
from memoryd.config.sections import Config, RootConfig
from memoryd.errors import ConfigError
from memoryd.paths import resolve_paths


def write_config(home: Path, text: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(text, encoding="utf-8")


def test_defaults_without_a_file(isolated_home: Path) -> None:
    config = load_config(resolve_paths())
    assert [r.path for r in config.roots] == [isolated_home / "memory"]
    root = config.roots[0]
    assert (root.layout, root.scope, root.sync.commit, root.sync.push) == (
        "plugin",
        "global",
        True,
        True,
    )
    assert config.search.limit == 10
    assert config.search.score_floor == 0.15
    assert config.injection.max_chars == 1200


def test_relative_memoryd_home_is_refused() -> None:
    with pytest.raises(ConfigError) as info:
        resolve_paths({"MEMORYD_HOME": "rel/home"})
    assert str(info.value) == (
        "MEMORYD_HOME must be an absolute path, got 'rel/home'\n"
        "  hint: export MEMORYD_HOME=$PWD/rel/home or unset it to use the default folders"
    )


def test_without_memoryd_home_the_opencode_folder_is_the_global_root(tmp_path: Path) -> None:
    paths = resolve_paths({"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "cfg")})
    assert paths.default_global_root == tmp_path / "cfg" / "opencode" / "memory"
    paths = resolve_paths({"HOME": str(tmp_path)})
    assert paths.default_global_root == tmp_path / ".config" / "opencode" / "memory"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("search:\n  limt: 3\n", "search.limt: unknown key (did you mean 'limit'?)"),
        ("search:\n  colour: 3\n", "search.colour: unknown key (known keys here: decay_floor, "),
        ("search:\n  limit: many\n", "search.limit: must be a whole number, got 'many'"),
        ("search:\n  score_floor: true\n", "search.score_floor: must be a number, got True"),
        ("daemon:\n  quiet_ms: -5\n", "daemon.quiet_ms: must not be negative, got -5"),
        ("device: ''\n", "device: must be a non-empty string, got ''"),
        ("colour: blue\n", "colour: unknown key"),
        ("roots: {}\n", "roots: must be a list of roots"),
        ("roots:\n  - layout: plugin\n", "roots[0].path: is required and must be a string"),
        (
            "roots:\n  - path: /m\n    layout: flat\n",
            "roots[0].layout: must be one of plugin, layered, claude",
        ),
        (
            "roots:\n  - path: /m\n    scope: company\n",
            "roots[0].scope: must be one of global, team, project",
        ),
        ("roots:\n  - path: /m\n    sync: {pusj: true}\n", "roots[0].sync.pusj: unknown key"),
        (
            "roots:\n  - path: /m\n    watch: inotify\n",
            "roots[0].watch: must be one of auto, events, polling, got 'inotify'",
        ),
        ("roots:\n  - path: /m\n    wach: auto\n", "roots[0].wach: unknown key (did you mean 'watch'?)"),
        ("roots:\n  - path: /m\n    colour: red\n", "known: layout, path, scope, sync, team, watch"),
        ("roots:\n  - path: /m\n    scope: globl\n",
         "roots[0].scope: must be one of global, team, project, got 'globl' (did you mean 'global'?)"),
        ("roots:\n  - path: /m\n    sync: {pusj: true}\n",
         "roots[0].sync.pusj: unknown key (did you mean 'push'?)"),
        ("roots:\n  - path: /m\n  - path: /m\n", "roots: /m is listed twice"),
        ("- a\n", "the top level must be a mapping"),
        ("search: [\n", ":2:1: not valid YAML: expected the node content, but found"),
        ("roots:\n  - path: memory\n", "roots[0].path: must be an absolute path (or start with"),
        ("colour: {}\n", ", roots, search)"),  # roots is a known key too
        ("searhc: {}\n", "searhc: unknown key (did you mean 'search'?)"),
        ("root:\n  - path: /m\n", "root: unknown key (did you mean 'roots'?)"),
    ],
)
def test_config_errors_name_the_key_and_the_file(
    isolated_home: Path, text: str, message: str
) -> None:
    write_config(isolated_home, text)
    with pytest.raises(ConfigError) as info:
        load_config(resolve_paths())
    assert str(isolated_home / "config.yaml") in str(info.value)
    assert message in str(info.value)


def test_every_problem_of_the_file_is_told_at_once(isolated_home: Path) -> None:
    """Three typos, one error naming each in the file's order (then the roots'), not three
    rounds of edit and retry; one line still (the daemon's status shows it as one problem)."""
    file = isolated_home / "config.yaml"
    write_config(
        isolated_home,
        "search:\n  limt: 5\n  half_life_days: two weeks\ndaemon:\n  quiet_ms: -4\n"
        "roots:\n  - path: /m\n    scope: globl\n    sync: {pusj: true}\n  - path: /n\n"
        "  - path: /n\n",
    )
    with pytest.raises(ConfigError) as info:
        load_config(resolve_paths())
    assert info.value.message == (
        f"{file}: search.limt: unknown key (did you mean 'limit'?); "
        "search.half_life_days: must be a number, got 'two weeks'; "
        "daemon.quiet_ms: must not be negative, got -4; "
        "roots[0].scope: must be one of global, team, project, got 'globl' (did you mean 'global'?); "
        "roots: /n is listed twice"
    )
    assert info.value.hint == f"edit {file} (see docs/config.md)"


def test_project_roots_default_to_no_auto_commit(isolated_home: Path) -> None:
    write_config(
        isolated_home,
        "device: laptop\nroots:\n  - path: /g\n  - path: /p/.memory\n    scope: project\n"
        "    sync: {commit: true}\n  - path: /q/.memory\n    scope: project\n",
    )
    config = load_config(resolve_paths())
    g, p, q = config.roots
    assert config.device == "laptop"
    assert (g.sync.commit, g.sync.push) == (True, True)
    assert (p.sync.commit, p.sync.push, p.sync.pull) == (True, False, False)
    assert (q.sync.commit, q.sync.push) == (False, False)
    assert config.root_for(Path("/p/.memory/facts/x.md")) == p
    assert config.root_for(Path("/elsewhere")) is None


def test_register_root_keeps_settings_and_comments(isolated_home: Path) -> None:
    write_config(isolated_home, "# mine\nsearch:\n  limit: 3  # small screens\n")
    paths = resolve_paths()
    config = load_config(paths)
    project = RootConfig(path=Path("/p/.memory"), scope="project")
    after = register_root(paths, config, project)
    assert register_root(paths, after, project) is after
    reloaded = load_config(paths)
    assert reloaded.search.limit == 3
    assert [r.path for r in reloaded.roots] == [isolated_home / "memory", Path("/p/.memory")]
    assert reloaded.roots[1].sync.commit is False
    assert (isolated_home / "config.yaml").read_text() == (
        "# mine\nsearch:\n  limit: 3  # small screens\nroots:\n"
        f"  - path: {isolated_home / 'memory'}\n    layout: plugin\n    scope: global\n"
        "  - path: /p/.memory\n    layout: plugin\n    scope: project\n"
    )
    assert not (isolated_home / "config.yaml.bak").exists()


def test_registering_a_root_keeps_the_default_root_a_symlink_leads_to(
    isolated_home: Path, tmp_path: Path
) -> None:
    """The default global root is a symlink into a dotfiles repo: writing the roots in
    force (init --project) wrote its target, so a later retargeted link was never followed."""
    dotfiles = tmp_path / "dotfiles" / "memory"
    dotfiles.mkdir(parents=True)
    write_config(isolated_home, "search:\n  limit: 3\n")
    (isolated_home / "memory").symlink_to(dotfiles)
    paths = resolve_paths()
    config = load_config(paths)
    assert [(r.given, r.path) for r in config.roots] == [(str(isolated_home / "memory"), dotfiles)]
    register_root(paths, config, RootConfig(path=Path("/p/.memory"), scope="project"))
    assert (isolated_home / "config.yaml").read_text() == (
        "search:\n  limit: 3\nroots:\n"
        f"  - path: {isolated_home / 'memory'}\n    layout: plugin\n    scope: global\n"
        "  - path: /p/.memory\n    layout: plugin\n    scope: project\n"
    )
    assert [r.path for r in load_config(paths).roots] == [dotfiles, Path("/p/.memory")]


HAND_CONFIG = (
    "# memoryd settings, by hand\r\n"
    "device: laptop   # short name\r\n"
    "roots:\r\n"
    "# the synced one\r\n"
    "- path: /m\r\n"
    "  sync: {push: false}  # not yet\r\n"
    "- path: /nfs/m\r\n"
    "  watch: polling\r\n"
    "\r\n"
    "# search after roots\r\n"
    "search:\r\n"
    "  limit: 3\r\n"
)


def test_adding_and_removing_a_root_changes_only_its_lines(isolated_home: Path) -> None:
    write_config(isolated_home, HAND_CONFIG)
    file = isolated_home / "config.yaml"
    file.write_bytes(HAND_CONFIG.encode())
    paths = resolve_paths()
    project = RootConfig(path=Path("/p/.memory"), scope="project")
    after = register_root(paths, load_config(paths), project)
    added = "- path: /p/.memory\r\n  layout: plugin\r\n  scope: project\r\n"
    expected = HAND_CONFIG.replace("  watch: polling\r\n", "  watch: polling\r\n" + added)
    assert file.read_bytes() == expected.encode()
    assert [r.path for r in load_config(paths).roots] == [Path("/m"), Path("/nfs/m"), project.path]
    unregister_root(paths, after, Path("/nfs/m"))
    assert (
        file.read_bytes() == expected.replace("- path: /nfs/m\r\n  watch: polling\r\n", "").encode()
    )
    unregister_root(paths, load_config(paths), project.path)
    unregister_root(paths, load_config(paths), Path("/m"))
    assert load_config(paths).roots == ()
    assert (
        file.read_bytes()
        .decode()
        .startswith(
            "# memoryd settings, by hand\r\ndevice: laptop   # short name\r\nroots: []\r\n# the synced one\r\n"
        )
    )


def test_a_flow_style_roots_list_is_left_alone_with_the_lines_to_add(isolated_home: Path) -> None:
    text = "# mine\nroots: [{path: /m}]\n"
    write_config(isolated_home, text)
    paths = resolve_paths()
    with pytest.raises(ConfigError) as info:
        register_root(
            paths, load_config(paths), RootConfig(path=Path("/p/.memory"), scope="project")
        )
    assert str(info.value) == (
        f"{isolated_home / 'config.yaml'} was left as it is: its 'roots:' is not a block list\n"
        "  hint: add these lines to its 'roots:' list yourself, then run the command again:\n"
        "    - path: /p/.memory\n      layout: plugin\n      scope: project"
    )
    assert (isolated_home / "config.yaml").read_text() == text


def test_a_roots_watch_setting_is_read_and_survives_a_rewrite(isolated_home: Path) -> None:
    write_config(isolated_home, "roots:\n  - path: /nfs/m\n    watch: polling\n  - path: /m\n")
    paths = resolve_paths()
    config = load_config(paths)
    assert [r.watch for r in config.roots] == ["polling", "auto"]
    register_root(paths, config, RootConfig(path=Path("/p/.memory"), scope="project"))
    assert [r.watch for r in load_config(paths).roots] == ["polling", "auto", "auto"]
    assert "watch: auto" not in (isolated_home / "config.yaml").read_text()


def test_config_is_frozen() -> None:
    with pytest.raises(AttributeError):
        Config().device = "x"  # type: ignore[misc]


def test_tabs_in_config_yaml_are_named_with_file_line_and_column(isolated_home: Path) -> None:
    write_config(isolated_home, "search:\n\tlimit: 3\n")
    with pytest.raises(ConfigError) as info:
        load_config(resolve_paths())
    file = isolated_home / "config.yaml"
    assert str(info.value) == (
        f"{file}:2:1: not valid YAML: YAML does not allow tabs; indent with spaces\n"
        f"  hint: fix that line of {file} (see docs/config.md), or move the file aside"
    )


def test_a_config_that_is_not_utf8_says_to_save_it_as_utf8(isolated_home: Path) -> None:
    write_config(isolated_home, "")
    file = isolated_home / "config.yaml"
    file.write_bytes("device: caf\u00e9\n".encode("latin-1"))
    with pytest.raises(ConfigError) as info:
        load_config(resolve_paths())
    assert str(info.value) == (
        f"{file} is not valid UTF-8 (byte 11 is 0xe9)\n"
        f"  hint: save {file} as UTF-8 in your editor (memoryd reads nothing else)"
    )
