"""Telling the user: outcome text for ``memoryd sync``, and problems for status/inspect."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from memoryd.config.sections import Config, RootConfig
from memoryd.conflicts import conflict_lines
from memoryd.errors import PathError
from memoryd.memory import printable
from memoryd.oversize import FIX
from memoryd.paths import Paths
from memoryd.sync.resolve import all_conflicts
from memoryd.sync.state import CONFLICT_MARKERS, NAME_LINE, ahead_line, all_states, now_ms

if TYPE_CHECKING:  # only `memoryd sync` tells an outcome: status and inspect skip the engine
    from memoryd.sync.engine import SyncOutcome


@dataclass(frozen=True)
class SyncProblem:
    """One thing about sync the user should know (for ``inspect`` and ``status``)."""

    root: str
    code: str  # sync.conflict, .paused, .quarantined, .left-out, .error, .not-pushed, .ahead
    path: str | None  # root-relative
    message: str
    fix: str


def pick_roots(config: Config, path: Path | None) -> list[RootConfig]:
    if path is None:
        return list(config.roots)
    wanted = path.expanduser().resolve()
    for root in config.roots:
        if root.path.resolve() == wanted:
            return [root]
    found = config.root_for(wanted)
    if found is None:
        raise PathError(
            f"{path} is not a configured memory root",
            hint="'memoryd init' or 'memoryd init --project DIR' sets one up",
        )
    return [found]


def outcome_text(o: SyncOutcome) -> str:
    head = f"{o.root}: {o.status}"
    if o.action:
        head += f": {o.action}"
    if o.commits:
        head += f" ({len(o.commits)} commit(s))"
    lines = [head]
    if o.error:
        lines.append(f"  error: {o.error}")
    if o.hint:
        lines.append(f"  hint: {o.hint}")
    if o.not_pushed:
        lines.append(f"  {o.not_pushed} commit(s) not pushed")
    lines += [f"  {line}" for line in conflict_lines(o.conflicts)]  # one line for many
    lines += [f"  notice: {n}" for n in o.notices]
    for q in o.quarantined:
        where = f"{q.path} (its file name)" if q.line == NAME_LINE else f"{q.path}:{q.line}"
        lines.append(f"  quarantined: {where} {q.rule} ({q.preview}): not committed")
        lines.append(f"    fix: {quarantine_advice(q.line, q.rule, q.preview)[1]}")
    for item in o.left_out:
        lines.append(f"  left out: {item['path']} ({item['why']}): not committed")
        lines.append(f"    fix: {left_out_fix(str(o.root), item['path'], item['why'])}")
    if o.backup_ref:
        lines.append(f"  local commits backed up at {o.backup_ref}")
    return printable("\n".join(lines))


def quarantine_advice(line: object, rule: object, preview: object) -> tuple[str, str]:
    """(what was found where, what to do) for one quarantined file's finding: a secret in its
    text or its name, or conflict markers (which no allowlist or pragma lets through)."""
    if rule == CONFLICT_MARKERS:
        return (
            f"line {line}: conflict markers",
            "keep the text you want and delete the <<<<<<<, ======= and >>>>>>> lines; "
            "it syncs once they are gone",
        )
    if line == NAME_LINE:
        return (
            f"its file name: {rule} ({preview})",
            "rename it to a name without the secret (or allow it: see memoryd scan); "
            "it syncs once the name is clean",
        )
    return (
        f"line {line}: {rule} ({preview})",
        "remove the secret (or allow it: see memoryd scan); it syncs once it is gone",
    )


def sync_problems(config: Config, paths: Paths) -> list[SyncProblem]:
    """Pending conflicts, pauses, quarantined files, errors, unpushed commits."""
    problems = [
        SyncProblem(
            str(c.root), "sync.conflict", c.copy,
            f"sync conflict: {c.copy} is {c.name.device}'s version of {c.name.original}",
            f"memoryd resolve {c.id} --keep local|remote|both",
        )
        for c in all_conflicts(config)
    ]  # fmt: skip
    return problems + state_problems(config, paths)


def state_problems(config: Config, paths: Paths) -> list[SyncProblem]:
    """What the roots' last sync cycles left to act on (read from the state files)."""
    problems = []
    configured = {str(r.path) for r in config.roots}
    for state in all_states(paths):
        if state.root not in configured:
            continue
        root = state.root
        if state.paused:
            problems.append(SyncProblem(
                root, "sync.paused", None, f"sync paused: {state.paused.get('reason')}",
                f"restore the files, or memoryd sync --root {root} --allow-mass-delete",
            ))  # fmt: skip
        for q in state.quarantined:
            what, fix = quarantine_advice(q.get("line"), q.get("rule"), q.get("preview"))
            problems.append(SyncProblem(
                root, "sync.quarantined", q.get("path"), f"kept out of sync: {what}", fix
            ))  # fmt: skip
        for item in state.left_out:
            problems.append(SyncProblem(
                root, "sync.left-out", item.get("path"), f"kept out of sync: {item.get('why')}",
                left_out_fix(root, str(item.get("path")), str(item.get("why"))),
            ))  # fmt: skip
        if state.last_error and not state.paused:
            problems.append(SyncProblem(
                root, "sync.error", None, f"last sync: {state.last_error}",
                # the cycle's own hint: retrying never fixes credentials, an identity, a refusal
                state.last_hint
                or f"memoryd retries on its own; memoryd sync --root {root} runs one now",
            ))  # fmt: skip
        policy = next((r.sync for r in config.roots if str(r.path) == root), None)
        late = ahead_line(state, policy.ahead_warn_s, now_ms()) if policy else None
        if late is not None:
            problems.append(SyncProblem(
                root, "sync.ahead", None, late,
                state.last_hint or f"run 'memoryd sync --root {root}' and read what it says",
            ))  # fmt: skip
        elif state.not_pushed:
            problems.append(SyncProblem(
                root, "sync.not-pushed", None, f"{state.not_pushed} commit(s) not pushed",
                "they are pushed when the remote is reachable again",
            ))  # fmt: skip
    return problems


def left_out_fix(root: str, rel: str, why: str) -> str:
    """What to do about a file the commit left out, by why it was."""
    if why.startswith("a symbolic link"):
        return (
            f"put the file itself in the link's place (cp --remove-destination \"$(readlink -f "
            f'{root}/{rel})" {root}/{rel}), or move the memory into the root; it syncs then'
        )
    if why.startswith("its name differs only in case"):
        return (
            f"merge the two into one name on any device (the other's text is in a conflict copy "
            f"beside {root}/{rel}) and delete the other; the pair syncs again then"
        )
    if why.startswith("unreadable"):
        return f"make it readable (chmod u+r {root}/{rel}) or move it out of the memory root"
    return f"{FIX}; it syncs once it fits"  # over search.max_file_bytes (memoryd.oversize)
