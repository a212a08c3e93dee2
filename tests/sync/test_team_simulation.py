"""A seeded simulation of a team root shared by five people on six devices (issue 42).

Ann has a laptop and a desktop (one git identity, two devices), Bob, Carol, Dan and Eve a
laptop each; one bare repository is the team's remote. In random order: an agent proposes a
memory (``remember --scope team`` under an agent's marker, or the MCP ``memory_remember``
tool), a person writes one, a person accepts a proposal their device holds (``memoryd
accept``), a person edits or deletes a team memory by hand, an agent tries to propose a
secret, a person writes a personal memory (global scope) or a ``sync: false`` file into the
team root, syncs, syncs SIGKILLed mid-way (the real CLI in a subprocess) and the remote
going away and back. Ids come from a small pool, so two devices create the same memory and
accepts race edits and syncs.

Both flows of docs/team.md: the direct one, and the pull-request one (``sync.team_branch``),
where every device pushes to its own ``memoryd/proposals/<user>/<device>`` and a reviewer
merges a branch on the remote (a merge or a squash, at random; one that conflicts with
main is left unmerged, as a host would refuse it).

The oracle, after every step:

- 0 lost: every version the test wrote is in a working-tree file on some device, unless a
  person later overwrote or deleted it (its lines carry unique tokens, as in
  tests/sync/test_simulation.py; an accept changes the frontmatter, not the tokens);
- 0 unreviewed reach: ``memoryd recall`` and ``memoryd context`` (the block an agent is
  given) show no proposal another device wrote, no device's index holds one, and no compiled
  file (ROOT.md, index.md) names one;
- no repository is mid-operation; no refused secret, personal memory or ``sync: false``
  file is in any object of the remote.

At the end, with the remote reachable, a quiet round (every device syncs twice; in the
pull-request flow the reviewer first merges what merges):

- every device's HEAD is the remote's main (the pull-request flow: main is in its history);
- 0 hidden: every device recalls every accepted memory on the remote, each by its own
  words, and its own proposals.

``MEMORYD_TEAM_SIM_SEEDS`` (how many, or a comma list) and ``MEMORYD_TEAM_SIM_STEPS`` run a
longer one; each run prints its seeds, steps and what it met.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from memoryd.index.db import open_index
from memoryd.memory import parse
from memoryd.paths import resolve_paths
from memoryd.sync.proposals import PREFIX
from memoryd.team import is_proposed
from tests.sync.world import all_objects, killed_sync, sim_profile
from tests.team_world import TEAM, Person, make_team, through_branches

WORD = "zebra"  # in every summary: one recall finds every memory a device may see
SECRET = "AKIAIOSFODNN7EXAMPLQ"
BUSY = ("rebase-merge", "rebase-apply", "MERGE_HEAD", "CHERRY_PICK_HEAD", "index.lock")
COMPILED = ("ROOT.md", "index.md", "CONFLICTS.md")
PEOPLE = ["ann", "bob", "carol", "dan", "eve"]

SEEDS, STEPS = sim_profile("MEMORYD_TEAM_SIM", 42, 40)  # MEMORYD_..._SEEDS / _STEPS: a long run


@dataclass
class Device:
    person: Person
    name: str  # the device name in its config

    @property
    def root(self) -> Path:
        return self.person.team_root

    def memories(self) -> list[Path]:
        return sorted(
            p for p in self.root.rglob("*.md")
            if ".git" not in p.parts and p.name not in COMPILED and ".conflict-" not in p.name
        )  # fmt: skip


@dataclass
class Version:
    device: str
    path: str
    tokens: frozenset[str]


@dataclass
class TeamSim:
    rng: random.Random
    remote: Path
    devices: list[Device]
    seed: int
    versions: list[Version] = field(default_factory=list)
    retired: set[str] = field(default_factory=set)
    counter: int = 0
    log: list[str] = field(default_factory=list)
    offline: bool = False
    met: dict[str, int] = field(default_factory=dict)
    branches: bool = False  # the pull-request flow
    private: set[str] = field(default_factory=set)  # tokens that must never reach the remote

    def token(self) -> str:
        self.counter += 1
        return f"tok{self.counter:05d}{self.rng.choice('abc')}"

    def saw(self, what: str) -> None:
        self.met[what] = self.met.get(what, 0) + 1

    def where(self) -> str:
        return f"seed {self.seed}\n" + "\n".join(self.log[-30:])

    # -- the actions
    def step(self, number: int) -> None:
        dev = self.rng.choice(self.devices)
        action = self.rng.choices(
            ["propose", "propose-mcp", "write", "accept", "edit", "delete", "secret", "personal",
             "local-only", "sync", "kill", "offline"],
            weights=[6, 3, 3, 6, 4, 1, 1, 1, 1, 12, 1, 1],
        )[0]  # fmt: skip
        self.log.append(f"step {number}: {dev.name} {action}")
        getattr(self, "do_" + action.replace("-", "_"))(dev)

    def new_memory(self, dev: Device) -> tuple[str, str, list[str]] | None:
        """An id from a small pool (two devices may pick one) this device does not have."""
        ident = f"facts/t{self.rng.randrange(15)}"
        if (dev.root / f"{ident}.md").exists():
            return None
        summary = f"{WORD} {self.token()} {self.token()}"
        return ident, summary, [f"L{n} {self.token()}" for n in range(3)]

    def wrote(self, dev: Device, ident: str, summary: str, body: list[str]) -> None:
        tokens = frozenset(t for line in (summary, *body) for t in line.split()[1:])
        self.versions.append(Version(dev.name, f"{ident}.md", tokens))

    def do_propose(self, dev: Device, agent: bool = True) -> None:
        new = self.new_memory(dev)
        if new is None:
            return self.do_edit(dev)
        ident, summary, body = new
        done = dev.person.json("remember", "--scope", "team", "--kind", "fact", "--id", ident,
                               "--summary", summary, "--force", "\n".join(body),
                               agent=agent)  # fmt: skip
        assert done.get("proposed", False) == agent, (done, self.where())
        self.wrote(dev, ident, summary, body)
        return None

    def do_write(self, dev: Device) -> None:
        self.do_propose(dev, agent=False)

    def do_propose_mcp(self, dev: Device) -> None:
        new = self.new_memory(dev)
        if new is None:
            return self.do_edit(dev)
        ident, summary, body = new
        text = dev.person.mcp_remember(dev.person.home, kind="fact", id=ident, summary=summary,
                                       body="\n".join(body), scope="team", force=True)  # fmt: skip
        assert "proposed to the team" in text, (text, self.where())
        self.wrote(dev, ident, summary, body)
        return None

    def do_accept(self, dev: Device) -> None:
        if self.branches and self.rng.random() < 0.6:
            return self.review()
        waiting = [p for p in dev.memories() if is_proposed(parse(p.read_bytes()).meta)]
        if not waiting:
            return
        path = self.rng.choice(waiting)
        ident = path.relative_to(dev.root).with_suffix("").as_posix()
        dev.person.cli("accept", ident)
        meta = parse(path.read_bytes()).meta
        assert "status" not in meta, (meta, self.where())
        self.log.append(f"  accepted {ident}")
        self.saw("accept")
        return None

    def review(self, wanted: str | None = None) -> None:
        """A reviewer merges one proposals branch (``wanted``, else one at random) into main
        on the remote, with plain git."""
        if self.offline:
            return
        work = self.remote.with_name("review")
        if not work.exists():
            subprocess.run(["git", "clone", "-q", str(self.remote), str(work)], check=True)
            _git(work, "config", "user.name", "Rita Reviewer")
            _git(work, "config", "user.email", "rita@team.invalid")
        _git(work, "fetch", "-q", "--prune", "origin")
        _git(work, "reset", "-q", "--hard", "origin/main")
        waiting = _git(
            work, "for-each-ref", "--format=%(refname:short)", "refs/remotes/origin/memoryd"
        )
        choices = [b for b in waiting.split() if wanted is None or b == f"origin/{wanted}"]
        if not choices:
            return
        branch = self.rng.choice(choices)
        squash = self.rng.random() < 0.3
        how = ["merge", "--squash", "-q"] if squash else ["merge", "--no-ff", "-q", "-m", "Merge"]
        done = subprocess.run(["git", *how, branch], cwd=work, capture_output=True, check=False)
        if done.returncode != 0:  # a conflict with main: the host refuses the merge button
            _git(work, "reset", "-q", "--hard", "origin/main")
            self.log.append(f"  {branch} conflicts with main: left")
            self.saw("merge refused")
            return
        if squash:
            _git(work, "commit", "-q", "--allow-empty", "-m", f"Squashed {branch}")
        _git(work, "push", "-q", "origin", "HEAD:main")
        self.log.append(f"  merged {branch}{' (squash)' if squash else ''}")
        self.saw("squash merge" if squash else "merge")

    def do_personal(self, dev: Device) -> None:
        """A person's own memory (global scope): it never goes near the team remote."""
        token = self.token()
        dev.person.cli("remember", "--scope", "global", "--kind", "fact", "--summary",
                       f"my own note {token}")  # fmt: skip
        self.private.add(token)

    def do_local_only(self, dev: Device) -> None:
        """A ``sync: false`` file in the team root: it stays on this device."""
        path = dev.root / "facts" / f"here{self.rng.randrange(3)}.md"
        if path.exists():
            return
        token = self.token()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\nkind: fact\nsummary: scratch {token}\nsync: false\n---\nL0 x\n")
        self.private.add(token)

    def do_edit(self, dev: Device) -> None:
        """A person changes one body line of a team memory by hand."""
        choices = dev.memories()
        if not choices:
            return
        path = self.rng.choice(choices)
        lines = path.read_text().split("\n")
        body = [n for n, text in enumerate(lines) if text.startswith("L")]
        if not body:
            return
        at = self.rng.choice(body)
        self.retired |= set(lines[at].split()[1:])
        new = self.token()
        lines[at] = f"{lines[at].split()[0]} {new}"
        path.write_text("\n".join(lines))
        rel = path.relative_to(dev.root).as_posix()
        self.versions.append(Version(dev.name, rel, frozenset({new})))
        self.log.append(f"  edited {rel}")

    def do_delete(self, dev: Device) -> None:
        choices = dev.memories()
        if choices:
            path = self.rng.choice(choices)
            self.retired |= set(path.read_text().split())
            path.unlink()
            self.log.append(f"  deleted {path.relative_to(dev.root)}")

    def do_secret(self, dev: Device) -> None:
        refused = dev.person.cli(
            "remember", "--scope", "team", "--kind", "fact", "--summary",
            f"{WORD} the deploy key {self.token()}", SECRET, agent=True, ok=False,
        )  # fmt: skip
        assert refused.returncode != 0 and "looks like a secret" in refused.stderr, self.where()

    def do_sync(self, dev: Device) -> None:
        done = dev.person.cli("sync", "--json", ok=False)
        outcomes = json.loads(done.stdout) if done.stdout.strip() else []
        team = [o for o in outcomes if o["root"] == str(dev.root.resolve())]
        assert team, (done.stdout, done.stderr, self.where())
        status = team[0]["status"]
        self.log.append(f"  {status}: {team[0].get('action', '')}")
        assert status in ("ok", "offline", "busy"), (team, self.where())
        assert self.offline or status != "offline", (team, self.where())

    def do_kill(self, dev: Device) -> None:
        delay = self.rng.uniform(0.2, 1.2)
        if killed_sync(dev.person.env, dev.root, delay):
            self.log.append(f"  killed after {delay:.2f} s")
            self.saw("kill")

    def do_offline(self, dev: Device) -> None:
        away = self.remote.with_name("away.git")
        if self.offline:
            away.rename(self.remote)
        else:
            self.remote.rename(away)
            self.saw("offline")
        self.offline = not self.offline

    # -- the oracle
    def check(self) -> None:
        texts = [p.read_text(errors="replace") for d in self.devices for p in _files(d.root)]
        for v in self.versions:
            alive = v.tokens - self.retired
            if alive and not any(all(t in text for t in alive) for text in texts):
                raise AssertionError(f"lost {v.device}:{v.path} {sorted(alive)}\n{self.where()}")
        for dev in self.devices:
            self.check_no_foreign_proposal(dev)
            for name in BUSY:
                assert not (dev.root / ".git" / name).exists(), (dev.name, name, self.where())
        if not self.offline:
            objects = all_objects(self.remote)
            assert SECRET.encode() not in objects, self.where()
            leaked = sorted(t for t in self.private if t.encode() in objects)
            assert not leaked, ("personal text on the team remote", leaked, self.where())

    def check_no_foreign_proposal(self, dev: Device) -> None:
        """0 unreviewed reach: nothing of another device's proposal is indexed, recalled or
        compiled here."""
        foreign = {}
        for path in dev.memories():
            meta = parse(path.read_bytes()).meta
            if is_proposed(meta) and meta.get("device") != dev.name:
                foreign[path] = path.relative_to(dev.root).with_suffix("").as_posix()
        if foreign:
            self.saw("foreign proposal held")
        recalled = dev.person.recalled(WORD)  # (a reading command brings the index up to date)
        leaked = sorted(str(p) for p in foreign if str(p) in recalled)
        assert not leaked, (dev.name, "recalled", leaked, self.where())
        given = dev.person.cli("context", WORD, cwd=dev.person.home).stdout
        leaked = sorted(
            i for i in foreign.values() if re.search(rf"{re.escape(i)}(?![\w-])", given)
        )
        assert not leaked, (dev.name, "context", leaked, self.where())
        paths = resolve_paths({"MEMORYD_HOME": dev.person.env["MEMORYD_HOME"]})
        with open_index(paths) as db:
            indexed = {row.path for row in db.rows(dev.root.resolve())}
        leaked = sorted(str(p) for p in foreign if p.resolve() in indexed)
        assert not leaked, (dev.name, "indexed", leaked, self.where())
        compiled = "\n".join(
            p.read_text() for p in dev.root.rglob("*.md")
            if p.name in ("ROOT.md", "index.md") and ".git" not in p.parts
        )  # fmt: skip
        named = sorted(i for i in foreign.values() if f"{i}\n" in compiled or f"{i})" in compiled
                       or f"{i.rpartition('/')[2]}.md" in compiled)  # fmt: skip
        assert not named, (dev.name, "compiled", named, self.where())

    def quiet_round(self) -> None:
        if self.offline:
            self.do_offline(self.devices[0])
        for dev in self.devices:
            self.do_sync(dev)
        if self.branches:  # each device's branch, made again on today's main, is merged
            for dev in self.devices:
                self.do_sync(dev)
                self.review(f"{PREFIX}{dev.person.name}/{dev.name}")
        for _ in range(2):
            for dev in self.devices:
                self.do_sync(dev)
        main = _git(self.remote, "rev-parse", "main")
        for dev in self.devices:
            assert _git(dev.root, "rev-parse", "HEAD") == main, (dev.name, self.where())
        if self.branches:  # every branch merged (and deleted): no proposal is left anywhere
            assert _git(self.remote, "branch", "--list", f"{PREFIX}*") == "", self.where()
            for dev in self.devices:
                waiting = [p for p in dev.memories() if is_proposed(parse(p.read_bytes()).meta)]
                assert waiting == [], (dev.name, waiting, self.where())
        self.check()
        accepted = 0
        for dev in self.devices:
            for path in dev.memories():
                meta = parse(path.read_bytes()).meta
                if is_proposed(meta) and meta.get("device") != dev.name:
                    continue
                words = str(meta.get("summary", "")).split()[1:]
                found = dev.person.recalled(" ".join(words))
                assert str(path) in found, (dev.name, "hidden", str(path), self.where())
                accepted += not is_proposed(meta)
        self.met["accepted memories recalled"] = accepted


def _files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and ".git" not in p.parts]


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def _world(tmp_path: Path, seed: int, branches: bool) -> TeamSim:
    (ann, *others), remote = make_team(tmp_path, PEOPLE)
    desktop = Person("ann", tmp_path / "people" / "ann-desktop", ann.base_env)
    (desktop.home / "home").mkdir(parents=True)
    (desktop.home / "memoryd").mkdir(mode=0o700)
    (desktop.home / "gitconfig").write_text((ann.home / "gitconfig").read_text())
    (desktop.home / "memoryd" / "config.yaml").write_text("device: ann-desktop\n")
    devices = [Device(ann, "ann-laptop"), Device(desktop, "ann-desktop")]
    devices += [Device(person, f"{person.name}-laptop") for person in others]
    for dev in devices:
        dev.person.cli("init")
        dev.person.cli("init", "--team", TEAM, "--remote", str(remote))
        dev.person.cli("sync")
    if branches:
        through_branches([d.person for d in devices])
    return TeamSim(random.Random(seed), remote, devices, seed, branches=branches)


@pytest.mark.parametrize("flow", ["direct", "pull-request"])
@pytest.mark.parametrize("seed", SEEDS)
def test_a_team_of_five_on_six_devices_loses_and_leaks_nothing(
    tmp_path: Path, seed: int, flow: str
) -> None:
    steps = STEPS
    sim = _world(tmp_path, seed, branches=flow == "pull-request")
    started = time.monotonic()
    for number in range(steps):
        sim.step(number)
        sim.check()
    sim.quiet_round()
    met = ", ".join(f"{k} {v}" for k, v in sorted(sim.met.items()))
    print(
        f"team simulation ({flow}) seed {seed}: {steps} steps in {time.monotonic() - started:.1f} s, "
        f"0 lost, 0 unreviewed reached, 0 hidden; met: {met}"
    )
