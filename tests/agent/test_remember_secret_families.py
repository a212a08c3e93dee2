"""``remember`` (CLI and MCP) refuses the new secret families, in the summary or the body."""

from __future__ import annotations

from memoryd.app import App
from memoryd.secrets.scanner import fingerprint, preview
from tests.agent.conftest import Setup
from tests.agent.test_cli_remember import refused
from tests.agent.test_mcp import call
from tests.secrets.fake_tokens import rand

PW = rand("remember-pw", 12) + "#3"


def test_a_prose_password_in_the_summary_is_refused_at_its_frontmatter_line(setup: Setup) -> None:
    err = refused(
        setup,
        "--kind",
        "fact",
        "--summary",
        f"Changed the office wifi password to {PW} today",
        "--id",
        "router",
    )
    lines = err.splitlines()
    assert lines[0] == (
        "memoryd: error: refusing to remember: the memory contains what looks like a secret"
    )
    assert lines[1] == (
        f"  facts/router.md:4: generic-password {preview(PW)} (fingerprint {fingerprint(PW)})"
    )
    assert PW not in err


def test_a_cli_password_in_the_body_is_refused_over_mcp(setup: Setup) -> None:
    app = App(cwd=setup.repo)
    error, text = call(
        app, "memory_remember", kind="fact", summary="nightly dump",
        body=f"PGPASSWORD={PW} pg_dump -h pg1 -U etl app > app.dump",
    )  # fmt: skip
    assert error
    assert text.startswith(
        "refusing to remember: the memory contains what looks like a secret\n"
        f"  facts/nightly-dump.md:9: cli-password {preview(PW)}"
    )  # line 9: the frontmatter names the agent that wrote it
    assert PW not in text
