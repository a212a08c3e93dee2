"""``memoryd ui``: serve the local page (search, the agent's view, memories, conflicts)."""

from __future__ import annotations

import argparse
from typing import Any

from memoryd.app import App


def register(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser(
        "ui",
        help="serve a local page to look at memory and settle conflicts (127.0.0.1 only)",
    )
    parser.add_argument(
        "--no-open", action="store_true", help="print the URL only; do not open a browser"
    )
    parser.add_argument(
        "--port",
        type=int,
        default=0,
        metavar="N",
        help="listen on 127.0.0.1:N (default: a random free port)",
    )
    parser.set_defaults(handler=run, stoppable=True)


def run(app: App, args: argparse.Namespace) -> int:
    from memoryd.errors import UsageError
    from memoryd.ui.server import make_server
    from memoryd.ui.views import warm_in_background

    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port must be between 0 and 65535, got {args.port}",
                         hint="leave --port out for a random free port")  # fmt: skip
    server = make_server(app, args.port)
    warm_in_background(app)
    try:
        app.out.write(f"{server.url}\n")
        app.out.flush()
        app.note("memoryd ui: the link above holds this run's token; press Ctrl-C to stop")
        if not args.no_open:
            _open(app, server.url)
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        app.note("memoryd ui: stopped")
    finally:
        server.server_close()
    return 0


def _open(app: App, url: str) -> None:
    import webbrowser

    try:
        opened = webbrowser.open(url)
    except webbrowser.Error:
        opened = False
    if not opened:
        app.note("memoryd ui: no browser could be opened here; open the link above yourself")
