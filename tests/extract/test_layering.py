"""memoryd.extract is driven by the daemon and never reaches back into it."""

from __future__ import annotations

from tests.test_layout import SRC, cycles, graph, within


def test_extract_never_imports_the_daemon_or_the_command_line() -> None:
    edges = graph(SRC)
    assert "memoryd.extract.tracker" in edges
    upward = sorted(
        f"{a} -> {b}"
        for a, targets in edges.items()
        if within(a, ("memoryd.extract",))
        for b in targets
        if within(b, ("memoryd.daemon", "memoryd.commands", "memoryd.cli"))
    )
    assert upward == []
    assert "memoryd.extract.tracker" in edges["memoryd.daemon.extracting"]
    assert [c for c in cycles(edges) if any(within(m, ("memoryd.extract",)) for m in c)] == []
