"""A small case-insensitive, case-preserving file system (FUSE), as a Mac's APFS behaves.

``python -m tests.sync.cifs BACKING MOUNTPOINT`` serves BACKING at MOUNTPOINT until it is
unmounted: each name is looked up ignoring case (the first name a file was created with
is kept), so ``Foo.md`` and ``foo.md`` are one file. :func:`mounted` runs it for a test,
or says why it cannot (no /dev/fuse, no libfuse, no permission to mount).
"""

from __future__ import annotations

import contextlib
import errno
import os
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

    FUSE(CaseInsensitive(backing), mountpoint, foreground=True, nothreads=True)


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
        [sys.executable, "-m", "tests.sync.cifs", str(backing), str(mountpoint)],
        cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 15
        while not os.path.ismount(mountpoint):
            if server.poll() is not None or time.monotonic() > deadline:
                said = server.stderr.read().decode(errors="replace") if server.stderr else ""
                yield f"could not mount a FUSE file system here: {said.strip() or 'timed out'}"
                return
            time.sleep(0.05)
        yield mountpoint
    finally:
        if os.path.ismount(mountpoint):
            subprocess.run(["umount", "-l", str(mountpoint)], check=False, capture_output=True)
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


if __name__ == "__main__":
    _serve(sys.argv[1], sys.argv[2])
