"""The Claude Code PreToolUse hook that docs/layouts.md shows is the one integrations/ ships.

What the hook does with the real client is proven in tests/e2e/test_claude_code.py; here
the documentation is held to the shipped settings file, so the two cannot drift.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "layouts.md"
SETTINGS = REPO / "src" / "memoryd" / "integrations" / "claude-code" / "settings.json"


def test_the_documented_pretooluse_hook_is_the_shipped_one() -> None:
    text = DOC.read_text(encoding="utf-8")
    blocks = [json.loads(b) for b in re.findall(r"```json\n(.*?)```", text, flags=re.S)]
    hooks = [b["hooks"]["PreToolUse"] for b in blocks if "PreToolUse" in b.get("hooks", {})]
    shipped = json.loads(SETTINGS.read_text(encoding="utf-8"))["hooks"]["PreToolUse"]
    assert hooks == [shipped]
    assert shipped[0]["hooks"][0]["command"] == "memoryd guard --hook"
