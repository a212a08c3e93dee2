"""The commits a push would send, checked for secrets before they leave this device.

memoryd's own commits never hold one (the commit quarantines such a file), but a commit
the user made by hand in the memory repository passed no gate: pushed, the credential
lands on the remote and on every device, and no later commit takes it out of the
history. The push is refused instead, and the user is told where it is.
"""

from __future__ import annotations

from dataclasses import dataclass

from memoryd.memory import printable
from memoryd.sync.repo import Repo


@dataclass(frozen=True)
class Leak:
    """The first secret the outgoing commits add."""

    path: str  # root-relative
    line: int
    rule: str
    preview: str
    fingerprint: str
    commit: str
    subject: str

    @property
    def message(self) -> str:
        where = f"{self.path} (its file name)" if self.line == 0 else f"{self.path}:{self.line}"
        return printable(
            f"a commit not pushed yet adds a secret: {where} {self.rule} "
            f"{self.preview} (commit {self.commit[:12]} {self.subject!r}); memoryd does not "
            "push it"
        )


BATCH = 2000  # blobs read per cat-file --batch


def first_leak(repo: Repo, since: str | None, head: str) -> Leak | None:
    """The first secret that the commits in ``since..head`` add under the root, or None."""
    from memoryd.secrets.scanner import (
        decode,
        load_allowlist,
        redact_name,
        scan_file_text,
        scan_name,
    )

    git = repo.git
    spec = f"{since}..{head}" if since else head
    commits = git.out("rev-list", "--reverse", "--no-merges", spec).split()
    allow = load_allowlist(repo.root)
    seen: set[str] = set()
    for commit in commits:
        raw = git.run(
            "diff-tree", "-r", "-z", "--no-renames", "--no-commit-id", "--root",
            "--diff-filter=AM", commit, "--", repo.pathspec, readonly=True,
        ).out  # fmt: skip
        fields = raw.split(b"\0")
        added = []
        for meta, name in zip(fields[0::2], fields[1::2], strict=False):
            parts = meta.decode().split()
            if len(parts) < 4 or not parts[1].startswith("100") or parts[3] in seen:
                continue
            seen.add(parts[3])
            added.append((repo.root_path(name.decode("utf-8", "surrogateescape")), parts[3]))
        for at in range(0, len(added), BATCH):
            chunk = added[at : at + BATCH]
            texts = git.blobs([sha for _, sha in chunk])
            for path, sha in chunk:
                findings = scan_name(path, allow)  # a binary file's name too
                shown = redact_name(path, findings) if findings else path
                if not findings:
                    text = decode(texts.get(sha, b""))
                    findings = [] if text is None else scan_file_text(path, text, allow)
                if findings:
                    f = findings[0]
                    subject = git.out("log", "-1", "--format=%s", commit)
                    return Leak(shown, f.line, f.rule, f.preview, f.fingerprint, commit, subject)
    return None
