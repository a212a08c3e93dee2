from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memoryd.agent.upkeep import search
from memoryd.app import App
from memoryd.locate import active_roots
from memoryd.memory import parse
from memoryd.secrets.scanner import fingerprint, preview
from tests.agent.conftest import Setup
from tests.helpers import run_cli
from tests.secrets.fake_tokens import github

PNPM = "部署脚本用 pnpm 而不是 npm,因为 lockfile 不兼容"
PNPM_SLUG = "部署脚本用-pnpm-而不是-npm-因为-lockfile-不兼容"  # the Chinese words kept
SECRET = "sk_live_Zq8Lm2Nx7Rt4Vb9Kc3Hj6Wd1"


def meta(path: Path) -> dict[str, object]:
    return parse(path.read_bytes()).meta


def recall_ids(setup: Setup, query: str) -> list[str]:
    app = App(cwd=setup.repo)
    roots = active_roots(app.config, app.cwd)
    return [h.id for h in search(app, roots, query, limit=10, count_hits=False)]


def remember(setup: Setup, *args: str) -> dict[str, object]:
    done = run_cli("remember", "--json", *args, cwd=setup.repo)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def refused_kind(setup: Setup, kind: str) -> str:
    """remember's stderr for ``--kind kind``, which it refuses as a usage error, writing nothing."""
    before = setup.snapshot()
    done = run_cli("remember", "--kind", kind, "--summary", "never force-push main",
                   cwd=setup.repo)  # fmt: skip
    assert (done.returncode, done.stdout) == (2, "")
    assert setup.snapshot() == before
    return done.stderr


def refused(setup: Setup, *args: str) -> str:
    before = setup.snapshot()
    done = run_cli("remember", *args, cwd=setup.repo)
    assert done.returncode == 1, done.stdout
    assert setup.snapshot() == before, "a refused memory changed files"
    assert "Traceback" not in done.stderr
    return done.stderr


def test_remember_writes_the_file_index_and_compiled_files(setup: Setup) -> None:
    out = remember(
        setup, "--kind", "pitfall", "--summary", PNPM, "--load-when", "部署,pnpm",
        "--highlight", "lockfile", "--pinned", "pnpm install --frozen-lockfile",
    )  # fmt: skip
    assert out["id"] == f"pitfalls/{PNPM_SLUG}"
    assert out["scope"] == "project" and out["downgraded"] is False
    path = setup.project / "pitfalls" / f"{PNPM_SLUG}.md"
    assert out["path"] == str(path)
    fields = meta(path)
    assert fields["kind"] == "pitfall" and fields["summary"] == PNPM
    assert fields["load_when"] == ["部署", "pnpm"] and fields["pinned"] is True
    assert fields["created"] == fields["updated"]
    assert isinstance(fields["created"], int) and fields["created"] > 1_700_000_000_000
    assert parse(path.read_bytes()).body == "pnpm install --frozen-lockfile\n"
    assert f"pitfalls/{PNPM_SLUG}" in (setup.project / "pitfalls" / "index.md").read_text()
    assert f"`pitfalls/{PNPM_SLUG}`" in (setup.project / "ROOT.md").read_text()
    assert recall_ids(setup, "部署") == [f"pitfalls/{PNPM_SLUG}"]


def test_scope_body_from_stdin_and_slug_uniqueness(setup: Setup) -> None:
    first = remember(
        setup, "--kind", "preference", "--summary", "Answer in English", "--scope", "global"
    )
    assert first["path"] == str(setup.global_root / "preferences" / "answer-in-english.md")
    done = run_cli(
        "remember", "--kind", "preference", "--summary", "Answer in English!", "--scope", "global",
        "--force", "-", cwd=setup.repo, input="even when asked in 中文\n",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    second = setup.global_root / "preferences" / "answer-in-english-2.md"
    assert done.stdout == f"remembered preferences/answer-in-english-2 (global): {second}\n"
    assert parse(second.read_bytes()).body == "even when asked in 中文\n"
    chinese = remember(
        setup, "--kind", "fact", "--summary", "跳板机只在工作日开放", "--id", "jump-host"
    )
    assert chinese["id"] == "facts/jump-host"


def test_a_secret_is_refused_with_file_line_rule_and_preview(setup: Setup) -> None:
    err = refused(setup, "--kind", "fact", "--summary", "Stripe live key", f"the key is {SECRET}")
    lines = err.splitlines()
    assert (
        lines[0]
        == "memoryd: error: refusing to remember: the memory contains what looks like a secret"
    )
    assert lines[1] == (
        f"  facts/stripe-live-key.md:8: stripe-secret-key sk_l…6Wd1 "
        f"(fingerprint {fingerprint(SECRET)})"
    )
    assert SECRET not in err
    assert lines[2] == (
        "  hint: remove the secret (say where it lives instead, e.g. 'the token is in the "
        "password manager') and run again; memories are synced through git. Not a secret? "
        f"Add its fingerprint to {setup.project / '.memoryd-allowlist'}"
    )


def test_a_false_positive_is_let_through_by_the_fingerprint_the_refusal_names(
    setup: Setup,
) -> None:
    """The refusal named no fingerprint, so the allowlist docs/secrets.md describes could
    not be filled in from it (only by writing the text to a file for memoryd scan)."""
    body = "the docs' sample is DB_PASSWORD=Walnut.Copper46! (public, on the login page)"
    err = refused(setup, "--kind", "fact", "--summary", "docs sample password", body)
    hint = err.splitlines()[-1]
    assert hint.endswith(f"Add its fingerprint to {setup.project / '.memoryd-allowlist'}")
    found = err.splitlines()[1].split("(fingerprint ")[1].rstrip(")")
    (setup.project / ".memoryd-allowlist").write_text(f"{found}  # the docs' sample\n")
    remember(setup, "--kind", "fact", "--summary", "docs sample password", body)
    agent = refused(setup, "--agent", "--kind", "fact", "--summary", "ci key", f"it is {SECRET}")
    assert agent.splitlines()[-1] == (
        "  hint: remove the secret (say where it lives instead, e.g. 'the token is in the "
        "password manager') and run again; memories are synced through git"
    )  # an agent is not told how to let a secret through


def test_a_secret_in_the_id_is_refused_without_showing_it(setup: Setup) -> None:
    """The refusal named the file it would have written, facts/<the whole token>.md."""
    token = github("remember-id")
    err = refused(setup, "--kind", "fact", "--summary", "a", "--id", f"facts/{token}", "body")
    assert err.splitlines()[1] == (
        f"  facts/{preview(token)}.md:2: github-token {preview(token)} "
        f"(fingerprint {fingerprint(token)})"
    )
    assert token not in err


def test_a_duplicate_is_refused_naming_the_existing_id_and_force_writes(setup: Setup) -> None:
    remember(setup, "--kind", "pitfall", "--summary", PNPM, "lockfile 格式在 pnpm 8 和 9 之间变了")
    err = refused(
        setup, "--kind", "decision", "--summary", PNPM, "lockfile 格式在 pnpm 8 和 9 之间变了"
    )
    assert err == (
        f"memoryd: error: refusing to remember: 'pitfalls/{PNPM_SLUG}' (project) already "
        "covers 100% of this memory's terms\n"
        "  hint: read it with 'memoryd recall', replace it with --supersedes "
        f"pitfalls/{PNPM_SLUG}, or pass --force to write anyway\n"
    )
    forced = remember(setup, "--force", "--kind", "decision", "--summary", PNPM)
    assert forced["id"] == f"decisions/{PNPM_SLUG}"
    different = remember(
        setup, "--kind", "fact", "--summary", "Staging deploys run from the bastion host"
    )
    assert different["id"] == "facts/staging-deploys-run-from-the-bastion-host"


def test_restating_a_three_year_old_memory_is_refused_like_a_fresh_one(setup: Setup) -> None:
    import time

    from tests.index.conftest import write_memory

    three_years_ago = int(time.time() * 1000) - 3 * 365 * 86_400_000
    write_memory(setup.global_root, "pitfalls/old-nfs.md", "sqlite locks fail on nfs mounts",
                 summary="sqlite on nfs", created=three_years_ago, updated=three_years_ago)  # fmt: skip
    for i in range(30):  # fresh, recalled memories sharing words: the old decayed top 20 was theirs
        write_memory(setup.global_root, f"facts/sqlite-{i:02}.md", f"sqlite sqlite note {i}",
                     summary=f"sqlite nfs {i}", updated=int(time.time() * 1000))  # fmt: skip
    assert run_cli("recall", "sqlite", cwd=setup.repo).returncode == 0  # indexed and compiled
    err = refused(setup, "--kind", "pitfall", "--scope", "global", "--summary", "sqlite on nfs",
                  "SQLite locks fail on NFS mounts")  # fmt: skip
    assert err.startswith(
        "memoryd: error: refusing to remember: 'pitfalls/old-nfs' (global) already covers 100% "
        "of this memory's terms\n"
    )


def test_an_existing_id_and_an_unknown_supersedes_are_refused(setup: Setup) -> None:
    remember(setup, "--kind", "fact", "--summary", "CI runs on arm64", "--id", "facts/ci")
    path = setup.project / "facts" / "ci.md"
    assert refused(setup, "--kind", "fact", "--summary", "CI moved", "--id", "facts/ci") == (
        f"memoryd: error: refusing to remember: a memory with id 'facts/ci' already exists ({path})\n"
        f"  hint: pass --supersedes facts/ci to replace it, or edit {path}\n"
    )
    assert refused(
        setup, "--kind", "fact", "--summary", "CI moved", "--supersedes", "facts/nope"
    ) == (
        f"memoryd: error: refusing to remember: --supersedes 'facts/nope' names no memory in "
        f"{setup.project}\n"
        "  hint: memoryd inspect lists the ids; the replaced memory must be in the same root "
        "(choose it with --scope)\n"
    )


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("../escape", "refusing '../escape': '..' leads outside the memory root"),
        ("/etc/escape", "refusing '/etc/escape': an absolute path is outside the memory root"),
        (".git/escape", "refusing '.git/escape': memoryd never touches files inside .git"),
        ("facts/", "refusing id 'facts/': an id names a file, not a folder"),
        (".hidden", "refusing id 'facts/.hidden': memoryd never reads facts/.hidden.md (a name "
                    "starting with '.' or a folder it skips), so recall could never find it"),
        ("facts/index", "refusing id 'facts/index': facts/index.md is a file memoryd compiles "
                        "and rewrites, never a memory, so recall could never find it"),
    ],
)  # fmt: skip
def test_every_refused_id_is_a_usage_error(setup: Setup, given: str, said: str) -> None:
    """'--id ../x' exited 1 and '--id .x' 2: one kind of mistake, one exit code."""
    before = setup.snapshot()
    done = run_cli("remember", "--kind", "fact", "--summary", "x", "--id", given, cwd=setup.repo)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines()[0] == f"memoryd: error: {said}"
    assert setup.snapshot() == before


def test_supersedes_links_both_files_and_leaves_recall(setup: Setup) -> None:
    remember(
        setup,
        "--kind",
        "decision",
        "--summary",
        "Deploy with Capistrano",
        "--id",
        "decisions/deploy",
    )
    new = remember(
        setup, "--kind", "decision", "--summary", "Deploy with Kamal instead",
        "--supersedes", "decisions/deploy", "Capistrano was dropped in 2026.",
    )  # fmt: skip
    old_path = setup.project / "decisions" / "deploy.md"
    new_path = setup.project / "decisions" / "deploy-with-kamal-instead.md"
    assert new["supersedes"] == "decisions/deploy"
    assert meta(new_path)["supersedes"] == "decisions/deploy"
    assert meta(old_path)["superseded_by"] == "decisions/deploy-with-kamal-instead"
    assert old_path.exists()
    assert recall_ids(setup, "deploy") == ["decisions/deploy-with-kamal-instead"]
    assert recall_ids(setup, "Capistrano") == ["decisions/deploy-with-kamal-instead"]
    again = refused(
        setup,
        "--kind",
        "decision",
        "--summary",
        "Deploy by hand",
        "--supersedes",
        "decisions/deploy",
    )
    assert again == (
        "memoryd: error: refusing to remember: 'decisions/deploy' is already superseded by "
        "'decisions/deploy-with-kamal-instead'\n"
        "  hint: supersede decisions/deploy-with-kamal-instead instead\n"
    )


def test_an_agents_rule_becomes_a_proposal_a_person_accepts(setup: Setup) -> None:
    remember(setup, "--kind", "fact", "--summary", "Anyone may push to main", "--id", "facts/push")
    done = run_cli(
        "remember", "--agent", "--kind", "rule", "--summary", "Never push to main",
        "--supersedes", "facts/push", cwd=setup.repo,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr == (
        "note: iron rules are written only by people; saved as a rule-proposal "
        "(a person accepts it with 'memoryd accept proposals/never-push-to-main')\n"
    )
    proposal = setup.project / "proposals" / "never-push-to-main.md"
    assert meta(proposal)["kind"] == "rule-proposal"
    assert "Never push to main" not in (setup.project / "ROOT.md").read_text()
    assert not (setup.project / "rules" / "index.md").exists()
    listed = run_cli("inspect", cwd=setup.repo)
    assert (
        "rule-proposal waiting for a person: proposals/never-push-to-main "
        "(memoryd accept proposals/never-push-to-main)"
    ) in listed.stdout
    accepted = run_cli("accept", "proposals/never-push-to-main.md", cwd=setup.repo)
    assert accepted.returncode == 0, accepted.stderr
    assert accepted.stdout == (
        "accepted proposals/never-push-to-main as rules/never-push-to-main: it is now an iron rule\n"
    )
    rule = setup.project / "rules" / "never-push-to-main.md"
    assert not proposal.exists()
    assert meta(rule)["kind"] == "rule" and meta(rule)["id"] == "rules/never-push-to-main"
    assert meta(rule)["updated"] >= meta(rule)["created"]  # type: ignore[operator]
    assert meta(rule)["supersedes"] == "facts/push"
    old = setup.project / "facts" / "push.md"
    assert meta(old)["superseded_by"] == "rules/never-push-to-main"  # the link followed the move
    assert (
        "- Never push to main (`rules/never-push-to-main`)"
        in (setup.project / "ROOT.md").read_text()
    )
    again = run_cli("accept", "rules/never-push-to-main", cwd=setup.repo)
    assert again.returncode == 1
    assert again.stderr == (
        "memoryd: error: refusing to accept 'rules/never-push-to-main': it is a rule, not a rule-proposal\n"
        "  hint: memoryd inspect lists the proposals waiting to be accepted\n"
    )
    person = remember(setup, "--kind", "rule", "--summary", "Sign every commit")
    assert person["kind"] == "rule" and person["downgraded"] is False
    assert person["id"] == "rules/sign-every-commit"
    agent_supersedes = refused(
        setup, "--agent", "--kind", "rule", "--summary", "Push to main is fine",
        "--supersedes", "rules/sign-every-commit",
    )  # fmt: skip
    assert agent_supersedes == (
        "memoryd: error: refusing to remember: 'rules/sign-every-commit' is an iron rule, "
        "and only a person changes those\n"
        "  hint: save a rule-proposal without supersedes; a person can accept it "
        "(memoryd accept ID) and retire the old rule\n"
    )


def test_bad_input_is_a_usage_error(setup: Setup) -> None:
    done = run_cli("remember", "--kind", "Big Kind", "--summary", "x", cwd=setup.repo)
    assert done.returncode == 2
    assert done.stderr == (
        "memoryd: error: kind 'Big Kind' is not a lowercase word\n"
        "  hint: use rule, preference, decision, pitfall or fact (or another lowercase word)\n"
    )
    summary = run_cli("remember", "--kind", "fact", "--summary", "two\nlines", cwd=setup.repo)
    assert summary.returncode == 2
    assert "the summary must be one non-empty line" in summary.stderr


@pytest.mark.parametrize(
    ("folder", "kind"),
    [("rules", "rule"), ("facts", "fact"), ("pitfalls", "pitfall"), ("proposals", "rule-proposal")],
)
def test_a_folders_name_given_as_the_kind_is_refused_with_the_kind(
    setup: Setup, folder: str, kind: str
) -> None:
    """--kind rules wrote into rules/ a memory that was never an iron rule (the iron rules
    are kind rule): nothing is written, and the error names the kind."""
    assert refused_kind(setup, folder) == (
        f"memoryd: error: kind '{folder}' is the name of a folder, not a kind\n"
        f"  hint: use kind '{kind}': memories of kind {kind} are kept in {folder}/\n"
    )
    custom = run_cli("remember", "--kind", "runbook", "--summary", "restart the queue",
                     cwd=setup.repo)  # fmt: skip
    assert custom.returncode == 0, custom.stderr  # a kind of one's own is still a kind


@pytest.mark.parametrize("process", [False, True])
def test_text_that_is_not_utf8_is_refused_in_one_line(setup: Setup, process: bool) -> None:
    """A Latin-1 body piped in (or a summary typed in a Latin-1 terminal) was an internal
    error with a traceback: now one line names the field and the byte."""
    before = setup.snapshot()
    piped = run_cli("remember", "--kind", "fact", "--summary", "café notes", "-",
                    input="un caf\udce9 noir\n", cwd=setup.repo, process=process)  # fmt: skip
    typed = run_cli("remember", "--kind", "fact", "--summary", "caf\udce9", cwd=setup.repo,
                    process=process)  # fmt: skip
    hint = "  hint: convert it to UTF-8 first, e.g. iconv -f latin1 -t utf-8 FILE | "
    hint += "memoryd remember ... -\n"
    body = "memoryd: error: the body is not valid UTF-8 (byte 0xe9 at character 7)\n"
    summary = "memoryd: error: the summary is not valid UTF-8 (byte 0xe9 at character 4)\n"
    assert (piped.returncode, piped.stdout, piped.stderr) == (2, "", body + hint)
    assert (typed.returncode, typed.stdout, typed.stderr) == (2, "", summary + hint)
    assert setup.snapshot() == before
    utf8 = run_cli("remember", "--kind", "fact", "--summary", "café notes", "-",
                   input="un café noir\n", cwd=setup.repo, process=process)  # fmt: skip
    assert utf8.returncode == 0, utf8.stderr
    assert parse((setup.project / "facts/cafe-notes.md").read_bytes()).body == "un café noir\n"


@pytest.mark.parametrize(
    ("memory_id", "why"),
    [
        ("facts/index", "facts/index.md is a file memoryd compiles and rewrites, never a memory"),
        ("index", "facts/index.md is a file memoryd compiles and rewrites, never a memory"),
        ("facts/.draft",
         "memoryd never reads facts/.draft.md (a name starting with '.' or a folder it skips)"),
        ("node_modules/x",
         "memoryd never reads node_modules/x.md (a name starting with '.' or a folder it skips)"),
        (".cache/x",
         "memoryd never reads .cache/x.md (a name starting with '.' or a folder it skips)"),
    ],
)  # fmt: skip
def test_an_id_memoryd_would_never_read_is_refused(setup: Setup, memory_id: str, why: str) -> None:
    """remember wrote decisions/index.md (a folder's generated index) or facts/.draft.md,
    said "remembered", and recall never found it."""
    before = setup.snapshot()
    done = run_cli("remember", "--kind", "fact", "--summary", "kumquat season",
                   "--id", memory_id, cwd=setup.repo)  # fmt: skip
    assert (done.returncode, done.stdout) == (2, "")
    shown = memory_id if "/" in memory_id else f"facts/{memory_id}"
    assert done.stderr == (
        f"memoryd: error: refusing id {shown!r}: {why}, so recall could never find it\n"
        "  hint: choose another id, like pitfalls/sqlite-cjk-tokenizer\n"
    )
    assert setup.snapshot() == before
    kept = run_cli("remember", "--kind", "fact", "--summary", "kumquat season",
                   "--id", "facts/index-of-fruit", cwd=setup.repo)  # fmt: skip
    assert kept.returncode == 0, kept.stderr
    assert recall_ids(setup, "kumquat") == ["facts/index-of-fruit"]


@pytest.mark.parametrize(
    ("typed", "meant"), [("rul", "rule"), ("pitfal", "pitfall"), ("decison", "decision")]
)
def test_a_misspelt_kind_is_refused_unless_forced(setup: Setup, typed: str, meant: str) -> None:
    """--kind rul wrote rul/never-force-push.md, which is no iron rule and sits in a folder of
    its own: the typo is named, and --force still starts a kind of one's own."""
    assert refused_kind(setup, typed) == (
        f"memoryd: error: kind {typed!r} is not one of memoryd's kinds: did you mean {meant!r}?\n"
        f"  hint: use kind {meant!r}, or pass --force to start a kind of your own\n"
    )
    forced = remember(setup, "--kind", typed, "--summary", "never force-push main", "--force")
    assert (forced["kind"], forced["id"]) == (typed, f"{typed}/never-force-push-main")


def run_as_agent(setup: Setup, marker: str, *args: str) -> Any:
    import os
    import subprocess
    import sys

    env = {**os.environ, marker: "1"}
    return subprocess.run(
        [sys.executable, "-m", "memoryd", *args], cwd=setup.repo, env=env,
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def test_an_agents_environment_marker_makes_a_shell_call_an_agent_call(setup: Setup) -> None:
    """Claude Code sets CLAUDECODE=1 and OpenCode OPENCODE=1 for the commands they run."""
    for marker, summary in (("CLAUDECODE", "Never push on Fridays"), ("OPENCODE", "部署只用 pnpm")):
        done = run_as_agent(setup, marker, "remember", "--kind", "rule", "--summary", summary)
        assert done.returncode == 0, done.stderr
        assert done.stderr.startswith("note: iron rules are written only by people; saved as a rule-proposal")
    assert not (setup.project / "rules").exists() or not list((setup.project / "rules").glob("*.md"))
    accepted = run_as_agent(setup, "CLAUDECODE", "accept", "proposals/never-push-on-fridays")
    assert accepted.returncode == 1
    assert accepted.stderr == (
        "memoryd: error: refusing to accept 'proposals/never-push-on-fridays': this runs under an "
        "agent (CLAUDECODE=1 (Claude Code)), and only a person turns a proposal into an iron rule\n"
        "  hint: run 'memoryd accept proposals/never-push-on-fridays' yourself, in a terminal of your own\n"
    )
    assert (setup.project / "proposals" / "never-push-on-fridays.md").exists()
    person = remember(setup, "--kind", "rule", "--summary", "Sign every commit")
    assert person["kind"] == "rule"
    forget = run_as_agent(setup, "OPENCODE", "forget", "rules/sign-every-commit")
    assert forget.returncode == 1 and "iron rule" in forget.stderr
    person_again = run_cli("accept", "proposals/never-push-on-fridays", cwd=setup.repo)
    assert person_again.returncode == 0, person_again.stderr  # no marker: a person


@pytest.mark.parametrize("folder", ["pitfalls/", "pitfalls\\", "pitfalls/.", "."])
def test_an_id_naming_a_folder_is_refused(setup: Setup, folder: str) -> None:
    """--id pitfalls/ wrote <root>/pitfalls.md (beside the folder) with id 'pitfalls/',
    a file inspect then reported as an id that does not match its path."""
    before = setup.snapshot()
    done = run_cli("remember", "--kind", "pitfall", "--summary", "kumquat season",
                   "--id", folder, cwd=setup.repo)  # fmt: skip
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"memoryd: error: refusing id {folder!r}: an id names a file, not a folder\n"
        "  hint: add the memory's name (pitfalls/NAME), or leave the id out to name it from "
        "the summary\n"
    )
    assert setup.snapshot() == before


@pytest.mark.parametrize("spelled", ["pitfalls//kumquat", "pitfalls/./kumquat", "pitfalls\\kumquat"])
def test_an_id_is_written_as_its_path_spells_it(setup: Setup, spelled: str) -> None:
    """The frontmatter's id was 'pitfalls//kumquat' in pitfalls/kumquat.md: recall and
    inspect showed it so, and inspect reported it as not matching its path."""
    done = run_cli("remember", "--kind", "pitfall", "--summary", "kumquat season",
                   "--id", spelled, cwd=setup.repo)  # fmt: skip
    path = setup.project / "pitfalls" / "kumquat.md"
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == f"remembered pitfalls/kumquat (project): {path}\n"
    assert "id: pitfalls/kumquat\n" in path.read_text()
    assert recall_ids(setup, "kumquat") == ["pitfalls/kumquat"]
    checked = run_cli("inspect", cwd=setup.repo)
    assert checked.returncode == 0, checked.stdout


def test_an_agent_never_writes_under_rules_even_with_an_explicit_id(setup: Setup) -> None:
    for memory_id in ("rules/deploy", "Rules/deploy", "rules/sub/deploy"):
        message = refused(setup, "--agent", "--kind", "fact", "--summary", "Deploy on Fridays",
                          "--id", memory_id)  # fmt: skip
        assert message == (
            f"memoryd: error: refusing to remember: {memory_id!r} is under rules/, and agents "
            "never write there (it holds the iron rules people wrote)\n"
            f"  hint: leave the id out, or use proposals/{memory_id.split('/', 1)[1]}: a person "
            "can accept a proposal with memoryd accept\n"
        )
    person = remember(setup, "--kind", "rule", "--summary", "Deploy on Fridays", "--id", "rules/deploy")
    assert person["id"] == "rules/deploy"


def test_a_body_over_max_file_bytes_is_refused_with_the_limit(setup: Setup) -> None:
    import os

    config = Path(os.environ["MEMORYD_HOME"]) / "config.yaml"
    config.write_text(config.read_text() + "\nsearch:\n  max_file_bytes: 2000\n")
    body = "部署 " * 700  # 4900 bytes of UTF-8
    message = refused(setup, "--kind", "fact", "--summary", "Long", body)
    assert message.startswith("memoryd: error: refusing to remember: the memory is ")
    assert "bytes, over the 2000-byte limit (search.max_file_bytes), so its body could never be found\n" in message
    assert message.endswith(
        "  hint: split it into smaller memories, or raise search.max_file_bytes in config.yaml\n"
    )
    fits = remember(setup, "--kind", "fact", "--summary", "Short", "部署 " * 100)
    assert fits["id"] == "facts/short"


def _with_stdin(setup: Setup, stdin: Any, *args: str) -> subprocess.CompletedProcess[str]:
    """The real CLI with this stdin (a file or a pipe's read end), as a shell gives it."""
    return subprocess.run(
        [sys.executable, "-m", "memoryd", "remember", "--kind", "fact", *args],
        cwd=setup.repo, stdin=stdin, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def test_text_piped_in_without_a_body_of_dash_is_refused(setup: Setup, tmp_path: Path) -> None:
    """``echo notes | memoryd remember --kind fact --summary x`` wrote a memory with no body
    and said "remembered": the piped text was dropped without a word."""
    refused = (
        "memoryd: error: stdin holds text, but no BODY of - says to read it, so it would be lost\n"
        "  hint: add - to read the body from stdin: ... | memoryd remember --kind K --summary S -\n"
    )
    before = setup.snapshot()
    notes = tmp_path / "notes.txt"
    notes.write_text("the queue restarts at 3am\n", encoding="utf-8")
    with notes.open("rb") as handle:  # memoryd remember ... < notes.txt
        redirected = _with_stdin(setup, handle, "--summary", "queue restarts")
    read, write = os.pipe()  # echo ... | memoryd remember ...
    os.write(write, b"the queue restarts at 3am\n")
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        piped = _with_stdin(setup, pipe, "--summary", "queue restarts")
    for done in (redirected, piped):
        assert (done.returncode, done.stdout, done.stderr) == (2, "", refused)
    assert setup.snapshot() == before
    with notes.open("rb") as handle:
        asked = _with_stdin(setup, handle, "--summary", "queue restarts", "-")
    assert asked.returncode == 0, asked.stderr
    body = parse((setup.project / "facts/queue-restarts.md").read_bytes()).body
    assert body == "the queue restarts at 3am\n"
    read, write = os.pipe()  # nothing piped: a summary-only memory, as without a pipe
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        empty = _with_stdin(setup, pipe, "--summary", "restart the queue weekly")
    assert empty.returncode == 0, empty.stderr
    assert parse((setup.project / "facts/restart-the-queue-weekly.md").read_bytes()).body == ""


def test_a_memory_records_the_session_and_agent_that_wrote_it(setup: Setup) -> None:
    """A wrapper or hook names the agent and its session in the environment; a person's own
    write records no agent; a name is kept on one line."""
    env = {**os.environ, "MEMORYD_AGENT": "Codex\n(cli)", "MEMORYD_SESSION_ID": " s-42 "}
    done = subprocess.run(
        [sys.executable, "-m", "memoryd", "remember", "--kind", "fact", "--summary",
         "The staging database is read-only on Sundays", "--json"],
        cwd=setup.repo, env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    meta = parse(Path(json.loads(done.stdout)["path"]).read_bytes()).meta
    assert (meta["agent"], meta["session"]) == ("Codex (cli)", "s-42")
    marked = run_as_agent(setup, "CLAUDECODE", "remember", "--kind", "fact", "--summary",
                          "CI caches pnpm's store", "--json")  # fmt: skip
    meta = parse(Path(json.loads(marked.stdout)["path"]).read_bytes()).meta
    assert (meta["agent"], "session" in meta) == ("Claude Code", False)
    person = remember(setup, "--kind", "fact", "--summary", "The VPN drops after 8 hours")
    meta = parse(Path(str(person["path"])).read_bytes()).meta
    assert "agent" not in meta and "session" not in meta
