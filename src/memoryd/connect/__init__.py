"""``memoryd connect``: memoryd's MCP server and hooks merged into each agent client's config.

``clients`` connects, undoes and checks; one module per client (``claude_code``,
``opencode``, ``codex``, ``gemini``, ``cursor``) says what its config gets, from the
templates shipped in ``memoryd/integrations``; ``jsonc`` edits JSON and JSONC keeping every
byte it does not change, ``ledger`` keeps the backups. Only the names are here, so the
command line can offer them without importing the rest.
"""

CLIENTS = ("claude-code", "opencode", "codex", "gemini", "cursor")
