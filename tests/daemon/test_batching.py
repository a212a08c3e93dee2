from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from memoryd.daemon.batching import Batch, Change, Kind, Op, batch_of, merge, root_of

R = Path("/r")
A, B, T = R / "a.md", R / "b.md", R / "t.md"


def ch(kind: Kind, path: Path, dest: Path | None = None) -> Change:
    return Change(kind, path, dest)


def test_created_then_deleted_is_nothing() -> None:
    batch = batch_of([ch(Kind.CREATED, A), ch(Kind.MODIFIED, A), ch(Kind.DELETED, A)])
    assert batch.ops == {}
    assert not batch
    assert batch.events == 3


def test_deleted_then_created_is_modified() -> None:
    assert batch_of([ch(Kind.DELETED, A), ch(Kind.CREATED, A)]).ops == {A: Op.MODIFIED}


def test_atomic_save_is_one_modification() -> None:
    # editor writes a temp file and renames it over the original
    batch = batch_of([ch(Kind.CREATED, T), ch(Kind.MODIFIED, T), ch(Kind.MOVED, T, A)])
    assert batch.ops == {A: Op.MODIFIED}


def test_vim_backup_dance_is_one_modification() -> None:
    backup = R / "a.md~"  # the handler filters it; what reaches the batch is this:
    batch = batch_of([ch(Kind.DELETED, A), ch(Kind.CREATED, A), ch(Kind.MODIFIED, A)])
    assert batch.ops == {A: Op.MODIFIED}
    assert backup not in batch.ops


def test_move_follows_through_dest() -> None:
    # a new file renamed twice: the source vanishes; the middle name may have been an
    # existing file it replaced, so it is reported deleted; the end is where it lives
    batch = batch_of([ch(Kind.CREATED, A), ch(Kind.MOVED, A, B), ch(Kind.MOVED, B, T)])
    assert batch.ops == {B: Op.DELETED, T: Op.MODIFIED}
    batch = batch_of([ch(Kind.CREATED, A), ch(Kind.CREATED, T), ch(Kind.MOVED, A, T)])
    assert batch.ops == {T: Op.CREATED}


def test_rename_of_an_existing_file() -> None:
    assert batch_of([ch(Kind.MOVED, A, B)]).ops == {A: Op.DELETED, B: Op.MODIFIED}


def test_folder_events_ask_for_a_rescan_and_collapse_maps_to_roots() -> None:
    other = Path("/other")
    batch = batch_of(
        [ch(Kind.RESCAN, R / "sub"), ch(Kind.MODIFIED, A), ch(Kind.MODIFIED, other / "x.md")]
    )
    assert batch.rescan == {R / "sub"}
    batch.collapse([R, other, R / "deeper"])
    assert batch.ops == {}
    assert batch.rescan == {R / "sub", R, other}
    assert root_of(R / "deeper" / "x.md", [R, R / "deeper"]) == R / "deeper"
    assert root_of(Path("/elsewhere/x.md"), [R]) is None


def test_root_gone_is_kept_apart() -> None:
    batch = batch_of([ch(Kind.ROOT_GONE, R)])
    assert batch.gone == {R}
    assert batch and len(batch) == 1


def test_merge_table_is_total() -> None:
    """Every (state so far, new op) pair has an answer, and the last op decides existence."""
    table = {(before, new): merge(before, new) for before in (None, *Op) for new in Op}
    assert len(table) == (len(Op) + 1) * len(Op)  # merge raises KeyError on a missing case
    for (before, new), after in table.items():
        if before is None:
            assert after is new
        elif new is Op.DELETED:  # gone now: deleted, or never there as far as the batch knows
            assert after is (None if before is Op.CREATED else Op.DELETED)
        else:  # exists now: created only if it did not exist when the batch opened
            assert after is (Op.CREATED if before is Op.CREATED else Op.MODIFIED)


# --- property: merging the events of any sequence of file operations tells the truth
NAMES = [R / n for n in ("a.md", "b.md", "c.md", "t.md")]
ops_strategy = st.lists(
    st.one_of(
        st.tuples(st.just("write"), st.sampled_from(NAMES)),
        st.tuples(st.just("delete"), st.sampled_from(NAMES)),
        st.tuples(st.just("move"), st.sampled_from(NAMES), st.sampled_from(NAMES)),
    ),
    max_size=25,
)


def simulate(
    initial: dict[Path, int], ops: list[tuple[object, ...]]
) -> tuple[dict[Path, int], list[Change]]:
    """Apply ops to a model file system; return the final state and inotify-like events."""
    state = dict(initial)
    events: list[Change] = []
    version = 100
    for op in ops:
        name = op[1]
        assert isinstance(name, Path)
        version += 1
        if op[0] == "write":
            if name not in state:
                events.append(ch(Kind.CREATED, name))
            events.append(ch(Kind.MODIFIED, name))
            state[name] = version
        elif op[0] == "delete" and name in state:
            events.append(ch(Kind.DELETED, name))
            del state[name]
        elif op[0] == "move" and name in state and op[2] != name:
            dest = op[2]
            assert isinstance(dest, Path)
            events.append(ch(Kind.MOVED, name, dest))
            state[dest] = state.pop(name)
    return state, events


@given(st.sets(st.sampled_from(NAMES)), ops_strategy)
def test_merged_batch_matches_the_disk(existing: set[Path], ops: list[tuple[object, ...]]) -> None:
    initial = {name: i for i, name in enumerate(sorted(existing))}
    final, events = simulate(initial, ops)
    merged = batch_of(events).ops
    for name in NAMES:
        if name in merged:
            assert (merged[name] is Op.DELETED) == (name not in final)
            if merged[name] is Op.CREATED:
                assert name not in initial
        else:  # untouched as far as the batch says: must really be unchanged
            assert initial.get(name) == final.get(name)


def test_batch_is_falsy_when_empty() -> None:
    assert not Batch()
