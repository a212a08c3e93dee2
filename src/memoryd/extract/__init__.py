"""Auto-extraction: memories written even when the model forgets to write them.

The daemon watches the session transcripts that agents leave on disk (Claude
Code's JSONL files, OpenCode's session store). When a session has been quiet for
``extract.settle_ms`` (its turn has ended), has at least ``extract.min_turns``
turns and something new since the last extraction, the new part of the
conversation goes, with a shipped prompt, to the user's own ``extract.command``
(any cheap model: ``claude -p``, ``opencode run``, ``llm``), and the memories it
answers with pass the same gate as an agent's ``remember``: the secret gate,
de-duplication, rule → rule-proposal, the path guard.

This package never imports the daemon: :class:`memoryd.extract.tracker.Tracker`
is told which files changed and when to look again, and the daemon owns the
watching and the timers. See docs/agents.md.
"""
