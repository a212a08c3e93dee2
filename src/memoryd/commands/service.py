"""``memoryd service install|uninstall|status``: the daemon as a user service."""

from __future__ import annotations

import argparse
import dataclasses
from typing import TYPE_CHECKING, Any

from memoryd.app import App
from memoryd.commands import add_json

if TYPE_CHECKING:
    from memoryd.daemon.manager import Outcome, ServiceStatus


def register(sub: argparse._SubParsersAction[Any]) -> None:
    parser = sub.add_parser(
        "service", help="install, remove or inspect the systemd/launchd user service"
    )
    parser.add_argument("action", choices=("install", "uninstall", "status"))
    parser.add_argument(
        "--dry-run", action="store_true", help="print the unit and the commands, run nothing"
    )
    parser.add_argument(
        "--manager",
        choices=("systemd", "launchd"),
        help="service manager (default: launchd on macOS, systemd elsewhere)",
    )
    add_json(parser)
    parser.set_defaults(handler=run)


def run(app: App, args: argparse.Namespace) -> int:
    from memoryd.daemon import manager as service_manager
    from memoryd.daemon import units

    manager = args.manager or service_manager.detect_manager()
    if args.action == "status":
        state = service_manager.status(manager, app.env)
        data = {**dataclasses.asdict(state), "path": str(state.path)}
        app.emit(args.json, data, lambda: _status_text(state))
        return 0 if state.installed and state.running else 1
    act = service_manager.install if args.action == "install" else service_manager.uninstall
    outcome = act(manager, app.env, app.paths, dry_run=args.dry_run)
    data = {
        "manager": outcome.manager,
        "path": str(outcome.path),
        "action": outcome.action,
        "dry_run": outcome.dry_run,
        "commands": [list(step.argv) for step in outcome.steps],
        "unit": outcome.text,
    }
    app.emit(args.json, data, lambda: _outcome_text(outcome, args.action))
    sock = app.env.get("SSH_AUTH_SOCK", "")
    if args.action == "install" and manager == "systemd" and units.volatile_agent(sock):
        app.note(
            f"memoryd: warning: SSH_AUTH_SOCK={sock} changes at every login, so pushes over "
            "SSH will fail after you log out; see 'Pushing from a service' in docs/service.md"
        )
    return 0


def _outcome_text(outcome: Outcome, action: str) -> str:
    commands = [f"  {step}" for step in outcome.steps]
    if outcome.dry_run:
        lines = []
        if action == "install" and outcome.action != "unchanged":
            lines += [f"# would write {outcome.path}:", outcome.text.rstrip("\n")]
        elif action == "uninstall" and outcome.action == "removed":
            lines.append(f"# would remove {outcome.path}")
        elif outcome.action in ("unchanged", "absent"):
            lines.append(f"# {outcome.path} is {_STATE[outcome.action]}")
        return "\n".join([*lines, "# would run:" if commands else "# would run nothing", *commands])
    head = f"{outcome.path}: {_STATE[outcome.action]}"
    return "\n".join([head, *(["ran:", *commands] if commands else [])])


_STATE = {
    "installed": "installed",
    "updated": "updated",
    "unchanged": "already installed, unchanged",
    "removed": "removed",
    "absent": "not installed, nothing to remove",
}


def _status_text(state: ServiceStatus) -> str:
    if not state.installed:
        unit = "not installed (memoryd service install)"
    elif not state.ours:
        unit = "present but not written by memoryd"
    else:
        unit = "installed"
    lines = [f"{state.manager} unit {state.path}: {unit}"]
    if state.running is None:
        lines.append(f"manager: {state.detail}")
        if state.hint:  # the manager could not be asked: what to do about it
            lines.append(f"  hint: {state.hint}")
    else:
        pid = f", pid {state.pid}" if state.pid else ""
        lines.append(
            f"enabled: {_yes(state.enabled)}, running: {_yes(state.running)}{pid} ({state.detail})"
        )
    return "\n".join(lines)


def _yes(value: bool | None) -> str:
    return "yes" if value else "no"
