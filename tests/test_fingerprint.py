"""A fingerprint packed in one int says "unchanged" exactly when the fingerprint does."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from memoryd import fingerprint as fp
from memoryd.compile.listing import ScanCache, scan_root

PART = st.integers(min_value=-(2**63), max_value=2**64 - 1)  # a stat's ints, signed or not
PRINTS = st.tuples(PART, PART, PART, PART)


@given(PRINTS, PRINTS)
def test_packed_fingerprints_are_equal_exactly_when_the_fingerprints_are(
    a: fp.Fingerprint, b: fp.Fingerprint
) -> None:
    assert (fp.pack(a) == fp.pack(b)) == (a == b)


@given(PRINTS)
def test_a_fingerprint_one_bit_away_packs_to_another_int(a: fp.Fingerprint) -> None:
    size, mtime, ctime, inode = a
    for other in (
        (size, mtime, ctime, inode ^ 1),
        (size ^ 1, mtime, ctime, inode),
        (size, mtime ^ (1 << 63), ctime, inode),
        (size, mtime, ctime ^ 1, inode),
    ):
        assert fp.pack(a) != fp.pack(other)


def test_the_daemon_listing_keeps_one_int_a_file(tmp_path: Path) -> None:
    """A tuple of four ints a file was 21 MB of the daemon at 100k memories."""
    (tmp_path / "facts").mkdir()
    memory = tmp_path / "facts" / "a.md"
    memory.write_text("---\nkind: fact\nsummary: a\n---\nbody\n")
    os.utime(memory, ns=(0, -1_500_000_000))  # settled, and before 1970
    (item,) = scan_root(tmp_path, ScanCache(slim=True))
    assert item.fingerprint == fp.packed(os.stat(memory))
    assert type(item.fingerprint) is int
