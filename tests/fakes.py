"""Fake ``systemctl`` and ``launchctl``: the only mocks of the service tests.

Each is a small Python script placed first on PATH. It appends its arguments to
``<bin>/<name>.calls`` (one JSON list a line) and keeps just enough state in
``<bin>/<name>.state.json`` (enabled, active, loaded...) to answer status
queries truthfully; ``state["fail"][verb] = message`` makes a verb fail.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

_COMMON = """\
import json, os, sys
from pathlib import Path
here = Path(__file__).parent
name = Path(__file__).name
args = sys.argv[1:]
with open(here / (name + ".calls"), "a") as f:
    f.write(json.dumps(args) + "\\n")
state_file = here / (name + ".state.json")
state = json.loads(state_file.read_text()) if state_file.exists() else {}
def done(code=0, out="", err=""):
    state_file.write_text(json.dumps(state))
    sys.stdout.write(out)
    sys.stderr.write(err)
    sys.exit(code)
"""

_SYSTEMCTL = """
if args[:1] != ["--user"]:
    done(1, err="fake systemctl: only --user is allowed\\n")
verb, rest = args[1], args[2:]
if verb in state.get("fail", {}):
    done(1, err=state["fail"][verb] + "\\n")
unit_file = Path(os.environ["HOME"], ".config/systemd/user", "memoryd.service")
if verb == "daemon-reload":
    state["loaded"] = unit_file.exists()
elif verb == "enable":
    if not state.get("loaded") or not unit_file.exists():
        done(1, err="Failed to enable unit: Unit file memoryd.service does not exist.\\n")
    state["enabled"] = True
    state["active"] = state.get("active") or "--now" in rest
elif verb == "disable":
    state["enabled"] = False
    state["active"] = state.get("active") and "--now" not in rest
elif verb == "show" and "--property" in " ".join(rest):
    active = bool(state.get("active"))
    done(0, out="\\n".join([
        "LoadState=" + ("loaded" if state.get("loaded") else "not-found"),
        "ActiveState=" + ("active" if active else "inactive"),
        "SubState=" + ("running" if active else "dead"),
        "UnitFileState=" + ("enabled" if state.get("enabled") else "disabled"),
        "MainPID=" + ("4242" if active else "0"),
    ]) + "\\n")
elif verb == "show-environment":
    done(0, out="".join(f"{k}={v}\\n" for k, v in state.get("manager_env", {}).items()))
elif verb in ("try-restart", "reset-failed"):
    pass
else:
    done(1, err=f"fake systemctl: unexpected {verb}\\n")
done()
"""

_LAUNCHCTL = """
verb, rest = args[0], args[1:]
if verb in state.get("fail", {}):
    done(1, err=state["fail"][verb] + "\\n")
if verb == "print":
    if not state.get("loaded"):
        done(113, err=f"Could not find service in domain for port\\n")
    done(0, out=rest[0] + " = {\\n\\tactive count = 1\\n\\tstate = running\\n\\tpid = 4343\\n}\\n")
elif verb == "bootstrap":
    if state.get("loaded"):
        done(5, err="Bootstrap failed: 5: Input/output error\\n")
    import plistlib
    plistlib.loads(Path(rest[1]).read_bytes())
    state["loaded"] = True
elif verb == "bootout":
    if not state.get("loaded"):
        done(3, err="Boot-out failed: 3: No such process\\n")
    state["loaded"] = False
elif verb in ("enable", "disable", "kickstart"):
    pass
else:
    done(1, err=f"fake launchctl: unexpected {verb}\\n")
done()
"""


@dataclass
class FakeTool:
    bin_dir: Path
    name: str

    def calls(self) -> list[list[str]]:
        file = self.bin_dir / f"{self.name}.calls"
        if not file.exists():
            return []
        return [json.loads(line) for line in file.read_text().splitlines()]

    def clear(self) -> None:
        (self.bin_dir / f"{self.name}.calls").unlink(missing_ok=True)

    @property
    def state(self) -> dict[str, Any]:
        file = self.bin_dir / f"{self.name}.state.json"
        data: dict[str, Any] = json.loads(file.read_text()) if file.exists() else {}
        return data

    def set_state(self, **values: Any) -> None:
        file = self.bin_dir / f"{self.name}.state.json"
        file.write_text(json.dumps({**self.state, **values}))


def install_fakes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, FakeTool]:
    """Put fake systemctl and launchctl first on PATH; return them by name."""
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir()
    tools = {}
    for name, body in (("systemctl", _SYSTEMCTL), ("launchctl", _LAUNCHCTL)):
        script = bin_dir / name
        script.write_text(f"#!{sys.executable}\n{_COMMON}{body}")
        script.chmod(0o755)
        tools[name] = FakeTool(bin_dir, name)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    return tools
