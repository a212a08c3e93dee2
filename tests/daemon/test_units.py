"""Rendering the systemd unit and the LaunchAgent, and shipping their templates."""

from __future__ import annotations

import os
import plistlib
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from memoryd.daemon import manager as service_manager
from memoryd.daemon import units
from memoryd.paths import resolve_paths
from tests.helpers import build_wheel

REPO = Path(__file__).resolve().parents[2]
ODD = '/tmp/odd dir/50% "quoted" $HOME \\ back'


def test_repository_units_are_the_packaged_templates() -> None:
    assert (REPO / "systemd" / "memoryd.service").read_bytes() == (
        REPO / "src/memoryd/units/memoryd.service"
    ).read_bytes()
    assert (REPO / "launchd" / units.LAUNCHD_PLIST).read_bytes() == (
        REPO / "src/memoryd/units" / units.LAUNCHD_PLIST
    ).read_bytes()


def test_a_built_wheel_ships_the_templates_and_finds_them(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path)
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        archive.extractall(tmp_path / "site")
    assert {"memoryd/units/memoryd.service", f"memoryd/units/{units.LAUNCHD_PLIST}"} <= names
    page = {f"memoryd/ui/static/{name}" for name in ("index.html", "app.js", "app.css")}
    assert page <= names  # memoryd ui's page ships in the wheel: it fetches nothing from elsewhere
    probe = (
        "import memoryd, memoryd.daemon.units as u; print(memoryd.__file__); "
        "print(u.template('memoryd.service') == open(sys.argv[1]).read())"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    done = subprocess.run(
        [sys.executable, "-c", "import sys; " + probe, str(REPO / "systemd/memoryd.service")],
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    where, same = done.stdout.split()
    assert where == str(tmp_path / "site/memoryd/__init__.py")  # the wheel's copy, not src/
    assert same == "True"


def _render_systemd(env: dict[str, str]) -> str:
    return service_manager.render("systemd", env, resolve_paths(env))


def test_systemd_unit_runs_this_python_with_the_environment_a_push_needs(tmp_path: Path) -> None:
    env = {
        "HOME": str(tmp_path / "home"),
        "MEMORYD_HOME": str(tmp_path / "mh"),
        "SSH_AUTH_SOCK": ODD,
        "PATH": "/usr/bin:relative/bin:/usr/bin:/bin",
        "UNRELATED": "x",
    }
    text = _render_systemd(env)
    unit = units.parse_systemd(text)
    assert units.MARKER in text
    assert unit["Service"]["Restart"] == ["on-failure"]
    assert unit["Service"]["RestartSec"] == ["15"]
    assert unit["Install"]["WantedBy"] == ["default.target"]
    assert "User" not in unit["Service"]  # a user unit: never another user, never root
    exec_start = units.unit_words(unit["Service"]["ExecStart"][0], exec_line=True)
    assert exec_start == [sys.executable, "-m", "memoryd", "run"]
    assert units.systemd_environment(text) == {
        "MEMORYD_HOME": str(tmp_path / "mh"),
        "SSH_AUTH_SOCK": ODD,
        "PATH": "/usr/bin:/bin",
    }


def test_systemd_unit_without_optional_variables_sets_none_of_them(tmp_path: Path) -> None:
    text = _render_systemd({"HOME": str(tmp_path)})
    assert "Environment" not in units.parse_systemd(text)["Service"]
    assert "@" not in text.split("[Unit]", 1)[1]  # no placeholder left


def test_systemd_analyze_accepts_the_installed_unit(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("no systemd-analyze here; the parse tests above cover the unit")
    env = {**os.environ, "MEMORYD_HOME": str(tmp_path / "my home"), "SSH_AUTH_SOCK": ODD}
    path = tmp_path / "home" / ".config/systemd/user/memoryd.service"
    path.parent.mkdir(parents=True)
    path.write_text(_render_systemd(env))
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    done = subprocess.run(
        [analyze, "verify", "--user", str(path)],
        env={**env, "XDG_RUNTIME_DIR": str(runtime)},
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert (done.returncode, done.stderr, done.stdout) == (0, "", "")


def test_systemd_analyze_would_catch_a_broken_unit(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("no systemd-analyze here")
    path = tmp_path / "memoryd.service"
    path.write_text(
        _render_systemd(dict(os.environ)).replace(sys.executable, "/nonexistent/python")
    )
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    done = subprocess.run(
        [analyze, "verify", "--user", str(path)],
        env={**os.environ, "XDG_RUNTIME_DIR": str(runtime)},
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert "/nonexistent/python is not executable" in done.stderr


def test_launchd_plist_round_trips_through_plistlib(tmp_path: Path) -> None:
    env = {
        "HOME": str(tmp_path / "home"),
        "MEMORYD_HOME": str(tmp_path / "mh"),
        "SSH_AUTH_SOCK": "/Users/me/.ssh/agent.sock",
        "PATH": "/opt/homebrew/bin:/usr/bin",
    }
    paths = resolve_paths(env)
    text = service_manager.render("launchd", env, paths)
    data = plistlib.loads(text.encode())
    assert units.MARKER in text
    assert data == plistlib.loads(plistlib.dumps(data))
    assert data["Label"] == "dev.memoryd.daemon"
    err_file = str(paths.log_dir / "launchd.err.log")
    # the daemon is told its stderr file: no log lines go there (memoryd.log rotates, this
    # file nothing rotates), and it is cut to its newest lines at every start
    assert data["ProgramArguments"] == [
        sys.executable, "-m", "memoryd", "run", "--stderr-log", err_file,
    ]  # fmt: skip
    assert data["RunAtLoad"] is True
    assert data["KeepAlive"] == {"SuccessfulExit": False}
    assert data["StandardErrorPath"] == err_file
    assert "StandardOutPath" not in data  # the daemon writes nothing on stdout
    assert data["EnvironmentVariables"] == {
        "MEMORYD_HOME": str(tmp_path / "mh"),
        "SSH_AUTH_SOCK": "/Users/me/.ssh/agent.sock",
        "PATH": "/opt/homebrew/bin:/usr/bin",
    }
    assert units.launchd_environment(text) == data["EnvironmentVariables"]


def test_launchd_keeps_its_own_per_boot_agent_socket(tmp_path: Path) -> None:
    sock = "/private/tmp/com.apple.launchd.AbCdEf/Listeners"
    env = {"HOME": str(tmp_path), "SSH_AUTH_SOCK": sock}
    data = plistlib.loads(service_manager.render("launchd", env, resolve_paths(env)).encode())
    assert "SSH_AUTH_SOCK" not in data["EnvironmentVariables"]
    assert units.systemd_environment(_render_systemd(env))["SSH_AUTH_SOCK"] == sock


def test_a_line_break_cannot_reach_a_unit(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="cannot contain a line break"):
        _render_systemd({"HOME": str(tmp_path), "SSH_AUTH_SOCK": "/a\nExecStartPre=/bin/evil"})


def test_volatile_agent_sockets() -> None:
    assert units.volatile_agent("/tmp/ssh-XXXXq1w2e3/agent.1234")
    assert not units.volatile_agent("/run/user/1000/keyring/ssh")
    assert not units.volatile_agent("/run/user/1000/ssh-agent.socket")
    assert not units.volatile_agent("/tmp/ssh-XXXX/agent.1234/../../etc")


def test_the_program_a_unit_runs_is_read_back_from_either_manager() -> None:
    python = "/opt/my env/bin/python$1"  # a space and a $: quoted in the unit, read back whole
    systemd = units.render_systemd(python, {"PATH": "/usr/bin"})
    launchd = units.render_launchd(python, {"PATH": "/usr/bin"}, Path("/logs"))
    assert units.unit_program("systemd", systemd) == python
    assert units.unit_program("launchd", launchd) == python
    assert units.unit_program("systemd", "[Service]\nnot a line\n") is None
    assert units.unit_program("launchd", "<plist") is None
