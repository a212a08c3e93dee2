"""What the extractor command reads on stdin: the shipped prompt, then the new conversation.

The prompt carries the design's table of what to remember and what not, the
kinds, and the one JSON shape memoryd reads back. It is plain text so any
command that passes stdin to a model works (``claude -p``, ``opencode run``,
``llm``); the command answers on stdout.
"""

from __future__ import annotations

from memoryd.extract.transcript import Conversation, Message

PROMPT = """\
You extract long-term memories from a conversation between a developer and a coding agent.
A memory is something that will still be true and useful in a later session, on another day,
that cannot be seen in the code itself.

Remember:
- the user's preferences (how they like things done, how to talk to them)
- architecture decisions, each with its reason
- non-obvious pitfalls, each with its root cause
- project conventions

Do not remember:
- anything already visible in the code or its files
- the current task's state, progress or plan
- git branch names, file paths, line numbers
- one-off chat, greetings, thanks
- secrets of any kind (tokens, passwords, keys): say where a secret lives instead
- anything the conversation is unsure about

Kinds: preference, decision, pitfall, fact, rule. A "rule" is a hard requirement the user
stated; it is saved as a proposal that the user confirms, so propose one only when the user
clearly asked for it to hold always.

Scope: "project" (the default) for what concerns this project; "global" only for what holds in
every project (a personal preference, a pitfall of a tool used everywhere).

Answer with JSON only, no prose, in exactly this shape (an empty list when nothing qualifies,
which is the usual case; at most {max_memories} memories, the most durable first):

{{"memories": [{{"kind": "pitfall", "summary": "one line, in the conversation's language",
  "body": "the details: context, reason, root cause", "load_when": ["trigger", "words"],
  "scope": "project"}}]}}
"""


def render(conversation: Conversation, messages: tuple[Message, ...], max_memories: int) -> str:
    """The whole stdin document: the prompt, then the new messages under role headings."""
    where = f" in {conversation.cwd}" if conversation.cwd else ""
    lines = [
        PROMPT.format(max_memories=max_memories),
        f"## The conversation (the new part of {conversation.agent} session "
        f"{conversation.session}{where})",
        "",
    ]
    for message in messages:
        lines += [f"### {message.role}", message.text.strip(), ""]
    return "\n".join(lines)


def tail(messages: tuple[Message, ...], max_chars: int) -> tuple[Message, ...]:
    """The newest messages that fit ``max_chars`` (the newest one cut from its start if alone)."""
    kept: list[Message] = []
    used = 0
    for message in reversed(messages):
        if used + len(message.text) > max_chars:
            if not kept:
                kept.append(Message(message.role, message.text[-max_chars:]))
            break
        kept.append(message)
        used += len(message.text)
    return tuple(reversed(kept))
