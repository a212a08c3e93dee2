"""``memoryd mcp`` answers at once what never changes, while the MCP SDK loads.

Importing the official ``mcp`` SDK takes about a second on an idle machine and 2.3-3.7 s
under load, and a client waits for the ``initialize`` answer and lists the tools only
after ``tools/list``: the first request of a ``claude -p`` run went out while memoryd was
still connecting. Those answers (and ``prompts/list``) depend only on memoryd's version,
the SDK's files and the protocol version the client asks for, so the SDK's own answers are
kept in the cache folder (:mod:`memoryd.cachefile`, keyed by both) and given from there
the moment a request arrives. Every message still goes to the SDK, in order, which
answers the rest once it is loaded; its answers to what the cache already answered are
dropped (and refresh the cache when they differ). The first start after an install or an
upgrade fills the cache at the SDK's pace.

The SDK reads fd 0 and writes fd 1 as it always does: they become pipes to the two
threads here, which hold the client's real stdin and stdout.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from memoryd import __version__, cachefile

if TYPE_CHECKING:
    from memoryd.app import App

log = logging.getLogger(__name__)

FORMAT = 1  # of the cached answers
STATIC = ("tools/list", "prompts/list")  # their first page: the same for every session


def sdk_stamp() -> str | None:
    """The installed SDK's identity (its package file's change time), None without it."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("mcp")
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None:
        return None
    try:
        return str(os.stat(spec.origin).st_mtime_ns)
    except OSError:
        return None


def answer_key(message: dict[str, Any]) -> str | None:
    """Under which name a request's answer is kept, None when it depends on more."""
    method, params = message.get("method"), message.get("params") or {}
    if not isinstance(params, dict):
        return None
    if method == "initialize":
        return f"initialize {params.get('protocolVersion')}"
    if method in STATIC and not params.get("cursor"):
        return str(method)
    return None


@contextlib.contextmanager
def front(app: App) -> Iterator[None]:
    """Serve the cached answers while the body (the SDK's stdio server) runs on fd 0 and 1."""
    stamp = sdk_stamp()
    if stamp is None:  # no SDK: the import in the body says what to install
        yield
        return
    relay = Relay(app.paths.cache_dir / "mcp-answers.marshal", (FORMAT, __version__, stamp))
    try:
        yield
    finally:
        relay.close()


class Relay:
    """The client's stdin and stdout, and the pipes that stand in for them as fd 0 and 1."""

    def __init__(self, file: Path, key: tuple[Any, ...]) -> None:
        self.file, self.key = file, key
        self.answers: dict[str, Any] = cachefile.read(file, key) or {}
        self.answered: dict[str, str] = {}  # request id -> its answer's name (given already)
        self.asked: dict[str, str] = {}  # request id -> its answer's name (to keep)
        self.lock = threading.Lock()
        self.real_out = os.dup(1)
        self.client_in: IO[bytes] = os.fdopen(os.dup(0), "rb")
        self.client_out: IO[bytes] = os.fdopen(os.dup(1), "wb")
        read, write = os.pipe()
        os.dup2(read, 0)
        os.close(read)
        self.to_sdk: IO[bytes] = os.fdopen(write, "wb")
        read, write = os.pipe()
        os.dup2(write, 1)
        os.close(write)
        self.from_sdk: IO[bytes] = os.fdopen(read, "rb")
        self.threads = [
            threading.Thread(target=self._client_to_sdk, name="mcp-in", daemon=True),
            threading.Thread(target=self._sdk_to_client, name="mcp-out", daemon=True),
        ]
        for thread in self.threads:
            thread.start()

    def close(self) -> None:
        """The SDK is done: its stdout (fd 1) is the client's again, which ends the pipe."""
        with contextlib.suppress(OSError, ValueError):
            import sys

            sys.stdout.flush()
        os.dup2(self.real_out, 1)
        os.close(self.real_out)
        self.threads[1].join(timeout=5)

    def _client_to_sdk(self) -> None:
        for line in self.client_in:
            message = _message(line)
            key = answer_key(message) if "id" in message and "method" in message else None
            if key is not None:
                rid = json.dumps(message["id"])
                with self.lock:
                    cached = self.answers.get(key)
                    if cached is not None:
                        self.answered[rid] = key
                        self._send({"jsonrpc": "2.0", "id": message["id"], "result": cached})
                    else:
                        self.asked[rid] = key
            try:
                self.to_sdk.write(line)
                self.to_sdk.flush()
            except (BrokenPipeError, ValueError):  # the SDK stopped
                break
        with contextlib.suppress(OSError, ValueError):
            self.to_sdk.close()  # end of input: the SDK's server returns

    def _sdk_to_client(self) -> None:
        for line in self.from_sdk:
            message = _message(line)
            if "id" in message and "method" not in message:
                rid = json.dumps(message["id"])
                with self.lock:
                    given, wanted = self.answered.pop(rid, None), self.asked.pop(rid, None)
                    if "result" in message and (given or wanted):
                        self._keep(str(given or wanted), message["result"])
                    if given is not None:
                        continue  # the client has it from the cache
            with self.lock:
                self._write(line)

    def _keep(self, name: str, result: Any) -> None:
        if self.answers.get(name) != result:
            self.answers[name] = result
            cachefile.write(self.file, self.key, self.answers)

    def _send(self, message: dict[str, Any]) -> None:
        self._write(json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n")

    def _write(self, line: bytes) -> None:
        with contextlib.suppress(BrokenPipeError, ValueError, OSError):  # the client left
            self.client_out.write(line)
            self.client_out.flush()


def _message(line: bytes) -> dict[str, Any]:
    try:
        message = json.loads(line)
    except ValueError:
        return {}
    return message if isinstance(message, dict) else {}
