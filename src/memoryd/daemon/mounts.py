"""Which file system a root lives on, and whether it reports changes as events.

On a network file system (NFS, SMB, AFP, WebDAV, 9p, sshfs...) inotify and
FSEvents watches are granted but only see changes made through this machine's
own kernel: an edit made by another machine, or on the host of a VM share,
never arrives. Such a root must be polled.

The parsers are pure; :func:`filesystem_of` is the one function that reads the
system (``/proc/self/mountinfo`` on Linux, ``/sbin/mount`` on macOS) and
answers None wherever it cannot tell.
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

MOUNTINFO = Path("/proc/self/mountinfo")
MAC_MOUNT = "/sbin/mount"

# Kernel (and macOS) file systems whose changes happen on another machine.
REMOTE_TYPES = frozenset(
    {
        "nfs", "nfs4", "cifs", "smb3", "smbfs", "afpfs", "webdav", "davfs", "9p", "afs",
        "ncpfs", "ceph", "glusterfs", "lustre",
    }
)  # fmt: skip
# FUSE file systems that are network clients. Local ones (gocryptfs, mergerfs,
# ntfs-3g...) report events through FUSE like any local folder: kept out.
REMOTE_FUSE = frozenset(
    {
        "sshfs", "rclone", "s3fs", "goofys", "gcsfuse", "davfs2", "curlftpfs", "smbnetfs",
        "ceph-fuse", "glusterfs", "juicefs",
    }
)  # fmt: skip

_OCTAL = re.compile(r"\\([0-7]{3})")
_MAC_LINE = re.compile(r"^.+? on (?P<point>.+) \((?P<type>[^,()]+)[^()]*\)$")


@dataclass(frozen=True)
class Mount:
    point: str
    fstype: str


def unescape(field: str) -> str:
    """A mountinfo field with its octal escapes (``\\040`` for a space...) decoded."""
    return _OCTAL.sub(lambda m: chr(int(m.group(1), 8)), field)


def parse_mountinfo(text: str) -> list[Mount]:
    """The mounts of Linux ``/proc/self/mountinfo``, in order (a later one may cover an earlier).

    A line: ``id parent major:minor root MOUNT_POINT options [optional...] - FSTYPE source opts``.
    """
    mounts = []
    for line in text.splitlines():
        fields = line.split(" ")
        if len(fields) < 7 or "-" not in fields[6:]:
            continue
        after = fields.index("-", 6) + 1
        if after < len(fields):
            mounts.append(Mount(unescape(fields[4]), unescape(fields[after])))
    return mounts


def parse_mac_mount(text: str) -> list[Mount]:
    """The mounts in macOS ``mount`` output: ``//u@host/share on /Volumes/x (smbfs, ...)``."""
    mounts = []
    for line in text.splitlines():
        match = _MAC_LINE.match(line.strip())
        if match:
            mounts.append(Mount(match["point"], match["type"].strip()))
    return mounts


def mount_of(mounts: list[Mount], path: str) -> Mount | None:
    """The mount that holds ``path`` (absolute, resolved): the longest mount point above it.

    On a tie (a file system mounted over another at the same point) the last one wins.
    """
    best: Mount | None = None
    for mount in mounts:
        point = mount.point.rstrip("/") or "/"
        inside = path == point or path.startswith(point if point == "/" else point + "/")
        if inside and (best is None or len(point) >= len(best.point.rstrip("/") or "/")):
            best = mount
    return best


def no_remote_events(fstype: str) -> bool:
    """Whether a file system of this type misses changes made elsewhere (so must be polled)."""
    fstype = fstype.lower()
    if fstype.startswith("fuse."):
        return fstype.removeprefix("fuse.") in REMOTE_FUSE
    return fstype in REMOTE_TYPES


def filesystem_of(
    path: Path, *, mountinfo: Path = MOUNTINFO, mac_mount: str = MAC_MOUNT
) -> str | None:
    """The type of the file system holding ``path`` (None: unknown, assume events work).

    ``mountinfo`` (Linux) and ``mac_mount`` (macOS) are where the mount table is read from.
    """
    try:
        mounts = _system_mounts(mountinfo, mac_mount)
    except (OSError, subprocess.SubprocessError, UnicodeDecodeError) as exc:
        log.debug("cannot list mounts: %s", exc)
        return None
    if mounts is None:
        log.debug("no mount table on %s: assuming %s reports events", sys.platform, path)
        return None
    found = mount_of(mounts, os.path.realpath(path))
    return found.fstype if found else None


def _system_mounts(mountinfo: Path, mac_mount: str) -> list[Mount] | None:
    platform: str = sys.platform  # a plain str: mypy checks every branch on every system
    if platform.startswith("linux"):
        return parse_mountinfo(mountinfo.read_text(encoding="utf-8"))
    if platform == "darwin":
        out = subprocess.run(
            [mac_mount], capture_output=True, text=True, timeout=5, check=True
        ).stdout
        return parse_mac_mount(out)
    return None
