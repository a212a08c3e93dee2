"""A memory over ``search.max_file_bytes``, said the same way wherever memoryd meets one.

Its body is not indexed (only its frontmatter is searched), ``remember`` refuses it, sync
leaves it out of the commit and inspect reports it: each names the size against the limit
and the one fix in these words, so a user who meets it in two places reads one thing.
Light (no imports): the lean recall's hit text uses it.
"""

SETTING = "search.max_file_bytes"
FIX = f"split it into smaller memories, or raise {SETTING} in config.yaml"


def over(size: int, cap: int) -> str:
    """``N bytes, over the CAP-byte limit (search.max_file_bytes)``."""
    return f"{size} bytes, over the {cap}-byte limit ({SETTING})"


def not_loaded(path: object, size: int, cap: int) -> str:
    """What a recall or a context block shows in the place of a body that was not indexed."""
    return (
        f"[… body not loaded: {path} is {over(size, cap)}, so only its frontmatter is "
        "searched: read the file, or split it into smaller memories]"
    )
