"""Files the real daemon holds open, deleted or replaced under it while it runs.

A user cleans out ``~/.cache`` (or a disk cleaner does), or a command moves a damaged
index aside: the daemon's open descriptor still leads to the old inode, which nothing
else reads.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from memoryd.app import App
from tests.daemon.harness import (
    DaemonProcess,
    app_with_root,
    indexed,
    memory,
    save,
    settled,
    wait_until,
)
from tests.helpers import run_cli


def found(app: App, word: str) -> bool:
    done = run_cli("recall", word, process=True)
    return done.returncode == 0 and word in done.stdout


def test_the_cache_folder_deleted_while_running_is_indexed_again(tmp_path: Path) -> None:
    app, root = app_with_root()
    save(root / "facts" / "before.md", memory("kafka partition rebalance"))
    daemon = DaemonProcess(tmp_path)
    try:
        daemon.wait_ready(app)
        assert wait_until(lambda: found(app, "kafka")), daemon.output()

        shutil.rmtree(app.paths.cache_dir)
        save(root / "facts" / "after.md", memory("nginx upstream keepalive"))

        # the memory written before and the one written after are both found again
        assert wait_until(lambda: found(app, "nginx") and found(app, "kafka"), 20), (
            daemon.output()
        )
        assert wait_until(lambda: settled(app, tmp_path / "scratch")), daemon.output()
        assert {Path(p).name for p, _ in indexed(app)} >= {"before.md", "after.md"}
        assert (
            f"the index {app.paths.index_db} was deleted or replaced while memoryd ran: "
            "opening it again and indexing every root" in daemon.output()
        )
        assert daemon.terminate() == 0, daemon.output()
    finally:
        daemon.kill()
