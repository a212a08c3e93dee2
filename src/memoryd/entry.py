"""The ``memoryd`` console script: ``recall`` goes to the lean path first.

``memoryd recall`` is what agents run most, and what they wait for. This entry point
imports nothing but this module before it knows the command: ``recall`` is answered by
the running daemon over its socket (:mod:`memoryd.recall_client`) when there is one, else
by :mod:`memoryd.lean_recall` when that can (most of the time), and everything else,
and every recall both decline, by the full CLI (:func:`memoryd.cli.main`).
"""

import gc
import os
import sys


def main() -> int:
    argv = sys.argv[1:]
    if argv[:1] == ["recall"]:
        # A recall is over in milliseconds and makes few objects, none in a cycle worth
        # freeing: the collections its imports set off cost it a twentieth of its
        # instructions. The full CLI below decides for itself.
        gc.disable()
        from memoryd.recall_client import ask

        code = ask(argv[1:])
        if code is not None:
            return code
        from memoryd.lean_recall import run

        code = run(argv[1:], os.environ, sys.stdout, sys.stderr)
        if code is not None:
            return code
    gc.disable()  # importing the CLI makes only long-lived objects: no garbage to look for
    try:
        from memoryd.cli import main as full
    finally:
        gc.enable()  # memoryd.cli.main decides from here
    return full()
