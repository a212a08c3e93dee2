"""``memoryd connect CLIENT``: each client's own config gets memoryd, and nothing of the
user's is lost, reordered or left behind by ``--undo``."""

from __future__ import annotations

import json
import os
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import run_cli

MEMORYD = Path(sys.executable).parent / "memoryd"  # the running memoryd's console script
# what Codex passes on to memoryd mcp beyond its own short list (MEMORYD_HOME moves it all)
PASSED = '["MEMORYD_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME"]'
CLIENTS = ("claude-code", "opencode", "codex", "gemini", "cursor")


@pytest.fixture
def home(isolated_home: Path) -> Path:
    return Path(os.environ["HOME"])


def connect(*args: str) -> str:
    done = run_cli("connect", *args)
    assert done.returncode == 0, done.stderr
    return done.stdout


def files(home: Path) -> dict[str, Path]:
    return {
        "claude": home / ".claude" / "settings.json",
        "claude.json": home / ".claude.json",
        "opencode": home / ".config" / "opencode" / "opencode.json",
        "plugin": home / ".config" / "opencode" / "plugins" / "memoryd.js",
        "codex": home / ".codex" / "config.toml",
        "gemini": home / ".gemini" / "settings.json",
        "cursor": home / ".cursor" / "mcp.json",
    }


def snapshot(home: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(home)): p.read_bytes()
        for p in sorted(home.rglob("*")) if p.is_file()
    }  # fmt: skip


USER_SETTINGS = """\
{
  "model": "opus",
  "hooks": {
    "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "log-prompt"}]}]
  },
  "permissions": {"allow": ["Bash(ls:*)"], "deny": ["Read(./.env)"]},
  "env": {"FOO": "1"}
}
"""


def test_claude_code_gets_hooks_and_server_and_keeps_every_setting(home: Path) -> None:
    paths = files(home)
    paths["claude"].parent.mkdir()
    paths["claude"].write_text(USER_SETTINGS)
    paths["claude.json"].write_text('{"numStartups": 3, "mcpServers": {"gh": {"command": "gh"}}}')
    said = connect("claude-code")
    settings = json.loads(paths["claude"].read_text())
    line = f"{MEMORYD} context --hook --json"
    assert list(settings) == ["model", "hooks", "permissions", "env"]
    assert list(settings["hooks"]) == ["Stop", "UserPromptSubmit", "SessionStart", "PreToolUse"]
    prompt = settings["hooks"]["UserPromptSubmit"]
    assert prompt[0] == {"hooks": [{"type": "command", "command": "log-prompt"}]}  # theirs first
    assert prompt[1] == {"hooks": [{"type": "command", "command": line, "timeout": 10}]}
    assert settings["hooks"]["SessionStart"][0]["hooks"][0]["command"] == line
    assert settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"] == f"{MEMORYD} guard --hook"
    assert settings["permissions"] == {
        "allow": ["Bash(ls:*)", "mcp__memoryd__memory_recall", "mcp__memoryd__memory_inspect",
                  "mcp__memoryd__memory_context"],
        "deny": ["Read(./.env)"],
    }  # fmt: skip
    state = json.loads(paths["claude.json"].read_text())
    assert state == {"numStartups": 3, "mcpServers": {
        "gh": {"command": "gh"},
        "memoryd": {"type": "stdio", "command": str(MEMORYD), "args": ["mcp"], "env": {}},
    }}  # fmt: skip
    assert said.splitlines()[0] == f"memoryd connect claude-code: Claude Code runs {MEMORYD}"
    assert said.splitlines()[-1] == "undo: memoryd connect claude-code --undo"


def test_a_hand_made_setup_with_a_bare_memoryd_is_replaced_not_doubled(home: Path) -> None:
    """The old docs had users copy settings.json with a bare 'memoryd' (not found when the
    client's PATH lacks it): connecting makes those entries absolute, once."""
    paths = files(home)
    paths["claude"].parent.mkdir()
    shipped = Path(__file__).parents[2] / "src/memoryd/integrations/claude-code/settings.json"
    paths["claude"].write_bytes(shipped.read_bytes())
    connect("claude-code")
    settings = json.loads(paths["claude"].read_text())
    for event in ("SessionStart", "UserPromptSubmit", "PreToolUse"):
        (group,) = settings["hooks"][event]
        assert group["hooks"][0]["command"].startswith(f"{MEMORYD} ")
    assert len(settings["permissions"]["allow"]) == 3


@pytest.mark.parametrize("client", CLIENTS)
def test_connecting_twice_changes_nothing_and_undo_restores_byte_for_byte(
    home: Path, client: str
) -> None:
    for path in files(home).values():  # every client's file exists, with the user's settings
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            '# mine\nmodel = "o3"  # best\n\n[profiles.fast]\nmodel = "o4"\n' if path.suffix == ".toml"
            else "// mine\n" if path.suffix == ".js"
            else '{\n    "theme": "dark",\n    "mcpServers": {"x": {"command": "x"}}\n}\n'
        )  # fmt: skip
    before = snapshot(home)
    connect(client)
    after = snapshot(home)
    assert after != before
    again = connect(client)
    assert again.splitlines()[-1].endswith("was already connected; nothing written")
    assert snapshot(home) == after
    undone = connect(client, "--undo")
    assert "restored" in undone
    assert snapshot(home) == before


@pytest.mark.parametrize("client", CLIENTS)
def test_undo_deletes_the_files_connect_made(home: Path, client: str) -> None:
    connect(client)
    made = snapshot(home)
    assert made
    said = connect(client, "--undo")
    assert all(line.startswith("  deleted ") for line in said.splitlines()[:-1]), said
    assert snapshot(home) == {}


def test_undo_after_the_client_rewrote_its_file_takes_out_memoryds_entry_only(home: Path) -> None:
    """Claude Code rewrites ~/.claude.json on every start: restoring the backup would throw
    its new state away, so memoryd's entry alone is taken out (the file is kept aside)."""
    state = files(home)["claude.json"]
    state.write_text('{\n  "numStartups": 1\n}\n')
    connect("claude-code")
    data = json.loads(state.read_text())
    data["numStartups"] = 2
    state.write_text(json.dumps(data, indent=2) + "\n")
    said = connect("claude-code", "--undo")
    assert json.loads(state.read_text()) == {"numStartups": 2, "mcpServers": {}}
    (line,) = [line for line in said.splitlines() if str(state) in line]
    assert line.startswith(f"  {state} changed since memoryd connect wrote it: took memoryd's ")
    kept = Path(line.split("(the file as it was: ")[1].rstrip(")"))
    assert json.loads(kept.read_text())["mcpServers"]["memoryd"]["command"] == str(MEMORYD)


def test_opencode_jsonc_keeps_its_comments_and_the_plugin_knows_memoryd(home: Path) -> None:
    folder = home / ".config" / "opencode"
    folder.mkdir(parents=True)
    config = folder / "opencode.jsonc"
    text = (
        '{\n  // my model\n  "model": "anthropic/claude-sonnet",\n'
        '  "mcp": {\n    "other": {"type": "remote", "url": "https://x.invalid"}, // remote\n  },\n}\n'
    )
    config.write_text(text)
    connect("opencode")
    new = config.read_text()
    assert new.startswith(text[: text.index("  },\n}")])  # every byte of theirs, in order
    assert "// my model" in new and "// remote" in new
    assert not (folder / "opencode.json").exists()
    from memoryd.connect import jsonc

    assert jsonc.loads(new)["mcp"]["memoryd"] == {
        "type": "local", "command": [str(MEMORYD), "mcp"], "enabled": True,
    }  # fmt: skip
    plugin = (folder / "plugins" / "memoryd.js").read_text()
    assert f"process.env.MEMORYD_BIN ||= {json.dumps(str(MEMORYD))}\n" in plugin
    shipped = Path(__file__).parents[2] / "src/memoryd/integrations/opencode/memoryd.js"
    assert plugin.endswith(shipped.read_text())
    assert "process.env.MEMORYD_BIN" in shipped.read_text()  # what the plugin reads


def test_codex_gets_its_mcp_server_and_hooks_and_keeps_comments(home: Path) -> None:
    config = files(home)["codex"]
    config.parent.mkdir()
    text = (
        '# my codex\nmodel = "gpt-5"  # fav\n\n[mcp_servers.other]\ncommand = "npx"\n\n'
        '[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = "command"\ncommand = "notify-send done"\n'
    )
    config.write_text(text)
    connect("codex")
    new = config.read_text()
    line = f"{MEMORYD} context --hook --json"
    assert new == text.replace("\n\n[[hooks.Stop]]", (
        f'\n\n[mcp_servers.memoryd]\ncommand = "{MEMORYD}"\nargs = ["mcp"]\nenv_vars = {PASSED}'
        '\n\n[[hooks.Stop]]'
    )) + (
        f'\n[[hooks.SessionStart]]\nmatcher = "startup|resume|clear|compact"\n\n'
        f'[[hooks.SessionStart.hooks]]\ntype = "command"\ncommand = "{line}"\ntimeout = 10\n\n'
        f'[[hooks.UserPromptSubmit]]\n[[hooks.UserPromptSubmit.hooks]]\ntype = "command"\n'
        f'command = "{line}"\ntimeout = 10\n'
    )  # the user's settings and comments first, byte for byte, then memoryd's
    data = tomllib.loads(new)
    assert data["mcp_servers"]["memoryd"] == {
        "command": str(MEMORYD), "args": ["mcp"], "env_vars": json.loads(PASSED),
    }  # fmt: skip
    assert data["hooks"]["Stop"] == [{"hooks": [{"type": "command", "command": "notify-send done"}]}]


def test_codex_home_and_claude_config_dir_move_the_files(home: Path, tmp_path: Path) -> None:
    os.environ["CODEX_HOME"] = str(tmp_path / "codex-home")
    os.environ["CLAUDE_CONFIG_DIR"] = str(tmp_path / "claude-dir")
    os.environ["GEMINI_CLI_HOME"] = str(tmp_path / "gemini-home")
    try:
        for client in ("codex", "claude-code", "gemini"):
            connect(client)
    finally:
        for name in ("CODEX_HOME", "CLAUDE_CONFIG_DIR", "GEMINI_CLI_HOME"):
            del os.environ[name]
    assert (tmp_path / "codex-home" / "config.toml").is_file()
    assert (tmp_path / "claude-dir" / "settings.json").is_file()
    assert (tmp_path / "claude-dir" / ".claude.json").is_file()
    assert (tmp_path / "gemini-home" / ".gemini" / "settings.json").is_file()
    assert snapshot(home) == {}


def test_gemini_gets_its_server_and_the_context_hooks(home: Path) -> None:
    connect("gemini")
    data = json.loads(files(home)["gemini"].read_text())
    line = f"{MEMORYD} context --hook --json"
    hook = {"name": "memoryd-context", "type": "command", "command": line, "timeout": 10000}
    guard = {"name": "memoryd-guard", "type": "command", "command": f"{MEMORYD} guard --hook",
             "timeout": 10000}  # fmt: skip
    assert data == {
        "mcpServers": {"memoryd": {"command": str(MEMORYD), "args": ["mcp"]}},
        "hooks": {
            "SessionStart": [{"hooks": [hook]}], "BeforeAgent": [{"hooks": [hook]}],
            "BeforeTool": [{"matcher": "write_file|replace", "hooks": [guard]}],
        },
    }  # fmt: skip


CURSOR_SCHEMA: dict[str, Any] = {  # Cursor's documented mcp.json: a stdio server, or a URL
    "type": "object",
    "required": ["mcpServers"],
    "properties": {"mcpServers": {"type": "object", "additionalProperties": {"oneOf": [
        {"type": "object", "required": ["command"], "additionalProperties": False,
         "properties": {"type": {"const": "stdio"}, "command": {"type": "string"},
                        "args": {"type": "array", "items": {"type": "string"}},
                        "env": {"type": "object", "additionalProperties": {"type": "string"}},
                        "envFile": {"type": "string"}}},
        {"type": "object", "required": ["url"],
         "properties": {"url": {"type": "string"}, "headers": {"type": "object"}}},
    ]}}},
}  # fmt: skip


def test_cursor_config_matches_its_documented_schema(home: Path) -> None:
    import jsonschema  # type: ignore[import-untyped]

    connect("cursor")
    data = json.loads(files(home)["cursor"].read_text())
    jsonschema.validate(data, CURSOR_SCHEMA)
    assert data["mcpServers"]["memoryd"] == {"command": str(MEMORYD), "args": ["mcp"]}
    assert Path(data["mcpServers"]["memoryd"]["command"]).is_absolute()


def test_dry_run_shows_the_diff_and_writes_nothing(home: Path) -> None:
    said = connect("cursor", "--dry-run")
    assert snapshot(home) == {}
    path = files(home)["cursor"]
    assert said == (
        f"memoryd connect cursor: Cursor runs {MEMORYD}\n"
        f"--- /dev/null\n+++ {path}\n@@ -0,0 +1,10 @@\n+{{\n+  \"mcpServers\": {{\n"
        f"+    \"memoryd\": {{\n+      \"command\": \"{MEMORYD}\",\n+      \"args\": [\n"
        "+        \"mcp\"\n+      ]\n+    }\n+  }\n+}\n"
        "dry run: nothing written; run it without --dry-run to write this\n"
    )


@pytest.mark.parametrize(
    "case",
    [
        ("claude-code", ".claude/settings.json", '{\n  "model": "opus"\n  "x": 1\n}\n', 3, "JSON"),
        ("gemini", ".gemini/settings.json", '{\n  "a": [1,\n}\n', 3, "JSON (comments allowed)"),
        ("codex", ".codex/config.toml", 'model = "x"\n[mcp_servers\n', 2, "TOML"),
    ],
)
def test_a_config_that_does_not_parse_is_refused_with_its_line_and_nothing_written(
    home: Path, case: tuple[str, str, str, int, str]
) -> None:
    client, name, text, line, kind = case
    path = home / name
    path.parent.mkdir(parents=True)
    path.write_text(text)
    before = snapshot(home)
    done = run_cli("connect", client)
    assert done.returncode == 1
    first, hint = done.stderr.splitlines()
    assert first.startswith(f"memoryd: error: cannot read {path}:{line}: ")
    assert first.endswith(f"; memoryd connect {client} wrote nothing")
    assert hint == (
        f"  hint: fix line {line} of {path} (it must be {kind}), then run "
        f"'memoryd connect {client}' again"
    )
    assert snapshot(home) == before


def test_a_settings_file_that_is_a_link_is_written_through(home: Path, tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles" / "cursor.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text('{"mcpServers": {}}\n')
    link = files(home)["cursor"]
    link.parent.mkdir()
    link.symlink_to(dotfiles)
    connect("cursor")
    assert link.is_symlink()
    assert "memoryd" in json.loads(dotfiles.read_text())["mcpServers"]
    connect("cursor", "--undo")
    assert link.is_symlink() and dotfiles.read_text() == '{"mcpServers": {}}\n'


def test_list_says_what_is_connected_and_what_is_broken(home: Path) -> None:
    connect("codex")
    connect("gemini")
    settings = files(home)["gemini"]
    settings.write_text(settings.read_text().replace(str(MEMORYD), "/gone/memoryd"))
    done = run_cli("connect", "--list")
    assert done.returncode == 1  # a connected client that cannot run memoryd
    assert done.stdout.splitlines() == [
        "claude-code not connected (memoryd connect claude-code)",
        "opencode    not connected (memoryd connect opencode)",
        f"codex       connected, healthy ({files(home)['codex']})",
        "gemini      connected, broken: the MCP server cannot start: /gone/memoryd does not "
        "exist; the SessionStart hook cannot run: /gone/memoryd does not exist; the "
        "BeforeAgent hook cannot run: /gone/memoryd does not exist; the BeforeTool hook cannot "
        "run: /gone/memoryd does not exist (fix: memoryd connect gemini)",
        "cursor      not connected (memoryd connect cursor)",
    ]
    connect("gemini")  # connecting again repairs it
    assert run_cli("connect", "--list").returncode == 0


def test_doctor_checks_each_connected_client(home: Path) -> None:
    connect("cursor")
    connect("opencode")
    plugin = files(home)["plugin"]
    plugin.write_text("// an old copy\n")
    done = run_cli("doctor")
    lines = [line for line in done.stdout.splitlines() if " client " in line]
    assert lines == [
        f"FAIL  client    opencode: {plugin} is not the plugin this memoryd ships",
        "ok    client    cursor: connected, runs memoryd from its config",
    ]
    assert "                fix: memoryd connect opencode" in done.stdout


@pytest.mark.parametrize(
    ("args", "message", "hint"),
    [
        ((), "memoryd connect needs the client to connect",
         "memoryd connect claude-code (or opencode, codex, gemini, cursor); --list shows them"),
        (("--list", "codex"), "--list takes no client, --undo or --dry-run",
         "memoryd connect --list"),
        (("codex", "--undo", "--dry-run"), "--undo and --dry-run do not go together",
         "drop one of them"),
        (("claude", "codex"), "memoryd connect knows no client 'claude' (did you mean "
         "'claude-code'?)", "memoryd connect claude-code | opencode | codex | gemini | cursor"),
    ],
)  # fmt: skip
def test_bad_command_lines_are_refused(args: tuple[str, ...], message: str, hint: str) -> None:
    done = run_cli("connect", *args)
    assert (done.returncode, done.stderr) == (2, f"memoryd: error: {message}\n  hint: {hint}\n")


def test_several_clients_in_one_command_and_none_written_when_one_cannot_be(home: Path) -> None:
    bad = files(home)["gemini"]
    bad.parent.mkdir()
    bad.write_text("{ not json\n")
    done = run_cli("connect", "claude-code", "gemini", "cursor")
    assert done.returncode == 1 and done.stderr.startswith(f"memoryd: error: cannot read {bad}:1: ")
    assert sorted(snapshot(home)) == [".gemini/settings.json"]  # claude-code neither
    bad.unlink()
    said = connect("claude-code", "gemini", "cursor")
    assert [line for line in said.splitlines() if line.startswith("memoryd connect ")] == [
        f"memoryd connect {name}: {title} runs {MEMORYD}"
        for name, title in (("claude-code", "Claude Code"), ("gemini", "Gemini CLI"),
                            ("cursor", "Cursor"))
    ]  # fmt: skip
    assert run_cli("connect", "--list").stdout.count("connected, healthy") == 3
    connect("claude-code", "gemini", "cursor", "--undo")
    assert snapshot(home) == {}


def test_undo_without_a_connect_says_so(home: Path) -> None:
    done = run_cli("connect", "cursor", "--undo")
    assert (done.returncode, done.stderr) == (1, (
        "memoryd: error: memoryd connect cursor has written nothing here, so there is nothing "
        "to undo\n  hint: memoryd connect --list shows what is connected (a hand-made entry is "
        "yours to remove)\n"
    ))  # fmt: skip
