"""Which file system holds a root, and whether it reports remote changes as events."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest

from memoryd.daemon.mounts import (
    Mount,
    filesystem_of,
    mount_of,
    no_remote_events,
    parse_mac_mount,
    parse_mountinfo,
    unescape,
)

# Shaped like a real /proc/self/mountinfo: optional fields (shared:, master:), an
# escaped space and backslash, nested mounts, a sibling whose name extends another's,
# and a file system mounted over another at the same point.
MOUNTINFO = r"""21 26 0:20 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw
26 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw,errors=remount-ro
27 26 0:25 / /home rw,relatime shared:2 - btrfs /dev/nvme0n1p3 rw,space_cache=v2
90 27 0:51 / /home/ann/My\040Notes rw,relatime shared:40 - nfs4 nas:/export/notes rw,vers=4.2
91 90 0:52 / /home/ann/My\040Notes/local rw,relatime shared:41 - tmpfs tmpfs rw
92 27 0:53 / /home/ann/My\040Notes2 rw,nosuid,nodev shared:42 master:3 - fuse.sshfs ann@box:/m rw
93 26 0:54 / /mnt/share rw,relatime shared:43 - cifs //server/share rw,vers=3.1.1
94 26 0:55 / /mnt/share rw,relatime shared:44 - ext4 /dev/sdb1 rw
95 27 0:56 / /home/ann/back\134slash rw,relatime - 9p drvfs rw,aname=drvfs
96 27 0:57 / /home/ann/vault rw,nosuid,nodev,relatime - fuse.gocryptfs /home/ann/.v rw
"""

MAC_MOUNT = """/dev/disk3s1s1 on / (apfs, sealed, local, read-only, journaled)
devfs on /dev (devfs, local, nobrowse)
/dev/disk3s5 on /System/Volumes/Data (apfs, local, journaled, nobrowse, protect)
//ann@nas._smb._tcp.local/notes on /Volumes/notes (smbfs, nodev, nosuid, mounted by ann)
nas:/export/team on /Volumes/Team Share (nfs, asynchronous)
map auto_home on /System/Volumes/Data/home (autofs, automounted, nobrowse)
"""


def test_octal_escapes_are_decoded() -> None:
    assert unescape(r"/a\040b\011c\012d\134e") == "/a b\tc\nd\\e"
    assert unescape("/plain") == "/plain"


def test_mountinfo_is_parsed_in_order() -> None:
    parsed = parse_mountinfo(MOUNTINFO + "garbage line\n\n")
    assert parsed[:4] == [
        Mount("/sys", "sysfs"),
        Mount("/", "ext4"),
        Mount("/home", "btrfs"),
        Mount("/home/ann/My Notes", "nfs4"),
    ]
    assert Mount("/home/ann/My Notes2", "fuse.sshfs") in parsed  # after two optional fields
    assert Mount("/home/ann/back\\slash", "9p") in parsed
    assert len(parsed) == 10


@pytest.mark.parametrize(
    ("path", "fstype"),
    [
        ("/", "ext4"),
        ("/etc/hosts", "ext4"),
        ("/home/ann/.memory", "btrfs"),
        ("/home/ann/My Notes", "nfs4"),  # the mount point itself
        ("/home/ann/My Notes/facts/a.md", "nfs4"),
        ("/home/ann/My Notes/local/x", "tmpfs"),  # a mount inside the network mount
        ("/home/ann/My Notes2/x", "fuse.sshfs"),  # not inside "My Notes" for sharing a prefix
        ("/mnt/share/x", "ext4"),  # mounted over the cifs share: the later one is what is seen
        ("/home/ann/back\\slash/m", "9p"),
        ("/sysfoo", "ext4"),
    ],
)
def test_the_longest_mount_point_above_a_path_holds_it(path: str, fstype: str) -> None:
    found = mount_of(parse_mountinfo(MOUNTINFO), path)
    assert found is not None and found.fstype == fstype


def test_no_mount_holds_a_path_outside_every_mount() -> None:
    assert mount_of([Mount("/home", "ext4")], "/srv/x") is None
    assert mount_of([], "/x") is None


def test_mac_mount_output_is_parsed() -> None:
    parsed = parse_mac_mount(MAC_MOUNT)
    assert Mount("/Volumes/notes", "smbfs") in parsed
    assert Mount("/Volumes/Team Share", "nfs") in parsed
    assert parsed[0] == Mount("/", "apfs")
    found = mount_of(parsed, "/Volumes/Team Share/.memory")
    assert found is not None and found.fstype == "nfs"
    found = mount_of(parsed, "/Users/ann/.memory")
    assert found is not None and found.fstype == "apfs"


@pytest.mark.parametrize(
    "fstype",
    ["nfs", "nfs4", "cifs", "smb3", "smbfs", "afpfs", "webdav", "davfs", "9p", "afs", "ncpfs",
     "ceph", "glusterfs", "lustre", "fuse.sshfs", "fuse.rclone", "fuse.s3fs", "fuse.ceph-fuse",
     "NFS"],
)  # fmt: skip
def test_network_file_systems_report_no_remote_events(fstype: str) -> None:
    assert no_remote_events(fstype)


@pytest.mark.parametrize(
    "fstype",
    ["ext4", "btrfs", "xfs", "apfs", "tmpfs", "overlay", "zfs", "fuse.gocryptfs",
     "fuse.mergerfs", "fuseblk", "fuse", "nfsd", "autofs"],
)  # fmt: skip
def test_local_file_systems_report_events(fstype: str) -> None:
    assert not no_remote_events(fstype)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/mountinfo")
def test_the_real_mount_table_names_a_local_file_system(tmp_path: Path) -> None:
    table = parse_mountinfo(Path("/proc/self/mountinfo").read_text())
    expected = mount_of(table, str(tmp_path.resolve()))
    assert expected is not None
    assert filesystem_of(tmp_path) == expected.fstype
    assert filesystem_of(Path("/proc/self")) == "proc"


def test_an_unreadable_mount_table_means_unknown(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG, logger="memoryd.daemon.mounts"):
        found = filesystem_of(
            tmp_path, mountinfo=tmp_path / "no-such-mountinfo", mac_mount=str(tmp_path / "none")
        )
        assert found is None
    assert any(r.levelno == logging.DEBUG for r in caplog.records)
