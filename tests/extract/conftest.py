"""Shared by the extraction tests: a repository, both roots, the agents' folders, a fake command."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from memoryd.app import App
from memoryd.extract.extractor import Extractor
from memoryd.extract.tracker import Tracker
from memoryd.extract_ledger import Ledger
from memoryd.init.plugin import init_global
from tests.extract.agents import ClaudeSession, extractor_command
from tests.helpers import git

SECRET = "sk_live_Zq8Lm2Nx7Rt4Vb9Kc3Hj6Wd1"
TURNS = [
    ("部署脚本为什么用 pnpm 而不是 npm?", "因为 lockfile 格式不兼容,npm 读不了 pnpm-lock.yaml。"),
    ("Which Python do we target?", "3.11, because the CI image pins it and tomllib is needed."),
    ("以后回答都用中文。", "好的,以后都用中文回答。"),
    ("Never force-push to main, ever.", "Understood: no force-pushes to main."),
]
ANSWER = {
    "memories": [
        {"kind": "pitfall", "summary": "部署脚本用 pnpm 而不是 npm,因为 lockfile 不兼容",
         "body": "npm 读不了 pnpm-lock.yaml。", "load_when": ["部署", "pnpm"]},
        {"kind": "preference", "summary": "用中文回答", "body": "", "scope": "global"},
        {"kind": "rule", "summary": "Never force-push to main"},
        {"kind": "fact", "summary": "The staging API key", "body": f"it is {SECRET}"},
        {"kind": "rules", "summary": "An iron rule by the back door"},
        {"summary": "no kind at all"},
    ]
}  # fmt: skip


@dataclass
class World:
    repo: Path
    global_root: Path
    projects: Path  # ~/.claude/projects
    opencode: Path  # ~/.local/share/opencode
    log: Path  # what the fake command read, one file per call
    answer: Path
    mode: Path
    now: list[float]

    def app(self) -> App:
        return App()

    def tracker(self) -> Tracker:
        app = self.app()
        extractor = Extractor(
            app, Ledger(app.paths.state_dir), clock=lambda: "2026-12-01T09:00:00+00:00"
        )
        return Tracker(extractor, claude_dir=self.projects, opencode_dir=self.opencode,
                       clock=lambda: self.now[0])  # fmt: skip

    def calls(self) -> list[str]:
        return [
            p.read_text() for p in sorted(self.log.iterdir(), key=lambda p: p.stat().st_mtime_ns)
        ]

    def ledger(self) -> dict[str, dict[str, object]]:
        data = json.loads((self.app().paths.state_dir / "extract.json").read_text())
        return data["sessions"]  # type: ignore[no-any-return]

    def configure(self, **extract: object) -> None:
        file = self.app().paths.config_file
        data = yaml.safe_load(file.read_text()) or {}
        data["extract"] = extract
        file.write_text(yaml.safe_dump(data, allow_unicode=True))


@pytest.fixture
def world(tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    repo = tmp_path / "proj"
    repo.mkdir()
    git(repo, "init", "-q")
    log, answer, mode = tmp_path / "calls", tmp_path / "answer.json", tmp_path / "mode"
    log.mkdir()
    answer.write_text(json.dumps(ANSWER, ensure_ascii=False))
    mode.write_text("answer")
    for key, value in (("FAKE_LOG", log), ("FAKE_ANSWER", answer), ("FAKE_MODE", mode)):
        monkeypatch.setenv(key, str(value))
    home = tmp_path / "home"
    init_global(App(cwd=repo))
    w = World(repo, isolated_home / "memory", home / ".claude" / "projects",
              home / ".local" / "share" / "opencode", log, answer, mode, [time.time() + 3600])  # fmt: skip
    w.configure(command=extractor_command(tmp_path), settle_ms=20000, min_turns=4, min_chars=40)
    return w


def claude_turns(session: ClaudeSession, turns: list[tuple[str, str]]) -> None:
    for prompt, answer in turns:
        session.prompt(prompt)
        session.answer(answer, tool="ls")
