"""The per-turn injection: iron rules that do not fit in it are a problem, never a silent cut.

``memoryd context`` puts the iron rules first and keeps the whole block within
``injection.max_total_chars``. When the rules alone take more than that, the block
leaves some out (and says so); this check says it here too, so a person finds out
without reading a prompt.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from memoryd.checks import Context, check
from memoryd.findings import Finding
from memoryd.roots import ROOT_FILE


@check("injection.rules_over_budget")
def rules_over_budget(ctx: Context) -> Iterator[Finding]:
    from memoryd import locate
    from memoryd.compile import markers
    from memoryd.injection import RootBlocks, rule_lines, rules_left_out

    roots = [r for r in locate.active_roots(ctx.app.config, ctx.app.cwd) if r.layout == "plugin"]
    views = [RootBlocks(r.scope, str(r.path), markers.root_blocks(r.path)) for r in roots]
    total = ctx.app.config.injection.max_total_chars
    left_out = rules_left_out(views, total)
    if not left_out:
        return
    rules = rule_lines(views)
    last = rules[len(rules) - left_out]  # the first rule left out: its root holds it
    view = next((v for v in views if last.endswith(f"[{v.scope}]")), views[-1])
    yield Finding(
        Path(view.path) / ROOT_FILE,
        f"{left_out} of {len(rules)} iron rules do not fit in injection.max_total_chars "
        f"({total} characters): memoryd context leaves them out of every prompt",
        "merge or shorten iron rules (in rules/), or raise injection.max_total_chars in "
        "config.yaml (Claude Code stops inlining a hook's output above 10000)",
    )
