"""What a mistyped word most likely meant, for an error to name (``did you mean 'search'?``)."""

from __future__ import annotations

from collections.abc import Iterable

CUTOFF = 0.75  # difflib's ratio: 'rul' for 'rule' (0.86), not 'factoid' for 'fact' (0.73)


def closest(word: object, options: Iterable[str]) -> str | None:
    """The option ``word`` is most likely a typo of, or None."""
    if not isinstance(word, str):
        return None
    import difflib  # only for an input with a mistake in it

    close = difflib.get_close_matches(word, list(options), n=1, cutoff=CUTOFF)
    return close[0] if close else None


def did_you_mean(word: object, options: Iterable[str]) -> str:
    """`` (did you mean 'search'?)`` when ``word`` is a likely typo of an option, else ``""``."""
    guess = closest(word, options)
    return f" (did you mean {guess!r}?)" if guess else ""
