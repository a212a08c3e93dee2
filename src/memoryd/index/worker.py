"""A loader worker: ``python -m memoryd.index.worker`` (started by :mod:`memoryd.index.pool`).

Reads from stdin one pickled ``(root, cap)`` and then pickled lists of
``(path, old_hash)``; answers each list on stdout with the pickled list of
:func:`memoryd.index.loader.load` results, in order, preceded by its length
(:data:`memoryd.index.pool.HEADER`). Exits at end of input.
"""

from __future__ import annotations

import pickle
import sys

from memoryd.index.loader import load_many
from memoryd.index.pool import HEADER


def main() -> None:
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    root, cap = pickle.load(stdin)
    while True:
        try:
            batch = pickle.load(stdin)
        except EOFError:
            return
        results = load_many(root, batch, cap)  # phase by phase, as this process would
        data = pickle.dumps(results, protocol=pickle.HIGHEST_PROTOCOL)
        stdout.write(HEADER.pack(len(data)))
        stdout.write(data)
        stdout.flush()


if __name__ == "__main__":
    main()
