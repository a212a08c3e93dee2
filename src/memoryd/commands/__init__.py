"""CLI subcommands: one module per command (or family), each with ``register(sub)``.

Modules are discovered, so a new command is a new file. Keep module imports
light (argparse, typing): heavy imports (git, watchdog, sqlite) belong inside
the handler, so ``memoryd recall`` starts fast.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
from typing import Any

SubParsers = "argparse._SubParsersAction[argparse.ArgumentParser]"


def register_all(sub: argparse._SubParsersAction[Any]) -> None:
    names = sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))
    for name in names:
        module = importlib.import_module(f"{__name__}.{name}")
        module.register(sub)


def add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")
