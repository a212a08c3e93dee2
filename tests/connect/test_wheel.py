"""The install for people who do not clone: the wheel pipx or uv builds from a git URL or a
folder. Built offline here and installed into a fresh virtualenv: its console script runs,
and ``memoryd connect`` works from it alone (the wheel carries the integrations it writes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

from tests.helpers import build_wheel


def test_a_wheel_installed_elsewhere_runs_and_connects_from_its_own_files(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path)
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
        requires = [
            line for line in archive.read(metadata).decode().splitlines()
            if line.startswith("Requires-Dist: ") and "extra ==" not in line
        ]  # fmt: skip
    shipped = {
        "memoryd/integrations/claude-code/settings.json",
        "memoryd/integrations/opencode/memoryd.js", "memoryd/integrations/opencode/opencode.json",
        "memoryd/integrations/codex/config.toml", "memoryd/integrations/gemini/settings.json",
        "memoryd/integrations/cursor/mcp.json",
    }  # fmt: skip
    assert shipped <= names
    assert "Requires-Dist: mcp<3,>=2" in requires  # the MCP server is in the default install

    fresh = tmp_path / "fresh"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(fresh)], check=True)
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(fresh / "bin" / "python"), "install",
         "--quiet", "--no-deps", "--no-index", str(wheel)],
        capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    # the dependencies (offline): this test run's, on the path after the wheel's own files
    site = subprocess.run(
        [str(fresh / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    (Path(site) / "deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    script = fresh / "bin" / "memoryd"
    env = {**os.environ, "PATH": "/usr/bin:/bin"}  # memoryd is found by its path alone
    where = subprocess.run(
        [str(fresh / "bin" / "python"), "-c", "import memoryd; print(memoryd.__file__)"],
        env=env, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    assert where == f"{site}/memoryd/__init__.py"  # the wheel's copy, not src/
    version = subprocess.run(
        [str(script), "--version"], env=env, capture_output=True, text=True, check=False
    )
    assert version.returncode == 0 and version.stdout.startswith("memoryd "), version.stderr

    done = subprocess.run(
        [str(script), "connect", "opencode", "gemini"], env=env, capture_output=True, text=True,
        timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    home = Path(os.environ["HOME"])
    plugin = (home / ".config/opencode/plugins/memoryd.js").read_text()
    assert plugin.endswith((Path(site) / "memoryd/integrations/opencode/memoryd.js").read_text())
    assert f"process.env.MEMORYD_BIN ||= {json.dumps(str(script))}" in plugin
    gemini = json.loads((home / ".gemini/settings.json").read_text())
    assert gemini["mcpServers"]["memoryd"]["command"] == str(script)
