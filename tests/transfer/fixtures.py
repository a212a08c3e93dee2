"""Each source's files, written the way the tool itself writes them.

The layouts, file names, frontmatter and columns follow each tool's docs and code:
Claude Code's auto memory (MEMORY.md index lines ``- [Title](file.md) — hook``, topic
files with ``name``/``description``/``type``, newer ones ``metadata.type``), Codex's
consolidation template (``# Task Group:`` handbook, the older YAML-headed blocks, and
memory_summary.md's three sections), claude-mem's SessionStore schema (observations with
title, subtitle, narrative, JSON facts and concepts, created_at_epoch in ms), Serena's
MemoriesManager (``<name>.md``, ``topic/name`` folders, ``~/.serena/memories/global``,
its ``serena_frontmatter_version: 1`` frontmatter with JSON-quoted values), Cline's memory
bank custom instructions (the six core files), OpenMemory's backup router (a zip of
memories.json and memories.jsonl.gz) and Letta's MemFS (``system/`` and ``reference/``
files with a ``description``). Each has Chinese text, a frontmatter variant, a planted
fake secret and (where a file can be broken) one file that does not parse.
"""

from __future__ import annotations

import gzip
import io
import json
import sqlite3
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

# A fake Stripe live key (the scanner's stripe-secret-key rule), assembled so no file of
# this repository holds it whole.
SECRET = "sk_" + "live_" + "Zq8Lm2Nx7Rt4Vb9Kc3Hj6Wd1"
BASE_MS = 1_760_000_000_000  # October 2025


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def claude_code(folder: Path) -> Path:
    """``~/.claude/projects/<slug>/memory``: the index, four kinds of topic file, an inline
    note, a topic file with the secret and one whose frontmatter is broken."""
    return write(folder, {
        "MEMORY.md": (
            "# Memory Index\n\n"
            "- [Use pnpm](feedback_pnpm.md) — the user's package manager rule\n"
            "- [Deploy with Kamal](project_deploy.md) — how production is deployed\n"
            "- [部署检查](project_deploy_zh.md) — 发布前的检查\n"
            "- [Stripe test setup](reference_stripe.md) — where the keys are\n"
            "- The user prefers short answers in plain English\n"
        ),
        "feedback_pnpm.md": (
            "---\nname: Use pnpm\ndescription: Always use pnpm, never npm, in this repository\n"
            "type: feedback\n---\n\nThe user corrected `npm install` twice.\n\n"
            "**Why:** the lockfile is pnpm-lock.yaml.\n**How to apply:** pnpm install, pnpm run.\n"
        ),
        "project_deploy.md": (
            "---\nname: deploy\ndescription: Production is deployed with Kamal to one VPS\n"
            "metadata:\n  type: project\n---\n\nChosen over k8s in March: one VPS is enough.\n"
        ),
        "project_deploy_zh.md": "部署前先跑 pnpm test，再检查迁移脚本是否幂等。\n",
        "reference_stripe.md": (
            "---\nname: stripe\ndescription: Stripe keys for the staging shop\ntype: reference\n"
            f"---\n\nThe live key is {SECRET} (rotate it yearly).\n"
        ),
        "user_broken.md": "---\nname: broken\ndescription: fix: the colon breaks it\n---\nx\n",
    })  # fmt: skip


def claude_md(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "# Project notes\n\nIntro text.\n\n## Build\n\nRun `make build`; it needs Go 1.22.\n\n"
        "## 代码风格\n\n函数名用动词开头。\n\n## Empty\n\n"
    )
    return path


def codex(folder: Path) -> Path:
    """``~/.codex/memories``: a Task Group handbook, memory_summary.md, and Codex's working
    files (raw_memories.md, rollout_summaries/) that are not memories."""
    return write(folder, {
        "MEMORY.md": (
            "# Task Group: proj/ci\n\nscope: CI for proj\napplies_to: cwd=/home/u/proj\n\n"
            "## Task 1: flaky integration tests, success\n\n### rollout_summary_files\n"
            "- `rollout_summaries/2026-03-07-ci.md`\n  - cwd: /home/u/proj\n"
            "  - updated_at: 2026-03-07T21:23:02Z\n\n### keywords\n\npytest-xdist, flaky, ci\n\n"
            "### learnings\n- Run the integration suite with -p no:randomly; order matters.\n\n"
            "# Task Group: proj/数据库迁移\n\nscope: 数据库迁移\n\n## Task 1: 回滚\n\n"
            "### keywords\n\nalembic, 回滚\n\n### learnings\n"
            "- 迁移必须可回滚：每个 upgrade 都写 downgrade。\n"
            f"- The staging DSN token was {SECRET}\n"
        ),
        "memory_summary.md": (
            "## User Profile\n\nA backend developer who likes terse answers and 中文注释.\n\n"
            "## General Tips\n\n- Never run the migrations against production by hand.\n"
            "- The test database is recreated by `make db-reset`.\n\n"
            "## What's in Memory\n\n- proj/ci: pytest-xdist, flaky\n  - desc: CI notes\n"
        ),
        "raw_memories.md": "raw stage-1 output, not a memory\n",
        "rollout_summaries/2026-03-07-ci.md": "a rollout recap, not a memory\n",
    })  # fmt: skip


def codex_old(folder: Path) -> Path:
    """The older handbook schema: a YAML header per block, then bullets."""
    return write(folder, {
        "MEMORY.md": (
            "---\nrollout_summary_files:\n  - 2026-02-12-lint.md (success, cwd=/repo, "
            "updated_at=2026-02-12T10:30:00Z)\ndescription: ruff and mypy setup of the repo\n"
            "keywords: ruff, mypy, lint\n---\n\n- ruff check src tests before mypy.\n\n"
            "---\nrollout_summary_files: [\ndescription: broken block\n---\n\n- lost\n"
        ),
    })  # fmt: skip


CLAUDE_MEM_SCHEMA = """
CREATE TABLE schema_versions (id INTEGER PRIMARY KEY, version INTEGER UNIQUE NOT NULL,
  applied_at TEXT NOT NULL);
CREATE TABLE sdk_sessions (
  id INTEGER PRIMARY KEY AUTOINCREMENT, content_session_id TEXT NOT NULL,
  memory_session_id TEXT UNIQUE, project TEXT NOT NULL,
  platform_source TEXT NOT NULL DEFAULT 'claude', user_prompt TEXT, started_at TEXT NOT NULL,
  started_at_epoch INTEGER NOT NULL, completed_at TEXT, completed_at_epoch INTEGER,
  status TEXT CHECK(status IN ('active', 'completed', 'failed')) NOT NULL DEFAULT 'active');
CREATE TABLE observations (
  id INTEGER PRIMARY KEY AUTOINCREMENT, memory_session_id TEXT NOT NULL, project TEXT NOT NULL,
  text TEXT, type TEXT NOT NULL, title TEXT, subtitle TEXT, facts TEXT, narrative TEXT,
  concepts TEXT, files_read TEXT, files_modified TEXT, prompt_number INTEGER,
  discovery_tokens INTEGER DEFAULT 0, created_at TEXT NOT NULL, created_at_epoch INTEGER NOT NULL,
  FOREIGN KEY(memory_session_id) REFERENCES sdk_sessions(memory_session_id) ON DELETE CASCADE);
CREATE INDEX idx_observations_project ON observations(project);
CREATE INDEX idx_observations_created ON observations(created_at_epoch DESC);
CREATE TABLE session_summaries (
  id INTEGER PRIMARY KEY AUTOINCREMENT, memory_session_id TEXT NOT NULL, project TEXT NOT NULL,
  request TEXT, investigated TEXT, learned TEXT, completed TEXT, next_steps TEXT,
  files_read TEXT, files_edited TEXT, notes TEXT, prompt_number INTEGER,
  created_at TEXT NOT NULL, created_at_epoch INTEGER NOT NULL);
"""

Observation = tuple[str, str, str, str, str, list[str], list[str], list[str]]


def claude_mem(path: Path, observations: Iterable[Observation]) -> Path:
    """claude-mem.db: (project, type, title, subtitle, narrative, facts, concepts,
    files_modified) per observation, one session per project, times a minute apart."""
    import datetime as dt

    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.executescript(CLAUDE_MEM_SCHEMA)
    conn.execute("PRAGMA journal_mode=WAL")  # as claude-mem opens it
    sessions: dict[str, str] = {}
    rows = []
    for i, (project, kind, title, subtitle, narrative, facts, concepts, files) in enumerate(
        observations
    ):
        if project not in sessions:
            sessions[project] = f"mem-{len(sessions)}"
            conn.execute(
                "INSERT INTO sdk_sessions (content_session_id, memory_session_id, project, "
                "started_at, started_at_epoch, status) VALUES (?, ?, ?, ?, ?, 'completed')",
                (f"claude-{len(sessions)}", sessions[project], project, "2025-10-09", BASE_MS),
            )
        epoch = BASE_MS + i * 60_000
        iso = dt.datetime.fromtimestamp(epoch / 1000, dt.UTC).isoformat()
        rows.append((
            sessions[project], project, kind, title, subtitle, json.dumps(facts),
            narrative, json.dumps(concepts), json.dumps([]), json.dumps(files), 1, iso, epoch,
        ))  # fmt: skip
    conn.executemany(
        "INSERT INTO observations (memory_session_id, project, type, title, subtitle, facts, "
        "narrative, concepts, files_read, files_modified, prompt_number, created_at, "
        "created_at_epoch) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    conn.commit()
    conn.close()
    return path


CLAUDE_MEM_ROWS: list[Observation] = [
    ("proj", "decision", "Use SQLite FTS5 for search", "over Elasticsearch",
     "One file, no server; trigram was too big.", ["FTS5 ships with Python's sqlite3"],
     ["trade-off"], ["src/index.py"]),
    ("proj", "bugfix", "修复中文分词", "unicode61 把整句当一个词",
     "改用二元组切分中文，召回率恢复。", ["短词查询以前查不到"], ["gotcha"], ["src/tokenizer.py"]),
    ("proj", "discovery", "Payment webhook secret location", "",
     f"The webhook signing key is {SECRET}.", [], ["how-it-works"], []),
    ("other", "feature", "Dark mode toggle", "", "Added to the settings page.", [], [], []),
    ("proj", "change", "Always run make lint before pushing", "", "CI fails otherwise.",
     [], ["pattern"], []),
]  # fmt: skip


def serena(project: Path, home: Path) -> Path:
    """``<project>/.serena/memories`` (plain, a topic subfolder, Serena's own frontmatter,
    the secret) and ``~/.serena/memories/global``."""
    folder = project / ".serena" / "memories"
    write(folder, {
        "suggested_commands.md": "# Suggested commands\n\n- `uv run pytest -x`\n- `uv run ruff check`\n",
        "style_and_conventions.md": (
            '---\nserena_frontmatter_version: 1\ntype: "Serena Memory"\n'
            'description: "Type hints everywhere; 中文注释可以"\n---\n'
            "Docstrings in Google style.\n"
        ),
        "architecture/data_flow.md": "数据流：watcher → batcher → indexer。\n",
        "deploy_credentials.md": f"Deploy token: {SECRET}\n",
    })  # fmt: skip
    write(home / ".serena" / "memories" / "global", {
        "editor_setup.md": "Neovim with the pyright language server.\n",
    })
    return folder


CLINE_FILES = {
    "projectbrief.md": (
        "# Project Brief\n\n## Core requirements\n\nA memory daemon for coding agents.\n\n"
        "## Goals\n\n- Files are the truth\n- 中文检索可用\n"
    ),
    "productContext.md": "# Product Context\n\n## Why this exists\n\nAgents forget.\n",
    "activeContext.md": (
        "# Active Context\n\n## Current focus\n\nImport from other tools.\n\n"
        f"## Recent changes\n\nRotated the API key {SECRET} last week.\n"
    ),
    "systemPatterns.md": (
        "# System Patterns\n\n## Architecture\n\nWatcher, batcher, indexer in floors.\n\n"
        "## Key decisions\n\nSubprocess git, not GitPython.\n"
    ),
    "techContext.md": "# Tech Context\n\n## Stack\n\nPython 3.11, SQLite FTS5, watchdog.\n",
    "progress.md": "# Progress\n\n## What works\n\nSync and recall.\n\n## Known issues\n\nNone.\n",
}


def cline(project: Path) -> Path:
    return write(project / "memory-bank", CLINE_FILES)


def openmemory_zip(path: Path) -> Path:
    """OpenMemory's backup: memories.json (relational) and memories.jsonl.gz in a zip."""
    cats = [{"id": "c1", "name": "preferences"}, {"id": "c2", "name": "work"}]
    memories: list[dict[str, Any]] = [
        {"id": "m1", "content": "Prefers dark roast coffee and 中文回复", "state": "active",
         "created_at": "2025-10-01T08:00:00+00:00", "updated_at": "2025-10-02T08:00:00+00:00",
         "category_ids": ["c1"], "metadata": {}},
        {"id": "m2", "content": "Works on the billing service in Go", "state": "active",
         "created_at": "2025-10-03T08:00:00+00:00", "updated_at": None, "category_ids": ["c2"]},
        {"id": "m3", "content": f"AWS-like key for the bucket: {SECRET}", "state": "active",
         "created_at": "2025-10-04T08:00:00+00:00", "category_ids": []},
        {"id": "m4", "content": "An old deleted memory", "state": "deleted",
         "created_at": "2025-10-05T08:00:00+00:00", "category_ids": []},
    ]  # fmt: skip
    payload = {"user": {"user_id": "u"}, "apps": [], "categories": cats, "memories": memories,
               "export_meta": {"version": "1"}}  # fmt: skip
    lines = "".join(json.dumps({"id": m["id"], "content": m["content"]}) + "\n" for m in memories)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("memories.json", json.dumps(payload, indent=2))
        archive.writestr("memories.jsonl.gz", gzip.compress(lines.encode()))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(buffer.getvalue())
    return path


def letta(home: Path, agent: str = "agent-1234") -> Path:
    """``~/.letta/agents/<id>/memory``: system/ (pinned), reference/, a skill, the secret,
    a broken frontmatter, and the .git folder MemFS is."""
    folder = home / ".letta" / "agents" / agent / "memory"
    return write(folder, {
        "system/persona.md": '---\ndescription: "Who I am"\n---\nI am a careful coding agent.\n',
        "system/human.md": (
            "---\ndescription: What I know about the user\nlimit: 5000\n---\n"
            "The user writes Rust and 喜欢简短的回答.\n"
        ),
        "reference/project-notes.md": "---\ndescription: Notes on proj\n---\nCI runs on GitHub Actions.\n",
        "reference/keys.md": f"---\ndescription: Service keys\n---\nPayments: {SECRET}\n",
        "reference/broken.md": "---\ndescription: [unclosed\n---\nx\n",
        "skills/deploy/SKILL.md": "---\nname: deploy\ndescription: deploy it\n---\nsteps\n",
        ".git/HEAD": "ref: refs/heads/main\n",
    })  # fmt: skip
