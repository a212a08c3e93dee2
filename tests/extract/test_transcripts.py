"""Reading Claude Code and OpenCode transcripts: only what the person and the model said."""

from __future__ import annotations

import json
import time
from pathlib import Path

from memoryd.extract.transcript import (
    ASSISTANT,
    USER,
    Message,
    claude_slug,
    opencode_db_sessions,
    opencode_json_session,
    opencode_json_session_of,
    read_claude,
)
from tests.extract.agents import ClaudeSession, OpenCodeDB, OpenCodeJSON

SAID = [
    Message(USER, "部署脚本为什么用 pnpm?"),
    Message(ASSISTANT, "Because the lockfile format differs.\n\nnpm cannot read it."),
    Message(USER, "记住这个"),
    Message(ASSISTANT, "好的。"),
]


def test_claude_code_transcript(tmp_path: Path) -> None:
    cwd = tmp_path / "my app"
    session = ClaudeSession(tmp_path / "projects", cwd)
    assert session.file.parent.name == claude_slug(cwd)
    assert claude_slug(Path("/home/me/my_app.v2/部署")) == "-home-me-my-app-v2---"
    session.prompt("部署脚本为什么用 pnpm?")
    session.answer(
        "Because the lockfile format differs.", "npm cannot read it.", tool="cat package.json"
    )
    session.noise()
    session.prompt("记住这个")
    session.answer("好的。")
    with session.file.open("a") as out:
        out.write(
            '{"type": "user", "message": {"role": "user", "content": "half a li'
        )  # being written
    conv = read_claude(session.file)
    assert conv is not None
    assert list(conv.messages) == SAID
    assert (conv.agent, conv.session, conv.cwd, conv.turns) == ("claude", session.session, cwd, 2)
    assert conv.key == f"claude:{session.session}"
    assert conv.since_turn(1) == tuple(SAID[2:]) and conv.since_turn(2) == ()
    assert abs(conv.updated - session.file.stat().st_mtime) < 1e-6
    assert read_claude(tmp_path / "missing.jsonl") is None


def test_a_transcript_with_broken_lines_and_bytes_still_reads(tmp_path: Path) -> None:
    file = tmp_path / "s.jsonl"
    good = {
        "type": "user",
        "cwd": "/w",
        "sessionId": "abc",
        "message": {"role": "user", "content": "hi"},
    }
    file.write_bytes(b"not json\n\xff\xfe\n" + json.dumps(good).encode() + b"\n[1, 2]\n")
    conv = read_claude(file)
    assert conv is not None and conv.messages == (Message(USER, "hi"),) and conv.session == "abc"


def test_opencode_database_sessions(tmp_path: Path) -> None:
    data = tmp_path / "opencode"
    db = OpenCodeDB(data)
    since = int(time.time() * 1000) - 1
    sid = db.session(tmp_path / "proj")
    child = db.session(tmp_path / "proj", parent=sid)  # a subagent's session: not extracted
    db.turn(sid, "部署脚本为什么用 pnpm?", "Because the lockfile format differs.")
    db.turn(child, "subtask", "SUBAGENT TEXT")
    db.turn(sid, "记住这个", "好的。")
    found = opencode_db_sessions(data / "opencode.db", since)
    db.close()
    assert [c.session for c in found] == [sid]
    conv = found[0]
    assert list(conv.messages) == [
        Message(USER, "部署脚本为什么用 pnpm?"),
        Message(ASSISTANT, "Because the lockfile format differs."),
        Message(USER, "记住这个"),
        Message(ASSISTANT, "好的。"),
    ]
    assert conv.cwd == tmp_path / "proj" and conv.agent == "opencode" and conv.turns == 2
    assert abs(conv.updated - time.time()) < 60
    assert opencode_db_sessions(data / "opencode.db", int(time.time() * 1000) + 10_000) == []
    assert opencode_db_sessions(tmp_path / "nope" / "opencode.db", 0) == []


def test_opencode_json_store_sessions(tmp_path: Path) -> None:
    store = OpenCodeJSON(tmp_path / "opencode")
    sid = store.session(tmp_path / "proj")
    store.turn(sid, "部署脚本为什么用 pnpm?", "Because the lockfile format differs.")
    part = next((store.storage / "part").rglob("*.json"))
    assert opencode_json_session_of(store.storage, part) == sid
    message = next((store.storage / "message").rglob("*.json"))
    assert opencode_json_session_of(store.storage, message) == sid
    assert opencode_json_session_of(store.storage, store.storage / "session" / "x.json") is None
    conv = opencode_json_session(store.storage, sid)
    assert conv is not None
    assert list(conv.messages) == [
        Message(USER, "部署脚本为什么用 pnpm?"),
        Message(ASSISTANT, "Because the lockfile format differs."),
    ]
    assert conv.cwd == tmp_path / "proj"
    assert opencode_json_session(store.storage, "ses_missing") is None


def test_a_reader_reads_only_what_was_appended_and_notices_a_replaced_file(
    tmp_path: Path,
) -> None:
    from memoryd.extract.transcript import ClaudeReader

    session = ClaudeSession(tmp_path / "projects", tmp_path / "app")
    session.prompt("部署脚本为什么用 pnpm?")
    reader = ClaudeReader()
    first = reader.read(session.file)
    assert first is not None and first.turns == 1
    session.answer("Because the lockfile format differs.", "npm cannot read it.", tool="ls")
    session.prompt("记住这个")
    with session.file.open("a") as out:
        out.write('{"type": "user", "message": {"role": "user", "content": "half')
    again = reader.read(session.file)
    assert again == read_claude(session.file)  # the same as reading the whole file
    assert again is not None and list(again.messages) == SAID[:3]
    with session.file.open("a") as out:
        out.write(' a line"}}\n')
    done = reader.read(session.file)
    assert done is not None and done.messages[-1] == Message(USER, "记住这个\n\nhalf a line")
    progress = reader._progress[session.file]
    assert progress.offset == session.file.stat().st_size  # nothing left to read

    replaced = tmp_path / "new.jsonl"  # the same name, other content: read from the start
    other = ClaudeSession(tmp_path / "other", tmp_path / "elsewhere")
    other.prompt("a different session altogether")
    replaced.write_bytes(other.file.read_bytes())
    replaced.replace(session.file)
    fresh = reader.read(session.file)
    assert fresh is not None and list(fresh.messages) == [
        Message(USER, "a different session altogether")
    ]
    assert fresh.session == other.session and fresh.cwd == tmp_path / "elsewhere"
    session.file.write_text("")  # truncated
    empty = reader.read(session.file)
    assert empty is not None and empty.messages == ()
