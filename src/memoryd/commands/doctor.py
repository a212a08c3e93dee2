"""``memoryd doctor``: check everything sync depends on; print the fix for each failure."""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from memoryd.app import App
from memoryd.commands import add_json


def register(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser(
        "doctor", help="check git, remotes, push auth, watch limits, roots, index, service, daemon"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        metavar="S",
        help="seconds to wait for each remote (default 10)",
    )
    parser.add_argument(
        "--manager", choices=("systemd", "launchd"), help="service manager to check"
    )
    add_json(parser)
    parser.set_defaults(handler=run)


def run(app: App, args: argparse.Namespace) -> int:
    from memoryd.doctor import checks as doctor
    from memoryd.doctor.verdict import Machine

    config, config_check = doctor.machine_config(app.paths)  # a broken file is a check
    ctx = Machine(env=app.env, paths=app.paths, config=config)
    ctx.remote_timeout_s = args.timeout
    if args.manager:
        ctx.manager = args.manager
    checks = doctor.run_checks(ctx, config_check)
    bad = doctor.failed(checks)
    data = {"ok": not bad, "checks": [dataclasses.asdict(check) for check in checks]}
    app.emit(args.json, data, lambda: doctor.render(checks))
    return 1 if bad else 0
