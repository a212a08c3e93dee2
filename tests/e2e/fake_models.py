"""Fake model APIs on 127.0.0.1 that answer the real clients with scripted turns.

Claude Code speaks the Anthropic Messages API (``POST /v1/messages``, streamed as
server-sent events); OpenCode's ``@ai-sdk/openai-compatible`` provider speaks the
OpenAI chat completions API (``POST /v1/chat/completions``); Codex CLI the OpenAI
Responses API (``POST /v1/responses``); Gemini CLI the Gemini API
(``POST /v1beta/models/MODEL:streamGenerateContent``). Each server records
every request body it received, so a test can read exactly what the client would
have sent a real model: the injected memory block, the tool results.

A request that offers tools is the agent loop: it gets the next scripted turn
(text, or tool calls the client then runs for real). A request without tools is
the client's own housekeeping (a session title, a quota probe): it gets a short
text and consumes no turn. When the script is used up, every answer is "done".
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Turn:
    """One scripted model answer: some text, then tool calls (none: the turn ends)."""

    text: str = ""
    calls: tuple[ToolCall, ...] = ()


def call(name: str, **arguments: Any) -> Turn:
    return Turn(calls=(ToolCall(name, arguments),))


@dataclass
class Recorded:
    path: str
    body: dict[str, Any]


def offers_tools(body: dict[str, Any]) -> bool:
    """Does the request offer tools (the agent loop), or is it the client's housekeeping?"""
    tools = body.get("tools")
    if isinstance(tools, list) and tools and isinstance(tools[0], dict) and (
        "functionDeclarations" in tools[0]  # Gemini: [{functionDeclarations: [...]}]
    ):
        return any(t.get("functionDeclarations") for t in tools)
    return bool(tools)


@dataclass
class _State:
    turns: list[Turn]
    requests: list[Recorded] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    served: int = 0

    def next_turn(self, body: dict[str, Any]) -> Turn:
        with self.lock:
            if not offers_tools(body):
                return Turn(text="memoryd e2e")
            if self.served < len(self.turns):
                self.served += 1
                return self.turns[self.served - 1]
            return Turn(text="done")


class FakeModelAPI:
    """A threaded HTTP server on an ephemeral loopback port; use as a context manager."""

    def __init__(self, turns: list[Turn]) -> None:
        self.state = _State(list(turns))
        state = self.state

        class Handler(_Handler):
            shared = state

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def requests(self) -> list[Recorded]:
        with self.state.lock:
            return list(self.state.requests)

    def agent_requests(self) -> list[dict[str, Any]]:
        """The bodies of the agent-loop requests (the ones that offered tools), in order."""
        return [r.body for r in self.requests if offers_tools(r.body)]

    @property
    def turns_served(self) -> int:
        return self.state.served

    def __enter__(self) -> FakeModelAPI:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


class _Handler(BaseHTTPRequestHandler):
    shared: _State
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        self._json(404, {"error": {"type": "not_found_error", "message": self.path}})

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = {"_raw": raw.decode("utf-8", "replace")}
        path = self.path.split("?", 1)[0]
        with self.shared.lock:
            self.shared.requests.append(Recorded(path, body))
        if path.endswith("/messages/count_tokens"):
            self._json(200, {"input_tokens": 100})
        elif path.endswith("/messages"):
            self._anthropic(body)
        elif path.endswith("/chat/completions"):
            self._openai(body)
        elif path.endswith("/responses"):
            self._responses(body)
        elif path.endswith(":countTokens"):
            self._json(200, {"totalTokens": 100})
        elif path.endswith((":streamGenerateContent", ":generateContent")):
            self._gemini(body, stream=path.endswith(":streamGenerateContent"))
        else:
            self._json(404, {"error": {"type": "not_found_error", "message": path}})

    # --- plumbing -------------------------------------------------------------

    def _json(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _sse(self, events: Iterator[tuple[str | None, dict[str, Any] | str]]) -> None:
        chunks = []
        for name, data in events:
            text = data if isinstance(data, str) else json.dumps(data)
            chunks.append((f"event: {name}\n" if name else "") + f"data: {text}\n\n")
        payload = "".join(chunks).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    # --- Anthropic Messages ---------------------------------------------------

    def _anthropic(self, body: dict[str, Any]) -> None:
        turn = self.shared.next_turn(body)
        model = str(body.get("model", "claude-fake"))
        n = len(self.shared.requests)
        blocks: list[dict[str, Any]] = []
        if turn.text or not turn.calls:
            blocks.append({"type": "text", "text": turn.text or "done"})
        for i, tool in enumerate(turn.calls):
            blocks.append(
                {"type": "tool_use", "id": f"toolu_{n}_{i}", "name": tool.name,
                 "input": tool.arguments}
            )  # fmt: skip
        stop = "tool_use" if turn.calls else "end_turn"
        usage = {"input_tokens": 10, "output_tokens": 5}
        message = {
            "id": f"msg_{n}", "type": "message", "role": "assistant", "model": model,
            "content": blocks, "stop_reason": stop, "stop_sequence": None, "usage": usage,
        }  # fmt: skip
        if not body.get("stream"):
            self._json(200, message)
            return
        self._sse(_anthropic_events(message, blocks, stop))

    # --- OpenAI chat completions ----------------------------------------------

    def _openai(self, body: dict[str, Any]) -> None:
        turn = self.shared.next_turn(body)
        n = len(self.shared.requests)
        model = str(body.get("model", "fake"))
        calls = [
            {"index": i, "id": f"call_{n}_{i}", "type": "function",
             "function": {"name": t.name, "arguments": json.dumps(t.arguments)}}
            for i, t in enumerate(turn.calls)
        ]  # fmt: skip
        finish = "tool_calls" if calls else "stop"
        text = turn.text or ("" if calls else "done")
        if not body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                message["tool_calls"] = [{k: v for k, v in c.items() if k != "index"} for c in calls]
            self._json(200, {
                "id": f"chatcmpl-{n}", "object": "chat.completion", "created": 0, "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            })  # fmt: skip
            return

        def chunk(delta: dict[str, Any], reason: str | None = None) -> dict[str, Any]:
            return {
                "id": f"chatcmpl-{n}", "object": "chat.completion.chunk", "created": 0,
                "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": reason}],
            }  # fmt: skip

        def events() -> Iterator[tuple[str | None, dict[str, Any] | str]]:
            yield None, chunk({"role": "assistant", "content": text})
            if calls:
                yield None, chunk({"tool_calls": calls})
            last = chunk({}, finish)
            last["usage"] = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
            yield None, last
            yield None, "[DONE]"

        self._sse(events())


    # --- OpenAI Responses (Codex) ----------------------------------------------

    def _responses(self, body: dict[str, Any]) -> None:
        turn = self.shared.next_turn(body)
        n = len(self.shared.requests)
        items: list[dict[str, Any]] = []
        if turn.text or not turn.calls:
            items.append({
                "type": "message", "id": f"msg_{n}", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": turn.text or "done",
                             "annotations": []}],
            })  # fmt: skip
        for i, tool in enumerate(turn.calls):
            space, _, name = tool.name.rpartition("/")  # "mcp__memoryd/memory_recall"
            items.append({
                "type": "function_call", "id": f"fc_{n}_{i}", "call_id": f"call_{n}_{i}",
                "name": name, "arguments": json.dumps(tool.arguments), "status": "completed",
                **({"namespace": space} if space else {}),
            })  # fmt: skip
        usage = {
            "input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 15,
        }  # fmt: skip
        response = {
            "id": f"resp_{n}", "object": "response", "created_at": 0, "status": "completed",
            "model": str(body.get("model", "fake")), "output": items, "usage": usage,
        }  # fmt: skip

        def events() -> Iterator[tuple[str | None, dict[str, Any] | str]]:
            started = {**response, "status": "in_progress", "output": [], "usage": None}
            yield "response.created", {"type": "response.created", "response": started}
            for i, item in enumerate(items):
                yield "response.output_item.added", {
                    "type": "response.output_item.added", "output_index": i, "item": item,
                }  # fmt: skip
                if item["type"] == "message":
                    yield "response.output_text.delta", {
                        "type": "response.output_text.delta", "item_id": item["id"],
                        "output_index": i, "content_index": 0,
                        "delta": item["content"][0]["text"],
                    }  # fmt: skip
                yield "response.output_item.done", {
                    "type": "response.output_item.done", "output_index": i, "item": item,
                }  # fmt: skip
            yield "response.completed", {"type": "response.completed", "response": response}

        if body.get("stream"):
            self._sse(events())
        else:
            self._json(200, response)

    # --- Gemini API (Gemini CLI) ----------------------------------------------

    def _gemini(self, body: dict[str, Any], *, stream: bool) -> None:
        turn = self.shared.next_turn(body)
        parts: list[dict[str, Any]] = []
        if turn.text or not turn.calls:
            parts.append({"text": turn.text or "done"})
        parts += [{"functionCall": {"name": t.name, "args": t.arguments}} for t in turn.calls]
        answer = {
            "candidates": [{"content": {"role": "model", "parts": parts},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5,
                              "totalTokenCount": 15},
            "modelVersion": "gemini-fake",
        }  # fmt: skip
        if stream:
            self._sse(iter([(None, answer)]))
        else:
            self._json(200, answer)


def _anthropic_events(
    message: dict[str, Any], blocks: list[dict[str, Any]], stop: str
) -> Iterator[tuple[str | None, dict[str, Any] | str]]:
    yield "message_start", {"type": "message_start", "message": {**message, "content": []}}
    for i, block in enumerate(blocks):
        if block["type"] == "text":
            start: dict[str, Any] = {"type": "text", "text": ""}
            delta: dict[str, Any] = {"type": "text_delta", "text": block["text"]}
        else:
            start = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield "content_block_start", {"type": "content_block_start", "index": i,
                                      "content_block": start}  # fmt: skip
        yield "content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": i}
    yield "message_delta", {"type": "message_delta",
                            "delta": {"stop_reason": stop, "stop_sequence": None},
                            "usage": {"output_tokens": 5}}  # fmt: skip
    yield "message_stop", {"type": "message_stop"}
