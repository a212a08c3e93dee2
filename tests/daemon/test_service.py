"""``memoryd service`` against fake systemctl/launchctl first on PATH (the only mocks)."""

from __future__ import annotations

import json
import os
import plistlib
import sys
from pathlib import Path

import pytest

from memoryd.daemon import units
from tests.fakes import FakeTool, install_fakes
from tests.helpers import run_cli

UNIT = "memoryd.service"


@pytest.fixture
def fakes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, FakeTool]:
    return install_fakes(tmp_path, monkeypatch)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def _json(*args: str) -> dict[str, object]:
    done = run_cli("service", *args, "--json")
    assert done.returncode in (0, 1), done.stderr
    data: dict[str, object] = json.loads(done.stdout)
    return data


def test_systemd_install_status_uninstall(
    fakes: dict[str, FakeTool], home: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    systemctl, unit = fakes["systemctl"], home / ".config/systemd/user" / UNIT
    monkeypatch.setenv("SSH_AUTH_SOCK", "/run/user/1000/ssh-agent.socket")
    assert run_cli("service", "status", "--manager", "systemd").returncode == 1

    done = run_cli("service", "install", "--manager", "systemd")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{unit}: installed\nran:\n")
    assert systemctl.calls()[-2:] == [
        ["--user", "daemon-reload"],
        ["--user", "enable", "--now", UNIT],
    ]
    env = units.systemd_environment(unit.read_text())
    assert env["MEMORYD_HOME"] == str(isolated_home)
    assert env["SSH_AUTH_SOCK"] == "/run/user/1000/ssh-agent.socket"
    assert isolated_home.joinpath("logs").is_dir()

    status = _json("status", "--manager", "systemd")
    assert (status["installed"], status["ours"], status["enabled"], status["running"]) == (
        True, True, True, True,
    )  # fmt: skip
    assert status["pid"] == 4242
    assert run_cli("service", "status", "--manager", "systemd").stdout == (
        f"systemd unit {unit}: installed\nenabled: yes, running: yes, pid 4242 (active (running))\n"
    )

    systemctl.clear()
    uninstall = run_cli("service", "uninstall", "--manager", "systemd")
    assert uninstall.returncode == 0, uninstall.stderr
    assert systemctl.calls() == [
        ["--user", "disable", "--now", UNIT],
        ["--user", "daemon-reload"],
        ["--user", "reset-failed", UNIT],
    ]
    assert not unit.exists()
    status = _json("status", "--manager", "systemd")
    assert (status["installed"], status["enabled"], status["running"]) == (False, False, False)
    again = run_cli("service", "uninstall", "--manager", "systemd")
    assert again.stdout == f"{unit}: not installed, nothing to remove\n"


def test_install_warns_about_an_agent_socket_that_dies_at_logout(
    fakes: dict[str, FakeTool], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SSH_AUTH_SOCK", "/tmp/ssh-XXXXabc123/agent.4711")
    done = run_cli("service", "install", "--manager", "systemd")
    assert done.returncode == 0
    assert done.stderr == (
        "memoryd: warning: SSH_AUTH_SOCK=/tmp/ssh-XXXXabc123/agent.4711 changes at every login, "
        "so pushes over SSH will fail after you log out; see 'Pushing from a service' in "
        "docs/service.md\n"
    )
    monkeypatch.setenv("SSH_AUTH_SOCK", "/run/user/1000/keyring/ssh")
    assert run_cli("service", "install", "--manager", "systemd").stderr == ""


def test_install_twice_is_harmless_and_a_changed_unit_restarts(
    fakes: dict[str, FakeTool], home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    systemctl, unit = fakes["systemctl"], home / ".config/systemd/user" / UNIT
    assert run_cli("service", "install", "--manager", "systemd").returncode == 0
    first = unit.read_bytes()
    systemctl.clear()
    again = run_cli("service", "install", "--manager", "systemd")
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith(f"{unit}: already installed, unchanged\n")
    assert systemctl.calls() == [["--user", "daemon-reload"], ["--user", "enable", "--now", UNIT]]
    assert unit.read_bytes() == first

    monkeypatch.setenv("SSH_AUTH_SOCK", "/tmp/agent.sock")
    systemctl.clear()
    assert _json("install", "--manager", "systemd")["action"] == "updated"
    assert systemctl.calls() == [
        ["--user", "daemon-reload"],
        ["--user", "try-restart", UNIT],
        ["--user", "enable", "--now", UNIT],
    ]
    assert units.systemd_environment(unit.read_text())["SSH_AUTH_SOCK"] == "/tmp/agent.sock"


def test_dry_run_prints_the_unit_and_commands_and_touches_nothing(
    fakes: dict[str, FakeTool], home: Path
) -> None:
    done = run_cli("service", "install", "--dry-run", "--manager", "systemd")
    assert done.returncode == 0, done.stderr
    unit = home / ".config/systemd/user" / UNIT
    assert done.stdout.startswith(f"# would write {unit}:\n# Written by memoryd")
    assert f'ExecStart="{sys.executable}" "-m" "memoryd" "run"\n' in done.stdout
    assert done.stdout.endswith(
        f"# would run:\n  systemctl --user daemon-reload\n  systemctl --user enable --now {UNIT}\n"
    )
    assert not unit.exists()
    assert fakes["systemctl"].calls() == []
    assert run_cli("service", "uninstall", "--dry-run", "--manager", "systemd").stdout == (
        f"# {unit} is not installed, nothing to remove\n# would run nothing\n"
    )


def test_a_unit_memoryd_did_not_write_is_never_replaced_or_removed(
    fakes: dict[str, FakeTool], home: Path
) -> None:
    unit = home / ".config/systemd/user" / UNIT
    unit.parent.mkdir(parents=True)
    mine = "[Service]\nExecStart=/usr/local/bin/memoryd run\n"
    unit.write_text(mine)
    for action in ("install", "uninstall"):
        done = run_cli("service", action, "--manager", "systemd")
        assert done.returncode == 1
        assert done.stderr == (
            f"memoryd: error: {unit} exists and memoryd did not write it, so memoryd leaves it alone\n"
            f"  hint: move it aside (mv {unit} {unit}.mine) and run 'memoryd service {action}' again\n"
        )
    assert unit.read_text() == mine
    assert fakes["systemctl"].calls() == []


def test_a_failing_systemctl_is_reported_and_a_retry_recovers(
    fakes: dict[str, FakeTool], home: Path
) -> None:
    fakes["systemctl"].set_state(
        fail={"daemon-reload": "Failed to connect to bus: No medium found"}
    )
    done = run_cli("service", "install", "--manager", "systemd")
    assert done.returncode == 1
    assert done.stderr == (
        "memoryd: error: 'systemctl --user daemon-reload' failed (exit 1): "
        "Failed to connect to bus: No medium found; nothing was installed\n"
        "  hint: is your user manager running? Over SSH run 'loginctl enable-linger $USER' and "
        "log in again; 'journalctl --user -u memoryd' shows the service log\n"
    )
    unit = home / ".config/systemd/user" / UNIT
    assert not unit.exists()  # no half install: status and doctor would call it installed
    assert _json("status", "--manager", "systemd")["installed"] is False
    fakes["systemctl"].set_state(fail={})
    retry = run_cli("service", "install", "--manager", "systemd", "--json")
    assert retry.returncode == 0, retry.stderr
    assert json.loads(retry.stdout)["action"] == "installed"
    assert fakes["systemctl"].state["active"] is True


def test_an_install_that_fails_to_enable_is_undone(fakes: dict[str, FakeTool], home: Path) -> None:
    systemctl, unit = fakes["systemctl"], home / ".config/systemd/user" / UNIT
    systemctl.set_state(fail={"enable": "Failed to enable unit: Access denied"})
    done = run_cli("service", "install", "--manager", "systemd")
    assert done.returncode == 1
    assert done.stderr.startswith(
        "memoryd: error: 'systemctl --user enable --now memoryd.service' failed (exit 1): "
        "Failed to enable unit: Access denied; nothing was installed\n"
    )
    assert not unit.exists()
    assert systemctl.calls() == [
        ["--user", "daemon-reload"],
        ["--user", "enable", "--now", UNIT],
        ["--user", "disable", "--now", UNIT],
        ["--user", "daemon-reload"],
    ]
    assert systemctl.state["loaded"] is False  # systemd forgot the unit file again


def test_a_failed_update_puts_the_previous_unit_back(
    fakes: dict[str, FakeTool], home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    systemctl, unit = fakes["systemctl"], home / ".config/systemd/user" / UNIT
    assert run_cli("service", "install", "--manager", "systemd").returncode == 0
    first = unit.read_bytes()
    monkeypatch.setenv("SSH_AUTH_SOCK", "/tmp/agent.sock")
    systemctl.set_state(fail={"try-restart": "Job for memoryd.service failed."})
    done = run_cli("service", "install", "--manager", "systemd")
    assert done.returncode == 1
    assert done.stderr.startswith(
        "memoryd: error: 'systemctl --user try-restart memoryd.service' failed (exit 1): "
        "Job for memoryd.service failed.; the previous unit was put back\n"
    )
    assert unit.read_bytes() == first
    assert systemctl.calls()[-1] == ["--user", "daemon-reload"]


def test_a_unit_folder_that_cannot_be_written_is_one_line(
    fakes: dict[str, FakeTool], home: Path
) -> None:
    folder = home / ".config/systemd/user"
    folder.parent.mkdir(parents=True)
    folder.write_text("not a folder")
    done = run_cli("service", "install", "--manager", "systemd")
    assert done.returncode == 1
    assert done.stderr == (
        f"memoryd: error: cannot write {folder / UNIT}: {folder}: File exists\n"
        f"  hint: make {folder} a folder you can write to, then run "
        "'memoryd service install' again\n"
    )
    assert fakes["systemctl"].calls() == []


def test_a_launchd_bootstrap_that_fails_leaves_no_agent(
    fakes: dict[str, FakeTool], home: Path
) -> None:
    launchctl = fakes["launchctl"]
    plist = home / "Library/LaunchAgents" / units.LAUNCHD_PLIST
    target = f"gui/{os.getuid()}/{units.LABEL}"
    launchctl.set_state(fail={"bootstrap": "Bootstrap failed: 5: Input/output error"})
    done = run_cli("service", "install", "--manager", "launchd")
    assert done.returncode == 1
    assert done.stderr.startswith(
        f"memoryd: error: 'launchctl bootstrap gui/{os.getuid()} {plist}' failed (exit 1): "
        "Bootstrap failed: 5: Input/output error; nothing was installed\n"
    )
    assert not plist.exists()
    assert launchctl.calls()[-2:] == [["bootout", target], ["disable", target]]


def test_no_systemctl_on_path(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    done = run_cli("service", "install", "--manager", "systemd")
    assert done.returncode == 1
    assert done.stderr.startswith(
        "memoryd: error: systemctl not found on PATH; nothing was installed\n"
        "  hint: this machine has no systemd; run 'memoryd run' under your own supervisor"
    )
    assert not (home / ".config/systemd/user" / UNIT).exists()
    status = run_cli("service", "status", "--manager", "systemd")
    assert status.returncode == 1
    assert status.stdout.splitlines()[1:] == [
        "manager: systemctl not found on PATH",
        "  hint: this machine has no systemd; run 'memoryd run' under your own supervisor "
        "('memoryd service install --dry-run' shows the unit it would use)",
    ]


def test_launchd_install_status_uninstall(fakes: dict[str, FakeTool], home: Path) -> None:
    launchctl = fakes["launchctl"]
    plist = home / "Library/LaunchAgents" / units.LAUNCHD_PLIST
    domain = f"gui/{os.getuid()}"
    target = f"{domain}/{units.LABEL}"
    done = run_cli("service", "install", "--manager", "launchd")
    assert done.returncode == 0, done.stderr
    assert launchctl.calls() == [
        ["print", target],
        ["enable", target],
        ["bootstrap", domain, str(plist)],
    ]
    assert plistlib.loads(plist.read_bytes())["Label"] == units.LABEL

    status = _json("status", "--manager", "launchd")
    assert (status["installed"], status["running"], status["pid"]) == (True, True, 4343)

    launchctl.clear()
    again = run_cli("service", "install", "--manager", "launchd")
    assert again.returncode == 0, again.stderr
    assert launchctl.calls() == [["print", target], ["kickstart", target]]

    launchctl.clear()
    done = run_cli("service", "uninstall", "--manager", "launchd")
    assert done.returncode == 0, done.stderr
    assert launchctl.calls() == [["bootout", target], ["disable", target]]
    assert not plist.exists()
    assert _json("status", "--manager", "launchd")["running"] is False


def test_launchd_reloads_a_changed_agent(
    fakes: dict[str, FakeTool], home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = f"gui/{os.getuid()}/{units.LABEL}"
    plist = home / "Library/LaunchAgents" / units.LAUNCHD_PLIST
    assert run_cli("service", "install", "--manager", "launchd").returncode == 0
    monkeypatch.setenv("SSH_AUTH_SOCK", "/Users/me/.ssh/agent.sock")
    fakes["launchctl"].clear()
    done = run_cli("service", "install", "--manager", "launchd")
    assert done.returncode == 0, done.stderr
    assert fakes["launchctl"].calls() == [
        ["print", target],
        ["bootout", target],
        ["enable", target],
        ["bootstrap", f"gui/{os.getuid()}", str(plist)],
    ]
    assert units.launchd_environment(plist.read_text())["SSH_AUTH_SOCK"] == (
        "/Users/me/.ssh/agent.sock"
    )
