"""Rendering one chat message at a time with the model's own chat template.

The engine appends messages one by one, so it needs each message's text as the template would
render it inside a conversation, and where the content sits inside it (the rest is scaffolding).
The piece for message i is ``render(messages[:i+1]) - render(messages[:i])``; a dummy system
message stands in for the earlier ones, which is exact for templates that render each message
independently (ChatML and most others).
"""

from __future__ import annotations

from dataclasses import dataclass

from codeagent.errors import InputError

ROLES = ("system", "user", "assistant", "tool")
_DUMMY = {"role": "system", "content": "x"}


@dataclass(frozen=True)
class Piece:
    """A rendered message: its text and the [start, end) of the content inside it."""

    text: str
    start: int
    end: int


class ChatFormat:
    """Per-message rendering for one tokenizer's chat template."""

    def __init__(self, tokenizer) -> None:
        self.tok = tokenizer
        if not getattr(tokenizer, "chat_template", None):
            raise InputError("the model's tokenizer has no chat template")
        base = self._render([_DUMMY])
        with_prompt = self._render([_DUMMY], add_generation_prompt=True)
        self.generation_prompt = with_prompt[len(base):] if with_prompt.startswith(base) else ""

    def _render(self, msgs: list[dict], add_generation_prompt: bool = False) -> str:
        return self.tok.apply_chat_template(msgs, tokenize=False, add_generation_prompt=add_generation_prompt)

    def piece(self, role: str, content: str, first: bool) -> Piece:
        """Text of one message; ``first`` renders it as the conversation's opening message."""
        if role not in ROLES:
            raise InputError(f"unknown chat role {role!r} (known: {', '.join(ROLES)})")
        msg = {"role": role, "content": content}
        if first:
            text = self._render([msg])
        else:
            base = self._render([_DUMMY])
            full = self._render([_DUMMY, msg])
            if not full.startswith(base):
                raise InputError("chat template does not render messages independently")
            text = full[len(base):]
        start = text.rfind(content) if content else len(text)
        if start < 0:
            raise InputError("chat template altered the message content")
        return Piece(text, start, start + len(content))

    def close(self, role: str = "assistant") -> str:
        """Scaffolding that ends a message of ``role`` after its content (e.g. ``<|im_end|>\\n``)."""
        p = self.piece(role, "\x00", first=False)
        return p.text[p.end:]
