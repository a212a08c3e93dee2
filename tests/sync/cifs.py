"""A small case-insensitive, case-preserving file system (FUSE), as a Mac's APFS behaves.

``python -m tests.sync.cifs BACKING MOUNTPOINT [PARENT_PID]`` serves BACKING at MOUNTPOINT
until it is unmounted, stopped, or PARENT_PID dies: each name is looked up ignoring case
(the first name a file was created with is kept), so ``Foo.md`` and ``foo.md`` are one
file. :func:`mounted` runs it for a test, or says why it cannot (no /dev/fuse, no libfuse,
no permission to mount), and leaves neither the server nor the mount behind, however the
test ends.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def _serve(backing: str, mountpoint: str) -> None:
    from fuse import FUSE, FuseOSError, Operations

    class CaseInsensitive(Operations):  # type: ignore[misc]
        def __init__(self, root: str) -> None:
            self.root = root

        def _real(self, path: str) -> str:
            """The backing path of ``path``, each name matched ignoring case."""
            real = self.root
            for name in [p for p in path.split("/") if p]:
                try:
                    found = next(
                        (n for n in os.listdir(real) if n.casefold() == name.casefold()), name
                    )
                except (NotADirectoryError, FileNotFoundError):
                    found = name
                real = os.path.join(real, found)
            return real

        def __call__(self, op: str, path: str, *args: Any) -> Any:
            try:
                return super().__call__(op, path, *args)
            except OSError as exc:
                raise FuseOSError(exc.errno or errno.EIO) from None

        def getattr(self, path: str, fh: Any = None) -> dict[str, Any]:
            st = os.lstat(self._real(path))
            keys = ("st_mode", "st_nlink", "st_uid", "st_gid", "st_size", "st_atime",
                    "st_mtime", "st_ctime", "st_ino")  # fmt: skip
            return {k: getattr(st, k) for k in keys}

        def readdir(self, path: str, fh: Any) -> list[str]:
            return [".", "..", *os.listdir(self._real(path))]

        def access(self, path: str, mode: int) -> None:
            if not os.access(self._real(path), mode):
                raise FuseOSError(errno.EACCES)

        def chmod(self, path: str, mode: int) -> None:
            os.chmod(self._real(path), mode)

        def chown(self, path: str, uid: int, gid: int) -> None:
            os.chown(self._real(path), uid, gid)

        def utimens(self, path: str, times: Any = None) -> None:
            os.utime(self._real(path), times)

        def readlink(self, path: str) -> str:
            return os.readlink(self._real(path))

        def symlink(self, target: str, source: str) -> None:
            os.symlink(source, self._real(target))

        def link(self, target: str, source: str) -> None:
            os.link(self._real(source), self._real(target))

        def mkdir(self, path: str, mode: int) -> None:
            os.mkdir(self._real(path), mode)

        def rmdir(self, path: str) -> None:
            os.rmdir(self._real(path))

        def unlink(self, path: str) -> None:
            os.unlink(self._real(path))

        def rename(self, old: str, new: str) -> None:
            source, there = self._real(old), self._real(new)
            wanted = os.path.join(os.path.dirname(there), os.path.basename(new))
            if os.path.lexists(there) and not os.path.samefile(source, there):
                os.rename(source, there)  # onto another file: it takes that file's place
                os.rename(there, wanted)  # ... under the name given
            else:
                os.rename(source, wanted)  # a new name, or the same file's case changed

        def statfs(self, path: str) -> dict[str, Any]:
            st = os.statvfs(self._real(path))
            keys = ("f_bavail", "f_bfree", "f_blocks", "f_bsize", "f_favail", "f_ffree",
                    "f_files", "f_flag", "f_frsize", "f_namemax")  # fmt: skip
            return {k: getattr(st, k) for k in keys}

        def create(self, path: str, mode: int, fi: Any = None) -> int:
            return os.open(self._real(path), os.O_RDWR | os.O_CREAT, mode)

        def open(self, path: str, flags: int) -> int:
            return os.open(self._real(path), flags)

        def read(self, path: str, size: int, offset: int, fh: int) -> bytes:
            return os.pread(fh, size, offset)

        def write(self, path: str, data: bytes, offset: int, fh: int) -> int:
            return os.pwrite(fh, data, offset)

        def truncate(self, path: str, length: int, fh: Any = None) -> None:
            os.truncate(self._real(path), length)

        def flush(self, path: str, fh: int) -> None:
            return None

        def fsync(self, path: str, datasync: int, fh: int) -> None:
            os.fsync(fh)

        def release(self, path: str, fh: int) -> None:
            os.close(fh)

    # auto_unmount: libfuse's fusermount watches the server and unmounts when it ends, even
    # by SIGKILL; without it a dead server's mount stayed ("Transport endpoint is not
    # connected"). Root mounts without fusermount, so only where there is one.
    watched = {"auto_unmount": True} if shutil.which("fusermount") else {}
    # As a Mac's disk does: use_ino, a file's inode is the backing file's, so note.md and
    # Note.md are one inode (libfuse numbered each name it was asked for, and git, which
    # compares inodes to tell a case twin from a new file, took Note.md for an untracked
    # file); no kernel cache of names or attributes, since the kernel caches each spelling
    # apart and kept "Note.md" alive after note.md was unlinked (git: "unable to unlink old
    # 'Note.md': No such file or directory").
    FUSE(
        CaseInsensitive(backing), mountpoint, foreground=True, nothreads=True, use_ino=True,
        entry_timeout=0, attr_timeout=0, negative_timeout=0, **watched,
    )  # fmt: skip


def _end_with(parent: int) -> None:
    """SIGTERM this server when ``parent`` (the test run) dies, however it dies.

    A test run stopped by SIGTERM or SIGKILL runs no ``finally``: the server went on serving
    (an orphaned ``python -m tests.sync.cifs`` per run) with the disk still mounted. libfuse
    ends its loop on SIGTERM and unmounts. (The "parent" prctl watches is the thread that
    started the server: :func:`mounted` runs in the test's own thread, which outlives it.)
    """
    import ctypes
    import signal

    pr_set_pdeathsig = 1
    ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)
    if os.getppid() != parent:  # it died before the line above
        os.kill(os.getpid(), signal.SIGTERM)


@contextlib.contextmanager
def mounted(backing: Path, mountpoint: Path) -> Iterator[Path | str]:
    """``mountpoint`` serving ``backing`` case-insensitively, or the reason it cannot."""
    if not os.path.exists("/dev/fuse"):
        yield "no /dev/fuse on this machine"
        return
    try:
        import fuse  # noqa: F401
    except (ImportError, OSError) as exc:  # fusepy, or libfuse.so.2 it loads, is missing
        yield f"fusepy and libfuse2 are needed (pip install fusepy; apt-get install libfuse2): {exc}"
        return
    backing.mkdir(parents=True, exist_ok=True)
    mountpoint.mkdir(parents=True, exist_ok=True)
    root = Path(__file__).resolve().parents[2]
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.sync.cifs", str(backing), str(mountpoint), str(os.getpid())],
        cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 15
        while not os.path.ismount(mountpoint):
            if server.poll() is not None or time.monotonic() > deadline:
                _stop(server, mountpoint)  # reading a running server's stderr waited forever
                said = server.stderr.read().decode(errors="replace") if server.stderr else ""
                yield f"could not mount a FUSE file system here: {said.strip() or 'timed out'}"
                return
            time.sleep(0.05)
        yield mountpoint
    finally:
        _stop(server, mountpoint)


def _stop(server: subprocess.Popen[bytes], mountpoint: Path) -> None:
    """End the server (SIGTERM, then SIGKILL), reap it, and leave nothing mounted."""
    if server.poll() is None:
        server.terminate()  # libfuse ends its loop and unmounts
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    for unmount in (["fusermount", "-uz"], ["umount", "-l"]):  # a user's mount, root's
        if not is_mounted(mountpoint):  # a server that died without unmounting left one
            break
        with contextlib.suppress(OSError):  # no such program
            subprocess.run([*unmount, str(mountpoint)], check=False, capture_output=True)


def is_mounted(mountpoint: Path) -> bool:
    """Is anything mounted at ``mountpoint``, a dead FUSE mount included? (os.path.ismount
    cannot stat a mount whose server is gone, and says no: the old clean-up then left it.)"""
    table = Path("/proc/self/mountinfo")
    if not table.exists():
        return os.path.ismount(mountpoint)
    where = os.path.join(os.path.realpath(mountpoint.parent), mountpoint.name)
    for line in table.read_text(encoding="utf-8", errors="surrogateescape").splitlines():
        fields = line.split(" ")
        if len(fields) > 4 and _unescape(fields[4]) == where:
            return True
    return False


def _unescape(field: str) -> str:
    """A mountinfo path: space, tab, newline and backslash are written as octal escapes."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


if __name__ == "__main__":
    if len(sys.argv) > 3 and sys.platform == "linux":
        _end_with(int(sys.argv[3]))
    _serve(sys.argv[1], sys.argv[2])
