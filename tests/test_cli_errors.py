"""The command line's errors name the right next step; completion comes from the parsers."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from memoryd.commands import build_parser
from memoryd.commands.completion import describe
from tests.helpers import run_cli

INSPECT_USAGE = "usage: memoryd inspect [-h] [--json]\n"


def test_a_mistyped_option_gets_the_commands_usage_and_the_closest_option() -> None:
    done = run_cli("inspect", "--jsn")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        INSPECT_USAGE + "memoryd inspect: error: unrecognized arguments: --jsn\n"
        "  hint: did you mean --json? (memoryd inspect -h lists every option)\n"
    )


def test_an_unknown_option_of_recall_prints_recalls_usage() -> None:
    done = run_cli("recall", "--foo", "x")
    assert done.returncode == 2
    assert done.stderr.startswith("usage: memoryd recall [-h] [--limit N]")
    assert done.stderr.endswith(
        "memoryd recall: error: unrecognized arguments: --foo\n"
        "  hint: memoryd recall -h lists every option\n"
    )


def test_with_json_errors_are_json_on_stdout(isolated_home: Path, tmp_path: Path) -> None:
    done = run_cli("forget", "facts/none", "--json", cwd=tmp_path)
    assert done.returncode == 1
    assert json.loads(done.stdout) == {
        "error": f"no memory with id 'facts/none' in {isolated_home / 'memory'}",
        "hint": "memoryd inspect lists every memory with its id",
        "exit": 1,
    }
    assert "memoryd: error: no memory with id 'facts/none'" in done.stderr
    usage = run_cli("inspect", "--json", "--jsn")
    assert usage.returncode == 2
    assert json.loads(usage.stdout) == {
        "error": "unrecognized arguments: --jsn",
        "hint": "did you mean --json? (memoryd inspect -h lists every option)",
        "exit": 2,
    }
    bad = run_cli("recall", "x", "--limit", "0", "--json", cwd=tmp_path)
    assert (bad.returncode, json.loads(bad.stdout)) == (
        2, {"error": "--limit must be at least 1", "hint": "for example --limit 5", "exit": 2}
    )  # fmt: skip


def bash_complete(script: Path, *words: str) -> list[str]:
    """What bash's completion function offers for the command line ``words``."""
    program = (
        f"source {script}\n"
        f"COMP_WORDS=({' '.join(repr(w) for w in words)}); COMP_CWORD={len(words) - 1}\n"
        "_memoryd; printf '%s\\n' \"${COMPREPLY[@]}\"\n"
    )
    done = subprocess.run(
        ["bash", "--norc", "-c", program], capture_output=True, text=True, check=True
    )
    return done.stdout.split()


def test_bash_completion_completes_commands_options_and_choices(tmp_path: Path) -> None:
    done = run_cli("completion", "bash")
    assert done.returncode == 0, done.stderr
    script = tmp_path / "memoryd.bash"
    script.write_text(done.stdout)
    assert bash_complete(script, "memoryd", "insp") == ["inspect"]
    assert bash_complete(script, "memoryd", "inspect", "--js") == ["--json"]
    assert bash_complete(script, "memoryd", "-v", "recall", "--sc") == ["--scope", "--scope-id"]
    assert bash_complete(script, "memoryd", "recall", "--scope", "") == ["global", "team", "project"]
    assert bash_complete(script, "memoryd", "completion", "z") == ["zsh"]
    # a value of its own: no option names (bash's -o default then offers files)
    assert bash_complete(script, "memoryd", "sync", "--root", "") == []
    assert bash_complete(script, "memoryd", "recall", "--limit", "") == []
    assert bash_complete(script, "memoryd", "sync", "--root", "x", "--al") == [
        "--allow-mass-delete"
    ]


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_zsh_and_fish_scripts_name_every_command_and_option(shell: str) -> None:
    done = run_cli("completion", shell)
    assert done.returncode == 0, done.stderr
    _, commands = describe(build_parser())
    assert {"recall", "remember", "inspect", "completion"} <= {c.name for c in commands}
    for command in commands:
        assert command.name in done.stdout
    recall = next(c for c in commands if c.name == "recall")
    if shell == "zsh":
        assert "'--scope[]:value:(global project)'" in done.stdout
        assert "'--limit[at most N results]:value:'" in done.stdout
        assert "'--root[only this root (default: every root)]:path:_files'" in done.stdout
    else:
        assert (
            "complete -c memoryd -n '__fish_seen_subcommand_from recall' -l limit -r "
            "-d 'at most N results'"
        ) in done.stdout
    assert {"--limit", "--json"} <= {f for o in recall.options for f in o.flags}
    binary = shutil.which(shell)
    if binary is not None:  # the shell itself parses the script (where it is installed)
        checked = subprocess.run(
            [binary, "-n"], input=done.stdout, capture_output=True, text=True, check=False
        )
        assert checked.returncode == 0, checked.stderr


# Each keystroke is sent once the screen shows what the one before it drew (a fixed sleep
# is too short on a loaded machine, and ZLE draws nothing while typed-ahead keys wait).
ZPTY = r"""
zmodload zsh/zpty
zpty z 'zsh -f -i'
all=""
typeset -i deadline=$(( SECONDS + 50 ))  # the whole drive, within the run's 60 s
upto() {  # read the shell's screen until it matches the pattern $1
  local chunk
  while [[ $all != $~1 ]]; do
    (( SECONDS < deadline )) || return 1
    if zpty -r -t z chunk; then all+=$chunk; else sleep 0.05; fi
  done
}
zpty -w z 'PS1="> "; fpath=(%(folder)s $fpath); autoload -U compinit; compinit -u -D; memoryd() { :; }; print -r -- $(( 6 * 7 ))-ready'
upto '*42-ready*> *'
zpty -n -w z $'memoryd insp\t'; upto '*insp*ect*'
zpty -n -w z $' --js\t'; upto '*insp*ect*--js*on*'
zpty -n -w z $'\n'; upto '*insp*ect*--js*on*> *'
zpty -n -w z $'memoryd recall --scope \t'; upto '*--scope*global*project*'
print -r -- "$all"
zpty -d z
"""


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed here")
def test_zsh_completion_completes_in_a_real_zsh(tmp_path: Path) -> None:
    done = run_cli("completion", "zsh")
    (tmp_path / "_memoryd").write_text(done.stdout)  # autoloaded from $fpath, as installed
    drive = subprocess.run(
        ["zsh", "-f", "-c", ZPTY % {"folder": tmp_path}],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    import re

    screen = re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]|[\x00-\x09\x0b-\x1f]", "", drive.stdout)
    assert "memoryd inspect --json" in " ".join(screen.split()), screen
    assert re.search(r"global\s+project", screen), screen


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed here")
def test_fish_completion_completes_in_a_real_fish(tmp_path: Path) -> None:
    script = tmp_path / "memoryd.fish"
    script.write_text(run_cli("completion", "fish").stdout)

    def offered(line: str) -> list[str]:
        done = subprocess.run(
            ["fish", "--no-config", "-c", f"source {script}; complete -C '{line}'"],
            capture_output=True, text=True, timeout=60, check=True,
        )  # fmt: skip
        return [row.split("\t")[0] for row in done.stdout.splitlines()]

    assert offered("memoryd insp") == ["inspect"]
    assert offered("memoryd inspect --js") == ["--json"]
    assert offered("memoryd recall --scope ") == ["global", "project", "team"]


def test_a_full_disk_is_one_line_with_its_fix_not_an_internal_error(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno
    import os

    assert run_cli("init").returncode == 0
    real_fdopen = os.fdopen

    def full_disk(fd: int, *args: object, **kwargs: object) -> object:
        handle = real_fdopen(fd, *args, **kwargs)  # type: ignore[call-overload]
        handle.close()
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fdopen", full_disk)  # memoryd.fsutil's os: the one write helper's write
    done = run_cli(
        "remember", "--kind", "fact", "--summary", "toads are warty", "toad", cwd=isolated_home
    )
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        "memoryd: error: No space left on device: the command stopped before it finished\n"
        "  hint: free some space ('df -h' shows which disk), then run it again\n"
    )
    facts = isolated_home / "memory" / "facts"
    assert facts.is_dir() and not list(facts.glob("toads*"))  # and no temp file beside it
    assert [p.name for p in facts.iterdir() if p.name.startswith(".")] == []
    as_json = run_cli(
        "remember", "--kind", "fact", "--summary", "toads", "toad", "--json", cwd=isolated_home
    )
    assert json.loads(as_json.stdout) == {
        "error": "No space left on device: the command stopped before it finished",
        "hint": "free some space ('df -h' shows which disk), then run it again",
        "exit": 1,
    }


def test_a_read_only_file_system_is_one_line_naming_the_path(
    isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno
    import os

    from memoryd import fsutil

    assert run_cli("init").returncode == 0
    facts = isolated_home / "memory" / "facts"

    def read_only(folder: str) -> tuple[int, str]:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), folder)

    monkeypatch.setattr(fsutil, "_temp_file", read_only)  # the one write helper's first step
    done = run_cli(
        "remember", "--kind", "fact", "--summary", "toads are warty", "toad", cwd=isolated_home
    )
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"memoryd: error: Read-only file system: {facts}: the command stopped before it "
        "finished\n"
        "  hint: memoryd must write there: remount it read-write (or move that folder), then "
        "run it again\n"
    )
