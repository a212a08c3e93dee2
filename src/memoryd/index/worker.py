"""A loader worker: ``python -m memoryd.index.worker`` (started by :mod:`memoryd.index.loader`).

Reads from stdin one pickled ``(root, cap)`` and then pickled lists of
``(path, old_hash)``; answers each list on stdout with the pickled list of
:func:`memoryd.index.loader.load` results, in order. Exits at end of input.
"""

from __future__ import annotations

import pickle
import sys

from memoryd.index.loader import load


def main() -> None:
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    root, cap = pickle.load(stdin)
    while True:
        try:
            batch = pickle.load(stdin)
        except EOFError:
            return
        results = [load(root, path, cap, old) for path, old in batch]
        pickle.dump(results, stdout, protocol=pickle.HIGHEST_PROTOCOL)
        stdout.flush()


if __name__ == "__main__":
    main()
