"""What ``memoryd connect`` wrote, the backups of what was there, and undoing it.

Per client one record in ``<state>/connect/<client>.json``: for each file it changed, the
backup of the file before memoryd first touched it (none: there was no file) and the
SHA-256 of the bytes memoryd last wrote. A later connect that finds its own bytes keeps the
first backup, so ``--undo`` still goes back to the user's file. ``--undo`` puts the backup
back byte for byte when the file is still what memoryd wrote; when something else changed it
since (Claude Code rewrites ``~/.claude.json`` all the time), it takes memoryd's entries out
of it instead, after saving the file as it was. Nothing is ever lost.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from memoryd.connect.target import Change, read
from memoryd.fsutil import atomic_write


@dataclass(frozen=True)
class Done:
    path: Path
    action: str  # wrote | unchanged | restored | removed-entries | deleted | kept
    backup: Path | None = None  # where the bytes before this action are kept


def digest(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


class Ledger:
    def __init__(self, state_dir: Path, client: str) -> None:
        self.folder = state_dir / "connect"
        self.client = client
        self.file = self.folder / f"{client}.json"

    def records(self) -> dict[str, dict[str, str | None]]:
        raw = read(self.file)
        if raw is None:
            return {}
        data = json.loads(raw)
        files: dict[str, dict[str, str | None]] = data.get("files", {})
        return files

    def _save(self, records: dict[str, dict[str, str | None]]) -> None:
        if not records:
            self.file.unlink(missing_ok=True)
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        text = json.dumps({"client": self.client, "files": records}, indent=2) + "\n"
        atomic_write(self.file, text.encode(), 0o600)

    def _backup(self, path: Path, data: bytes, tag: str) -> Path:
        folder = self.folder / "backups" / self.client
        folder.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%dT%H%M%S")
        name = str(path).strip("/").replace("/", "%")
        target = folder / f"{name}.{tag}-{stamp}"
        n = 1
        while target.exists():
            n += 1
            target = folder / f"{name}.{tag}-{stamp}-{n}"
        atomic_write(target, data, 0o600)
        return target

    def apply(self, changes: list[Change]) -> list[Done]:
        """Write every change (its backup first); unchanged files are left alone."""
        records, done = self.records(), []
        for change in changes:
            if not change.changed:
                done.append(Done(change.path, "unchanged"))
                continue
            record = records.get(str(change.path))
            if record is None or record["written"] != digest(change.old):
                old = change.old
                first = None if old is None else self._backup(change.path, old, "before")
                record = {"backup": None if first is None else str(first), "written": None}
            _write(change.path, change.new)
            record["written"] = digest(change.new)
            records[str(change.path)] = record
            backup = Path(record["backup"]) if record["backup"] else None
            done.append(Done(change.path, "wrote", backup))
        self._save(records)
        return done

    def undo(self, remove: Callable[[Path, str], str | None]) -> list[Done]:
        """Every file back as it was; ``remove`` takes memoryd's entries out of a file that
        changed since memoryd wrote it (None: the file is memoryd's alone, delete it)."""
        records, done = self.records(), []
        for name, record in sorted(records.items()):
            path = Path(name)
            now = read(path)
            backup = Path(record["backup"]) if record["backup"] else None
            if now is None:
                done.append(Done(path, "kept"))  # gone already: nothing to undo
            elif digest(now) == record["written"]:
                if backup is None:
                    path.unlink()
                    done.append(Done(path, "deleted"))
                else:
                    _write(path, backup.read_bytes())
                    done.append(Done(path, "restored", backup))
            else:
                saved = self._backup(path, now, "before-undo")
                kept = remove(path, now.decode("utf-8"))
                if kept is None:
                    path.unlink()
                    done.append(Done(path, "deleted", saved))
                else:
                    _write(path, kept.encode("utf-8"))
                    done.append(Done(path, "removed-entries", saved))
        self._save({})
        return done


def _write(path: Path, data: bytes) -> None:
    """Write through a symbolic link (a dotfiles repository's), never over it."""
    real = path.resolve() if path.is_symlink() else path
    real.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(real, data)
